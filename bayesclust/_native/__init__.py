"""Native XLA:CPU kernels (XLA FFI custom calls), built on first use.

The kernels here fuse work that XLA:CPU cannot fuse on its own: the
nearest-centre assignment computes the GEMM scores, the argmin and the
winner's exact distance tile by tile in registers, without writing the
``n x k`` score matrix (see ``nearest.cc``); the Gibbs sweep of the DP
mixture moves every point of 8 chains at a time in SIMD lanes, where XLA runs
a few dozen small operations per point (see ``gibbs.cc``; the full- and
diagonal-covariance mixture's point moves: ``gibbs_gaussian.cc``); the HDP mixture's CRF
sweep makes its point, table and split-merge moves chain by chain on XLA's threads
(see ``hdp.cc``).  Two routines are host
code called through ctypes, not custom calls: SL-DID's and SL-AGLO's agglomeration
(``did.cc``, :func:`did_agglomerate`), whose NumPy driver paid the interpreter per
tested pair, and CEC-IB's Hartigan passes (``cecib.cc``, :func:`cecib_passes`), whose
compiled JAX loop paid a few dozen small XLA operations per visited point.  The custom calls are called from inside
jit-compiled JAX code through :func:`jax.ffi.ffi_call` and are used only on
the CPU platform (``lax.platform_dependent``); every other platform, and a
machine without a C++ compiler, runs the pure-XLA path, which has the same
semantics and is what the native kernels are tested against.

The shared library is compiled once per (source, JAX version, CPU) with the
system's ``g++`` (``-O3 -march=native``) into ``_build/`` beside this file
(or ``$XDG_CACHE_HOME/bayesclust`` when the package directory is read-only)
and registered with XLA on first use.  ``make`` builds it at install time
(``python -m bayesclust._native``).

Whether traced code takes the native kernels is decided at trace time by one
predicate, :func:`enabled`: ``BAYESCLUST_NATIVE=0`` in the environment turns
them off for the process; :func:`use_native` / :func:`disabled` switch them
off (or back on) inside a ``with`` block and clear JAX's caches on entry and
exit, so that no program traced under the other setting is reused.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "available",
    "build",
    "cecib_passes",
    "did_agglomerate",
    "disabled",
    "enabled",
    "gibbs_gaussian_ffi",
    "gibbs_run_ffi",
    "gibbs_sweep_ffi",
    "hdp_crf_moves_ffi",
    "nearest_center_ffi",
    "nearest_center_stats_ffi",
    "platform_dependent",
    "use_native",
    "used_on",
]

_SOURCES = ("nearest.cc", "gibbs.cc", "gibbs_gaussian.cc", "did.cc", "cecib.cc", "hdp.cc")
_HEADERS = ("parallel.h", "simd.h")  # included by the sources: part of the build's identity
_TARGETS = {
    "bayesclust_nearest_center_f32": "BayesclustNearestCenterF32",
    "bayesclust_nearest_center_f64": "BayesclustNearestCenterF64",
    "bayesclust_nearest_center_stats_f32": "BayesclustNearestCenterStatsF32",
    "bayesclust_nearest_center_stats_f64": "BayesclustNearestCenterStatsF64",
    "bayesclust_gibbs_sweep_f32": "BayesclustGibbsSweepF32",
    "bayesclust_gibbs_sweep_f64": "BayesclustGibbsSweepF64",
    "bayesclust_gibbs_gaussian_f32": "BayesclustGibbsGaussianF32",
    "bayesclust_gibbs_gaussian_f64": "BayesclustGibbsGaussianF64",
    "bayesclust_hdp_crf_f32": "BayesclustHdpCrfF32",
    "bayesclust_hdp_crf_f64": "BayesclustHdpCrfF64",
}
_FLAGS = ("-O3", "-march=native", "-std=c++17", "-shared", "-fPIC")

_lock = threading.Lock()
_state: dict = {}
_switch = {"on": True}  # use_native's setting; BAYESCLUST_NATIVE=0 is read by available()


def _cpu_signature() -> str:
    """The CPU's feature flags (``-march=native`` code is only valid on them)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return line
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _library_name() -> str:
    h = hashlib.sha256()
    for name in _SOURCES + _HEADERS:
        h.update((Path(__file__).parent / name).read_bytes())
    h.update(" ".join(_FLAGS).encode())
    h.update(jax.__version__.encode())
    h.update(_cpu_signature().encode())
    return f"bayesclust_native_{h.hexdigest()[:16]}.so"


def _build_dirs() -> list[Path]:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "bayesclust"
    return [Path(__file__).parent / "_build", cache]


def build(verbose: bool = False) -> Path:
    """Compile the native kernels (if not already built) and return the library's path.

    Raises
    ------
    RuntimeError
        No C++ compiler, or the compilation failed (the message has its output).
    """
    name = _library_name()
    for d in _build_dirs():
        if (d / name).exists():
            return d / name
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise RuntimeError("no C++ compiler found (set CXX or install g++)")
    errors = []
    for d in _build_dirs():
        try:
            d.mkdir(parents=True, exist_ok=True)
            # Compile to a private name and rename: concurrent first uses
            # (pytest workers) never load a half-written library.
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=d)
            os.close(fd)
            objects = tempfile.mkdtemp(dir=d)
        except OSError as e:
            errors.append(f"{d}: {e}")
            continue
        try:
            _compile_and_link(compiler, objects, tmp, verbose)
        except RuntimeError:
            os.unlink(tmp)
            raise
        finally:
            shutil.rmtree(objects, ignore_errors=True)
        os.replace(tmp, d / name)
        for stale in d.glob("bayesclust_native_*.so"):  # builds of older sources
            if stale.name != name:
                stale.unlink(missing_ok=True)
        return d / name
    raise RuntimeError("no writable directory for the native kernels: " + "; ".join(errors))


def _compile_and_link(compiler: str, objects: str, library: str, verbose: bool) -> None:
    """Compile each source to an object file in ``objects``, one compiler per core, then link.

    The sources compile independently, so on several cores the build takes about the
    time of the largest source rather than of all of them in one compiler invocation.
    """
    compile_flags = [f for f in _FLAGS if f != "-shared"]
    include = f"-I{jax.ffi.include_dir()}"
    object_files = [str(Path(objects) / (Path(source).stem + ".o")) for source in _SOURCES]

    def run(cmd: list[str]) -> None:
        if verbose:
            print(" ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"compiling the native kernels failed:\n{proc.stderr[-4000:]}")

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        # list(): every compiler has finished, and the first failure is raised, before linking
        list(pool.map(run, ([compiler, *compile_flags, include, "-c",
                             str(Path(__file__).parent / source), "-o", obj]
                            for source, obj in zip(_SOURCES, object_files))))
    run([compiler, "-shared", "-fPIC", *object_files, "-o", library])

def available() -> bool:
    """True when the native kernels are built and registered (building them if needed).

    Never raises: a failed build warns once and leaves the pure-XLA path in use.
    """
    with _lock:
        if "ok" in _state:
            return _state["ok"]
        ok = False
        if os.environ.get("BAYESCLUST_NATIVE", "1") not in ("0", "false", "no"):
            try:
                lib = ctypes.cdll.LoadLibrary(str(build()))
                for target, symbol in _TARGETS.items():
                    jax.ffi.register_ffi_target(
                        target, jax.ffi.pycapsule(getattr(lib, symbol)), platform="cpu"
                    )
                _state["lib"] = lib
                ok = True
            except Exception as e:  # noqa: BLE001 - any failure means: use XLA
                warnings.warn(
                    f"bayesclust: native CPU kernels unavailable, using the XLA path ({e})",
                    RuntimeWarning,
                    stacklevel=3,
                )
        _state["ok"] = ok
        return ok


def enabled() -> bool:
    """True when code traced now takes the native kernels on a CPU.

    The one predicate every native-vs-XLA choice reads (at trace time): the
    kernels are :func:`available` and not switched off by :func:`use_native`.
    Other platforms (GPU, TPU) run the XLA path whatever it says
    (``lax.platform_dependent``).
    """
    return _switch["on"] and available()


def used_on(platform: str | None = None) -> bool:
    """True when code traced now for ``platform`` runs the native kernels.

    Parameters
    ----------
    platform : str, optional
        A JAX platform name (``"cpu"``, ``"gpu"``, ...); default JAX's default
        backend.  Only ``"cpu"`` has native kernels.
    """
    if platform is None:
        platform = jax.default_backend()
    return platform == "cpu" and enabled()


@contextlib.contextmanager
def use_native(flag: bool):
    """Switch the native kernels on or off for the whole process inside a ``with`` block.

    JAX's caches are cleared on entry and on exit (:func:`jax.clear_caches`):
    jitted functions decide between the native and the XLA path when they are
    traced, so a program compiled under the other setting must not be reused.
    Not thread-safe: the setting is the process's, not the thread's.

    Parameters
    ----------
    flag : bool
        ``False``: the pure-XLA path everywhere.  ``True``: the native kernels
        (the default setting).

    Raises
    ------
    TypeError
        ``flag`` is not a bool.
    RuntimeError
        ``flag`` is True but the kernels are not :func:`available`
        (``BAYESCLUST_NATIVE=0``, or no compiler): the code would silently run
        the XLA path.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import _native, dp_means
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]], np.float32)
    >>> with _native.use_native(False):
    ...     _native.enabled(), dp_means(X, 1.0).n_clusters
    (False, 2)
    """
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"flag must be a bool, got {type(flag).__name__}")
    if flag and not available():
        raise RuntimeError("use_native(True): the native kernels are not available "
                           "(BAYESCLUST_NATIVE=0, or they failed to build)")
    previous = _switch["on"]
    jax.clear_caches()
    _switch["on"] = bool(flag)
    try:
        yield
    finally:
        jax.clear_caches()
        _switch["on"] = previous


def disabled():
    """``use_native(False)``: the pure-XLA path everywhere inside a ``with`` block."""
    return use_native(False)


def platform_dependent(*args, cpu, default):
    """``lax.platform_dependent(*args, cpu=cpu, default=default)``, traced lazily.

    ``lax.platform_dependent`` traces every branch, and a pure-XLA branch can cost far
    more to trace than the native call beside it (the nearest-centre step's unrolled
    compare/select chains were about half of a DP-means loop's tracing; the HDP
    sampler's scans over points and tables and its split-merge moves most of its
    program), for a branch that XLA discards when it lowers for the CPU.  When JAX's
    default backend is the CPU (no accelerator, or ``JAX_PLATFORMS=cpu``), only ``cpu``
    is traced; otherwise both, and the platform chooses.

    Parameters
    ----------
    *args
        The operands, passed to the branch that runs.
    cpu, default : callable
        The native branch (the CPU platform) and the pure-XLA one (every other platform).
    """
    if jax.default_backend() == "cpu":
        return cpu(*args)
    return jax.lax.platform_dependent(*args, cpu=cpu, default=default)


def nearest_center_ffi(X, C, valid, birth, row_offset):
    """The native nearest-centre kernel (CPU only; see ``nearest.cc``).

    Parameters
    ----------
    X : array, shape (n, d), float32 or float64
    C : array, shape (k, d), same dtype
    valid : bool array, shape (k,)
    birth : int32 array, shape (k,)
        Centre ``c`` is visible to row ``i`` iff ``birth[c] <= row_offset + i``.
    row_offset : int32 scalar

    Returns
    -------
    (sq_dist, index) : arrays of shape (n,), dtypes X.dtype and int32
    """
    n = X.shape[0]
    call = jax.ffi.ffi_call(
        _target("bayesclust_nearest_center", X.dtype),
        (jax.ShapeDtypeStruct((n,), X.dtype), jax.ShapeDtypeStruct((n,), jnp.int32)),
        vmap_method="sequential",
    )
    return call(X, *_centre_args(X, C, valid, birth, row_offset))


def nearest_center_stats_ffi(X, C, valid, sample_weight):
    """Nearest centre of every row and the statistics of that assignment, in one pass.

    As :func:`nearest_center_ffi` (every valid centre visible to every row),
    plus ``weight[c] = sum_{i: z_i = c} w_i`` and
    ``sums[c] = sum_{i: z_i = c} w_i x_i`` (shapes (k,) and (k, d); zero for
    invalid slots), summed in an order that does not depend on the number
    of threads.

    Returns
    -------
    (sq_dist, index, weight, sums)
    """
    n, d = X.shape
    k = C.shape[0]
    call = jax.ffi.ffi_call(
        _target("bayesclust_nearest_center_stats", X.dtype),
        (jax.ShapeDtypeStruct((n,), X.dtype), jax.ShapeDtypeStruct((n,), jnp.int32),
         jax.ShapeDtypeStruct((k,), X.dtype), jax.ShapeDtypeStruct((k, d), X.dtype)),
        vmap_method="sequential",
    )
    birth = jnp.zeros(k, jnp.int32)
    return call(X, *_centre_args(X, C, valid, birth, 0), sample_weight.astype(X.dtype))


def gibbs_sweep_ffi(X, labels, counts, sums, means, log_alpha, sigma2, rho2, seeds, *, collapsed,
                    u=None, z=None, n_valid=None):
    """One sweep of Neal's single-site Gibbs moves in every chain (see ``gibbs.cc``).

    Parameters
    ----------
    X : array, shape (n, d), float32 or float64
    labels : int32 array, shape (C, n)
        Slot of every point in every chain at the start of the sweep.
    counts, sums : arrays, shapes (C, K) and (C, K, d)
        The slots' sizes and sums under ``labels``.
    means : array, shape (C, K, d)
        Slot means (Algorithm 2; carried through unchanged when ``collapsed``).
    log_alpha, sigma2 : arrays, shape (C,)
    rho2 : scalar
    seeds : uint32 array, shape (C, 2)
        The 64-bit seed (high, low words) of each chain's random stream for the
        sweep (float32 uniforms: xoshiro128**; float64: SplitMix64; see ``gibbs.cc``).
    collapsed : bool
        Neal's Algorithm 3 (means integrated out) instead of Algorithm 2.
    u, z : arrays of shapes (C, n) and (C, n, d), optional
        The uniforms on (0, 1] and standard normals to use instead of the streams'
        (tests: then the draws are those of the XLA path given the same numbers).
    n_valid : int32 scalar, optional
        The points that move: the first ``n_valid`` rows (default all ``n``).  The rows
        past it pad ``X`` to a shape bucket: never moved, never counted, their labels
        returned as -1; the draws of the first ``n_valid`` rows are those of an
        unpadded call on them (the streams are indexed by the real rows only).

    Returns
    -------
    (labels, counts, sums, means, overflow)
        Shapes (C, n) int32, (C, K), (C, K, d), (C, K, d), (C,) int32 (1: a new
        cluster found every slot taken; the sweep must be redone with more slots).
        The means are as the moves left them (not redrawn).
    """
    C = means.shape[0]
    dt = X.dtype
    u = jnp.zeros((C, 0), dt) if u is None else u.astype(dt)
    z = jnp.zeros((C, 0, X.shape[1]), dt) if z is None else z.astype(dt)
    out = _gibbs_call(X, labels, counts, sums, means, log_alpha, sigma2, rho2, seeds, u, z,
                      collapsed=collapsed, draws=1, thin=1, draw_means=False, n_valid=n_valid)
    return tuple(a[:, 0] for a in out[:4]) + (out[4],)  # no split-merge moves: none accepted


def gibbs_run_ffi(X, labels, counts, sums, means, log_alpha, sigma2, rho2, seeds, *, collapsed,
                  num_draws, thin=1, split_merge=0, n_valid=None):
    """``num_draws`` draws of ``thin`` sweeps each, every chain, in one call.

    Each sweep is :func:`gibbs_sweep_ffi`'s, followed by ``split_merge``
    split-merge moves (``gibbs.split_merge_move``'s, the members visited in
    index order) and a draw of every slot's mean from its Gaussian posterior
    ``p(mu | z, X)`` (Algorithm 2 moves on with them; the collapsed sampler
    records them); the chains' streams run on from sweep to sweep.  Before
    each sweep a chain's clusters are renumbered onto slots ``0..k-1`` (the
    partition is unchanged).  Arguments as :func:`gibbs_sweep_ffi` (``n_valid`` too).

    Returns
    -------
    (labels, counts, sums, means, overflow, accepted)
        Every draw: shapes (C, T, n) int32, (C, T, K), (C, T, K, d), (C, T, K, d)
        with ``T = num_draws``; overflow (C,) int32 (set if any sweep of the chain
        overflowed: the whole run must be redone with more slots); accepted (C, T)
        int32, the split-merge moves accepted and applied in each draw's ``thin`` sweeps.
    """
    C, d = means.shape[0], X.shape[1]
    dt = X.dtype
    return _gibbs_call(X, labels, counts, sums, means, log_alpha, sigma2, rho2, seeds,
                       jnp.zeros((C, 0), dt), jnp.zeros((C, 0, d), dt), collapsed=collapsed,
                       draws=num_draws, thin=thin, draw_means=True, split_merge=split_merge,
                       n_valid=n_valid)


def _gibbs_call(X, labels, counts, sums, means, log_alpha, sigma2, rho2, seeds, u, z, *,
                collapsed, draws, thin, draw_means, split_merge=0, n_valid=None):
    n, d = X.shape
    n_valid = jnp.asarray(n if n_valid is None else n_valid, jnp.int32).reshape(())
    C, K = means.shape[0], means.shape[1]
    dt = X.dtype
    call = jax.ffi.ffi_call(
        _target("bayesclust_gibbs_sweep", dt),
        (jax.ShapeDtypeStruct((C, draws, n), jnp.int32),
         jax.ShapeDtypeStruct((C, draws, K), dt),
         jax.ShapeDtypeStruct((C, draws, K, d), dt),
         jax.ShapeDtypeStruct((C, draws, K, d), dt),
         jax.ShapeDtypeStruct((C,), jnp.int32),
         jax.ShapeDtypeStruct((C, draws), jnp.int32)),
        vmap_method="sequential",
    )
    return call(X, labels.astype(jnp.int32), counts.astype(dt), sums.astype(dt), means.astype(dt),
                log_alpha.astype(dt), sigma2.astype(dt), jnp.asarray(rho2, dt).reshape(()),
                seeds.astype(jnp.uint32), u, z, n_valid, collapsed=np.int32(bool(collapsed)),
                draws=np.int64(draws), thin=np.int64(thin), draw_means=np.int32(bool(draw_means)),
                split_merge=np.int64(split_merge))


def gibbs_gaussian_ffi(Z, labels, counts, means, factor, logdet, u, log_new, kappa0, nu0, n_valid,
                       log_alpha=None, seeds=None, *, full, split_merge=0, point_moves=True):
    """The moves of one collapsed sweep of the full / diag DP mixture (``gibbs_gaussian.cc``).

    Neal's (2000) Algorithm 3 moves of ``gibbs_gaussian._point_step`` for every point
    ``i < n_valid`` in order, every chain, on the given uniforms: the same draws as the
    XLA scan from the same numbers (up to float rounding); then ``split_merge``
    sequentially-allocated split-merge moves per chain (Dahl 2003; the proposal of
    ``gibbs_gaussian.split_merge_move``, members visited in index order) on each chain's
    own SplitMix64 stream.

    Parameters
    ----------
    Z : array, shape (n, d), float32 or float64
        The prior-whitened data.
    labels : int32 array, shape (C, n)
    counts, means : arrays, shapes (C, K) and (C, K, d)
        The slots' sizes and posterior means under ``labels``.
    factor : array, shape (C, K, d, d) (``full``) or (C, K, d)
        The inverses of the slots' posterior scales, or their Gamma rates.
    logdet : array, shape (C, K)
        ``log det S_n`` (``full``; ignored otherwise).
    u, log_new : arrays, shape (C, n)
        The uniforms on (0, 1] of the draws and the new cluster's log weights.
    kappa0, nu0 : scalars
    n_valid : int scalar
        Rows ``n_valid..n-1`` are padding: not moved, their labels returned as given.
    log_alpha : array, shape (C,), optional
        The chains' log concentrations (the split-merge moves' acceptance).
    seeds : uint32 array, shape (C, 2), optional
        The 64-bit seed (high, low words) of each chain's stream for the split-merge moves.
    full : bool
    split_merge : int
        Split-merge moves per chain after the point moves.
    point_moves : bool
        False: the split-merge moves alone (tests).

    Returns
    -------
    (labels, overflow, accepted)
        Shapes (C, n) int32, (C,) int32 (1: a new cluster, or an accepted split, found
        every slot taken) and (C,) int32 (the split-merge moves accepted).
    """
    C, n = labels.shape
    dt = Z.dtype
    log_alpha = jnp.zeros((C,), dt) if log_alpha is None else log_alpha
    seeds = jnp.zeros((C, 2), jnp.uint32) if seeds is None else seeds
    call = jax.ffi.ffi_call(
        _target("bayesclust_gibbs_gaussian", dt),
        (jax.ShapeDtypeStruct((C, n), jnp.int32), jax.ShapeDtypeStruct((C,), jnp.int32),
         jax.ShapeDtypeStruct((C,), jnp.int32)),
        vmap_method="sequential",
    )
    scalar = lambda v, t: jnp.asarray(v, t).reshape(())  # noqa: E731
    return call(Z, labels.astype(jnp.int32), counts.astype(dt), means.astype(dt), factor.astype(dt),
                logdet.astype(dt), u.astype(dt), log_new.astype(dt), scalar(kappa0, dt),
                scalar(nu0, dt), scalar(n_valid, jnp.int32), log_alpha.astype(dt),
                seeds.astype(jnp.uint32), full=np.int32(bool(full)),
                split_merge=np.int64(split_merge), point_moves=np.int32(bool(point_moves)))


def hdp_crf_moves_ffi(X, gid, rho2, tables, table_counts, table_dish, dish_tables, means,
                      log_alpha, log_gamma, sigma2, seeds, n_valid=None, *, split_merge=0,
                      u_points=None, z_points=None, u_tables=None, z_tables=None):
    """The point and table moves of one sweep of the HDP mixture's CRF sampler (``hdp.cc``).

    The moves of ``hdp_gibbs._scan_points`` then ``hdp_gibbs._scan_tables`` for one
    chain, given the same uniforms and normals (Teh et al. 2006, §5.1), then
    ``split_merge`` moves of ``hdp_gibbs.split_merge_move`` (Dahl 2003; Jain & Neal 2004;
    the dish means left stale, as there).  Written for
    one chain; under ``jax.vmap`` (over chains) the kernel receives every chain at once
    and shares them out to XLA's threads.

    Parameters
    ----------
    X : array, shape (n, d), float32 or float64
    gid : int32 array, shape (n,)
        Data set of every point, ``0..D-1``.
    rho2 : scalar
    tables : int32 array, shape (n,)
    table_counts : array, shape (D, L)
    table_dish : int32 array, shape (D, L)
    dish_tables : array, shape (P,)
    means : array, shape (P, d)
    log_alpha, log_gamma, sigma2 : scalars
    seeds : uint32 array, shape (2,)
        The 64-bit seed (high, low words) of the chain's SplitMix64 stream for the sweep
        (see ``hdp.cc``).
    n_valid : int32 scalar, optional
        The points that move: the first ``n_valid`` rows (default all ``n``).  The rows
        past it pad ``X`` to a shape bucket (data set and table -1): never moved, counted
        or read, their tables returned as given; the draws of the first ``n_valid`` rows
        are those of an unpadded call on them (the stream is laid out by the real rows).
    u_points, z_points : arrays, shapes (n,) and (n, d), optional
        Uniforms on (0, 1] and standard normals of the point moves, instead of the
        stream's (tests: the moves are then those of the XLA scans given these numbers).
    u_tables, z_tables : arrays, shapes (D * L,) and (D * L, d), optional
        Those of the table moves, one per table slot (all four or none; not with
        ``split_merge``).
    split_merge : int
        Split-merge moves after the table moves (their numbers from the stream).

    Returns
    -------
    (tables, table_counts, table_dish, dish_tables, means, overflow, accepted)
        The state after the moves; ``overflow`` int32 scalar (1: a new table or dish
        found its buffer full; the sweep stopped there and must be redone with more
        slots); ``accepted`` int32 scalar, the split-merge moves accepted.
    """
    n, d = X.shape
    D, L = table_counts.shape
    P = dish_tables.shape[0]
    dt = X.dtype
    call = jax.ffi.ffi_call(
        _target("bayesclust_hdp_crf", dt),
        (jax.ShapeDtypeStruct((n,), jnp.int32), jax.ShapeDtypeStruct((D, L), dt),
         jax.ShapeDtypeStruct((D, L), jnp.int32), jax.ShapeDtypeStruct((P,), dt),
         jax.ShapeDtypeStruct((P, d), dt), jax.ShapeDtypeStruct((), jnp.int32),
         jax.ShapeDtypeStruct((), jnp.int32)),
        vmap_method="expand_dims",
    )

    i32 = jnp.int32
    given = [u_points, z_points, u_tables, z_tables]
    if any(a is None for a in given):
        if any(a is not None for a in given):
            raise ValueError("hdp_crf_moves_ffi: give all of u_points, z_points, u_tables and "
                             "z_tables, or none")
        given = [jnp.zeros((0,), dt)] * 4
    elif split_merge:
        raise ValueError("hdp_crf_moves_ffi: split-merge moves draw their own numbers")
    return call(X, gid.astype(i32), jnp.asarray(rho2, dt), tables.astype(i32),
                table_counts.astype(dt), table_dish.astype(i32), dish_tables.astype(dt),
                means.astype(dt), jnp.asarray(log_alpha, dt), jnp.asarray(log_gamma, dt),
                jnp.asarray(sigma2, dt), *(jnp.asarray(a, dt) for a in given),
                jnp.asarray(seeds).astype(jnp.uint32),
                jnp.asarray(n if n_valid is None else n_valid, i32).reshape(()),
                split_merge=np.int64(split_merge))


def did_agglomerate(X, *, method, floor, param, param2, min_size):
    """SL-DID's or SL-AGLO's whole agglomeration in one host call (see ``did.cc``).

    The same decisions as the NumPy driver of
    :mod:`bayesclust.inference.increments.did_hierarchy`, step for step; called through
    ctypes (host code, not an XLA custom call).  Use only when :func:`enabled`.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d), n >= 2
        In the unit frame.
    method : {"sl_did", "sl_aglo"}
    floor : float
        The smallest mean increment.
    param : float
        ``tail_factor`` (SL-DID) or ``tau`` (SL-AGLO).
    param2 : float or None
        SL-DID's ``tail_prob`` (None: the ``tail_factor`` rule).
    min_size : int

    Returns
    -------
    owner : ndarray of int64, shape (n,)
        The smallest point of every point's cluster.
    frozen : ndarray of bool, shape (n,)
        True at the smallest point of every isolated cluster.
    merges : ndarray of float64, shape (n_merges, 3)
    n_tests : int

    Raises
    ------
    MemoryError
        The ``n x n`` distance matrix could not be allocated.
    """
    if not available():
        raise RuntimeError("did_agglomerate: the native kernels are not available")
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    owner = np.empty(n, np.int64)
    frozen = np.zeros(n, np.uint8)
    merges = np.empty((max(n - 1, 1), 3), np.float64)
    n_merges = ctypes.c_int64(0)
    n_tests = ctypes.c_int64(0)
    fn = _state["lib"].bayesclust_did_agglomerate
    fn.restype = ctypes.c_int
    ptr = ctypes.c_void_p
    status = fn(ptr(X.ctypes.data), ctypes.c_int64(n), ctypes.c_int64(d),
       ctypes.c_int32({"sl_did": 0, "sl_aglo": 1}[method]), ctypes.c_double(floor),
       ctypes.c_double(param), ctypes.c_double(-1.0 if param2 is None else param2),
       ctypes.c_int64(min_size), ptr(owner.ctypes.data), ptr(frozen.ctypes.data),
       ptr(merges.ctypes.data), ctypes.byref(n_merges), ctypes.byref(n_tests))
    if status != 0:
        raise MemoryError(f"did_agglomerate: no memory for the {n} x {n} float64 distance matrix")
    return owner, frozen.astype(bool), merges[:n_merges.value].copy(), int(n_tests.value)


def _target(stem, dtype):
    return f"{stem}_{'f64' if jnp.dtype(dtype) == jnp.float64 else 'f32'}"


def _centre_args(X, C, valid, birth, row_offset):
    return (
        C.astype(X.dtype), valid.astype(jnp.int32), birth.astype(jnp.int32),
        jnp.asarray(row_offset, jnp.int32).reshape(()),
    )


def cecib_passes(X, z, labels, active, deleted, stats, *, n_min, tol, beta, c0, pos, moved,
                 max_passes):
    """CEC-IB's Hartigan passes with full covariances, in place (see ``cecib.cc``).

    The visits of the NumPy loop of :mod:`bayesclust.inference.information.cecib`
    (``_visit``, then the from-scratch recompute of every pass) in one host call,
    through ctypes.  Use only when :func:`enabled`.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d), C order
    z : ndarray of int64, shape (n,)
        Label category of every point, -1 unlabelled.
    labels : ndarray of int64, shape (n,)
        Cluster slot of every point; updated in place.
    active, deleted : ndarray of bool, shape (K,)
        Updated in place.
    stats : sequence of ndarray of float64
        ``mu (K, d), cov (K, d, d), inv (K, d, d), logdet, n (K,), counts (K, M), L, S, H, E (K,)``,
        C order, updated in place.
    n_min, tol, beta, c0 : float
        Deletion threshold, move tolerance, label weight, ``d/2 ln(2 pi e)``.
    pos : int
        First point to visit in the current pass.
    moved : bool
        Whether the current pass has moved a point before ``pos``.
    max_passes : int
        Passes to end at most (a pass that moves nothing ends the run); 0: only recompute
        the statistics from ``labels`` (every label ``>= 0``; status 0, or 2 when a
        covariance may be singular and the caller must recompute them itself).

    Returns
    -------
    status : int
        0 done, 1 the host visits point ``pos``, 2 the host recomputes the statistics
        (a covariance may be singular; the pass has ended but is not in ``trace``),
        3 degenerate X (a deleted cluster's point found no cluster).
    pos : int
    moved : bool
        For the pass under way (status 1).
    trace : ndarray of float64, shape (p,)
        The objective after every pass that ended in this call.
    moved_of : ndarray of bool, shape (p,)
        Whether each of those passes moved a point.
    """
    if not available():
        raise RuntimeError("cecib_passes: the native kernels are not available")
    n, d = X.shape
    K = active.shape[0]
    mu, cov, inv, logdet, cnt, counts, L, S, H, E = stats
    arrays = (X, z, labels, active, deleted, *stats)
    for a, dt in zip(arrays, (np.float64, np.int64, np.int64, np.bool_, np.bool_)
                     + (np.float64,) * 10, strict=True):
        if a.dtype != dt or not a.flags.c_contiguous:
            raise TypeError(f"cecib_passes: every array must be C-ordered {dt.__name__}")
    c_pos = ctypes.c_int64(int(pos))
    c_moved = ctypes.c_uint8(bool(moved))
    c_passes = ctypes.c_int64(0)
    trace = np.zeros(max(int(max_passes), 1))
    moved_of = np.zeros(max(int(max_passes), 1), np.uint8)
    fn = _state["lib"].bayesclust_cecib_passes
    fn.restype = ctypes.c_int
    ptr = ctypes.c_void_p
    i64 = ctypes.c_int64
    status = fn(ptr(X.ctypes.data), ptr(z.ctypes.data), i64(n), i64(d), i64(K), i64(counts.shape[1]),
                *(ptr(a.ctypes.data) for a in (labels, active, deleted, *stats)),
                ctypes.c_double(n_min), ctypes.c_double(tol), ctypes.c_double(beta),
                ctypes.c_double(c0), ctypes.byref(c_pos), ctypes.byref(c_moved),
                i64(int(max_passes)), ctypes.byref(c_passes), ptr(trace.ctypes.data),
                ptr(moved_of.ctypes.data))
    if status == 4:
        raise MemoryError("cecib_passes: no memory for the scratch arrays")
    p = c_passes.value
    return int(status), c_pos.value, bool(c_moved.value), trace[:p], moved_of[:p].astype(bool)
