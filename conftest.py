"""pytest's settings for the package's doctests (``--doctest-modules`` over ``bayesclust/``).

tests/conftest.py holds the suite's settings; its fixtures apply to the tests under tests/
only, so the doctests' own are here.  It is imported first: its environment (XLA's flags, the
BLAS threads, bayesclust's cache off) must precede JAX's CPU client and bayesclust's imports.
"""

from tests import conftest as _suite  # noqa: I001 - first, see above
# The suite's own fixture frees every compiled program after a module: after a doctest
# module too (re-exported here, where pytest finds it for bayesclust/).
from tests.conftest import _drop_compiled_programs  # noqa: F401

import pytest


@pytest.fixture(autouse=True, scope="module")
def _doctests_compile_cheaply(request):
    """A package module's doctests compile as the compile-bound test modules do.

    The examples are small programs compiled once each: with XLA's optimisation passes mostly
    off they took 122 CPU-s against 185 (single process), every example printing the same
    output.  A run with BAYESCLUST_TEST_OPTIMIZED=1 compiles them as users' programs are.
    No program compiled cheaply is reused by a test module compiled optimised:
    ``_drop_compiled_programs`` empties JAX's caches when the module ends.
    """
    if not (_suite._COMPILE_CHEAPLY and request.module.__name__.startswith("bayesclust.")):
        yield
        return
    with _suite.compiling_cheaply():
        yield
