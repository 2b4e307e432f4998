# make demo   run the main job (bayesclust compare on its built-in default data)
# make test   run the test suite
# make bench  refresh BENCHMARKS.md
# Each target creates .venv and installs what it needs on first use.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PIP_QUIET := --quiet --disable-pip-version-check --no-input

.PHONY: demo test test-fast bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_QUIET) --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m pip install $(PIP_QUIET) -e '.[test,notebooks,bench]' 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -c "import bayesclust, jax, numpyro, sklearn, pytest" 
	$(PY) -m bayesclust._native || echo "bayesclust: native CPU kernels not built; the XLA path is used"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bayesclust compare --out-dir results

test: $(STAMP)
	$(PY) -m pytest -n 2 --durations=15

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 -m "not slow and not paper"

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) results .pytest_cache
