"""The documents point only at things that exist.

docs/deviations.md cites tests as evidence and code cites its entries by anchor;
README.md and the docs link to files.  A renamed test, a moved file or a dropped
entry must fail here, not leave a dangling pointer.
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
