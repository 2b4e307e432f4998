"""The layout and import rules of docs/architecture.md, read from the source.

Every import of a bayesclust module counts, function-level (lazy) imports
included: the layers and the families of ``inference`` import only what the
document's tables allow, no module imports another in a cycle, no module
imports another module's underscore names, and the document's layout lists
every module of the package and nothing else.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bayesclust"
DOC = ROOT / "docs" / "architecture.md"


# -- the document --------------------------------------------------------------------------------

def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def _rules_table(header: str) -> dict[str, set[str]]:
    """The two-column table ``| <header> | may import |`` of the import rules, as a dict."""
    rules: dict[str, set[str]] = {}
    rows = iter(_section("Layers and import rules").splitlines())
    for line in rows:
        if re.fullmatch(rf"\|\s*{header}\s*\|\s*may import\s*\|", line.strip()):
            next(rows)  # | --- | --- |
            for row in rows:
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if len(cells) != 2:
                    break
                (name,) = re.findall(r"`([\w.]+)`", cells[0])
                rules[name] = set() if cells[1] == "nothing" else set(re.findall(r"`([\w.]+)`", cells[1]))
            return rules
    raise AssertionError(f"docs/architecture.md has no '| {header} | may import |' table")


def _layout() -> set[str]:
    """Every file and folder the layout's tree names, as paths relative to the repository."""
    block = re.search(r"```\n(bayesclust/\n.*?)```", _section("Layout"), flags=re.S).group(1)
    entry = re.compile(r"(?:\w+\.py|\w+/)$")
    listed: set[str] = set()
    stack: list[tuple[int, str]] = []  # (indent, folder)
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        names = []
        for token in line.split():
            if not entry.match(token):
                break
            names.append(token)
        if not names:
            continue  # a description continued
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        for token in names:
            listed.add(parent + token)
        if len(names) == 1 and names[0].endswith("/"):
            stack.append((indent, parent + names[0]))
    return listed


ALLOWED = _rules_table("layer")
FAMILY_ALLOWED = _rules_table("family")


# -- the source -------------------------------------------------------------------------------------

def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent / Path(*dotted.split("."))
    return path.with_suffix(".py").exists() or path.is_dir()


def _import_targets(name: str, is_package: bool, source: str):
    """``(module, imported name or None, line)`` for every bayesclust import of ``source``.

    ``from bayesclust.kernels import nearest_center`` gives ``("bayesclust.kernels",
    "nearest_center")``; ``from .. import metrics`` gives ``("bayesclust.metrics", None)``
    (a module, not a name), as does ``import bayesclust.metrics``.
    """
    package = name if is_package else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                target = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("bayesclust"):
                continue
            for alias in node.names:  # `from . import metrics` imports a module
                sub = f"{target}.{alias.name}"
                yield (sub, None, node.lineno) if _is_module(sub) else (target, alias.name, node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bayesclust"):
                    yield alias.name, None, node.lineno


def _imports(path: Path) -> set[str]:
    """The bayesclust modules ``path`` imports, anywhere in the file."""
    name = _module_name(path)
    found = {m for m, _, _ in _import_targets(name, path.name == "__init__.py", path.read_text())}
    found.discard(name)
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(name: str, is_package: bool, source: str) -> list[str]:
    """The underscore names ``source`` imports from another module, as ``"module._name"``.

    Names of a private module (``_validation``, ``estimators._base``, a family's ``_common``)
    are private to its package, not to the module: importing them is how they are shared.
    """
    bad = []
    for module, imported, _ in _import_targets(name, is_package, source):
        if imported is None or not _is_private(imported) or module == name:
            continue
        if _is_private(module.rsplit(".", 1)[-1]):
            continue
        bad.append(f"{module}.{imported}")
    return bad


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _family(module: str) -> str:
    """The family folder of an inference module ("hard" for bayesclust.inference.hard.dp_means)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "inference" else ""


FAMILIES = sorted({_family(m) for m in MODULES if _family(m) and (PACKAGE / "inference" / _family(m)).is_dir()})


# -- layers -----------------------------------------------------------------------------------------

def test_every_layer_has_a_row():
    layers = {_layer(m) for m in MODULES} - {""}
    assert layers == set(ALLOWED), (
        f"layers without a row: {sorted(layers - set(ALLOWED))}; "
        f"rows without a layer: {sorted(set(ALLOWED) - layers)}"
    )
    for layer, allowed in ALLOWED.items():
        assert allowed <= set(ALLOWED), f"{layer} may import an unknown layer: {sorted(allowed - set(ALLOWED))}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "bayesclust"))
def test_layers_import_only_downwards(module):
    layer = _layer(module)
    assert layer in ALLOWED, f"{module}: a new layer? add it to docs/architecture.md's layout and table"
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


# -- the families of inference ---------------------------------------------------------------------

#: Imports across families that the table does not allow yet, each with the reason it remains.
#: Shrink it; never grow it.
FAMILY_EXCEPTIONS: set[tuple[str, str]] = set()


def test_every_inference_module_sits_in_a_family():
    """``inference/`` holds family folders, its ``__init__`` and shared private rooms only."""
    flat = [m for m in MODULES if m.startswith("bayesclust.inference.") and m.count(".") == 2
            and m.split(".")[2] not in FAMILIES and not _is_private(m.split(".")[2])]
    assert not flat, flat


def test_every_family_has_a_row():
    assert set(FAMILIES) == set(FAMILY_ALLOWED), (
        f"folders without a row: {sorted(set(FAMILIES) - set(FAMILY_ALLOWED))}; "
        f"rows without a folder: {sorted(set(FAMILY_ALLOWED) - set(FAMILIES))}"
    )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _family(m)))
def test_families_import_as_documented(module):
    family = _family(module)
    shared_room = _is_private(family)  # inference/_driver.py and its kind
    bad = []
    for dep in sorted(GRAPH[module]):
        other = _family(dep)
        if not other or other == family or (module, dep) in FAMILY_EXCEPTIONS:
            continue
        if shared_room:
            if not _is_private(other):
                bad.append(dep)
        elif not _is_private(other) and other not in FAMILY_ALLOWED[family]:
            bad.append(dep)
    allowed = "no family" if shared_room else sorted(FAMILY_ALLOWED[family])
    assert not bad, f"{module} imports {bad}; allowed: {allowed}"


def test_family_exceptions_are_still_needed():
    stale = sorted(e for e in FAMILY_EXCEPTIONS if e[1] not in GRAPH.get(e[0], ()))
    assert not stale, f"fixed: remove {stale} from FAMILY_EXCEPTIONS"


# -- private names and private modules --------------------------------------------------------------

#: Today's imports of another module's underscore names: helpers shared through the wrong room.
#: Each should move to a private module of its package (or become public); shrink this list,
#: never grow it.
PRIVATE_IMPORT_EXCEPTIONS = {
    **{f"bayesclust.jobs.{job}": {"bayesclust.plotting._pyplot"}
       for job in ("consensus", "dc", "did", "hdp", "temporal")},
    "bayesclust.models.hdp_gmm": {
        f"bayesclust.models.dp_gmm.{n}"
        for n in ("_any_traced", "_check_data", "_check_prior", "_exp", "_is_tracer", "_positive", "_stick_breaking")
    },
    "bayesclust.structured.kernel_spom": {"bayesclust.structured.proximal._prox_l1_squared"},
    "bayesclust.structured.online": {"bayesclust.structured.proximal._prox_block_norms", "bayesclust.structured.proximal._soft_threshold"},
    "bayesclust.structured.spom": {
        "bayesclust.structured.decoding._multiclass_decode",
        "bayesclust.structured.decoding._viterbi",
    },
}

PRIVATE_IMPORTS = {
    name: set(private_imports(name, path.name == "__init__.py", path.read_text())) for name, path in MODULES.items()
}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_cross_module_private_imports(module):
    bad = sorted(PRIVATE_IMPORTS[module] - PRIVATE_IMPORT_EXCEPTIONS.get(module, set()))
    assert not bad, (
        f"{module} imports another module's private names {bad}: move the helper to a private "
        "module of its package (a family's _common.py, _validation.py, ...) or make it public"
    )


def test_private_import_exceptions_are_still_needed():
    stale = sorted(f"{m}: {n}" for m, names in PRIVATE_IMPORT_EXCEPTIONS.items()
                   for n in names - PRIVATE_IMPORTS.get(m, set()))
    assert not stale, f"fixed: remove from PRIVATE_IMPORT_EXCEPTIONS {stale}"


def test_private_import_check_can_fail():
    """The check finds a planted import of a sibling's private name, and spares private modules."""
    planted = "from .dp_means import _to_host, dp_means\nfrom ... import _validation as V\nfrom ._common import _x\n"
    assert private_imports("bayesclust.inference.hard.hard_hdp", False, planted) == [
        "bayesclust.inference.hard.dp_means._to_host"
    ]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_private_modules_stay_in_their_package(module):
    """``bayesclust/x/_m.py`` is imported by modules under ``bayesclust/x/`` only."""
    bad = []
    for dep in GRAPH[module]:
        parts = dep.split(".")
        private = [i for i, p in enumerate(parts) if _is_private(p)]
        if private and not (module + ".").startswith(".".join(parts[: private[0]]) + "."):
            bad.append(dep)
    assert not bad, f"{module} imports private modules of another package: {sorted(bad)}"


# -- the layout -------------------------------------------------------------------------------------

def test_layout_lists_every_module():
    """docs/architecture.md's tree names every module and folder of the package, and nothing else.

    ``__init__.py`` files may be left out of the tree; every other module and every package
    must appear, and every name in the tree must exist.
    """
    listed = _layout()
    on_disk = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")}
    on_disk |= {str(p.relative_to(ROOT)) + "/" for p in PACKAGE.rglob("*") if p.is_dir() and (p / "__init__.py").exists()}
    on_disk.add("bayesclust/")
    missing = sorted(m for m in on_disk - listed if not m.endswith("/__init__.py"))
    extra = sorted(listed - on_disk)
    assert not missing, f"modules not in docs/architecture.md's layout: {missing}"
    assert not extra, f"docs/architecture.md's layout names what does not exist: {extra}"
