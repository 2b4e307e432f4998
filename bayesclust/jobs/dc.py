"""Discriminative clustering by sampling, by its MAP optimisers and by its hard limit, with peers.

* :func:`fig1_prototypes` -- Kaski et al.'s Fig. 1: CG MAP prototypes of the
  VQ-regularised model on the 2-D toy for several ``lam_vq``.
* :func:`run_compare_dc` -- the job behind ``bayesclust compare --model dc``.

Every method is scored the same way (Kaski, Sinkkonen & Klami 2005, §7.2.1): the
exact log posterior (eq. 9) of the hard Voronoi cells of its prototypes / centres
on the training data, and the test cost (minus eq. 9) of the held-out points'
cells, computed from ``x`` alone.  Like every job, this module sits at the top of
the import graph.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import jax
import numpy as np

from .. import _validation as V
from .. import datasets, metrics
from ..comparison import compare, limit_path
from ..inference.discriminative.dc_anneal import dc_anneal
from ..inference.discriminative.dc_baselines import mda2_em, mog_em
from ..inference.discriminative.dc_map import dc_map
from ..inference.discriminative.dc_nuts import dc_nuts
from ..inference.discriminative.discriminative import (
    dc_voronoi_labels,
    heldout_cost,
    select_width,
    stratified_split,
    width_grid,
)
from ..inference.discriminative.sdc import sdc
from ..inference.hard.hard_dc import hard_dc
from ..inference.hard.kmeans import kmeans
from ..inference.mixtures.dp_mda2_gibbs import gibbs_dp_mda2
from ._common import (
    convergence,
    load_data,
    path_report,
    path_settings,
    path_summary,
    save_figure,
    timed,
    write_outputs,
)

__all__ = ["fig1_prototypes", "run_compare_dc"]

#: Fig. 1 settings (Kaski et al. 2005, §7.1): 6 prototypes, smoothing 0.3, lam_vq 1 standing for infinity.
FIG1_LAM_VQ = (0.0, 0.02, 1.0)
FIG1_N_CLUSTERS = 6
FIG1_SMOOTH_STD = 0.3


def fig1_prototypes(rng_key=0, n_samples: int = 10_000, lam_vqs=FIG1_LAM_VQ, *,
                    n_clusters: int = FIG1_N_CLUSTERS, smooth_std: float = FIG1_SMOOTH_STD,
                    n_init: int = 3) -> dict:
    r"""Prototypes of VQ-regularised DC on the toy of Kaski et al. (2005), Fig. 1.

    For every ``lam_vq`` runs CG MAP (:func:`~bayesclust.inference.discriminative.dc_map.dc_map`)
    of :math:`C_{VQ} = \text{MAP}_{DC} - \lambda_{VQ} E_{VQ}` (eq. 15) from
    ``n_init`` random initialisations and keeps the best smoothed objective
    (best of 3).  At ``lam_vq = 0`` the prototypes line up along the
    vertical axis, the only direction in which the class changes; as ``lam_vq``
    grows they spread isotropically, as k-means' centres do.

    Parameters
    ----------
    rng_key : jax key or int
        Draws the data (:func:`bayesclust.datasets.dc_toy`) and the starts.
    n_samples : int, default 10000
    lam_vqs : sequence of float, default (0, 0.02, 1)
    n_clusters : int, default 6
    smooth_std : float, default 0.3
    n_init : int, default 3
        Random starts per ``lam_vq``.

    Returns
    -------
    dict
        ``"X"`` (n, 2), ``"classes"`` (n,), and ``"fits"``: a list of
        :class:`~bayesclust.inference.discriminative.discriminative.DCResult`, one per ``lam_vq``.

    Examples
    --------
    >>> out = fig1_prototypes(0, 400, (0.0,), n_init=1)
    >>> [r.prototypes.shape for r in out["fits"]]
    [(6, 2)]
    """
    key = V.as_rng_key(rng_key)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    data_key, fit_key = jax.random.split(key)
    X, c = datasets.dc_toy(data_key, n_samples)
    fits = []
    for lam_vq in lam_vqs:
        starts = [dc_map(jax.random.fold_in(fit_key, s), X, c, n_clusters, smooth_std,
                         init="random", lam_vq=lam_vq) for s in range(n_init)]
        fits.append(max(starts, key=lambda r: r.objective))
    return {"X": X, "classes": c, "lam_vq": [float(v) for v in lam_vqs], "fits": fits}


def _standardise(X_train, X_test):
    """z-scores with the training part's statistics (constant features only centred)."""
    mean, sd = X_train.mean(0), X_train.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return (X_train - mean) / sd, (X_test - mean) / sd


def run_compare_dc(
    data: str = "dc-toy",
    out_dir: str | Path = "results",
    *,
    n_clusters: int | None = None,
    seed: int = 0,
    n_samples: int = 2000,
    num_warmup: int = 200,
    num_samples: int = 200,
    num_chains: int = 2,
    plot: bool = True,
    progress_bar: bool = True,
    labels: str | None = None,
) -> dict:
    """Discriminative clustering fitted every way, beside generative peers, on held-out data.

    Splits the data 70/30 (stratified by class) and fits on the training part, with
    the classes as auxiliary data:

    * **CG MAP** -- :func:`~bayesclust.inference.discriminative.dc_map.dc_map` on the
      smoothed posterior (k-means start, at most 29 CG iterations);
    * **SA MAP (hard)** -- simulated annealing on the exact, unsmoothed posterior,
      the ``smooth_std -> 0`` limit of the model;
    * **sDC** -- the older stochastic on-line algorithm;
    * **NUTS** -- the posterior of the prototypes of the smoothed model, summarised
      label-invariantly: distribution of the number of non-empty cells, the VI point
      partition, and the test cost averaged over draws;
    * peers: **k-means (VQ)**, a **mixture of Gaussians** and **MDA2**, scored by
      the same DC cost of their centres' Voronoi cells;
    * **HardDC** (our extension, docs/deviations.md#hard-dc-model) -- DP-means with a class
      term, the ``sigma2 -> 0`` limit of a tempered DP mixture of (point, class) components
      (DP-MDA2), its penalty ``lam`` by farthest-first for ``n_clusters`` and ``xi = 1`` --
      scored like the others by its centres' cells, **and its sampler**
      (:func:`~bayesclust.inference.mixtures.dp_mda2_gibbs.gibbs_dp_mda2` at ``sigma2`` the
      pooled within-cluster variance of HardDC's partition) beside it in
      :func:`~bayesclust.comparison.report.compare`'s report, with the limit path
      (:func:`~bayesclust.comparison.path.limit_path`, ``model="dc"``) annealing the sampler
      onto HardDC.

    Widths (DC smoothing, SA jump, mixture spreads) are chosen by
    :func:`~bayesclust.inference.discriminative.discriminative.select_width` on a split of the
    training part, except on ``dc-toy`` where our Fig. 1 smoothing 0.3 is used
    for CG, sDC and NUTS.  Real data are standardised (z-scores of the training part).
    Writes ``compare_dc.json`` and ``compare_dc.png`` (on ``dc-toy`` with the Fig. 1
    panels: prototypes at ``lam_vq`` = 0, 0.02, 1 on the paper's 10,000-point toy,
    :func:`fig1_prototypes`; then the optimisers' panels, then HardDC against its sampler,
    :func:`bayesclust.plotting.plot_comparison`).

    Parameters
    ----------
    data : str
        ``"dc-toy"`` (Kaski et al. §7.1; ``n_samples`` points), a labelled built-in
        data set (``iris``, ``wine``, ``digits``, ...) or a data file with ``labels``: the
        classes are the auxiliary data.
    out_dir : path
    n_clusters : int, optional
        Number of prototypes (default 6 on ``dc-toy``, else the number of classes).
    seed : int
    n_samples : int
        Size of the toy.
    num_warmup, num_samples, num_chains : int
        NUTS's and the DP-MDA2 Gibbs sampler's settings.
    plot, progress_bar : bool
    labels : str, optional
        The classes of a data file (``--labels``: a column or a file of one label per row,
        :func:`bayesclust.jobs._common.load_data`).

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    n_samples = V.check_int(n_samples, "n_samples", minimum=20)
    if data == "dc-toy":
        if labels is not None:
            raise ValueError("--labels is for a data file: the built-in data set 'dc-toy' carries its own classes")
        X, y = datasets.dc_toy(seed, n_samples)
    elif data in datasets.DATASETS or labels is not None:
        X, y = load_data(data, seed, labels)
    else:
        raise ValueError(f"--model dc needs auxiliary class labels: use 'dc-toy', a labelled "
                         f"built-in data set ({', '.join(datasets.DATASETS)}) or a data file with "
                         f"--labels, got {data!r}")
    classes = np.unique(y, return_inverse=True)[1]
    C = int(classes.max()) + 1
    K = ((FIG1_N_CLUSTERS if data == "dc-toy" else C) if n_clusters is None
         else V.check_int(n_clusters, "--n-clusters", minimum=1))
    key = jax.random.PRNGKey(seed)
    train, test = stratified_split(jax.random.fold_in(key, 0), classes, 0.3)
    if K > len(train):
        raise ValueError(f"--n-clusters must be <= the training-set size ({len(train)}), got {K}")
    Xtr, Xte = X[train], X[test]
    if data != "dc-toy":
        Xtr, Xte = _standardise(Xtr, Xte)
    ctr, cte = classes[train], classes[test]
    grid = width_grid(Xtr, 6)
    sa_steps = 5_000 * K
    sdc_steps = 20_000 * K
    fits = {
        "CG MAP": lambda kk, A, b, s: dc_map(kk, A, b, K, s, n_classes=C).prototypes,
        "SA MAP (exact, hard)": lambda kk, A, b, s: dc_anneal(kk, A, b, K, s, n_iter=sa_steps,
                                                              move="one", n_classes=C).prototypes,
        "sDC": lambda kk, A, b, s: sdc(kk, A, b, K, s, n_iter=sdc_steps, n_classes=C).prototypes,
        "k-means (VQ)": lambda kk, A, b, s: np.asarray(kmeans(kk, A, K).centers),
        "MoG": lambda kk, A, b, s: np.asarray(mog_em(kk, A, K, s).centers),
        "MDA2": lambda kk, A, b, s: np.asarray(mda2_em(kk, A, b, K, s).centers),
    }
    toy_width = {"CG MAP": FIG1_SMOOTH_STD, "sDC": FIG1_SMOOTH_STD}

    def score(name, protos, seconds, width):
        cells = dc_voronoi_labels(Xtr, protos)
        return {
            "method": name, "cells_used": metrics.n_clusters(cells), "width": width,
            "train_log_posterior": metrics.dc_log_posterior(cells, ctr, n_clusters=len(protos),
                                                            n_classes=C),
            "test_cost": heldout_cost(protos, Xte, cte, n_classes=C),
            "test_nmi_to_classes": metrics.nmi(cte, dc_voronoi_labels(Xte, protos)),
            "seconds": seconds,
        }

    rows, prototypes = [], {}
    for i, (name, fit) in enumerate(fits.items()):
        fit_key = jax.random.fold_in(key, 10 + i)
        if name == "k-means (VQ)":
            width, sel_s = None, 0.0
        elif data == "dc-toy" and name in toy_width:
            width, sel_s = toy_width[name], 0.0
        else:
            (width, _), sel_s = timed(functools.partial(select_width, fit_key, fit, Xtr, ctr, grid,
                                                        n_classes=C))
        protos, seconds = timed(functools.partial(fit, jax.random.fold_in(fit_key, 1), Xtr, ctr, width))
        prototypes[name] = protos
        rows.append(score(name, protos, seconds, width) | {"selection_seconds": sel_s})

    smooth = next(r["width"] for r in rows if r["method"] == "CG MAP")
    post = dc_nuts(jax.random.fold_in(key, 99), Xtr, ctr, K, smooth, num_warmup=num_warmup,
                   num_samples=num_samples, num_chains=num_chains, n_classes=C,
                   progress_bar=progress_bar, nuts_kwargs={"max_tree_depth": 6})
    draws = post.params["prototypes"].reshape((-1, K, X.shape[1]))
    draw_costs = np.array([heldout_cost(m, Xte, cte, n_classes=C) for m in draws])
    point = post.point_estimate("vi")
    nuts_row = {
        "method": "NUTS (smoothed posterior)", "cells_used": metrics.n_clusters(point),
        "width": smooth,
        "train_log_posterior": metrics.dc_log_posterior(point, ctr, n_clusters=int(point.max()) + 1,
                                                        n_classes=C),
        "test_cost": float(draw_costs.mean()), "test_nmi_to_classes": None,
        "seconds": post.seconds, "selection_seconds": 0.0,
    }
    rows.insert(3, nuts_row)
    # HardDC and its sampler (the tempered DP-MDA2), and the path from one to the other.
    hard_dc(Xtr, ctr, n_clusters=K)  # compile once, so the timing below is the run alone
    hard, hard_s = timed(lambda: hard_dc(Xtr, ctr, n_clusters=K))
    rows.append(score("HardDC (hard limit)", np.asarray(hard.centers), hard_s, None)
                | {"selection_seconds": 0.0})
    d = X.shape[1]
    sigma2 = max(metrics.sse(Xtr, hard.labels, hard.centers) / (len(Xtr) * d),
                 1e-8 * float(np.var(Xtr)))
    mda2_post = gibbs_dp_mda2(jax.random.fold_in(key, 98), Xtr, ctr, lam=hard.lam, xi=hard.xi,
                              sigma2=sigma2, num_warmup=num_warmup, num_samples=num_samples,
                              num_chains=num_chains, progress_bar=progress_bar)
    with warnings.catch_warnings():
        # The floor is recorded in the JSON and the report instead.
        warnings.simplefilter("ignore", RuntimeWarning)
        path = limit_path(seed, Xtr, model="dc", lam=hard.lam, y=ctr, xi=hard.xi,
                          **path_settings(num_warmup, num_samples, num_chains))
    report = compare(mda2_post, hard, ctr, X=Xtr, y=ctr, path=path)
    mda2_conv = convergence(mda2_post)
    cg_cells = dc_voronoi_labels(Xtr, prototypes["CG MAP"])
    hard_cells = dc_voronoi_labels(Xtr, prototypes["SA MAP (exact, hard)"])
    conv = convergence(post)
    summary = {
        "data": data, "model": "dc", "seed": seed, "n_samples": int(len(X)),
        "n_features": int(X.shape[1]), "n_classes": C, "n_clusters": K,
        "n_train": int(len(train)), "n_test": int(len(test)),
        "standardised": data != "dc-toy",
        "score": "exact DC log posterior (Kaski et al. 2005, eq. 9) of Voronoi cells; test cost = "
                 "minus eq. 9 on the held-out 30 %, cells from x alone (lower is better)",
        "rows": rows,
        "nuts": {
            "num_chains": num_chains, "num_warmup": num_warmup, "num_samples": num_samples,
            "smooth_std": smooth,
            "cells_distribution": {str(kk): v for kk, v in post.k_distribution().items()},
            "rhat_cells": conv["rhat"], "ess_bulk_cells": conv["ess_bulk"],
            "test_cost_sd_over_draws": float(draw_costs.std()),
            "nmi_point_to_cg_map": metrics.nmi(cg_cells, point),
            "nmi_point_to_sa_map": metrics.nmi(hard_cells, point),
        },
        "nmi_cg_map_to_sa_map": metrics.nmi(cg_cells, hard_cells),
        "hard_dc": {"lam": hard.lam, "lam_rule": f"farthest-first, k={K}", "xi": hard.xi,
                    "n0": hard.n0, "n_clusters": hard.n_clusters, "objective": hard.objective,
                    "n_iter": hard.n_iter, "converged": hard.converged, "seconds": hard_s},
        "dp_mda2_gibbs": {
            "sampler": mda2_post.sampler, "sigma2": sigma2, "rho2": 100.0,
            "num_chains": num_chains, "num_warmup": num_warmup, "num_samples": num_samples,
            "k_distribution": {str(kk): v for kk, v in mda2_post.k_distribution().items()},
            "rhat_k": mda2_conv["rhat"], "ess_bulk_k": mda2_conv["ess_bulk"],
            "seconds_including_compile": mda2_post.seconds},
        "comparison": report.to_dict(),
        "limit_path": path_summary(path),
    }
    fig1 = None
    if plot and data == "dc-toy":
        fig1 = fig1_prototypes(seed)
        summary["fig1"] = {
            "lam_vq": fig1["lam_vq"],
            "variance_explained_by_cells": [
                metrics.explained_variance(fig1["X"], r.labels).tolist() for r in fig1["fits"]],
            "log_posterior": [r.log_posterior for r in fig1["fits"]],
        }
    figure = ((lambda f: _figure(Xtr, ctr, prototypes, post, point, rows, fig1, report, f, data))
              if plot else None)
    wrote = write_outputs(summary, out_dir, "compare_dc", figure)
    head = f"{'method':<28}{'cells':>6}{'width':>9}{'train logpost':>15}{'test cost':>11}{'seconds':>9}"
    lines = [f"{data} (seed {seed}): {len(X)} x {X.shape[1]}, {C} classes as auxiliary data, K={K}, "
             f"train {len(train)} / test {len(test)}; test cost = -eq. 9 of Kaski et al. 2005 "
             f"(lower is better)", head]
    for r in rows:
        width = "" if r["width"] is None else f"{r['width']:.3g}"
        lines.append(f"{r['method']:<28}{r['cells_used']:>6}{width:>9}{r['train_log_posterior']:>15.2f}"
                     f"{r['test_cost']:>11.2f}{r['seconds']:>9.2f}")
    lines += [
        f"NUTS: cells {summary['nuts']['cells_distribution']}, NMI(VI point, CG MAP) "
        f"{summary['nuts']['nmi_point_to_cg_map']:.3f}, NMI(VI point, SA MAP) "
        f"{summary['nuts']['nmi_point_to_sa_map']:.3f} (time includes compilation)",
        f"HardDC (lam {hard.lam:.4g}, xi {hard.xi:g}) beside its sampler, the tempered DP-MDA2 "
        f"(sigma2 {sigma2:.4g}), on the training part:",
        str(report),
        path_report(path),
        wrote,
    ]
    summary["report"] = "\n".join(lines)
    return summary


def _figure(X, classes, prototypes, post, point, rows, fig1, report, filename, name):
    from ..plotting import (
        _pyplot,
        plot_co_clustering,
        plot_comparison,
        plot_dc_prototypes,
        plot_method_scores,
        plot_partition,
    )

    plt = _pyplot()
    ncols = 3
    nrows = (2 if fig1 is not None else 1) + 2
    fig, axes = plt.subplots(nrows, ncols, figsize=(13, 4.3 * nrows), squeeze=False)
    if fig1 is not None:
        for ax, lam_vq, r in zip(axes[0], fig1["lam_vq"], fig1["fits"]):
            plot_dc_prototypes(fig1["X"], fig1["classes"], r.prototypes, ax=ax,
                               title=f"Fig. 1: lam_vq = {lam_vq:g}")
    plot_comparison(report, axes=axes[-2:], title=f"{name} (train)")
    ax = axes[-3]
    plot_partition(X, metrics.match_labels(classes, dc_voronoi_labels(X, prototypes["CG MAP"])),
                   prototypes["CG MAP"], ax=ax[0], title=f"{name}: CG MAP cells (train)")
    plot_co_clustering(post.co_clustering(), np.lexsort((classes, point)), ax=ax[1],
                       title="NUTS: posterior co-clustering of cells")
    lo = min(r["test_cost"] for r in rows)
    hi = max(r["test_cost"] for r in rows)
    plot_method_scores(rows, "test_cost", ax=ax[2], xlabel="test cost (-eq. 9, lower is better)",
                       xlim=(lo - 0.1 * (hi - lo + 1), hi + 0.05 * (hi - lo + 1)))
    save_figure(fig, filename)
