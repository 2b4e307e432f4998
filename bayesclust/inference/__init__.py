"""Algorithms that fit the models in :mod:`bayesclust.models`, hard limits included."""

from .dp_means import DPMeansResult, dp_means, farthest_first_lambda

__all__ = ["DPMeansResult", "dp_means", "farthest_first_lambda"]
