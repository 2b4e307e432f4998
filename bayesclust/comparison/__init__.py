"""Sampled against hard: a model's posterior beside its hard (small-variance) limit.

* :mod:`~bayesclust.comparison.report` -- :func:`compare`, the :class:`ComparisonReport` of both
  sides (any family: from the hard result's type, or ``family=``).
* :mod:`~bayesclust.comparison.path` -- :func:`limit_path`, the posterior annealed down the
  family's temperature onto the hard limit, and :class:`LimitFamily`, what a model provides
  to be compared both ways.
* one module per family: :mod:`~bayesclust.comparison.dp` (the DP mixture and DP-means, and
  :func:`small_variance_path`, its path under the DP mixture's names),
  :mod:`~bayesclust.comparison.aspect` (the DP mixture of multinomials on co-association
  rows and KL-means, ``limit_path(model="aspect")``; imported on first use), ...
"""

from .dp import DPLimit, default_sigma2_max, small_variance_path
from .path import LimitFamily, LimitPath, limit_path
from .report import ComparisonReport, compare, hard_family, hard_partition, score

__all__ = ["compare", "ComparisonReport", "hard_family", "hard_partition", "score", "limit_path", "LimitFamily", "LimitPath",
           "DPLimit", "small_variance_path", "default_sigma2_max"]
