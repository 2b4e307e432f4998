"""Disjoint sets of the objects ``0..n-1`` on the host: the union-find of the agglomerations.

Cutting a dendrogram at K clusters (``consensus/linkage.py``), constrained single link's
components (``consensus/constrained.py``) and SL-AGLO's merges replayed
(``increments/did_hierarchy.py``) each keep a forest of parent pointers; this is that forest,
once.  The caller decides which root a union keeps (:meth:`UnionFind.link`): a new dendrogram
node, the smaller index, the first side of a merge.

Private to the package (the underscore): algorithms import it, users do not.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class UnionFind:
    """A forest of parent pointers over ``0..n-1`` (every object its own root to begin with).

    Parameters
    ----------
    n : int
        Objects (tree nodes).
    parent : iterable of int, optional
        A forest to start from instead (``parent[v] == v`` at the roots).

    Examples
    --------
    >>> uf = UnionFind(4)
    >>> uf.link(3, 1)
    >>> uf.link(1, 0)
    >>> [uf.find(v) for v in range(4)]
    [0, 0, 2, 0]
    """

    def __init__(self, n: int = 0, parent: Iterable[int] | None = None):
        self.parent = list(range(n)) if parent is None else [int(p) for p in parent]

    def find(self, v: int) -> int:
        """The root of ``v``'s tree (the path halved on the way: later finds are shorter)."""
        parent = self.parent
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def link(self, v: int, root: int) -> None:
        """Hang ``v``'s tree under ``root`` (a root, or a node that has no parent yet)."""
        self.parent[self.find(v)] = root

    def roots(self) -> np.ndarray:
        """The root of every node, shape (n,), int64."""
        return np.fromiter((self.find(v) for v in range(len(self.parent))), np.int64, len(self.parent))
