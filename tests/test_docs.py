"""The documents point only at things that exist.

docs/deviations.md cites tests as evidence and code cites its entries by anchor;
README.md and the docs link to files and name code by dotted paths.  A renamed test,
a moved file or module, a renamed function or a dropped entry must fail here, not
leave a dangling pointer.  Every deviation entry says which kind it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVIATIONS = ROOT / "docs" / "deviations.md"
TEXT_FILES = sorted(
    p for d in ("bayesclust", "tests", "benchmarks", "notebooks", "docs")
    for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md", ".ipynb") and "_build" not in p.parts
) + [ROOT / "README.md", ROOT / "BENCHMARKS.md"]


def _anchors(markdown: str) -> set[str]:
    return set(re.findall(r"^#{2,4} +([a-z0-9][a-z0-9-]*)\s*$", markdown, re.M))


def _cited_tests(markdown: str):
    """``(file, test name)`` for every ``tests/x.py::name`` and its ``::name`` continuations."""
    out = []
    for line in markdown.splitlines():
        current = None
        for m in re.finditer(r"(tests/[\w/]+\.py)?::(\w+)", line):
            current = m.group(1) or current
            if current is not None:
                out.append((current, m.group(2)))
    return out


def test_every_cited_test_exists():
    missing = []
    for file, name in _cited_tests(DEVIATIONS.read_text()):
        path = ROOT / file
        if not path.exists() or not re.search(rf"^\s*def {name}\b", path.read_text(), re.M):
            missing.append(f"{file}::{name}")
    assert not missing, "docs/deviations.md cites tests that do not exist: " + ", ".join(missing)


def test_every_anchor_pointed_at_exists():
    anchors = _anchors(DEVIATIONS.read_text())
    assert len(anchors) > 50
    dangling = []
    for path in TEXT_FILES:
        for anchor in re.findall(r"deviations\.md#([a-z0-9-]+)", path.read_text()):
            if anchor not in anchors:
                dangling.append(f"{path.relative_to(ROOT)}: #{anchor}")
    assert not dangling, dangling


@pytest.mark.parametrize("doc", ["README.md", "BENCHMARKS.md", "docs/architecture.md", "docs/deviations.md"])
def test_relative_links_resolve_inside_the_repository(doc):
    path = ROOT / doc
    bad = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        resolved = (path.parent / target).resolve()
        if not resolved.exists() or ROOT not in resolved.parents and resolved != ROOT:
            bad.append(target)
    assert not bad, f"{doc} links to {bad}"


def test_nothing_points_outside_the_repository():
    """No pointer to the specs, errata, seed files, or issue numbers a reader does not have."""
    pattern = re.compile(
        r"\.\./shared|\berrata\b|\bspec [A-Z]?\d|\bspec §|\bseed \d{3}\b|#\s*issue \d+|\bissue \d+:"
        r"|\bB\d+\.\d+\b",  # the specifications' section numbers (B3.2, B8.7.5)
        re.I,
    )
    hits = []
    for path in TEXT_FILES:
        if path == Path(__file__):
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:80]}")
    assert not hits, hits


# --------------------------------------------------------------------------- deviations' kinds

KINDS = ("choice", "departure", "non-reproduction")


def _deviation_entries(markdown: str):
    """``(anchor, line number, body lines)`` of every ``### anchor`` entry of deviations.md."""
    lines = markdown.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"^### +\S", line)]
    for i in starts:
        end = next((j for j in range(i + 1, len(lines)) if re.match(r"^#{1,3} ", lines[j])), len(lines))
        yield lines[i][4:].strip(), i + 1, lines[i + 1:end]


def test_every_deviation_entry_carries_exactly_one_kind():
    """Each entry opens with ``* **Kind:** choice | departure | non-reproduction``."""
    entries = list(_deviation_entries(DEVIATIONS.read_text()))
    assert len(entries) > 100
    bad = []
    for anchor, line, body in entries:
        kinds = [b for b in body if "**Kind:**" in b]
        first = next((b for b in body if b.strip()), "")
        m = re.fullmatch(r"\* \*\*Kind:\*\* (\S+)", first.strip())
        if len(kinds) != 1 or m is None or m.group(1) not in KINDS:
            bad.append(f"docs/deviations.md:{line}: #{anchor}: {[k.strip() for k in kinds]}")
    assert not bad, (f"every entry's first line must be '* **Kind:** <{' | '.join(KINDS)}>', "
                     "exactly once:\n" + "\n".join(bad))


# --------------------------------------------------------------------------- dotted code paths

#: File extensions: ``kernels.py``, ``compare.png`` are files, not attributes.
_FILE_SUFFIXES = {"py", "md", "png", "json", "jsonl", "ipynb", "cc", "h", "so", "csv", "tsv", "npy",
                  "txt", "toml", "yml", "yaml", "html", "pdf", "cfg", "ini"}


def _top_level_names() -> list[str]:
    """The package's top-level modules and subpackages (``kernels``, ``inference``, ...)."""
    pkg = ROOT / "bayesclust"
    return sorted({p.stem for p in pkg.iterdir()
                   if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()})


def _dotted_paths(text: str, roots: list[str]):
    """``(line number, path)`` of every dotted name rooted at one of ``roots``.

    Not a path: a file name (``docs/compare.png``, ``metrics.py``), a part of a URL or of a file
    path (preceded by ``/``), an anchor (``#...``); call parentheses and subscripts end a path.
    """
    alternatives = "|".join(map(re.escape, roots))
    pattern = re.compile(rf"(?<![\w./\\\-#])((?:{alternatives})(?:\.[A-Za-z_]\w*)+)")
    for i, line in enumerate(text.splitlines(), 1):
        for m in pattern.finditer(line):
            path = m.group(1)
            if path.rsplit(".", 1)[1] not in _FILE_SUFFIXES:
                yield i, path


def _resolves(path: str) -> bool:
    """Import the longest module prefix of ``bayesclust.<path>`` and getattr the rest."""
    import importlib

    parts = path.split(".")
    if parts[0] != "bayesclust":
        parts = ["bayesclust", *parts]
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            try:
                obj = getattr(obj, name)
            except AttributeError:
                return False
        return True
    return False


def test_dotted_code_paths_in_the_docs_resolve():
    """Every ``bayesclust.x.y``, ``kernels.padded_rows``, ``metrics.nmi``, ... in README.md,
    BENCHMARKS.md and docs/*.md, and every fully qualified ``bayesclust.x.y`` in the package's
    docstrings and comments, names something that exists.  The failure lists them all, with
    file and line, so that a move of modules can be followed up in one pass."""
    docs = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
    sources = sorted((ROOT / "bayesclust").rglob("*.py"))
    short = ["bayesclust", *_top_level_names()]
    cache: dict[str, bool] = {}
    checked, bad = 0, []
    for files, roots in ((docs, short), (sources, ["bayesclust"])):
        for path in files:
            for line, dotted in _dotted_paths(path.read_text(), roots):
                checked += 1
                if dotted not in cache:
                    cache[dotted] = _resolves(dotted)
                if not cache[dotted]:
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {dotted}")
    assert checked > 300
    assert not bad, f"{len(bad)} dotted code paths do not resolve:\n" + "\n".join(bad)


@pytest.mark.parametrize("text, expected", [
    ("see `bayesclust.inference.dp_means.dp_means` and `kernels.padded_rows(n)`",
     ["bayesclust.inference.dp_means.dp_means", "kernels.padded_rows"]),
    ("![figure](docs/compare.png), `metrics.py`, jobs/_common.py, deviations.md#gdid-index", []),
    ("https://example.org/bayesclust.kernels and `metrics.nmi`; `Posterior.params[\"means\"]`",
     ["metrics.nmi"]),
])
def test_what_counts_as_a_dotted_code_path(text, expected):
    assert [p for _, p in _dotted_paths(text, ["bayesclust", "kernels", "metrics", "jobs"])] == expected


def test_an_unresolved_path_is_reported():
    assert _resolves("bayesclust.kernels.padded_rows") and _resolves("metrics.nmi")
    assert not _resolves("bayesclust.bridge.compare") and not _resolves("kernels.no_such_name")
