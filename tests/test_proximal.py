"""Proximity operators (Martins et al., 2011, §3, Alg. 2 and 4, Prop. 1): each against its
KKT conditions, against a generic convex solver (SciPy) on random inputs, Algorithm 2 against
a sorting-free brute force over supports, and jit / vmap against the eager call."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

import bayesclust as bc
from bayesclust.structured.proximal import block_norms, prox_block_norms, prox_lq_power

RNG = np.random.default_rng(0)
CASES = [(RNG.normal(size=m) * s, lam) for m, s, lam in
         [(1, 1.0, 0.3), (5, 1.0, 0.1), (8, 3.0, 1.0), (12, 0.5, 0.05), (20, 2.0, 0.02)]]


def _l1sq_obj(u, x, lam, d=None):
    d = np.ones_like(x) if d is None else d
    return 0.5 * np.sum((u - x) ** 2) + 0.5 * lam * np.sum(d * np.abs(u)) ** 2


def _scipy_l1sq(x, lam, d=None):
    """The prox by L-BFGS-B on the split u = p - n, p, n >= 0 (a smooth bound-constrained problem)."""
    d = np.ones_like(x) if d is None else d
    m = len(x)

    def f(z):
        p, n = z[:m], z[m:]
        s = np.sum(d * (p + n))
        r = p - n - x
        return 0.5 * r @ r + 0.5 * lam * s * s, np.concatenate([r + lam * s * d, -r + lam * s * d])

    z0 = np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)])
    res = minimize(f, z0, jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * m),
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    return res.x[:m] - res.x[m:]


def _brute_l1sq(x, lam):
    """Sorting-free: every support A gives tau = lam sum_A |x| / (1 + |A| lam); keep the best."""
    best, arg = np.inf, None
    for r in range(len(x) + 1):
        for A in itertools.combinations(range(len(x)), r):
            tau = lam * np.abs(x[list(A)]).sum() / (1 + len(A) * lam)
            u = np.sign(x) * np.maximum(np.abs(x) - tau, 0)
            val = _l1sq_obj(u, x, lam)
            if val < best:
                best, arg = val, u
    return arg


@pytest.mark.parametrize("x,lam", CASES)
def test_soft_threshold_kkt_and_scipy(x64, x, lam):
    u = np.asarray(bc.soft_threshold(x, lam))
    # KKT of 1/2 |u - x|^2 + lam |u|_1: x - u = lam sign(u) on the support, |x| <= lam off it
    on = u != 0
    np.testing.assert_allclose((x - u)[on], lam * np.sign(u[on]), atol=1e-12)
    assert np.all(np.abs(x[~on]) <= lam + 1e-12)
    for i in range(len(x)):
        ref = minimize_scalar(lambda v, i=i: 0.5 * (v - x[i]) ** 2 + lam * abs(v),
                              bounds=(-10, 10), method="bounded", options={"xatol": 1e-10}).x
        assert abs(u[i] - ref) < 1e-7


@pytest.mark.parametrize("x,lam", CASES)
def test_prox_l1_squared_kkt(x64, x, lam):
    u = np.asarray(bc.prox_l1_squared(x, lam))
    s = np.abs(u).sum()
    on = u != 0
    # x - u in lam * |u|_1 * d|u|_1
    np.testing.assert_allclose((x - u)[on], lam * s * np.sign(u[on]), atol=1e-10)
    assert np.all(np.abs(x[~on]) <= lam * s + 1e-10)
    assert np.all(np.sign(u[on]) == np.sign(x[on]))


@pytest.mark.parametrize("x,lam", CASES)
def test_prox_l1_squared_against_scipy_and_brute_force(x64, x, lam):
    u = np.asarray(bc.prox_l1_squared(x, lam))
    ref = _scipy_l1sq(x, lam)
    assert _l1sq_obj(u, x, lam) <= _l1sq_obj(ref, x, lam) + 1e-12
    np.testing.assert_allclose(u, ref, atol=1e-5)
    if len(x) <= 12:
        np.testing.assert_allclose(u, _brute_l1sq(x, lam), atol=1e-12)


@pytest.mark.parametrize("x,lam", CASES)
def test_prox_l1_squared_pivot_equals_sort(x64, x, lam):
    np.testing.assert_allclose(np.asarray(bc.prox_l1_squared(x, lam, method="pivot")),
                               np.asarray(bc.prox_l1_squared(x, lam)), atol=1e-12)
    np.testing.assert_allclose(np.asarray(bc.prox_l1_squared(x, lam, method="pivot")),
                               _brute_l1sq(x, lam) if len(x) <= 12 else _scipy_l1sq(x, lam),
                               atol=1e-5)


def test_prox_l1_squared_toy_by_hand():
    # |x| = (3, 1): rho = 1 (1 - 0.5/2 * 4 = 0 is not > 0), tau = 0.5 * 3 / 1.5 = 1
    np.testing.assert_allclose(np.asarray(bc.prox_l1_squared([3.0, -1.0], 0.5)), [2.0, 0.0])
    np.testing.assert_array_equal(np.asarray(bc.prox_l1_squared(np.zeros(4), 1.0)), np.zeros(4))


def test_prox_l1_squared_near_the_top_of_float32():
    # tau sums |x|: 3 x 3e38 overflowed float32 and the answer was NaN.  By hand, rho = 3 and
    # tau = 0.5 * 9e38 / (1 + 3 * 0.5) = 1.8e38, so every entry is 3e38 - 1.8e38 = 1.2e38.
    x = np.full(3, 3e38, np.float32)
    for out in (bc.prox_l1_squared(x, 0.5), bc.prox_l1_squared(x, 0.5, method="pivot"),
                bc.prox_l1_squared_weighted(x, 0.5, np.ones(3))):
        np.testing.assert_allclose(np.asarray(out), np.full(3, 1.2e38), rtol=1e-6)
    # float64 values past float32's range name x (they would become infinities)
    with pytest.raises(ValueError, match="^x has values up to"):
        bc.prox_l1_squared_weighted(np.array([1e300, 1.0]), 0.5, np.ones(2))


@pytest.mark.parametrize("x,lam", CASES)
def test_prox_l1_squared_weighted_kkt_and_scipy(x64, x, lam):
    d = RNG.uniform(0.3, 2.0, size=len(x))
    u = np.asarray(bc.prox_l1_squared_weighted(x, lam, d))
    s = np.sum(d * np.abs(u))
    on = u != 0
    np.testing.assert_allclose((x - u)[on], lam * s * d[on] * np.sign(u[on]), atol=1e-10)
    assert np.all(np.abs(x[~on]) <= lam * s * d[~on] + 1e-10)
    ref = _scipy_l1sq(x, lam, d)
    np.testing.assert_allclose(u, ref, atol=1e-5)
    # unit weights: Algorithm 2
    np.testing.assert_allclose(np.asarray(bc.prox_l1_squared_weighted(x, lam, np.ones_like(x))),
                               np.asarray(bc.prox_l1_squared(x, lam)), atol=1e-12)


@pytest.mark.parametrize("q", [1.2, 1.5, 1.8, 2.0])
def test_prox_lq_power_kkt_and_scipy(x64, q):
    b0 = RNG.normal(size=30) * 2
    lam = 0.4
    b = np.asarray(prox_lq_power(b0, lam, q))
    on = b != 0
    # stationarity b - b0 + lam q |b|^(q-1) sign(b) = 0
    np.testing.assert_allclose(b[on] - b0[on] + lam * q * np.abs(b[on]) ** (q - 1) * np.sign(b[on]),
                               0, atol=1e-9)
    for i in range(len(b0)):
        ref = minimize_scalar(lambda v, i=i: 0.5 * (v - b0[i]) ** 2 + lam * abs(v) ** q,
                              bounds=(-20, 20), method="bounded", options={"xatol": 1e-11}).x
        assert abs(b[i] - ref) < 1e-6
    if q == 2.0:
        np.testing.assert_allclose(b, b0 / (1 + 2 * lam), atol=1e-12)


def _blocks():
    return [RNG.normal(size=(3, 4)), RNG.normal(size=5) * 0.2, RNG.normal(size=(2, 2)) * 2]


@pytest.mark.parametrize("penalty", ["group_lasso", "l1_squared", "lq_power"])
def test_prox_block_norms_against_scipy(x64, penalty):
    blocks = _blocks()
    lam, q = 0.5, 1.5
    out = prox_block_norms(blocks, lam, penalty, q=q if penalty == "lq_power" else None)
    sizes = [b.size for b in blocks]
    x = np.concatenate([b.ravel() for b in blocks])
    splits = np.cumsum(sizes)[:-1]

    def phi(norms):
        if penalty == "group_lasso":
            return lam * norms.sum()
        if penalty == "l1_squared":
            return 0.5 * lam * norms.sum() ** 2
        return lam * np.sum(norms ** q)

    def obj(u):
        norms = np.array([np.linalg.norm(p) for p in np.split(u, splits)])
        return 0.5 * np.sum((u - x) ** 2) + phi(norms)

    got = np.concatenate([np.asarray(o).ravel() for o in out])
    ref = minimize(obj, got + 0.01, method="Powell", options={"xtol": 1e-10, "ftol": 1e-14,
                                                              "maxfev": 200000}).x
    assert obj(got) <= obj(ref) + 1e-9
    # Prop. 1: each block keeps its direction
    for o, b in zip(out, blocks):
        o = np.asarray(o)
        if np.linalg.norm(o) > 0:
            np.testing.assert_allclose(o / np.linalg.norm(o), b / np.linalg.norm(b), atol=1e-10)


def test_prox_block_norms_mkl_kkt(x64):
    blocks = _blocks()
    lam = 0.8
    out = prox_block_norms(blocks, lam, "l1_squared")
    b0 = np.asarray(block_norms(blocks))
    b = np.asarray(block_norms(out))
    s = b.sum()
    on = b > 0
    np.testing.assert_allclose(b0[on] - b[on], lam * s, atol=1e-10)
    assert np.all(b0[~on] <= lam * s + 1e-10)


def test_jit_and_vmap_agree_with_eager():
    X = RNG.normal(size=(6, 9)).astype(np.float32)
    eager = np.stack([np.asarray(bc.prox_l1_squared(x, 0.3)) for x in X])
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: bc.prox_l1_squared(x, 0.3))(X)),
                               eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.jit(bc.prox_l1_squared)(X[0], 0.3)), eager[0],
                               rtol=1e-6, atol=1e-7)
    d = np.linspace(0.5, 2, 9).astype(np.float32)
    ev = np.stack([np.asarray(bc.prox_l1_squared_weighted(x, 0.3, d)) for x in X])
    got = jax.vmap(lambda x: bc.prox_l1_squared_weighted(x, 0.3, jnp.asarray(d)))(X)
    np.testing.assert_allclose(np.asarray(got), ev, rtol=1e-6, atol=1e-7)
    jb = jax.jit(lambda bs: bc.prox_block_norms(bs, 0.2, "group_lasso"))([X[0], X[1]])
    eb = bc.prox_block_norms([X[0], X[1]], 0.2, "group_lasso")
    for a, b in zip(jb, eb):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("call,match", [
    (lambda: bc.prox_l1_squared([1.0, 2.0], 0.0), "lam"),
    (lambda: bc.prox_l1_squared([1.0, 2.0], -1.0), "lam"),
    (lambda: bc.prox_l1_squared([[1.0]], 1.0), "x"),
    (lambda: bc.prox_l1_squared([1.0, np.nan], 1.0), "x"),
    (lambda: bc.soft_threshold([1.0], -0.1), "tau"),
    (lambda: bc.prox_l1_squared([1.0], 0.1, method="heap"), "method"),
    (lambda: bc.prox_l1_squared_weighted([1.0, 2.0], 1.0, [1.0, 0.0]), "d"),
    (lambda: bc.prox_l1_squared_weighted([1.0, 2.0], 1.0, [1.0]), "d"),
    (lambda: bc.prox_lq_power([1.0], 1.0, 2.5), "q"),
    (lambda: bc.prox_lq_power([1.0], 1.0, 1.0), "q"),
    (lambda: bc.prox_block_norms([], 1.0), "blocks"),
    (lambda: bc.prox_block_norms([np.ones(2)], 1.0, "l3"), "penalty"),
    (lambda: bc.prox_block_norms([np.ones(2)], 1.0, "lq_power"), "q"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
