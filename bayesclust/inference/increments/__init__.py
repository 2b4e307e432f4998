"""Dissimilarity increments: the SL-DID family and G-DID, Figueiredo & Jain's mixtures (GMD),
GMDID / KMDID and MAP-DID.

Nothing is re-exported here: ``bayesclust.inference.increments.gmd`` is always the module.
"""
