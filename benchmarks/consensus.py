"""Sparse co-association vs n: memory and time are linear with the K_min rule.

Lourenco, Fred & Jain, "On the scalability of evidence accumulation clustering" (ICPR
2010, §IV).  Data: the paper's 10-Gaussian mixture
(``datasets.ten_gaussians``: unit Gaussians at (0, 12 i), n/10 points each).  For every n
and ensemble rule it prints one JSON line with

* the ensemble (k-means, ``kmeans_ensemble``; K ~ U{K_min..K_max}; linear rule
  {ceil(n/50), ceil(n/20)} and sqrt rule {ceil(sqrt(n)/2), ceil(sqrt(n))}) and its time;
* the sparse co-association (``coassociation``): stored upper-triangle pairs, bytes of the
  CSR arrays, peak traced allocation during accumulation (tracemalloc), time, and
  ``nnz / (2 n^2 / K_min)`` (the paper's estimate; it matches the upper-triangle count);
* the single-link consensus at K = 10 on the sparse matrix (MST) and its time and CI;
* the peer, side by side in the same run where it fits in memory (n <= --dense-max): the
  dense co-association (``metrics.co_clustering_matrix``, n x n float64), its bytes and
  time, and the ratios dense / sparse;
* the ensemble's peer (:func:`run_peer_loop`): a loop of scikit-learn ``KMeans(n_init=1)``
  over the ensemble's K values from the same random starts as ours (every partition up to
  ``--peer-all-max``, the first ``--peer-subset`` above, timed the same on both sides), the
  ratio of the times and of the objectives, and a k-means++ loop (``--peer-pp`` K above
  ``--peer-all-max``).  ``--scale-only`` runs just these rows and their slopes;
  ``--sqrt-max-n`` stops the sqrt-rule series early.

A final line fits log(nnz) and log(time) against log(n) per rule (slope 1 = linear).

Two further rows time the validity indices of ``bayesclust.metrics`` (Lourenço & Fred 2010,
consensus clustering validation):

* ``validity`` (:func:`run_validity`, n = 10,000, linear rule): the similarity-space
  silhouette S_s, Dunn D_s, Davies-Bouldin DB_s and likelihood index L_s of the single-link
  consensus, from the sparse co-association (stored pairs only) and from the dense n x n
  matrix (row-blocked NumPy path of the same functions): values, time and peak traced
  allocation of each (the dense matrix itself is counted apart, ``dense_matrix_bytes``); and
  the data-space silhouette and Davies-Bouldin against scikit-learn's ``silhouette_score`` /
  ``davies_bouldin_score`` (values, time ratio).
* ``anmi`` (:func:`run_anmi`, n = 100,000, 150 partitions): ``metrics.anmi`` against a loop
  of ``sklearn.metrics.normalized_mutual_info_score(average_method="geometric")`` over the
  partitions (values equal; ratio of the least of 3 calls, target >= 10x, and of the first
  calls, which also pay the page faults of the validated (N, n) int64 copy).  Its ensemble is k-means with the
  sqrt rule and 5 Lloyd iterations (only the label vectors matter for the timing), the
  consensus the mixture components.
Two rows time PPC, pairwise probabilistic clustering by the Baum-Eagon growth transform
(Rota Bulò, Lourenço, Fred & Pelillo 2010, eq. 5), on the sparse co-association of a k-means
ensemble (50 partitions, linear rule, K = 10 consensus clusters):

* ``ppc_dense`` (:func:`run_ppc_dense`, n = 5,000): ``ppc`` on the stored pairs against a
  dense NumPy loop of eq. 5 on the n x n matrix, both from the same Dirichlet start for a fixed
  number of iterations: the largest difference of the iterates (must be < 1e-10), the time and
  the peak resident memory of each (``VmHWM`` after resetting it, minus the resident size before;
  the dense side includes building the n x n matrix).
* ``ppc_scaling`` (:func:`run_ppc_scaling`, n = 5,000, 20,000, 50,000): time per iteration of
  ``ppc`` (the difference of a 25- and a 5-iteration run, compilation excluded) next to the
  stored pairs; ``seconds_per_iteration_per_pair`` stays flat if the cost grows with nnz, and
  ``..._per_n2`` falls if it does not grow with n^2.
* ``aspect_bayes`` (:func:`run_aspect_bayes`, iris and MASS biopsy, 50 k-means partitions):
  the PEnCA log-posterior (flat Dirichlet priors) maximised by ``aspect_em`` (one random start,
  and the default 10) and by SVI with ``AutoDelta`` (``aspect_posterior``, 2000 Adam steps),
  from the 10-start EM solution and from a random start: steady wall time of one EM start and
  of SVI (least of 3 calls), compile time (first call minus steady), their ratio, and the
  log-posteriors reached (NumPyro's ``log_density`` on the program; ``log_post_em`` is the
  10-start EM's).  ``--aspect-bayes-only`` runs just these rows.
* ``ensemble_consensus`` (:func:`run_ensemble_consensus`, iris, standardised wine and MASS
  biopsy, one k-means ensemble of 150 partitions per data set and seed, PEnCA's K rule): the
  consistency index of every consensus function on the *same* ensemble at the true K (and on
  standardised WDBC breast cancer, a data set outside the target) --
  EAC (average and single link), PEnCA (``aspect_em``), PPC, CSPA and MCLA (Strehl & Ghosh
  2002, normalised-cut spectral partitioner: docs/deviations.md#cspa-mcla-partitioner) -- and
  of the one ``select_consensus`` chooses among them by ANMI (Strehl & Ghosh's supra-consensus
  rule) and by ACC, with their seconds; ``--peer-json FILE`` adds the CI of a peer run on the
  same ensembles (``cluster_ensembles``'s METIS CSPA / MCLA, run in its own environment on the
  ensembles ``--dump-ensembles DIR`` writes; the stored run used Giecold's ``Cluster_Ensembles``
  1.16 from PyPI with METIS 5.1.0's ``gpmetis``, in a scratch environment with Python 3 /
  NumPy 2 compatibility shims, on the same saved ensembles).  Target: the selected consensus reaches at least
  CSPA's CI, within one object (``selected_anmi_ge_cspa_1obj``; the strict comparison is
  ``selected_anmi_ge_cspa``): ``selected_<index>_minus_cspa_objects`` counts the objects the
  selected consensus gets right minus those CSPA gets right, and ``<index>_lead_over_cspa_se``
  the selected candidate's lead over CSPA on the index in standard errors paired by
  partition (``ConsensusSelection.standard_errors``).  A single object is below the
  seed-to-seed spread of CSPA's own CI, and a lead of under about two standard errors is
  not a preference of the index (docs/deviations.md#consensus-selection-noise).
  ``--ensemble-consensus-only`` runs just these rows.
Quick mode (< 60 s): n in {1000, 2000, 4000}, 20 partitions, 10 Lloyd iterations.  Full
mode: n from 1000 to 200,000 (the paper went to 50,000), N = 150 partitions; the k-means
ensemble dominates the time at large n (KD-tree Lloyd with up to 10,000 centres); expect
tens of minutes for the largest n.  Numbers on a shared machine are noisy.

Usage: python benchmarks/consensus.py [--quick] [--n 1000 5000 ...] [--n-partitions 150]
       python benchmarks/consensus.py --scale-only [--n-partitions 50] [--sqrt-max-n 50000] [--peer-pp 1]
       python benchmarks/consensus.py --validity-only [--quick]   (just the two index rows)
       python benchmarks/consensus.py --ppc-only [--quick]        (just the two PPC rows)
       python benchmarks/consensus.py --ensemble-consensus-only [--seeds 0 1 2] [--dump-ensembles DIR]
                                      [--peer-json FILE]
"""

from __future__ import annotations

import time
import tracemalloc

import _common as bench
import numpy as np

from bayesclust import metrics
from bayesclust.datasets import ten_gaussians
from bayesclust.inference.consensus import coassociation as coassoc
from bayesclust.inference.consensus import ensembles
from bayesclust.inference.consensus import linkage as linkages

FULL_N = [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000]
QUICK_N = [1000, 2000, 4000]


def _objective(X: np.ndarray, labels: np.ndarray) -> float:
    """k-means objective of a partition: squared distances to the cluster means, summed."""
    k = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    means = np.stack([np.bincount(labels, weights=X[:, j], minlength=k) for j in range(X.shape[1])], 1)
    means /= np.maximum(counts, 1)[:, None]
    return float(np.sum((X - means[labels]) ** 2))


def run_peer_loop(X: np.ndarray, ks: np.ndarray, max_iter: int, n_pp: int, seed: int = 0) -> dict:
    """Our partitions vs a loop of scikit-learn ``KMeans(n_init=1)`` over the same K values.

    Every K of ``ks`` starts both sides from the same ``K`` distinct random data points (the
    ensemble's init kind): ours is the ensemble's partition (``lloyd_host``, KD-tree
    assignment, float64), the peer ``KMeans(init=those points, n_init=1, max_iter=max_iter,
    tol=0, algorithm="lloyd")`` (both stop when the assignment repeats or at ``max_iter``).
    The first ``n_pp`` K are also run by the k-means++ peer (``init="k-means++"``,
    scikit-learn's greedy D^2 seeding).  Both sides run in this process, one after the other.
    """
    from sklearn.cluster import KMeans

    from bayesclust.inference.hard.kmeans import lloyd_host

    X = np.asarray(X, np.float64)
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    starts = [np.sort(rng.choice(n, size=int(k), replace=False)) for k in ks]
    # Ours first, then the peers: scikit-learn's OpenMP threads spin for a while after each
    # fit and would slow an interleaved run of ours.
    ours, ours_s = [], []
    for idx in starts:
        lab, t = bench.timed(lambda: lloyd_host(X, X[idx], max_iter, assignment="kdtree", empty="relocate"))
        ours.append(lab)
        ours_s.append(t)
    time.sleep(0.5)
    peer_s, obj_ratio = [], []
    for k, idx, lab in zip(ks, starts, ours):
        km, t = bench.timed(lambda: KMeans(int(k), init=X[idx], n_init=1, max_iter=max_iter, tol=0.0,
                                           algorithm="lloyd").fit(X))
        peer_s.append(t)
        obj_ratio.append(_objective(X, lab) / _objective(X, km.labels_))
    pp_s = []
    for k in ks[:n_pp]:
        _, t = bench.timed(lambda: KMeans(int(k), init="k-means++", n_init=1, max_iter=max_iter, tol=0.0,
                                          algorithm="lloyd", random_state=seed).fit(X))
        pp_s.append(t)
    ours_pp_s = ours_s[:n_pp]
    row = {"peer_partitions": len(ks), "ours_subset_seconds": sum(ours_s),
           "peer_kmeans_loop_seconds": sum(peer_s), "peer_over_ours": sum(peer_s) / sum(ours_s),
           "objective_ours_over_peer_max": max(obj_ratio)}
    if pp_s:
        row.update({"peer_pp_partitions": len(pp_s), "peer_kmeanspp_loop_seconds": sum(pp_s),
                    "peer_pp_over_ours": sum(pp_s) / sum(ours_pp_s)})
    return row


PEER_NOTE = (
    "Peer columns: `peer_kmeans_loop_seconds` is a loop of scikit-learn `KMeans(K, init=<K distinct "
    "random data points>, n_init=1, max_iter={it}, tol=0, algorithm=\"lloyd\")` over the ensemble's "
    "first `peer_partitions` K values (every partition up to n = {all_max:,}, the first {subset} above: "
    "a subset, timed the same on both sides), `ours_subset_seconds` our partitions on the same K from "
    "the same starts (`lloyd_host`, KD-tree assignment, as in `kmeans_ensemble`; both stop when the "
    "assignment repeats or after {it} iterations), `peer_over_ours` the ratio (same run; above 1: ours "
    "faster), `objective_ours_over_peer_max` the largest ratio of the two k-means objectives (1: the "
    "same partitions). `peer_kmeanspp_loop_seconds`: the same loop with scikit-learn's greedy "
    "k-means++ seeding over the first `peer_pp_partitions` K (all up to n = {all_max:,}, {pp} above), "
    "`peer_pp_over_ours` its ratio to ours on those K (our ensemble uses the random start). Ours wins "
    "by arithmetic on these 2-D data: a KD-tree query costs O(log K) per point per iteration against "
    "the 2 n K d flops of a dense Lloyd step (5.6 GFLOP at n = 200,000, K = 7,000; scikit-learn's "
    "chunked GEMM reaches a few GFLOP/s at d = 2 on this 2-core machine, so about a second per "
    "iteration)."
)


def run_one(n: int, rule: str, n_partitions: int, max_iter: int, dense_max: int, seed: int = 0,
            peer_subset: tuple[int, int] = (0, 0)) -> dict:
    X, y = ten_gaussians(seed, n)
    ens, ens_s = bench.timed(lambda: ensembles.kmeans_ensemble(seed, X, n_partitions, k_rule=rule,
                                                               max_iter=max_iter))

    tracemalloc.start()
    C, co_s = bench.timed(lambda: coassoc.coassociation(ens))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    sl, sl_s = bench.timed(lambda: linkages.linkage_consensus(C, "single", 10))

    row = {"bench": "consensus", "kind": "point", "n": n, "rule": rule, "n_partitions": n_partitions,
           "k_min": ens.k_min, "k_max": ens.k_max, "ensemble_seconds": ens_s,
           "nnz_upper": C.nnz, "bytes": C.nbytes, "peak_bytes_accumulation": int(peak),
           "coassoc_seconds": co_s, "density": 2 * C.nnz / (n * n),
           "nnz_over_2n2_kmin": C.nnz / (2 * n * n / ens.k_min),
           "single_link_seconds": sl_s, "single_link_ci": metrics.consistency_index(y, sl.labels)}
    if n <= dense_max:
        D, dense_s = bench.timed(lambda: metrics.co_clustering_matrix(ens.labels))
        assert np.allclose(D[np.triu_indices(n, 1)], C.toarray()[np.triu_indices(n, 1)])
        row.update({"dense_bytes": int(D.nbytes), "dense_seconds": dense_s,
                    "dense_over_sparse_bytes": D.nbytes / C.nbytes,
                    "dense_over_sparse_seconds": dense_s / co_s})
        del D
    n_peer, n_pp = peer_subset
    if n_peer > 0:
        row.update(run_peer_loop(X, ens.n_clusters[:n_peer], max_iter, min(n_pp, n_peer), seed))
    return row


def _traced(fn):
    """``(fn(), seconds, peak traced bytes)`` of one call."""
    tracemalloc.start()
    out, sec = bench.timed(fn)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, sec, int(peak)


def run_validity(n: int = 10_000, rule: str = "linear", n_partitions: int = 50, max_iter: int = 20,
                 seed: int = 0) -> dict:
    """Similarity-space indices, sparse vs dense, and data-space S / DB vs scikit-learn."""
    from sklearn.metrics import davies_bouldin_score, silhouette_score

    X, _ = ten_gaussians(seed, n)
    ens = ensembles.kmeans_ensemble(seed, X, n_partitions, k_rule=rule, max_iter=max_iter)
    C = coassoc.coassociation(ens)
    labels = linkages.linkage_consensus(C, "single", 10).labels
    row = {"bench": "consensus", "kind": "validity", "n": n, "rule": rule, "n_partitions": n_partitions,
           "k_consensus": int(np.unique(labels).shape[0]), "nnz_upper": C.nnz, "sparse_bytes": C.nbytes}
    D, row["dense_build_seconds"] = bench.timed(C.toarray)
    row["dense_matrix_bytes"] = int(D.nbytes)
    indices = {"S_s": lambda S: metrics.silhouette(S, labels, space="similarity"),
               "D_s": lambda S: metrics.dunn(S, labels, space="similarity"),
               "DB_s": lambda S: metrics.davies_bouldin(S, labels, space="similarity"),
               "L_s": lambda S: metrics.likelihood_index(labels, S=S)}
    for name, index in indices.items():
        vs, ts, ps = _traced(lambda f=index: f(C))
        vd, td, pd = _traced(lambda f=index, M=D: f(M))
        assert np.isclose(vs, vd, rtol=1e-9, atol=1e-12), (name, vs, vd)
        row.update({name: vs, f"{name}_dense": vd, f"{name}_sparse_seconds": ts, f"{name}_dense_seconds": td,
                    f"{name}_sparse_peak_bytes": ps, f"{name}_dense_peak_bytes": pd,
                    f"{name}_dense_over_sparse_seconds": td / ts})
    # A partition of the ensemble has non-trivial values (the consensus of these well
    # separated Gaussians has S_s = 1): sparse and dense must agree on them too.
    part = ens.labels[0]
    for name, index in (("S_s", metrics.silhouette), ("D_s", metrics.dunn), ("DB_s", metrics.davies_bouldin)):
        vs, vd = index(C, part, space="similarity"), index(D, part, space="similarity")
        assert np.isclose(vs, vd, rtol=1e-9, atol=1e-12), (name, vs, vd)
        row[f"{name}_partition0"] = vs
    vs, vd = metrics.likelihood_index(part, S=C), metrics.likelihood_index(part, S=D)
    assert np.isclose(vs, vd, rtol=1e-9), ("L_s", vs, vd)
    row["L_s_partition0"] = vs
    D = None  # free the n x n matrix before the data-space timings
    for name, ours, theirs in (("S", metrics.silhouette, silhouette_score),
                               ("DB", metrics.davies_bouldin, davies_bouldin_score)):
        vo, to = bench.timed(lambda: ours(X, labels))
        vt, tt = bench.timed(lambda: theirs(X, labels))
        assert np.isclose(vo, vt, rtol=1e-9), (name, vo, vt)
        row.update({name: vo, f"{name}_sklearn": float(vt), f"{name}_seconds": to,
                    f"{name}_sklearn_seconds": tt, f"{name}_over_sklearn_seconds": to / tt})
    return row


def run_anmi(n: int = 100_000, n_partitions: int = 150, max_iter: int = 5, reps: int = 3, seed: int = 0) -> dict:
    """``metrics.anmi`` vs a loop of scikit-learn's NMI over the partitions: the first call of
    each, then the least of ``reps`` calls (``speedup`` compares the latter)."""
    from sklearn.metrics import normalized_mutual_info_score

    X, y = ten_gaussians(seed, n)
    ens = ensembles.kmeans_ensemble(seed, X, n_partitions, k_rule="sqrt", max_iter=max_iter)
    def loop():
        return float(np.mean([normalized_mutual_info_score(y, p, average_method="geometric")
                              for p in ens.labels]))

    ours, first_s = bench.timed(lambda: metrics.anmi(y, ens.labels))
    theirs, theirs_first_s = bench.timed(loop)
    assert np.isclose(ours, theirs, rtol=1e-9), (ours, theirs)
    ours_s = bench.least_seconds(lambda: metrics.anmi(y, ens.labels), reps)
    theirs_s = bench.least_seconds(loop, reps)
    return {"bench": "consensus", "kind": "anmi", "n": n, "n_partitions": n_partitions,
            "k_min": ens.k_min, "k_max": ens.k_max, "anmi": ours, "anmi_sklearn_loop": theirs,
            "anmi_first_call_seconds": first_s, "sklearn_loop_first_call_seconds": theirs_first_s,
            "anmi_seconds": ours_s, "sklearn_loop_seconds": theirs_s,
            "speedup_first_call": theirs_first_s / first_s, "speedup": theirs_s / ours_s}


def _rss() -> tuple[int, int]:
    """(resident, peak resident) bytes of this process (Linux ``/proc/self/status``)."""
    fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def _peak_rss(fn):
    """``(fn(), seconds, peak resident bytes above the resident size before the call)``."""
    import gc

    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:  # reset VmHWM to the current resident size
        f.write("5")
    rss0, _ = _rss()
    out, sec = bench.timed(fn)
    _, hwm = _rss()
    return out, sec, int(hwm - rss0)


def _ppc_setup(n: int, n_partitions: int, max_iter: int, K: int, seed: int):
    X, y = ten_gaussians(seed, n)
    ens = ensembles.kmeans_ensemble(seed, X, n_partitions, k_rule="linear", max_iter=max_iter)
    C = coassoc.coassociation(ens)
    Y0 = np.random.default_rng(seed).dirichlet(np.ones(K), size=n)  # (n, K)
    return y, ens, C, Y0


def run_ppc_dense(n: int = 5000, n_partitions: int = 50, iters: int = 50, K: int = 10,
                  max_iter: int = 20, seed: int = 0) -> dict:
    """Sparse ``ppc`` vs a dense NumPy loop of eq. 5 from the same start, ``iters`` iterations."""
    from bayesclust.inference.consensus.ppc import ppc

    _, ens, C, Y0 = _ppc_setup(n, n_partitions, max_iter, K, seed)

    def dense():
        D = C.toarray()  # c_ii = 1: every object is in every partition
        Y = Y0.T.copy()  # (K, n)
        for _ in range(iters):
            G = Y @ (D - Y.T @ Y)
            num = Y * (n + G)
            Y = num / num.sum(axis=0, keepdims=True)
        return Y.T

    def sparse():
        return ppc(seed, C, K, init_memberships=Y0, max_iter=iters, tol=1e-300).memberships

    Yd, dense_s, dense_peak = _peak_rss(dense)
    sparse()  # compile
    Ys, sparse_s, sparse_peak = _peak_rss(sparse)
    diff = float(np.abs(Yd - Ys).max())
    assert diff < 1e-10, diff
    return {"bench": "consensus", "kind": "ppc_dense", "n": n, "rule": "linear", "n_partitions": n_partitions,
            "K": K, "iterations": iters, "k_min": ens.k_min, "k_max": ens.k_max, "nnz_upper": C.nnz,
            "max_abs_diff": diff, "sparse_seconds": sparse_s, "dense_seconds": dense_s,
            "dense_over_sparse_seconds": dense_s / sparse_s, "sparse_peak_rss_bytes": sparse_peak,
            "dense_peak_rss_bytes": dense_peak, "dense_over_sparse_peak": dense_peak / max(sparse_peak, 1)}


def run_ppc_scaling(n: int, n_partitions: int = 50, K: int = 10, max_iter: int = 20, seed: int = 0,
                    short: int = 5, long: int = 25) -> dict:
    """Time per iteration of ``ppc`` on the linear-rule co-association against nnz and n^2."""
    from bayesclust.inference.consensus.ppc import ppc

    y, ens, C, Y0 = _ppc_setup(n, n_partitions, max_iter, K, seed)

    def run(iters):
        return ppc(seed, C, K, init_memberships=Y0, max_iter=iters, tol=1e-300)

    run(2)  # compile
    t_short = bench.least_seconds(lambda: run(short).memberships, 2)
    res, t_long = bench.timed(lambda: run(long))
    per_it = max(t_long - t_short, 1e-12) / (long - short)
    return {"bench": "consensus", "kind": "ppc_scaling", "n": n, "rule": "linear", "n_partitions": n_partitions,
            "K": K, "k_min": ens.k_min, "k_max": ens.k_max, "nnz_upper": C.nnz,
            "seconds_per_iteration": per_it, "seconds_per_iteration_per_pair": per_it / C.nnz,
            "seconds_per_iteration_per_n2": per_it / n**2, "run_seconds_25_iterations": t_long,
            "ci_after_25_iterations": metrics.consistency_index(y, res.labels)}
def run_aspect_bayes(name: str, n_aspects: int, n_partitions: int = 50, num_steps: int = 2000,
                     reps: int = 3, seed: int = 0) -> dict:
    """SVI-MAP (``AutoDelta``) vs ``aspect_em`` on one data set: times and log-posteriors."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    from bayesclust import datasets
    from bayesclust.inference.consensus.aspect_em import aspect_em
    from bayesclust.inference.consensus.coassociation import coassociation_pairs
    from bayesclust.inference.consensus.consensus_bayes import aspect_posterior
    from bayesclust.models.dyadic_aspect import dyadic_aspect

    X, _ = datasets.load(name)
    C = coassoc.coassociation(ensembles.kmeans_ensemble(seed, X, n_partitions))
    rows, cols, counts, n = coassociation_pairs(C)

    def log_post(p, B):
        p, B = np.maximum(p, 1e-300), np.maximum(B, 1e-300)  # Dirichlet(1) density: 0 log 0 = 0
        with jax.enable_x64(True):
            lp, _ = log_density(dyadic_aspect, (rows, cols, counts, n, n_aspects), {},
                                {"p": jnp.asarray(p / p.sum()), "B": jnp.asarray(B / B.sum(1, keepdims=True))})
        return float(lp)

    em1, em_first = bench.timed(lambda: aspect_em(seed, C, n_aspects, n_init=1))
    em_s = bench.least_seconds(lambda: aspect_em(seed, C, n_aspects, n_init=1), reps)
    em, em10_s = bench.timed(lambda: aspect_em(seed, C, n_aspects))  # the default 10 starts, compiled
    kw = dict(reference=em, num_steps=num_steps, learning_rate=0.05)
    post, svi_first = bench.timed(lambda: aspect_posterior(seed, C, n_aspects, **kw))
    svi_s = bench.least_seconds(lambda: aspect_posterior(seed, C, n_aspects, **kw), reps)
    rand = aspect_posterior(seed, C, n_aspects, init="random", **kw)
    lp_em = log_post(em.weights, em.B)
    lp_svi = log_post(post.params["weights"][0, 0], post.params["B"][0, 0])
    lp_rand = log_post(rand.params["weights"][0, 0], rand.params["B"][0, 0])
    return {"bench": "consensus", "kind": "aspect_bayes", "data": name, "n": n, "n_aspects": n_aspects,
            "n_partitions": n_partitions, "nnz_upper": int(rows.size), "em_iterations": em.n_iter,
            "em_seconds": em_s, "em_compile_seconds": max(0.0, em_first - em_s), "em_10_starts_seconds": em10_s,
            "log_post_em_1_start": log_post(em1.weights, em1.B),
            "svi_steps": num_steps, "svi_seconds": svi_s, "svi_compile_seconds": max(0.0, svi_first - svi_s),
            "ratio_svi_over_em": svi_s / em_s, "log_post_em": lp_em, "log_post_svi_from_em": lp_svi,
            "log_post_svi_random": lp_rand, "rel_gain_svi_from_em": (lp_svi - lp_em) / abs(lp_em),
            "rel_gain_svi_random": (lp_rand - lp_em) / abs(lp_em)}


# breast-cancer (WDBC, standardised) is a check outside the three target data sets
CONSENSUS_DATA = (("iris", 3, False), ("wine", 3, True), ("biopsy", 2, False), ("breast-cancer", 2, True))
SELECT_AMONG = ("average", "single", "penca", "ppc", "cspa", "mcla")


def _load_consensus_data(name: str, standardise: bool):
    from bayesclust import datasets

    X, y = datasets.load(name)
    if standardise:
        X = (X - X.mean(0)) / X.std(0)
    return X, y


def run_ensemble_consensus(name: str, k: int, standardise: bool, seed: int, n_partitions: int = 150,
                           dump_dir: str | None = None, peer: dict | None = None) -> dict:
    """CI of EAC / PEnCA / PPC / CSPA / MCLA and of the selected consensus on one ensemble."""
    from bayesclust.inference.consensus.consensus_selection import consensus_candidates, select_consensus

    X, y = _load_consensus_data(name, standardise)
    ens = ensembles.kmeans_ensemble(seed, X, n_partitions)
    label = f"{name}-norm" if standardise else name
    if dump_dir is not None:
        np.save(f"{dump_dir}/{label}_seed{seed}.npy", np.asarray(ens.labels))
    C = coassoc.coassociation(ens)
    row = {"bench": "consensus", "kind": "ensemble_consensus", "data": label, "n": int(X.shape[0]), "K": k,
           "seed": seed, "n_partitions": n_partitions, "k_min": ens.k_min, "k_max": ens.k_max}
    cands, cand_s = bench.timed(lambda: consensus_candidates(C, SELECT_AMONG, [k], ensemble=ens, rng_key=seed))
    for method, lab in zip(cands.methods, cands.labels):
        name_ = {"average": "eac_al", "single": "eac_sl"}.get(method, method)
        row[f"ci_{name_}"] = metrics.consistency_index(y, lab)
        row[f"anmi_{name_}"] = float(metrics.anmi(lab, ens))
    i_cspa = cands.methods.index("cspa")
    n = int(X.shape[0])
    for crit in ("anmi", "acc"):
        sel = select_consensus(cands, ens, crit)
        row[f"selected_by_{crit}"] = sel.method
        row[f"ci_selected_{crit}"] = metrics.consistency_index(y, sel.labels)
        # objects the selected consensus gets right minus those CSPA gets right
        row[f"selected_{crit}_minus_cspa_objects"] = int(round(n * (row[f"ci_selected_{crit}"] - row["ci_cspa"])))
        se = sel.standard_errors[i_cspa]
        # the selected candidate's lead over CSPA on the index, in paired standard errors
        row[f"{crit}_lead_over_cspa_se"] = float((sel.scores[sel.index] - sel.scores[i_cspa]) / se) if se > 0 else 0.0
    from bayesclust.inference.consensus.hypergraph import cspa, mcla

    _, row["cspa_seconds"] = bench.timed(lambda: cspa(seed, C, k))
    _, row["mcla_seconds"] = bench.timed(lambda: mcla(seed, ens, k))
    row["candidates_seconds"] = cand_s
    row["selected_anmi_ge_cspa"] = bool(row["ci_selected_anmi"] >= row["ci_cspa"] - 1e-12)
    row["selected_anmi_ge_cspa_1obj"] = row["selected_anmi_minus_cspa_objects"] >= -1
    if peer is not None:
        for method in ("cspa", "mcla"):
            lab = peer.get(f"{label}_seed{seed}", {}).get(method)
            if lab is not None:
                row[f"ci_peer_{method}"] = metrics.consistency_index(y, np.asarray(lab))
        if "ci_peer_cspa" in row:
            row["selected_anmi_ge_peer_cspa"] = bool(row["ci_selected_anmi"] >= row["ci_peer_cspa"] - 1e-12)
    return row


def fit_slopes(rows: list[dict]) -> dict:
    out = {"bench": "consensus", "kind": "slopes"}
    for rule in sorted({r["rule"] for r in rows}):
        rr = [r for r in rows if r["rule"] == rule]
        if len(rr) < 2:
            continue
        ln = np.log([r["n"] for r in rr])
        for key in ("nnz_upper", "bytes", "coassoc_seconds", "ensemble_seconds"):
            out[f"{rule}_{key}_slope"] = float(np.polyfit(ln, np.log([max(r[key], 1e-9) for r in rr]), 1)[0])
    return out


def main():
    parser = bench.parser(__doc__, f"n in {QUICK_N}, 20 partitions (< 60 s)")
    parser.add_argument("--n", type=int, nargs="+", help=f"sizes (default {FULL_N})")
    parser.add_argument("--n-partitions", type=int, default=None, help="ensemble size (default 150; quick 20)")
    parser.add_argument("--max-iter", type=int, default=None, help="Lloyd iterations (default 20; quick 10)")
    parser.add_argument("--rules", nargs="+", default=["linear", "sqrt"], choices=["linear", "sqrt", "penca"])
    parser.add_argument("--dense-max", type=int, default=None,
                        help="largest n for the dense peer (default 10,000; quick 4000)")
    parser.add_argument("--scale-only", action="store_true",
                        help="only the 'Sparse co-association vs n' rows and their slopes")
    parser.add_argument("--sqrt-max-n", type=int, default=None,
                        help="largest n of the sqrt rule (its co-association grows as n^1.6; default: all)")
    parser.add_argument("--peer-all-max", type=int, default=20_000,
                        help="up to this n the scikit-learn KMeans loop runs every partition's K "
                             "(k-means++ peer too); above it only the first --peer-subset K "
                             "(--peer-pp of them k-means++); 0: no peer")
    parser.add_argument("--peer-subset", type=int, default=5, help="partitions timed on both sides above --peer-all-max")
    parser.add_argument("--peer-pp", type=int, default=2, help="k-means++ peer partitions above --peer-all-max")
    parser.add_argument("--validity-only", action="store_true",
                        help="only the validity-index rows (n = 10,000 and 100,000; quick 2000 and 20,000)")
    parser.add_argument("--ppc-only", action="store_true",
                        help="only the PPC rows (n = 5,000 dense; 5,000 / 20,000 / 50,000; quick 2000 and 2000 / 4000)")
    parser.add_argument("--aspect-bayes-only", action="store_true",
                        help="only the SVI-MAP vs aspect_em rows (iris, biopsy)")
    parser.add_argument("--ensemble-consensus-only", action="store_true",
                        help="only the CSPA / MCLA / selected consensus rows (iris, wine-norm, biopsy, "
                             "breast-cancer-norm)")
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="ensemble seeds of the ensemble-consensus rows (default 0 1 2; quick 0)")
    parser.add_argument("--dump-ensembles", default=None, help="write each ensemble to DIR/<data>_seed<s>.npy")
    parser.add_argument("--peer-json", default=None,
                        help="a peer's consensus labels: {\"<data>_seed<s>\": {\"cspa\": [...], \"mcla\": [...]}}")
    args = parser.parse_args()
    seeds = args.seeds or ([0] if args.quick else [0, 1, 2])
    peer = None
    if args.peer_json:
        import json

        with open(args.peer_json) as f:
            peer = json.load(f)

    def ensemble_consensus_rows():
        for name, k, std in CONSENSUS_DATA:
            for seed in seeds:
                bench.emit(run_ensemble_consensus(name, k, std, seed, dump_dir=args.dump_ensembles, peer=peer))

    if args.ensemble_consensus_only:
        bench.emit(bench.environment("consensus.py", ("numpy", "scipy", "jax", "sklearn")))
        ensemble_consensus_rows()
        return
    if args.aspect_bayes_only:
        bench.emit(bench.environment("consensus.py", ("numpy", "scipy", "jax", "numpyro", "sklearn")))
        for name, k in (("iris", 3), ("biopsy", 2)):
            bench.emit(run_aspect_bayes(name, k))
        return
    sizes = args.n or (QUICK_N if args.quick else FULL_N)
    N = args.n_partitions or (20 if args.quick else 150)
    it = args.max_iter or (10 if args.quick else 20)
    dense_max = args.dense_max if args.dense_max is not None else (4000 if args.quick else 10_000)
    bench.emit(bench.environment("consensus.py", ("numpy", "scipy", "jax", "sklearn")))
    if args.ppc_only:
        bench.emit(run_ppc_dense(2000 if args.quick else 5000, max_iter=it))
        for n in ([2000, 4000] if args.quick else [5000, 20_000, 50_000]):
            bench.emit(run_ppc_scaling(n, max_iter=it))
        return
    if not args.validity_only:
        rows = []
        for rule in args.rules:
            for n in sizes:
                if rule == "sqrt" and args.sqrt_max_n is not None and n > args.sqrt_max_n:
                    continue
                if args.peer_all_max <= 0:
                    peer = (0, 0)
                elif n <= args.peer_all_max:
                    peer = (N, N)
                else:
                    peer = (args.peer_subset, args.peer_pp)
                rows.append(run_one(n, rule, N, it, dense_max, peer_subset=peer))
                bench.emit(rows[-1])
        bench.emit(fit_slopes(rows))
        if args.peer_all_max > 0:
            bench.emit({"bench": "consensus", "kind": "point", "note": PEER_NOTE.format(
                it=it, all_max=args.peer_all_max, subset=args.peer_subset, pp=args.peer_pp)})
        if args.scale_only:
            return
    bench.emit(run_validity(2000 if args.quick else 10_000, n_partitions=20 if args.quick else 50,
                            max_iter=it))
    bench.emit(run_anmi(20_000 if args.quick else 100_000, n_partitions=150))
    if not args.validity_only:
        bench.emit(run_ppc_dense(2000 if args.quick else 5000, max_iter=it))
        for n in ([2000, 4000] if args.quick else [5000, 20_000, 50_000]):
            bench.emit(run_ppc_scaling(n, max_iter=it))
    for name, k in (("iris", 3), ("biopsy", 2)):
        bench.emit(run_aspect_bayes(name, k))
    ensemble_consensus_rows()


if __name__ == "__main__":
    main()
