"""Matplotlib figures (optional dependency, imported lazily).

Every function takes an optional ``ax`` and returns the axes it drew on, so
figures compose in notebooks.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "plot_partition", "plot_lambda_path", "plot_co_clustering", "plot_method_scores",
    "plot_n_clusters_trace", "k_band", "plot_limit_path", "plot_comparison", "plot_dc_prototypes",
    "project_2d", "embed_similarity",
]


def _pyplot():
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
            import os

            if not os.environ.get("DISPLAY"):
                matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plotting needs matplotlib: pip install 'bayesclust[notebooks]'"
        ) from None
    return plt


def _axes(ax):
    """``ax``, or the axes of a new 4 x 4 inch figure (matplotlib imported lazily)."""
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(4, 4))
    return ax


def project_2d(X: np.ndarray, *others: np.ndarray):
    """The data itself when 2-D, else its first two principal components.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Data that defines the projection.
    *others : ndarray, shape (m, d)
        Further points (e.g. centres) projected the same way.

    Returns
    -------
    ndarray, shape (n, 2), or a tuple of such arrays when ``others`` are given.
    """
    X = np.asarray(X, float)
    d = X.shape[1]
    if d == 2:
        project = lambda A: np.asarray(A, float)  # noqa: E731
    elif d == 1:
        project = lambda A: np.column_stack([np.asarray(A, float)[:, 0], np.zeros(len(A))])  # noqa: E731
    else:
        mean = X.mean(0)
        _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
        project = lambda A: (np.asarray(A, float) - mean) @ vt[:2].T  # noqa: E731
    if not others:
        return project(X)
    return (project(X),) + tuple(project(A) for A in others)


def plot_partition(X, labels, centers=None, *, ax=None, title=None):
    """Scatter plot of a partition (2-D data or its first two principal components).

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
    centers : array_like, shape (k, d), optional
        Drawn as black crosses (projected like the data).
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    if centers is None:
        P = project_2d(X)
    else:
        P, Pc = project_2d(X, centers)
    ax.scatter(P[:, 0], P[:, 1], c=np.asarray(labels), cmap="tab20", s=12, linewidths=0)
    if centers is not None:
        ax.scatter(Pc[:, 0], Pc[:, 1], marker="x", c="k", s=60)
    if title:
        ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def plot_co_clustering(psm, order=None, *, ax=None, title="posterior co-clustering (sorted)"):
    """Heat map of a posterior co-clustering (similarity) matrix, rows and columns reordered.

    Parameters
    ----------
    psm : array_like, shape (n, n)
        ``Posterior.co_clustering()``: the posterior probability that two points share a cluster.
    order : array_like of int, shape (n,), optional
        Row/column order, e.g. ``np.argsort(point_partition, kind="stable")`` so that
        clusters show as blocks; default the given order.
    ax : matplotlib Axes, optional
    title : str

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    psm = np.asarray(psm)
    if order is not None:
        psm = psm[np.ix_(order, order)]
    im = ax.imshow(psm, cmap="viridis", vmin=0, vmax=1)
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    return ax


def plot_method_scores(rows, key, *, ax=None, xlabel=None, xlim=None):
    """Horizontal bars of one score per method, first row on top (the compare jobs' last panel).

    Parameters
    ----------
    rows : sequence of dict
        Each with a ``"method"`` name and the score under ``key``.
    key : str
    ax : matplotlib Axes, optional
    xlabel : str, optional
        Default ``key``.
    xlim : (float, float), optional
        Default: matplotlib's.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        If ``rows`` is empty or a row lacks ``"method"`` or ``key``.
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows must hold at least one method's scores, got none")
    for i, r in enumerate(rows):
        missing = [f for f in ("method", key) if f not in r]
        if missing:
            raise ValueError(f"rows[{i}] lacks {missing}: every row needs 'method' and {key!r}")
    ax = _axes(ax)
    ax.barh([r["method"] for r in rows][::-1], [r[key] for r in rows][::-1], color="C0")
    ax.set_xlabel(key if xlabel is None else xlabel)
    ax.tick_params(axis="y", labelsize=8)
    if xlim is not None:
        ax.set_xlim(*xlim)
    return ax


def k_band(n_clusters) -> np.ndarray:
    """The 10 %, 50 % and 90 % quantiles over the chains of the number of clusters, draw by draw.

    Parameters
    ----------
    n_clusters : array_like of int, shape (num_chains, num_samples)
        ``Posterior.n_clusters`` (one chain: shape (num_samples,)).

    Returns
    -------
    ndarray, shape (3, num_samples)
        Low, median and high (NumPy's linear interpolation between the chains).
    """
    ks = np.atleast_2d(np.asarray(n_clusters, float))
    return np.quantile(ks, [0.1, 0.5, 0.9], axis=0)


def plot_n_clusters_trace(n_clusters, *, reference=None, reference_label=None, ax=None,
                          ylabel="number of clusters", title="k trace"):
    """The number of clusters draw by draw: the median over the chains and their 10-90 % band.

    Eight overlaid chains are unreadable; their median and band (:func:`k_band`) show where
    the chains sit and how far they spread, beside a hard limit's number of clusters.

    Parameters
    ----------
    n_clusters : array_like of int, shape (num_chains, num_samples)
        ``Posterior.n_clusters``.
    reference : int, optional
        A number of clusters to draw as a dashed horizontal line (e.g. DP-means').
    reference_label : str, optional
        Its legend entry.
    ax : matplotlib Axes, optional
    ylabel, title : str

    Returns
    -------
    matplotlib Axes
        Its first line is the median; the band is its one ``PolyCollection``.
    """
    ax = _axes(ax)
    ks = np.atleast_2d(np.asarray(n_clusters))
    low, median, high = k_band(ks)
    draws = np.arange(ks.shape[1])
    chains = ks.shape[0]
    ax.plot(draws, median, color="C0", lw=1.0,
            label="k" if chains == 1 else f"median over {chains} chains")
    if chains > 1:
        ax.fill_between(draws, low, high, color="C0", alpha=0.25, lw=0, label="10-90 % of chains")
    if reference is not None:
        ax.axhline(reference, color="k", ls="--", lw=1, label=reference_label)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # k is a count
    ax.set_xlabel("draw")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return ax


#: What a limit path collapsed onto, by its ``stop``.
_PATH_CAPTIONS = {
    "hard": "as {t}/lam -> 0 the sampled posterior collapses\nonto the {hard} partition",
    "lower_objective": "as {t}/lam -> 0 the posterior collapses onto a partition\nof lower "
                       "objective than the {hard} partition",
    "floor": "as {t}/lam -> 0 the posterior had not collapsed\nonto the {hard} partition "
             "at the floor",
    "grid": "the given {t} grid ended before the posterior\ncollapsed onto the {hard} partition",
}


def plot_limit_path(path, *, ax=None, title=None):
    """A :class:`~bayesclust.comparison.path.LimitPath` against ``temperature / lam`` (log scale).

    NMI of the posterior point partition to the hard one and ``P(k = k_hard)`` (left axis),
    the median number of clusters and its 10-90 % band over the draws with the hard
    partition's ``k`` dashed (right axis), the temperature decreasing to the right, and a
    caption from the path's ``stop`` saying what converged to what.  The names (temperature,
    hard limit) are the path's own.

    Parameters
    ----------
    path : LimitPath
        From :func:`bayesclust.limit_path` (any family) or :func:`bayesclust.small_variance_path`.
    ax : matplotlib Axes, optional
    title : str, optional
        Default ``"limit path (<model>)"``.

    Returns
    -------
    matplotlib Axes
        The left axes; the k band is on its twin (``ax.right_ax``).
    """
    ax = _axes(ax)
    t, hard = path.temperature_name, path.hard_name
    ratio = np.asarray(path.relative_temperature)
    ax.semilogx(ratio, path.nmi_point, "o-", ms=4, color="C0", label=f"NMI(point, {hard})")
    ax.semilogx(ratio, path.p_k_hard, "s--", ms=4, color="C1", label=f"P(k = k_{hard})")
    ax.set_xlim(ratio[0] * 2, ratio[-1] / 2)  # decreasing to the right
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel(f"{t} / lam (log scale)")
    right = ax.twinx()
    right.fill_between(ratio, path.k_low, path.k_high, color="C2", alpha=0.2, lw=0,
                       label="k: 10-90 % of draws")
    right.semilogx(ratio, path.k_median, "-", color="C2", lw=1, label="k: median")
    from . import metrics

    # A grouped hard result's labels are per data set; its flat_labels are the rows'.
    labels = getattr(path.hard, "flat_labels", None)
    k_hard = metrics.n_clusters(np.asarray(path.hard.labels if labels is None else labels))
    right.axhline(k_hard, color="C2", ls=":", lw=1, label=f"k_{hard} = {k_hard}")
    right.set_ylabel("number of clusters", color="C2")
    from matplotlib.ticker import MaxNLocator

    right.yaxis.set_major_locator(MaxNLocator(integer=True))
    caption = _PATH_CAPTIONS.get(path.stop, "{t} path ({hard})").format(t=t, hard=hard)
    head = f"limit path ({path.model})" if title is None else title
    ax.set_title(f"{head}\n{caption}", fontsize=9)
    lines, names = ax.get_legend_handles_labels()
    more, more_names = right.get_legend_handles_labels()
    ax.legend(lines + more, names + more_names, fontsize=7, loc="center left")
    ax.right_ax = right
    return ax


def embed_similarity(similarity) -> np.ndarray:
    """A 2-D embedding of points from a similarity in [0, 1] (e.g. a co-clustering matrix).

    Classical multidimensional scaling (Torgerson 1952) of the dissimilarity
    ``1 - similarity``: the doubly centred ``-(1 - S)**2 / 2`` projected on its two leading
    eigenvectors, scaled by the square roots of their eigenvalues (negative ones as 0).

    Parameters
    ----------
    similarity : array_like, shape (n, n)

    Returns
    -------
    ndarray, shape (n, 2)
    """
    S = np.asarray(similarity, float)
    n = S.shape[0]
    D2 = (1.0 - S) ** 2
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ D2 @ J
    vals, vecs = np.linalg.eigh((B + B.T) / 2)
    top = np.argsort(vals)[::-1][:2]
    out = vecs[:, top] * np.sqrt(np.maximum(vals[top], 0.0))
    return np.column_stack([out, np.zeros((n, 2 - out.shape[1]))]) if out.shape[1] < 2 else out


def plot_comparison(report, *, X=None, path=None, title=None, axes=None):
    """The figure of a comparison: both partitions, the posterior, and the limit path.

    Panels: the data (or, without data, a 2-D embedding of the posterior co-clustering,
    :func:`embed_similarity`; the first two principal components when ``d > 2``) coloured by
    the true classes, by the hard partition and by the posterior point partition (colours
    matched to the truth, or to the hard partition, by :func:`bayesclust.metrics.match_labels`);
    the posterior co-clustering matrix sorted by the point partition; the k trace as the
    chains' median and 10-90 % band (:func:`plot_n_clusters_trace`) beside the hard ``k``;
    and, when there is one, the limit path (:func:`plot_limit_path`).

    Parameters
    ----------
    report : ComparisonReport
        From :func:`bayesclust.compare`.
    X : array_like, shape (n, d), optional
        The data to draw; default ``report.X``.
    path : LimitPath, optional
        The limit path to draw; default ``report.path`` (no panel when both are None).
    title : str, optional
        Title of the data panel (default ``"data"``).
    axes : sequence of 6 matplotlib Axes, optional
        Where to draw the six panels (a job adds its own panels to a larger figure);
        default a new figure of two rows of three.

    Returns
    -------
    matplotlib Figure
        The panels' figure (the last panel empty without a path).
    """
    from . import metrics

    plt = _pyplot()
    X = report.X if X is None else np.asarray(X, float)
    path = report.path if path is None else path
    posterior = report.posterior
    point, hard = np.asarray(report.point), np.asarray(report.hard_labels)
    n = len(point)
    if X is not None and len(X) != n:
        raise ValueError(f"X has {len(X)} rows but the report's partitions label {n} points")
    psm = posterior.co_clustering()
    P = embed_similarity(psm) if X is None else X
    truth = report.labels_true
    ref = hard if truth is None else truth
    if axes is None:
        fig, axes = plt.subplots(2, 3, figsize=(13, 8))
        layout = True
    else:
        layout = False
    ax = np.asarray(axes, dtype=object).ravel()
    if len(ax) != 6:
        raise ValueError(f"axes must hold the 6 panels' Axes, got {len(ax)}")
    fig = ax[0].figure
    where = "data" if X is not None else "embedding of the co-clustering"
    name = where if title is None else title
    if truth is not None:
        plot_partition(P, truth, ax=ax[0], title=f"{name}: true classes")
    else:
        plot_partition(P, np.zeros(n, int), ax=ax[0], title=name)
    centers = getattr(report.hard, "cluster_centers_", getattr(report.hard, "centers", None))
    if X is None or centers is None or np.ndim(centers) != 2 or np.shape(centers)[1] != X.shape[1]:
        centers = None  # drawn only beside the data they live in
    plot_partition(P, metrics.match_labels(ref, hard), centers, ax=ax[1],
                   title=f"hard limit: {report.hard_name}, k={metrics.n_clusters(hard)}")
    plot_partition(P, metrics.match_labels(ref, point), ax=ax[2],
                   title=f"sampled: posterior point ({report.loss.upper()} loss), "
                         f"k={metrics.n_clusters(point)}")
    plot_co_clustering(psm, np.argsort(point, kind="stable"), ax=ax[3])
    plot_n_clusters_trace(posterior.n_clusters, reference=metrics.n_clusters(hard),
                          reference_label=f"{report.hard_name} k", ax=ax[4])
    if path is not None:
        plot_limit_path(path, ax=ax[5])
    else:
        ax[5].set_axis_off()
    if layout:
        fig.tight_layout()
    return fig


def plot_lambda_path(lams, n_clusters, *, ax=None, marker_lam=None, title=None):
    """Number of DP-means clusters as a function of lambda (Kulis & Jordan Fig. 2c).

    Parameters
    ----------
    lams : array_like, shape (m,)
    n_clusters : array_like of int, shape (m,)
    ax : matplotlib Axes, optional
    marker_lam : float, optional
        A lambda to mark with a vertical line (e.g. the farthest-first value).
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    ax.loglog(lams, n_clusters, "o-", ms=3)
    ax.set_xlabel("lambda (squared distance)")
    ax.set_ylabel("number of clusters")
    if marker_lam is not None:
        ax.axvline(marker_lam, color="gray", ls="--", lw=1)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_dc_prototypes(X, classes, prototypes, *, ax=None, title=None, grid_size: int = 200):
    """Prototypes of discriminative clustering over the data density (Kaski et al. 2005, Fig. 1).

    Gray shades show the density of ``X`` (a hexagonal histogram), thin lines the
    Voronoi boundaries of the prototypes and open circles the prototypes.
    ``classes`` is accepted for symmetry with the fits and is not drawn (the toy's
    classes change along the vertical axis only).  Two-dimensional data only.

    Parameters
    ----------
    X : array_like, shape (n, 2)
    classes : array_like of int, shape (n,)
    prototypes : array_like, shape (K, 2)
    ax : matplotlib Axes, optional
    title : str, optional
    grid_size : int, default 200
        Resolution of the Voronoi boundary raster.

    Returns
    -------
    matplotlib Axes
    """
    X = np.asarray(X, float)
    m = np.asarray(prototypes, float)
    if X.ndim != 2 or X.shape[1] != 2 or m.ndim != 2 or m.shape[1] != 2:
        raise ValueError(f"plot_dc_prototypes draws 2-D data, got X {X.shape} and prototypes {m.shape}")
    ax = _axes(ax)
    lo, hi = np.percentile(X, 0.5, axis=0), np.percentile(X, 99.5, axis=0)
    ax.hexbin(X[:, 0], X[:, 1], gridsize=30, cmap="Greys", extent=(lo[0], hi[0], lo[1], hi[1]),
              linewidths=0)
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    cells = np.argmin((gx[..., None] - m[:, 0]) ** 2 + (gy[..., None] - m[:, 1]) ** 2, axis=-1)
    ax.contour(gx, gy, cells, levels=np.arange(len(m)) + 0.5, colors="C0", linewidths=0.8)
    ax.scatter(m[:, 0], m[:, 1], s=90, facecolors="none", edgecolors="C3", linewidths=2)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    if title:
        ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


__all__ += ["plot_temporal_coassociation"]


def plot_temporal_coassociation(coassociation, *, time_index=None, n_samples=None, states=None, ax=None,
                                title="time-ordered co-association"):
    """The co-association of a time-ordered sequence in time order: blocks on the diagonal are states.

    Parameters
    ----------
    coassociation : array_like, shape (m, m)
        Co-association of the (kept) samples in time order
        (:attr:`~bayesclust.inference.consensus.temporal.TemporalStatesResult.coassociation`).
    time_index : array_like of int, shape (m,), optional
        The samples' positions in the whole sequence (``DenoiseResult.kept``): the removed
        samples are drawn as blank rows and columns, so that before and after line up.
    n_samples : int, optional
        Length of the whole sequence (default ``time_index[-1] + 1``).
    states : sequence of (start, stop, state), optional
        Runs to mark on the diagonal (positions in the (kept) samples).
    ax : matplotlib axes, optional
    title : str

    Returns
    -------
    matplotlib axes
    """
    C = np.asarray(coassociation, float)
    ax = _axes(ax)
    if time_index is not None:
        t = np.asarray(time_index, int)
        n = int(t[-1]) + 1 if n_samples is None else int(n_samples)
        full = np.full((n, n), np.nan)
        full[np.ix_(t, t)] = C
        pos = t
    else:
        full, pos = C, np.arange(C.shape[0])
    im = ax.imshow(full, cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest")
    for a, b, _ in states or ():
        lo, hi = pos[a] - 0.5, pos[b - 1] + 0.5
        ax.plot([lo, hi, hi, lo, lo], [lo, lo, hi, hi, lo], color="w", lw=1)
    ax.set_xlabel("time (sample)")
    ax.set_ylabel("time (sample)")
    ax.set_title(title)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return ax
