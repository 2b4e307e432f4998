"""Every public ``*Result`` NamedTuple against the names table of docs/architecture.md.

The table ("Names: one name per idea") says: what an algorithm optimises is ``objective``
and its trace ``objective_trace``; cluster means in a result are ``centers``; a variance is
``sigma2``, never a standard deviation.  So no result field is named ``inertia``,
``log_likelihood``, ``message_length`` (or ``*_trace`` of them), ``spread`` or ``means``,
and a result of an iterative algorithm (one with ``n_iter``) also has ``objective``,
``objective_trace`` and ``converged``.  The results are found by walking
``bayesclust.__all__`` and the ``__all__`` of every public module of the package.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import bayesclust

#: Field names the names table rules out of a result, and the name it uses instead.
FORBIDDEN = {
    "inertia": "objective",
    "log_likelihood": "objective",
    "log_likelihood_trace": "objective_trace",
    "message_length": "objective",
    "message_length_trace": "objective_trace",
    "spread": "sigma2 (a variance) or a clear name of a standard deviation",
    "means": "centers",
}
#: What an iterative algorithm's result carries besides ``n_iter``.
ITERATIVE = ("objective", "objective_trace", "converged")

#: Results of iterative algorithms that must have ``n_iter`` (a result without it would
#: pass the iterative check by not looking iterative).
MUST_BE_ITERATIVE = {
    "bayesclust.inference.hard.kmeans.KMeansResult",
    "bayesclust.inference.hard.dp_means.DPMeansResult",
    "bayesclust.inference.hard.kl_means.KLMeansResult",
    "bayesclust.inference.hard.hard_hdp.HardHDPResult",
    "bayesclust.inference.increments.gmd.GMDResult",
    "bayesclust.inference.information.cecib.CECIBResult",
    "bayesclust.inference.consensus.acccs.ACCCSResult",
    "bayesclust.inference.consensus.aspect_em.AspectEMResult",
    "bayesclust.inference.consensus.mixture_of_ensembles.MixtureEnsembleResult",
    "bayesclust.inference.discriminative.dc_baselines.MoGResult",
    "bayesclust.inference.discriminative.dc_baselines.MDA2Result",
    "bayesclust.structured.spom.SPOMResult",
    "bayesclust.structured.online.OnlineProximalResult",
}


def _public_modules():
    yield bayesclust
    for info in pkgutil.walk_packages(bayesclust.__path__, "bayesclust."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or parts[0] in ("cli", "plotting"):
            continue
        yield importlib.import_module(info.name)


def _results() -> dict:
    found = {}
    for mod in _public_modules():
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if (inspect.isclass(obj) and issubclass(obj, tuple) and hasattr(obj, "_fields")
                    and obj.__name__.endswith("Result")):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


RESULTS = _results()


def _cases():
    for qualname in sorted(RESULTS):
        yield pytest.param(qualname, id=qualname.rsplit(".", 1)[-1])


def test_the_walk_finds_the_results():
    assert len(RESULTS) >= 25
    assert MUST_BE_ITERATIVE <= set(RESULTS)


@pytest.mark.parametrize("qualname", list(_cases()))
def test_result_fields_follow_the_names_table(qualname):
    fields = RESULTS[qualname]._fields
    wrong = {f: FORBIDDEN[f] for f in fields if f in FORBIDDEN}
    assert not wrong, f"{qualname}: rename {wrong}"
    iterative = "n_iter" in fields or qualname in MUST_BE_ITERATIVE
    if iterative:
        missing = [f for f in ("n_iter",) + ITERATIVE if f not in fields]
        assert not missing, f"{qualname} (an iterative algorithm's result) lacks {missing}"
