"""Dissimilarity increments and the DID hierarchies against NumPy / SciPy peers: time and memory.

Prints JSON lines.

1. ``did_increments`` (n = 20,000, d = 2 and 10, standard Gaussian data):
   ``bayesclust.graphs.increments`` (nearest-neighbour triplets through a k-d tree; Aidos &
   Fred 2012, §2) against an O(n^2) NumPy loop written here -- one full distance row per
   point gives its two nearest neighbours, the increment of ``i`` is then
   ``|d(i, j) - d(j, k)|`` with ``j`` the nearest neighbour of ``i`` and ``k`` that of ``j``
   other than ``i`` -- and against the same computation on blocks of 1,024 rows
   (``scipy.spatial.distance.cdist``; a stronger O(n^2) peer, for context).  The values are
   asserted equal (``rtol = 1e-12``; for the ``cdist`` peer also ``atol`` = 1e-12 times the
   data's scale, as ``cdist`` may round a distance an ulp apart).  Warm times are the least of a few calls in this process;
   ``first_call_s`` is ``import bayesclust.graphs`` plus the first call in a fresh Python
   process.  Target: >= 20x over the NumPy loop.
2. ``did_hierarchy`` (n = 2,000 and 10,000, d = 2, four Gaussian blobs of standard deviations
   0.5, 1, 1.5 and 2, seed 0): ``sl_did`` (Aidos & Fred 2011) and ``sl_aglo`` (Fred & Leitão
   2003, ``tau = 6``) against SciPy's single linkage (``pdist`` + ``linkage(.., "single")``).
   Ratio = ours / SciPy, warm (least of a few calls, same process) and first call (import of
   the module plus the call, each in its own fresh process, the JAX compilation cache in a new
   directory).  Memory, measured in that fresh process: ``traced_peak_bytes`` is the peak of
   tracemalloc over one call (NumPy's buffers are traced), ``rss_peak_bytes`` the rise of the
   peak resident size (``VmHWM``, reset before the call) above the resident size after the
   imports during the first call (so lazy imports and JAX's first use count there), both also
   in units of one n x n float64 matrix (``8 n^2`` bytes).  Targets: ``sl_did`` <= 10x SciPy,
   at most one n x n float64.
3. ``did_gdid_cut`` (n = 2,000, same blobs): ``gdid_cut`` over 1..20 clusters of an
   average-link tree, against the average linkage itself (``pdist`` + ``linkage``).

Timings on a shared 2-core machine are noisy; the ratios are the result, seconds are context.

Usage: python benchmarks/did.py [--quick] [--hierarchy-only]
   full: as above (a few minutes); quick (< 60 s): increments at n = 5,000, the hierarchies at
   n = 1,000 and 2,000, G-DID at 1,000.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as bench
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

FULL = {"increments": [(20_000, 2), (20_000, 10)], "hierarchy": [2_000, 10_000], "gdid": 2_000,
        "gmdid": (5_000, (8, 16))}
QUICK = {"increments": [(5_000, 2), (5_000, 10)], "hierarchy": [1_000, 2_000], "gdid": 1_000,
         "gmdid": (1_000, (4,))}
TAU = 6.0  # SL-AGLO's isolation threshold (the SLAGLO estimator's docstring example)
GDID_RANGE = range(1, 21)


# --------------------------------------------------------------------------- data


def gaussian(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Standard Gaussian data, shape (n, d)."""
    return np.random.default_rng(seed).normal(size=(n, d))


def blobs(n: int, seed: int = 0) -> np.ndarray:
    """Four 2-D Gaussian blobs of standard deviations 0.5, 1, 1.5, 2 at the corners of a 10-square."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    spreads = np.array([0.5, 1.0, 1.5, 2.0])
    z = rng.integers(4, size=n)
    return centres[z] + spreads[z, None] * rng.normal(size=(n, 2))


# --------------------------------------------------------------------------- O(n^2) peers


def _increments_from_2nn(nn: np.ndarray, nd: np.ndarray) -> np.ndarray:
    """Increments from every point's two nearest neighbours (indices, distances; shape (n, 2))."""
    i = np.arange(nn.shape[0])
    j = nn[:, 0]
    d_jk = np.where(nn[j, 0] == i, nd[j, 1], nd[j, 0])  # j's nearest other than i
    return np.abs(nd[:, 0] - d_jk)


def increments_loop(X: np.ndarray) -> np.ndarray:
    """The increments by a plain loop: one full distance row per point (O(n^2) work, no tree)."""
    n = X.shape[0]
    nn = np.empty((n, 2), dtype=np.int64)
    nd = np.empty((n, 2))
    for i in range(n):
        row = np.sqrt(np.sum((X - X[i]) ** 2, axis=1))
        row[i] = np.inf
        a = int(np.argmin(row))  # ties to the smallest index, as graphs.increments
        da = row[a]
        row[a] = np.inf
        b = int(np.argmin(row))
        nn[i] = a, b
        nd[i] = da, row[b]
    return _increments_from_2nn(nn, nd)


def increments_blocked(X: np.ndarray, block: int = 1024) -> np.ndarray:
    """The same on blocks of rows of the distance matrix (``cdist``): O(n^2), vectorised."""
    from scipy.spatial.distance import cdist

    n = X.shape[0]
    nn = np.empty((n, 2), dtype=np.int64)
    nd = np.empty((n, 2))
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        r = np.arange(hi - lo)
        C = cdist(X[lo:hi], X)
        C[r, np.arange(lo, hi)] = np.inf
        a = np.argmin(C, axis=1)
        da = C[r, a]
        C[r, a] = np.inf
        b = np.argmin(C, axis=1)
        nn[lo:hi, 0], nn[lo:hi, 1] = a, b
        nd[lo:hi, 0], nd[lo:hi, 1] = da, C[r, b]
    return _increments_from_2nn(nn, nd)


def scipy_single(X: np.ndarray) -> np.ndarray:
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import pdist

    return linkage(pdist(X), "single")


def scipy_average(X: np.ndarray) -> np.ndarray:
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import pdist

    return linkage(pdist(X), "average")


# --------------------------------------------------------------------------- fresh processes

#: What a child process times: the modules it imports (timed) and the call.
_CHILD = {
    "increments": ("bayesclust.graphs", lambda X: sys.modules["bayesclust.graphs"].increments(X)),
    "sl_did": ("bayesclust.inference.increments.did_hierarchy",
               lambda X: sys.modules["bayesclust.inference.increments.did_hierarchy"].sl_did(X)),
    "sl_aglo": ("bayesclust.inference.increments.did_hierarchy",
                lambda X: sys.modules["bayesclust.inference.increments.did_hierarchy"].sl_aglo(X, TAU)),
    "scipy_single": ("scipy.cluster.hierarchy", scipy_single),
}


def _status() -> dict:
    """Resident and peak resident bytes of this process (Linux ``/proc/self/status``)."""
    fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    return {"rss": int(fields["VmRSS"].split()[0]) * 1024, "hwm": int(fields["VmHWM"].split()[0]) * 1024}


def child(kind: str, n: int, d: int) -> dict:
    """One fresh process: import, first call (time, peak RSS), then one traced call (tracemalloc)."""
    import importlib
    import tracemalloc

    X = blobs(n) if kind != "increments" else gaussian(n, d)
    if kind == "scipy_single":  # pdist's module too: the peer's call imports nothing more
        t0 = time.perf_counter()
        importlib.import_module("scipy.cluster.hierarchy")
        importlib.import_module("scipy.spatial.distance")
    else:
        t0 = time.perf_counter()
        importlib.import_module(_CHILD[kind][0])
    out = {"import_s": time.perf_counter() - t0}
    fn = _CHILD[kind][1]
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM := VmRSS
        f.write("5")
    before = _status()["rss"]
    out["first_call_s"] = bench.seconds(lambda: fn(X))
    out["rss_peak_bytes"] = _status()["hwm"] - before
    gc.collect()
    tracemalloc.start()
    fn(X)
    out["traced_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out


def fresh(kind: str, n: int, d: int = 2, timeout: float = 1800.0) -> dict:
    """:func:`child` in a new Python process (a new, empty JAX compilation cache)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, BAYESCLUST_CACHE="1", BAYESCLUST_CACHE_DIR=cache)
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.run([sys.executable, __file__, "--child", kind, str(n), str(d)],
                              capture_output=True, text=True, env=env, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"child {kind} n={n}: {proc.stderr.strip()[-500:]}")
    return json.loads(lines[-1])


# --------------------------------------------------------------------------- rows


def run_increments(n: int, d: int, reps: int = 3) -> dict:
    from bayesclust.graphs import increments

    X = gaussian(n, d)
    first = fresh("increments", n, d)
    ours = increments(X)
    loop, loop_s = bench.timed(lambda: increments_loop(X))
    blocked = increments_blocked(X)
    np.testing.assert_allclose(ours, loop, rtol=1e-12)
    # cdist rounds a distance differently from NumPy's formula by an ulp, and an increment is a
    # difference of two nearly equal distances: an absolute ulp-scale tolerance for this peer
    np.testing.assert_allclose(ours, blocked, rtol=1e-12, atol=1e-12 * float(np.abs(X).max()))
    ours_s = bench.least_seconds(lambda: increments(X), reps)
    blocked_s = bench.least_seconds(lambda: increments_blocked(X), 2)
    return {"benchmark": "did_increments", "n": n, "d": d, "increments_s": ours_s,
            "numpy_loop_s": loop_s, "speedup_vs_loop": loop_s / ours_s,
            "numpy_blocked_s": blocked_s, "speedup_vs_blocked": blocked_s / ours_s,
            "first_call_s": first["first_call_s"], "import_s": first["import_s"],
            "first_call_speedup_vs_loop": loop_s / (first["import_s"] + first["first_call_s"]),
            "max_abs_diff": float(np.abs(ours - loop).max())}


def run_hierarchy(n: int, reps: int) -> list[dict]:
    from bayesclust.inference.increments.did_hierarchy import sl_aglo, sl_did

    X = blobs(n)
    nxn = 8.0 * n * n
    peer_s = bench.least_seconds(lambda: scipy_single(X), max(reps, 3))
    peer = fresh("scipy_single", n)
    peer_first = peer["import_s"] + peer["first_call_s"]
    from bayesclust import _native

    native = _native.enabled()
    rows = []
    for name, fn in (("sl_did", lambda: sl_did(X)), ("sl_aglo", lambda: sl_aglo(X, TAU))):
        res = fn()  # not timed: the module's first use in this process
        ours_s = bench.least_seconds(fn, reps)
        numpy_s = None
        if native:
            with _native.use_native(False):
                t0 = time.perf_counter()
                ref = fn()
                numpy_s = time.perf_counter() - t0
            assert np.array_equal(ref.labels, res.labels) and np.array_equal(ref.merges, res.merges)
        ours = fresh(name, n)
        ours_first = ours["import_s"] + ours["first_call_s"]
        rows.append({
            "benchmark": "did_hierarchy", "method": name, "n": n, "n_clusters": res.n_clusters,
            "n_tests": res.n_tests, "largest_cluster": int(np.bincount(res.labels).max()),
            "native": "yes" if native else "no",
            "seconds": ours_s, "scipy_single_s": peer_s, "ratio": ours_s / peer_s,
            "numpy_driver_s": numpy_s,
            "first_call_s": ours_first, "scipy_first_call_s": peer_first,
            "ratio_first_call": ours_first / peer_first,
            "traced_peak_bytes": ours["traced_peak_bytes"],
            "scipy_traced_peak_bytes": peer["traced_peak_bytes"],
            "traced_peak_nxn": ours["traced_peak_bytes"] / nxn,
            "scipy_traced_peak_nxn": peer["traced_peak_bytes"] / nxn,
            "rss_peak_nxn": ours["rss_peak_bytes"] / nxn,
            "scipy_rss_peak_nxn": peer["rss_peak_bytes"] / nxn,
        })
    return rows


def run_gdid(n: int, reps: int = 3) -> dict:
    from bayesclust.inference.increments.did_hierarchy import gdid_cut

    X = blobs(n)
    link_s = bench.least_seconds(lambda: scipy_average(X), reps)
    Z = scipy_average(X)
    cut = gdid_cut(X, Z, GDID_RANGE)  # not timed: first use
    cut_s = bench.least_seconds(lambda: gdid_cut(X, Z, GDID_RANGE), reps)
    return {"benchmark": "did_gdid_cut", "n": n, "n_clusters_range": f"{GDID_RANGE.start}..{GDID_RANGE.stop - 1}",
            "n_clusters": cut.n_clusters, "gdid_cut_s": cut_s, "average_linkage_s": link_s,
            "ratio": cut_s / link_s}


def run_gmdid(n: int, pieces: int) -> dict:
    """GMDID from a start that cuts each of five blobs into ``pieces`` slabs: cached vs literal."""
    from bayesclust.inference.increments.gmdid import gmdid

    rng = np.random.default_rng(0)
    spreads, centres = [1.0, 0.5, 1.5, 0.8, 1.2], [(0, 0), (8, 0), (0, 9), (9, 9), (4, 18)]
    X = np.concatenate([rng.normal(size=(n // 5, 2)) * s + c for s, c in zip(spreads, centres)])
    y = np.repeat(np.arange(5), n // 5)
    start = np.empty(n, dtype=int)
    for c in range(5):
        rows = np.flatnonzero(y == c)
        ranks = np.argsort(np.argsort(X[rows, 0]))
        start[rows] = c * pieces + ranks * pieces // rows.size
    t0 = time.perf_counter()
    cached = gmdid(X, start)
    cached_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    literal = gmdid(X, start, cache=False)
    literal_s = time.perf_counter() - t0
    assert np.array_equal(cached.labels, literal.labels)
    return {"benchmark": "did_gmdid_cache", "n": n, "initial_clusters": 5 * pieces,
            "final_clusters": cached.n_clusters, "tests_cached": cached.n_tests,
            "tests_literal": literal.n_tests, "cached_s": cached_s, "literal_s": literal_s,
            "speedup": literal_s / cached_s}


NOTES = {
    "did_increments": (
        "Dissimilarity increments of all nearest-neighbour triplets (Aidos & Fred 2012, §2): "
        "`graphs.increments` (k-d tree) vs an O(n^2) NumPy loop (one distance row per point) and "
        "the same on 1,024-row `cdist` blocks; values asserted equal (rtol 1e-12). Speedup = peer "
        "/ ours, warm: ours the least of 3 calls, the loop one call, the blocked peer the least of 2; "
        "`first_call_speedup_vs_loop` counts the import and the first call in a fresh process. "
        "Standard Gaussian data. Target: >= 20x over the loop."),
    "did_hierarchy": (
        "SL-DID (Aidos & Fred 2011) and SL-AGLO (Fred & Leitão 2003, tau = 6) vs SciPy's "
        "single linkage (`pdist` + `linkage`), d = 2, four Gaussian blobs (sd 0.5-2). Ratio = ours "
        "/ SciPy: warm (least of calls, same process) and first call (import + call, each in a fresh "
        "process). Memory in that fresh process, in units of one n x n float64 (8 n^2 bytes): "
        "`traced` = tracemalloc peak of one call (NumPy's buffers; not the native kernel's n x n "
        "matrix, which only `rss` sees), `rss` = rise of the peak resident size during the first "
        "call. Both run in one native call (`bayesclust/_native/did.cc`) when the native kernels "
        "are on (`native`); `numpy_driver_s` = one call of the NumPy driver they replace (the "
        "same merges, asserted). Targets for sl_did: <= 3x SciPy warm, <= 1 n x n float64."),
    "did_gdid_cut": (
        "`gdid_cut` (G-DID of the cuts into 1..20 clusters) on an average-link tree vs building the "
        "tree (`pdist` + `linkage(.., \"average\")`); ratio = cut / linkage, warm."),
    "did_gmdid_cache": (
        "GMDID (Aidos & Fred 2012, MDL) from a start that cuts each of five 2-D Gaussian blobs "
        "into slabs: increments of the merged pair only, every other cluster's and every decided "
        "pair kept (`cache=True`), vs recomputing every cluster and re-testing after each merge "
        "(`cache=False`, the algorithm as written); the same partition asserted. One call each. "
        "Target: >= 5x at n = 5,000."),
}


def main():
    if sys.argv[1:2] == ["--child"]:
        kind, n, d = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(child(kind, n, d)), flush=True)
        return
    p = bench.parser(__doc__, "increments at n = 5,000, hierarchies at 1,000 / 2,000, G-DID at 1,000 (< 60 s)")
    p.add_argument("--hierarchy-only", action="store_true",
                   help="only the did_hierarchy rows (for run_all.py --merge)")
    args = p.parse_args()
    cfg = QUICK if args.quick else FULL
    bench.emit(bench.environment("did.py", ("numpy", "scipy", "jax")))
    if args.hierarchy_only:
        bench.emit({"benchmark": "did_hierarchy", "note": NOTES["did_hierarchy"]})
        for n in cfg["hierarchy"]:
            for row in run_hierarchy(n, reps=3 if n > 5_000 else 7):
                bench.emit(row)
        return
    for name, note in NOTES.items():
        bench.emit({"benchmark": name, "note": note})
    for n, d in cfg["increments"]:
        bench.emit(run_increments(n, d))
    for n in cfg["hierarchy"]:
        for row in run_hierarchy(n, reps=3 if n > 5_000 else 7):
            bench.emit(row)
    bench.emit(run_gdid(cfg["gdid"]))
    n, pieces = cfg["gmdid"]
    for p in pieces:
        bench.emit(run_gmdid(n, p))


if __name__ == "__main__":
    main()
