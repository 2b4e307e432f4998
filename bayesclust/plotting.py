"""Matplotlib figures (optional dependency, imported lazily).

Every function takes an optional ``ax`` and returns the axes it drew on, so
figures compose in notebooks.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "plot_partition", "plot_lambda_path", "plot_co_clustering", "plot_method_scores",
    "plot_n_clusters_trace", "plot_small_variance_path", "plot_dc_prototypes", "project_2d",
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


def plot_n_clusters_trace(n_clusters, *, reference=None, reference_label=None, ax=None,
                          ylabel="number of clusters", title="k trace"):
    """The number of clusters of every draw, one line per chain, beside a hard limit's.

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
    """
    ax = _axes(ax)
    for c, ks in enumerate(np.atleast_2d(n_clusters)):
        ax.plot(ks, lw=0.8, label=f"chain {c}")
    if reference is not None:
        ax.axhline(reference, color="k", ls="--", lw=1, label=reference_label)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # k is a count
    ax.set_xlabel("draw")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return ax


def plot_small_variance_path(path, *, ax=None, title="small-variance path"):
    """A :class:`~bayesclust.comparison.path.LimitPath` of the DP mixture against ``sigma2 / lam`` (log scale).

    NMI of the posterior point partition to DP-means' partition and ``P(k = k_DP-means)``,
    ``sigma2 / lam`` decreasing to the right, with a caption saying what converges to what.

    Parameters
    ----------
    path : LimitPath
        From :func:`bayesclust.small_variance_path`.
    ax : matplotlib Axes, optional
    title : str

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    ratio = np.asarray(path.relative_temperature)
    ax.semilogx(ratio, path.nmi_point, "o-", ms=4, label="NMI(point, DP-means)")
    ax.semilogx(ratio, path.p_k_hard, "s--", ms=4, label="P(k = k_DP-means)")
    ax.set_xlim(ratio[0] * 2, ratio[-1] / 2)  # decreasing to the right
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("sigma2 / lam (log scale; alpha = alpha_from_lam)")
    if path.stop == "lower_objective":
        caption = ("as sigma2/lam -> 0 the posterior collapses onto a\n"
                   "partition of lower objective than DP-means'")
    else:
        caption = ("as sigma2/lam -> 0 the sampled posterior collapses\n"
                   "onto the DP-means partition")
        if path.stop == "floor":
            caption += " (not reached before the floor)"
    ax.set_title(f"{title}\n{caption}", fontsize=9)
    ax.legend(fontsize=8, loc="center left")
    return ax


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
