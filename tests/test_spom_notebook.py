"""notebooks/09_structured_mkl.ipynb runs in smoke mode and says what it claims.

Martins et al. (2011) report no digits or synthetic-chain numbers (their experiments use OCR and
CoNLL data that are not bundled); the checks are the notebook's own claims: the learned
combination against the single kernels and their average, a noise block pushed down, Viterbi
with learned transitions against position-wise decoding.
"""

import pytest

from tests.test_notebooks import run_notebook


@pytest.mark.slow
def test_09_structured_mkl_runs(monkeypatch):
    """The shortest run executes every cell; Algorithm 2's path and the weights' simplex hold at any size."""
    res = run_notebook("09_structured_mkl.ipynb", """\
    beta=[float(b) for b in beta_mkl],
    survivors=survivors.tolist(),
    n_epochs=N_EPOCHS,
""", monkeypatch, min_images=4, smoke="2")
    assert res["n_epochs"] == 3  # the shortest run's
    assert abs(sum(res["beta"]) - 1) < 1e-6
    sv = res["survivors"]
    assert sv[0] == 12 and sv[-1] <= 2 and all(a >= b for a, b in zip(sv, sv[1:])), sv


@pytest.mark.long
def test_09_structured_mkl_reproduces(monkeypatch):
    res = run_notebook("09_structured_mkl.ipynb", """\
    acc={k: float(v) for k, v in acc.items()},
    beta=[float(b) for b in beta_mkl],
    betas=betas.tolist(),
    seq={k: float(v[1]) for k, v in seq.items()},
    seq_beta=[float(b) for b in mkl_seq.beta],
    seq_indep=float(seq_indep),
    survivors=survivors.tolist(),
""", monkeypatch, min_images=4)
    acc = res["acc"]
    best = max(acc["linear"], acc["rbf"], acc["poly"])
    assert acc["MKL"] >= best - 0.01 and acc["MKL"] > acc["average"], acc
    assert abs(sum(res["beta"]) - 1) < 1e-6
    # the noise block's weight falls as lam grows from the smallest value
    assert res["betas"][-1][3] < res["betas"][0][3] and min(b[3] for b in res["betas"]) < 0.05, res["betas"]
    # Algorithm 2 keeps fewer entries as lam grows, down to the largest few
    sv = res["survivors"]
    assert sv[0] == 12 and sv[-1] <= 2 and all(a >= b for a, b in zip(sv, sv[1:])), sv
    seq = res["seq"]
    assert seq["MKL"] > 0.85 and seq["linear"] < 0.5, seq
    assert seq["MKL"] > res["seq_indep"] + 0.05
    assert res["seq_beta"][0] < 0.1  # the linear emission block
