import os

import jax
import pytest

# Tests must never pick up a user's GPU/TPU or preallocate memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


@pytest.fixture
def x64():
    """Run a test in float64 (exact comparisons against slow references)."""
    with jax.enable_x64(True):
        yield
