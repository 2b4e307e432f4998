"""JAX's persistent compilation cache, on by default for bayesclust's programs.

A fit in a new process otherwise compiles every jitted program again: about a
second per program on a CPU, most of a small fit's time.  With the cache on, a
second process loads the executables from disk.  JAX writes only programs
that took at least ``jax_persistent_cache_min_compile_time_secs`` (default 1 s)
to compile, which none of bayesclust's do on their own, so the threshold is set
to 0 here.

Rules:

* ``BAYESCLUST_CACHE=0`` (or ``false`` / ``no``) in the environment: nothing is
  configured.
* A cache directory the user set (``jax_compilation_cache_dir`` in JAX's
  config, or the ``JAX_COMPILATION_CACHE_DIR`` environment variable) is left
  alone, with the user's own thresholds.
* Otherwise the cache lives in ``$BAYESCLUST_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/bayesclust/jax``, else ``~/.cache/bayesclust/jax``, capped
  at :data:`MAX_BYTES` when the ``filelock`` package is installed (least
  recently used entries go first; JAX needs ``filelock`` for the cap).

:func:`setup` runs when :mod:`bayesclust._validation` is imported, which every
module that compiles anything imports: before bayesclust's first compilation,
never on ``import bayesclust`` alone (that imports no JAX).  JAX reads the
setting when it compiles its first program: a process that compiled something
before bayesclust was imported keeps JAX's cache setting of that moment.

The native kernels (:mod:`bayesclust._native`) are registered with XLA when a
program that uses them is traced (:func:`bayesclust._native.enabled` is read at
trace time), and JAX always traces a function before it looks its executable
up in the cache, so a cached executable never refers to an unregistered
custom call.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

__all__ = ["MAX_BYTES", "cache_dir", "enabled", "setup"]

#: Size cap of the cache directory bayesclust manages.
MAX_BYTES = 2 * 1024**3

_done: dict = {}


def enabled() -> bool:
    """False when ``BAYESCLUST_CACHE`` switches the cache off."""
    return os.environ.get("BAYESCLUST_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> Path:
    """The directory bayesclust's cache uses when the user has not set JAX's own."""
    if os.environ.get("BAYESCLUST_CACHE_DIR"):
        return Path(os.environ["BAYESCLUST_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bayesclust" / "jax"


def setup() -> str | None:
    """Turn JAX's persistent compilation cache on (once per process).

    Returns
    -------
    str or None
        The directory configured here; None when the cache is switched off,
        the user's own directory is in use, or no directory could be created.
    """
    if "dir" in _done:
        return _done["dir"]
    _done["dir"] = None
    if not enabled():
        return None
    import jax

    if jax.config.jax_compilation_cache_dir or os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None
    path = cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if importlib.util.find_spec("filelock") is not None:  # JAX's size cap needs it
        jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    _done["dir"] = str(path)
    return _done["dir"]
