# Single entry point. `make demo` and `make test` are the two commands the
# README gives; everything else is for development.

SHELL := /bin/bash
# Compiled dependencies live outside the work tree so that repeated CI runs
# (each a fresh clone) reuse them; a new machine simply builds from nothing.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/sctp-handover/target
# The Python interpreter (with pyarrow) the tests read tables back with.
export SCTPHO_VENV ?= $(HOME)/.cache/sctp-handover/venv
export SCTPHO_PYTHON ?= $(SCTPHO_VENV)/bin/python
CARGO ?= cargo
RELEASE_BIN := $(CARGO_TARGET_DIR)/release

.PHONY: install uninstall setup build demo reports reproduce kernel-check test lint lua-test python python-ray-check python-install-check samples sweep-samples install-plugin install-c-plugin bench bench-batch bench-points bench-cluster bench-live hostile-figures fuzz clean

setup:
	@scripts/setup.sh

## The two commands, optimised (the Python extension has its own target,
## `make python`, and the C plugin `make install-c-plugin`), and the lab's
## sctp-handover-lab that `make reproduce` draws its report with (lab/, not
## installed; built in the same cargo run so dependencies compile once).
build: setup
	$(CARGO) build --release -p sctp-handover-cli -p sctp-handover-harness -p sctp-handover-lab

DEMO_OUT ?= demo-output

## Main job: the batch over every bundled sample capture (tables in
## $(DEMO_OUT)/tables, compact summary), one capture in detail, then the
## reports of reports/.
demo: build
	$(RELEASE_BIN)/sctp-handover analyze sample-captures --out $(DEMO_OUT)/tables
	@echo
	$(RELEASE_BIN)/sctp-handover analyze sample-captures/koh-kim-1/mn.pcap
	@echo
	$(MAKE) --no-print-directory reports REPORT_BIN=$(RELEASE_BIN)/sctp-handover

## reports/: one report per sample scenario, one comparison across them,
## one of koh-kim-2 from its two capture points merged (report --point) and
## the sweep report (committed; the tables they were drawn from go to
## $(DEMO_OUT)/report-tables).
REPORT_BIN ?= $(CARGO_TARGET_DIR)/debug/sctp-handover
reports:
	@set -e; rm -rf reports/*.html reports/*-assets; mkdir -p reports; \
	for d in sample-captures/*/; do \
	  name=$$(basename $$d); \
	  $(REPORT_BIN) report $$d -q -o reports/$$name.html --tables $(DEMO_OUT)/report-tables/$$name \
	    --title "$$name: both capture points" --by capture_side,class; \
	done; \
	$(REPORT_BIN) report sample-captures -q -o reports/comparison.html --tables $(DEMO_OUT)/report-tables/comparison \
	  --title "Sample scenarios compared (mobile-node captures)" --by scenario,class --side mn --no-captures; \
	$(REPORT_BIN) report sample-sweeps -q -o reports/sweep-bokor-failover.html --tables $(DEMO_OUT)/report-tables/sweep \
	  --title "bokor-failover: failover time over RTO and Path.Max.Retrans (correspondent captures)" \
	  --side cn --by pmr --x rto --series pmr --metric failover_time --no-captures; \
	$(REPORT_BIN) report --point mn=sample-captures/koh-kim-2/mn.pcap --point cn=sample-captures/koh-kim-2/cn.pcap \
	  -q -o reports/points-koh-kim-2.html --tables $(DEMO_OUT)/report-tables/points-koh-kim-2 \
	  --title "koh-kim-2 seen from both capture points: each handover's story, one-way delays, the clock" \
	  --by capture_side; \
	echo "reports: wrote $$(ls reports/*.html | wc -l) reports in reports/"

## reports/reproduction/: the seed papers' experiments replayed on the kernel
## (scripts/reproduce.sweeps), analysed and set beside the published values
## (docs/reproduction.md; the report is drawn by the lab's sctp-handover-lab,
## lab/). About 75 minutes on 2 cores (371 runs); resumable: finished runs
## stay in reproduce-output/runs (REPRO_RUNS) and are skipped, FORCE=1 redoes
## them. Not part of `make test`.
reproduce: build
	scripts/reproduce.sh

## The analyzer against the kernel on every shipped scenario (each replayed
## once on the kernel; about 5 minutes; docs/metrics.md, "Checked against the
## kernel"). `make test` replays two of them (koh-kim-2, bokor-failover).
kernel-check: build
	cargo test -p sctp-handover-harness --test kernel_agreement -- --ignored --nocapture

## Formatting, clippy, and no import circle between the files of a crate
## (scripts/import-circles.py; docs/architecture.md).
lint:
	$(CARGO) fmt --all -- --check
	python3 scripts/import-circles.py
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## The dissector's pure-Lua core under every plain Lua of 5.2, 5.3 and
## 5.4 installed (Wireshark 4.0 embeds 5.2; 4.4 and later 5.3 or 5.4;
## scripts/setup.sh installs all three); fails when none is.
LUA_VERSIONS := 5.2 5.3 5.4
lua-test:
	@set -e; ran=; for v in $(LUA_VERSIONS); do \
	  if command -v lua$$v >/dev/null; then \
	    echo "lua$$v:"; (cd dissector && lua$$v tests/run.lua); ran="$$ran $$v"; \
	  else echo "lua-test: lua$$v not installed, skipped"; fi; \
	done; test -n "$$ran" || { echo "lua-test: no lua5.x found" >&2; exit 1; }

## Every test: unit, integration against tshark, real kernel replays (the
## watch in the guest; koh-kim-2 and bokor-failover against the kernel's log),
## the Python bindings, and Ray, Dask and Spark clusters of separate processes
## on 127.0.0.1 (tests/python.rs: needs .venv with the wheel and the engines,
## brought up to date here).
test: setup lint lua-test
	scripts/python.sh
	scripts/cargo-test.sh

## The Python package (python/, docs/scale-out.md): the wheel, built in the
## dev profile beside the tests' build (so polars is not compiled again),
## installed with pyarrow, Dask, Ray and Spark into the project's .venv.
python: setup
	scripts/python.sh

## `cluster --engine ray` against `analyze --out` on the sample captures,
## with timings (docs/scale-out.md; not part of `make test`).
python-ray-check: python
	scripts/python-ray-check.sh

## The README's Python lines from a clean checkout of HEAD into a fresh
## virtual environment (`pip install './python[dask]'`: a release wheel
## built by maturin), then the installed package used (not part of `make
## test`: the first run builds polars in the release profile, about 30
## minutes on 2 cores; later runs a few). PIP_CHECK_ARGS=--worktree checks
## the working tree as it is instead.
python-install-check:
	scripts/python-install-check.sh $(PIP_CHECK_ARGS)

## The benchmark of docs/performance.md: the analyzer against cat, a bare
## pcap-parser loop and tshark (with and without the plugins) on generated
## captures; table, CSV and JSON in a results directory (not part of
## `make test`; BENCH_BIG=1 adds a 4 GB capture, BENCH_PERF=1 a profile).
bench: setup
	scripts/bench.sh

## Batch figures for docs/performance.md (not part of `make test`).
bench-batch: setup
	scripts/bench-batch.sh

## Memory of `analyze --point` against the size of a pair of captures
## (docs/points.md): one long association, ~1 GB and a tenth of it, built in
## $$TMPDIR and deleted; packets, seconds, peak RSS (not part of `make test`;
## a debug build when the release binary is older than the sources;
## BENCH_POINTS_MB sets the size).
bench-points:
	scripts/bench-points.sh

## The cluster figures of docs/scale-out.md: `analyze --out` against each
## engine (Dask, Ray, Spark) on the same cores, over 10 000 small captures and
## a few large ones built in a temporary directory; inputs/s, MB/s, engine
## start-up and the ratio engine/CLI (not part of `make test`; SMALL,
## ENGINES, ARCHIVES, WORKERS, BATCH_ONE=1: scripts/bench-cluster.sh).
bench-cluster: python
	$(CARGO) build --quiet -p sctp-handover-cli
	scripts/bench-cluster.sh

## Live capture against tcpdump (docs/watch.md, "Keeping up"): a generated
## capture (2 300 associations, 25 MB) replayed by tcpreplay at top speed and
## at fixed rates into a veth pair in a network namespace of its own; frames
## received and dropped by watch (text, JSON lines, --write) and tcpdump side
## by side, watch's switch latency percentiles, --write against analyze.
## Needs root; not part of `make test`. BENCH_LIVE_RATES, BENCH_LIVE_REPS:
## scripts/bench-live.sh.
bench-live: setup
	scripts/bench-live.sh

## Time and memory of the analyzer on each hostile input (docs/robustness.md).
hostile-figures: setup
	scripts/hostile-figures.sh

## Coverage-guided fuzzing of every target in fuzz/ with AFL++ (not part of
## `make test`; installs cargo-afl on first use). FUZZ_SECONDS per target.
## docs/robustness.md.
fuzz:
	scripts/fuzz.sh

## The Lua plugin: sctpho.lua into the personal Wireshark plugin folder,
## its modules into sctpho-lua/ beside that folder, where sctpho.lua's
## `require` finds them and Wireshark (which loads every .lua file under
## the plugin folder, subfolders too, as a plugin) does not look. Modules
## an older install left in the plugin folder are removed.
PLUGIN_DIR ?= $(HOME)/.local/lib/wireshark/plugins
LUA_MODULE_DIR ?= $(PLUGIN_DIR)/../sctpho-lua
install-plugin:
	mkdir -p $(PLUGIN_DIR) $(LUA_MODULE_DIR)
	cp dissector/sctpho_core.lua dissector/sctpho_wire.lua dissector/sctpho_fields.lua $(LUA_MODULE_DIR)/
	cp dissector/sctpho.lua $(PLUGIN_DIR)/
	rm -f $(PLUGIN_DIR)/sctpho_core.lua $(PLUGIN_DIR)/sctpho_wire.lua

## The C plugin (release build) into <PLUGIN_DIR>/<major.minor>/epan for
## the Wireshark whose SDK it is built with (its WiresharkConfig.cmake).
install-c-plugin: setup
	SCTPHO_PROFILE=release dissector/c/build.sh --install $(PLUGIN_DIR)

## Both binaries, a manual page per command (sctp-handover.1,
## sctp-handover-analyze.1, …, sctp-harness.1, sctp-harness-replay.1, …)
## and bash/zsh/fish completions, where systems look for them under
## PREFIX; DESTDIR stages the tree (packaging). The pages and completions
## are generated by each binary's hidden `generate` subcommand from the
## command line it parses (clap_mangen, clap_complete), so they cannot
## drift from --help. Needs cargo and
## libpcap's headers only, not `make setup`'s test tools. PREFIX=~/.local
## installs for one user without root.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
MAN_DIR = $(INSTALL_ROOT)/share/man/man1
BASH_COMPLETIONS = $(INSTALL_ROOT)/share/bash-completion/completions
ZSH_COMPLETIONS = $(INSTALL_ROOT)/share/zsh/site-functions
FISH_COMPLETIONS = $(INSTALL_ROOT)/share/fish/vendor_completions.d
install:
	$(CARGO) build --release -p sctp-handover-cli -p sctp-handover-harness
	install -d $(INSTALL_ROOT)/bin $(MAN_DIR) $(BASH_COMPLETIONS) $(ZSH_COMPLETIONS) $(FISH_COMPLETIONS)
	install -m 755 $(RELEASE_BIN)/sctp-handover $(RELEASE_BIN)/sctp-harness $(INSTALL_ROOT)/bin/
	@set -e; for bin in sctp-handover sctp-harness; do \
	  echo "$$bin: manual pages into $(MAN_DIR), completions"; \
	  $(RELEASE_BIN)/$$bin generate man $(MAN_DIR); \
	  $(RELEASE_BIN)/$$bin generate completions bash > $(BASH_COMPLETIONS)/$$bin; \
	  $(RELEASE_BIN)/$$bin generate completions zsh > $(ZSH_COMPLETIONS)/_$$bin; \
	  $(RELEASE_BIN)/$$bin generate completions fish > $(FISH_COMPLETIONS)/$$bin.fish; \
	done

uninstall:
	for bin in sctp-handover sctp-harness; do \
	  rm -f $(INSTALL_ROOT)/bin/$$bin $(MAN_DIR)/$$bin.1 $(MAN_DIR)/$$bin-*.1 \
	    $(BASH_COMPLETIONS)/$$bin $(ZSH_COMPLETIONS)/_$$bin $(FISH_COMPLETIONS)/$$bin.fish; \
	done

## Regenerate sample-captures/ from every shipped scenario (about a minute).
## --allow-invalid: honda-dad / honda-nodad are kept to show their
## SET-PRIMARY and DELETE-IP never taking effect (docs/harness.md).
samples: build
	@set -e; tmp=$$(mktemp -d); \
	for s in harness/scenarios/*.toml; do \
	  name=$$(basename $$s .toml); \
	  if $(RELEASE_BIN)/sctp-harness replay $$s --out $$tmp --allow-invalid; then \
	    mkdir -p sample-captures/$$name; \
	    cp $$tmp/$$name/default/r01/{mn.pcap,cn.pcap,events.jsonl,scenario.toml,meta.json} sample-captures/$$name/; \
	  fi; \
	done; rm -rf $$tmp

## Regenerate sample-sweeps/ (bokor-failover, RTO x PMR x 3 runs; ~3 min).
sweep-samples: build
	@set -e; tmp=$$(mktemp -d); \
	$(RELEASE_BIN)/sctp-harness replay harness/scenarios/bokor-failover.toml --out $$tmp \
	  --set rto=100,200 --set pmr=1,2 --repeat 3; \
	rm -rf sample-sweeps/bokor-failover; \
	for d in $$tmp/bokor-failover/*/r*; do \
	  rel=$${d#$$tmp/}; mkdir -p sample-sweeps/$$rel; \
	  cp $$d/{mn.pcap,cn.pcap,events.jsonl,scenario.toml,meta.json} sample-sweeps/$$rel/; \
	done; rm -rf $$tmp

clean:
	$(CARGO) clean
