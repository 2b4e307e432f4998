"""The scikit-learn facade: one module per family, each estimator delegating its
numerics to a function of :mod:`bayesclust.inference`.

This is the only package of bayesclust whose classes derive from scikit-learn's.
Each estimator follows the scikit-learn contract (``fit`` / ``predict`` /
``fit_predict``, parameters stored verbatim in ``__init__``, learned attributes
with a trailing underscore, ``validate_data``).  Every clustering estimator sets
``labels_`` (values in ``0..n_clusters_-1``) and ``n_clusters_``, and issues a
:class:`SingleClusterWarning` when ``fit`` ends with one cluster on 10 or more points.
"""

from ._base import SingleClusterWarning as SingleClusterWarning  # public: bayesclust.SingleClusterWarning
from .cecib import CECIB
from .consensus import (
    ACCCS,
    AspectConsensus,
    ConstrainedEAC,
    EmbeddedConsensus,
    EvidenceAccumulation,
    HypergraphConsensus,
    KLMeansConsensus,
    PairwiseConsensus,
)
from .did import GMDID, SLAGLO, SLDID, MAPDIDClassifier
from .discriminative import DiscriminativeClustering, HardDC
from .dp import DPGaussianMixture, DPMeans
from .hdp import HardHDP, HDPGaussianMixture
from .smic import SMIC
from .spectral import PenalizedNormalizedCut, SpectralDPMeans

__all__ = [
    "DPMeans",
    "DPGaussianMixture",
    "HardHDP",
    "HDPGaussianMixture",
    "DiscriminativeClustering",
    "HardDC",
    "CECIB",
    "SpectralDPMeans",
    "PenalizedNormalizedCut",
    "SMIC",
    "EvidenceAccumulation",
    "ACCCS",
    "ConstrainedEAC",
    "AspectConsensus",
    "EmbeddedConsensus",
    "HypergraphConsensus",
    "PairwiseConsensus",
    "KLMeansConsensus",
    "SLDID",
    "SLAGLO",
    "GMDID",
    "MAPDIDClassifier",
]
