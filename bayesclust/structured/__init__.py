"""Structured prediction with multiple kernels: SPOM and the online proximal method
(Martins, Smith, Xing, Aguiar & Figueiredo, 2011, AISTATS).

Supervised and separate from the clustering core: nothing in ``inference``, ``models``,
``estimators``, ``jobs`` or ``comparison`` imports this package. The proximity operators it
uses live in :mod:`bayesclust.structured.proximal`.
"""
