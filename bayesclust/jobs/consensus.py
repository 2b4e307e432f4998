"""Consensus clustering side by side: PEnCA vs PPC vs evidence accumulation (linkage) vs MM.

* :func:`run_compare_consensus` -- the job behind ``bayesclust compare --model consensus``:
  ensemble -> sparse co-association -> PEnCA (EM and its hard limit), PPC, EAC linkage
  (average/single link, fixed K and lifetime), Topchy et al.'s MM (EM and hard), Strehl &
  Ghosh's CSPA and MCLA (normalised-cut spectral partitioner), scored by
  the consistency index (CI) and NMI against the true classes -- and by the validity indices
  that need no classes (ACC, ANMI, Div1, Div3 against the ensemble; S, D, DB, L on the
  co-association and S, DB on the data); then the candidate partition each index selects
  among five linkages cut at K and at 2..2K clusters, with its CI and NMI; and the mean
  normalised entropy of PPC's and PEnCA's soft memberships per true class (which class is
  the uncertain one).

Like every job, this module sits at the top of the import graph.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _validation as V
from .. import datasets, metrics
from ..inference.consensus.aspect_em import aspect_em
from ..inference.consensus.coassociation import coassociation
from ..inference.consensus.consensus_selection import (
    CRITERIA,
    consensus_candidates,
    select_consensus,
    validity_index,
)
from ..inference.consensus.ensembles import kmeans_ensemble
from ..inference.consensus.hypergraph import cspa, mcla
from ..inference.consensus.linkage import linkage_consensus
from ..inference.consensus.mixture_of_ensembles import mixture_of_ensembles
from ..inference.consensus.ppc import ppc
from ..plotting import project_2d
from ._common import load_labelled, save_figure, timed, write_outputs

__all__ = ["run_compare_consensus", "CONSENSUS_DATA", "PENCA_TABLE1", "validity_indices"]

#: The indices of the index table: (column, criterion, space); ``space=None`` for the indices
#: read against the ensemble, "s" on the co-association, "o" on the data.
INDEX_COLUMNS = (
    ("ACC", "acc", None), ("ANMI", "anmi", None), ("Div1", "div1", None), ("Div3", "div3", None),
    ("S_s", "silhouette", "similarity"), ("D_s", "dunn", "similarity"),
    ("DB_s", "davies_bouldin", "similarity"), ("L_s", "likelihood", "similarity"),
    ("S_o", "silhouette", "data"), ("DB_o", "davies_bouldin", "data"), ("L_o", "likelihood", "data"),
)

#: Lourenco, Fred & Figueiredo (2011), Table 1: (PEnCA CI, MM CI) for the rows available offline.
PENCA_TABLE1 = {
    "iris": (0.920, 0.693),
    "wine-norm": (0.949, 0.590),
    "biopsy": (0.947, 0.764),
    "stars": (0.921, 0.737),
    "cigar": (0.712, 0.812),
    "bars": (0.985, 0.812),
    "half-rings": (1.000, 0.797),
}


def validity_indices(labels, ensemble, C, X) -> dict:
    """Every column of :data:`INDEX_COLUMNS` for one partition (a dict column -> value)."""
    return {col: validity_index(labels, crit, ensemble, coassoc=C, X=X, space=space or "similarity")
            for col, crit, space in INDEX_COLUMNS}


#: The linkages of the validation paper's candidate consensus partitions.
SELECTION_LINKAGES = ("single", "average", "complete", "centroid", "ward")


def _class_means(y, values):
    classes, codes = np.unique(y, return_inverse=True)
    return classes, np.bincount(codes, values) / np.bincount(codes)


def _wine_norm():
    X, y = datasets.load_wine()
    return X / X.std(axis=0), y


#: Data sets accepted by :func:`run_compare_consensus` (``*``: look-alike generators).
CONSENSUS_DATA = {
    "iris": datasets.load_iris,
    "wine": datasets.load_wine,
    "wine-norm": _wine_norm,
    "biopsy": datasets.load_biopsy,
    "breast-cancer": datasets.load_breast_cancer,
    "digits": datasets.load_digits,
    "three-gaussians": lambda seed=0: datasets.three_gaussians(seed),
    "half-rings": lambda seed=0: datasets.make_half_rings(seed),
    "bars": lambda seed=0: datasets.make_bars(seed),
    "cigar": lambda seed=0: datasets.make_cigar(seed),
    "stars": lambda seed=0: datasets.make_stars(seed),
}
_GENERATED = {"three-gaussians", "half-rings", "bars", "cigar", "stars"}


def run_compare_consensus(
    data: str = "iris",
    out_dir: str | Path = "results",
    *,
    seed: int = 0,
    n_partitions: int = 150,
    n_init: int = 10,
    plot: bool = True,
    progress_bar: bool = True,
    labels: str | None = None,
) -> dict:
    """Consensus of one k-means ensemble by PEnCA, EAC linkage and MM, side by side.

    Builds an ensemble of ``n_partitions`` k-means runs with the PEnCA K rule
    (:func:`bayesclust.inference.consensus.ensembles.kmeans_ensemble`), its sparse co-association, and extracts
    a consensus with ``K`` = the true number of classes by: PEnCA (best likelihood of
    ``n_init`` random starts) and its hard limit (classification EM); EAC average and
    single link (merge-order cut at K) and average link with the lifetime criterion; MM
    (Topchy et al.) and its hard (classification EM) version.  Scores: CI (the paper's
    "accuracy") and NMI.  Writes ``compare_consensus.json`` (and ``compare_consensus.png``).

    Parameters
    ----------
    data : str
        One of :data:`CONSENSUS_DATA`: ``"iris"``, ``"wine"``, ``"wine-norm"`` (unit
        variance, PEnCA Table 1), ``"biopsy"`` (MASS, 683 x 9), ``"breast-cancer"`` (WDBC),
        ``"digits"``, and generated sets ``"three-gaussians"`` and the Table 1 look-alikes
        ``"half-rings"``, ``"bars"``, ``"cigar"``, ``"stars"`` (drawn with ``seed``); or a
        CSV / TSV / NPY file with ``labels``.
    out_dir : str or Path
    seed : int
        Seeds the ensemble, the random starts and generated data.
    n_partitions : int, default 150
    n_init : int, default 10
        Random starts of PEnCA and MM.
    plot : bool
        Write the figure (matplotlib, imported lazily).
    progress_bar : bool
        Print one line per finished method (there is no sampler here).
    labels : str, optional
        The true classes of a data file (``--labels``: a column or a file of one label per
        row, :func:`bayesclust.jobs._common.load_data`); ``K`` is their number.

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    seed = V.check_int(seed, "seed", minimum=0)
    n_partitions = V.check_int(n_partitions, "n_partitions", minimum=2)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    X, y = load_labelled(data, CONSENSUS_DATA, lambda name: CONSENSUS_DATA[name](seed) if name in _GENERATED
                         else CONSENSUS_DATA[name](), labels, "consensus")
    n, d = X.shape
    K = metrics.n_clusters(y)

    ens, ens_s = timed(lambda: kmeans_ensemble(seed, X, n_partitions))
    C, co_s = timed(lambda: coassociation(ens))

    def say(msg):
        if progress_bar:
            print(msg, flush=True)

    say(f"ensemble: {n_partitions} k-means partitions, K in [{ens.k_min}, {ens.k_max}] ({ens_s:.2f} s); "
        f"co-association: {C.nnz} pairs, {C.nbytes} bytes ({co_s:.2f} s)")
    # Compile PEnCA's loops once (one iteration), so the timings below are the runs alone.
    _, compile_s = timed(lambda: (aspect_em(seed, C, K, n_init=1, max_iter=1),
                                   aspect_em(seed, C, K, n_init=1, max_iter=1, hard=True),
                                   ppc(seed, C, K, n_init=1, max_iter=1)))
    runs = {}
    runs["PEnCA (EM)"] = timed(lambda: aspect_em(seed, C, K, n_init=n_init))
    runs["PEnCA hard limit (CEM)"] = timed(lambda: aspect_em(seed, C, K, n_init=n_init, hard=True))
    runs["PPC (Baum-Eagon)"] = timed(lambda: ppc(seed, C, K, n_init=n_init))
    runs["EAC average link, K"] = timed(lambda: linkage_consensus(C, "average", K))
    runs["EAC single link, K"] = timed(lambda: linkage_consensus(C, "single", K))
    runs["EAC average link, lifetime"] = timed(lambda: linkage_consensus(C, "average"))
    runs["MM (EM)"] = timed(lambda: mixture_of_ensembles(seed, ens, K, n_init=n_init))
    runs["MM hard (CEM)"] = timed(lambda: mixture_of_ensembles(seed, ens, K, n_init=n_init, hard=True))
    runs["CSPA (Strehl-Ghosh)"] = timed(lambda: cspa(seed, C, K))
    runs["MCLA (Strehl-Ghosh)"] = timed(lambda: mcla(seed, ens, K))
    rows = []
    for name, (res, secs) in runs.items():
        lab = res.labels
        rows.append({"method": name, "k": metrics.n_clusters(lab), "ci": metrics.consistency_index(y, lab),
                     "nmi": metrics.nmi(y, lab), "seconds": secs})
        say(f"  {name}: CI {rows[-1]['ci']:.3f} ({secs:.2f} s)")
    for r, (res, _) in zip(rows, runs.values()):
        r["indices"] = validity_indices(res.labels, ens, C, X)
    # Which consensus to trust without the classes: each index chooses among the linkages of
    # the validation paper (Duarte et al. 2010) cut at the true K -- the paper's question -- and
    # at every k in 2..2K, a harder one.
    selections, best_nmi = [], {}
    for scope, ks in (("K", [K]), ("2..2K", range(2, min(n, 2 * K) + 1))):
        cands = consensus_candidates(C, SELECTION_LINKAGES, ks)
        best_nmi[scope] = max(metrics.nmi(y, lab) for lab in cands.labels)
        for col, crit, space in INDEX_COLUMNS:
            sel = select_consensus(cands, ens, crit, space=space or "similarity", X=X)
            selections.append({"index": col, "candidates": scope, "rule": CRITERIA[crit][0],
                               "method": sel.method, "k": sel.n_clusters,
                               "ci": metrics.consistency_index(y, sel.labels), "nmi": metrics.nmi(y, sel.labels)})
    say(f"  validity indices of {len(rows)} consensus partitions and of "
        f"{len(SELECTION_LINKAGES) * (1 + len(range(2, min(n, 2 * K) + 1)))} candidates")
    penca = runs["PEnCA (EM)"][0]
    # Which class do the soft consensus models hesitate on?  Mean normalised entropy of the
    # memberships per true class (Rota Bulò et al. 2010, Fig. 4 on breast cancer).
    soft = {name: {int(c): float(v) for c, v in zip(*_class_means(y, metrics.membership_entropy(res.memberships)))}
            for name, res in (("PPC", runs["PPC (Baum-Eagon)"][0]), ("PEnCA", penca))}
    paper = PENCA_TABLE1.get(data)
    summary = {
        "data": data, "model": "consensus", "seed": seed, "n_samples": n, "n_features": d,
        "n_true_classes": K,
        "score": "consistency index CI (Hungarian matching) and NMI against the true classes",
        "ensemble": {"n_partitions": n_partitions, "k_min": ens.k_min, "k_max": ens.k_max,
                     "rule": "penca", "seconds": ens_s},
        "coassociation": {"nnz_upper": C.nnz, "bytes": C.nbytes, "seconds": co_s,
                          "density": 2 * C.nnz / (n * n)},
        "penca": {"objective": penca.objective, "weights": penca.weights,
                  "n_iter": penca.n_iter, "restart_objectives": penca.restart_objectives,
                  "compile_seconds": compile_s,
                  "objective_trace": penca.objective_trace},
        "rows": rows,
        "entropy_by_class": soft,
        "selection": {"linkages": list(SELECTION_LINKAGES), "k_range": [2, min(n, 2 * K)],
                      "best_nmi": best_nmi, "chosen": selections},
        "paper": None if paper is None else {"PEnCA": paper[0], "MM": paper[1],
                                             "look_alike": data in _GENERATED},
    }
    figure = (lambda f: _figure(X, y, C, penca, rows, f)) if plot else None
    wrote = write_outputs(summary, out_dir, "compare_consensus", figure)
    ref = ""
    if paper is not None:
        ref = (f"; PEnCA Table 1: PEnCA {paper[0]:.3f}, MM {paper[1]:.3f}"
               + (" (look-alike data, not the paper's)" if data in _GENERATED else ""))
    lines = [f"{data} (seed {seed}): {n} x {d}, {K} classes; ensemble of {n_partitions} k-means, "
             f"K in [{ens.k_min}, {ens.k_max}]; co-association {C.nnz} pairs, {C.nbytes} bytes{ref}",
             f"{'method':<30}{'k':>4}{'CI':>8}{'NMI':>8}{'seconds':>10}"]
    for r in rows:
        lines.append(f"{r['method']:<30}{r['k']:>4}{r['ci']:>8.3f}{r['nmi']:>8.3f}{r['seconds']:>10.3f}")
    lines.append("mean normalised entropy of the soft memberships per true class: " + "; ".join(
        f"{name} " + ", ".join(f"class {c} {v:.3f}" for c, v in by.items()) for name, by in soft.items()))
    cols = [c for c, _, _ in INDEX_COLUMNS]
    lines.append("")
    lines.append("validity indices (no classes used; ACC, ANMI, S, D, L: higher is better; DB lower; "
                 "Div: the median is chosen)")
    width = {c: 9 if c.startswith("L_") else 7 for c in cols}  # log L is in the hundreds

    def cell(c, v):
        return f"{v:>{width[c]}.1f}" if c.startswith("L_") else f"{v:>{width[c]}.3f}"

    lines.append(f"{'method':<30}" + "".join(f"{c:>{width[c]}}" for c in cols))
    for r in rows:
        lines.append(f"{r['method']:<30}" + "".join(cell(c, r['indices'][c]) for c in cols))
    lines.append("")
    lines.append(f"which consensus each index selects among {', '.join(SELECTION_LINKAGES)} link, "
                 f"at k = K = {K} (best NMI available {best_nmi['K']:.3f}) and at k = 2..{min(n, 2 * K)} "
                 f"(best {best_nmi['2..2K']:.3f})")
    chosen = {(r["index"], r["candidates"]): r for r in selections}
    lines.append(f"{'index':<8}{'rule':>8}{'linkage':>10}{'CI':>7}{'NMI':>7}   {'linkage':>9}{'k':>3}{'CI':>7}{'NMI':>7}")
    for col, _, _ in INDEX_COLUMNS:
        a, b = chosen[(col, "K")], chosen[(col, "2..2K")]
        lines.append(f"{col:<8}{a['rule']:>8}{a['method']:>10}{a['ci']:>7.3f}{a['nmi']:>7.3f}   "
                     f"{b['method']:>9}{b['k']:>3}{b['ci']:>7.3f}{b['nmi']:>7.3f}")
    lines.append(wrote)
    summary["report"] = "\n".join(lines)
    return summary


def _figure(X, y, C, penca, rows, filename):
    from ..plotting import _pyplot, plot_method_scores, plot_partition

    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 9))
    ax = axes.ravel()
    X2 = project_2d(X)
    plot_partition(X2, metrics.match_labels(y, penca.labels), ax=ax[0],
                   title="PEnCA consensus" + (" (first 2 PCs)" if X.shape[1] > 2 else ""))
    order = np.lexsort((-penca.memberships.max(1), penca.labels))
    if C.n_samples <= 3000:
        im = ax[1].imshow(C.toarray()[np.ix_(order, order)], cmap="viridis", vmin=0, vmax=1)
        fig.colorbar(im, ax=ax[1], fraction=0.046)
    ax[1].set_title("co-association (sorted by PEnCA)", fontsize=10)
    ax[1].set_xticks([])
    ax[1].set_yticks([])
    V = penca.memberships[order]
    bottom = np.zeros(V.shape[0])
    for r in range(V.shape[1]):
        ax[2].bar(np.arange(V.shape[0]), V[:, r], bottom=bottom, width=1.0, label=f"aspect {r}")
        bottom += V[:, r]
    ax[2].set_title("soft memberships V", fontsize=10)
    ax[2].set_xlabel("object (sorted)")
    ax[2].legend(fontsize=8)
    plot_method_scores(rows, "ci", ax=ax[3], xlabel="consistency index CI", xlim=(0, 1))
    save_figure(fig, filename)
