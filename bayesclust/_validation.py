"""Input checks shared by every public entry point.

Every public function validates its arguments once, here, at the boundary, and
raises a :class:`ValueError` or :class:`TypeError` that names the argument and
says what is wrong.  Nothing downstream is allowed to turn bad input into NaN.

This module imports only numpy and jax (for PRNG keys), never scikit-learn.
Every module that compiles anything imports it, so importing it also turns on
JAX's persistent compilation cache (:mod:`bayesclust._cache`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np

from . import _cache

_cache.setup()

__all__ = [
    "check_array",
    "check_positive",
    "check_nonnegative",
    "check_int",
    "check_sample_weight",
    "check_labels",
    "check_same_length",
    "check_groups",
    "as_rng_key",
    "as_numpy_rng",
    "working_dtype",
    "centre",
    "to_unit_frame",
    "check_unit_penalty",
    "UnitFrame",
    "unit_frame",
    "is_number",
    "delimited_rows",
]


def _float_dtype(dtype: np.dtype | None) -> np.dtype:
    """Floating dtype used for computation: float64 stays float64, all else float32."""
    if dtype is not None and np.dtype(dtype) == np.float64:
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def _real_numeric(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` as a real numeric array: numbers held as objects or strings converted to float64,
    as scikit-learn's estimators do (``check_array`` with a float dtype); anything else (text,
    complex, dates, records) a ``TypeError`` naming ``name``."""
    if arr.dtype.kind in "OUS":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype} "
                            "with non-numeric entries") from None
    if arr.dtype.kind in "VcmM":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    return arr


def check_array(
    X: Any,
    name: str = "X",
    *,
    ndim: int | None = 2,
    min_samples: int = 1,
    dtype: Any = "float",
) -> np.ndarray:
    """Validate a numeric array and return it as a NumPy array.

    Parameters
    ----------
    X : array_like
        The input.  Lists, NumPy and JAX arrays are accepted.
    name : str
        Argument name used in error messages.
    ndim : int or None, default 2
        Required number of dimensions (None: any, and no sample-count check).
    min_samples : int, default 1
        Minimum length of the first axis.
    dtype : {"float", None}
        ``"float"`` converts to float64 if the input is float64, float32
        otherwise (JAX's default precision); ``None`` keeps the dtype.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    TypeError
        If ``X`` is not numeric (complex, or strings / objects that are not numbers; numbers
        held as strings or objects are converted to float64, as scikit-learn does).
    ValueError
        On the wrong number of dimensions, too few samples, zero features,
        NaN or infinite values.
    """
    if X is None:
        raise TypeError(f"{name} must be an array, got None")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be converted to an array: {exc}") from None
    arr = _real_numeric(arr, name)
    if ndim is None:
        min_samples = 0
    elif arr.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D array, got {arr.ndim}-D with shape {arr.shape}"
            + (" (reshape 1-D data with X.reshape(-1, 1))" if ndim == 2 and arr.ndim == 1 else "")
        )
    if min_samples and arr.shape[0] < min_samples:
        raise ValueError(
            f"{name} must have at least {min_samples} sample(s), got shape {arr.shape}"
        )
    if ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one feature, got shape {arr.shape}")
    if dtype == "float":
        arr = arr.astype(_float_dtype(arr.dtype), copy=False)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "infinite"
        raise ValueError(f"{name} contains {bad} values")
    return arr


# --- the float range of squared distances ------------------------------------------------


def working_dtype(dtype: Any) -> np.dtype:
    """The dtype JAX computes in for host data of ``dtype`` (float32 unless ``jax_enable_x64``)."""
    import jax

    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dtype)))


def centre(X: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """The (weighted) column mean of ``X``, shape (d,), in ``X``'s dtype.

    Summed in ``X``'s dtype; when that sum overflows (float32 data near the top
    of its range) the mean is summed again in float64 and rounded back.
    """
    if sample_weight is None:
        mean = X.mean(0)
        sample_weight = np.ones(X.shape[0])
    else:
        mean = (sample_weight[:, None] * X).sum(0) / sample_weight.sum()
    if not np.all(np.isfinite(mean)):
        w64 = np.asarray(sample_weight, np.float64)
        mean = ((w64[:, None] * X.astype(np.float64)).sum(0) / w64.sum()).astype(X.dtype)
    return mean


def check_working_range(X: np.ndarray, name: str = "X", dtype: Any = None) -> float:
    """The largest ``|x|`` of validated data ``X``, or a ``ValueError`` naming ``name`` when it
    lies beyond the range of ``dtype`` (default the working dtype, :func:`working_dtype`):
    float64 data with ``jax_enable_x64`` off would turn into infinities there."""
    wd = working_dtype(X.dtype) if dtype is None else np.dtype(dtype)
    big = float(np.max(np.abs(X))) if X.size else 0.0
    if big > float(np.finfo(wd).max):
        raise ValueError(
            f"{name} has values up to {big:.3g}, beyond the {wd.name} range (max "
            f"{float(np.finfo(wd).max):.3g}); enable jax_enable_x64 or rescale {name}"
        )
    return big


def to_unit_frame(X: np.ndarray, mean: np.ndarray, name: str = "X",
                  dtype: Any = None) -> tuple[np.ndarray, int]:
    """``(X - mean) * 2**-e`` in the working dtype, and ``e``: the largest centred value in [0.5, 1).

    Squared distances of the unit frame lie in ``[0, 4 d]``, so they can neither
    overflow nor (for distinct points) underflow in float32, whatever the scale of
    ``X``.  Multiplying by a power of two is exact in binary floating point:
    distance-based algorithms (DP-means, hard HDP, k-means) whose arithmetic is
    sums, products and comparisons give bit for bit the results they would give
    on ``X - mean``, scaled by ``2**e`` (``4**e`` for squared distances), as long
    as nothing over- or underflows there.  ``e = 0`` for constant data.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Validated data (finite).
    mean : ndarray, shape (d,)
        The centre subtracted (in ``X``'s dtype, as :func:`centre` returns it).
    name : str
        Argument name used in error messages.
    dtype : dtype, optional
        The dtype of ``Xs``; default the working dtype (:func:`working_dtype`) of
        ``X``.  ``np.float64`` for host (NumPy / SciPy) algorithms.

    Returns
    -------
    Xs : ndarray, shape (n, d), ``dtype``
    e : int

    Raises
    ------
    ValueError
        When ``X`` holds values beyond the working dtype's range (float64 data
        with ``jax_enable_x64`` off) or ``X - mean`` overflows.
    """
    wd = working_dtype(X.dtype) if dtype is None else np.dtype(dtype)
    big = check_working_range(X, name, wd)
    with np.errstate(over="ignore"):
        Xc = X - mean.astype(X.dtype)
    spread = float(np.max(np.abs(Xc))) if Xc.size else 0.0
    if not np.isfinite(spread):
        raise ValueError(
            f"{name} - mean overflows {X.dtype.name} (values up to {big:.3g}); rescale {name}"
        )
    e = math.frexp(spread)[1] if spread > 0 else 0
    return np.ldexp(Xc, -e).astype(wd, copy=False), e


def check_unit_penalty(lam: float, name: str, e: int, dtype: Any, *, n_terms: int,
                       nonconstant: bool = True) -> float:
    """A squared-distance penalty in the unit frame of :func:`to_unit_frame`: ``lam * 4**-e``.

    Raises a ``ValueError`` naming ``name`` when the scaled penalty is not a
    normal number of ``dtype``: above ``finfo.max / n_terms`` (``n_terms`` bounds
    the number of penalised clusters, so that the objective cannot overflow) or,
    for non-constant data, below ``finfo.tiny`` (it would flush to zero).
    """
    fi = np.finfo(np.dtype(dtype))
    scaled = math.ldexp(lam, -2 * e)
    spread2 = math.ldexp(1.0, 2 * e)
    if scaled > float(fi.max) / max(1, n_terms):
        raise ValueError(
            f"{name}={lam:g} is too large for {np.dtype(dtype).name} data of spread about "
            f"{math.sqrt(spread2):.3g}: {name} / spread**2 = {scaled:.3g} exceeds "
            f"{float(fi.max) / max(1, n_terms):.3g} (the objective would overflow); any {name} "
            f">= the largest squared distance to the mean already gives one cluster"
        )
    if nonconstant and scaled < float(fi.tiny):
        raise ValueError(
            f"{name}={lam:g} is too small for {np.dtype(dtype).name} data of spread about "
            f"{math.sqrt(spread2):.3g}: {name} / spread**2 = {scaled:.3g} is below "
            f"{float(fi.tiny):.3g} (it would flush to zero)"
        )
    return scaled


class UnitFrame(NamedTuple):
    """The unit frame of data ``X``: ``(X - mean) * 2**-e`` (:func:`to_unit_frame`).

    Every algorithm that is invariant to translating the data and equivariant to
    scaling them (distances, Gaussian widths and squared-distance penalties scale
    with the data) runs in this frame, where squared distances lie in ``[0, 4 d]``
    whatever the magnitude of ``X``; its parameters move in with :meth:`width`,
    :meth:`squared` or :meth:`weight`, its locations back out with
    :meth:`from_unit`.  The powers of two are exact, so a run on data that neither
    over- nor underflowed before is bit for bit the same up to the translation.
    """

    mean: np.ndarray  # (d,) in X's dtype (zeros when not centred)
    e: int
    dtype: np.dtype  # X's dtype, that of the locations handed back
    work: np.dtype  # the dtype of the unit-frame data

    def to_unit(self, m: np.ndarray) -> np.ndarray:
        """Locations (K, d) of the data frame in the unit frame (float64)."""
        return np.ldexp(np.asarray(m, np.float64) - self.mean.astype(np.float64), -self.e)

    def from_unit(self, m: np.ndarray) -> np.ndarray:
        """Locations (K, d) of the unit frame in the data frame, in X's dtype."""
        return (np.ldexp(np.asarray(m, np.float64), self.e)
                + self.mean.astype(np.float64)).astype(self.dtype)

    def width(self, value: float, name: str) -> float:
        """A length (a Gaussian width ``sigma``) in the unit frame, ``value * 2**-e``.

        Raises a ``ValueError`` naming ``name`` when it is not a normal number of the
        working dtype: its square would flush to zero or overflow.
        """
        fi = np.finfo(self.work)
        scaled = math.ldexp(value, -self.e)
        if not float(fi.tiny) ** 0.5 <= scaled <= float(fi.max) ** 0.5:
            raise ValueError(
                f"{name}={value:g} is outside the range usable with data of spread about "
                f"{math.ldexp(1.0, self.e):.3g} in {fi.dtype.name}: {name} / spread = "
                f"{scaled:.3g} (its square would over- or underflow); give {name} on the "
                "scale of the data"
            )
        return scaled

    def squared(self, value: float, name: str, n_terms: int = 1) -> float:
        """A squared distance (a penalty ``lam``, a variance ``sigma2``) in the unit frame,
        ``value * 4**-e`` (:func:`check_unit_penalty`: a ``ValueError`` naming ``name``
        when that is not a normal number of the working dtype)."""
        return check_unit_penalty(value, name, self.e, self.work, n_terms=n_terms)

    def weight(self, lam: float, name: str, n_terms: int) -> float:
        """A weight of squared distances (an inverse variance) in the unit frame, ``lam * 4**e``."""
        if lam == 0:
            return 0.0
        fi = np.finfo(self.work)
        # The weight multiplies squared distances, so it scales inversely to the data**2.
        scaled = math.ldexp(lam, 2 * self.e)
        if not float(fi.tiny) <= scaled <= float(fi.max) / max(1, n_terms):
            raise ValueError(
                f"{name}={lam:g} is outside the range usable with data of spread about "
                f"{math.ldexp(1.0, self.e):.3g} in {fi.dtype.name}: {name} * spread**2 = "
                f"{scaled:.3g} is not a normal number (the objective would over- or "
                "underflow)"
            )
        return scaled


def unit_frame(X: np.ndarray, *, centred: bool = True, name: str = "X",
               sample_weight: np.ndarray | None = None,
               dtype: Any = None) -> tuple[np.ndarray, UnitFrame]:
    """``X`` in its unit frame (:func:`to_unit_frame`, working dtype) and the frame.

    ``centred=False`` only scales by the power of two, which is exact: a run there
    is the data-frame run scaled (for algorithms that are not translation invariant,
    or to keep a stochastic run's state comparable with the data).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Validated data (finite).
    centred : bool, default True
        Subtract the (weighted) column mean first (:func:`centre`).
    name : str
        Argument name used in error messages.
    sample_weight : ndarray, shape (n,), optional
        Weights of the mean.
    dtype : dtype, optional
        The dtype of ``Xu``: default the working dtype (JAX algorithms),
        ``np.float64`` for host ones.

    Returns
    -------
    Xu : ndarray, shape (n, d), ``dtype``
    frame : UnitFrame
    """
    mean = centre(X, sample_weight) if centred else np.zeros(X.shape[1], X.dtype)
    Xu, e = to_unit_frame(X, mean, name, dtype)
    return Xu, UnitFrame(mean, e, X.dtype, Xu.dtype)


def is_number(field: str) -> bool:
    """True when the text field parses as a float."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def delimited_rows(path: Any) -> tuple[list[str] | None, list[tuple[int, list[str]]]]:
    """The non-blank lines of a user's delimited text file, split into stripped fields.

    Tab-separated for ``.tsv`` / ``.tab``, comma-separated otherwise.  A first line none
    of whose fields is a number is the header, returned apart.  The one reader of the
    text files ``bayesclust.datasets.read_matrix`` and the jobs' ``--labels`` column take.

    Parameters
    ----------
    path : str or Path
        An existing text file.

    Returns
    -------
    header : list of str or None
        The header's fields; None when the first line holds a number.
    rows : list of (int, list of str)
        Each later non-blank line: its line number (from 1) and its fields.
    """
    from pathlib import Path

    p = Path(path)
    delimiter = "\t" if p.suffix in (".tsv", ".tab") else ","
    with open(p, encoding="utf-8", errors="replace") as fh:
        rows = [(lineno, [f.strip() for f in line.split(delimiter)])
                for lineno, line in enumerate(fh.read().splitlines(), 1) if line.strip()]
    if rows and not any(is_number(f) for f in rows[0][1]):
        return rows[0][1], rows[1:]
    return None, rows


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, raising unless it is finite and > 0."""
    v = _check_real_scalar(value, name)
    if not v > 0 or (np.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def check_probability(value: Any, name: str, *, open_interval: bool = False) -> float:
    """A number in [0, 1] (``open_interval``: in (0, 1)), or a ``ValueError`` naming ``name``."""
    v = check_positive(value, name) if open_interval else check_nonnegative(value, name)
    if v > 1.0 or (open_interval and v == 1.0):
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return v


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a float, raising unless it is finite and >= 0."""
    v = _check_real_scalar(value, name)
    if not v >= 0 or np.isinf(v):
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return v


def _check_real_scalar(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.generic, np.ndarray)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    arr = np.asarray(value)
    if arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real scalar, got {value!r}")
    v = float(arr)
    if np.isnan(v):
        raise ValueError(f"{name} must be a number, got NaN")
    return v


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int``, raising unless it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def check_sample_weight(sample_weight: Any, n_samples: int, dtype: Any = np.float32) -> np.ndarray:
    """Validate per-sample weights: 1-D, length ``n_samples``, finite, >= 0, not all 0.

    ``None`` gives unit weights.
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=dtype)
    w = check_array(sample_weight, "sample_weight", ndim=1, min_samples=0, dtype=None)
    if w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has length {w.shape[0]} but X has {n_samples} samples"
        )
    w = w.astype(dtype)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinite values")
    if np.any(w < 0):
        raise ValueError("sample_weight must be non-negative, got negative weights")
    if not np.any(w > 0):
        raise ValueError("sample_weight must have at least one positive weight")
    return w


def integer_labels(arr: np.ndarray, name: str) -> np.ndarray:
    """An array of labels of any shape as integers: integral floats and booleans converted,
    anything else non-integer a ``ValueError`` / ``TypeError`` naming ``name``."""
    if arr.dtype.kind == "f":
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must contain integer labels, got non-integer values")
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must contain integer labels, got dtype {arr.dtype}")
    return arr


def check_labels(labels: Any, name: str = "labels", *, n_samples: int | None = None) -> np.ndarray:
    """Validate a 1-D vector of integer cluster/class labels (any integer values).

    Float arrays are accepted when every value is integral (e.g. ``[0., 1.]``).
    """
    arr = integer_labels(check_array(labels, name, ndim=1, min_samples=1, dtype=None), name)
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"{name} has length {arr.shape[0]}, expected {n_samples}")
    return arr


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """Raise a ValueError naming both arguments when their first axes differ."""
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} must have the same length, got {len(a)} and {len(b)}")


def check_groups(
    groups: Any, group_ids: Any = None, name: str = "groups", ids_name: str = "group_ids"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate grouped data (several data sets sharing d features) and stack it group-major.

    Two forms are accepted:

    * ``groups`` a list/tuple of (n_j, d) arrays (or a 3-D array, one data set per
      leading index) and ``group_ids=None``;
    * ``groups`` a single (n, d) array ``X`` and ``group_ids`` an integer vector of
      length n naming each row's data set (any integer values; the data sets are
      ordered by sorted id).

    Returns
    -------
    X : ndarray, shape (n, d)
        All rows, data set 0 first; within a data set, rows keep their input order.
        float64 if any input is float64, float32 otherwise.
    gid : ndarray of int64, shape (n,)
        Data set index ``0..D-1`` of each stacked row (non-decreasing).
    order : ndarray of int64, shape (n,)
        ``order[r]``: input row (of ``X``, or of the concatenated list) of stacked row ``r``.
    group_order : ndarray, shape (D,)
        Identifier of each data set: ``0..D-1`` for a list, the sorted unique
        ``group_ids`` otherwise.

    Raises
    ------
    TypeError, ValueError
        No data sets, an empty data set, NaN/inf, wrong rank, data sets with different
        numbers of features, ``group_ids`` of the wrong length or not integer.
    """
    if group_ids is not None:
        X = check_array(groups, name)
        ids = check_labels(group_ids, ids_name, n_samples=X.shape[0])
        group_order, gid = np.unique(ids, return_inverse=True)
        gid = gid.reshape(-1).astype(np.int64)
        order = np.argsort(gid, kind="stable").astype(np.int64)
        return X[order], gid[order], order, group_order
    if groups is None:
        raise TypeError(f"{name} must be a list of (n_j, d) arrays, got None")
    if hasattr(groups, "ndim") and groups.ndim == 2:
        raise ValueError(
            f"{name} is a single 2-D array: pass {ids_name} (the data set of every row) "
            f"or a list of (n_j, d) arrays"
        )
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise TypeError(f"{name} must be a list of (n_j, d) arrays, got {type(groups).__name__}")
    arrays = [check_array(Xj, f"{name}[{j}]") for j, Xj in enumerate(groups)]
    if not arrays:
        raise ValueError(f"{name} must contain at least one data set, got none")
    d = arrays[0].shape[1]
    for j, Xj in enumerate(arrays):
        if Xj.shape[1] != d:
            raise ValueError(
                f"{name}[{j}] has {Xj.shape[1]} features but {name}[0] has {d}: "
                f"all data sets must have the same number of features"
            )
    X = np.concatenate(arrays).astype(np.result_type(*arrays), copy=False)
    gid = np.repeat(np.arange(len(arrays), dtype=np.int64), [len(Xj) for Xj in arrays])
    return X, gid, np.arange(X.shape[0], dtype=np.int64), np.arange(len(arrays))


def as_rng_key(rng_key: Any, name: str = "rng_key"):
    """Return a JAX PRNG key from a key or a non-negative integer seed."""
    import jax

    if isinstance(rng_key, (numbers.Integral, np.integer)) and not isinstance(rng_key, bool):
        if rng_key < 0:
            raise ValueError(f"{name} must be a non-negative integer seed or a PRNG key, got {rng_key}")
        return jax.random.PRNGKey(int(rng_key))
    if isinstance(rng_key, jax.Array):
        if jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key) or (
            rng_key.dtype == np.uint32 and rng_key.shape[-1:] == (2,)
        ):
            return rng_key
    raise TypeError(f"{name} must be a jax.random key or an integer seed, got {type(rng_key).__name__}")


def as_numpy_rng(rng_key: Any, name: str = "rng_key") -> np.random.Generator:
    """A NumPy generator seeded by the raw bits of a JAX key (or an integer seed).

    For host-side randomness (ensembles, restarts, data generators) that must be
    reproducible from the same ``rng_key`` as the JAX code, without compiling
    anything.
    """
    import jax

    key = as_rng_key(rng_key, name)
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return np.random.default_rng(np.asarray(key).astype(np.uint64).ravel().tolist())


# --- evidence accumulation / consensus clustering -----------------------------------------

__all__ += ["check_ensemble"]


def check_ensemble(ensemble: Any, name: str = "ensemble", *, allow_missing: bool | None = None) -> np.ndarray:
    """Validate an ensemble (partitions of the same ``n`` objects); return (N, n) int64 codes.

    Parameters
    ----------
    ensemble : array_like (N, n), list of N label vectors, ``Ensemble`` or Posterior
        Integer labels; each partition may use any number of clusters.  A
        :class:`~bayesclust.inference.mixtures.posterior.Posterior` contributes its pooled label
        draws (``chains * draws`` partitions).
    allow_missing : bool, optional
        Whether ``-1`` marks an object left out of a partition.  Default: True for an
        ``Ensemble`` (sub-sampling), False otherwise.

    Returns
    -------
    ndarray of int64, shape (N, n)
        Per partition, clusters renumbered ``0..K_l-1`` (order of sorted label); ``-1``
        for a missing object.

    Raises
    ------
    ValueError
        Fewer than two partitions, partitions of different lengths, non-integer labels,
        negative labels (other than ``-1`` with ``allow_missing``), an object missing from
        every partition.
    TypeError
        Non-numeric labels.
    """
    labelings = ensemble
    is_ensemble = hasattr(labelings, "labels") and hasattr(labelings, "k_min")  # inference.consensus.ensembles.Ensemble
    if allow_missing is None:
        allow_missing = is_ensemble
    if is_ensemble:
        labelings = labelings.labels
    elif hasattr(labelings, "pooled_labels") and hasattr(labelings, "n_points"):
        labelings = labelings.pooled_labels
    if labelings is None:
        raise TypeError(f"{name} must be an (N, n) array of labels or a list of label vectors, got None")
    if isinstance(labelings, (list, tuple)) and len(labelings) and np.ndim(labelings[0]) == 0:
        labelings = np.asarray(labelings)  # a single flat labeling: reported below
    if isinstance(labelings, (list, tuple)):
        rows = [check_labels(r, f"{name}[{l}]") for l, r in enumerate(labelings)]
        if len(rows) == 0:
            raise ValueError(f"{name} must contain at least two partitions, got none")
        lengths = {r.shape[0] for r in rows}
        if len(lengths) > 1:
            raise ValueError(
                f"{name} must all have the same length (one label per object), got lengths {sorted(lengths)}"
            )
        arr = np.stack(rows)
    else:
        arr = check_array(labelings, name, ndim=None, dtype=None)
        if arr.ndim == 1:
            raise ValueError(f"{name} must contain at least two partitions (shape (N, n)), got a single labeling")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (N partitions, n objects), got shape {arr.shape}")
        if arr.dtype.kind == "f":
            if not np.all(arr == np.round(arr)):
                raise ValueError(f"{name} must contain integer labels, got non-integer values")
        elif arr.dtype.kind not in "iub":
            raise TypeError(f"{name} must contain integer labels, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    N, n = arr.shape
    if N < 2:
        raise ValueError(f"{name} must contain at least two partitions, got a single labeling")
    if n < 1:
        raise ValueError(f"{name} must label at least one object, got shape {arr.shape}")
    lo = -1 if allow_missing else 0
    if arr.min() < lo:
        extra = " (-1 marks a missing object only with allow_missing=True)" if not allow_missing else ""
        raise ValueError(f"{name} must contain non-negative labels, got minimum {int(arr.min())}{extra}")
    if allow_missing and np.any(np.all(arr < 0, axis=0)):
        raise ValueError(f"{name}: some objects are missing (-1) from every partition")
    # Renumber each partition's clusters 0..K_l-1 (missing stays -1).  Labels within a range
    # of a few times n are renumbered through a lookup table built by counting, linear in n
    # and without masking out the missing objects; a row that already uses exactly 0..K_l-1
    # is copied as it is.  Wider ranges are sorted.
    out = np.empty_like(arr)
    for l in range(N):
        row = arr[l]
        base = int(row.min())
        span = int(row.max()) - base + 1
        if span <= 4 * n + 1024:
            shifted = row - base if base else row
            present = np.bincount(shifted, minlength=span) > 0
            if base == -1:  # slot 0 holds the missing objects
                present[0] = False
            elif present.all():
                out[l] = shifted
                continue
            lookup = np.cumsum(present) - 1
            if base == -1:
                lookup[0] = -1
            out[l] = lookup[shifted]
        else:
            obs = row >= 0
            out[l] = -1
            out[l, obs] = np.unique(row[obs], return_inverse=True)[1].reshape(-1)
    return out


def check_squares_representable(X: np.ndarray, name: str = "X", dtype: Any = None) -> None:
    """Raise a ValueError naming ``name`` when the sum of squares of ``X`` overflows ``dtype``.

    The samplers' sufficient statistics hold sums of squared entries; past the largest float
    of the working precision (float32 unless ``jax_enable_x64``) they become ``inf`` and the
    log-likelihood ``NaN``.  Computed in float64.
    """
    if dtype is None:
        import jax

        dtype = np.float64 if jax.config.jax_enable_x64 else np.float32
    with np.errstate(over="ignore"):
        total = float(np.sum(np.square(np.asarray(X, np.float64))))
    limit = float(np.finfo(dtype).max)
    if not total < limit:
        raise ValueError(
            f"{name} is too large for {np.dtype(dtype).name}: its sum of squares ({total:.3g}) "
            f"exceeds the largest {np.dtype(dtype).name} ({limit:.3g}); rescale {name} (e.g. "
            "standardise its columns) or enable float64 (jax_enable_x64)"
        )


# --------------------------------------------------------------------------- #
# Count rows (KL-means, the DP mixture of multinomials, their objective)
# --------------------------------------------------------------------------- #


class HostCounts(NamedTuple):
    """Validated counts on the host.

    Attributes
    ----------
    csr : scipy.sparse.csr_matrix of float64, shape (n, m)
        The rows (explicit zeros removed, indices sorted).
    dense : ndarray of float64, shape (n, m), or None
        The dense input (None when the input was sparse or a co-association).
    float64 : bool
        The input was float64 (its working dtype is float64 under ``jax_enable_x64``).
    """

    csr: Any
    dense: np.ndarray | None
    float64: bool

    @property
    def shape(self):
        return self.csr.shape


def coassociation_rows(C):
    """The rows of a co-association with its diagonal: :math:`n_{ij}` and :math:`n_{ii}` = partitions holding ``i``."""
    import scipy.sparse as sp

    rows = C.symmetric_counts() + sp.diags(np.asarray(C.sampled, np.float64))
    return sp.csr_matrix(rows, dtype=np.float64)


def _looks_like_ensemble(arr: np.ndarray) -> bool:
    """Integer labels of partitions, shape (N, n): every row is ``0..K_l-1`` with every label used."""
    if arr.dtype.kind not in "iu" or arr.shape[0] == arr.shape[1] or arr.shape[1] < 2:
        return False
    for row in arr:
        values = np.unique(row)
        if values[0] != 0 or values[-1] != values.shape[0] - 1 or values.shape[0] < 2:
            return False
    return True


def check_counts(counts: Any, name: str = "counts") -> HostCounts:
    """Validate count rows: non-negative, finite, a positive total; an ensemble is refused.

    Parameters
    ----------
    counts : array_like (n, m), scipy.sparse matrix or CoAssociation
        Non-negative counts (need not be integers).  An ensemble of partitions (an
        ``Ensemble``, a Posterior, or integer labels of shape ``(N, n)`` whose every row
        uses labels ``0..K-1``) raises: pass its co-association (:func:`bayesclust.coassociation`).
    name : str

    Returns
    -------
    HostCounts
    """
    import scipy.sparse as sp

    if hasattr(counts, "symmetric_counts") and hasattr(counts, "sampled"):
        return HostCounts(coassociation_rows(counts), None, True)
    if type(counts).__name__ in ("Ensemble", "Posterior") or (
            hasattr(counts, "labels") and not sp.issparse(counts)):
        raise ValueError(f"{name} must be a count matrix (n, m) or a co-association, got an "
                         f"ensemble of partitions ({type(counts).__name__}); pass its "
                         f"co-association, bayesclust.coassociation({name})")
    if sp.issparse(counts):
        if counts.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got {counts.ndim}-D")
        if counts.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {counts.dtype}")
        csr = sp.csr_matrix(counts, dtype=np.float64, copy=True)
        float64 = counts.dtype == np.float64
        dense = None
        values = csr.data
    else:
        arr = check_array(counts, name, dtype=None)
        if arr.dtype.kind == "b":
            arr = arr.astype(np.float32)
        if _looks_like_ensemble(arr):
            raise ValueError(
                f"{name} looks like an ensemble of partitions (integer labels of shape "
                f"(n_partitions, n_samples) = {arr.shape}), not counts; pass its co-association, "
                f"bayesclust.coassociation({name}), or the counts as floats")
        float64 = arr.dtype == np.float64
        dense = np.asarray(arr, np.float64)
        csr = sp.csr_matrix(dense)
        values = dense
    if values.size and not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if values.size and np.any(values < 0):
        raise ValueError(f"{name} must be non-negative counts")
    csr.eliminate_zeros()
    csr.sort_indices()
    if csr.shape[0] < 1 or csr.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got {csr.shape}")
    total = float(csr.sum())
    if not total > 0 or not np.isfinite(total):
        raise ValueError(f"{name} must have a positive finite total")
    # Pooled counts and log-likelihood terms (a count times a log, |log| < 1e3) must stay
    # finite in the precision the kernels compute in.
    wd = working_dtype(np.float64 if float64 else np.float32)
    limit = float(np.finfo(wd).max) / 1e3
    if not total < limit:
        raise ValueError(f"{name} has a total of {total:.3g}: its pooled counts and log-likelihood "
                         f"terms would overflow {wd.name} (limit {limit:.3g}); rescale {name}")
    return HostCounts(csr, dense, bool(float64))


# --------------------------------------------------------------------------- #
# Square matrices, relabelled ids, the public wrappers of the JAX kernels
# --------------------------------------------------------------------------- #

__all__ += ["check_square_matrix", "compact_ids", "traced", "check_kernel_array"]


def check_square_matrix(A: Any, name: str, *, nonnegative: bool = False, symmetric: bool = False,
                        min_samples: int = 1) -> np.ndarray:
    """A finite (n, n) float64 matrix (a distance, an affinity, a Gram matrix), or a
    ``ValueError`` / ``TypeError`` naming ``name``.

    ``nonnegative`` refuses negative entries; ``symmetric`` refuses ``A != A.T`` beyond a
    relative ``1e-8`` of the largest entry.  Values whose square would overflow float64
    (beyond ``1e150``) are refused too: every user squares or sums them.
    """
    M = check_array(A, name, ndim=2, min_samples=min_samples, dtype=None)
    if M.dtype.kind == "b":
        M = M.astype(np.float64)
    M = M.astype(np.float64, copy=False)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}")
    big = float(np.max(np.abs(M))) if M.size else 0.0
    if big > 1e150:
        raise ValueError(f"{name} has entries up to {big:.3g}, whose squares overflow float64; "
                         f"rescale {name}")
    if nonnegative and M.size and float(M.min()) < 0:
        raise ValueError(f"{name} must be non-negative, got a minimum of {float(M.min()):g}")
    if symmetric and M.size and float(np.max(np.abs(M - M.T))) > 1e-8 * max(big, 1e-300):
        raise ValueError(f"{name} must be symmetric")
    return M


def compact_ids(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """Nominal integer ids as codes ``0..k-1`` in increasing order of id, and ``k``.

    Ids are names, not sizes: ids near ``1e15`` cost what ``0..k-1`` cost.
    """
    uniq, codes = np.unique(ids, return_inverse=True)
    return codes.reshape(ids.shape).astype(np.int64), int(uniq.shape[0])


def traced(*values: Any) -> bool:
    """Whether any leaf of ``values`` is a JAX tracer (checks of values are then skipped)."""
    import jax

    return any(isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(values))


def check_kernel_array(x: Any, name: str, *, ndim: int | tuple[int, ...] | None = None,
                       kind: str = "f", finite: bool = True, min_rows: int = 0) -> Any:
    """The public wrapper's check of a JAX kernel's array argument.

    A tracer is returned as it is after the static checks of its rank and dtype (the kernel
    is then inside a compiled caller, which validated its own inputs); a concrete value is
    also converted and checked for NaN / infinity (``finite=False``: for NaN and ``+inf`` only,
    as a log-weight may be ``-inf``), and returned as a NumPy or JAX array.
    ``kind`` is ``"f"`` (real numbers) or ``"i"`` (integer ids; integral floats accepted);
    ``min_rows`` is the least length of the first axis (a NumPyro plate of no rows is refused).
    """
    import jax

    if x is None:
        raise TypeError(f"{name} must be an array, got None")
    if isinstance(x, jax.core.Tracer) or isinstance(x, jax.Array):
        shape, dt = x.shape, np.dtype(x.dtype) if not jax.dtypes.issubdtype(
            x.dtype, jax.dtypes.prng_key) else np.dtype(object)
        arr = x
    elif finite:
        arr = check_array(x, name, ndim=None, dtype=None)
        shape, dt = arr.shape, arr.dtype
    else:  # log-weights and the like: -inf is a value, NaN is not
        try:
            arr = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name} could not be converted to an array: {exc}") from None
        arr = _real_numeric(arr, name)
        shape, dt = arr.shape, arr.dtype
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if ndims is not None and len(shape) not in ndims:
        want = " or ".join(f"{k}-D" for k in ndims)
        raise ValueError(f"{name} must be a {want} array, got shape {tuple(shape)}")
    if min_rows and (len(shape) == 0 or shape[0] < min_rows):
        raise ValueError(f"{name} must have at least {min_rows} row(s), got shape {tuple(shape)}")
    if kind == "f" and dt.kind not in "fiub":
        raise TypeError(f"{name} must be a real numeric array, got dtype {dt}")
    if kind == "i" and dt.kind not in "iubf":
        raise TypeError(f"{name} must hold integer ids, got dtype {dt}")
    if isinstance(arr, jax.core.Tracer):
        return arr
    if finite and dt.kind == "f" and not bool(np.all(np.isfinite(np.asarray(arr)))):
        raise ValueError(f"{name} contains NaN or infinite values")
    if dt.kind == "f" and not isinstance(arr, jax.Array) and arr.size:
        # the kernel computes in the working dtype (float32 unless jax_enable_x64)
        wd = working_dtype(dt)
        with np.errstate(invalid="ignore"):
            big = float(np.nanmax(np.abs(np.where(np.isinf(arr), 0.0, arr))))
        if big > float(np.finfo(wd).max):
            raise ValueError(f"{name} has values up to {big:.3g}, beyond the {wd.name} range "
                             f"(max {float(np.finfo(wd).max):.3g}); rescale {name} or enable "
                             "float64 (jax_enable_x64)")
    if not finite and dt.kind == "f":
        host = np.asarray(arr)
        if bool(np.isnan(host).any()) or bool(np.isposinf(host).any()):
            raise ValueError(f"{name} contains NaN or +infinite values")
    if kind == "i" and dt.kind == "f":
        host = np.asarray(arr)
        if not np.all(host == np.round(host)):
            raise ValueError(f"{name} must hold integer ids, got non-integer values")
        arr = host.astype(np.int32)
    return arr


__all__ += ["check_points", "check_point_range"]


def check_point_range(X: np.ndarray, name: str = "X", dtype: Any = None) -> np.ndarray:
    """``X`` (validated, (n, d), floating) unchanged, or a ``ValueError`` naming ``name`` when
    its squared distances could overflow its dtype (``dtype`` if given: the working dtype of
    a JAX kernel): the largest ``|x|`` must stay below ``sqrt(finfo.max / (4 d))``, so that
    ``||x - y||**2 <= 4 d max|x|**2`` is finite.  A traced ``X`` passes unchecked."""
    if traced(X):
        return X
    if dtype is not None:
        dt = np.dtype(dtype)
    else:
        dt = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
    d = X.shape[1] if X.ndim == 2 else 1
    limit = math.sqrt(float(np.finfo(dt).max) / (4 * max(d, 1)))
    big = float(np.max(np.abs(X))) if X.size else 0.0
    if big > limit:
        raise ValueError(f"{name} has values up to {big:.3g}, whose squared distances overflow "
                         f"{dt.name} (limit {limit:.3g}); rescale {name}")
    return X


def check_points(X: Any, name: str = "X", *, min_samples: int = 1, scale_free: bool = False) -> np.ndarray:
    """Data points (n, d) as float64 for a host-side distance computation (SciPy's k-d tree,
    ``cdist``): finite, and small enough that squared distances cannot overflow
    (:func:`check_point_range`) unless ``scale_free``: the caller computes in the data's unit
    frame (:func:`unit_frame`), where any finite scale is exact."""
    arr = check_array(X, name, min_samples=min_samples, dtype=None).astype(np.float64, copy=False)
    return arr if scale_free else check_point_range(arr, name)


__all__ += ["check_sequence"]


def check_sequence(value: Any, name: str, *, min_length: int = 0) -> list:
    """A list / tuple / range (of blocks, of grid values) as a list, or a ``TypeError`` naming
    ``name`` (a number, a string or None is not a sequence); a ``ValueError`` when it holds
    fewer than ``min_length`` items."""
    if value is None or isinstance(value, (str, bytes, numbers.Number)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
    out = list(value)
    if len(out) < min_length:
        raise ValueError(f"{name} must hold at least {min_length} item(s), got {len(out)}")
    return out


__all__ += ["check_blocks"]


def check_blocks(value: Any, name: str, *, min_length: int = 1) -> list:
    """A sequence of numeric arrays of any shapes (parameter or feature blocks): finite, each
    named ``name[m]`` in errors.  Traced blocks (inside a compiled caller) pass unchecked."""
    blocks = check_sequence(value, name, min_length=min_length)
    if traced(blocks):
        return blocks
    return [check_array(b, f"{name}[{m}]", ndim=None, dtype=None) for m, b in enumerate(blocks)]


__all__ += ["check_kernel_ids"]


def check_kernel_ids(ids: Any, name: str, k: Any, *, padding: bool = False) -> None:
    """Concrete ids of a JAX kernel (cluster slots, classes) within ``0..k-1``, or a
    ``ValueError`` naming ``name``: a kernel's ids index a table of ``k`` rows, so an id out
    of range would be dropped or clipped silently.  ``padding``: ``-1`` marks a padding row
    and is allowed too.  Skipped when ``ids`` or ``k`` is traced."""
    if traced(ids, k):
        return
    host = np.asarray(ids)
    k = int(k)
    low = -1 if padding else 0
    if host.size and (int(host.min()) < low or int(host.max()) >= k):
        raise ValueError(f"{name} must hold ids in 0..{k - 1}"
                         + (" (-1 for a padding row)" if padding else "")
                         + f", got values in [{int(host.min())}, {int(host.max())}]")


def check_class_ids(ids: np.ndarray, name: str, n_classes: Any, *, what: str,
                    minimum: int = 1, count_name: str = "n_classes") -> int:
    """The number of classes ``K`` of ids that index a table of ``K`` rows (``0..K-1``).

    ``ids`` (validated integers, host) must be non-negative.  With ``n_classes`` None,
    ``K = max(ids) + 1``, refused when the largest id is at least ``max(ids.size, 1024)``:
    ids are sizes here, and an id near 1e15 would allocate a table of that many rows.
    ``minimum`` applies to a given ``n_classes``.
    ``what`` names the ids in the message ("SPOM's classes"), ``count_name`` the argument
    that gives ``K``.
    """
    if ids.size and int(ids.min()) < 0:
        raise ValueError(f"{name} must hold labels 0..K-1, got the label {int(ids.min())}")
    top = int(ids.max()) if ids.size else -1
    if n_classes is None:
        if top >= max(ids.size, 1024):
            raise ValueError(f"{name} holds the label {top} with only {ids.size} examples: {what} "
                             f"are 0..K-1; relabel {name} (np.unique({name}, return_inverse=True)) "
                             f"or pass {count_name}")
        return top + 1
    k = check_int(n_classes, count_name, minimum=minimum)
    if top >= k:
        raise ValueError(f"{name} holds the label {top}, not in 0..{k - 1} ({count_name}={k})")
    return k


__all__ += ["check_class_ids", "check_linkage"]


def check_linkage(Z: Any, name: str = "Z") -> np.ndarray:
    """A SciPy linkage matrix (n - 1, 4) as float64: finite, merged ids integers in
    ``0..2n-2``, heights >= 0, cluster sizes >= 2; else a ``ValueError`` naming ``name``."""
    A = check_array(Z, name, ndim=2, dtype=None).astype(np.float64, copy=False)
    if A.shape[1] != 4:
        raise ValueError(f"{name} must be a linkage matrix of shape (n - 1, 4), got {A.shape}")
    n = A.shape[0] + 1
    ids = A[:, :2]
    if np.any(ids != np.round(ids)) or ids.min() < 0 or ids.max() > 2 * n - 2:
        raise ValueError(f"{name}[:, :2] must hold the merged clusters' ids in 0..{2 * n - 2}")
    if A[:, 2].min() < 0 or A[:, 3].min() < 2:
        raise ValueError(f"{name} must hold merge heights >= 0 and cluster sizes >= 2")
    return A


__all__ += ["check_real"]


def check_real(value: Any, name: str) -> float:
    """A real number (any sign, infinities allowed), or a ``TypeError`` / ``ValueError`` (NaN)
    naming ``name``."""
    return _check_real_scalar(value, name)


__all__ += ["check_rows_match"]


def check_rows_match(X: Any, name: str, labels: Any, what: str = "state") -> None:
    """``X`` has one row per entry of ``labels`` (the last axis of a state's labels): a
    sweep or step over data of another length would read past its buffers."""
    n = np.shape(labels)[-1] if np.ndim(labels) else 0
    if np.shape(X)[0] != n:
        raise ValueError(f"{name} has {np.shape(X)[0]} rows but the {what} label {n} points")


__all__ += ["check_pair_arrays"]


def check_pair_arrays(rows: Any, cols: Any, values: Any, values_name: str = "counts",
                      n_objects: Any = None) -> tuple[Any, Any, Any]:
    """Stored pairs of a co-association: ``rows``, ``cols`` 1-D integer ids (within
    ``0..n_objects-1`` when given) and their ``values`` (finite, >= 0), all of one length.
    Traced arrays pass after the static checks (see :func:`check_kernel_array`)."""
    rows = check_kernel_array(rows, "rows", ndim=1, kind="i")
    cols = check_kernel_array(cols, "cols", ndim=1, kind="i")
    values = check_kernel_array(values, values_name, ndim=1)
    lengths = {np.shape(rows)[0], np.shape(cols)[0], np.shape(values)[0]}
    if len(lengths) > 1:
        raise ValueError(f"rows, cols and {values_name} must have one length, got "
                         f"{np.shape(rows)[0]}, {np.shape(cols)[0]} and {np.shape(values)[0]}")
    if not traced(values) and np.shape(values)[0] and float(np.min(np.asarray(values))) < 0:
        raise ValueError(f"{values_name} must be non-negative")
    if n_objects is not None:
        check_kernel_ids(rows, "rows", n_objects)
        check_kernel_ids(cols, "cols", n_objects)
    else:
        for ids, name in ((rows, "rows"), (cols, "cols")):
            if not traced(ids) and np.shape(ids)[0] and int(np.min(np.asarray(ids))) < 0:
                raise ValueError(f"{name} must hold object ids >= 0")
    return rows, cols, values


__all__ += ["check_step_scalar", "check_step_data", "check_step_weights"]


def check_step_scalar(value: Any, name: str, *, minimum: float = 0.0, integer: bool = False,
                      optional: bool = False) -> Any:
    """A scalar argument of a public ``*_step`` (a penalty, a tolerance, a count), unchanged.

    A concrete value must be a real number (an integer with ``integer``), finite and
    ``>= minimum``, or a ``TypeError`` / ``ValueError`` names ``name``; a traced one passes
    (the step then runs inside a compiled caller, which validated its own inputs), and so
    does ``None`` when ``optional``.
    """
    import jax

    if (optional and value is None) or traced(value):
        return value
    host = np.asarray(jax.device_get(value)) if isinstance(value, jax.Array) else value
    if integer:
        if isinstance(host, np.ndarray) and host.ndim == 0 and host.dtype.kind in "iu":
            host = host.item()
        check_int(host, name, minimum=int(math.ceil(minimum)))
        return value
    v = _check_real_scalar(host, name)
    if not (np.isfinite(v) and v >= minimum):
        raise ValueError(f"{name} must be a finite number >= {minimum:g}, got {value!r}")
    return value


def check_step_data(X: Any, labels: Any, centers: Any, dtype: Any, name: str = "X") -> Any:
    """``X`` of a public ``*_step`` against the state it steps: a finite 2-D array with one
    row per state label and the centres' columns, whose squared distances fit ``dtype`` (the
    state's: :func:`check_point_range`), or a ``ValueError`` naming ``name``.  Returned as
    :func:`check_kernel_array` gives it (a tracer passes after the static checks)."""
    X = check_kernel_array(X, name, ndim=2, min_rows=1)
    check_rows_match(X, name, labels)
    d = np.shape(centers)[-1]
    if np.shape(X)[1] != d:
        raise ValueError(f"{name} has {np.shape(X)[1]} columns but the state's centres {d}")
    if not traced(X):
        check_point_range(np.asarray(X), name, dtype)
    return X


def check_step_weights(sample_weight: Any, X: Any, name: str = "sample_weight") -> Any:
    """Row weights of a public ``*_step``: None, or a finite non-negative 1-D array with one
    entry per row of ``X`` (zero weights mark padding rows), or a ``ValueError`` /
    ``TypeError`` naming ``name``; a tracer passes after the static checks."""
    if sample_weight is None:
        return None
    w = check_kernel_array(sample_weight, name, ndim=1)
    if np.shape(w)[0] != np.shape(X)[0]:
        raise ValueError(f"{name} has length {np.shape(w)[0]} but X has {np.shape(X)[0]} rows")
    if not traced(w) and bool(np.any(np.asarray(w) < 0)):
        raise ValueError(f"{name} must be non-negative")
    return w


__all__ += ["check_kernel_points"]


def check_kernel_points(**arrays: Any) -> None:
    """Concrete point sets of a public distance kernel (``X=..., C=...``): their squared
    distances must be numbers of the working dtype (float32 unless ``jax_enable_x64``), or a
    ``ValueError`` names the array.  Overflow: an array with ``|x|`` beyond
    ``sqrt(finfo.max / (4 d))`` (:func:`check_point_range`).  Underflow: every value of every
    array below ``sqrt(finfo.tiny)`` but not all zero, where every squared distance flushes to
    zero (the first array is named).  Traced arrays are skipped (the compiled caller works in
    its unit frame, :func:`unit_frame`)."""
    concrete = {k: v for k, v in arrays.items() if v is not None and not traced(v)}
    if not concrete:
        return
    biggest = 0.0
    for name, v in concrete.items():
        host = np.asarray(v)
        if host.ndim != 2 or host.dtype.kind != "f" or not host.size:
            continue
        wd = working_dtype(host.dtype)
        check_point_range(host, name, wd)
        biggest = max(biggest, float(np.max(np.abs(host))))
    if biggest == 0.0:
        return
    first = next(iter(concrete))
    wd = working_dtype(np.asarray(concrete[first]).dtype)
    floor = math.sqrt(float(np.finfo(wd).tiny))
    if biggest < floor:
        raise ValueError(f"{first} has values only up to {biggest:.3g}, whose squared distances "
                         f"underflow {wd.name} (below {floor:.3g} every one flushes to zero); "
                         f"rescale {first}")


__all__ += ["check_run_finite"]


def check_run_finite(values: Any, name: str, what: str, dtype: Any) -> None:
    """After a run whose scale does not follow its data (a penalty in fixed units): a
    ``ValueError`` naming the data argument ``name`` when any of ``values`` (its parameters,
    its objective) overflowed to infinity or NaN in ``dtype``, instead of a NaN result."""
    import jax

    leaves = jax.tree_util.tree_leaves(values)
    if all(bool(np.all(np.isfinite(np.asarray(v)))) for v in leaves):
        return
    dt = np.dtype(dtype).name
    raise ValueError(f"{name} are too large for {what} in {dt}: its weights or objective "
                     f"overflowed (its penalty does not scale with {name}); rescale {name} (e.g. "
                     f"standardise the features) or enable float64 (jax_enable_x64)")


__all__ += ["check_kernel_positive"]


def check_kernel_positive(value: Any, name: str) -> Any:
    """A width or variance of a public JAX kernel (``sigma2``, ``smooth_std``), unchanged: a
    concrete value (a scalar or an array of them) must be real, finite and > 0, or a
    ``ValueError`` / ``TypeError`` names ``name`` (0 divides by zero, a negative width squares
    to a positive one silently); a traced one passes."""
    import jax

    if traced(value):
        return value
    host = np.asarray(jax.device_get(value)) if isinstance(value, jax.Array) else np.asarray(value)
    if host.dtype.kind not in "iuf" or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    if not bool(np.all(np.isfinite(host))) or not bool(np.all(host > 0)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value
