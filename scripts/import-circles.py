#!/usr/bin/env python3
"""Import circles between the files of each crate (issue 30, docs/architecture.md).

A circle: module A uses module B and B uses A, directly or through other
modules, each an .rs file of one crate. Data should flow one way between
files; a circle means two files share a concept that neither owns, and the
fix is to move it to the module that does (or a small one named by it).

What counts as a use: a path that starts with `crate::`, `super::` or
`self::`, in a `use` declaration (groups `{a, b::C}` included) or in code.
A path through a name that a module imports (`pub use state::Mark;` in
handover/mod.rs, or any `use`) counts as a use of the module the name
comes from, so a re-export does not hide a circle. Paths that start with a
child module's bare name (`use state::X;` in a mod.rs) are not counted: a
parent declares its children, and children using what their parent
defines is the normal shape, not a circle. Test code (`#[cfg(test)]`
items and modules) is left out. Modules are found by following `mod`
declarations from each crate root (src/lib.rs, src/main.rs, src/bin/*.rs).

Usage: scripts/import-circles.py [CRATE_DIR ...]
  (default: the workspace members of ./Cargo.toml)
Prints every circle with the edges that close it; exits 1 if there is any.
Python standard library only.
"""

import os
import re
import sys
import tomllib

# ---------------------------------------------------------------- reading


def blank(match):
    """The text of a match with everything but newlines made spaces (line
    numbers stay right)."""
    return re.sub(r"[^\n]", " ", match.group(0))


# Comments, string literals (raw ones included) and char literals: their
# contents must not look like paths or braces.
LEXICAL = re.compile(
    r"//[^\n]*"
    r"|/\*.*?\*/"
    r'|b?r(#*)".*?"\1'
    r'|b?"(?:\\.|[^"\\])*"'
    r"|b?'(?:\\.|[^'\\\n])'",
    re.S,
)


def clean(text):
    return LEXICAL.sub(blank, text)


def item_end(text, start):
    """End of the item starting at `start`: after its `;`, or after the
    `}` that closes its first `{`."""
    semi = text.find(";", start)
    brace = text.find("{", start)
    if brace == -1 or (semi != -1 and semi < brace):
        return len(text) if semi == -1 else semi + 1
    depth = 0
    for i in range(brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


CFG_TEST = re.compile(r"#\[cfg\(test\)\]")


def drop_test_code(text):
    """Blanks every `#[cfg(test)]` item (a `mod tests { .. }`, a
    test-only `mod script;` declaration, a test helper)."""
    while True:
        m = CFG_TEST.search(text)
        if not m:
            return text
        end = item_end(text, m.end())
        text = text[: m.start()] + blank(re.match(r".*", text[m.start():end], re.S)) + text[end:]


# ---------------------------------------------------------------- modules

MOD_DECL = re.compile(r"(?:#\[path\s*=\s*\"([^\"]+)\"\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")


class Module:
    def __init__(self, path, file, code, raw):
        self.path = path  # tuple of names from the crate root
        self.file = file
        self.code = code  # cleaned, test code blanked
        self.raw = raw


def load(file):
    with open(file, encoding="utf-8") as f:
        raw = f.read()
    return raw, drop_test_code(clean(raw))


def crate_modules(root_file):
    """Every non-test module of the crate rooted at `root_file`, by path."""
    modules = {}

    def visit(path, file, children_dir):
        raw, code = load(file)
        modules[path] = Module(path, file, code, raw)
        # `#[path = ".."]` is read from the raw text (cleaning blanks strings);
        # declarations are taken from the cleaned text so test ones are gone.
        declared = {m.group(2) for m in MOD_DECL.finditer(code)}
        for m in MOD_DECL.finditer(raw):
            name = m.group(2)
            if name not in declared:
                continue
            if m.group(1):
                child = os.path.normpath(os.path.join(os.path.dirname(file), m.group(1)))
                visit(path + (name,), child, os.path.dirname(child))
                continue
            flat = os.path.join(children_dir, name + ".rs")
            nested = os.path.join(children_dir, name, "mod.rs")
            if os.path.exists(flat):
                visit(path + (name,), flat, os.path.join(children_dir, name))
            elif os.path.exists(nested):
                visit(path + (name,), nested, os.path.join(children_dir, name))

    visit((), root_file, os.path.dirname(root_file))
    return modules


def crate_roots(crate_dir):
    src = os.path.join(crate_dir, "src")
    roots = [os.path.join(src, f) for f in ("lib.rs", "main.rs") if os.path.exists(os.path.join(src, f))]
    bin_dir = os.path.join(src, "bin")
    if os.path.isdir(bin_dir):
        for f in sorted(os.listdir(bin_dir)):
            if f.endswith(".rs"):
                roots.append(os.path.join(bin_dir, f))
            elif os.path.exists(os.path.join(bin_dir, f, "main.rs")):
                roots.append(os.path.join(bin_dir, f, "main.rs"))
    return roots


# ---------------------------------------------------------------- paths

USE_DECL = re.compile(r"\buse\s+([^;]+);")
PATH = re.compile(r"\b(crate|super|self)((?:\s*::\s*\w+)+)")
TOKEN = re.compile(r"\w+|::|[{},*]")


def use_paths(tree):
    """`a::{b, c::{self, D as E}, *}` -> [(segments, name it binds)]."""
    tokens = TOKEN.findall(tree)
    pos = 0

    def parse(prefix):
        nonlocal pos
        out = []
        segments = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    out.extend(parse(segments))
                pos += 1
                return out
            if t == "*":
                pos += 1
                return out  # a glob binds no name we can follow
            if t in (",", "}"):
                break
            if t == "::":
                pos += 1
                continue
            if t == "as":
                pos += 1
                out.append((segments, tokens[pos]))
                pos += 1
                return out
            if t == "self" and segments:
                pos += 1
                out.append((segments, segments[-1]))
                return out
            segments = segments + [t]
            pos += 1
        if segments:
            out.append((segments, segments[-1]))
        return out

    return parse([])


def absolute(module_path, segments):
    """The crate-absolute segments of a `crate::`/`super::`/`self::` path,
    or None for any other path."""
    head, rest = segments[0], segments[1:]
    if head == "crate":
        base = []
    elif head == "self":
        base = list(module_path)
    elif head == "super":
        base = list(module_path[:-1])
    else:
        return None
    while rest and rest[0] == "super":
        base, rest = base[:-1], rest[1:]
    return base + rest


class Crate:
    def __init__(self, modules):
        self.modules = modules
        # Names each module imports: module -> name -> absolute segments.
        self.imports = {}
        for m in modules.values():
            names = {}
            for decl in USE_DECL.finditer(m.code):
                for segments, name in use_paths(decl.group(1)):
                    target = absolute(m.path, segments)
                    if target is None and segments[0] in self.child_names(m.path):
                        target = list(m.path) + segments  # `pub use state::X;`
                    if target is not None and name != "_":
                        names[name] = target
            self.imports[m.path] = names

    def child_names(self, path):
        return {p[-1] for p in self.modules if len(p) == len(path) + 1 and p[:-1] == path}

    def resolve(self, segments, hops=0):
        """The module a crate-absolute path lands in, through imports."""
        for i in range(len(segments), -1, -1):
            prefix = tuple(segments[:i])
            if prefix in self.modules:
                rest = segments[i:]
                if rest and hops < 16:
                    via = self.imports[prefix].get(rest[0])
                    if via is not None and via != list(segments):
                        return self.resolve(via + rest[1:], hops + 1)
                return prefix
        return None

    def edges(self):
        """module -> used module -> (line, path as written) of its first use."""
        graph = {}
        for m in self.modules.values():
            uses = []
            for decl in USE_DECL.finditer(m.code):
                for segments, _ in use_paths(decl.group(1)):
                    uses.append((decl.start(), segments))
            blanked_uses = USE_DECL.sub(blank, m.code)
            for p in PATH.finditer(blanked_uses):
                uses.append((p.start(), [p.group(1)] + re.findall(r"\w+", p.group(2))))
            for offset, segments in sorted(uses, key=lambda u: u[0]):
                target_path = absolute(m.path, segments)
                if target_path is None:
                    continue
                target = self.resolve(target_path)
                if target is None or target == m.path:
                    continue
                line = m.code.count("\n", 0, offset) + 1
                graph.setdefault(m.path, {}).setdefault(target, (line, "::".join(segments)))
        return graph


# ---------------------------------------------------------------- circles


def circles(graph, nodes):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(1000, 4 * len(nodes) + 100))

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            connect(v)
    return found


def name(path):
    return "::".join(path) or "(crate root)"


def workspace_members():
    with open("Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["members"]


def main(argv):
    crate_dirs = argv[1:] or workspace_members()
    total = 0
    for crate_dir in crate_dirs:
        for root in crate_roots(crate_dir):
            crate = Crate(crate_modules(root))
            graph = crate.edges()
            for component in circles(graph, crate.modules):
                total += 1
                members = set(component)
                print(f"{root}: import circle: {', '.join(name(p) for p in component)}")
                for a in component:
                    for b, (line, written) in sorted(graph.get(a, {}).items()):
                        if b in members:
                            file = crate.modules[a].file
                            print(f"    {name(a)} -> {name(b)}    ({file}:{line}: {written})")
    if total:
        print(
            f"{total} import circle(s): move what both sides use to the module that owns it "
            "(docs/architecture.md, 'Where to make each kind of change')"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
