"""notebooks/04_consensus.ipynb runs in smoke mode and reproduces the papers' claims.

``make test`` runs the shortest run (``BAYESCLUST_SMOKE=2``); the papers' tables, whose numbers need
the short run's ensembles, starts and draws (``BAYESCLUST_SMOKE=1``), are checked under ``long``.
"""

import pytest

from tests.test_notebooks import run_notebook


@pytest.mark.slow
def test_04_consensus_runs(monkeypatch):
    """The shortest run executes every cell; PEnCA's MAP by SVI is its EM answer at any size."""
    res = run_notebook("04_consensus.ipynb", """\
    n_partitions=len(ens.labels),
    ll_em=float(ll_em), ll_map=float(ll_map), agree_min=float(agree.min()),
""" + _KL_FIELDS, monkeypatch, min_images=9, smoke="2", compile_quickly=True)
    assert res["n_partitions"] == 20  # the shortest run's ensemble
    assert abs(res["ll_map"] - res["ll_em"]) <= 1e-4 * abs(res["ll_em"])
    assert res["agree_min"] >= 0.9
    _check_kl_means(res)


# Both ways (section 8): compare scores KL-means' partition by metrics.kl_means_objective (host
# float64), which must agree with the estimator's own (JAX) objective.
_KL_FIELDS = """\
    kl_methods=[r["method"] for r in report_kl.rows],
    kl_hard_k=int(klc.n_clusters_), kl_report_k=report_kl.rows[2]["k"],
    kl_hard_objective=float(klc.objective_), kl_report_objective=report_kl.rows[2]["objective"],
    kl_stop=path_kl.stop, kl_objective_point=float(path_kl.objective_point[-1]),
    kl_path_hard_objective=float(path_kl.hard_objective),
"""


def _check_kl_means(res):
    assert res["kl_methods"][2] == "hard limit (KL-means)"
    assert res["kl_report_k"] == res["kl_hard_k"] == 3
    assert res["kl_report_objective"] == pytest.approx(res["kl_hard_objective"], rel=1e-4)


@pytest.mark.long
def test_04_consensus_reproduces(monkeypatch):
    res = run_notebook("04_consensus.ipynb", """\
    table={k: float(v) for k, v in table.items()},
    rows=rows,
    post_table={k: float(v) for k, v in post_table.items()},
    k_post=int(k_post),
    lifetime_k_post=int(eac_post.n_clusters),
    scale_ratio=[float(s[1] / s[3]) for s in scale],
    bytes_per_n=[float(s[2] / s[0]) for s in scale],
    chosen={f"{k[0]}|{k[1]}": float(v) for k, v in chosen.items()},
    post_scores=post_scores,
    soft_ci={k: float(metrics.consistency_index(yb, v.labels)) for k, v in soft.items()},
    hard_ci={k: float(metrics.consistency_index(yb, v)) for k, v in hard.items()},
    entropy_by_class=entropy_by_class,
    dr_ci={k: float(np.mean(list(v.values()))) for k, v in dr_ci.items()},
    ll_em=float(ll_em), ll_map=float(ll_map), agree_min=float(agree.min()),
""" + _KL_FIELDS, monkeypatch, min_images=9)
    _check_kl_means(res)
    # The limit path collapses onto KL-means' partition or onto one of lower objective.
    assert res["kl_stop"] in ("hard", "lower_objective")
    assert res["kl_objective_point"] <= res["kl_path_hard_objective"] * (1 + 1e-9)
    t = res["table"]
    # PEnCA Table 1, iris: PEnCA 0.920 > MM 0.693 (one smaller ensemble in smoke mode).
    assert t["PEnCA (EM)"] >= 0.920 - 0.07
    assert t["PEnCA (EM)"] > t["MM (EM)"]
    # EAC on iris (PEnCA K rule, N = 150): AL at K about 0.90; SL at K about 0.75.
    assert t["EAC average link, K"] >= 0.8
    assert t["EAC average link, K"] > t["EAC single link, K"]
    # Wine normalised: PEnCA 0.949 > MM 0.590.
    assert res["rows"]["wine-norm"]["PEnCA"] == pytest.approx(0.949, abs=0.04)
    assert res["rows"]["wine-norm"]["PEnCA"] > res["rows"]["wine-norm"]["MM"]
    # A DP-mixture posterior feeds the same consensus: three Gaussians found again.
    assert res["k_post"] == 3 and res["lifetime_k_post"] == 3
    assert min(res["post_table"].values()) >= 0.8
    # Upper-triangle nnz close to 2 n^2 / K_min with the linear rule, so bytes/n flat (docs/deviations.md#coassociation-nnz).
    assert all(0.5 <= r <= 1.5 for r in res["scale_ratio"]), res["scale_ratio"]
    b = res["bytes_per_n"]
    assert max(b) / min(b) < 1.3, b
    # Which consensus to trust (Duarte et al. 2010, Table 1, Iris, method A): at the true K,
    # L, S, ANMI and ACC choose the partition of NMI .81 (paper), Dunn .71.
    ch = res["chosen"]
    for name in ("ACC", "ANMI", "S_s", "L_s", "S_o", "L_o"):
        assert ch[f"{name}|k = 3"] == pytest.approx(0.81, abs=0.03), (name, ch)
    assert ch["D_o|k = 3"] == pytest.approx(0.71, abs=0.03)
    # the point estimate is at least as consistent with the draws as EAC's consensus of them
    ps = res["post_scores"]
    assert ps["VI point estimate"]["ANMI"] >= ps["EAC on the draws (lifetime)"]["ANMI"] - 0.02
    # Soft consensus on the PPC paper's union ensemble (smaller N in smoke mode): PPC at least
    # as good as the best linkage; the malignant class is the uncertain one (PPC's Fig. 4).
    assert res["soft_ci"]["PPC"] >= max(res["hard_ci"].values()) - 0.02, (res["soft_ci"], res["hard_ci"])
    h = res["entropy_by_class"]["PPC"]
    assert h[1] > h[0], h
    # DR-EAC Table 2 (Iris): EA-Isomap 91.17, EA-LE 90.67 -- within 5 points
    assert res["dr_ci"]["isomap"] >= 0.9117 - 0.06 and res["dr_ci"]["laplacian"] >= 0.9067 - 0.06, res["dr_ci"]
    # PEnCA's MAP by SVI is the EM answer (log-likelihood within 1e-4 relative)
    assert abs(res["ll_map"] - res["ll_em"]) <= 1e-4 * abs(res["ll_em"])
    assert res["agree_min"] >= 0.9

