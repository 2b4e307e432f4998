"""The ``bayesclust compare --model ...`` jobs: one model fitted by sampling and by its
hard limit (and peers), a printed report, ``<job>.json`` and a figure.

One module per model (``dp``, ``hdp``, ``dc``, ``aspect``, ``consensus``, ``did``, ``temporal``), sharing
:mod:`bayesclust.jobs._common`; :func:`run_compare` dispatches.  Only the CLI (and
users who want the reports from Python) import this package.
"""

from __future__ import annotations

from pathlib import Path

from ._common import replace_atomically

__all__ = ["MODELS", "LABELLED_MODELS", "run_compare", "replace_atomically", "DP_JOB_THIN", "HDP_JOB_THIN"]

#: Gibbs sweeps per kept draw in ``compare --model dp`` (the sampler's own default,
#: ``DP_SAMPLER_DEFAULTS.thin``, is 4).  The job samples the spherical model at the DP-means
#: partition's within-cluster variance with ``rho2 = 100`` on the raw data; where the classes
#: are not spherical (Iris) its posterior of k spreads over 4-6 clusters between which it moves
#: slowly: 8 chains x 1000 draws at thin 4 leave R-hat of k at 1.073 (bulk ESS 87) on Iris for
#: seeds 0 and 1, 1.035 for seed 2, and the default command warned.  At thin 32: 1.008, 1.006,
#: 1.004 (bulk ESS > 900), for about 2 s more sampler CPU time on Iris and 2.5 s on the three
#: Gaussians (8 chains share the native kernel's vector lanes).
DP_JOB_THIN = 32

#: Sweeps per kept draw in ``compare --model hdp`` (``HDP_SAMPLER_DEFAULTS.thin`` is 8 too): on
#: ``hdp-groups`` 8 chains x 500 draws at thin 1 leave R-hat of the number of global clusters
#: at 1.028 and of the log-likelihood at 1.020 (seed 0), and the default command warned; thin 4
#: leaves 1.012 (bulk ESS 1010); thin 8 gives 1.003 and 1.006 (bulk ESS 1652).  The sampler's
#: draws take about twice thin 4's sweeps (500 warm-up + 4000 against 2500).
HDP_JOB_THIN = 8

#: The jobs that take a data file's true classes (``--labels``): ``dp`` and ``aspect`` score
#: against them, ``consensus`` and ``did`` also take their number of clusters from them, ``dc``
#: uses them as its auxiliary data.  ``hdp`` needs grouped data and ``temporal`` scores its
#: states by the transition it removes, not by classes.
LABELLED_MODELS = ("dp", "aspect", "dc", "consensus", "did")

#: The jobs, by ``--model`` name: (module, function, default data set).
MODELS = {
    "dp": ("dp", "run_compare_dp", "three-gaussians"),
    "hdp": ("hdp", "run_compare_hdp", "hdp-groups"),
    "dc": ("dc", "run_compare_dc", "dc-toy"),
    "aspect": ("aspect", "run_compare_aspect", "iris"),
    "consensus": ("consensus", "run_compare_consensus", "iris"),
    "did": ("did", "run_compare_did", "iris"),
    "temporal": ("temporal", "run_compare_temporal", "temporal-ds2"),
}


def run_compare(
    data: str | None = None,
    out_dir: str | Path = "results",
    *,
    model: str = "dp",
    n_clusters: int | None = None,
    lam: float | None = None,
    seed: int = 0,
    num_warmup: int | None = None,
    num_samples: int | None = None,
    num_chains: int | None = None,
    thin: int | None = None,
    plot: bool = True,
    progress_bar: bool = True,
    labels: str | None = None,
) -> dict:
    """Run the compare job of ``model`` (the main job: ``model="dp"``).

    The options are checked, and a data file and its labels read, before the job starts:
    a wrong combination is reported before any fitting, with nothing written.

    Parameters
    ----------
    data : str, optional
        A built-in data set or a data file; default the model's own
        (:data:`MODELS`).
    out_dir : path
        Output folder (created if missing).
    model : {"dp", "hdp", "dc", "aspect", "consensus", "did", "temporal"}
        ``"dp"``: :func:`~bayesclust.jobs.dp.run_compare_dp`; ``"hdp"``:
        :func:`~bayesclust.jobs.hdp.run_compare_hdp`; ``"dc"``:
        :func:`~bayesclust.jobs.dc.run_compare_dc`; ``"aspect"``:
        :func:`~bayesclust.jobs.aspect.run_compare_aspect`; ``"consensus"``:
        :func:`~bayesclust.jobs.consensus.run_compare_consensus`; ``"did"``:
        :func:`~bayesclust.jobs.did.run_compare_did`; ``"temporal"``:
        :func:`~bayesclust.jobs.temporal.run_compare_temporal`.
    n_clusters, lam : optional
        ``n_clusters``: clusters (``dp``: for the farthest-first lambda and the
        k-means peer; ``dc``: prototypes; ``aspect``: KL-means' and PEnCA's clusters).
        ``lam``: the DP-means penalty (``dp`` only).
    seed : int
    num_warmup, num_samples, num_chains, thin : int, optional
        Sampler settings (not used by ``consensus``; ``thin`` only by ``dp`` and ``hdp``);
        None: the job's own default, for ``dp`` and ``hdp`` the sampler's
        (:data:`bayesclust.inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`,
        :data:`~bayesclust.inference.mixtures.convergence.HDP_SAMPLER_DEFAULTS`) but ``thin``,
        :data:`DP_JOB_THIN` and :data:`HDP_JOB_THIN`.
    plot, progress_bar : bool
    labels : str, optional
        The true labels of a data file (``--labels``; the models of :data:`LABELLED_MODELS`):
        a file with one label per row, or a column of the data (name or 0-based index),
        removed from the features (:func:`bayesclust.jobs._common.load_data`).  ``consensus``
        and ``did`` need them with a data file.

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    import importlib

    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(repr(m) for m in MODELS)}, got {model!r}")
    if lam is not None and model != "dp":
        raise ValueError(f"--lam is an option of --model dp (--model {model} has no cluster penalty)")
    if n_clusters is not None and model in ("hdp", "consensus", "did", "temporal"):
        raise ValueError(f"--n-clusters is an option of --model dp, dc and aspect (--model {model} takes "
                         "the number of clusters from the true classes)")
    module, name, default = MODELS[model]
    data = default if data is None else data
    if labels is not None and model not in LABELLED_MODELS:
        why = ("its data are grouped: the built-in 'hdp-groups'" if model == "hdp" else
               "its states are runs of a time-ordered sequence, scored by the transition it removes")
        raise ValueError(f"--labels is an option of --model {', '.join(LABELLED_MODELS)} (--model {model}: "
                         f"{why})")
    from . import _common

    # Read (and validate) a data file and its labels before any fitting.
    if model in ("dp", "aspect"):
        _, y = _common.load_data(data, seed, labels)
        if y is None and n_clusters is None and (lam is None or model == "aspect"):
            need = "--n-clusters or --lam" if model == "dp" else "--n-clusters"
            raise ValueError(f"give {need} (or --labels, the true classes) for a data file "
                             f"without true labels ({data})")
    elif model in ("consensus", "did"):
        job_module = importlib.import_module(f"{__name__}.{module}")
        builtin = job_module.CONSENSUS_DATA if model == "consensus" else job_module.DID_DATA
        if data not in builtin:
            _common.load_labelled(data, builtin, None, labels, model)
    elif model == "dc" and labels is not None:
        _common.load_data(data, seed, labels)
    job = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    sampler = {name: value for name, value in (("num_warmup", num_warmup),
               ("num_samples", num_samples), ("num_chains", num_chains), ("thin", thin))
               if value is not None}
    if "thin" in sampler and model not in ("dp", "hdp", "did"):
        raise ValueError(f"--thin is an option of --model dp, hdp and did, not of --model {model}")
    if sampler and model == "temporal":
        raise ValueError("--model temporal runs no sampler: --num-warmup, --num-samples, --num-chains "
                         "and --thin are not its options")
    kwargs = {"seed": seed, "plot": plot, "progress_bar": progress_bar}
    if model == "dp":
        return job(data, out_dir, n_clusters=n_clusters, lam=lam, labels=labels, **sampler, **kwargs)
    if model == "aspect":
        return job(data, out_dir, n_clusters=n_clusters, labels=labels, **sampler, **kwargs)
    if model == "dc":
        return job(data, out_dir, n_clusters=n_clusters, labels=labels, **sampler, **kwargs)
    if model == "did":
        return job(data, out_dir, labels=labels, **sampler, **kwargs)
    if model == "hdp":
        return job(data, out_dir, **sampler, **kwargs)
    if model == "consensus":
        return job(data, out_dir, labels=labels, **kwargs)
    return job(data, out_dir, **kwargs)
