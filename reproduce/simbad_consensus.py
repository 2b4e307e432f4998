"""SIMBAD deliverable D2.3 (Fred, Figueiredo et al.): extracting and choosing a consensus
partition from the co-association matrix -- the DR-EAC paper's Table 2 (embeddings of C), the
scalability paper's Table I (Lourenço, Fred & Jain 2010), the consensus-validation paper's
Table 1 (Duarte et al. 2010), the ACC index's weighting (Duarte et al. 2009) and PPC on a
k-means ensemble (Rota Bulò et al. 2010)."""

from __future__ import annotations

import numpy as np

from bayesclust import (
    coassociation,
    consensus_candidates,
    datasets,
    embed_coassociation,
    embedded_consensus,
    kmeans_ensemble,
    linkage_consensus,
    metrics,
    ppc,
    select_consensus,
)
from reproduce._common import EXTRACTORS, row, seeds, within_abs
from reproduce.references import dreac as dreac_ref

PAPER = "Fred, Figueiredo et al. (SIMBAD D2.3): consensus extraction and selection"
DESCRIPTION = ("Extracting and choosing the consensus partition of an ensemble in SIMBAD deliverable "
               "D2.3: DR-EAC's Table 2 (the co-association matrix embedded by Isomap or Laplacian "
               "eigenmaps, mean CI over eight extractors), the scalability paper's Table I "
               "(Lourenço, Fred & Jain 2010: EAC average link per K range), the consensus-validation "
               "paper's Table 1 (Duarte et al. 2010: the partition each validity index selects), the "
               "ACC index's size weighting (Duarte et al. 2009) and PPC on a k-means ensemble "
               "(Rota Bulò et al. 2010). The tolerances are the test suite's.")

#: DR-EAC, Table 2, "average" rows: mean CI (%) over the eight extractors.
DREAC_TABLE2 = {("iris", "EAC"): 75.62, ("iris", "isomap"): 91.17, ("iris", "laplacian"): 90.67,
                ("biopsy", "EAC"): 62.12, ("biopsy", "isomap"): 92.22, ("biopsy", "laplacian"): 64.79}
#: Lourenço, Fred & Jain (2010), Table I: CI of EAC average link at the true K per K range
#: (Var, (A) sqrt rule, (B) linear rule; round-half-up ranges).
SCALABILITY_TABLE_I = {"iris": (3, [((10, 20), 0.91), ((6, 12), 0.84), ((3, 8), 0.84)]),
                       "biopsy": (2, [((10, 30), 0.97), ((13, 26), 0.97), ((14, 34), 0.97)])}
#: Duarte et al. (2010), Table 1, Iris, ensemble method A: NMI of the partition each index selects.
VALIDATION_TABLE1_IRIS_A = {
    "L_o": ("likelihood", "data", 0.81), "S_o": ("silhouette", "data", 0.81),
    "D_o": ("dunn", "data", 0.71), "DB_o": ("davies_bouldin", "data", 0.71),
    "L_s": ("likelihood", "similarity", 0.81), "S_s": ("silhouette", "similarity", 0.81),
    "D_s": ("dunn", "similarity", 0.71), "DB_s": ("davies_bouldin", "similarity", 0.81),
    "ANMI": ("anmi", "similarity", 0.81), "ACC": ("acc", "similarity", 0.81),
}


def dreac_table2(name: str, ensembles) -> dict[str, list[float]]:
    """Per ensemble (200 k-means partitions, K in DR-EAC's rule): the mean CI (%) over the eight
    extractors of 1 - C ("EAC": seven linkages, k-means on the rows of C) and of C's Isomap and
    Laplacian-eigenmap (K - 1 dimensions) embeddings."""
    X, y = datasets.load(name)
    K = len(np.unique(y))
    out = {"EAC": [], "isomap": [], "laplacian": []}
    for seed in ensembles:
        C = coassociation(kmeans_ensemble(seed, X, 200, k_rule="penca"))
        Cd = C.toarray()
        out["EAC"].append(100 * np.mean([metrics.consistency_index(
            y, embedded_consensus(Cd, K, "kmeans", seed) if ex == "kmeans" else linkage_consensus(C, ex, K).labels)
            for ex in EXTRACTORS]))
        for method in ("isomap", "laplacian"):
            Y = embed_coassociation(C, method, K - 1 if method == "laplacian" else None).embedding
            out[method].append(100 * np.mean([metrics.consistency_index(y, embedded_consensus(Y, K, ex, seed))
                                              for ex in EXTRACTORS]))
    return out


def _dreac_rows(quick):
    where = "DR-EAC, Table 2 (average row)"
    proto = "200 k-means partitions, K ~ DR-EAC's rule; mean CI % over the 8 extractors"
    dev = {("biopsy", "EAC"): "dreac-table2", ("biopsy", "isomap"): "dreac-isomap-biopsy",
           ("biopsy", "laplacian"): "dreac-laplacian-affinity"}
    # biopsy's Isomap mean swings by 20 points between ensembles (75.7 to 96.4 over seeds 0-3):
    # one ensemble is not a measurement (docs/deviations.md#dreac-isomap-biopsy)
    for name, n in (("iris", 3), ("biopsy", 4)):
        runs = dreac_table2(name, seeds(n, 1, quick))
        for column, label in (("EAC", "1 - C clustered directly"), ("isomap", "Isomap of C"),
                              ("laplacian", "Laplacian eigenmaps of C, K - 1 dimensions")):
            paper = DREAC_TABLE2[name, column]
            yield row(id=f"dreac-t2-{name}-{column.lower()}", paper=PAPER, where=where, dataset=name,
                      protocol=f"{label}; {proto}", paper_value=paper, values=runs[column], statistic="mean",
                      tolerance="±5 (mean)", ok=within_abs(paper, 5, "mean"),
                      deviation=dev.get((name, column), "dreac-table2"))
        if name == "biopsy":  # the second derivation, written from the paper alone (same seeds)
            X, y = datasets.load_biopsy()
            vals = [dreac_ref.dreac_isomap_ci(X, y, seed, "relocate")["mean"] for seed in seeds(4, 1, quick)]
            yield row(id="dreac-t2-biopsy-isomap-reference", paper=PAPER, where=where, dataset="biopsy",
                      protocol="reproduce/references/dreac.py: own k-means ensemble (emptied clusters "
                      f"relocated), Isomap of 1 - C (k and dimension by residual variance); {proto}",
                      paper_value=92.22, values=vals, statistic="mean", tolerance="±5 (mean)",
                      ok=within_abs(92.22, 5, "mean"), deviation="dreac-isomap-biopsy")
        if name == "biopsy":  # what the paper's LE column matches: a 0/1 10-NN graph of 1 - C
            X, y = datasets.load_biopsy()
            vals = []
            for seed in seeds(1, 1, quick):
                C = coassociation(kmeans_ensemble(seed, X, 200, k_rule="penca"))
                Y = embed_coassociation(C, "laplacian", n_neighbors=10).embedding
                vals.append(100 * np.mean([metrics.consistency_index(y, embedded_consensus(Y, 2, ex, seed))
                                           for ex in EXTRACTORS]))
            yield row(id="dreac-t2-biopsy-laplacian-knn", paper=PAPER, where=where, dataset="biopsy",
                      protocol=f"Laplacian eigenmaps of a 0/1 10-NN graph of 1 - C, eigengap dimension; {proto}",
                      paper_value=64.79, values=vals, statistic="mean", tolerance="±5 (mean)",
                      ok=within_abs(64.79, 5, "mean"), deviation="dreac-laplacian-affinity")


def _scalability_rows(quick):
    where = "Lourenço, Fred & Jain (2010), Table I"
    for name, (K, cols) in SCALABILITY_TABLE_I.items():
        X, y = datasets.load(name)
        for col, ((lo, hi), paper) in zip(("var", "a", "b"), cols):
            cis = [metrics.consistency_index(y, linkage_consensus(
                coassociation(kmeans_ensemble(s, X, 150, n_clusters_range=(lo, hi))), "average", K).labels)
                for s in seeds(5, 2, quick)]
            if name == "iris" and col != "var":
                tol, ok, dev = f"{paper - 0.04:.2f} to {paper + 0.07:.2f} (mean)", \
                    (lambda s, p=paper: p - 0.04 <= s["mean"] <= p + 0.07), "eac-scalability-iris"
            else:
                tol, ok, dev = "±0.04 (mean)", within_abs(paper, 0.04, "mean"), None
            yield row(id=f"scal-t1-{name}-{col}", paper=PAPER, where=where, dataset=name,
                      protocol=f"EAC average link at the true K, 150 k-means partitions with K in [{lo}, {hi}]",
                      paper_value=paper, values=cis, statistic="mean", tolerance=tol, ok=ok, deviation=dev)


def _validation_rows(quick):
    """Duarte et al. (2010), Table 1, Iris, method A: 150 k-means partitions at K = 20; candidates
    single, average, complete, centroid and Ward link at the true K."""
    where = "Duarte et al. (2010), Table 1 (Iris, method A)"
    X, y = datasets.load_iris()
    chosen = {key: [] for key in VALIDATION_TABLE1_IRIS_A}
    best = []
    for s in seeds(5, 2, quick):
        ens = kmeans_ensemble(s, X, 150, n_clusters_range=(20, 20))
        cands = consensus_candidates(coassociation(ens), ("single", "average", "complete", "centroid", "ward"), [3])
        for key, (crit, space, _) in VALIDATION_TABLE1_IRIS_A.items():
            sel = select_consensus(cands, ens, crit, space=space, X=X)
            chosen[key].append(metrics.nmi(y, sel.labels, average_method="geometric"))
        best.append(max(metrics.nmi(y, lab, average_method="geometric") for lab in cands.labels))
    proto = "150 k-means partitions at K = 20; SL, AL, CL, centroid, Ward cut at K = 3; NMI"
    dev = "consensus-validation-candidates"
    yield row(id="cval-t1-iris-best", paper=PAPER, where=where, dataset="iris",
              protocol=f"best candidate; {proto}", paper_value=0.81, values=best, statistic="mean",
              tolerance="±0.03 (mean)", ok=within_abs(0.81, 0.03, "mean"), deviation=dev)
    for key, (crit, space, paper) in VALIDATION_TABLE1_IRIS_A.items():
        if key == "DB_s":  # it picks single link (.71) in some ensembles, average link (.81) in others
            tol, ok = "0.68 to 0.84 (mean)", (lambda s: 0.68 <= s["mean"] <= 0.84)
        else:
            tol, ok = "±0.03 (mean)", within_abs(paper, 0.03, "mean")
        yield row(id=f"cval-t1-iris-{key.lower().replace('_', '-')}", paper=PAPER, where=where, dataset="iris",
                  protocol=f"the candidate {key} ({crit}, {space} space) selects; {proto}", paper_value=paper,
                  values=chosen[key], statistic="mean", tolerance=tol, ok=ok, deviation=dev)


def _acc_rows(quick):
    """Duarte et al. (2009): ACC weights each cluster by 1 - n_k / n, so an ensemble of refinements
    of a 150/150/200 partition scores 1 - sum (n_k / n)^2 = 0.66 (the paper's half-rings table:
    0.6595 for such a partition)."""
    vals, unweighted = [], []
    for seed in seeds(3, 1, quick):
        rng = np.random.default_rng(seed)
        c = np.repeat([0, 1, 2], [150, 150, 200])
        E = np.array([c * 10 + rng.integers(0, int(rng.integers(1, 8)), c.shape[0]) for _ in range(20)])
        vals.append(metrics.acc(c, E))
        unweighted.append(metrics.acc(c, E, weighted=False))
    yield row(id="acc-halfrings-nested", paper=PAPER, where="Duarte et al. (2009), half-rings table",
              dataset="150/150/200 partition, 20 random refinements",
              protocol=f"ACC with the size weight (without it: {min(unweighted):g}-{max(unweighted):g}); per seed",
              paper_value=0.6595, values=vals, tolerance="= 0.66 = 1 - (0.3² + 0.3² + 0.4²) (to 1e-12)",
              ok=all(abs(v - 0.66) <= 1e-12 for v in vals) and all(u == 1.0 for u in unweighted))


def _ppc_rows(quick):
    X, y = datasets.load_iris()
    cis = [metrics.consistency_index(y, ppc(s, coassociation(kmeans_ensemble(s, X, 150)), 3).labels)
           for s in seeds(5, 1, quick)]
    yield row(id="ppc-fig2-iris-kmeans-ensemble", paper=PAPER, where="PPC (Rota Bulò et al. 2010), Fig. 2",
              dataset="iris", protocol="PPC at K = 3 on C of 150 k-means partitions (C_KM; default K range)",
              paper_value="bar plot (C_KM)", values=cis, tolerance=">= 0.85 on every ensemble",
              ok=min(cis) >= 0.85, deviation="ppc-defaults")


def rows(quick: bool):
    yield from _acc_rows(quick)
    yield from _ppc_rows(quick)
    yield from _validation_rows(quick)
    yield from _scalability_rows(quick)
    yield from _dreac_rows(quick)
