r"""DR-EAC with Isomap, written from the paper: the k-means ensemble, the co-association matrix,
Isomap of :math:`1-C` and the eight consensus extractors, as a plain NumPy/SciPy loop.

Aidos & Fred (2011), "A study of embedding methods under the evidence accumulation framework",
SIMBAD workshop, LNCS: a second, independent derivation of the package's DR-EAC Isomap column.

* §4 step 1: the clustering ensemble, N = 200 k-means partitions, each with k clusters, k an
  integer drawn uniformly from :math:`[k_{min}, k_{min}+20]`,
  :math:`k_{min}=\max\{\sqrt n/2, n/50\}` (the paper does not round; here the ceiling).
  The paper says nothing of k-means' start or of an emptied cluster.  Here: Lloyd's algorithm
  started from k distinct objects drawn at random (one start per partition), and two readings of
  an emptied cluster, ``empty="keep"`` (the cluster stays empty, so the partition has fewer than
  k clusters -- Lloyd's algorithm as written) and ``empty="relocate"`` (the emptied centre moves
  to the object farthest from its own centre, as MATLAB's ``kmeans`` does by default).
* §3, eq. (2): the co-association matrix :math:`C(i,j)=n_{ij}/N`.
* §4 step 2, "co-associations viewed as similarities": the dissimilarity :math:`1-C(i,j)`.
* §2 and §4 step 3: Isomap (Tenenbaum, de Silva & Langford 2000): the k-nearest-neighbour graph
  of :math:`1-C`, its geodesic (shortest-path) distances, classical MDS; the number of neighbours
  chosen to minimise the residual variance :math:`1-R^2(D_G, D_Y)` (Tenenbaum et al. 2000).  The
  paper does not say how the target dimension is chosen; here the smallest dimension whose
  residual variance is below ``rv_tol`` (at most ``max_dim``).  A disconnected graph is joined by
  scikit-learn's rule (the nearest pair of components).
* §4 step 4: the eight extractors on the embedding, all with the true number of clusters:
  k-means and the single, complete, average, Ward, centroid, median and weighted linkages.
* §4.1: the consistency index, the share of objects in matched clusters (the best one-to-one
  matching of consensus clusters to classes).

``python -m reproduce.references.dreac`` prints, on MASS biopsy (the report's
``dreac-t2-biopsy-isomap`` row, paper 92.22), the mean CI (%) over the eight extractors for each
ensemble seed and each reading of the emptied cluster, with the ensembles' mean number of
non-empty clusters.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import pdist

EXTRACTORS = ("kmeans", "single", "complete", "average", "ward", "centroid", "median", "weighted")

# --------------------------------------------------------------------------- §4 step 1


def k_range(n: int) -> tuple[int, int]:
    r"""DR-EAC's rule: :math:`k_{min}=\lceil\max\{\sqrt n/2, n/50\}\rceil`, :math:`k_{max}=k_{min}+20`."""
    kmin = math.ceil(max(math.sqrt(n) / 2, n / 50))
    return kmin, kmin + 20


def lloyd(X: np.ndarray, k: int, rng: np.random.Generator, empty: str, max_iter: int = 300) -> np.ndarray:
    """One run of Lloyd's k-means from k objects drawn without replacement; (n,) labels.

    ``empty="keep"``: a centre that loses all its objects is dropped (its cluster stays empty).
    ``empty="relocate"``: it moves to the object farthest from its assigned centre.
    """
    n = len(X)
    centres = X[rng.choice(n, size=k, replace=False)].astype(float)
    alive = np.ones(k, dtype=bool)
    labels = np.full(n, -1)
    for _ in range(max_iter):
        d = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
        d[:, ~alive] = np.inf
        new = d.argmin(1)  # ties: the lowest index
        counts = np.bincount(new, minlength=k)
        for j in np.flatnonzero(alive & (counts == 0)):
            if empty == "keep":
                alive[j] = False
            else:
                far = d[np.arange(n), new].argmax()
                centres[j] = X[far]
                new[far] = j
                d[far, :] = np.inf
                d[far, j] = 0.0
                counts = np.bincount(new, minlength=k)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in np.flatnonzero(alive):
            centres[j] = X[labels == j].mean(0)
    return labels


def ensemble(X: np.ndarray, seed: int, empty: str, n_partitions: int = 200) -> np.ndarray:
    """(N, n) labels: N k-means partitions, k uniform in DR-EAC's range."""
    rng = np.random.default_rng(seed)
    kmin, kmax = k_range(len(X))
    return np.array([lloyd(X, int(rng.integers(kmin, kmax + 1)), rng, empty) for _ in range(n_partitions)])


# --------------------------------------------------------------------------- §3 eq. (2)


def coassociation(labels: np.ndarray) -> np.ndarray:
    """Eq. (2): C(i, j) = n_ij / N, by a loop over partitions (diagonal 1)."""
    labels = np.asarray(labels)
    C = np.zeros((labels.shape[1],) * 2)
    for part in labels:
        C += part[:, None] == part[None, :]
    return C / len(labels)


# --------------------------------------------------------------------------- §4 step 3, Isomap


def residual_variance(DG: np.ndarray, Y: np.ndarray) -> float:
    """Tenenbaum et al. (2000): 1 - R^2 between geodesic and embedding distances."""
    iu = np.triu_indices(len(Y), 1)
    r = np.corrcoef(DG[iu], pdist(Y))[0, 1]
    return 1.0 - r * r


def isomap(D: np.ndarray, neighbours=range(5, 31, 5), max_dim: int = 10, rv_tol: float = 0.05):
    """Isomap of the dissimilarity D (n, n): (embedding (n, d), k, d, residual variance)."""
    from sklearn.manifold import Isomap

    best = None
    for k in neighbours:
        model = Isomap(n_neighbors=k, n_components=max_dim, metric="precomputed").fit(D)
        Yall, DG = model.embedding_, model.dist_matrix_
        rvs = [residual_variance(DG, Yall[:, :d]) for d in range(1, max_dim + 1)]
        d = next((i + 1 for i, rv in enumerate(rvs) if rv < rv_tol), max_dim)
        if best is None or rvs[d - 1] < best[3]:
            best = (Yall[:, :d], k, d, rvs[d - 1])
    return best


# --------------------------------------------------------------------------- §4 step 4 and §4.1


def extract(Y: np.ndarray, K: int, method: str, seed: int) -> np.ndarray:
    """The consensus partition of the embedding Y with K clusters by one of the 8 extractors."""
    if method == "kmeans":
        from sklearn.cluster import KMeans

        return KMeans(K, n_init=10, random_state=seed).fit_predict(Y)
    return fcluster(linkage(Y, method=method), K, criterion="maxclust") - 1


def consistency_index(y: np.ndarray, labels: np.ndarray) -> float:
    """Share of objects in matched clusters (best one-to-one matching, Hungarian)."""
    _, yi = np.unique(y, return_inverse=True)
    _, li = np.unique(labels, return_inverse=True)
    M = np.zeros((yi.max() + 1, li.max() + 1))
    np.add.at(M, (yi, li), 1)
    r, c = linear_sum_assignment(-M)
    return M[r, c].sum() / len(y)


def dreac_isomap_ci(X: np.ndarray, y: np.ndarray, seed: int, empty: str) -> dict:
    """Mean CI (%) over the 8 extractors on the Isomap of 1 - C, and the per-extractor CIs."""
    labels = ensemble(X, seed, empty)
    C = coassociation(labels)
    Y, k, d, rv = isomap(1.0 - C)
    K = len(np.unique(y))
    cis = {m: 100 * consistency_index(y, extract(Y, K, m, seed)) for m in EXTRACTORS}
    n_clusters = np.mean([len(np.unique(p)) for p in labels])
    return {"mean": float(np.mean(list(cis.values()))), "cis": cis, "k": k, "d": d, "rv": rv,
            "clusters": float(n_clusters)}


def main(argv=None) -> None:
    from bayesclust import datasets

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args(argv)
    X, y = datasets.load_biopsy()
    print(f"biopsy n={len(X)}, k range {k_range(len(X))}; paper (Table 2, EA-Isomap, average) 92.22")
    for empty in ("keep", "relocate"):
        vals = []
        for seed in range(args.seeds):
            t = time.time()
            r = dreac_isomap_ci(X, y, seed, empty)
            vals.append(r["mean"])
            print(f"  empty={empty:8s} seed={seed} mean CI {r['mean']:.2f}  "
                  + " ".join(f"{m}={v:.1f}" for m, v in r["cis"].items())
                  + f"  [isomap k={r['k']} d={r['d']} rv={r['rv']:.3f}; mean clusters/partition "
                  f"{r['clusters']:.2f}; {time.time() - t:.0f}s]", flush=True)
        v = np.array(vals)
        print(f"empty={empty}: median {np.median(v):.2f} (min {v.min():.2f}, max {v.max():.2f}, n={len(v)})",
              flush=True)


if __name__ == "__main__":
    main()
