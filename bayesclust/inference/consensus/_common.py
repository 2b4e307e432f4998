"""Helpers shared by the consensus functions of this family: a co-association as sorted
upper-triangle pairs, index pairs of constraints checked, and the default grid of kernel
widths of the spectral ensembles.

Private to ``inference/consensus/``; its names are imported by the family's modules only.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import scipy.sparse as sp

from .coassociation import CoAssociation, coassociation


def _is_float_square(a: Any) -> bool:
    """A square floating-point array (a co-association matrix, not an ensemble of labels)."""
    if not isinstance(a, (np.ndarray, jax.Array, list, tuple)):
        return False
    try:
        arr = np.asarray(a)
    except (ValueError, TypeError):
        return False
    return arr.ndim == 2 and arr.shape[0] == arr.shape[1] and arr.dtype.kind == "f"


def _as_pairs(coassoc: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Upper-triangle pairs ``(rows, cols, vals)`` (sorted by row) and the diagonal of C."""
    if isinstance(coassoc, CoAssociation):
        U = sp.coo_matrix(coassoc.normalized())
        diag = (np.asarray(coassoc.sampled) > 0).astype(np.float64)
    elif sp.issparse(coassoc) or _is_float_square(coassoc):
        M = sp.csr_matrix(coassoc if sp.issparse(coassoc) else np.asarray(coassoc), dtype=np.float64)
        if M.shape[0] != M.shape[1]:
            raise ValueError(f"coassoc must be square, got shape {M.shape}")
        if M.nnz and not np.all(np.isfinite(M.data)):
            raise ValueError("coassoc contains NaN or infinite values")
        if M.nnz and (M.data.min() < 0 or M.data.max() > 1):
            raise ValueError("coassoc must have entries in [0, 1]")
        if M.nnz and abs(M - M.T).max() > 1e-12:
            raise ValueError("coassoc must be symmetric")
        diag = M.diagonal().astype(np.float64)
        U = sp.coo_matrix(sp.triu(M, 1))
    else:
        return _as_pairs(coassociation(coassoc))
    U.eliminate_zeros()
    n = int(U.shape[0])
    if n < 2:
        raise ValueError(f"coassoc must describe at least 2 objects, got {n}")
    order = np.lexsort((U.col, U.row))
    return (U.row[order].astype(np.int32), U.col[order].astype(np.int32),
            np.asarray(U.data[order], np.float64), diag)



def _check_pairs(pairs: Any, name: str, n: int | None) -> np.ndarray:
    """(m, 2) int64 array of index pairs; None or empty gives shape (0, 2)."""
    if pairs is None:
        return np.zeros((0, 2), np.int64)
    a = np.asarray(pairs)
    if a.size == 0:
        return np.zeros((0, 2), np.int64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{name} must be an (m, 2) array of index pairs, got shape {a.shape}")
    if not (np.issubdtype(a.dtype, np.integer) or (np.issubdtype(a.dtype, np.floating)
                                                   and np.all(np.isfinite(a)) and np.all(a == np.round(a)))):
        raise TypeError(f"{name} must hold integer indices, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if a.min() < 0 or (n is not None and a.max() >= n):
        bad = a[(a < 0).any(axis=1) | ((a >= n).any(axis=1) if n is not None else False)][0]
        raise ValueError(f"{name} has the pair {tuple(bad.tolist())} with an index outside [0, {n})")
    same = a[:, 0] == a[:, 1]
    if np.any(same):
        raise ValueError(f"{name} has the self-pair {tuple(a[same][0].tolist())}")
    return a



def _default_sigmas() -> np.ndarray:
    return np.round(np.arange(3, 31) / 10.0, 1)

