# make demo   run the main job (bayesclust compare on its built-in default data)
# make figure  make demo, then copy results/compare.png to docs/compare.png (the README's figure)
# make test   run the test suite (the tests marked `long` left out: their short forms run)
# make test-all  run every test, the `long` ones included
# make test-xla  run the kernel, DP-means, k-means, Gibbs and hard-HDP tests on the pure-XLA path
# make lint   ruff over the package, the tests, the benchmarks and the reproductions
# make bench  refresh BENCHMARKS.md
# make reproduce  rerun the papers' numbers and refresh REPRODUCTION.md (about an hour on 2 cores);
#                 make reproduce PAPER=simbad_eac runs one paper and keeps the others' stored rows
# make notebooks  re-execute the notebooks in full and store them with their outputs
# Each target creates .venv and installs what it needs on first use.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PIP_QUIET := --quiet --disable-pip-version-check --no-input

.PHONY: demo figure test test-all test-xla test-fast lint bench reproduce notebooks clean

# The pure-XLA path, which every platform but the CPU runs: the tests of the modules whose
# computations have a native CPU kernel and an XLA one (nearest centre, DP-means, k-means -- in
# test_dc_baselines.py --, hard HDP, the DP mixture's Gibbs sweeps (spherical, diag and full),
# CEC-IB's Hartigan passes, the HDP mixture's CRF moves;
# SL-DID's and SL-AGLO's NumPy driver against the literal algorithm, in test_did_hierarchy.py),
# with the native kernels
# off; tests of the native kernels themselves skip.  Not here: the modules' doctests
# (examples the test files cover at their sizes).
# As `make test`, it leaves out the tests marked `long` (more seeds of a case whose short
# form runs here); BAYESCLUST_NATIVE=0 with `make test-all` runs them on this path too.
XLA_TESTS := bayesclust/kernels/ \
	tests/test_kernels.py tests/test_native.py tests/test_native_gibbs.py tests/test_dp_means.py \
	tests/test_dc_baselines.py tests/test_gibbs.py tests/test_gibbs_gaussian.py tests/test_hard_hdp.py \
	tests/test_did_hierarchy.py tests/test_hdp_gibbs.py \
	tests/test_cecib_compiled.py

# uv installs the same versions as pip (it resolves against PyPI) in a fraction of the time: on
# a fresh 2-core machine with empty caches, 13 s against pip's 50-90 s.  pip installs instead
# where uv cannot be had or fails.  Both write the packages' bytecode at install time (uv only
# when asked), and the package's own is compiled too: where PYTHONDONTWRITEBYTECODE is set no
# import writes it, and every Python process -- each test worker, notebook kernel and CLI run --
# compiled the sources of everything it imported (7.0 CPU-s to import the notebooks' libraries,
# 2.7 with the bytecode written).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_QUIET) uv 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m uv pip install --quiet --compile-bytecode --python $(PY) -e '.[test,notebooks,bench]' \
	  || $(PY) -m pip install $(PIP_QUIET) -e '.[test,notebooks,bench]' 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m compileall -q bayesclust
	$(PY) -c "import bayesclust, jax, numpyro, sklearn, pytest" 
	$(PY) -m bayesclust._native || echo "bayesclust: native CPU kernels not built; the XLA path is used"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bayesclust compare --out-dir results

# The README's figure is the demo's: run it, then copy its figure (which records its settings).
figure: demo
	cp results/compare.png docs/compare.png

# Each test file runs on one worker (--dist loadfile): split over both, a file's programs were
# compiled twice and its module fixtures ran twice (the sharding tests' 8-device worker, 24 s).
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile --durations=15 -m "not long"

test-all: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile --durations=15

test-xla: $(STAMP)
	BAYESCLUST_NATIVE=0 $(PY) -m pytest -n 2 --durations=10 -m "not long" $(XLA_TESTS)

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile -m "not slow and not paper and not long"

lint: $(STAMP)
	$(VENV)/bin/ruff check bayesclust tests benchmarks reproduce conftest.py

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

# PAPER: one module of reproduce/ (kulis_jordan_2012, sugiyama_2014, kaski_2005, smieja_geiger,
# simbad_eac, simbad_consensus, simbad_ceac, simbad_did, simbad_temporal); QUICK=1: a few seeds per
# row (a smoke run).
reproduce: $(STAMP)
	$(PY) -m reproduce $(if $(PAPER),--paper $(PAPER)) $(if $(QUICK),--quick)

notebooks: $(STAMP)
	$(PY) notebooks/execute.py

clean:
	rm -rf $(VENV) results .pytest_cache
