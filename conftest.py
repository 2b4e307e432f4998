"""pytest's settings for the package's doctests (``--doctest-modules`` over ``bayesclust/``).

tests/conftest.py holds the suite's settings; its fixtures apply to the tests under tests/
only, so the doctests' own are here.  It is imported first: its environment (XLA's flags, the
BLAS threads, bayesclust's cache off) must precede JAX's CPU client and bayesclust's imports.
"""

from tests import conftest as _suite  # noqa: I001 - first, see above

import jax
import pytest


@pytest.fixture(autouse=True, scope="module")
def _doctests_compile_cheaply(request):
    """A package module's doctests compile as the compile-bound test modules do.

    The examples are small programs compiled once each: with XLA's optimisation passes mostly
    off they took 122 CPU-s against 185 (single process), every example printing the same
    output.  A run with BAYESCLUST_TEST_OPTIMIZED=1 compiles them as users' programs are.
    No program compiled cheaply is reused by a test module compiled optimised: JAX's caches
    are emptied when the module ends.  (The suite's ``_drop_compiled_programs`` also runs a
    full garbage collection, about 0.1 CPU-s each, which the package's many small doctest
    modules do not need: JAX's caches hold the compiled programs' memory maps.)
    """
    if not (_suite._COMPILE_CHEAPLY and request.module.__name__.startswith("bayesclust.")):
        yield
        return
    try:
        with _suite.compiling_cheaply():
            yield
    finally:
        jax.clear_caches()
