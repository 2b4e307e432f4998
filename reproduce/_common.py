"""The report's row schema, the seeds' summary, the JSONL store and the markdown rendering.

A row is one number of a paper: where it is printed (table / figure / section), the data set,
the protocol in a few words, the paper's value, ours (the median and spread over the seeds run,
and how many seeds), the tolerance and whether ours is within it, and -- where it is not -- the
``docs/deviations.md`` entry that explains the miss.  Every "ours" is computed by the paper
module from the package's public code when the report is run.
"""

from __future__ import annotations

import fcntl
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

# The package's functions that ``bayesclust`` itself does not export, by module path -- the only
# place in reproduce/ that names one.
from bayesclust.datasets import dc_toy, did_gaussian
from bayesclust.inference.consensus.embedding import EXTRACTORS
from bayesclust.inference.discriminative.dc_map import dc_map
from bayesclust.inference.hard.kmeans import kmeans
from bayesclust.jobs.did import DID_DATA
from bayesclust.jobs.did import TABLE3 as DID_TABLE3

__all__ = ["DID_DATA", "DID_TABLE3", "EXTRACTORS", "dc_map", "dc_toy", "did_gaussian", "kmeans", "row", "seeds", "summary", "within_abs", "at_least"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results.jsonl"
REPORT = ROOT / "REPRODUCTION.md"
DEVIATIONS = "docs/deviations.md"


def seeds(full: int, quick: int, is_quick: bool) -> range:
    """The seeds a row runs: ``full`` of them in the report, ``quick`` with ``--quick``."""
    return range(quick if is_quick else full)


def summary(values: Sequence[float]) -> dict:
    """Median, quartiles, min and max of the per-seed values (NaN-free), and their number."""
    v = np.asarray([float(x) for x in values], dtype=float)
    if v.size == 0:
        return {"median": None, "q25": None, "q75": None, "min": None, "max": None, "n": 0}
    q25, med, q75 = np.percentile(v, [25, 50, 75])
    return {"median": float(med), "q25": float(q25), "q75": float(q75),
            "min": float(v.min()), "max": float(v.max()), "mean": float(v.mean()), "n": int(v.size)}


def row(*, id: str, paper: str, where: str, dataset: str, protocol: str, paper_value,
        values: Sequence[float], tolerance: str, ok: bool | Callable[[dict], bool],
        deviation: str | None = None, note: str = "", statistic: str = "median") -> dict:
    """One row of the report.

    ``values``: ours, one number per seed (or per draw / ensemble / run) -- the report shows
    their median and spread.  ``ok``: whether ours is within ``tolerance`` (a bool computed by
    the caller, or a function of the summary).  ``statistic``: which summary the tolerance is
    stated on (``"median"`` or ``"mean"``; the paper's protocol says which).  ``deviation``: the
    anchor of the ``docs/deviations.md`` entry that explains a miss.
    """
    s = summary(values)
    within = bool(ok(s) if callable(ok) else ok)
    return {"id": id, "paper": paper, "where": where, "dataset": dataset, "protocol": protocol,
            "paper_value": paper_value, "ours": s, "values": [float(x) for x in values],
            "statistic": statistic, "tolerance": tolerance, "ok": within,
            "deviation": deviation, "note": note}


def within_abs(target: float, tol: float, statistic: str = "median") -> Callable[[dict], bool]:
    """``|ours - target| <= tol`` on the summary's ``statistic``."""
    return lambda s: s[statistic] is not None and abs(s[statistic] - target) <= tol + 1e-12


def at_least(bound: float, statistic: str = "median") -> Callable[[dict], bool]:
    return lambda s: s[statistic] is not None and s[statistic] >= bound - 1e-12


def timed_rows(module: str, paper: str, make: Callable[[bool], Iterable[dict]], quick: bool) -> list[dict]:
    """Run one paper module's rows, tagging each with the module, the run's mode and its seconds."""
    out = []
    t0 = time.perf_counter()
    for r in make(quick):
        t1 = time.perf_counter()
        r.update(module=module, quick=quick, seconds=round(t1 - t0, 1))
        t0 = t1
        out.append(r)
        print(json.dumps({k: r[k] for k in ("id", "paper_value", "ours", "ok")}), flush=True)
    return out


# --------------------------------------------------------------------------- store


def stored_rows() -> list[dict]:
    if not RESULTS.exists():
        return []
    return [json.loads(line) for line in RESULTS.read_text().splitlines() if line.startswith("{")]


def merge(new: list[dict], modules: Iterable[str]) -> list[dict]:
    """The stored rows of the other modules followed by ``new`` (those of ``modules`` replaced),
    as ``benchmarks/run_all.py --only`` keeps the other scripts' rows of BENCHMARKS.md."""
    modules = set(modules)
    return [r for r in stored_rows() if r.get("module") not in modules] + new


def write(rows: list[dict]) -> None:
    RESULTS.write_text("".join(json.dumps(r) + "\n" for r in rows))


@contextmanager
def locked() -> Iterator[None]:
    """Hold an exclusive lock on the store, so that runs of different papers started side by
    side do not drop each other's rows between their read (``merge``) and their ``write``."""
    with open(RESULTS, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- markdown


def _num(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "yes" if x else "no"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    a = abs(x)
    return f"{x:.3f}" if a < 10 else f"{x:.2f}" if a < 1000 else f"{x:,.0f}"


def paper_text(x) -> str:
    """The paper's value as the paper prints it (0.6595, 71.33), not rounded to our precision."""
    return f"{x:g}" if isinstance(x, float) else _num(x)


def ours_text(r: dict) -> str:
    s = r["ours"]
    if s["n"] == 0:
        return "–"
    centre = s.get(r.get("statistic", "median"), s["median"])
    if s["n"] == 1:
        return f"**{_num(centre)}** (one value)"
    label = r.get("statistic", "median")
    iqr = f"IQR {_num(s['q25'])}–{_num(s['q75'])}" if s["n"] >= 4 else ""
    rng = f"min–max {_num(s['min'])}–{_num(s['max'])}"
    spread = ", ".join(p for p in (iqr, rng) if p)
    return f"**{_num(centre)}** ({label}; {spread}; n = {s['n']})"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


README = ROOT / "README.md"
_BEGIN, _END = "<!-- reproduction summary: written by python -m reproduce -->", "<!-- end of reproduction summary -->"


def summary_table(rows: list[dict], modules: Sequence[tuple[str, str, str]]) -> list[str]:
    """Per paper: rows within tolerance / rows attempted (the README's short summary)."""
    lines = ["| paper | within tolerance / attempted |", "|---|---:|"]
    for name, paper, _ in modules:
        rs = [r for r in rows if r["module"] == name]
        lines.append(f"| {paper} | " + (f"{sum(r['ok'] for r in rs)} / {len(rs)}" if rs else "not run yet") + " |")
    lines.append(f"| **all** | **{sum(r['ok'] for r in rows)} / {len(rows)}** |")
    return lines


def update_readme(rows: list[dict], modules: Sequence[tuple[str, str, str]]) -> None:
    """Rewrite the summary between the README's two markers (if it has them)."""
    text = README.read_text()
    if _BEGIN not in text or _END not in text:
        return
    head, rest = text.split(_BEGIN, 1)
    _, tail = rest.split(_END, 1)
    README.write_text(head + _BEGIN + "\n" + "\n".join(summary_table(rows, modules)) + "\n" + _END + tail)


def render(rows: list[dict], modules: Sequence[tuple[str, str, str]]) -> str:
    """REPRODUCTION.md: a top summary, then one section per paper (``modules``: (module name,
    paper, description) in report order) with its summary line and its rows."""
    by_module: dict[str, list[dict]] = {}
    for r in rows:
        by_module.setdefault(r["module"], []).append(r)
    total_ok = sum(r["ok"] for r in rows)
    lines = [
        "# Reproduction report",
        "",
        "Every number of the seed papers that bayesclust reproduces offline, side by side with "
        "ours. Generated by `make reproduce` (`python -m reproduce`; one paper: "
        "`make reproduce PAPER=name`) from the package's public code; the raw rows, with every "
        "seed's value, are in `reproduce/results.jsonl`. *Ours* is the median over the seeds "
        "(ensembles, label draws, data draws) run, with its interquartile range and min–max, "
        "unless the row says *mean* (the paper's protocol averages); *within* compares it with "
        "the paper's value at the stated tolerance. A miss links to its entry in "
        "[docs/deviations.md](docs/deviations.md). The test suite keeps one quick row per paper "
        "(`pytest -m paper`), so a change that breaks a reproduction still fails CI; the tests "
        "that repeat a row over more seeds or data sets run in `make test-all`, and "
        "[docs/testing.md](docs/testing.md) lists which row each of them checks.",
        "",
        f"**{total_ok} of {len(rows)} rows within tolerance.**",
        "",
        "| paper | module | rows within tolerance / attempted | seconds | mode |",
        "|---|---|---:|---:|---|",
    ]
    for name, paper, _ in modules:
        rs = by_module.get(name)
        if not rs:
            lines.append(f"| {paper} | `reproduce/{name}.py` | not run yet | – | – |")
            continue
        secs = sum(r.get("seconds", 0) for r in rs)
        mode = "quick" if any(r.get("quick") for r in rs) else "full"
        lines.append(f"| [{paper}](#{name.replace('_', '-')}) | `reproduce/{name}.py` | "
                     f"{sum(r['ok'] for r in rs)} / {len(rs)} | {secs:,.0f} | {mode} |")
    for name, paper, desc in modules:
        rs = by_module.get(name, [])
        lines += ["", f"<a id=\"{name.replace('_', '-')}\"></a>", f"## {paper}", "", desc, ""]
        if not rs:
            lines.append("_Not run yet: `make reproduce PAPER=" + name + "`._")
            continue
        lines += [f"**{sum(r['ok'] for r in rs)} of {len(rs)} rows within tolerance** "
                  f"(`reproduce/{name}.py`, {sum(r.get('seconds', 0) for r in rs):,.0f} s"
                  + (", quick mode: fewer seeds" if any(r.get("quick") for r in rs) else "") + ").",
                  "",
                  "| id | table / figure | data set | protocol | paper | ours | tolerance | within | deviation |",
                  "|---|---|---|---|---:|---|---|:---:|---|"]
        for r in rs:
            dev = (f"[{r['deviation']}]({DEVIATIONS}#{r['deviation']})" if r.get("deviation") else "")
            lines.append("| " + " | ".join(_cell(c) for c in (
                f"`{r['id']}`", r["where"], r["dataset"], r["protocol"] + (f" ({r['note']})" if r.get("note") else ""),
                paper_text(r["paper_value"]), ours_text(r), r["tolerance"], "yes" if r["ok"] else "**no**", dev)) + " |")
    return "\n".join(lines) + "\n"
