"""Information-theoretic clustering: SMIC (with LSMI) and CEC-IB.

Nothing is re-exported here: ``bayesclust.inference.information.smic`` is always the module.
"""
