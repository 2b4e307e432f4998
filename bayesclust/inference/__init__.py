"""Algorithms that fit the models in :mod:`bayesclust.models`, hard limits included."""

from .dp_means import DPMeansResult, dp_means, farthest_first_lambda
from .hard_hdp import HardHDPResult, hard_hdp, hard_hdp_penalties

__all__ = [
    "DPMeansResult",
    "dp_means",
    "farthest_first_lambda",
    "HardHDPResult",
    "hard_hdp",
    "hard_hdp_penalties",
]
