"""What the benchmark scripts share: the environment line, timing, the command line, the
JSON lines and the scikit-learn peers.

Every script runs as ``python benchmarks/<script>.py`` (``run_all.py`` starts them that
way), so this folder is on ``sys.path`` and they ``import _common``.  Nothing here imports
JAX, NumPy or scikit-learn when the module loads: ``scale.py`` sets ``XLA_FLAGS`` before
JAX is first imported, and a script that measures no JAX code does not pay for it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

#: The scikit-learn peers by short name: (module, class).
_PEERS = {
    "kmeans": ("sklearn.cluster", "KMeans"),
    "spectral": ("sklearn.cluster", "SpectralClustering"),
    "gmm": ("sklearn.mixture", "GaussianMixture"),
}


def environment(script: str, packages: tuple[str, ...] = (), **extra: Any) -> dict:
    """The first JSON line of every script: machine, Python and package versions.

    Parameters
    ----------
    script : str
        The script's file name (``"hdp.py"``).
    packages : tuple of str
        Import names whose ``__version__`` the row records (``"sklearn"``, ``"jax"``, ...);
        one that is not installed is left out.
    **extra
        Further fields (e.g. which native kernels ran).

    Returns
    -------
    dict
        ``{"benchmark": "environment", "script", "python", "machine", "cpu_count",
        "native_kernels", <package>: <version>, ...}``; ``run_all.py`` reads the versions and core count from it.
    """
    from bayesclust import _native  # here, not at import: scale.py sets XLA_FLAGS first

    info = {"benchmark": "environment", "script": script, "python": platform.python_version(),
            "machine": platform.machine(), "cpu_count": os.cpu_count(),
            "native_kernels": _native.used_on()}  # which assignment / sweep kernels ran
    for name in packages:
        try:
            info[name] = importlib.import_module(name).__version__
        except ImportError:
            pass
    info.update(extra)
    return info


def parser(doc: str, quick: str) -> argparse.ArgumentParser:
    """The script's command line: its docstring's first line and ``--quick`` (help ``quick``)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=quick)
    return p


def emit(row: dict) -> None:
    """Print one result row as a JSON line (``run_all.py`` collects the lines starting ``{``)."""
    print(json.dumps(row), flush=True)


def _ready(out):
    """``out``, once any JAX computation in it has finished (JAX dispatches asynchronously)."""
    jax = sys.modules.get("jax")  # not loaded: nothing can be pending
    return out if jax is None else jax.block_until_ready(out)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), wall seconds)``, the seconds counted until a JAX result is ready."""
    t0 = time.perf_counter()
    out = _ready(fn())
    return out, time.perf_counter() - t0


def seconds(fn: Callable[[], Any]) -> float:
    """Wall seconds of one call of ``fn`` (see :func:`timed`)."""
    return timed(fn)[1]


def least_seconds(fn: Callable[[], Any], reps: int) -> float:
    """Least wall time of ``reps`` calls: the least-disturbed run on a shared machine."""
    return float(min(seconds(fn) for _ in range(reps)))


def peer(name: str, n_clusters: int, seed: int, **options: Any):
    """An unfitted scikit-learn peer: ``"kmeans"``, ``"spectral"`` or ``"gmm"``.

    ``n_clusters`` is the estimator's first argument (``n_components`` of the mixture),
    ``seed`` its ``random_state``; ``options`` go to the constructor unchanged.
    """
    module, cls = _PEERS[name]
    return getattr(importlib.import_module(module), cls)(n_clusters, random_state=seed, **options)
