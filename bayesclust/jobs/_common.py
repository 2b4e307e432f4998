"""What every ``bayesclust compare`` job shares: timing, data loading, the JSON
summary and the figure on disk, and the sampler's convergence fields."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .. import _native, datasets
from .. import _validation as V


def timed(fn: Callable):
    """``(fn(), seconds)``."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def finite(v):
    """A float, or ``None`` for a missing or non-finite value (JSON has no NaN)."""
    return None if v is None or not np.isfinite(v) else float(v)


def load_data(data: str, seed: int):
    """A built-in data set by name, or a CSV/TSV/NPY file (no true labels): ``(X, y or None)``."""
    if data in datasets.DATASETS:
        if data == "three-gaussians":
            return datasets.three_gaussians(seed)
        return datasets.load(data)
    return V.check_array(datasets.read_matrix(data), f"data in {data}"), None


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


def write_outputs(summary: dict, out_dir, stem: str, figure: Callable | None = None) -> str:
    """Write ``<stem>.json`` (and ``<stem>.png`` by ``figure(path)``) into ``out_dir``.

    Records in ``summary`` the figure's path (``"figure"``) and whether the job's
    hard limits and samplers ran the native CPU kernels (``"native_kernels"``,
    :func:`bayesclust._native.used_on`: the two paths give different random
    streams, and near-ties may go either way), and returns the report's last
    line, ``"wrote ..."``.
    """
    summary.setdefault("native_kernels", _native.used_on())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / f"{stem}.json"]
    if figure is not None:
        figure(out / f"{stem}.png")
        summary["figure"] = str(out / f"{stem}.png")
        written.append(out / f"{stem}.png")
    written[0].write_text(json.dumps(summary, indent=2, default=_json_default))
    return "wrote " + " and ".join(str(p) for p in written)


def save_figure(fig, filename) -> None:
    """Lay out, write at 100 dpi and close a figure."""
    fig.tight_layout()
    fig.savefig(filename, dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
