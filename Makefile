# Quick start: `make run` opens haloscope, `make test` runs every test.
CARGO ?= cargo

.PHONY: run test setup build lint bench

setup:
	@scripts/workstation/setup.sh

build: setup
	$(CARGO) build --release

run: build
	$(CARGO) run --release --quiet

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

test: setup lint
	$(CARGO) test --release --workspace

bench: setup
	$(CARGO) bench
