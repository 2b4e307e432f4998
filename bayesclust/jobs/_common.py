"""What every ``bayesclust compare`` job shares: timing, data loading, the JSON
summary and the figure on disk, and the sampler's convergence fields."""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .. import _native, datasets, metrics
from .. import _validation as V


def timed(fn: Callable):
    """``(fn(), seconds)``."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def finite(v):
    """A float, or ``None`` for a missing or non-finite value (JSON has no NaN)."""
    return None if v is None or not np.isfinite(v) else float(v)


def load_data(data: str, seed: int, labels: str | None = None):
    """A built-in data set by name, or a CSV/TSV/NPY file: ``(X, y or None)``.

    Parameters
    ----------
    data : str
        A name of :data:`bayesclust.datasets.DATASETS` or a data file.
    seed : int
        Seeds the synthetic built-in sets.
    labels : str, optional
        The true labels of a data file (``--labels``): a file with one label per row
        (any strings; each distinct one is a class), or else a column of ``data`` --
        its name in the header line, or its 0-based index -- which is removed from
        the features.

    Returns
    -------
    X : ndarray, shape (n, d)
    y : ndarray of int, shape (n,), or None
        Classes numbered ``0..c-1`` in sorted order of their labels; None for a file
        without ``labels``.

    Raises
    ------
    ValueError
        Naming ``--labels`` (built-in data, a column not found, a count that is not the
        data's rows) or the data file (malformed contents).
    """
    if data in datasets.DATASETS:
        if labels is not None:
            raise ValueError(f"--labels is for a data file: the built-in data set {data!r} "
                             "carries its own classes")
        if data == "three-gaussians":
            return datasets.three_gaussians(seed)
        return datasets.load(data)
    if labels is None:
        return V.check_array(datasets.read_matrix(data), f"data in {data}"), None
    if Path(labels).is_file():
        X = V.check_array(datasets.read_matrix(data), f"data in {data}")
        with open(labels, encoding="utf-8", errors="replace") as fh:
            names = [line.strip() for line in fh if line.strip()]
        if len(names) != X.shape[0]:
            raise ValueError(f"--labels {labels!r} holds {len(names)} labels (one per non-empty "
                             f"line) but the data {data!r} have {X.shape[0]} rows")
    else:
        X, names = _split_label_column(data, labels)
    return X, np.unique(np.asarray(names), return_inverse=True)[1].reshape(-1)


def load_labelled(data: str, builtin, load: Callable, labels: str | None, model: str):
    """``(X, y)`` of a job that scores against the true classes: one of its built-in data sets,
    or a data file with its ``--labels``.

    Parameters
    ----------
    data : str
        A name in ``builtin`` or a CSV / TSV / NPY file.
    builtin : collection of str
        The job's own data sets.
    load : callable
        ``load(name) -> (X, y)`` for a name in ``builtin``.
    labels : str, optional
        ``--labels`` (:func:`load_data`): required with a file, refused with a built-in set.
    model : str
        The job's ``--model`` name, for the messages.

    Returns
    -------
    X : ndarray, shape (n, d)
    y : ndarray of int, shape (n,)

    Raises
    ------
    ValueError
        An unknown name, a file without ``--labels``, ``--labels`` with a built-in set.
    """
    if data in builtin:
        if labels is not None:
            raise ValueError(f"--labels is for a data file: the built-in data set {data!r} "
                             "carries its own classes")
        return load(data)
    if not Path(data).is_file():
        raise ValueError(f"unknown data set {data!r} for --model {model}; valid: {', '.join(builtin)}, "
                         "or a data file with --labels")
    if labels is None:
        raise ValueError(f"--model {model} scores against the true classes: give --labels COLUMN|FILE "
                         f"for the data file {data}")
    return load_data(data, 0, labels)


def _split_label_column(data: str, column: str):
    """``(X, labels)``: the features and the label column ``column`` of a data file."""
    p = Path(data)
    if not p.is_file():
        raise ValueError(f"data file {data!r} does not exist")
    if p.suffix == ".npy":
        M = datasets.read_matrix(data)
        j = _column_index(column, None, M.shape[1], data)
        labels = [repr(float(v)) for v in M[:, j]]
        return V.check_array(np.delete(M, j, axis=1), f"data in {data}"), labels
    header, lines = V.delimited_rows(p)
    if header is None and not lines:
        raise ValueError(f"data file {data!r} contains no data")
    width = len(lines[0][1]) if lines else len(header)
    j = _column_index(column, header, width, data)
    rows, labels = [], []
    for lineno, fields in lines:
        if len(fields) != width:
            raise ValueError(f"data file {data!r} is malformed: line {lineno} has {len(fields)} "
                             f"fields, the rows above have {width}")
        labels.append(fields.pop(j))
        bad = [f for f in fields if not V.is_number(f)]
        if bad:
            raise ValueError(f"data file {data!r} is malformed: line {lineno} has a field "
                             f"{bad[0]!r} that is not a number")
        rows.append([float(f) for f in fields])
    if not rows or width < 2:
        raise ValueError(f"data file {data!r} has no feature left once the --labels column "
                         "is removed" if rows else f"data file {data!r} contains no data")
    return V.check_array(np.asarray(rows, dtype=float), f"data in {data}"), labels


def _column_index(column: str, header, width: int, data: str) -> int:
    if header is not None and column in header:
        return header.index(column)
    try:
        j = int(column)
    except ValueError:
        names = "" if header is None else f" (columns: {', '.join(header)})"
        raise ValueError(f"--labels {column!r} is neither a file nor a column of {data!r}"
                         f"{names}") from None
    if not 0 <= j < width:
        raise ValueError(f"--labels {column!r}: column index out of range for {data!r}, which "
                         f"has {width} columns (0 to {width - 1})")
    return j


def convergence(post, site: str = "n_clusters") -> dict:
    """Rank-normalised R-hat and bulk ESS of one scalar of a posterior (``None`` if unknown)."""
    diag = post.diagnostics().get(site, {})
    return {"rhat": finite(diag.get("rhat")), "ess_bulk": finite(diag.get("ess_bulk"))}


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def replace_atomically(target: Path, write: Callable) -> None:
    """``write(tmp)`` into a temporary file beside ``target``, then rename it onto ``target``.

    A reader never sees half a file, and a failed write leaves the old one in place.
    """
    # A fresh name in the same folder (so the rename is atomic) with the target's suffix (which
    # tells matplotlib the format), created with the user's umask like the target would be.
    tmp = target.with_name(f".{target.stem}.{os.getpid()}.{secrets.token_hex(4)}{target.suffix}")
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_outputs(summary: dict, out_dir, stem: str, figure: Callable | None = None) -> str:
    """Write ``<stem>.json`` (and ``<stem>.png`` by ``figure(path)``) into ``out_dir``, atomically.

    Each file is written beside its target under a temporary name and renamed onto it,
    the figure first: a reader sees the previous files or the new ones, never a partial
    one, and a JSON never names a figure that failed.  Records in ``summary`` the figure's
    path (``"figure"``) and whether the job's hard limits and samplers ran the native CPU
    kernels (``"native_kernels"``, :func:`bayesclust._native.used_on`: the two paths give
    different random streams, and near-ties may go either way), and returns the report's
    last line, ``"wrote ..."``.
    """
    summary.setdefault("native_kernels", _native.used_on())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / f"{stem}.json"]
    if figure is not None:
        replace_atomically(out / f"{stem}.png", figure)
        summary["figure"] = str(out / f"{stem}.png")
        written.append(out / f"{stem}.png")
    text = json.dumps(summary, indent=2, default=_json_default)
    replace_atomically(written[0], lambda p: p.write_text(text))
    return "wrote " + " and ".join(str(p) for p in written)


def path_settings(num_warmup: int, num_samples: int, num_chains: int) -> dict:
    """The limit path's settings in a job: :func:`~bayesclust.comparison.path.limit_path`'s
    defaults (30 warm-up sweeps and 20 draws per level, 16 chains), cut down for a short job:
    at most the job's sampler sweeps per level and four path chains per sampler chain."""
    return {"num_warmup": min(30, int(num_warmup)), "num_samples": min(20, int(num_samples)),
            "num_chains": max(2, min(16, 4 * int(num_chains)))}


#: What a limit path collapsed onto, by its ``stop`` (``{hard}``: the hard limit's name).
PATH_STOPS = {
    "hard": "collapsed onto the {hard} partition",
    "lower_objective": "collapsed onto a partition with a LOWER {hard} objective than the {hard} "
                       "partition ({hard} stopped in a local optimum)",
    "floor": "reached its floor {t} before collapsing",
    "grid": "ended with its grid",
}


def path_summary(path) -> dict:
    """A :class:`~bayesclust.comparison.path.LimitPath` as JSON-ready values (any family)."""
    from ..comparison.report import hard_partition

    best = path.best_labels
    hard_labels = hard_partition(path.hard)
    return {
        "model": path.model, "hard_name": path.hard_name,
        "sampler": "the family's sampler, an annealed population (resampled between levels, "
                   "one chain restarted per level at the hard algorithm's start)",
        "temperature_name": path.temperature_name,
        "temperature": path.temperature.tolist(),
        "relative_temperature": path.relative_temperature.tolist(),
        "nmi_point_to_hard": path.nmi_point.tolist(),
        "nmi_draws_to_hard": path.nmi_draws.tolist(),
        "p_k_hard": path.p_k_hard.tolist(),
        "k_mean": path.k_mean.tolist(),
        "k_median": path.k_median.tolist(),
        "k_low": path.k_low.tolist(),
        "k_high": path.k_high.tolist(),
        "objective_point": path.objective_point.tolist(),
        "objective_best_draw": path.objective_best.tolist(),
        "hard_objective": path.hard_objective,
        "stop": path.stop,
        "lower_objective_found": path.lower_objective,
        "best_draw": {"objective": float(np.min(path.objective_best)),
                      "k": metrics.n_clusters(best),
                      "nmi_to_hard": metrics.nmi(hard_labels, best)},
    }


def path_report(path) -> str:
    """The report's lines of a limit path: per level P(k = k_hard), NMI, objective; its stop."""
    from ..comparison.report import hard_partition

    t, hard = path.temperature_name, path.hard_name
    rows = [f"limit path ({path.model}, annealed; {t} / lam -> P(k = k_{hard}), NMI(point, {hard}), "
            f"k median [10-90 %], {hard} objective of the point vs of the {hard} partition):"]
    for r, p_k, nmi_, med, lo, hi, obj in zip(path.relative_temperature, path.p_k_hard,
                                              path.nmi_point, path.k_median, path.k_low,
                                              path.k_high, path.objective_point):
        rows.append(f"  {r:8.1e}  P(k) {p_k:4.2f}  NMI {nmi_:.3f}  k {med:g} [{lo:g}-{hi:g}]  "
                    f"objective {obj:.5g} vs {path.hard_objective:.5g}")
    rows.append(f"  the path {PATH_STOPS[path.stop].format(hard=hard, t=t)} at {t} / lam = "
                f"{path.relative_temperature[-1]:.1e}")
    if path.lower_objective:
        best = path.best_labels
        rows.append(f"  finding: the sampler found a partition with {hard} objective "
                    f"{np.min(path.objective_best):.5g} < the {hard} partition's {path.hard_objective:.5g} "
                    f"(k = {metrics.n_clusters(best)}, NMI to {hard} "
                    f"{metrics.nmi(hard_partition(path.hard), best):.3f})")
    return "\n".join(rows)


#: The PNG text chunk in which a job's figure records the settings that made it.
SETTINGS_KEY = "bayesclust settings"


def comparison_figure(report, filename, *, X=None, title=None, settings: dict | None = None) -> None:
    """Draw :func:`bayesclust.plotting.plot_comparison` of ``report`` into ``filename``."""
    from ..plotting import plot_comparison

    save_figure(plot_comparison(report, X=X, title=title), filename, settings=settings)


def save_figure(fig, filename, *, settings: dict | None = None) -> None:
    """Lay out, write at 100 dpi and close a figure.

    ``settings`` (JSON-ready) go into the PNG's text chunk :data:`SETTINGS_KEY`, so a
    figure says which run drew it (``docs/compare.png`` is checked against the CLI's
    defaults this way, not by comparing images).
    """
    fig.tight_layout()
    metadata = None
    if settings is not None:
        metadata = {SETTINGS_KEY: json.dumps(settings, sort_keys=True, default=_json_default)}
    fig.savefig(filename, dpi=100, metadata=metadata)
    import matplotlib.pyplot as plt

    plt.close(fig)
