"""Gibbs samplers of the DP mixture: exact enumeration, the DP-means limit, bad input."""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from scipy.special import logsumexp

from bayesclust import _native
from bayesclust.inference.mixtures.gibbs import gibbs_dp_gmm
from bayesclust.kernels import crp_log_prior

from ._reference import all_partitions, canonical, dp_gmm_log_posterior


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_crp_prior_sums_to_one_over_all_partitions(n):
    # Counts in a buffer of 6 slots for every n (empty slots are zeros, as in the samplers):
    # one shape, so the op-by-op programs compile once for the six cases.
    for alpha in (0.3, 1.0, 4.0):
        logs = [float(crp_log_prior(jnp.asarray(np.bincount(p, minlength=6), float), alpha))
                for p in all_partitions(n)]
        assert np.exp(logsumexp(logs)) == pytest.approx(1.0, abs=1e-5)


def test_partition_count_is_bell_number():
    assert [sum(1 for _ in all_partitions(n)) for n in range(1, 7)] == [1, 2, 5, 15, 52, 203]


@pytest.mark.slow
@pytest.mark.parametrize("collapsed", [True, False])
def test_stationary_distribution_matches_enumeration(x64, collapsed):
    """For n = 5 the sampled partition frequencies match the exact posterior."""
    X = np.array([[-1.2], [-0.9], [0.1], [1.0], [1.4]])
    alpha, sigma2, rho2 = 1.0, 0.3, 2.0
    parts = list(all_partitions(len(X)))
    logp = np.array([dp_gmm_log_posterior(X, p, alpha, sigma2, rho2) for p in parts])
    exact = dict(zip(parts, np.exp(logp - logsumexp(logp))))

    post = gibbs_dp_gmm(0, X, alpha=alpha, sigma2=sigma2, rho2=rho2, collapsed=collapsed,
                        num_warmup=200, num_samples=6000, num_chains=4, center=False,
                        progress_bar=False)
    draws = post.labels.reshape(-1, len(X))
    counts = {}
    for d in draws:
        key = canonical(d)
        counts[key] = counts.get(key, 0) + 1
    empirical = {p: counts.get(p, 0) / len(draws) for p in parts}
    tv = 0.5 * sum(abs(empirical[p] - exact[p]) for p in parts)
    worst = max(abs(empirical[p] - exact[p]) for p in parts)
    # 24,000 correlated draws: Monte Carlo error of a probability is below ~0.01.
    assert tv < 0.04, tv
    assert worst < 0.02, worst


@pytest.mark.paper
def test_three_gaussians_posterior_point_partition():
    """KJ §6.2 data: the posterior point partition (VI loss) has k = 3 and NMI
    >= 0.85 to the truth on average over data sets (DP-means: .89 in the paper)."""
    from bayesclust import datasets, metrics

    nmis = []
    for seed in range(3):
        X, y = datasets.three_gaussians(seed)
        post = gibbs_dp_gmm(seed, X, alpha=1.0, sigma2=0.65**2, rho2=100.0, collapsed=True,
                            num_warmup=200, num_samples=200, num_chains=2, progress_bar=False)
        point = post.point_estimate("vi")
        assert metrics.n_clusters(point) == 3
        nmis.append(metrics.nmi(y, point))
    assert np.mean(nmis) >= 0.85, nmis


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(sigma2=0.0), "sigma2 must be a positive"),
        (dict(rho2=-1.0), "rho2 must be a positive"),
        (dict(alpha=0.0), "alpha must be a positive"),
        (dict(num_samples=0), "num_samples must be >= 1"),
        (dict(init_labels=[0, 1]), "init_labels has length 2"),
    ],
)
def test_bad_input(kwargs, match):
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=match):
        gibbs_dp_gmm(0, X, progress_bar=False, **kwargs)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(alpha_prior=dist.InverseGamma(1.0, 1.0)), ValueError, "alpha_prior must be a numpyro.distributions.Gamma"),
        (dict(sigma2_prior=dist.Gamma(1.0, 1.0)), ValueError, "sigma2_prior must be a numpyro.distributions.InverseGamma"),
        (dict(alpha_prior=dist.Gamma(np.ones(2), 1.0)), ValueError, "alpha_prior must be a scalar"),
        (dict(alpha_prior=dist.Gamma(-1.0, 1.0, validate_args=False)), ValueError, r"alpha_prior.concentration must be a positive"),
        (dict(sigma2_prior=1.0), TypeError, r"sigma2_prior must be a NumPyro distribution, numpyro.distributions.InverseGamma\(shape, scale\)"),
        # A pair of parameters is not a prior: the distribution is.
        (dict(alpha_prior=(2.0, 0.5)), TypeError, r"alpha_prior must be a NumPyro distribution, numpyro.distributions.Gamma\(shape, rate\), got tuple"),
        (dict(sigma2_prior=(1.0, -1.0)), TypeError, "sigma2_prior must be a NumPyro distribution"),
    ],
)
def test_sampler_priors_must_be_the_conjugate_family(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gibbs_dp_gmm(0, np.arange(12.0).reshape(6, 2), progress_bar=False, **kwargs)


def test_nan_data_rejected():
    with pytest.raises(ValueError, match="X contains NaN"):
        gibbs_dp_gmm(0, np.array([[0.0, np.nan], [1.0, 2.0]]), progress_bar=False)


# --------------------------------------------------------------------------- #
# Split-merge moves and the blocked (truncated stick-breaking) sampler
# --------------------------------------------------------------------------- #

_X5 = np.array([[-1.2], [-0.9], [0.1], [1.0], [1.4]])
_HYPER5 = dict(alpha=1.0, sigma2=0.3, rho2=2.0)


def _tv_to(exact, draws):
    """Total-variation distance and worst gap between exact partition probabilities
    and the frequencies of the (label-canonicalised) draws."""
    counts = {}
    for d in draws:
        key = canonical(d)
        counts[key] = counts.get(key, 0) + 1
    gaps = [abs(counts.get(p, 0) / len(draws) - q) for p, q in exact.items()]
    assert sum(counts.values()) == len(draws) and set(counts) <= set(exact)
    return 0.5 * sum(gaps), max(gaps)


def _crp_exact(X, alpha, sigma2, rho2):
    parts = list(all_partitions(len(X)))
    logp = np.array([dp_gmm_log_posterior(X, p, alpha, sigma2, rho2) for p in parts])
    return dict(zip(parts, np.exp(logp - logsumexp(logp))))


def test_split_merge_move_alone_matches_enumeration(x64):
    """Split-merge moves alone (no single-site moves: they can reach every partition by
    splits and merges) leave the exact posterior over the 52 partitions of 5 points
    invariant: 4 chains x 20,000 moves from one cluster."""
    from bayesclust.inference.mixtures.gibbs import init_state, split_merge_move

    exact = _crp_exact(_X5, **_HYPER5)
    X = jnp.asarray(_X5)
    state = init_state(X, jnp.zeros(5, jnp.int32), 8, np.log(_HYPER5["alpha"]), _HYPER5["sigma2"])
    state = jax.tree.map(lambda a: jnp.broadcast_to(a, (4,) + a.shape), state)

    def chain(key, s):
        def move(s, k):
            s, _ = split_merge_move(k, X, s, _HYPER5["rho2"])
            return s, s.labels

        return jax.lax.scan(move, s, jax.random.split(key, 20_000))

    final, labels = jax.jit(jax.vmap(chain))(jax.random.split(jax.random.PRNGKey(0), 4), state)
    assert not bool(jnp.any(final.overflow))
    # counts / sums are kept consistent with the labels by the move itself
    for c in range(4):
        np.testing.assert_allclose(np.asarray(final.counts[c]),
                                   np.bincount(np.asarray(final.labels[c]), minlength=8))
    tv, worst = _tv_to(exact, np.asarray(labels).reshape(-1, 5))
    # 80,000 draws (the move is rejected often, so fewer effective): MC error ~0.005.
    assert tv < 0.03, tv
    assert worst < 0.01, worst


@pytest.mark.slow
@pytest.mark.parametrize("collapsed", [True, False])
def test_split_merge_sampler_matches_enumeration(x64, collapsed):
    """Single-site sweeps plus two split-merge moves per sweep: same exact posterior."""
    exact = _crp_exact(_X5, **_HYPER5)
    post = gibbs_dp_gmm(0, _X5, collapsed=collapsed, split_merge=2, num_warmup=100,
                        num_samples=5000, num_chains=4, center=False, progress_bar=False,
                        **_HYPER5)
    assert post.sampler.endswith("+split-merge")
    tv, worst = _tv_to(exact, post.labels.reshape(-1, 5))
    assert tv < 0.04, tv
    assert worst < 0.02, worst


def _truncated_exact(X, alpha, sigma2, rho2, T):
    """Exact partition posterior of the truncated stick-breaking mixture (T components,
    v_j ~ Beta(1, alpha), v_T = 1) by enumerating all T**n label vectors:
    p(z) = prod_{j<T} B(1 + n_j, alpha + sum_{l>j} n_l) / B(1, alpha), times the
    Gaussian marginal of each occupied component (the CRP terms of
    ``dp_gmm_log_posterior`` removed), summed over the labelings of each partition."""
    import itertools

    from scipy.special import betaln, gammaln

    n = len(X)
    marg = {}

    def cluster(members):
        if members not in marg:
            m = len(members)
            # dp_gmm_log_posterior of a single cluster = log alpha + log Gamma(m)
            # + log Gamma(alpha) - log Gamma(alpha + m) + marginal
            marg[members] = (dp_gmm_log_posterior(X[list(members)], np.zeros(m, int), alpha,
                                                  sigma2, rho2)
                             - np.log(alpha) - gammaln(m) - gammaln(alpha) + gammaln(alpha + m))
        return marg[members]

    total = {}
    for z in itertools.product(range(T), repeat=n):
        z = np.asarray(z)
        counts = np.bincount(z, minlength=T)
        after = counts.sum() - np.cumsum(counts)
        logp = sum(betaln(1 + counts[j], alpha + after[j]) - betaln(1, alpha) for j in range(T - 1))
        logp += sum(cluster(tuple(np.flatnonzero(z == c))) for c in np.unique(z))
        key = canonical(z)
        total[key] = np.logaddexp(total.get(key, -np.inf), logp)
    keys = list(total)
    logs = np.array([total[k] for k in keys])
    return dict(zip(keys, np.exp(logs - logsumexp(logs))))


@pytest.mark.slow
def test_blocked_sampler_matches_truncated_enumeration(x64):
    """The blocked sampler targets the truncated model (here T = 4, so the truncation
    matters: the exact truncated posterior differs from the CRP one by ~0.05 in TV)."""
    from bayesclust.models.dp_gmm import TruncationWarning

    T = 4
    exact = _truncated_exact(_X5, T=T, **_HYPER5)
    crp = _crp_exact(_X5, **_HYPER5)
    assert 0.5 * sum(abs(exact.get(p, 0.0) - crp[p]) for p in crp) > 0.02  # distinguishable
    with pytest.warns(TruncationWarning):
        post = gibbs_dp_gmm(0, _X5, scheme="blocked", truncation=T, num_warmup=100,
                            num_samples=6000, num_chains=4, center=False, progress_bar=False,
                            **_HYPER5)
    assert post.sampler == "gibbs-blocked"
    assert post.params["weights"].shape == (4, 6000, T)
    np.testing.assert_allclose(post.params["weights"].sum(-1), 1.0, rtol=1e-10)
    tv, worst = _tv_to(exact, post.labels.reshape(-1, 5))
    assert tv < 0.04, tv
    assert worst < 0.02, worst


@pytest.mark.slow  # op-by-op gamma draws take ~30 s
def test_blocked_sweep_jit_and_eager_agree(x64):
    """One blocked sweep (sticks, means, labels, alpha and sigma2 updates), compiled and
    op by op, from the same key."""
    from bayesclust.inference.mixtures.gibbs import blocked_sweep, init_blocked_state

    rng = np.random.default_rng(3)
    X = jnp.asarray(np.concatenate([rng.normal(c, 0.5, size=(3, 2)) for c in (-2.0, 0.0, 2.0)]))
    state = init_blocked_state(X, jnp.asarray(rng.integers(0, 3, size=len(X))), 6, 0.3, 0.4)
    kwargs = dict(rho2=9.0, alpha_prior=(2.0, 1.0), sigma2_prior=(3.0, 1.0))
    key = jax.random.PRNGKey(7)
    out_jit, info_jit = jax.jit(blocked_sweep, static_argnames=("alpha_prior", "sigma2_prior"))(
        key, X, state, **kwargs)
    with jax.disable_jit():
        out_eager, info_eager = blocked_sweep(key, X, state, **kwargs)
    # The info against a slow count of the returned labels.
    labels = np.asarray(out_jit.labels)
    assert int(info_jit.n_clusters) == int(info_eager.n_clusters) == len(np.unique(labels))
    assert bool(info_jit.changed) == (not np.array_equal(labels, np.asarray(state.labels)))
    assert int(info_jit.split_merge_accepted) == int(info_jit.split_merge_proposed) == 0
    np.testing.assert_array_equal(np.asarray(out_jit.labels), np.asarray(out_eager.labels))
    for name in ("log_weights", "means", "log_alpha", "sigma2"):
        np.testing.assert_allclose(np.asarray(getattr(out_jit, name)),
                                   np.asarray(getattr(out_eager, name)), rtol=1e-10, atol=1e-12)
    assert float(jax.scipy.special.logsumexp(out_jit.log_weights)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(scheme="parallel"), "scheme must be 'sequential' or 'blocked'"),
        (dict(scheme="blocked", collapsed=True), "collapsed=True needs scheme='sequential'"),
        (dict(truncation=10), "truncation is an argument of scheme='blocked'"),
        (dict(scheme="blocked", truncation=1), "truncation must be >= 2"),
        (dict(scheme="blocked", truncation=2, init_labels=[0, 1, 2, 0, 1, 2]),
         "more than truncation=2"),
        (dict(split_merge=-1), "split_merge must be >= 0"),
        (dict(scheme="blocked", split_merge=1), "split_merge is an option of scheme='sequential'"),
    ],
)
def test_bad_scheme_arguments(kwargs, match):
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=match):
        gibbs_dp_gmm(0, X, progress_bar=False, **kwargs)


@pytest.mark.parametrize("collapsed", [True, False])
def test_point_scan_of_a_chain_batch_matches_per_point_loop(x64, collapsed):
    """The chain-batched scan moves every chain exactly as a per-point loop of that chain."""
    from bayesclust.inference.mixtures.gibbs import _scan_points, init_state

    from ._reference import gibbs_point_pass_loop

    rng = np.random.default_rng(3)
    n, d, K, C = 40, 3, 16, 3
    X = np.concatenate([rng.normal(m, 0.5, (n // 4, d)) for m in (-3, 0, 2, 5)])
    states = [init_state(jnp.asarray(X), jnp.asarray(rng.integers(0, k, n)), K, la, s2)
              for k, la, s2 in [(1, 0.0, 0.3), (3, -2.0, 0.5), (5, 1.0, 0.2)]]
    batch = jax.tree.map(lambda *a: jnp.stack(a), *states)
    u = 1.0 - rng.random((C, n))
    z = rng.normal(size=(C, n, d))
    out = jax.jit(_scan_points, static_argnums=(1, 2))(jnp.asarray(X), 4.0, collapsed, batch,
                                                      jnp.asarray(u), jnp.asarray(z))
    for c, s in enumerate(states):
        want, overflow = gibbs_point_pass_loop(
            X, np.asarray(s.labels), K, float(s.log_alpha), float(s.sigma2), 4.0, u[c],
            collapsed, means=np.asarray(s.means), z=z[c])
        assert bool(out.overflow[c]) == overflow
        np.testing.assert_array_equal(np.asarray(out.labels[c]), want)
        np.testing.assert_allclose(np.asarray(out.counts[c]), np.bincount(want, minlength=K))
        sums = np.stack([X[want == j].sum(0) for j in range(K)])
        np.testing.assert_allclose(np.asarray(out.sums[c]), sums, atol=1e-10)


def test_sweep_chains_equals_one_chain_sweeps():
    """A batch of chains gives each chain the sweep it gets alone (same key)."""
    from bayesclust.inference.mixtures.gibbs import gibbs_sweep, init_state, sweep_chains

    rng = np.random.default_rng(4)
    X = jnp.asarray(rng.normal(size=(30, 2)), jnp.float32)
    states = [init_state(X, jnp.asarray(rng.integers(0, k, 30)), 8, 0.0, 0.5) for k in (1, 2, 4)]
    keys = jax.random.split(jax.random.PRNGKey(1), 3)
    opts = dict(rho2=10.0, collapsed=True, alpha_prior=(1.0, 1.0), sigma2_prior=(2.0, 1.0),
                split_merge=2)
    batch = jax.tree.map(lambda *a: jnp.stack(a), *states)
    many, many_info = jax.jit(lambda k, s: sweep_chains(k, X, s, **opts))(keys, batch)
    sweep = jax.jit(lambda k, s_: gibbs_sweep(k, X, s_, **opts))  # one compile for the three chains
    for c, s in enumerate(states):
        one, info = sweep(keys[c], s)
        for name in info._fields:
            assert int(getattr(many_info, name)[c]) == int(getattr(info, name)), name
        np.testing.assert_array_equal(np.asarray(many.labels[c]), np.asarray(one.labels))
        np.testing.assert_allclose(np.asarray(many.means[c]), np.asarray(one.means), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(float(many.sigma2[c]), float(one.sigma2), rtol=1e-5)


@pytest.mark.parametrize("collapsed", [True, False])
def test_sweep_info_against_a_slow_count(collapsed):
    """GibbsInfo of a sweep against a slow count: the clusters of the returned labels, a
    point moved, and the split-merge moves accepted, replayed one move at a time after
    the sweep's point moves (those of the same sweep without moves: the rest of the
    sweep's random stream does not depend on them) and counted by whether each move
    changed the labels."""
    from bayesclust.inference.mixtures.gibbs import gibbs_sweep, init_state, split_merge_move

    rng = np.random.default_rng(8)
    X = jnp.asarray(np.concatenate([rng.normal(c, 0.6, (12, 2)) for c in (-2.0, 0.0, 2.0)]),
                    jnp.float32)
    state = init_state(X, jnp.asarray(rng.integers(0, 3, len(X))), 16, 0.0, 0.36)
    moves, rho2 = 5, 9.0
    sweep = jax.jit(gibbs_sweep, static_argnames=("collapsed", "split_merge"))
    move = jax.jit(split_merge_move)
    total = 0
    for t in range(8):
        key = jax.random.PRNGKey(t)
        out, info = sweep(key, X, state, rho2=rho2, collapsed=collapsed, split_merge=moves)
        s, _ = sweep(key, X, state, rho2=rho2, collapsed=collapsed, split_merge=0)
        count = 0
        for k in jax.random.split(jax.random.fold_in(key, 0x5EED), moves):
            before = np.asarray(s.labels)
            s, _ = move(k, X, s, rho2)
            count += not np.array_equal(before, np.asarray(s.labels))
        np.testing.assert_array_equal(np.asarray(s.labels), np.asarray(out.labels))
        labels = np.asarray(out.labels)
        assert int(info.split_merge_accepted) == count
        assert int(info.split_merge_proposed) == moves
        assert int(info.n_clusters) == len(np.unique(labels))
        assert bool(info.changed) == (not np.array_equal(labels, np.asarray(state.labels)))
        total += count
        state = out
    assert 0 < total < 8 * moves  # some moves accepted, some not: both counts are tested


def test_sweep_chains_rejects_mismatched_keys_and_states():
    from bayesclust.inference.mixtures.gibbs import init_state, sweep_chains

    X = jnp.zeros((5, 2))
    one = init_state(X, jnp.zeros(5, jnp.int32), 8, 0.0, 1.0)
    two = jax.tree.map(lambda a: jnp.stack([a, a]), one)
    with pytest.raises(ValueError, match="one key per chain"):
        sweep_chains(jax.random.split(jax.random.PRNGKey(0), 3), X, two, rho2=1.0, collapsed=True)
    with pytest.raises(ValueError, match="chains, n"):
        sweep_chains(jax.random.split(jax.random.PRNGKey(0), 1), X, one, rho2=1.0, collapsed=True)


@pytest.mark.parametrize("native", [
    pytest.param(True, marks=pytest.mark.skipif(
        not _native.available(), reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")),
    False,
])
def test_posterior_records_which_kernels_made_the_draws(native):
    """``Posterior.kernels``: the sequential scheme's sweeps ran on the path in force, the
    blocked scheme always in XLA."""
    X = np.concatenate([np.random.default_rng(0).normal(c, 0.5, (15, 2)) for c in (-2, 2)])
    kw = dict(num_warmup=2, num_samples=2, progress_bar=False)
    with contextlib.nullcontext() if native else _native.disabled():
        sequential = gibbs_dp_gmm(0, X.astype(np.float32), collapsed=True, **kw)
    assert sequential.kernels == ("native" if native else "xla")
    # Up to 127 slots the draws are int8, on either path, as the segments recorded them.
    assert sequential.labels.dtype == np.int8
    if native:  # with the native kernels on (with them off "xla" is the only answer)
        blocked = gibbs_dp_gmm(0, X.astype(np.float32), scheme="blocked", truncation=4, **kw)
        assert blocked.kernels == "xla" and blocked.labels.dtype == np.int8


def test_label_draws_are_written_once_in_the_narrowest_type_widened_when_outgrown():
    """run_in_segments keeps one host array of label draws, int8 while every label fits
    and int16 from the segment whose labels outgrow it, the values unchanged."""
    from bayesclust.inference.mixtures.gibbs import run_in_segments

    C, n = 2, 3

    def run(keys, state, num):  # draw j of the run has every label 40 * j (+ chain, point)
        j = state + jnp.arange(num)
        labels = 40 * j[None, :, None] + jnp.arange(C)[:, None, None] + jnp.arange(n)
        return state + num, {"labels": labels.astype(jnp.int32), "j": jnp.broadcast_to(j, (C, num))}

    records, _ = run_in_segments(jax.random.PRNGKey(0), run, jnp.int32(0), num_chains=C,
                                 num_warmup=3, num_samples=8, thin=1, grow=None,
                                 progress_bar=False, desc="")
    j = np.arange(3, 11)  # warm-up draws 0..2 dropped
    expected = 40 * j[None, :, None] + np.arange(C)[:, None, None] + np.arange(n)
    assert records["labels"].dtype == np.int16  # labels up to 40 * 10 + 3 > 127
    np.testing.assert_array_equal(records["labels"], expected)
    np.testing.assert_array_equal(records["j"], np.broadcast_to(j, (C, 8)))
    small, _ = run_in_segments(jax.random.PRNGKey(0), run, jnp.int32(0), num_chains=C,
                               num_warmup=0, num_samples=3, thin=1, grow=None,
                               progress_bar=False, desc="")
    assert small["labels"].dtype == np.int8  # labels up to 40 * 2 + 3


_PEAK_MEMORY_CHILD = """
import json, jax, jax.numpy as jnp, numpy as np
from bayesclust.inference.mixtures.gibbs import run_in_segments
from bayesclust.inference.mixtures.point_estimates import draws_point_estimate
from bayesclust.inference.mixtures.posterior import Posterior

C, S, n, SEG = 8, 1000, 20000, 50  # run_in_segments cuts 1,000 draws into 20 segments of 50

def peak():
    return next(int(v.split()[1]) for v in open("/proc/self/status") if v.startswith("VmHWM")) * 1024

@jax.jit
def segment(state):  # a sampler's segment: int8 labels (C, SEG, n), as the samplers record them
    labels = (jnp.arange(n)[None, None] * (state + 1) + jnp.arange(SEG)[None, :, None]
              + jnp.arange(C)[:, None, None]) % 6
    return state + 1, {"labels": labels.astype(jnp.int8), "ll": jnp.zeros((C, SEG)) + state}

jax.block_until_ready(segment(jnp.int32(0)))
Posterior(np.zeros((2, 4, 3), np.int8)).diagnostics()  # imports ArviZ before the baseline
base = peak()
rec, _ = run_in_segments(jax.random.PRNGKey(0), lambda k, s, num: segment(s), jnp.int32(0),
                         num_chains=C, num_warmup=0, num_samples=S, thin=1, grow=None,
                         progress_bar=False, desc="")
post = Posterior(rec["labels"], log_likelihood=rec["ll"], copy=False)
post.n_clusters, post.diagnostics(), post.compact(100)
draws_point_estimate(post.pooled_labels, "vi", max_candidates=2, max_draws=20)
print(json.dumps({"grew": peak() - base, "labels": post.labels.nbytes, "dtype": str(post.labels.dtype)}))
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc/self/status")
def test_label_draws_are_never_copied_whole():
    """Peak memory of the draws' way from the segments to the Posterior and its summaries
    (a fresh process): the one int8 array of the draws (160 MB) plus what a few segments
    and a summary's block of draws hold, not another copy of the draws (int32 copies
    were 640 MB each)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _PEAK_MEMORY_CHILD], capture_output=True,
                         text=True, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    C, SEG, n = 8, 50, 20000
    segments = 4 * C * SEG * n * 4  # segments in flight and their int32-wide temporaries
    blocks = 2 * (1 << 22) * 8  # a summary's int64 keys of a block of draws, twice
    assert row["dtype"] == "int8" and row["labels"] == C * 1000 * n
    assert row["grew"] < row["labels"] + segments + blocks, row



@pytest.mark.parametrize("native", [
    pytest.param(True, marks=pytest.mark.skipif(
        not _native.available(), reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")),
    False,
])
def test_rows_padded_to_a_bucket_leave_every_draw_unchanged(monkeypatch, native):
    """The sequential scheme pads its rows to a shape bucket (29 -> 32; 32 is a bucket's
    edge, unpadded): every draw of the real rows is the unpadded run's, bit for bit.
    Algorithm 2 with split-merge moves (new means and the moves' pair drawn among the
    real rows); on the XLA path also the alpha and sigma2 updates (their SSE and n read
    only the real rows; with priors the segment runs in XLA whatever the platform)."""
    from bayesclust.inference.mixtures import gibbs as G

    rng = np.random.default_rng(3)
    X = (rng.normal(size=(32, 2)) + 3.0 * rng.integers(3, size=(32, 1))).astype(np.float32)
    kw = dict(sigma2=0.5, rho2=4.0, num_warmup=2, num_samples=3, thin=2, num_chains=2,
              collapsed=False, split_merge=1, progress_bar=False)
    if native:
        cases = [(29, {}), (32, {})]
    else:
        cases = [(29, dict(alpha_prior=dist.Gamma(1.0, 1.0),
                           sigma2_prior=dist.InverseGamma(2.0, 1.0)))]
    with contextlib.nullcontext() if native else _native.disabled():
        for n, options in cases:
            assert G.run_rows(n) == 32
            padded = gibbs_dp_gmm(1, X[:n], **kw, **options)
            with monkeypatch.context() as m:
                m.setattr(G, "run_rows", lambda n: n)
                plain = gibbs_dp_gmm(1, X[:n], **kw, **options)
            assert padded.kernels == plain.kernels == ("native" if native else "xla")
            assert padded.labels.shape == (2, 3, n)
            np.testing.assert_array_equal(padded.labels, plain.labels)
            np.testing.assert_array_equal(padded.n_clusters, plain.n_clusters)
            for name in ("means", "sigma2", "alpha"):
                np.testing.assert_array_equal(padded.params[name], plain.params[name])
            np.testing.assert_array_equal(padded.log_likelihood, plain.log_likelihood)
