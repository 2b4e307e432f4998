"""notebooks/10_constrained_consensus.ipynb runs in smoke mode and shows the CEAC paper's claims.

Duarte et al. (CEAC, Table 1) give EAC single link, constrained single link and ACCCS with 200
random constraints on Iris and MASS biopsy; the smoke run averages 2 ensembles instead of 20,
so the checks allow for it.  EAC single link on these ensembles is not the paper's (the strict
xfails of tests/test_constrained.py), so it is reported, not asserted.
"""

import pytest

from tests.test_notebooks import run_notebook


@pytest.mark.slow
def test_10_constrained_consensus_runs(monkeypatch):
    """The shortest run executes every cell; what holds for any ensemble holds."""
    res = run_notebook("10_constrained_consensus.ipynb", """\
    ci={name: {str(m): {k: float(np.mean(v)) for k, v in r.items()} for m, r in ci.items()}
        for name, (ci, _) in results.items()},
    cs={name: {str(m): {k: float(np.mean(v)) for k, v in r.items()} for m, r in cs.items() if m}
        for name, (_, cs) in results.items()},
    n_ensembles=N_ENSEMBLES,
""", monkeypatch, min_images=2, smoke="2", compile_quickly=True)
    assert res["n_ensembles"] == 1  # the shortest run's
    for name in ("Iris", "MASS biopsy"):
        # without constraints CSL is single link; with them it keeps every must-link
        assert res["ci"][name]["0"]["CSL"] == pytest.approx(res["ci"][name]["0"]["EAC-SL"])
        assert res["cs"][name]["200"]["CSL"] >= 99.0, res["cs"][name]


@pytest.mark.long
@pytest.mark.paper
def test_10_constrained_consensus_reproduces(monkeypatch):
    res = run_notebook("10_constrained_consensus.ipynb", """\
    ci={name: {str(m): {k: float(np.mean(v)) for k, v in r.items()} for m, r in ci.items()}
        for name, (ci, _) in results.items()},
    cs={name: {str(m): {k: float(np.mean(v)) for k, v in r.items()} for m, r in cs.items() if m}
        for name, (_, cs) in results.items()},
    paper=PAPER,
    weacs=weacs_ci,
    estimators=dict(csl=float(csl.constraint_satisfaction_), ga_k=int(ga.n_clusters_),
                    csl_ci=float(metrics.consistency_index(y, csl.labels_))),
""", monkeypatch, min_images=2)

    for name in ("Iris", "MASS biopsy"):
        at200 = res["ci"][name]["200"]
        paper = res["paper"][name]
        # within 5 points of Table 1 for the constrained extractions (mean of 2 ensembles here)
        assert abs(at200["CSL"] - paper["CSL"]) <= 5, (name, at200)
        assert abs(at200["ACCCS"] - paper["ACCCS"]) <= 6, (name, at200)
        # CSL at least EAC-SL from 100 constraints on
        for m in ("100", "200"):
            assert res["ci"][name][m]["CSL"] >= res["ci"][name][m]["EAC-SL"], (name, m, res["ci"][name][m])
        # the constraints change the consensus: without them CSL is single link
        assert res["ci"][name]["0"]["CSL"] == pytest.approx(res["ci"][name]["0"]["EAC-SL"])
        # CSL keeps every must-link; with K reachable it keeps every cannot-link too
        assert res["cs"][name]["200"]["CSL"] >= 99.0, res["cs"][name]
        assert res["cs"][name]["200"]["CSL"] > res["cs"][name]["200"]["EAC-SL"], res["cs"][name]
    for name, r in res["weacs"].items():
        assert all(50 <= v <= 100 for v in r.values()), (name, r)
    assert res["estimators"]["csl"] == 1.0 and res["estimators"]["csl_ci"] > 0.9, res["estimators"]
