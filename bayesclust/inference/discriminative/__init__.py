"""Discriminative clustering (Kaski et al.): its optimisers and its baselines (k-means,
MoG and MDA2 by EM).

Nothing is re-exported here: ``bayesclust.inference.discriminative.discriminative`` is always
the module.
"""
