"""notebooks/08_temporal_states.ipynb runs in smoke mode and shows the temporal study's checks.

Medina & Fred (SIMBAD deliverable D2.3, temporal study) state them in words: DS1 (two Gaussian states,
abrupt switch) is segmented without denoising; DS2 (mixture states, smooth transition) is not, and is
after the genetic algorithm removes the transition.  The ECG counts need recordings that are not public.
"""

import pytest

from tests.test_notebooks import run_notebook


@pytest.mark.slow
@pytest.mark.paper
def test_08_temporal_states_runs(monkeypatch):
    res = run_notebook("08_temporal_states.ipynb", """\
    ds1=dict(unambiguous=bool(ds1.unambiguous), majority=int(ds1.majority), states=show_states(ds1)),
    before=dict(unambiguous=bool(before.unambiguous), n_states=int(before.n_states)),
    after=dict(unambiguous=bool(after.unambiguous), n_states=int(after.n_states)),
    coverage=float(coverage),
    rows=[{k: (v if isinstance(v, (bool, int)) else float(v)) for k, v in r.items()} for r in rows],
    job=dict(after=summary["after"]["unambiguous"], block=summary["denoise"]["block"]),
    block=list(den.block),
""", monkeypatch, min_images=3, smoke="2")

    # DS1: both states found by all five linkages, the switch at sample 150.
    assert res["ds1"]["unambiguous"] and res["ds1"]["majority"] == 5
    assert res["ds1"]["states"] == [[0, 150, 0], [150, 300, 1]]
    # DS2 before denoising: the two states are not found.
    assert not (res["before"]["unambiguous"] and res["before"]["n_states"] == 2)
    # After denoising: two states, the block covering at least 80 % of the transition.
    assert res["after"]["unambiguous"] and res["after"]["n_states"] == 2
    assert res["coverage"] >= 0.8
    assert all(r["ds1"] for r in res["rows"]), res["rows"]
    # the CLI job runs the same search
    assert res["job"]["after"] and res["job"]["block"] == res["block"]
