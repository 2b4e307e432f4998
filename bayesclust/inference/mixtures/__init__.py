"""Mixture models sampled: the collapsed Gibbs samplers of the DP and HDP Gaussian mixtures,
NUTS / SVI on any program, the ``Posterior`` their draws make, Bayes point estimates of a
partition and the samplers' convergence checks.

Nothing is re-exported here: ``bayesclust.inference.mixtures.gibbs`` is always the module.
"""
