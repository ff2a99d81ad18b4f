//! `sctp-handover generate` and `sctp-harness generate` (hidden): the
//! manual pages and shell completions `make install` installs, generated
//! from the command line clap parses, so they cannot drift from it. Both
//! binaries include this file (the harness by path: it shares no crate
//! with the command line but clap).

use anyhow::Context;
use std::path::{Path, PathBuf};

/// What `generate` writes.
#[derive(clap::Subcommand)]
pub enum Generate {
    /// A manual page per command into DIR: NAME.1 and NAME-SUBCOMMAND.1
    /// for each subcommand shown in --help.
    Man {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// The completion script for SHELL, on standard output.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Writes what `what` asks for, from `command` (the whole command line).
pub fn run(what: Generate, command: clap::Command) -> anyhow::Result<()> {
    match what {
        Generate::Man { dir } => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let mut command = command.disable_help_subcommand(true);
            command.build();
            write_pages(&command, &dir)
                .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
        }
        Generate::Completions { shell } => {
            let mut command = command;
            let name = command.get_name().to_string();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, name.clone(), &mut script);
            let mut script = String::from_utf8(script).context("a completion script in UTF-8")?;
            if shell == clap_complete::Shell::Bash && name.contains('-') {
                // clap_complete (clap-rs/clap#6421) names a hyphenated
                // binary's subcommand cases `sctp__subcmd__handover__…`
                // but sets `cmd` to `sctp__handover__…`, so no option of a
                // subcommand completes: use the name `cmd` is set to.
                let set = format!("{}__subcmd__", name.replace('-', "__"));
                let labelled = format!("{}__subcmd__", name.replace('-', "__subcmd__"));
                script = script.replace(&labelled, &set);
            }
            use std::io::Write;
            std::io::stdout()
                .write_all(script.as_bytes())
                .context("writing the completion script")?;
        }
    }
    Ok(())
}

/// The page of `command` and of each subcommand shown in --help, as
/// clap_mangen's `generate_to` writes them, except that the text after the
/// options (`after_help`, e.g. the exit statuses) becomes sections of their
/// own ([`after_help_roff`]) instead of one filled paragraph under EXTRA.
fn write_pages(command: &clap::Command, dir: &Path) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(command.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut page)?;
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut page)?;
    }
    if let Some(text) = command.get_after_help() {
        page.extend_from_slice(after_help_roff(&text.to_string()).as_bytes());
    }
    if command.get_version().is_some() {
        man.render_version_section(&mut page)?;
    }
    std::fs::write(dir.join(man.get_filename()), page)
}

/// `after_help` text as roff, by the layout --help shows it in: an
/// unindented line ending in `:` is a section title (`Exit status:` →
/// EXIT STATUS); `  TAG  text` starts an indented entry, deeper-indented
/// lines continue it; other unindented lines are paragraphs.
fn after_help_roff(text: &str) -> String {
    let mut roff = String::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if body.is_empty() {
            continue;
        }
        if indent == 0 && body.ends_with(':') {
            let title = body.trim_end_matches(':').to_uppercase();
            roff.push_str(&format!(".SH \"{}\"\n", escape(&title)));
        } else if indent == 2 {
            let (tag, rest) = body.split_once("  ").unwrap_or((body, ""));
            roff.push_str(&format!(".TP\n{}\n{}\n", escape(tag), escape(rest.trim())));
        } else if indent > 2 {
            roff.push_str(&escape(body));
            roff.push('\n');
        } else {
            roff.push_str(&format!(".PP\n{}\n", escape(body)));
        }
    }
    roff
}

/// Text safe on a roff line: backslashes escaped, and a leading `.` or `'`
/// (a control line) neutralised.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e");
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_help_becomes_sections_entries_and_paragraphs() {
        let text = "Exit status:\n  0  all read\n  1  some failed (named;\n     the rest written)\nErrors are `x: error: WHAT`.\n.dot \\ slash";
        assert_eq!(
            after_help_roff(text),
            ".SH \"EXIT STATUS\"\n.TP\n0\nall read\n.TP\n1\nsome failed (named;\nthe rest written)\n\
             .PP\nErrors are `x: error: WHAT`.\n.PP\n\\&.dot \\e slash\n"
        );
    }
}
