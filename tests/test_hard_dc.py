"""HardDC (ours: docs/deviations.md#hard-dc-model): the small-variance limit of the tempered
DP-MDA2, its Gibbs sampler, its objective and its step.

References: slow per-point loops and exact enumeration of the partitions (tests/_reference.py),
DP-means for ``xi = 0``, SciPy log-gamma in ``metrics.hard_dc_objective``.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesclust import _validation as V
from bayesclust import dp_means, metrics
from bayesclust.inference.hard.hard_dc import (
    HardDCState,
    hard_dc,
    hard_dc_predict,
    hard_dc_step,
    init_hard_dc_state,
)
from bayesclust.inference.mixtures.dp_mda2_gibbs import (
    dp_mda2_sweep,
    gibbs_dp_mda2,
    init_dp_mda2_state,
)
from bayesclust.kernels import padded_rows, polya_log_evidence, polya_log_predictive
from bayesclust.models.dp_gmm import log_alpha_from_lam

from ._reference import (
    all_partitions,
    canonical,
    dc_limit_log_posterior,
    empties_during_pass,
    hard_dc_pass_loop,
)


def _blobs(seed, n_per=20, d=2, k=3, spread=0.6, n_classes=3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(k, d))
    X = np.concatenate([rng.normal(c, spread, (n_per, d)) for c in centres])
    classes = rng.integers(n_classes, size=len(X))
    return X, classes


def _random_state(rng, n, d, k):
    X = rng.normal(scale=2.0, size=(n, d))
    labels = np.unique(rng.integers(k, size=n), return_inverse=True)[1]
    centers = np.array([X[labels == c].mean(0) for c in range(labels.max() + 1)])
    return X, labels, centers


def _state_at(X, classes, labels, centers, lam, xi, capacity=64):
    """A HardDC state holding ``labels`` with ``centers`` (not necessarily the means)."""
    n_classes = int(classes.max()) + 1
    s = init_hard_dc_state(X, classes, lam, xi, n_classes=n_classes, labels=labels,
                           capacity=capacity)
    return s._replace(centers=s.centers.at[: len(centers)].set(centers))


# --------------------------------------------------------------------------- #
# The kernel
# --------------------------------------------------------------------------- #


def test_polya_predictive_is_the_ratio_of_evidences(x64):
    """pred_j(c) = Polya(table with the point) / Polya(table without it), for every cluster."""
    rng = np.random.default_rng(0)
    table = rng.integers(0, 4, size=(5, 3)).astype(float)
    table[2] = 0.0  # an empty (new) cluster
    for c in range(3):
        got = np.asarray(polya_log_predictive(jnp.asarray(table), c, 0.7))
        for j in range(5):
            plus = table.copy()
            plus[j, c] += 1
            ref = (float(polya_log_evidence(plus, 0.7, include_norm=True))
                   - float(polya_log_evidence(table, 0.7, include_norm=True)))
            assert got[j] == pytest.approx(ref, abs=1e-12)
    assert got[2] == pytest.approx(math.log(1 / 3), abs=1e-15)


# --------------------------------------------------------------------------- #
# (a) the pass against slow loops and against one sweep at tiny sigma2
# --------------------------------------------------------------------------- #


def test_pass_matches_the_slow_loop(x64):
    """One hard_dc_step's labels are the per-point loop's (Algorithm 1 conventions)."""
    rng = np.random.default_rng(3)
    step = jax.jit(hard_dc_step, static_argnames=("n_classes",))
    for case in range(25):
        X, labels, centers = _random_state(rng, 25, 2, int(rng.integers(1, 5)))
        classes = rng.integers(3, size=25)
        classes[:3] = [0, 1, 2]
        lam, xi = float(rng.uniform(0.5, 8.0)), float(rng.uniform(0.0, 4.0))
        ref = hard_dc_pass_loop(X, classes, labels, centers, lam, xi)
        s = _state_at(X, classes, labels, centers, lam, xi)
        out, _ = step(s, X, classes, lam, xi, n_classes=3)
        assert canonical(np.asarray(out.labels)) == canonical(ref), f"case {case}"


def test_one_sweep_at_tiny_sigma2_is_a_hard_dc_pass(x64):
    """sigma2 = 1e-10 lam: one explicit-means sweep is the live-count pass always, and the
    package's pass whenever no cluster empties during it (docs/deviations.md#dpmeans-own-cluster)."""
    rng = np.random.default_rng(1)
    rho2, d, n = 100.0, 2, 25
    sweep = jax.jit(dp_mda2_sweep, static_argnames=("collapsed",))
    step = jax.jit(hard_dc_step, static_argnames=("n_classes",))
    same_as_package = 0
    for case in range(30):
        X, labels, centers = _random_state(rng, n, d, int(rng.integers(1, 5)))
        classes = rng.integers(3, size=n)
        classes[:3] = [0, 1, 2]
        lam, xi = float(rng.uniform(1.0, 8.0)), float(rng.uniform(0.0, 3.0))
        sigma2 = 1e-10 * lam
        log_alpha = log_alpha_from_lam(lam, sigma2, rho2, d)
        s = init_dp_mda2_state(X, classes, labels, 64, log_alpha, sigma2, n_classes=3)
        s = s._replace(means=s.means.at[: len(centers)].set(centers))
        out, _ = sweep(jax.random.PRNGKey(case), jnp.asarray(X), jnp.asarray(classes), s,
                       xi=xi, rho2=rho2)
        assert not bool(out.overflow)
        live = hard_dc_pass_loop(X, classes, labels, centers, lam, xi, live=True)
        assert canonical(np.asarray(out.labels)) == canonical(live), f"case {case}"
        if not empties_during_pass(X, classes, labels, centers, lam, xi):
            hs = _state_at(X, classes, labels, centers, lam, xi)
            hard, _ = step(hs, X, classes, lam, xi, n_classes=3)
            assert canonical(np.asarray(out.labels)) == canonical(np.asarray(hard.labels))
            same_as_package += 1
    assert same_as_package >= 10


# --------------------------------------------------------------------------- #
# (b) xi = 0 is DP-means
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_xi_zero_is_dp_means(seed, x64):
    X, classes = _blobs(seed, d=1 + seed % 3)
    lam = float(np.random.default_rng(seed).uniform(1.0, 10.0))
    hard = hard_dc(X, classes, lam, 0.0)
    ref = dp_means(X, lam)
    assert np.array_equal(hard.labels, ref.labels)
    assert hard.n_iter == ref.n_iter
    np.testing.assert_allclose(hard.centers, ref.centers, rtol=1e-12, atol=1e-12)
    assert hard.objective == pytest.approx(ref.objective, rel=1e-12)


def test_xi_zero_is_dp_means_on_three_gaussians():
    from bayesclust import datasets, farthest_first_lambda

    X, y = datasets.three_gaussians(0, n_per_cluster=40)
    lam = farthest_first_lambda(X, 3)
    assert np.array_equal(hard_dc(X, y, lam, 0.0).labels, dp_means(X, lam).labels)


# --------------------------------------------------------------------------- #
# (c) the objective: monotone, equal to the metric
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("xi", [0.5, 2.0, 8.0])
def test_objective_trace_never_rises_and_is_the_metric(xi, x64):
    X, classes = _blobs(5, n_per=25)
    lam = 3.0
    res = hard_dc(X, classes, lam, xi, max_iter=100)
    assert res.converged
    assert np.all(np.diff(res.objective_trace) <= 1e-12 * np.abs(res.objective_trace[:-1]))
    ref = metrics.hard_dc_objective(X, classes, res.labels, lam, xi)
    assert res.objective == pytest.approx(ref, rel=1e-12)
    assert res.objective_trace[-1] == pytest.approx(ref, rel=1e-12)
    assert res.objective_trace[0] == pytest.approx(
        metrics.hard_dc_objective(X, classes, np.zeros(len(X), int), lam, xi), rel=1e-12)
    # The class term does its work: a lower class cost than DP-means' partition.
    dp = dp_means(X, lam).labels
    assert metrics.dc_log_posterior(res.labels, classes, include_norm=True) >= \
        metrics.dc_log_posterior(dp, classes, include_norm=True)


def test_every_step_lowers_the_metric_float32():
    """float32: each state's objective is the metric of its labels (to float32 rounding)
    and the metric never rises from step to step."""
    X, classes = _blobs(7, n_per=30)
    X = X.astype(np.float32)
    lam, xi = 2.5, 1.5
    step = jax.jit(hard_dc_step, static_argnames=("n_classes",))
    s = init_hard_dc_state(X, classes, lam, xi, n_classes=3)
    prev = metrics.hard_dc_objective(X, classes, np.asarray(s.labels), lam, xi)
    while not bool(s.converged):
        s, info = step(s, X, classes, lam, xi, n_classes=3)
        cur = metrics.hard_dc_objective(X, classes, np.asarray(s.labels), lam, xi)
        assert float(info.objective) == pytest.approx(cur, rel=1e-5)
        assert cur <= prev * (1 + 1e-9)
        prev = cur


def test_metric_by_hand():
    X = [[0.0], [2.0], [10.0]]
    # SSE 2, k = 2: 4; Polya: cluster {0, 1} classes (0, 1): 1/2 * 1/3; {2} class 0: 1/2
    expected = 2.0 + 2 * 1.0 - 0.5 * (math.log(1 / 6) + math.log(1 / 2))
    assert metrics.hard_dc_objective(X, [0, 1, 0], [5, 5, 7], 1.0, 0.5) == pytest.approx(expected)
    # classes are nominal: any integers
    assert metrics.hard_dc_objective(X, [3, 9, 3], [5, 5, 7], 1.0, 0.5) == pytest.approx(expected)
    # n0 = 0.5 (N0 = 1): the sequential predictives 0.5/1 * 0.5/2 and 0.5/1
    expected = 2.0 + 2 * 1.0 - 0.5 * math.log(1 / 16)
    assert metrics.hard_dc_objective(X, [0, 1, 0], [5, 5, 7], 1.0, 0.5, n0=0.5) == pytest.approx(
        expected)


# --------------------------------------------------------------------------- #
# (d) exact enumeration of the tempered posterior
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("collapsed", [True, False])
def test_sampler_frequencies_match_exact_enumeration(collapsed, x64):
    """n = 5: every one of the 52 partitions' tempered posterior (means integrated out) vs
    the sampler's empirical frequencies; total variation below 0.05 (8 chains x 2,500 draws,
    measured TV ~0.01-0.02)."""
    X = np.array([[-1.0], [-0.6], [0.2], [0.9], [1.3]])
    classes = np.array([0, 0, 1, 1, 0])
    lam, xi, sigma2, rho2 = 1.0, 0.4, 0.3, 4.0
    log_alpha = log_alpha_from_lam(lam, sigma2, rho2, 1)
    parts = list(all_partitions(5))
    logp = np.array([dc_limit_log_posterior(X, classes, p, log_alpha, sigma2, rho2, xi)
                     for p in parts])
    exact = np.exp(logp - logp.max())
    exact /= exact.sum()
    post = gibbs_dp_mda2(0, X, classes, lam=lam, xi=xi, sigma2=sigma2, rho2=rho2,
                         collapsed=collapsed, num_warmup=50, num_samples=2500, num_chains=8,
                         center=False, progress_bar=False)
    draws = np.asarray(post.labels).reshape(-1, 5)
    index = {p: i for i, p in enumerate(parts)}
    freq = np.bincount([index[canonical(z)] for z in draws], minlength=len(parts)) / len(draws)
    tv = 0.5 * np.abs(freq - exact).sum()
    assert tv < 0.05, tv


def test_enumeration_reference_is_the_model_program(x64):
    """The enumeration's tempered class term is the program's factor (a second route)."""
    from numpyro.handlers import condition, seed, trace

    from bayesclust.models.dp_mda2 import dp_mda2

    X = np.zeros((5, 1))
    classes = np.array([0, 0, 1, 1, 0])
    for z in ([0, 0, 1, 1, 0], [0, 1, 2, 3, 4]):
        tr = trace(seed(condition(dp_mda2, {"z": np.array(z)}), 0)).get_trace(
            X, classes, n_classes=2, truncation=5, sigma2=0.3, xi=0.4)
        program = float(tr["classes"]["fn"].log_prob(0.0))
        ref = (dc_limit_log_posterior(X, classes, z, 0.0, 0.3, 100.0, 0.4)
               - dc_limit_log_posterior(X, classes, z, 0.0, 0.3, 100.0, 0.0))
        assert program == pytest.approx(ref, rel=1e-6)


# --------------------------------------------------------------------------- #
# (e) the step by hand is the driver
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_step_by_hand_is_the_driver_bit_for_bit(dtype):
    X, classes = _blobs(11, n_per=15)
    X = (X * 7.3 + 2.0).astype(dtype)
    lam, xi = 40.0, 25.0
    with jax.enable_x64(dtype == np.float64):
        res = hard_dc(X, classes, lam, xi)
        # The driver's frame: centred, scaled by a power of two; rows padded (class -1).
        mean = V.centre(X)
        Xs, e = V.to_unit_frame(X, mean, "X")
        n = len(X)
        n_pad = padded_rows(n)
        Xp = np.concatenate([Xs, np.zeros((n_pad - n, X.shape[1]), Xs.dtype)])
        cp = np.concatenate([classes, -np.ones(n_pad - n, int)])
        lam_s, xi_s = (np.asarray(math.ldexp(v, -2 * e), Xs.dtype) for v in (lam, xi))
        step = jax.jit(hard_dc_step, static_argnames=("n_classes",))
        s = init_hard_dc_state(Xp, cp, lam_s, xi_s, n_classes=3, capacity=32, max_iter=127)
        trace = [float(s.objective)]
        while not bool(s.converged):
            s, info = step(s, Xp, cp, lam_s, xi_s, n_classes=3)
            assert not bool(s.overflow)
            trace.append(float(info.objective))
        assert np.array_equal(np.asarray(s.labels)[:n], res.labels)
        assert int(s.n_iter) == res.n_iter and res.converged
        np.testing.assert_array_equal(
            (np.ldexp(np.asarray(s.centers)[: res.n_clusters], e) + mean).astype(Xs.dtype),
            res.centers)
        # float32: every bit.  float64: XLA rounds its log-gamma (the class term) differently
        # in a step compiled alone and inside the driver's loop (another fusion), so the
        # objectives agree to rtol 1e-13 (measured: 5 ulps), the partitions exactly.
        got = np.ldexp(np.asarray(trace, Xs.dtype), 2 * e)
        final = math.ldexp(float(s.objective), 2 * e)
        if dtype == np.float32:
            np.testing.assert_array_equal(got, res.objective_trace)
            assert final == res.objective
        else:
            np.testing.assert_allclose(got, res.objective_trace, rtol=1e-13)
            assert final == pytest.approx(res.objective, rel=1e-13)
        # Unpadded rows: the same partition.
        s2 = init_hard_dc_state(Xs, classes, lam_s, xi_s, n_classes=3)
        while not bool(s2.converged):
            s2, _ = step(s2, Xs, classes, lam_s, xi_s, n_classes=3)
        assert np.array_equal(np.asarray(s2.labels), res.labels)


def test_overflow_returns_the_input_state_and_need(x64):
    """A pass that needs more slots than the buffer holds is discarded with ``need`` set;
    the driver's growth then gives the same partition as a big buffer."""
    X = np.arange(12.0)[:, None] * 10.0
    classes = np.arange(12) % 2
    s = init_hard_dc_state(X, classes, 1.0, 0.1, n_classes=2, capacity=4)
    out, info = hard_dc_step(s, X, classes, 1.0, 0.1, n_classes=2)
    assert bool(out.overflow) and not bool(info.changed)
    assert int(out.need) >= 12
    assert np.array_equal(np.asarray(out.labels), np.asarray(s.labels))
    assert hard_dc(X, classes, 1.0, 0.1).n_clusters == 12


def test_scale_invariance():
    X, classes = _blobs(4)
    a = hard_dc(X, classes, 2.0, 1.0)
    b = hard_dc(X * 1024.0 + 5.0, classes, 2.0 * 1024.0**2, 1.0 * 1024.0**2)
    assert np.array_equal(a.labels, b.labels) and a.n_iter == b.n_iter


def test_predict_is_voronoi_and_classes_are_nominal():
    X, classes = _blobs(2)
    res = hard_dc(X, classes, 2.0, 1.0)
    relabelled = hard_dc(X, np.array([10, -3, 7])[classes], 2.0, 1.0)
    assert np.array_equal(res.labels, relabelled.labels)
    new = np.random.default_rng(0).normal(size=(30, 2)) * 3
    d2 = ((new[:, None, :] - res.centers[None]) ** 2).sum(-1)
    assert np.array_equal(hard_dc_predict(res.centers, new), d2.argmin(1))
    assert res.class_counts.sum() == len(X)


def test_lam_none_uses_farthest_first():
    from bayesclust import farthest_first_lambda

    X, classes = _blobs(3)
    res = hard_dc(X, classes, None, 0.0, n_clusters=3)
    assert res.lam == farthest_first_lambda(X, 3)
    with pytest.raises(ValueError, match="n_clusters"):
        hard_dc(X, classes, None, 1.0)


# --------------------------------------------------------------------------- #
# (f) bad input
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(("kw", "name"), [
    (dict(lam=0.0), "lam"), (dict(lam=-1.0), "lam"), (dict(lam=np.inf), "lam"),
    (dict(lam=np.nan), "lam"), (dict(xi=-1.0), "xi"), (dict(xi=np.nan), "xi"),
    (dict(xi=np.inf), "xi"), (dict(n0=0.0), "n0"), (dict(max_iter=0), "max_iter"),
])
def test_bad_parameters_name_the_argument(kw, name):
    X, classes = _blobs(0, n_per=3)
    args = dict(lam=1.0, xi=1.0) | kw
    with pytest.raises(ValueError, match=name):
        hard_dc(X, classes, **args)


@pytest.mark.parametrize(("kw", "name"), [
    (dict(sigma2=0.0), "sigma2"), (dict(sigma2=np.nan), "sigma2"), (dict(sigma2=-1.0), "sigma2"),
    (dict(lam=0.0), "lam"), (dict(xi=-0.5), "xi"), (dict(xi=np.inf), "xi"),
    (dict(rho2=0.0), "rho2"),
])
def test_sampler_bad_parameters_name_the_argument(kw, name):
    X, classes = _blobs(0, n_per=3)
    args = dict(lam=1.0, xi=1.0, sigma2=0.1) | kw
    with pytest.raises(ValueError, match=name):
        gibbs_dp_mda2(0, X, classes, num_warmup=1, num_samples=1, num_chains=1,
                      progress_bar=False, **args)


@pytest.mark.parametrize("bad", [
    np.arange(8) % 2,  # wrong length
    np.r_[np.nan, np.zeros(8)],  # NaN
    np.r_[0.5, np.zeros(8)],  # not integral
])
def test_bad_classes_name_classes(bad):
    X = np.random.default_rng(0).normal(size=(9, 2))
    with pytest.raises(ValueError, match="classes"):
        hard_dc(X, bad, 1.0, 1.0)
    with pytest.raises(ValueError, match="classes"):
        gibbs_dp_mda2(0, X, bad, lam=1.0, xi=1.0, sigma2=0.1, num_warmup=1, num_samples=1,
                      num_chains=1, progress_bar=False)
    with pytest.raises(ValueError, match="classes"):
        metrics.hard_dc_objective(X, bad, np.zeros(9, int), 1.0, 1.0)


def test_state_is_documented():
    doc = HardDCState.__doc__
    for field in HardDCState._fields:
        assert f"{field} :" in doc, field


# --------------------------------------------------------------------------- #
# The family adapter of limit_path
# --------------------------------------------------------------------------- #


def test_limit_path_collapses_onto_hard_dc():
    from bayesclust.comparison import limit_path
    from bayesclust.datasets import dc_toy

    X, y = dc_toy(0, 40)
    path = limit_path(0, X, model="dc", lam=1.5, y=y, xi=0.5, num_chains=4, num_warmup=20,
                      num_samples=10)
    assert path.stop in ("hard", "lower_objective")
    assert path.model == "dc" and path.temperature_name == "sigma2"
    assert path.objective_point[-1] <= path.hard_objective * (1 + 1e-9)
    assert metrics.hard_dc_objective(X, y, path.hard.labels, 1.5, 0.5) == pytest.approx(
        path.hard_objective, rel=1e-12)


def test_dc_family_log_target_is_the_enumerated_posterior(x64):
    """log_target differs from the enumeration reference by one constant for every partition."""
    from bayesclust.comparison.dc import DCLimit

    X = np.array([[-1.0, 0.2], [-0.6, 0.0], [0.2, 0.4], [0.9, -0.3], [1.3, 0.1]])
    y = np.array([3, 3, 7, 7, 3])  # nominal classes
    fam = DCLimit(X, lam=1.0, y=y, xi=0.4, rho2=4.0)
    parts = np.array(list(all_partitions(5)))
    Xc = X - X.mean(0)
    for sigma2 in (0.3, 0.01):
        got = fam.log_target(parts, sigma2)
        log_alpha = log_alpha_from_lam(1.0, sigma2, 4.0, 2)
        ref = np.array([dc_limit_log_posterior(Xc, [0, 0, 1, 1, 0], p, log_alpha, sigma2, 4.0, 0.4)
                        for p in parts])
        np.testing.assert_allclose(got - ref, (got - ref)[0], atol=1e-8 * np.abs(ref).max())


def test_dc_family_bad_input():
    from bayesclust.comparison import limit_path

    X, classes = _blobs(0, n_per=4)
    with pytest.raises(ValueError, match="y"):
        limit_path(0, X, model="dc", lam=1.0)
    with pytest.raises(ValueError, match="classes"):
        limit_path(0, X, model="dc", lam=1.0, y=classes[:-1])
    with pytest.raises(ValueError, match="xi"):
        limit_path(0, X, model="dc", lam=1.0, y=classes, xi=-1.0)
