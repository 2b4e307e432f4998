"""The posterior container returned by every bayesclust sampler.

A :class:`Posterior` holds label draws of shape ``(chains, draws, n)`` -- with arbitrary
integer ids per draw, so label switching is expected and harmless -- plus optional
per-draw log-likelihoods, parameter draws and sampler statistics.  Everything it reports
about the partition is label-invariant: the number of clusters, its posterior
distribution, the posterior similarity (co-clustering) matrix, Bayes point estimates of
the partition and convergence diagnostics of label-invariant scalars.  Component-indexed
parameters can be aligned across draws with :meth:`Posterior.relabel`.

Host-side NumPy/SciPy only.  ArviZ (an optional dependency, extra ``notebooks``) is
imported lazily by :meth:`Posterior.diagnostics` and :meth:`Posterior.to_arviz`.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment

from ... import _validation as V
from ..._validation import check_array
from ...metrics import co_clustering_matrix
from ._common import _evenly, label_dtype
from .point_estimates import (
    GREEDY_MAX_DRAWS,
    GREEDY_MAX_N,
    draws_point_estimate,
    partition_point_estimate,
)

__all__ = ["Posterior", "Relabelled", "rank_diagnostics"]

_COMPONENT_KEYS = ("means", "weights")
_LOSSES = ("binder", "vi")
_KERNELS = ("", "native", "xla")  # Posterior.kernels: not recorded, or the code that ran
#: Elements of the label draws a summary touches at once (its temporaries stay this small).
_CHUNK = 1 << 22
_NO_DRAWS = ("this Posterior keeps no label draws (compact(keep_draws='summary'), "
             "e.g. an estimator fitted with keep_draws='summary'); fit with keep_draws='all' "
             "or an int to keep them")


class Relabelled(NamedTuple):
    """Result of :meth:`Posterior.relabel`.

    Attributes
    ----------
    labels : ndarray of int64, shape (chains, draws, n)
        Label draws after relabelling; each draw's cluster matched to reference cluster
        ``r`` carries label ``r`` (see :meth:`Posterior.relabel` for the exact rule).
    params : dict of str -> ndarray
        All parameter draws; component-indexed ones permuted along axis 2, the others
        unchanged (the same arrays).
    permutation : ndarray of int64, shape (chains, draws, K), or None
        ``permutation[c, s, j]`` is the original component placed in slot ``j``; ``None``
        when the posterior has no component-indexed parameters.
    reference : ndarray of int64, shape (n,)
        The reference partition that was matched.
    """

    labels: np.ndarray
    params: dict
    permutation: np.ndarray | None
    reference: np.ndarray


# --------------------------------------------------------------------------- validation


def _as_numeric(x: Any, name: str) -> np.ndarray:
    """Any-rank real array without NaN/inf (the shared boundary check, any ndim)."""
    return check_array(x, name, ndim=None, dtype=None)


def _label_dtype(labels: np.ndarray) -> type:
    if labels.size == 0 or labels.dtype == np.bool_:
        return np.int8
    return label_dtype(int(labels.min()), int(labels.max()))


def _readonly(arr: np.ndarray, copy: bool = True) -> np.ndarray:
    """A read-only array; ``copy=False`` for an array nobody else holds (a fresh ``astype``)."""
    if copy:
        arr = np.array(arr, copy=True)
    arr.setflags(write=False)
    return arr


def _check_keep_draws(keep_draws: Any, name: str = "keep_draws") -> int | str:
    """``keep_draws`` of :meth:`Posterior.compact` checked: ``"all"``, ``"summary"`` or a
    positive int (returned as a Python int); a ``ValueError`` naming ``name`` otherwise."""
    if isinstance(keep_draws, str):
        if keep_draws in ("all", "summary"):
            return keep_draws
    elif isinstance(keep_draws, numbers.Integral) and not isinstance(keep_draws, (bool, np.bool_)):
        if keep_draws >= 1:
            return int(keep_draws)
    raise ValueError(f"{name} must be 'all', 'summary' or a positive int, got {keep_draws!r}")


def _check_draw_dict(d: Any, name: str, lead: tuple, add_chain: bool, exact: bool,
                     copy: bool = True) -> dict:
    if d is None:
        return {}
    if not isinstance(d, Mapping):
        raise TypeError(f"{name} must be a dict of name -> array, got {type(d).__name__}")
    out = {}
    for key, value in d.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"{name} keys must be non-empty strings, got {key!r}")
        arr = _as_numeric(value, f"{name}[{key!r}]")
        given = arr.shape
        if add_chain:
            arr = arr[None]
        if arr.shape[:2] != lead or (exact and arr.ndim != 2):
            want = lead[1:] if add_chain else lead
            parts = [str(v) for v in want] + ([] if exact else ["..."])
            want_txt = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
            raise ValueError(
                f"{name}[{key!r}] must have shape {want_txt} to match the draws of labels, "
                f"got {given}"
            )
        out[key] = _readonly(arr, copy=copy or not isinstance(value, np.ndarray))
    return out


# --------------------------------------------------------------------------- diagnostics


def _import_arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def _arviz_major(az) -> int:
    try:
        return int(str(az.__version__).split(".")[0])
    except ValueError:  # pragma: no cover - odd version strings
        return 0


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise (average ranks, Blom offset 3/8) over all entries."""
    from scipy.stats import norm, rankdata

    r = rankdata(x, method="average").reshape(x.shape)
    return norm.ppf((r - 3.0 / 8.0) / (x.size - 2.0 * 3.0 / 8.0 + 1.0))


def _split_chains(x: np.ndarray) -> np.ndarray:
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, -half:]], axis=0)


def _rank_diagnostics_numpy(x: np.ndarray) -> dict:
    """Rank-normalised split R-hat, bulk and tail ESS (Vehtari et al. 2021) on top of
    ``numpyro.diagnostics.gelman_rubin`` / ``effective_sample_size``; the fallback when
    ArviZ is missing or its API is not understood."""
    from numpyro.diagnostics import effective_sample_size, gelman_rubin

    x = np.asarray(x, dtype=np.float64)
    C, S = x.shape
    const = np.ptp(x) < np.finfo(float).resolution

    def ess(y):
        if np.ptp(y) < np.finfo(float).resolution:
            return float(y.size)
        return float(effective_sample_size(y))

    out = {"rhat": np.nan, "ess_bulk": np.nan, "ess_tail": np.nan}
    if S < 4:
        return out
    if C >= 2 and not const:
        split = _split_chains(x)
        folded = np.abs(split - np.median(split))
        out["rhat"] = float(
            max(gelman_rubin(_z_scale(split)), gelman_rubin(_z_scale(folded)))
        )
    out["ess_bulk"] = float(x.size) if const else ess(_z_scale(_split_chains(x)))
    tails = []
    for p in (0.05, 0.95):
        q = np.quantile(x, p)
        tails.append(ess(_split_chains((x <= q).astype(np.float64))))
    out["ess_tail"] = min(tails)
    return out


def rank_diagnostics(x: np.ndarray) -> tuple[dict, str]:
    """Rank-normalised split R-hat, bulk and tail ESS of one scalar's draws (Vehtari et al. 2021).

    Parameters
    ----------
    x : array_like of float, shape (chains, draws)

    Returns
    -------
    diagnostics : dict
        ``"rhat"``, ``"ess_bulk"``, ``"ess_tail"`` (NaN where undefined: one chain, fewer
        than 4 draws, constant chains).
    backend : {"arviz", "numpyro"}
        ArviZ when it is installed, else the NumPy port of NumPyro's estimators.

    Examples
    --------
    >>> import numpy as np
    >>> diag, backend = rank_diagnostics(np.random.default_rng(0).normal(size=(4, 200)))
    >>> bool(diag["rhat"] < 1.05), backend
    (True, 'arviz')
    """
    x = V.check_kernel_array(x, "x", ndim=2, min_rows=1)
    x = np.asarray(x, dtype=np.float64)
    C, S = x.shape
    try:
        az = _import_arviz()
        out = {"rhat": np.nan, "ess_bulk": np.nan, "ess_tail": np.nan}
        if S >= 4:  # ArviZ's own minimum; below it ArviZ logs a warning and returns NaN
            # Chains that are each constant have no within-chain variance: ArviZ divides
            # by zero there; its inf / NaN is the answer, without the RuntimeWarning.
            with np.errstate(divide="ignore", invalid="ignore"):
                if C >= 2 and np.ptp(x) >= np.finfo(float).resolution:  # constant: NaN, as ArviZ
                    out["rhat"] = float(np.asarray(az.rhat(x, method="rank")))
                out["ess_bulk"] = float(np.asarray(az.ess(x, method="bulk")))
                out["ess_tail"] = float(np.asarray(az.ess(x, method="tail")))
        return out, "arviz"
    except Exception:  # ArviZ missing, or an API it does not understand
        return _rank_diagnostics_numpy(x), "numpyro"


# --------------------------------------------------------------------------- the class


class Posterior:
    """Posterior draws of a clustering: labels, log-likelihoods and parameters.

    The one container returned by every sampler in bayesclust (collapsed Gibbs, NUTS on a
    stick-breaking program, HDP samplers, ...).

    Parameters
    ----------
    labels : array_like of int, shape (chains, draws, n) or (draws, n)
        Cluster label of every point in every draw.  Ids are arbitrary per draw (label
        switching is expected).  A 2-D array is one chain; then every other per-draw array
        below is given *without* the chain axis as well.  When ``params`` holds
        ``"means"`` or ``"weights"``, labels index their component axis and must lie in
        ``[0, K)``.
    log_likelihood : array_like of float, shape (chains, draws), optional
        :math:`\\log p(X \\mid \\text{state})` of each draw.
    params : dict of str -> array_like, shape (chains, draws, ...), optional
        Parameter draws, e.g. ``"means"`` (C, S, K, d) whose axis 2 is indexed by the
        labels, ``"weights"`` (C, S, K), ``"alpha"`` (C, S), ``"sigma2"`` (C, S).
    sample_stats : dict of str -> array_like, shape (chains, draws), optional
        Per-draw sampler statistics (acceptance rate, divergences, ...).
    sampler, model : str
        Free-text names, shown by :meth:`summary` and ``repr``.
    kernels : {"", "native", "xla"}
        Which code produced the draws: ``"native"`` (bayesclust's native CPU
        kernels, :mod:`bayesclust._native`), ``"xla"`` (the pure-XLA path), or
        ``""`` (not recorded).  The two paths draw different (equally valid)
        random streams from the same key, so a draw is reproducible only on the
        path that made it.
    seconds : float, optional
        Wall-clock sampling time.
    group_ids : array_like of int, shape (n,), optional
        For grouped data (HDP samplers): the data set ``0..D-1`` of every point;
        :meth:`labels_by_group` splits the draws by it.
    group_order : array_like, shape (D,), optional
        The caller's identifier of data set ``0..D-1`` (default ``0..D-1``).
    copy : bool, default True
        Store read-only copies of the arrays.  ``False`` takes over NumPy arrays
        that already have the stored dtype (labels of the narrowest integer type that
        holds them, float64 log-likelihood) instead of copying them, and marks them read-only: for
        samplers handing over arrays they built (hundreds of MB for many
        chains); the caller must not keep writing to them.

    Attributes
    ----------
    labels : ndarray of int8, shape (chains, draws, n)
        (int16, int32 or int64 when a label needs it: the narrowest signed integer type
        that holds every label)
    log_likelihood : ndarray of float, shape (chains, draws), or None
    params, sample_stats : dict of str -> ndarray
    sampler, model, kernels : str
    seconds : float or None
    group_ids : ndarray of int64, shape (n,), or None
    group_order : ndarray, shape (D,), or None

    All arrays are stored read-only (as copies unless ``copy=False``), so cached
    results stay valid.

    Raises
    ------
    TypeError
        Non-integer label dtype, non-numeric arrays, wrong argument types.
    ValueError
        Wrong ranks or shapes, NaN/inf, non-integral labels, labels outside the component
        axis, inconsistent component axes of ``"means"`` and ``"weights"``.

    Notes
    -----
    Label-invariant summaries only: :attr:`n_clusters`, :meth:`k_distribution`,
    :meth:`co_clustering` (:math:`P_{ij} = \\frac1{CS} \\sum_{c,s} [z^{(c,s)}_i =
    z^{(c,s)}_j]`), :meth:`point_estimate` (Binder / VI, Dahl 2006; Wade & Ghahramani
    2018) and :meth:`diagnostics` (rank-normalised split R-hat and ESS of the number of
    clusters and of the log-likelihood, Vehtari et al. 2021).  Component parameters are
    not label-invariant; :meth:`relabel` aligns them to a reference partition.

    References
    ----------
    D. B. Dahl, "Model-based clustering for expression data via a Dirichlet process mixture
    model", in *Bayesian Inference for Gene Expression and Proteomics*, CUP (2006).
    S. Wade and Z. Ghahramani, "Bayesian cluster analysis: point estimation and credible
    balls", Bayesian Analysis 13(2) (2018) 559-626.
    A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and P.-C. Buerkner, "Rank-normalization,
    folding, and localization: an improved R-hat for assessing convergence of MCMC",
    Bayesian Analysis 16(2) (2021) 667-718.

    Examples
    --------
    >>> post = Posterior([[0, 0, 1], [1, 1, 0], [0, 0, 0], [2, 2, 5]])
    >>> post.n_chains, post.n_draws, post.n_points
    (1, 4, 3)
    >>> post.k_distribution()
    {1: 0.25, 2: 0.75}
    >>> post.point_estimate()
    array([0, 0, 1])
    """

    def __init__(
        self,
        labels: Any,
        *,
        log_likelihood: Any = None,
        params: Mapping[str, Any] | None = None,
        sample_stats: Mapping[str, Any] | None = None,
        sampler: str = "",
        model: str = "",
        kernels: str = "",
        seconds: float | None = None,
        group_ids: Any = None,
        group_order: Any = None,
        copy: bool = True,
    ):
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"copy must be a bool, got {type(copy).__name__}")
        lab = _as_numeric(labels, "labels")
        if lab.ndim not in (2, 3):
            raise ValueError(
                "labels must be a 3-D array (chains, draws, n) or a 2-D array (draws, n), "
                f"got {lab.ndim}-D with shape {lab.shape}"
            )
        if lab.size == 0:
            raise ValueError(f"labels must not be empty, got shape {lab.shape}")
        if lab.dtype.kind == "f":
            if not np.all(lab == np.round(lab)):
                raise ValueError("labels must contain integer labels, got non-integer values")
        elif lab.dtype.kind not in "iub":
            raise TypeError(f"labels must contain integer labels, got dtype {lab.dtype}")
        add_chain = lab.ndim == 2
        lab = lab.astype(_label_dtype(lab), copy=copy)
        if add_chain:
            lab = lab[None]
        C, S, n = lab.shape
        self._labels = _readonly(lab, copy=False)  # astype above copied, unless copy=False
        self._shape = (C, S, n)

        if log_likelihood is None:
            self._log_likelihood = None
        else:
            ll = _as_numeric(log_likelihood, "log_likelihood")
            if add_chain:
                ll = ll[None]
            if ll.shape != (C, S):
                raise ValueError(
                    f"log_likelihood must have shape {(S,) if add_chain else (C, S)} "
                    f"(one value per draw of labels), got {ll.shape[1:] if add_chain else ll.shape}"
                )
            self._log_likelihood = _readonly(ll.astype(np.float64, copy=copy), copy=False)

        self._params = _check_draw_dict(params, "params", (C, S), add_chain, exact=False,
                                        copy=copy)
        self._sample_stats = _check_draw_dict(
            sample_stats, "sample_stats", (C, S), add_chain, exact=True, copy=copy
        )

        sizes = {}
        for key in _COMPONENT_KEYS:
            if key in self._params:
                arr = self._params[key]
                if arr.ndim < 3:
                    raise ValueError(
                        f"params[{key!r}] must have a component axis: shape (chains, draws, K"
                        f"{', d' if key == 'means' else ''}), got {arr.shape}"
                    )
                sizes[key] = arr.shape[2]
        if len(set(sizes.values())) > 1:
            raise ValueError(
                "params['means'] and params['weights'] must have the same number of "
                f"components (axis 2), got {sizes['means']} and {sizes['weights']}"
            )
        self._n_components = next(iter(sizes.values())) if sizes else None
        if self._n_components is not None:
            K = self._n_components
            if lab.min() < 0 or lab.max() >= K:
                raise ValueError(
                    f"labels must index the component axis of params (size {K}), i.e. lie "
                    f"in [0, {K}), got values in [{lab.min()}, {lab.max()}]"
                )

        for name, value in (("sampler", sampler), ("model", model)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string, got {type(value).__name__}")
        self.sampler, self.model = sampler, model
        if not isinstance(kernels, str):
            raise TypeError(f"kernels must be a string, got {type(kernels).__name__}")
        if kernels not in _KERNELS and not set(kernels.split("+")) <= set(_KERNELS[1:]):
            raise ValueError(f"kernels must be one of {_KERNELS} (or several joined by '+'), "
                             f"got {kernels!r}")
        self.kernels = kernels
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (numbers.Real, np.generic)):
                raise TypeError(f"seconds must be a number or None, got {seconds!r}")
            if not np.isfinite(seconds) or seconds < 0:
                raise ValueError(f"seconds must be a non-negative finite number, got {seconds!r}")
            seconds = float(seconds)
        self.seconds = seconds
        self._set_groups(group_ids, group_order, n)

        self._psm: np.ndarray | None = None
        self._point: dict[tuple[str, str], np.ndarray] = {}
        self._n_clusters: np.ndarray | None = None

    def _set_groups(self, group_ids, group_order, n: int) -> None:
        if group_ids is None:
            if group_order is not None:
                raise ValueError("group_order needs group_ids")
            self.group_ids = self.group_order = None
            return
        gid = _as_numeric(group_ids, "group_ids")
        if gid.shape != (n,):
            raise ValueError(f"group_ids must have shape ({n},) (one per point), got {gid.shape}")
        if gid.dtype.kind not in "iu" or gid.min() < 0:
            raise ValueError("group_ids must be non-negative integers 0..D-1")
        D = int(gid.max()) + 1
        if np.unique(gid).size != D:
            raise ValueError("group_ids must use every data set 0..D-1 (no empty data set)")
        order = np.arange(D) if group_order is None else np.asarray(group_order)
        if order.shape != (D,):
            raise ValueError(f"group_order must have shape ({D},), got {order.shape}")
        self.group_ids = _readonly(gid.astype(np.int64), copy=False)
        self.group_order = _readonly(order.copy())

    def labels_by_group(self, labels: np.ndarray | None = None) -> list[np.ndarray]:
        """Split per-point arrays by data set (grouped posteriors only).

        Parameters
        ----------
        labels : ndarray, shape (..., n), optional
            Default the label draws (chains, draws, n); e.g. ``point_estimate()`` or
            ``params["local_labels"]``.

        Returns
        -------
        list of ndarray, shape (..., n_j)
            One per data set, in :attr:`group_order`; points keep their order.
        """
        if self.group_ids is None:
            raise ValueError("this Posterior has no group_ids (not a grouped-data posterior)")
        arr = self.labels if labels is None else np.asarray(labels)
        if arr.shape[-1] != self.n_points:
            raise ValueError(f"labels must have {self.n_points} points on the last axis, "
                             f"got shape {arr.shape}")
        return [arr[..., self.group_ids == j] for j in range(len(self.group_order))]

    # ----------------------------------------------------------------- basic accessors

    @property
    def labels(self) -> np.ndarray:
        """Label draws of shape (chains, draws, n), the narrowest signed integer type that holds
        them (int8 up to 127 clusters; read-only)."""
        if self._labels is None:
            raise ValueError(_NO_DRAWS)
        return self._labels

    @property
    def log_likelihood(self) -> np.ndarray | None:
        """Per-draw log-likelihood, shape (chains, draws), or None (read-only)."""
        return self._log_likelihood

    @property
    def params(self) -> dict:
        """Parameter draws, a new dict of the stored read-only arrays."""
        return dict(self._params)

    @property
    def sample_stats(self) -> dict:
        """Sampler statistics, a new dict of the stored read-only arrays."""
        return dict(self._sample_stats)

    @property
    def n_chains(self) -> int:
        return self._shape[0]

    @property
    def n_draws(self) -> int:
        """Draws per chain."""
        return self._shape[1]

    @property
    def n_samples(self) -> int:
        """Total number of draws, ``n_chains * n_draws``."""
        return self.n_chains * self.n_draws

    @property
    def n_points(self) -> int:
        return self._shape[2]

    @property
    def n_components(self) -> int | None:
        """Size K of the component axis of ``"means"``/``"weights"``, or None."""
        return self._n_components

    @property
    def pooled_labels(self) -> np.ndarray:
        """Label draws of all chains stacked, shape (chains * draws, n)."""
        return self.labels.reshape(-1, self.n_points)

    # ----------------------------------------------------------------- partition summaries

    @property
    def n_clusters(self) -> np.ndarray:
        """Number of distinct labels (non-empty clusters) per draw, int64 (chains, draws)."""
        if self._n_clusters is None:
            rows = self.pooled_labels
            k = np.empty(rows.shape[0], np.int64)
            low = int(rows.min())
            span = int(rows.max()) - low + 1
            # A few draws at a time (all at once would copy the label draws), counted by
            # one bincount per block when the labels span at most n values, else sorted.
            step = max(1, _CHUNK // max(self.n_points, span, 1))
            for start in range(0, rows.shape[0], step):
                block = rows[start:start + step]
                if span <= self.n_points:
                    keys = block.astype(np.int64)
                    keys += span * np.arange(block.shape[0])[:, None] - low
                    counts = np.bincount(keys.ravel(), minlength=block.shape[0] * span)
                    k[start:start + step] = np.count_nonzero(counts.reshape(-1, span), axis=1)
                else:
                    srt = np.sort(block, axis=-1)
                    k[start:start + step] = 1 + np.count_nonzero(np.diff(srt, axis=-1), axis=-1)
            self._n_clusters = _readonly(k.reshape(self.n_chains, self.n_draws), copy=False)
        return self._n_clusters

    def k_distribution(self) -> dict[int, float]:
        """Posterior distribution of the number of clusters, pooled over chains.

        Returns
        -------
        dict of int -> float
            :math:`\\hat P(k) = \\frac{1}{CS} \\#\\{(c, s) : k^{(c,s)} = k\\}` for every
            observed k, in increasing order of k; the values sum to 1.
        """
        ks, counts = np.unique(self.n_clusters, return_counts=True)
        total = counts.sum()
        return {int(k): float(c / total) for k, c in zip(ks, counts)}

    def co_clustering(self) -> np.ndarray:
        """Posterior similarity matrix of the pooled draws.

        Returns
        -------
        ndarray of float64, shape (n, n)
            :math:`P_{ij} = \\frac{1}{CS} \\sum_{c,s} [z^{(c,s)}_i = z^{(c,s)}_j]`, from
            :func:`bayesclust.metrics.co_clustering_matrix` (computed once and cached; a
            copy is returned).
        """
        if self._psm is None:
            if self._labels is None:
                raise ValueError("co_clustering: " + _NO_DRAWS)
            self._psm = _readonly(co_clustering_matrix(self.pooled_labels))
        return self._psm.copy()

    def point_estimate(self, loss: str = "binder", method: str = "auto") -> np.ndarray:
        """Bayes point estimate of the partition (cached per loss and method).

        Parameters
        ----------
        loss : {"binder", "vi"}, default "binder"
            Posterior expected Binder loss or expected variation of information.
        method : {"auto", "greedy", "draws"}, default "auto"
            ``"greedy"``: the draws, the cuts of the average-linkage tree of
            :meth:`co_clustering` and a local search
            (:func:`bayesclust.inference.mixtures.point_estimates.partition_point_estimate`, called
            with its defaults), which builds the ``n x n`` co-clustering matrix (of
            :data:`~bayesclust.inference.mixtures.point_estimates.GREEDY_MAX_DRAWS` draws spread
            evenly over the chains when there are more).
            ``"draws"``: the best draw, its expected loss from contingency tables
            (:func:`bayesclust.inference.mixtures.point_estimates.draws_point_estimate`), linear in
            ``n``.  ``"auto"``: ``"greedy"`` up to
            :data:`~bayesclust.inference.mixtures.point_estimates.GREEDY_MAX_N` points, else
            ``"draws"``.

        Returns
        -------
        ndarray of int64, shape (n,)
            Labels ``0..k-1`` in order of first appearance.
        """
        if loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
        if method not in ("auto", "greedy", "draws"):
            raise ValueError(f"method must be 'auto', 'greedy' or 'draws', got {method!r}")
        if method == "auto":
            method = "greedy" if self.n_points <= GREEDY_MAX_N else "draws"
        if (loss, method) not in self._point:
            if self._labels is None:
                raise ValueError(f"point_estimate(loss={loss!r}, method={method!r}): " + _NO_DRAWS)
            if method == "draws":
                est = draws_point_estimate(self.pooled_labels, loss=loss)
            elif self.n_samples > GREEDY_MAX_DRAWS:
                # The local search costs O(n S k) per sweep: draws spread evenly over
                # the chains stand in for all of them.
                draws = self.pooled_labels[_evenly(self.n_samples, GREEDY_MAX_DRAWS)]
                est = partition_point_estimate(draws, loss=loss)
            else:
                if self._psm is None:
                    self.co_clustering()
                est = partition_point_estimate(self.pooled_labels, loss=loss, psm=self._psm)
            self._point[loss, method] = _readonly(est)
        return self._point[loss, method].copy()

    # ----------------------------------------------------------------- relabelling

    def _component_param_names(self, component_params: Sequence[str] | None) -> list[str]:
        if component_params is not None:
            if isinstance(component_params, str):
                component_params = [component_params]
            names = list(component_params)
            for name in names:
                if name not in self._params:
                    raise ValueError(f"component_params names an unknown param {name!r}")
                arr = self._params[name]
                if arr.ndim < 3 or arr.shape[2] != self._n_components:
                    raise ValueError(
                        f"params[{name!r}] has shape {arr.shape}; a component-indexed param "
                        f"needs axis 2 of size {self._n_components}"
                    )
            return names
        if self._n_components is None:
            return []
        return [
            name
            for name, arr in self._params.items()
            if name in _COMPONENT_KEYS or (arr.ndim >= 3 and arr.shape[2] == self._n_components)
        ]

    def relabel(
        self, reference: Any = None, *, component_params: Sequence[str] | None = None
    ) -> Relabelled:
        """Undo label switching: align every draw's clusters with a reference partition.

        Parameters
        ----------
        reference : array_like of int, shape (n,), optional
            Reference partition (any integer ids); default the Binder point estimate
            :meth:`point_estimate`.  Its clusters are numbered ``r = 0..R-1`` in increasing
            order of their ids.
        component_params : sequence of str, optional
            Names of the component-indexed params to permute.  Default: ``"means"``,
            ``"weights"`` and every param whose axis 2 has the size K of their component
            axis.  Requires ``"means"`` or ``"weights"`` to define K.

        Returns
        -------
        Relabelled
            ``(labels, params, permutation, reference)``; see :class:`Relabelled`.

        Notes
        -----
        For each draw, with components :math:`j` (the K slots of the component params, or
        the distinct labels of the draw when there are none) and contingency table
        :math:`N_{jr} = \\#\\{i : z_i = j, \\text{ref}_i = r\\}`, the Hungarian algorithm
        (``scipy.optimize.linear_sum_assignment``) finds the one-to-one matching of
        components to reference clusters maximising the total overlap
        :math:`\\sum N_{j\\,\\sigma(j)}` -- the pivot-based "equivalence classes
        representatives" relabelling of Papastamoulis & Iliopoulos (2010), with the point
        estimate as the pivot.  Component matched to reference cluster ``r`` goes to slot
        ``r``; unmatched components (empty ones, or surplus clusters) take the following
        slots ``R, R+1, ...`` ordered by decreasing size in the draw, then by decreasing
        weight (when ``"weights"`` exists), then by original index.  Labels are rewritten
        to the slots, so they keep indexing the permuted component axis.  If K < R (fewer
        components than reference clusters) every component is matched and the matched
        components fill slots ``0..K-1`` in increasing order of their reference cluster.
        Without component params, labels are simply the matched reference cluster ``r`` or
        ``R, R+1, ...`` for unmatched clusters (so a draw with fewer clusters than the
        reference leaves some of ``0..R-1`` unused).

        Component parameters are not identifiable across draws without this step;
        everything else in :class:`Posterior` is label-invariant and does not need it.

        References
        ----------
        M. Stephens, "Dealing with label switching in mixture models", JRSS B 62(4) (2000)
        795-809.
        P. Papastamoulis and G. Iliopoulos, "An artificial allocations based solution to the
        label switching problem in Bayesian analysis of mixtures of distributions", Journal
        of Computational and Graphical Statistics 19(2) (2010) 313-331.
        H. W. Kuhn, "The Hungarian method for the assignment problem", Naval Research
        Logistics Quarterly 2 (1955) 83-97.

        Examples
        --------
        >>> post = Posterior([[0, 0, 1], [1, 1, 0]],
        ...                  params={"means": [[[0.0], [5.0]], [[5.0], [0.0]]]})
        >>> out = post.relabel([0, 0, 1])
        >>> out.labels[0]
        array([[0, 0, 1],
               [0, 0, 1]])
        >>> out.params["means"][0, :, :, 0]
        array([[0., 5.],
               [0., 5.]])
        """
        n = self.n_points
        if reference is None:
            ref = self.point_estimate("binder")
        else:
            from bayesclust._validation import check_labels

            ref = check_labels(reference, "reference", n_samples=n)
        _, r_idx = np.unique(ref, return_inverse=True)
        r_idx = r_idx.reshape(-1)
        R = int(r_idx.max()) + 1
        names = self._component_param_names(component_params)

        draws = self.pooled_labels
        T = draws.shape[0]
        K = self._n_components
        if K is None:
            # components = distinct labels of each draw, numbered by sorted id
            srt = np.sort(draws, axis=1)
            new = np.concatenate([np.ones((T, 1), bool), np.diff(srt, axis=1) != 0], axis=1)
            comp_ids = np.cumsum(new, axis=1) - 1  # index among the draw's sorted unique ids
            order = np.argsort(draws, axis=1, kind="stable")
            # int64: a draw of int8 labels may hold 256 distinct ones
            comp = np.empty(draws.shape, np.int64)
            np.put_along_axis(comp, order, comp_ids, axis=1)
            Kmax = int(comp.max()) + 1
        else:
            comp = draws
            Kmax = K
        flat = (np.arange(T)[:, None] * Kmax + comp) * R + r_idx[None, :]
        tables = np.bincount(flat.ravel(), minlength=T * Kmax * R).reshape(T, Kmax, R)
        sizes = tables.sum(axis=2)  # (T, Kmax)
        weights = self._params.get("weights")
        weights = None if weights is None or K is None else weights.reshape(T, K)

        slot_of = np.empty((T, Kmax), dtype=np.int64)  # component -> new slot
        perm = np.empty((T, Kmax), dtype=np.int64) if K is not None else None
        for t in range(T):
            k_t = Kmax if K is not None else int(comp[t].max()) + 1
            table = tables[t, :k_t]
            rows, cols = linear_sum_assignment(table, maximize=True)
            matched = np.zeros(k_t, dtype=bool)
            matched[rows] = True
            unmatched = np.flatnonzero(~matched)
            w = -weights[t, unmatched] if weights is not None else np.zeros(unmatched.size)
            unmatched = unmatched[np.lexsort((unmatched, w, -sizes[t, unmatched]))]
            if K is None or k_t >= R:
                slot_of[t, rows] = cols
                slot_of[t, unmatched] = R + np.arange(unmatched.size)
            else:  # every component matched; keep the order of the reference clusters
                slot_of[t, rows[np.argsort(cols)]] = np.arange(rows.size)
            if perm is not None:
                perm[t, slot_of[t, :k_t]] = np.arange(k_t)
        new_labels = np.take_along_axis(slot_of, comp, axis=1)

        C, S = self.n_chains, self.n_draws
        params = dict(self._params)
        if perm is not None:
            perm = perm.reshape(C, S, K)
            for name in names:
                arr = self._params[name]
                idx = perm.reshape(C, S, K, *([1] * (arr.ndim - 3)))
                params[name] = np.take_along_axis(arr, idx, axis=2)
        return Relabelled(
            labels=new_labels.reshape(C, S, n),
            params=params,
            permutation=perm,
            reference=np.asarray(ref, dtype=np.int64).copy(),
        )

    # ----------------------------------------------------------------- storage

    def compact(self, keep_draws: int | str = "all", loss: str = "vi") -> Posterior:
        """A smaller posterior to keep: evenly thinned draws, or their summaries alone.

        The label draws are ``chains x draws x n`` integers, the bulk of a sampled fit and
        of its pickle; a fitted estimator keeps a compacted posterior
        (``keep_draws`` of :class:`~bayesclust.DPGaussianMixture` and
        :class:`~bayesclust.HDPGaussianMixture`).

        Parameters
        ----------
        keep_draws : int, "all" or "summary", default "all"
            ``"all"``: this posterior.  An int ``m``: at most ``m`` draws per chain, spread
            evenly over the chain; every per-draw array is thinned alike, the component
            axis of the component-indexed params (``"means"``) is cut to the slots the
            kept labels use (not when there are ``"weights"``: an empty slot's weight is
            part of the draw), and every summary is that of the kept draws.
            ``"summary"``: no label draws and no per-component or per-point parameters;
            kept are, from every draw, the number of clusters (:attr:`n_clusters`), the
            log-likelihood, the scalar parameters (``alpha``, ``sigma2``, ...) and sample
            statistics, so that :meth:`k_distribution`, :meth:`diagnostics` (R-hat, ESS)
            and :meth:`summary` are those of the whole run; the point estimate of ``loss``
            (its default method); and the co-clustering matrix when ``n`` is at most
            :data:`~bayesclust.inference.mixtures.point_estimates.GREEDY_MAX_N`
            (``8 n**2`` bytes).  :meth:`to_arviz` exports no ``"labels"``; :attr:`labels`
            and what needs the draws raise a ``ValueError``.
        loss : {"binder", "vi"}, default "vi"
            The point estimate ``"summary"`` keeps.

        Returns
        -------
        Posterior
            A new one, sharing no array with this one (but ``"all"``, or an int not below
            :attr:`n_draws`, which return this one).

        Raises
        ------
        ValueError
            ``keep_draws`` neither ``"all"``, ``"summary"`` nor a positive int; an unknown
            ``loss``.

        Examples
        --------
        >>> post = Posterior([[0, 0, 1], [1, 1, 0], [0, 0, 0], [2, 2, 5]])
        >>> post.compact(2).n_draws
        2
        >>> small = post.compact("summary", loss="binder")
        >>> small.point_estimate("binder"), small.k_distribution()
        (array([0, 0, 1]), {1: 0.25, 2: 0.75})
        """
        keep_draws = _check_keep_draws(keep_draws)
        if loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
        if self._labels is None:  # a summary already
            if isinstance(keep_draws, str):
                return self
            raise ValueError(f"compact({keep_draws!r}): " + _NO_DRAWS)
        if keep_draws == "all" or (not isinstance(keep_draws, str) and keep_draws >= self.n_draws):
            return self
        out = object.__new__(Posterior)
        out.__dict__.update(self.__dict__)
        out._psm, out._point, out._n_clusters = None, {}, None
        if keep_draws == "summary":
            method = "greedy" if self.n_points <= GREEDY_MAX_N else "draws"
            point = self.point_estimate(loss)
            out._point = {(loss, method): _readonly(point, copy=False)}
            if self.n_points <= GREEDY_MAX_N:
                out._psm = _readonly(self.co_clustering(), copy=False)
            out._n_clusters = self.n_clusters
            out._labels = None
            out._params = {k: v for k, v in self._params.items() if v.ndim == 2}
            out._n_components = None
            return out
        idx = _evenly(self.n_draws, keep_draws)

        def thin(arr):
            return _readonly(arr[:, idx], copy=False)  # a fancy index: a new array

        out._labels = thin(self._labels)
        out._shape = out._labels.shape
        out._log_likelihood = None if self._log_likelihood is None else thin(self._log_likelihood)
        out._params = {k: thin(v) for k, v in self._params.items()}
        out._sample_stats = {k: thin(v) for k, v in self._sample_stats.items()}
        names = self._component_param_names(None)
        # The component axis is ambiguous when it has n slots (a per-point param looks alike).
        if names and "weights" not in self._params and self._n_components != self.n_points:
            # A sampler's buffer grows to hold its largest draw: slots no kept draw uses
            # are dropped (labels index the slots, so they stay valid).
            used = int(out._labels.max()) + 1
            for name in names:
                out._params[name] = _readonly(out._params[name][:, :, :used].copy(), copy=False)
            out._n_components = used
        return out

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._labels is not None:
            state["_psm"] = None  # a cache of n x n floats, recomputed from the draws
        return state

    # ----------------------------------------------------------------- diagnostics

    def diagnostics(self) -> dict:
        """Convergence diagnostics of label-invariant scalars.

        Returns
        -------
        dict
            ``{"n_clusters": {...}, "log_likelihood": {...}, "backend": str}`` where each
            inner dict has ``"rhat"`` (rank-normalised split R-hat, the maximum of the bulk
            and folded versions), ``"ess_bulk"`` and ``"ess_tail"`` (the minimum of the
            ESS of the 5% and 95% quantile indicators).  ``"log_likelihood"`` appears only
            when the posterior has one.  ``"backend"`` says what computed them:
            ``"arviz"`` (``arviz.rhat`` / ``arviz.ess``) or, when ArviZ is not installed
            or its API is not recognised, ``"numpyro"`` -- the same estimators built on
            ``numpyro.diagnostics.gelman_rubin`` and ``effective_sample_size`` (R-hat
            identical; ESS may differ slightly, numpyro's autocorrelation truncation
            differs from ArviZ's).

        Notes
        -----
        Conventions follow ArviZ: R-hat needs at least 2 chains and every statistic
        needs at least 4 draws per chain, otherwise it is NaN; a quantity constant over
        all draws (e.g. every draw has k = 3) has R-hat NaN (undefined) and ESS equal to
        the number of draws.  The number of clusters is a discrete quantity: ties are
        rank-normalised with average ranks, as in Vehtari et al. (2021).

        References
        ----------
        A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and P.-C. Buerkner,
        "Rank-normalization, folding, and localization: an improved R-hat for assessing
        convergence of MCMC", Bayesian Analysis 16(2) (2021) 667-718.
        """
        out: dict[str, Any] = {}
        backends = set()
        quantities = {"n_clusters": self.n_clusters.astype(np.float64)}
        if self._log_likelihood is not None:
            quantities["log_likelihood"] = self._log_likelihood
        for name, x in quantities.items():
            out[name], backend = rank_diagnostics(x)
            backends.add(backend)
        out["backend"] = "arviz" if backends == {"arviz"} else "numpyro"
        return out

    # ----------------------------------------------------------------- export

    def to_arviz(self):
        """Export to ArviZ.

        Returns
        -------
        arviz.InferenceData (ArviZ < 1.0) or xarray.DataTree (ArviZ >= 1.0)
            Groups:

            * ``posterior``: every param, ``"n_clusters"`` (chain, draw) and ``"labels"``
              (chain, draw, point); component-indexed params (see :meth:`relabel`) get
              the dimension name ``"component"`` on axis 2 (they are *not* relabelled);
            * ``log_likelihood`` (when present): variable ``"log_likelihood"``
              (chain, draw) -- the total per draw, not pointwise;
            * ``sample_stats`` (when present).

            ``sampler``, ``model``, ``kernels`` (when recorded) and ``seconds`` are
            stored as attributes of the posterior group.

        Raises
        ------
        ImportError
            If ArviZ is not installed (``pip install 'bayesclust[notebooks]'``).
        """
        try:
            az = _import_arviz()
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Posterior.to_arviz needs ArviZ: pip install arviz "
                "(or the 'notebooks' extra of bayesclust)"
            ) from exc
        posterior = {name: np.asarray(arr) for name, arr in self._params.items()}
        for reserved in ("n_clusters", "labels"):
            if reserved in posterior:
                raise ValueError(f"params must not use the reserved name {reserved!r}")
        posterior["n_clusters"] = np.asarray(self.n_clusters)
        dims = {}
        if self._labels is not None:
            posterior["labels"] = np.asarray(self._labels)
            dims["labels"] = ["point"]
        coords = {"point": np.arange(self.n_points)}
        names = self._component_param_names(None)
        if names:
            coords["component"] = np.arange(self._n_components)
            for name in names:
                arr = posterior[name]
                dims[name] = ["component"] + [f"{name}_dim_{i}" for i in range(1, arr.ndim - 2)]
        groups = {"posterior": posterior}
        if self._log_likelihood is not None:
            groups["log_likelihood"] = {"log_likelihood": np.asarray(self._log_likelihood)}
        if self._sample_stats:
            groups["sample_stats"] = {k: np.asarray(v) for k, v in self._sample_stats.items()}
        attrs = {"sampler": self.sampler, "model": self.model}
        if self.kernels:
            attrs["kernels"] = self.kernels
        if self.seconds is not None:
            attrs["seconds"] = self.seconds

        if _arviz_major(az) >= 1:  # pragma: no cover - ArviZ 1.x needs Python >= 3.12
            tree = az.from_dict(groups, coords=coords, dims=dims)
            tree["posterior"].attrs.update(attrs)
            return tree
        idata = az.from_dict(**groups, coords=coords, dims=dims)
        idata.posterior.attrs.update(attrs)
        return idata

    # ----------------------------------------------------------------- reporting

    def summary(self) -> dict:
        """Summary of the posterior over partitions.

        Returns
        -------
        dict
            ``sampler``, ``model``, ``kernels``, ``n_chains``, ``n_draws``, ``n_points``,
            ``seconds``,
            ``k_mode`` (most probable number of clusters, the smallest on ties),
            ``k_mean``, ``k_distribution`` (:meth:`k_distribution`) and ``diagnostics``
            (:meth:`diagnostics`: R-hat / ESS of k and of the log-likelihood).
        """
        dist = self.k_distribution()
        ks = np.array(list(dist.keys()))
        ps = np.array(list(dist.values()))
        return {
            "sampler": self.sampler,
            "model": self.model,
            "kernels": self.kernels,
            "n_chains": self.n_chains,
            "n_draws": self.n_draws,
            "n_points": self.n_points,
            "seconds": self.seconds,
            "k_mode": int(ks[np.argmax(ps)]),
            "k_mean": float(self.n_clusters.mean()),
            "k_distribution": dist,
            "diagnostics": self.diagnostics(),
        }

    def __repr__(self) -> str:
        head = ", ".join(
            x
            for x in (
                f"sampler={self.sampler!r}" if self.sampler else "",
                f"model={self.model!r}" if self.model else "",
                f"kernels={self.kernels!r}" if self.kernels else "",
                f"chains={self.n_chains}",
                f"draws={self.n_draws}",
                f"points={self.n_points}",
                f"seconds={self.seconds:.3g}" if self.seconds is not None else "",
            )
            if x
        )
        dist = self.k_distribution()
        top = sorted(dist.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
        ptxt = ", ".join(f"{k}: {p:.3f}" for k, p in sorted(top))
        if len(dist) > len(top):
            ptxt += ", ..."
        lines = [
            f"Posterior({head})",
            f"  k: mode {max(dist, key=lambda k: (dist[k], -k))}, "
            f"mean {self.n_clusters.mean():.3g}; P(k) {{{ptxt}}}",
        ]
        if self._params:
            lines.append(
                "  params: " + ", ".join(f"{k} {v.shape}" for k, v in self._params.items())
            )
        extras = [] if self._labels is not None else ["no label draws (compact('summary'))"]
        if self._log_likelihood is not None:
            extras.append("log_likelihood")
        if self._sample_stats:
            extras.append("sample_stats: " + ", ".join(self._sample_stats))
        if extras:
            lines.append("  " + "; ".join(extras))
        return "\n".join(lines)

    # ----------------------------------------------------------------- combining

    @classmethod
    def concat(cls, posteriors: Sequence[Posterior]) -> Posterior:
        """Concatenate the chains of several posteriors of the same data.

        Parameters
        ----------
        posteriors : sequence of Posterior
            Same number of points and of draws per chain, the same param names with the
            same trailing shapes, the same sample-stat names, and either all or none with
            a log-likelihood.

        Returns
        -------
        Posterior
            Chains in the given order.  ``sampler`` / ``model`` / ``kernels``: the common
            value, or the distinct values joined by ``"+"`` (``kernels``: ``""`` if any is
            unrecorded); ``seconds``: the sum (None if any is None).
        """
        if isinstance(posteriors, Posterior) or not isinstance(posteriors, Sequence):
            raise TypeError("posteriors must be a list of Posterior objects")
        posteriors = list(posteriors)
        if not posteriors:
            raise ValueError("posteriors must contain at least one Posterior")
        for i, p in enumerate(posteriors):
            if not isinstance(p, Posterior):
                raise TypeError(f"posteriors[{i}] is a {type(p).__name__}, not a Posterior")
        first = posteriors[0]
        for i, p in enumerate(posteriors[1:], start=1):
            if p.n_points != first.n_points:
                raise ValueError(
                    f"posteriors[{i}] has {p.n_points} points, posteriors[0] has {first.n_points}"
                )
            if (p.group_ids is None) != (first.group_ids is None) or (
                    p.group_ids is not None and not np.array_equal(p.group_ids, first.group_ids)):
                raise ValueError(f"posteriors[{i}] has different group_ids from posteriors[0]")
            if p.n_draws != first.n_draws:
                raise ValueError(
                    f"posteriors[{i}] has {p.n_draws} draws per chain, posteriors[0] has "
                    f"{first.n_draws}; chains must have equal length"
                )
            if (p.log_likelihood is None) != (first.log_likelihood is None):
                raise ValueError("either all posteriors or none must have a log_likelihood")
            for what, a, b in (("params", p._params, first._params),
                               ("sample_stats", p._sample_stats, first._sample_stats)):
                if set(a) != set(b):
                    raise ValueError(
                        f"posteriors[{i}] has {what} {sorted(a)}, posteriors[0] has {sorted(b)}"
                    )
                for key in a:
                    if a[key].shape[2:] != b[key].shape[2:]:
                        raise ValueError(
                            f"{what}[{key!r}] has per-draw shape {a[key].shape[2:]} in "
                            f"posteriors[{i}] but {b[key].shape[2:]} in posteriors[0]"
                        )

        def join(values):
            uniq = list(dict.fromkeys(values))
            return uniq[0] if len(uniq) == 1 else "+".join(uniq)

        seconds = [p.seconds for p in posteriors]
        return cls(
            np.concatenate([p.labels for p in posteriors], axis=0),
            log_likelihood=None
            if first.log_likelihood is None
            else np.concatenate([p.log_likelihood for p in posteriors], axis=0),
            params={
                k: np.concatenate([p._params[k] for p in posteriors], axis=0)
                for k in first._params
            },
            sample_stats={
                k: np.concatenate([p._sample_stats[k] for p in posteriors], axis=0)
                for k in first._sample_stats
            },
            sampler=join([p.sampler for p in posteriors]),
            model=join([p.model for p in posteriors]),
            kernels="" if not all(p.kernels for p in posteriors) else join(
                [p.kernels for p in posteriors]),
            seconds=None if any(s is None for s in seconds) else float(sum(seconds)),
            group_ids=first.group_ids,
            group_order=first.group_order,
        )
