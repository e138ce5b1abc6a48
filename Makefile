# MAST toolkit: `make demo` runs the main job on embedded defaults; `make test` installs
# everything and runs every check. Both work on a fresh Debian 12 machine, as root.
PY := .venv/bin/python
PYTEST_ARGS ?=

.PHONY: demo test deps build lint typecheck pytest bench clean

demo: deps build
	scripts/demo

test: deps build lint typecheck pytest

deps:
	scripts/install-deps

build: deps
	scripts/build

lint: deps
	$(PY) -m ruff check .

typecheck: deps
	scripts/typecheck

pytest: deps build
	$(PY) -m pytest $(PYTEST_ARGS)

bench: deps build
	$(PY) -m benchmarks

clean:
	rm -rf build .venv
