"""Consensus clustering: ensembles, the co-association, linkages (with constraints, weights),
embeddings, hypergraph functions, ACCCS, the selection of a consensus, temporal states,
PEnCA, Topchy et al.'s mixture model, PPC and the Bayesian versions of PEnCA and PPC.

Nothing is re-exported here: ``bayesclust.inference.consensus.ppc`` is always the module.
"""
