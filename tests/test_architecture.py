"""The layout's import rules (docs/architecture.md), read from the source.

Every import of a bayesclust module counts, function-level (lazy) imports
included: the layers may only import downwards, and no module imports another
in a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayesclust"

#: What each layer may import (besides itself).  A module's layer is its first
#: name under bayesclust: "inference" for bayesclust.inference.mixtures.gibbs.
ALLOWED = {
    "_native": set(),
    "_cache": set(),
    "_validation": {"_cache"},
    "kernels": {"_native", "_validation"},
    "graphs": {"_validation"},
    "metrics": {"_validation", "kernels"},
    "proximal": {"_validation"},
    "structured": {"_validation", "proximal", "kernels", "metrics"},
    "datasets": {"_validation"},
    "models": {"_validation", "kernels"},
    "inference": {"_native", "_validation", "kernels", "graphs", "metrics", "models"},
    "comparison": {"_validation", "kernels", "metrics", "models", "inference"},
    "plotting": {"_validation", "metrics"},
    "estimators": {"_validation", "kernels", "graphs", "metrics", "models", "inference", "comparison"},
    "jobs": {"_native", "_validation", "kernels", "graphs", "metrics", "datasets", "models",
             "inference", "comparison", "plotting", "estimators"},
    "cli": {"_validation", "datasets", "metrics", "inference", "jobs"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The bayesclust modules ``path`` imports, anywhere in the file."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("bayesclust"):
                continue
            for alias in node.names:  # `from . import metrics` imports a module
                sub = f"{target}.{alias.name}"
                found.add(sub if (PACKAGE.parent / Path(*sub.split("."))).with_suffix(".py").exists()
                          or (PACKAGE.parent / Path(*sub.split("."))).is_dir() else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("bayesclust"))
    found.discard(name)
    return found


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "bayesclust"))
def test_layers_import_only_downwards(module):
    layer = _layer(module)
    assert layer in ALLOWED, f"{module}: a new layer? add it to docs/architecture.md and ALLOWED"
    bad = sorted(d for d in GRAPH[module] if _layer(d) not in ALLOWED[layer] | {layer, ""})
    assert not bad, f"{module} ({layer}) imports {bad}; allowed: {sorted(ALLOWED[layer])}"


def test_no_import_cycles():
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if d not in GRAPH:
                continue
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state and m != "bayesclust":
            visit(m)


def test_at_most_three_levels_deep():
    """Two levels, plus the family folders of ``inference``."""
    deep = [m for m in MODULES if m.count(".") > 2 and not m.startswith("bayesclust.inference.")]
    deep += [m for m in MODULES if m.count(".") > 3]
    assert not deep, deep


def test_only_estimators_derive_from_scikit_learn():
    """scikit-learn base classes appear in the estimators only; elsewhere it is a peer."""
    for name, path in MODULES.items():
        if _layer(name) in ("estimators",) or name == "bayesclust.structured.classifier":
            continue
        text = path.read_text()
        assert "sklearn.base" not in text, f"{name} imports scikit-learn's base classes"
        if _layer(name) not in ("jobs",):
            assert "import sklearn" not in text and "from sklearn" not in text, (
                f"{name} imports scikit-learn"
            )


CLUSTERING_CORE = ("inference", "models", "estimators", "jobs", "comparison")


def test_clustering_core_does_not_import_structured():
    """SPOM is supervised and separate: the clustering core never imports it."""
    for name, deps in GRAPH.items():
        if _layer(name) in CLUSTERING_CORE:
            bad = sorted(d for d in deps if _layer(d) == "structured")
            assert not bad, f"{name} imports {bad}"


def test_cycle_check_can_fail(monkeypatch):
    """The cycle check finds a planted cycle (the check is not vacuous)."""
    monkeypatch.setitem(GRAPH, "bayesclust.kernels", GRAPH["bayesclust.kernels"] | {"bayesclust.metrics"})
    with pytest.raises(AssertionError, match="import cycle"):
        test_no_import_cycles()
