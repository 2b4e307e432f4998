"""The README's quickstart runs as written and prints what its comments say it prints."""

import ast
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


#: The quickstart's paragraph (blank-line separated) that samples the posterior ``post``, by its
#: first line, and those that use ``post`` or Iris ``Xi``: they run together, in the README's order,
#: on the sampled paragraph's names.
SAMPLED = "# The same model, sampled"
ON_SAMPLED = ("# Semi-supervised cross-entropy", "# Consensus clustering")

#: A Python literal at the start of a comment: "# (3, 7, True)", "# 'hard': it collapsed", "# 2, chosen".
_LITERAL = re.compile(r"\(.*?\)|\{.*?\}|'[^']*'|-?\d+(?:\.\d+)?")


def _blocks() -> list:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python block"
    return blocks


def _quickstart() -> tuple:
    """The first block as (setup, parts): its opening paragraphs (imports, data, the functional
    core: ``X, y, lam, res``), which run once, and the paragraphs after them, one part each, each
    run on a copy of the setup's names; but "sampled", which runs once, and "on-sampled" (the
    paragraphs that use its posterior, together), run on a copy of its names.

    A paragraph that needs a name from another part fails with a NameError: the split can make
    a test fail wrongly, never pass wrongly.
    """
    paragraphs = _blocks()[0].split("\n\n")
    core = next(i for i, p in enumerate(paragraphs) if p.startswith("# Functional core"))
    setup, body = paragraphs[:core + 1], paragraphs[core + 1:]
    parts = {"sampled": [p for p in body if p.startswith(SAMPLED)],
             "on-sampled": [p for p in body if p.startswith(ON_SAMPLED)]}
    assert len(parts["sampled"]) == 1 and len(parts["on-sampled"]) == len(ON_SAMPLED), \
        "a paragraph named in SAMPLED or ON_SAMPLED is gone from the README"
    for p in body:
        if not p.startswith((SAMPLED, *ON_SAMPLED)):
            name = re.sub(r"\W+", "-", re.split(r"[:(]", p.splitlines()[0].lstrip("# "))[0].lower()).strip("-")
            assert name not in parts, name
            parts[name] = [p]
    return setup, parts


def _run(paragraphs: list, names: dict | None = None) -> dict:
    """Run README paragraphs on a copy of ``names``; return the names they leave defined."""
    names = dict(names or {})
    exec(compile("\n\n".join(paragraphs), "README.md", "exec"), names)
    return names


def _claims(paragraphs: list) -> list:
    """(expression, value) of each line ``expression  # literal ...`` of the paragraphs."""
    out = []
    for line in "\n".join(paragraphs).splitlines():
        code, sep, comment = line.partition("  #")
        match = _LITERAL.match(comment.strip()) if sep else None
        if not match or "=" in code.replace("==", ""):
            continue
        try:
            value = ast.literal_eval(match.group(0))
            ast.parse(code.strip(), mode="eval")
        except (ValueError, SyntaxError):
            continue
        out.append((code.strip(), value))
    return out


def _check_claims(paragraphs: list, names: dict, skip=()) -> int:
    """Every claim of the paragraphs holds in ``names``; the number checked."""
    claims = [(expr, value) for expr, value in _claims(paragraphs) if expr not in skip]
    for expr, value in claims:
        assert eval(expr, dict(names)) == value, (expr, value)
    return len(claims)


@pytest.fixture(scope="module")
def setup_names() -> dict:
    """The quickstart's opening paragraphs, run once for the parts of this module."""
    return _run(_quickstart()[0])


def test_readme_quickstart_setup_prints_what_it_claims(setup_names):
    """``res.n_clusters, res.n_iter, res.converged  # (3, 7, True)`` and the data's size."""
    setup = _quickstart()[0]
    assert _check_claims(setup, setup_names) >= 1
    n, d = map(int, re.search(r"three_gaussians\(.*# .*?(\d+) x (\d+)", "\n".join(setup)).groups())
    assert setup_names["X"].shape == (n, d)


@pytest.fixture(scope="module")
def sampled_names(setup_names) -> dict:
    """The sampled paragraph, run once (a ConvergenceWarning fails it) for the tests that use it."""
    import warnings

    from bayesclust import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return _run(_quickstart()[1]["sampled"], setup_names)


@pytest.mark.parametrize("part", [p for p in _quickstart()[1] if p not in ("sampled", "on-sampled")])
def test_readme_quickstart_part_runs_and_prints_what_it_claims(part, setup_names):
    paragraphs = _quickstart()[1][part]
    _check_claims(paragraphs, _run(paragraphs, setup_names))


@pytest.mark.parametrize("block", range(2, len(_blocks()) + 1))
def test_readme_python_block_runs(block):
    """The later blocks run on their own (a fresh namespace), as a reader pastes them."""
    paragraphs = [_blocks()[block - 1]]
    _check_claims(paragraphs, _run(paragraphs))


def test_readme_sampled_quickstart_runs_and_prints_the_numbers_it_claims(sampled_names):
    """The Quickstart's paragraph on the sampled posterior runs as written (once: the sampler's
    numbers are read off its ``post``); the sampler line prints the numbers its comments
    claim (exactly on the native kernel; within Monte-Carlo noise on the XLA path, whose float
    rounding may steer a chain elsewhere) and passes the convergence check."""
    paragraphs = _quickstart()[1]["sampled"]
    text = "\n".join(paragraphs)
    claimed = ast.literal_eval(re.search(r"post\.k_distribution\(\)\s+# (\{.*\})", text).group(1))
    rhat, ess = re.search(r'post\.diagnostics\(\)\["n_clusters"\]\s+# rank-normalised R-hat '
                          r"([\d.]+), bulk ESS (\d+) of k", text).groups()
    post = sampled_names["post"]
    # the shape of the draws and path.stop
    assert _check_claims(paragraphs, sampled_names, skip={"post.k_distribution()"}) >= 2
    diag = post.diagnostics()["n_clusters"]
    assert diag["rhat"] <= 1.01 and diag["ess_bulk"] >= 400
    got = post.k_distribution()
    if post.kernels == "native":
        assert got == claimed
        assert f"{diag['rhat']:.3f}" == rhat and f"{diag['ess_bulk']:.0f}" == ess
    else:
        assert set(got) <= set(claimed) | {7}
        for k, p in claimed.items():
            assert abs(got.get(k, 0.0) - p) < 0.03, (k, got)


def test_readme_quickstart_on_the_posterior_runs_and_prints_what_it_claims(sampled_names):
    """The paragraphs that use the sampled posterior (consensus of its label draws) and Iris."""
    paragraphs = _quickstart()[1]["on-sampled"]
    assert _check_claims(paragraphs, _run(paragraphs, sampled_names)) >= 1  # best.method_


def test_readme_claims_are_found():
    """The claims the tests above check are the README's (a change of the comments' format would
    otherwise leave them unchecked)."""
    setup, parts = _quickstart()
    found = dict(_claims(setup + [p for ps in parts.values() for p in ps]))
    assert found["res.n_clusters, res.n_iter, res.converged"] == (3, 7, True)
    assert {"post.labels.shape", "post.k_distribution()", "path.stop", "ncut.n_clusters_",
            "best.method_"} <= set(found), sorted(found)


def test_readme_layout_names_every_top_level_module_and_package():
    """The README's layout tree lists every module and package directly under bayesclust/ (and
    the structured/ package's modules it describes), and nothing that does not exist."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    section = text[text.index("\n## Layout\n"):]
    block = re.search(r"```\n(bayesclust/\n.*?)```", section, flags=re.S).group(1)
    tokens = set(re.findall(r"(?<![\w/.])(\w+\.py|\w+/)", block))
    package = root / "bayesclust"
    present = {p.name for p in package.glob("*.py")} | {
        p.name + "/" for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert present - tokens == set(), f"missing from the README's layout: {sorted(present - tokens)}"
    structured = {p.name for p in (package / "structured").glob("*.py")} - {"__init__.py"}
    assert structured - tokens == set(), f"structured/ modules missing: {sorted(structured - tokens)}"
    nested = {t for t in tokens if t.endswith(".py")} - present - structured
    assert nested == set(), f"the layout names modules that are not there: {sorted(nested)}"
