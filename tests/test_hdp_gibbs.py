"""CRF Gibbs sampler of the HDP mixture: exact enumeration, the hard-HDP limit, plumbing, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import softmax

from bayesclust.inference.mixtures.hdp_gibbs import (
    HDPState,
    gibbs_hdp_gmm,
    init_hdp_state,
    point_log_weights,
    table_log_weights,
)

from ._reference import (
    all_partitions,
    canonical,
    hard_hdp_point_pass_reference,
    hdp_crf_exact,
    hdp_crf_log_joint,
)

_GROUPS5 = [np.array([[-1.0], [-0.8], [1.0]]), np.array([[1.2], [-1.1]])]
_HYPER5 = dict(alpha=1.0, gamma=1.5, sigma2=0.3, rho2=2.0)


def _frequencies(keys):
    counts = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    return {k: c / len(keys) for k, c in counts.items()}


@pytest.mark.slow
def test_stationary_distribution_matches_enumeration(x64):
    """Two data sets of 3 + 2 points: the sampled global partitions (52 possible) and
    local partitions (10) match the exact CRF posterior, enumerated over every table
    and dish configuration with the means integrated out (the default sweep: point and
    table moves, one split-merge move)."""
    exact_global, exact_local = hdp_crf_exact(_GROUPS5, **_HYPER5)
    post = gibbs_hdp_gmm(1, _GROUPS5, **_HYPER5, num_warmup=200, num_samples=10000,
                         thin=1, num_chains=3, center=False, progress_bar=False)
    draws = post.labels.reshape(-1, 5)
    emp_global = _frequencies([canonical(d) for d in draws])
    local = post.params["local_labels"].reshape(-1, 5)
    emp_local = _frequencies([(canonical(d[:3]), canonical(d[3:])) for d in local])
    for exact, emp in ((exact_global, emp_global), (exact_local, emp_local)):
        assert set(emp) <= set(exact)
        diffs = [abs(emp.get(k, 0.0) - p) for k, p in exact.items()]
        # 30,000 correlated draws: the Monte Carlo error of a probability is ~0.005.
        assert 0.5 * sum(diffs) < 0.04, 0.5 * sum(diffs)
        assert max(diffs) < 0.02, max(diffs)


def _crf_configurations(groups, hyper):
    """Every CRF configuration (tables of each data set, dish of every table) with its exact
    posterior probability (means integrated out, :func:`hdp_crf_log_joint`)."""
    import itertools

    from scipy.special import logsumexp

    configs, logp = [], []
    for locals_ in itertools.product(*[list(all_partitions(len(g))) for g in groups]):
        n_tables = sum(max(part) + 1 for part in locals_)
        for dish_part in all_partitions(n_tables):
            configs.append((locals_, dish_part))
            logp.append(hdp_crf_log_joint(groups, locals_, dish_part, **hyper))
    logp = np.array(logp)
    return configs, np.exp(logp - logsumexp(logp))


def test_split_merge_move_leaves_the_exact_crf_posterior_invariant(x64):
    """20,000 chains started from exact draws of the CRF posterior (tables of each data set
    and dishes of the tables, 3 + 2 points, all 134 configurations enumerated) stay exact
    after ten split-merge moves (Dahl 2003; Jain & Neal 2004): the chi-square statistic of
    the (local partitions, global partition) frequencies against the enumeration stays
    within 4 sd of its 133 degrees of freedom (measured 153; with the dish prior's factor
    gamma / (gamma + m) off by one table, 828 at 100,000 chains).  Half the chains move."""
    from bayesclust.inference.mixtures.hdp_gibbs import split_merge_move

    groups, hyper = _GROUPS5, _HYPER5
    configs, prob = _crf_configurations(groups, hyper)
    sizes = [len(g) for g in groups]
    X = jnp.asarray(np.concatenate(groups))
    gid = jnp.asarray(np.repeat(np.arange(len(groups)), sizes), jnp.int32)
    L, P, C = 4, 8, 20_000

    def key_of(tables, dishes):
        parts = np.split(np.asarray(tables), np.cumsum(sizes)[:-1])
        return tuple(canonical(t) for t in parts), canonical(dishes)

    exact = {}
    for (locals_, dish_part), p in zip(configs, prob):
        offsets = np.cumsum([0] + [max(t) + 1 for t in locals_])
        dishes = np.concatenate([np.asarray(dish_part)[o + np.asarray(t)]
                                 for o, t in zip(offsets, locals_)])
        k = key_of(np.concatenate(locals_), dishes)
        exact[k] = exact.get(k, 0.0) + p
    assert len(exact) == len(configs) == 134
    start = np.random.default_rng(1).choice(len(configs), C, p=prob)
    tables = np.zeros((C, len(X)), np.int32)
    table_dish = np.zeros((C, len(groups), L), np.int32)
    for c, i in enumerate(start):
        locals_, dish_part = configs[i]
        tables[c] = np.concatenate(locals_)
        flat = iter(dish_part)
        for j, t in enumerate(locals_):
            table_dish[c, j, : max(t) + 1] = [next(flat) for _ in range(max(t) + 1)]
    log_alpha, log_gamma = np.log(hyper["alpha"]), np.log(hyper["gamma"])
    init = jax.vmap(lambda t, v: init_hdp_state(X, gid, t, v, L, P, log_alpha=log_alpha,
                                                log_gamma=log_gamma, sigma2=hyper["sigma2"]))
    state = init(jnp.asarray(tables), jnp.asarray(table_dish))

    def chain(key, s):
        def move(s, k):
            return split_merge_move(k, X, gid, s, hyper["rho2"], max_group_size=3)

        return jax.lax.scan(move, s, jax.random.split(key, 10))

    final, accepted = jax.jit(jax.vmap(chain))(jax.random.split(jax.random.key(1), C), state)
    assert not bool(jnp.any(final.overflow))
    # The move keeps the table counts consistent with the seating.
    np.testing.assert_array_equal(
        np.asarray(final.table_counts).reshape(C, -1),
        jax.vmap(lambda t: jnp.bincount(gid * L + t, length=len(groups) * L))(final.tables))
    assert np.asarray(accepted).any(axis=1).mean() > 0.4
    dishes = np.asarray(jax.vmap(lambda s: s.dishes(gid))(final))
    counts = {}
    for t, z in zip(np.asarray(final.tables), dishes):
        k = key_of(t, z)
        counts[k] = counts.get(k, 0) + 1
    assert set(counts) <= set(exact)
    chi2 = sum((counts.get(k, 0) - C * p) ** 2 / (C * p) for k, p in exact.items())
    dof = len(exact) - 1
    assert chi2 < dof + 4 * np.sqrt(2 * dof), chi2


def _hard_costs(x, j, state, lam_local, lam_global):
    """Costs of the seats of :func:`point_log_weights` in the hard limit (docs/deviations.md#hdp-concentration-map)."""
    sq = np.sum((x - np.asarray(state.means)) ** 2, axis=1)
    active = np.asarray(state.dish_tables) > 0
    counts = np.asarray(state.table_counts)[j]
    dish = np.asarray(state.table_dish)[j]
    tables = np.where(counts > 0, sq[dish], np.inf)
    new_table = np.where(active, lam_local + sq, np.inf)
    return np.concatenate([tables, new_table, [lam_local + lam_global]])


def _random_state(rng, groups, L, P, n_dishes, sigma2, log_alpha, log_gamma):
    """Random tables (each data set's points spread over up to 3 tables) and dishes."""
    X = np.concatenate(groups)
    gid = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    tables = np.concatenate([rng.integers(0, 3, len(g)) for g in groups])
    table_dish = rng.integers(0, n_dishes, (len(groups), L))
    state = init_hdp_state(jnp.asarray(X), gid, tables, table_dish, L, P, log_alpha=log_alpha,
                           log_gamma=log_gamma, sigma2=sigma2)
    means = jnp.asarray(rng.uniform(-2, 2, (P, X.shape[1])))
    return X, gid, state._replace(means=jnp.where((state.dish_tables > 0)[:, None], means, 0.0))


@pytest.mark.parametrize("seed", range(6))
def test_point_weights_concentrate_on_the_hard_hdp_choice(x64, seed):
    """sigma2 -> 0 with alpha = exp(-lam_l / (2 sigma2)), gamma = (1 + rho2/sigma2)^(d/2)
    exp(-lam_g / (2 sigma2)): a point's seat distribution puts all its mass on the
    seats of least hard cost -- |x - mu_p|^2 at a table of its data set serving p,
    lam_l + |x - mu_p|^2 at a new table serving p, lam_l + lam_g for a new dish --
    which is step 4 of Kulis & Jordan's Algorithm 2."""
    rng = np.random.default_rng(seed)
    d, rho2, sigma2 = 2, 1.0, 1e-4
    lam_l, lam_g = rng.uniform(0.2, 1.0), rng.uniform(0.2, 2.0)
    log_alpha = -lam_l / (2 * sigma2)
    log_gamma = 0.5 * d * np.log1p(rho2 / sigma2) - lam_g / (2 * sigma2)
    groups = [rng.uniform(-2.5, 2.5, (12, d)) for _ in range(3)]
    X, gid, state = _random_state(rng, groups, 8, 8, 5, sigma2, log_alpha, log_gamma)
    log_new = -0.5 * d * np.log(2 * np.pi * (rho2 + sigma2)) - np.sum(X**2, 1) / (2 * (rho2 + sigma2))
    for i in range(len(X)):
        j, t = gid[i], int(state.tables[i])
        removed = state._replace(table_counts=state.table_counts.at[j, t].add(-1.0))
        if float(removed.table_counts[j, t]) == 0:
            removed = removed._replace(
                dish_tables=removed.dish_tables.at[removed.table_dish[j, t]].add(-1.0))
        prob = softmax(np.asarray(point_log_weights(jnp.asarray(X[i]), j, removed, log_new[i])))
        cost = _hard_costs(X[i], j, removed, lam_l, lam_g)
        best = np.flatnonzero(np.isclose(cost, cost.min(), rtol=0, atol=1e-9))
        assert prob[best].sum() > 1 - 1e-9, (i, cost, prob)


@pytest.mark.parametrize("seed", range(4))
def test_table_weights_concentrate_on_the_hard_hdp_choice(x64, seed):
    """Same limit for a table S: existing dish p costs sum_{x in S} |x - mu_p|^2, a new
    dish lam_g + SSE_S (step 5 of Algorithm 2)."""
    rng = np.random.default_rng(seed)
    d, rho2, sigma2 = 2, 1.0, 1e-4
    lam_g = rng.uniform(0.2, 2.0)
    log_gamma = 0.5 * d * np.log1p(rho2 / sigma2) - lam_g / (2 * sigma2)
    groups = [rng.uniform(-2, 2, (10, d)) for _ in range(2)]
    X, gid, state = _random_state(rng, groups, 4, 8, 4, sigma2, 0.0, log_gamma)
    means = np.asarray(state.means)
    active = np.asarray(state.dish_tables) > 0
    for _ in range(20):
        S = rng.uniform(-2, 2, (rng.integers(1, 5), d))
        cost = np.append(np.where(active, [np.sum((S - m) ** 2) for m in means], np.inf),
                         lam_g + np.sum((S - S.mean(0)) ** 2))
        logw = table_log_weights(jnp.asarray(float(len(S))), jnp.asarray(S.sum(0)),
                                 jnp.asarray(np.sum((S - S.mean(0)) ** 2)), state, rho2)
        prob = softmax(np.asarray(logw))
        best = np.flatnonzero(np.isclose(cost, cost.min(), rtol=0, atol=1e-9))
        assert prob[best].sum() > 1 - 1e-9, (cost, prob)


def test_point_sweep_reproduces_hard_hdp_step_4(x64):
    """A whole pass over the points at sigma2 = 1e-5 gives the same global cluster for
    every point as the literal step 4 from the same state (separated data; every table
    keeps a point, so the two agree on which global clusters a data set uses)."""
    from bayesclust.inference.mixtures.hdp_gibbs import _scan_points

    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0]])
    groups = []
    for _ in range(4):
        use = rng.choice(4, 2, replace=False)
        groups.append(np.concatenate([centres[c] + 0.2 * rng.standard_normal((6, 2)) for c in use]))
    groups.append(centres[[3]] + 0.2 * rng.standard_normal((5, 2)))
    groups[-1][2] = [9.0, -6.0]  # far from every mean: opens a local and a global cluster
    lam_l, lam_g, sigma2, rho2, d = 1.0, 3.0, 1e-5, 10.0, 2
    # State: global means at three of the four centres; each data set's points start at
    # one table per true centre, mapped to the nearest of the three means.
    mu = [centres[0].copy(), centres[1].copy(), centres[2].copy()]
    z, v = [], []
    for Xj in groups:
        near = np.argmin(((Xj[:, None] - np.array(mu)[None]) ** 2).sum(-1), axis=1)
        own = np.argmin(((Xj[:, None] - centres[None]) ** 2).sum(-1), axis=1)
        uniq = list(dict.fromkeys(own.tolist()))
        z.append(np.array([uniq.index(o) for o in own]))
        v.append([int(near[own == o][0]) for o in uniq])
    L, P = 8, 8
    table_dish = np.zeros((len(groups), L), int)
    for j, vj in enumerate(v):
        table_dish[j, : len(vj)] = vj
    X = np.concatenate(groups)
    gid = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    state = init_hdp_state(jnp.asarray(X), gid, np.concatenate(z), table_dish, L, P,
                           log_alpha=-lam_l / (2 * sigma2),
                           log_gamma=0.5 * d * np.log1p(rho2 / sigma2) - lam_g / (2 * sigma2),
                           sigma2=sigma2)
    state = state._replace(means=state.means.at[:3].set(jnp.asarray(np.array(mu))))
    n = len(X)
    out = _scan_points(jnp.asarray(X), jnp.asarray(gid, jnp.int32), rho2, state,
                       jnp.full(n, 0.5), jnp.zeros((n, d)))
    sampled = np.asarray(out.dishes(jnp.asarray(gid)))

    hard_hdp_point_pass_reference(groups, z, v, mu, lam_l, lam_g)
    hard = np.concatenate([np.asarray(vj)[zj] for zj, vj in zip(z, v)])
    # The reference opened global clusters (for the fourth centre, and for the far point)
    # and the sampler opened them at the same points.
    assert len(mu) == 5
    assert canonical(sampled) == canonical(hard)
    assert not bool(out.overflow)


#: Data-set sizes and run of the plumbing tests below (one compiled sampler for both).
_SIZES = (7, 5, 6)
_RUN = dict(num_warmup=10, num_samples=30, thin=1, num_chains=2, progress_bar=False)


def test_group_ids_form_is_the_list_form_permuted():
    rng = np.random.default_rng(0)
    groups = [rng.normal(m, 1, (size, 2)) for m, size in zip((0, 3, -3), _SIZES)]
    kw = dict(sigma2=0.5, **_RUN)
    a = gibbs_hdp_gmm(0, groups, **kw)
    X = np.concatenate(groups)
    ids = np.repeat([10, 20, 30], [7, 5, 6])
    # Rows of the data sets interleaved at random, each data set's rows in their order
    # (the order inside a data set is the sampler's visiting order).
    slot_ids = rng.permutation(ids)
    perm = np.concatenate([np.flatnonzero(ids == g) for g in (10, 20, 30)])[
        np.argsort(np.argsort(slot_ids, kind="stable"))]
    assert all(np.all(np.diff(perm[ids[perm] == g]) > 0) for g in (10, 20, 30))
    b = gibbs_hdp_gmm(0, X[perm], group_ids=ids[perm], **kw)
    np.testing.assert_array_equal(b.labels, a.labels[..., perm])
    np.testing.assert_array_equal(b.params["local_labels"], a.params["local_labels"][..., perm])
    np.testing.assert_array_equal(b.group_order, [10, 20, 30])
    np.testing.assert_array_equal(b.group_ids, np.repeat([0, 1, 2], [7, 5, 6])[perm])
    by_group = a.labels_by_group()
    assert [g.shape for g in by_group] == [(2, 30, 7), (2, 30, 5), (2, 30, 6)]
    assert a.params["means"].shape[-1] == 2


def test_draw_invariants():
    """Local labels are a partition of each data set whose tables each serve one global
    cluster; counts in sample_stats agree with the label draws; means are finite."""
    rng = np.random.default_rng(1)
    groups = [rng.normal(c, 0.3, (size, 2)) for c, size in zip((-2.0, 0.0, 2.0), _SIZES)]
    post = gibbs_hdp_gmm(2, groups, sigma2=0.09, **_RUN)
    local = post.labels_by_group(post.params["local_labels"])
    glob = post.labels_by_group()
    n_local = sum(np.array([[len(np.unique(s)) for s in c] for c in lj]) for lj in local)
    np.testing.assert_array_equal(n_local, post.sample_stats["n_local"])
    for lj, gj in zip(local, glob):
        for c in range(2):
            for s in range(30):
                for t in np.unique(lj[c, s]):
                    assert len(np.unique(gj[c, s][lj[c, s] == t])) == 1
    np.testing.assert_array_equal(post.n_clusters, post.sample_stats["n_clusters"])
    assert np.isfinite(post.params["means"]).all() and np.isfinite(post.log_likelihood).all()
    from bayesclust import _native

    assert post.kernels == ("native" if _native.used_on() else "xla")
    # One split-merge move per sweep by default: the fraction accepted of each draw's one.
    acc = post.sample_stats["split_merge_acceptance"]
    assert acc.shape == (2, 30) and set(np.unique(acc)) <= {0.0, 1.0}


def test_buffers_grow_and_no_cluster_is_dropped():
    """Many small well-separated clusters force the table buffer to grow (8 tables per data
    set to start; 12 tables per data set need one doubling, a second compile of the sweeps,
    and on the native path a sweep that stops at the overflow); no cluster is dropped."""
    rng = np.random.default_rng(4)
    centres = 10.0 * np.stack(np.meshgrid(np.arange(6), np.arange(6)), -1).reshape(-1, 2) - 25.0
    groups = [np.concatenate([centres[c] + 0.05 * rng.standard_normal((2, 2))
                              for c in range(12 * j, 12 * j + 12)]) for j in range(3)]
    post = gibbs_hdp_gmm(0, groups, sigma2=0.0025, rho2=400.0, num_warmup=30, num_samples=5,
                         thin=1, progress_bar=False)
    assert post.n_clusters.min() >= 36
    assert post.params["means"].shape[2] >= 36
    assert post.sample_stats["n_local"].min() >= 36


def test_recovers_the_hdp_synthetic_structure():
    """hdp_groups draw 0 (15 Gaussians, 50 data sets of 5 x 5 points), sigma2 known:
    the posterior point partition (VI loss) has a per-data-set NMI close to the hard
    HDP's (.76-.84 on draws 0-3; measured here .80 with 8 clusters from two chains, .78 with
    7 from the default eight: the 15 Gaussians overlap, and the VI point estimate merges
    those the posterior is unsure of; the posterior of k sits at 11-13).  Two chains: the
    CRF sampler's compile and the point estimate's cost grow with the chains."""
    from bayesclust.datasets import hdp_groups
    from bayesclust.metrics import nmi

    groups, labels, _ = hdp_groups(0)
    post = gibbs_hdp_gmm(0, groups, sigma2=0.01, rho2=1.0, num_warmup=100, num_samples=100,
                         thin=1, num_chains=2, progress_bar=False)
    point = post.point_estimate("vi")
    score = np.mean([nmi(y, z) for y, z in zip(labels, post.labels_by_group(point))])
    k = len(np.unique(point))
    assert 6 <= k <= 22, k
    assert 9 <= np.median(post.n_clusters) <= 20
    assert score >= 0.72, score


@pytest.mark.parametrize(
    "groups, kwargs, exc, match",
    [
        ([], {}, ValueError, "at least one data set"),
        ([np.zeros((3, 2)), np.zeros((0, 2))], {}, ValueError, "groups\\[1\\]"),
        ([np.zeros((3, 2)), np.zeros((3, 3))], {}, ValueError, "features"),
        ([np.zeros((3, 2))], {"sigma2": 0.0}, ValueError, "sigma2"),
        ([np.zeros((3, 2))], {"alpha": -1.0}, ValueError, "alpha"),
        ([np.zeros((3, 2))], {"gamma": 0.0}, ValueError, "gamma"),
        ([np.zeros((3, 2))], {"log_gamma": np.inf}, ValueError, "log_gamma"),
        ([np.zeros((3, 2))], {"rho2": -2.0}, ValueError, "rho2"),
        ([np.zeros((3, 2))], {"gamma_prior": (1.0, 2.0)}, TypeError, "gamma_prior must be a NumPyro distribution"),
        ([np.zeros((3, 2))], {"alpha_prior": (1.0, -1.0)}, TypeError, "alpha_prior"),
        ([np.full((3, 2), np.nan)], {}, ValueError, "NaN|finite"),
        (np.zeros((4, 2)), {"group_ids": [0, 1]}, ValueError, "group_ids"),
        ([np.zeros((3, 2))], {"num_samples": 0}, ValueError, "num_samples"),
        ([np.zeros((3, 2))], {"split_merge": -1}, ValueError, "split_merge"),
    ],
)
def test_bad_input_gives_clear_error(groups, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gibbs_hdp_gmm(0, groups, progress_bar=False, **kwargs)


def test_state_is_a_pytree():
    assert issubclass(HDPState, tuple)
    X = jnp.zeros((4, 2))
    s = init_hdp_state(X, jnp.array([0, 0, 1, 1]), jnp.zeros(4, int), jnp.zeros((2, 2), int), 2, 4,
                       log_alpha=0.0, log_gamma=0.0, sigma2=1.0)
    assert len(jax.tree.leaves(s)) == len(HDPState._fields)


def test_rows_padded_to_a_bucket_leave_every_draw_unchanged(monkeypatch):
    """29 rows in 3 data sets run padded to 32 (zeros, group and table -1; the largest
    data set's 10 rows to 32 slots of the split-merge scan): every draw -- dishes,
    tables, means, the concentrations and sigma2 -- is the unpadded run's, bit for bit."""
    import warnings

    import numpyro.distributions as dist

    import bayesclust.inference.mixtures.hdp_gibbs as H

    rng = np.random.default_rng(4)
    X = (rng.normal(size=(29, 2)) + 3.0 * rng.integers(3, size=(29, 1))).astype(np.float32)
    kw = dict(group_ids=np.arange(29) % 3, sigma2=0.5, num_warmup=2, num_samples=3, thin=1,
              num_chains=2, split_merge=1, alpha_prior=dist.Gamma(1.0, 1.0),
              gamma_prior=dist.Gamma(1.0, 1.0), sigma2_prior=dist.InverseGamma(2.0, 1.0),
              progress_bar=False)
    assert H.run_rows(29) == 32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few draws: a ConvergenceWarning
        padded = H.gibbs_hdp_gmm(0, X, **kw)
        monkeypatch.setattr(H, "run_rows", lambda n: n)
        plain = H.gibbs_hdp_gmm(0, X, **kw)
    assert padded.labels.shape == (2, 3, 29)
    np.testing.assert_array_equal(padded.labels, plain.labels)
    np.testing.assert_array_equal(padded.log_likelihood, plain.log_likelihood)
    for name in ("local_labels", "means", "alpha", "gamma", "sigma2"):
        np.testing.assert_array_equal(padded.params[name], plain.params[name])


_native_only = pytest.mark.skipif(
    not __import__("bayesclust")._native.available(),
    reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")


@_native_only
def test_native_moves_make_the_xla_scans_moves_from_the_same_numbers():
    """The native point and table moves (``hdp.cc``) against the XLA scans
    (``_scan_points`` then ``_scan_tables``) given the same uniforms and normals: 4 chains
    of random seatings of 2 data sets, enough tables and dishes opened and closed; the same
    seating, table counts and dishes, the same new means up to float32 rounding.  The 16
    rows are padded to 20 (zeros, data set and table -1, ``n_valid`` 16), as a run pads
    them to a shape bucket: both paths leave the padded rows alone."""
    from bayesclust import _native
    from bayesclust.inference.mixtures.hdp_gibbs import _scan_points, _scan_tables

    rng = np.random.default_rng(3)
    groups = [rng.normal(0, 1.5, (9, 2)), rng.normal(0, 1.5, (7, 2))]
    X = jnp.asarray(np.concatenate([*groups, np.zeros((4, 2))]), jnp.float32)
    gid = jnp.asarray(np.repeat([0, 1, -1], [9, 7, 4]), jnp.int32)
    n_valid = jnp.int32(16)
    L, P, C = 16, 32, 4
    states = [_random_state(rng, groups, L, P, 4, 0.3, float(rng.normal()), float(rng.normal()))[2]
              for _ in range(C)]
    state = jax.tree.map(lambda *a: jnp.stack(a).astype(a[0].dtype if a[0].dtype != jnp.float64
                                                                else jnp.float32), *states)
    state = state._replace(tables=jnp.pad(state.tables.astype(jnp.int32), ((0, 0), (0, 4)),
                                          constant_values=-1),
                           table_dish=state.table_dish.astype(jnp.int32))
    k = jax.random.split(jax.random.key(0), 4)
    u_p = 1.0 - jax.random.uniform(k[0], (C, 20))
    z_p = jax.random.normal(k[1], (C, 20, 2))
    u_t = 1.0 - jax.random.uniform(k[2], (C, 2 * L))
    z_t = jax.random.normal(k[3], (C, 2 * L, 2))
    rho2 = jnp.float32(2.0)

    def native(s, a, b, c, e):
        out = _native.hdp_crf_moves_ffi(X, gid, rho2, s.tables, s.table_counts, s.table_dish,
                                        s.dish_tables, s.means, s.log_alpha, s.log_gamma,
                                        s.sigma2, jnp.zeros(2, jnp.uint32), n_valid, u_points=a,
                                        z_points=b, u_tables=c, z_tables=e)
        return out[:5], out[5]

    def xla(s, a, b, c, e):
        s = _scan_tables(X, gid, rho2, _scan_points(X, gid, rho2, s, a, b, n_valid), c, e)
        return (s.tables, s.table_counts, s.table_dish, s.dish_tables, s.means), s.overflow

    (got, overflow), (want, want_overflow) = (
        jax.jit(jax.vmap(f))(state, u_p, z_p, u_t, z_t) for f in (native, xla))
    assert not np.any(overflow) and not np.any(want_overflow)
    for a, b in zip(got[:4], want[:4]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_allclose(np.asarray(got[4]), np.asarray(want[4]), rtol=1e-5, atol=1e-5)
    # Tables and dishes did open and close (the draws are not trivially the start).
    assert np.any(np.asarray(got[0]) != np.asarray(state.tables))
    assert np.any(np.asarray(got[2]) != np.asarray(state.table_dish))
    assert np.all(np.asarray(got[0])[:, 16:] == -1)


@_native_only
def test_native_moves_reject_partial_numbers_and_split_merge_with_given_numbers():
    from bayesclust import _native

    X = jnp.zeros((3, 1), jnp.float32)
    gid = jnp.zeros(3, jnp.int32)
    args = (X, gid, 1.0, jnp.zeros(3, jnp.int32), jnp.full((1, 2), 1.5), jnp.zeros((1, 2), jnp.int32),
            jnp.ones(4), jnp.zeros((4, 1)), 0.0, 0.0, 1.0, jnp.zeros(2, jnp.uint32))
    with pytest.raises(ValueError, match="all of u_points"):
        _native.hdp_crf_moves_ffi(*args, u_points=jnp.ones(3))
    with pytest.raises(ValueError, match="draw their own numbers"):
        _native.hdp_crf_moves_ffi(*args, split_merge=1, u_points=jnp.ones(3),
                                  z_points=jnp.zeros((3, 1)), u_tables=jnp.ones(2),
                                  z_tables=jnp.zeros((2, 1)))
    with pytest.raises(Exception, match="n_valid out of"):
        jax.block_until_ready(_native.hdp_crf_moves_ffi(*args, 4))
