# inductor-warehouse: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
IWH    := $(VENV)/bin/iwh
DB     ?= warehouse.duckdb
PORT   ?= 8501
# torch for the capture tests and the model zoo: from the local wheel, never a CUDA download
TORCH_VERSION ?= 2.13.0
TORCH_VENV    := .venv-torch-2.13

.PHONY: setup setup-core setup-torch demo demo-ingest test test-fast test-wheel bench fuzz lint typecheck golden schema docs clean

# .venv: the package, editable, with the core's dependencies only (all `make demo` needs) ...
$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	$(PY) -c 'from bench.measure import byte_compile; byte_compile()'  # as pip compiles an installed package
	touch $@

# ... and for working on it, the test tools and every extra (lake, s3, ray)
$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup-core: $(VENV)/.installed
setup: $(VENV)/.installed-test

$(TORCH_VENV)/.installed:
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install -q torch==$(TORCH_VERSION) || echo "torch $(TORCH_VERSION) not installable here: capture tests will skip"
	touch $@

setup-torch: $(TORCH_VENV)/.installed

demo-ingest: setup-core
	$(PY) -m demo.build_demo --db $(DB)

demo: demo-ingest
	$(IWH) --db $(DB) dashboard --port $(PORT)

test: setup setup-torch
	IWH_TEST_TORCH_PYTHON=$(CURDIR)/$(TORCH_VENV)/bin/python $(PY) -m pytest -q -n 2 --dist loadfile -m "not wheel"

# the wheel as a user gets it: built, installed with the core only into new virtualenvs (this
# Python and a 3.10 where one is found), used outside the checkout
test-wheel: setup
	$(PY) -m pytest -q tests/test_wheel.py

test-fast: setup
	$(PY) -m pytest -q -m "not browser and not torch and not corpus and not wheel" -n 2

bench: setup
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) -m bench.run

# N seeded mutations of real runs (default 10,000): prints crashes, hangs, runs lost and the peak RSS
FUZZ_N ?= 10000
fuzz: setup
	$(PY) -m tests.fuzz -n $(FUZZ_N)

golden: setup
	$(PY) -m pytest -q tests/test_queries_golden.py --update-golden

# schema/current.sql, the schema a new warehouse is made with, after adding a migration; and
# schema/read_functions.txt, the functions SQL people type may call, after a DuckDB upgrade; and
# views/13_kernel_name_category.sql, from schema/kernel_names.py's mapping
schema: setup
	$(PY) -c "from inductor_warehouse.store.migrate import write_current_sql; write_current_sql()"
	$(PY) -c "from inductor_warehouse.schema.readonly import write_read_functions; write_read_functions()"
	$(PY) -c "from inductor_warehouse.schema.kernel_names import write_view; write_view()"

# the reference pages made from the code: docs/queries.md, docs/tables.md, docs/trace_records.md
docs: setup-core
	$(PY) -c "from pathlib import Path; from inductor_warehouse.schema.reference import write; write(Path('docs'))"
	$(PY) -c "from inductor_warehouse.ingest.parsers.trace_records import document; open('docs/trace_records.md', 'w').write(document())"

lint: setup
	$(VENV)/bin/ruff check inductor_warehouse ingest schema store analysis cli dashboards tests bench zoo demo setup.py .ci

# mypy over the package as it installs: build/typecheck links `inductor_warehouse.*` to the folders
# (.ci/link_tree.py, read off setup.py); pyproject.toml's [tool.mypy] says how strict, where
typecheck: setup
	$(PY) .ci/link_tree.py >/dev/null
	$(VENV)/bin/mypy --config-file pyproject.toml

clean:
	rm -rf $(DB) $(DB).wal build dist *.egg-info .pytest_cache
