"""Matplotlib figures (optional dependency, imported lazily).

Every function takes an optional ``ax`` and returns the axes it drew on, so
figures compose in notebooks.
"""

from __future__ import annotations

import numpy as np

__all__ = ["plot_partition", "plot_lambda_path", "project_2d"]


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
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4))
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
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4))
    ax.loglog(lams, n_clusters, "o-", ms=3)
    ax.set_xlabel("lambda (squared distance)")
    ax.set_ylabel("number of clusters")
    if marker_lam is not None:
        ax.axvline(marker_lam, color="gray", ls="--", lw=1)
    if title:
        ax.set_title(title, fontsize=10)
    return ax
