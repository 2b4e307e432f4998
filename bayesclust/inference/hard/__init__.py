"""Hard (small-variance) limits and their kin: DP-means, the hard HDP, k-means, kernel and
spectral DP-means and the penalised normalised cut.

Nothing is re-exported here: ``bayesclust.inference.hard.dp_means`` is always the module.
"""
