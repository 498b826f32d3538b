# memscape — the two commands of the README:
#   make demo   set up, build and open the GUI on the embedded demo (PNG files when no display)
#   make test   set up and run every check CI runs
SHELL := /bin/bash
.DEFAULT_GOAL := demo

# Python oracles live in a private venv; tests find them first on PATH.
export PATH := $(CURDIR)/target/oracles/bin:$(PATH)
# The Vulkan loader complains without a runtime dir; give it a private one.
export XDG_RUNTIME_DIR ?= $(shell d=/tmp/memscape-runtime-$$(id -u); mkdir -p $$d; chmod 700 $$d; echo $$d)
export CARGO_TERM_COLOR ?= never
# One clean build, not an edit loop: incremental caches only cost disk (GBs on CI's machine).
export CARGO_INCREMENTAL ?= 0

.PHONY: demo test deps deps-test fmt-check clippy cargo-test build

deps:
	@scripts/install-deps.sh run

deps-test:
	@scripts/install-deps.sh test

build: deps
	cargo build -p memscape -p memscape-recorder

demo: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		target/debug/memscape view; \
	else \
		echo "memscape: no display (DISPLAY and WAYLAND_DISPLAY are unset), so rendering the demo views headless instead:"; \
		mkdir -p out; \
		target/debug/memscape render demo --view alloc-map --color thread --out out/demo-alloc-map.png; \
		target/debug/memscape render demo --view alloc-map --color size --cushion plateau --alpha 0.3 --panels main,occupancy --out out/demo-alloc-map-size.png; \
		target/debug/memscape render demo --view sunburst --peak --out out/demo-heap-sunburst.png; \
		target/debug/memscape render demo --view icicle --peak --group size,site --out out/demo-heap-icicle.png; \
		target/debug/memscape render demo:sort --view spiral --function insertion_sort --out out/demo-cycles-spiral.png; \
		target/debug/memscape render demo:sort --view spiral --function insertion_sort --morph-to 1 --t 0.5 --out out/demo-cycles-morph.png; \
		target/debug/memscape render demo:sort --view barcode --function insertion_sort --out out/demo-cycles-barcode.png; \
		target/debug/memscape render demo:cfg --view graph --diff 0..3 --out out/demo-graph-difference.png; \
		echo "to see the window without a display: xvfb-run -a target/debug/memscape view"; \
	fi

fmt-check:
	cargo fmt --all -- --check

# The query engine is checked and tested with the rest: memscape-engine (DataFusion, Ballista
# standalone) and the binary with its `ballista` feature, so that `memscape index` and its CLI
# tests (tests/index_cli.rs, tests/parquet_cli.rs) run too; one binary, built once with the
# feature. DataFusion's and Ballista's own crates build at opt-level 0/1 without debug info
# (Cargo.toml's profile): what that adds to a cold run is in BENCHMARKS.md ("memscape-engine in
# make test").
ENGINE := --features memscape/ballista

# Each cargo step keeps its whole output in target/ and, when it fails, ends with its error
# lines and the disk (scripts/report-cargo-failure.sh): a linker's failure is otherwise one
# line of many KB whose cause a log's tail does not show.
clippy:
	mkdir -p target; set -o pipefail; \
	cargo clippy --workspace --all-targets $(ENGINE) -- -D warnings 2>&1 | tee target/clippy.log \
		|| { scripts/report-cargo-failure.sh "cargo clippy" target/clippy.log; exit 1; }

cargo-test:
	mkdir -p target; set -o pipefail; \
	cargo test --workspace $(ENGINE) --no-fail-fast 2>&1 | tee target/cargo-test.log \
		|| { scripts/report-cargo-failure.sh "cargo test" target/cargo-test.log; exit 1; }

test: deps-test fmt-check clippy cargo-test
	@echo "make test: all checks passed"
