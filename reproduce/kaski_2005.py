"""Kaski, Sinkkonen & Klami (2005), *Discriminative clustering*: the toy demonstration of §7.1
and Fig. 1 (plain DC against its VQ-regularised limit, eq. 15), on the stand-in generator
``datasets.dc_toy`` (docs/deviations.md#dc-toy-design).  Tables 1-2 need Landsat, Letter and
TIMIT (TIMIT is licensed), so they have no row."""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from bayesclust import metrics
from reproduce._common import dc_map, dc_toy, row, seeds

PAPER = "Kaski, Sinkkonen & Klami (2005)"
DESCRIPTION = ("Discriminative clustering (Kaski, Sinkkonen & Klami 2005, *Discriminative "
               "clustering*, Neurocomputing 69): §7.1 / Fig. 1, the toy whose class changes only "
               "vertically, fitted by CG MAP of the smoothed objective (6 prototypes, smoothing 0.3, "
               "k-means start) with lambda_VQ = 0 (plain DC) and 1 (standing for infinity). The paper "
               "states Fig. 1 in words; the tolerances are the test suite's.")


def _distortion(X, fit) -> float:
    return float(np.sum((X - fit.prototypes[fit.labels]) ** 2))


def fig1_runs(runs) -> dict[str, list[float]]:
    """Per toy draw (10,000 points): the prototypes' vertical / horizontal spread for plain DC and
    for lambda_VQ = 1, the log posterior (eq. 9) gain of plain DC over k-means' cells, and the
    VQ fit's distortion and log posterior relative to plain DC's."""
    out = {"plain_ratio": [], "vq_ratio": [], "gain_over_kmeans": [], "distortion_ratio": [], "vq_lp_loss": []}
    for seed in runs:
        X, c = dc_toy(seed, 10_000)
        km = KMeans(6, n_init=1, random_state=seed).fit(X)
        plain = dc_map(seed, X, c, 6, 0.3, init=km.cluster_centers_)
        vq = dc_map(seed, X, c, 6, 0.3, init=km.cluster_centers_, lam_vq=1.0)
        sp, sv = plain.prototypes.std(axis=0), vq.prototypes.std(axis=0)
        out["plain_ratio"].append(float(sp[1] / sp[0]))
        out["vq_ratio"].append(float(sv[1] / sv[0]))
        km_lp = metrics.dc_log_posterior(km.labels_, c, n_clusters=6, n_classes=2)
        out["gain_over_kmeans"].append(float(plain.log_posterior - km_lp))
        out["distortion_ratio"].append(_distortion(X, vq) / _distortion(X, plain))
        out["vq_lp_loss"].append(float(plain.log_posterior - vq.log_posterior))
    return out


def rows(quick: bool):
    r = fig1_runs(seeds(5, 1, quick))
    where, ds, dev = "§7.1, Fig. 1", "dc_toy (10,000 points, 2 classes)", "dc-toy-design"
    proto = "CG MAP, 6 prototypes, smoothing 0.3, k-means start; one toy draw per seed"
    yield row(id="dc-fig1-plain-vertical", paper=PAPER, where=where, dataset=ds,
              protocol=f"plain DC (lambda_VQ = 0): prototypes' vertical / horizontal std; {proto}",
              paper_value="a vertical column", values=r["plain_ratio"], tolerance="> 5 on every draw",
              ok=min(r["plain_ratio"]) > 5, deviation="dc-fig1-local-optimum")
    yield row(id="dc-fig1-vq-isotropic", paper=PAPER, where=where, dataset=ds,
              protocol=f"lambda_VQ = 1 (for infinity): prototypes' vertical / horizontal std; {proto}",
              paper_value="k-means (isotropic)", values=r["vq_ratio"], tolerance="0.5–2 on every draw",
              ok=all(0.5 < v < 2.0 for v in r["vq_ratio"]), deviation=dev)
    yield row(id="dc-fig1-vq-tradeoff", paper=PAPER, where=where, dataset=ds,
              protocol=f"lambda_VQ = 1: distortion / plain DC's (and a lower log posterior, eq. 9); {proto}",
              paper_value="less distortion, worse class prediction", values=r["distortion_ratio"],
              tolerance="< 0.6 and log posterior below plain DC's on every draw",
              ok=max(r["distortion_ratio"]) < 0.6 and min(r["vq_lp_loss"]) > 0, deviation=dev)
    yield row(id="dc-fig1-beats-kmeans", paper=PAPER, where="§7.1 (eq. 9)", dataset=ds,
              protocol=f"plain DC's log posterior (eq. 9) minus that of k-means' cells; {proto}",
              paper_value="> 0 (DC's cells predict the classes)", values=r["gain_over_kmeans"],
              tolerance="> 200 nats on every draw", ok=min(r["gain_over_kmeans"]) > 200, deviation=dev)
