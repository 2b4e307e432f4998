"""The HDP family on the limit path: HDPLimit, and gibbs_hdp_gmm continued from a given seating.

References: the CRF log joint against every configuration of a tiny data set (a slow loop with
the Gaussian marginal from SciPy, ``tests/_reference.py``), the continued sampler against its
sweep stepped by hand, the objective against the hard HDP's own at its fixed point.
"""

import jax
import numpy as np
import pytest

import bayesclust as bc
from bayesclust import _validation as V
from bayesclust.comparison.hdp import HDPLimit
from bayesclust.comparison.path import family_class
from bayesclust.datasets import hdp_groups
from bayesclust.inference.mixtures.hdp_gibbs import gibbs_hdp_gmm, hdp_sweep, init_hdp_state
from bayesclust.metrics import hard_hdp_objective
from bayesclust.models.hdp_gmm import hdp_log_concentrations_from_lam

from ._reference import all_partitions, hdp_crf_log_joint

_PATH = dict(num_chains=8, num_warmup=20, num_samples=10)


def _grouped(seed=0):
    """Three data sets of 3 Gaussians x 4 points (6 Gaussians shared), rows interleaved."""
    groups, _, _ = hdp_groups(seed, n_groups=3, n_components=6, components_per_group=3,
                              n_per_component=4)
    X = np.concatenate(groups)
    gid = np.repeat(np.arange(3), [len(g) for g in groups])
    perm = np.random.default_rng(seed).permutation(len(X))
    return X[perm], gid[perm]


@pytest.fixture(scope="module")
def path_and_data():
    X, gid = _grouped()
    lam = bc.hard_hdp_penalties(X, 3, 6, group_ids=gid)
    return bc.limit_path(0, X, model="hdp", group_ids=gid, lam=lam, **_PATH), X, gid, lam


def test_limit_path_collapses_no_worse_than_hard_hdp(path_and_data):
    """The annealed CRF sampler settles on the hard HDP's partition or on one of lower J."""
    path, X, gid, lam = path_and_data
    assert path.model == "hdp" and path.temperature_name == "sigma2"
    assert path.stop in ("hard", "lower_objective"), path.stop
    assert np.all(np.diff(path.temperature) < 0)
    assert path.scale == lam[0]
    assert isinstance(path.hard, bc.HardHDPResult)
    # The objective of the last level's point partition, recomputed from the metric.
    j_point = hard_hdp_objective(X, path.point, *lam, group_ids=gid)
    assert j_point == pytest.approx(path.objective_point[-1], rel=1e-12)
    assert j_point <= path.hard_objective * (1 + 1e-9)
    assert path.hard_objective == pytest.approx(
        hard_hdp_objective(X, path.hard.flat_labels, *lam, group_ids=gid), rel=1e-12)


def test_limit_path_is_reproducible_from_the_key(path_and_data):
    path, X, gid, lam = path_and_data
    again = bc.limit_path(0, X, model="hdp", group_ids=gid, lam=lam, **_PATH)
    for field in ("temperature", "nmi_point", "k_mean", "objective_point", "objective_best",
                  "point", "best_labels"):
        np.testing.assert_array_equal(getattr(again, field), getattr(path, field), err_msg=field)
    assert again.stop == path.stop


def test_objective_is_hard_hdps_at_its_fixed_point():
    """J of a global partition is hard HDP's J with one local cluster per (data set, global
    cluster) pair; at Algorithm 2's fixed point that is its own objective, and any finer local
    clustering of the same global partition costs more."""
    X, gid = _grouped(1)
    lam = bc.hard_hdp_penalties(X, 3, 6, group_ids=gid)
    fam = HDPLimit(X, lam=lam, group_ids=gid)
    hard = fam.hard()
    assert hard.converged
    assert fam.objective(hard.flat_labels) == pytest.approx(hard.objective, rel=1e-6)
    z = np.asarray(hard.flat_labels)
    split = z * 2 + (np.arange(len(z)) % 2)  # every local cluster cut in two
    finer = hard_hdp_objective(X, z, *lam, group_ids=gid, local_labels=split)
    assert finer > fam.objective(z)


@pytest.mark.parametrize("relative", [1.0, 0.01])
def test_log_target_matches_every_crf_configuration(x64, relative):
    """Two data sets of 3 + 2 points: log_target of every CRF configuration (tables of each
    data set, dishes of the tables: 10 local x up to 52 global) minus the slow reference's
    log joint is one constant, at a moderate and a small sigma2 (gamma ~ e^-60)."""
    groups = [np.array([[-1.0, 0.2], [-0.8, 0.0], [1.0, 0.5]]), np.array([[1.2, 0.4], [-1.1, 0.1]])]
    X = np.concatenate(groups)
    gid = np.repeat([0, 1], [3, 2])
    lam_l, lam_g, rho2 = 0.7, 1.3, 2.0
    fam = HDPLimit(X, lam=(lam_l, lam_g), group_ids=gid, rho2=rho2)
    sigma2 = relative * lam_l
    log_alpha, log_gamma = hdp_log_concentrations_from_lam(lam_l, lam_g, sigma2, rho2, 2)
    Xc = [g - X.mean(0) for g in groups]  # the sampler's frame
    tables, dishes, ref = [], [], []
    for parts in [(a, b) for a in all_partitions(3) for b in all_partitions(2)]:
        n_tables = [max(p) + 1 for p in parts]
        for dish_part in all_partitions(sum(n_tables)):
            t = np.concatenate([np.asarray(parts[0]), np.asarray(parts[1]) + 10])
            dish_of = np.asarray(dish_part)
            z = np.concatenate([dish_of[np.asarray(parts[0])],
                                dish_of[n_tables[0] + np.asarray(parts[1])]])
            tables.append(t)
            dishes.append(z)
            ref.append(hdp_crf_log_joint(Xc, parts, dish_part, np.exp(log_alpha),
                                         np.exp(log_gamma), sigma2, rho2))
    ours = fam.log_target({"tables": np.array(tables), "dishes": np.array(dishes)}, sigma2)
    diff = ours - np.array(ref)
    assert len(diff) > 100
    assert np.ptp(diff) < 1e-8 * max(1.0, np.abs(ref).max()), np.ptp(diff)


def test_continued_chain_is_the_sweep_stepped_by_hand(x64):
    """gibbs_hdp_gmm from given tables and dishes (one seating per chain, any ids, rows of
    interleaved data sets) draws exactly what hdp_sweep draws when stepped by hand from
    init_hdp_state of the same seating, with the driver's keys."""
    rng = np.random.default_rng(3)
    gid_in = rng.permutation(np.repeat([0, 1, 2], [5, 4, 5]))
    X = rng.normal(size=(14, 2))
    C, S = 2, 3
    dishes = rng.integers(0, 3, (C, 14)) * 7 - 4         # any ids
    tables = dishes * 3 + rng.integers(0, 2, (C, 14))     # a table inside one dish
    kw = dict(sigma2=0.3, rho2=2.0, alpha=1.5, gamma=0.7)
    post = gibbs_hdp_gmm(7, X, group_ids=gid_in, num_warmup=0, num_samples=S, thin=1, num_chains=C,
                         init_labels=dishes, init_tables=tables, progress_bar=False, **kw)

    order = np.argsort(gid_in, kind="stable")
    gid = gid_in[order]
    Xc = X[order] - X.mean(0)
    L, P = 5, 14  # the driver's buffers here: the largest data set, and n
    chain_keys = jax.random.split(jax.random.split(V.as_rng_key(7), 1)[0], C)
    sweep = jax.jit(hdp_sweep, static_argnames=("n_groups", "split_merge", "max_group_size"))
    for c in range(C):
        z, t = dishes[c][order], tables[c][order]
        dish_slot = np.searchsorted(np.unique(z), z)
        slots = np.zeros(14, int)
        table_dish = np.zeros((3, L), int)
        for j in range(3):
            ids = np.unique(t[gid == j])
            slots[gid == j] = np.searchsorted(ids, t[gid == j])
            for s_, tid in enumerate(ids):
                table_dish[j, s_] = dish_slot[(gid == j) & (t == tid)][0]
        state = init_hdp_state(Xc, gid, slots, table_dish, L, P, log_alpha=np.log(1.5),
                               log_gamma=np.log(0.7), sigma2=0.3)
        for s_, k in enumerate(jax.random.split(chain_keys[c], S)):
            state, _ = sweep(jax.random.split(k, 1)[0], Xc, gid, state, rho2=2.0, n_groups=3,
                             split_merge=1, max_group_size=5)  # the driver's default move
            assert not bool(state.overflow)
            glob, loc = np.empty(14, int), np.empty(14, int)
            glob[order] = np.asarray(state.dishes(gid))
            loc[order] = np.asarray(state.tables)
            np.testing.assert_array_equal(post.labels[c, s_], glob)
            np.testing.assert_array_equal(post.params["local_labels"][c, s_], loc)
            # The record keeps the dish slots some draw uses; the buffer's others are empty.
            kept = post.params["means"].shape[2]
            np.testing.assert_allclose(post.params["means"][c, s_] - X.mean(0),
                                       np.asarray(state.means)[:kept], atol=1e-12)
            assert not np.any(np.asarray(state.means)[kept:])


@pytest.mark.filterwarnings("ignore::bayesclust.ConvergenceWarning")
def test_one_dish_start_is_the_default_start():
    """init_labels all equal (tables: one per data set and dish) is Kulis & Jordan's start."""
    X, gid = _grouped()
    kw = dict(group_ids=gid, sigma2=0.05, num_warmup=2, num_samples=3, thin=1, num_chains=2,
              progress_bar=False)
    a = gibbs_hdp_gmm(4, X, **kw)
    b = gibbs_hdp_gmm(4, X, init_labels=np.full(len(X), 9), **kw)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.params["local_labels"], b.params["local_labels"])


def test_sample_continues_from_the_states_it_returns():
    """HDPLimit.sample returns every chain's last draw (global and local) as its state."""
    X, gid = _grouped()
    fam = HDPLimit(X, lam=bc.hard_hdp_penalties(X, 3, 6, group_ids=gid), group_ids=gid)
    states = fam.initial_states(3)
    states = fam.restart(states, 2)
    new, draws = fam.sample(V.as_rng_key(0), 0.01 * fam.scale, states, num_warmup=3,
                            num_samples=4)
    assert draws.shape == (3, 4, len(X))
    np.testing.assert_array_equal(new["dishes"], draws[:, -1])
    for z, t in zip(new["dishes"], new["tables"]):  # every table inside one global cluster
        pairs = np.unique(np.stack([gid, t]), axis=1).shape[1]
        assert np.unique(np.stack([gid, t, z]), axis=1).shape[1] == pairs
    taken = fam.take(new, np.array([2, 2, 0]))
    np.testing.assert_array_equal(taken["tables"][1], new["tables"][2])
    back = fam.restart(new, 0)
    assert not back["tables"][0].any() and not back["dishes"][0].any()


def test_registered_and_built_from_hard_results():
    X, gid = _grouped()
    assert family_class("hdp") is HDPLimit
    lam = bc.hard_hdp_penalties(X, 3, 6, group_ids=gid)
    res = bc.hard_hdp(X, *lam, group_ids=gid)
    fam = HDPLimit.from_hard(res, X, group_ids=gid)
    assert (fam.lam_local, fam.lam_global) == (res.lam_local, res.lam_global)
    est = bc.HardHDP(*lam).fit(X, group_ids=gid)
    fam = HDPLimit.from_hard(est, X, group_ids=gid)
    assert (fam.lam_local, fam.lam_global) == (est.lam_local_, est.lam_global_)
    assert fam.objective(est.labels_) == pytest.approx(res.objective, rel=1e-6)
    assert "HardHDPResult" in HDPLimit.hard_types and "HardHDP" in HDPLimit.hard_types
    with pytest.raises(ValueError, match="group_ids"):
        HDPLimit.from_hard(res, X)
    moved = gid.copy()
    moved[np.flatnonzero(gid == 0)[0]] = 1
    with pytest.raises(ValueError, match="sizes"):
        HDPLimit.from_hard(res, X, group_ids=moved)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "group_ids"),
        ({"group_ids": [0, 1, 0]}, "group_ids"),
        ({"group_ids": "G", "lam": 1.0}, "lam"),
        ({"group_ids": "G", "lam": (1.0,)}, "lam"),
        ({"group_ids": "G", "lam": (1.0, 2.0, 3.0)}, "lam"),
        ({"group_ids": "G", "lam": (1.0, -2.0)}, "lam"),
        ({"group_ids": "G", "lam": (0.0, 2.0)}, "lam"),
        ({"group_ids": "G", "lam": (1.0, np.inf)}, "lam"),
        ({"group_ids": "G", "lam": (np.nan, 1.0)}, "lam"),
        ({"group_ids": "G", "lam": ("a", 1.0)}, "lam"),
        ({"group_ids": "G"}, "lam"),
        ({"group_ids": "G", "lam": (1.0, 1.0), "n_local": 3}, "lam"),
        ({"group_ids": "G", "lam": (1.0, 1.0), "rho2": 0.0}, "rho2"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    X, gid = _grouped()
    if kwargs.get("group_ids") == "G":
        kwargs = {**kwargs, "group_ids": gid}
    with pytest.raises(ValueError, match=match):
        bc.limit_path(0, X, model="hdp", **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"init_tables": np.zeros(12)}, "init_tables needs init_labels"),
        ({"init_labels": np.arange(12), "init_tables": np.zeros(12)}, "init_tables"),
        ({"init_labels": np.zeros((3, 12))}, "init_labels has 3 rows"),
        ({"init_labels": np.zeros(11)}, "init_labels"),
    ],
)
def test_bad_initial_seating(kwargs, match):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=match):
        gibbs_hdp_gmm(0, rng.normal(size=(12, 2)), group_ids=np.repeat([0, 1], 6), num_chains=2,
                      progress_bar=False, **kwargs)
