"""Algorithms that fit the models in :mod:`bayesclust.models`, hard limits included.

One module per algorithm family; the public functions are re-exported by :mod:`bayesclust`.
Nothing is re-exported here, so ``bayesclust.inference.hard.dp_means`` is always the module (a
function of the same name would shadow it).
"""
