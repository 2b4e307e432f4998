"""The README's quickstart runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


#: The quickstart's paragraphs (blank-line separated) that use the sampled posterior ``post`` or
#: Iris ``Xi``, by their first line; they run together, in the README's order.
SAMPLED = ("# The same model, sampled", "# Semi-supervised cross-entropy", "# Consensus clustering")


def _quickstart_parts() -> dict:
    """The README's python blocks as the parts one test each runs, every statement once.

    The first block (one quickstart of ~75 s, mostly compiles) is split in two, each part
    after the block's opening paragraphs (imports, data, the functional core: ``X, y, lam, res``):
    the paragraphs that build on the sampled posterior and the rest; the later blocks run
    whole.  A paragraph that needs a name from the other part fails with a NameError: the
    split can make the test fail wrongly, never pass wrongly.
    """
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python block"
    paragraphs = blocks[0].split("\n\n")
    core = next(i for i, p in enumerate(paragraphs) if p.startswith("# Functional core"))
    setup, body = paragraphs[:core + 1], paragraphs[core + 1:]
    sampled = [p for p in body if p.startswith(SAMPLED)]
    assert len(sampled) == len(SAMPLED), "a paragraph named in SAMPLED is gone from the README"
    parts = {
        "quickstart-sampled": setup + sampled,
        "quickstart-rest": setup + [p for p in body if not p.startswith(SAMPLED)],
    }
    parts.update({f"block-{i}": [b] for i, b in enumerate(blocks[1:], start=2)})
    return parts


def _run(part: str) -> dict:
    """Run one part of the README's code; return the names it defined."""
    names = {}
    exec(compile("\n\n".join(_quickstart_parts()[part]), "README.md", "exec"), names)
    return names


@pytest.mark.parametrize("part", [p for p in _quickstart_parts() if p != "quickstart-sampled"])
def test_readme_python_quickstart_runs(part):
    _run(part)


def test_readme_sampled_quickstart_runs_and_prints_the_numbers_it_claims():
    """The Quickstart's paragraphs on the sampled posterior run as written (once: the sampler's
    numbers are read off their ``post``); the sampler line prints the numbers its comments
    claim (exactly on the native kernel; within Monte-Carlo noise on the XLA path, whose float
    rounding may steer a chain elsewhere) and passes the convergence check."""
    import ast
    import warnings

    from bayesclust import ConvergenceWarning

    text = README.read_text()
    shape = ast.literal_eval(re.search(r"post\.labels\.shape\s+# (\(.*?\))", text).group(1))
    claimed = ast.literal_eval(re.search(r"post\.k_distribution\(\)\s+# (\{.*\})", text).group(1))
    rhat, ess = re.search(r'post\.diagnostics\(\)\["n_clusters"\]\s+# rank-normalised R-hat '
                          r"([\d.]+), bulk ESS (\d+) of k", text).groups()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        post = _run("quickstart-sampled")["post"]
    diag = post.diagnostics()["n_clusters"]
    assert post.labels.shape == shape
    assert diag["rhat"] <= 1.01 and diag["ess_bulk"] >= 400
    got = post.k_distribution()
    if post.kernels == "native":
        assert got == claimed
        assert f"{diag['rhat']:.3f}" == rhat and f"{diag['ess_bulk']:.0f}" == ess
    else:
        assert set(got) <= set(claimed) | {7}
        for k, p in claimed.items():
            assert abs(got.get(k, 0.0) - p) < 0.03, (k, got)


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
