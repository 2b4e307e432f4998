"""State detection in time-ordered data, before and after genetic-algorithm denoising.

* :func:`run_compare_temporal` -- the job behind ``bayesclust compare --model temporal``: on a
  time-ordered sequence (the synthetic DS1 / DS2 of :func:`bayesclust.datasets.temporal_states`,
  or a data file whose rows are in time order), the states found by evidence accumulation of
  a spectral ensemble (:func:`bayesclust.inference.consensus.temporal.temporal_states`), the block the
  genetic algorithm removes (:func:`bayesclust.inference.consensus.temporal.denoise_sequence`), the
  states of the kept samples, and the time-ordered co-association before and after
  (Medina & Fred, SIMBAD deliverable D2.3, temporal study).

Like every job, this module sits at the top of the import graph.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _validation as V
from .. import datasets
from ..inference.consensus.temporal import denoise_sequence, temporal_states
from ._common import save_figure, timed, write_outputs

__all__ = ["run_compare_temporal", "TEMPORAL_DATA"]

#: The built-in sequences: name -> kind of :func:`bayesclust.datasets.temporal_states`.
TEMPORAL_DATA = {"temporal-ds1": "DS1", "temporal-ds2": "DS2"}
#: The window of :func:`~bayesclust.inference.consensus.temporal.temporal_states` (its default).
WINDOW = 10


def _load(data: str, seed: int):
    if data in TEMPORAL_DATA:
        return datasets.temporal_states(seed, TEMPORAL_DATA[data])
    if data in datasets.DATASETS:
        raise ValueError(f"--model temporal needs time-ordered data: {', '.join(TEMPORAL_DATA)} or a data file, "
                         f"got {data!r}")
    X = V.check_array(datasets.read_matrix(data), f"data in {data}")
    if X.shape[0] < 2 * WINDOW:
        raise ValueError(f"--model temporal needs a sequence of at least {2 * WINDOW} time-ordered "
                         f"rows (two windows of {WINDOW}); {data} has {X.shape[0]}")
    return X, None


def _states(res) -> list[list[int]]:
    return [[a, b, s] for a, b, s in res.states]


def run_compare_temporal(
    data: str = "temporal-ds2",
    out_dir: str | Path = "results",
    *,
    seed: int = 0,
    plot: bool = True,
    progress_bar: bool = True,
) -> dict:
    """States of a sequence before and after GA denoising, and the co-association figure.

    Writes ``compare_temporal.json`` (and ``compare_temporal.png``: the time-ordered
    co-association before and after denoising, the removed samples blank).

    Parameters
    ----------
    data : str, default "temporal-ds2"
        ``"temporal-ds1"``, ``"temporal-ds2"`` (300 samples, seed ``seed``) or a CSV / TSV /
        NPY file of time-ordered rows.
    out_dir : path
    seed : int
    plot, progress_bar : bool
        ``progress_bar`` is accepted for the CLI's sake (the job has no sampler).

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    seed = V.check_int(seed, "seed", minimum=0)
    X, y = _load(data, seed)
    before, t_before = timed(lambda: temporal_states(seed, X))
    den, t_den = timed(lambda: denoise_sequence(seed, X))
    after, t_after = timed(lambda: temporal_states(seed, X[den.kept], time_index=den.kept))
    summary = {
        "job": "compare --model temporal", "data": data, "seed": seed, "n_samples": int(X.shape[0]),
        "before": {"states": _states(before), "unambiguous": before.unambiguous, "majority": before.majority,
                   "seconds": t_before},
        "denoise": {"block": list(den.block), "removed": int(den.removed.sum()), "fitness": den.objective,
                    "f1": den.f1, "f2": den.f2, "generations": den.n_iter, "evaluations": den.n_evaluations,
                    "converged": den.converged, "objective_trace": den.objective_trace, "seconds": t_den},
        "after": {"states": _states(after), "unambiguous": after.unambiguous, "majority": after.majority,
                  "seconds": t_after},
    }
    if y is not None and (y == -1).any():
        tr, rm = np.flatnonzero(y == -1), np.flatnonzero(den.removed)
        summary["transition_coverage"] = np.intersect1d(tr, rm).size / tr.size
    lines = [f"temporal states on {data} (n = {X.shape[0]}, seed {seed})",
             f"  before denoising: {len(before.states)} runs, {before.n_states} states, "
             f"{'unambiguous' if before.unambiguous else 'ambiguous'} ({before.majority}/5 linkages agree)",
             f"  GA removed samples {den.block[0]}..{den.block[1]} (fitness {den.objective:.3f}, "
             f"{den.n_iter} generations, {den.n_evaluations} evaluations, {t_den:.1f} s)",
             f"  after denoising: {len(after.states)} runs, {after.n_states} states, "
             f"{'unambiguous' if after.unambiguous else 'ambiguous'} ({after.majority}/5 linkages agree)"]
    if "transition_coverage" in summary:
        lines.append(f"  the removed block covers {100 * summary['transition_coverage']:.0f} % of the transition")

    def figure(filename):
        from ..plotting import _pyplot, plot_temporal_coassociation

        fig, axes = _pyplot().subplots(1, 2, figsize=(9, 4))
        plot_temporal_coassociation(before.coassociation, states=before.states, ax=axes[0], title="before denoising")
        plot_temporal_coassociation(after.coassociation, time_index=den.kept, n_samples=X.shape[0],
                                    states=after.states, ax=axes[1], title="after denoising")
        save_figure(fig, filename)

    lines.append(write_outputs(summary, out_dir, "compare_temporal", figure if plot else None))
    summary["report"] = "\n".join(lines)
    return summary
