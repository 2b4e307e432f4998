"""The native point moves of the full / diag DP mixture (bayesclust/_native/gibbs_gaussian.cc)
against the XLA scan (``gibbs_gaussian._scan_points``) given the same uniforms.

Shapes reach both lane widths (8 float / 4 double chains per group), groups with unused
lanes, a feature count the kernel unrolls (3) and one it does not (12), slot buffers
that overflow, and padded rows (``n_valid``).  The sampler built on these moves is
checked against exact enumeration in tests/test_gibbs_gaussian.py (which
``make test-xla`` runs on the XLA path).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesclust import _native
from bayesclust.inference.mixtures import gibbs_gaussian as GG

pytestmark = pytest.mark.skipif(
    not _native.available(), reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")

# The reference, compiled once per shape (the full-buffer case reuses a shape of the first test).
_scan = jax.jit(GG._scan_points, static_argnames="full")


def _problem(rng, cov, n, d, K, C, dtype, k_max=5):
    """Whitened data of three groups, C chains at random partitions and concentrations,
    their uniforms and new-cluster weights (as ``gibbs_gaussian._sweep`` makes them)."""
    X = np.concatenate([rng.normal(m, 0.7, (n // 3, d)) for m in (-2.0, 0.5, 3.0)])
    prior = GG.check_gaussian_prior(GG.default_gaussian_prior(X, cov), d, cov)
    Z, kappa0, nu0, _ = GG.whitened_problem(X, prior, cov)
    Z = jnp.asarray(Z, dtype)
    full = cov == "full"
    kappa0, nu0 = jnp.asarray(kappa0, dtype), jnp.asarray(nu0, dtype)
    labels = np.stack([rng.integers(0, rng.integers(1, k_max + 1), len(Z)) for _ in range(C)])
    state = GG._init_chains(Z, jnp.asarray(labels, jnp.int32), 0.0, kappa0, K=K, full=full)
    state = state._replace(log_alpha=jnp.asarray(rng.normal(scale=1.5, size=C), dtype))
    m = len(Z)
    u = jnp.asarray(1.0 - rng.random((C, m)), dtype)
    logp0 = GG._log_predictive(
        Z, jnp.zeros((m,), dtype), jnp.zeros_like(Z),
        jnp.broadcast_to(jnp.eye(d, dtype=dtype), (m, d, d)) if full else jnp.full((m, d), 0.5, dtype),
        jnp.zeros((m,), dtype), kappa0, nu0, full)
    return Z, state, u, state.log_alpha[:, None] + logp0[None], kappa0, nu0


def _native_moves(Z, state, u, log_new, kappa0, nu0, full, n_valid=None):
    """The native point moves alone (no split-merge moves): labels and overflow flags."""
    return _native.gibbs_gaussian_ffi(
        Z, state.labels, state.counts, state.means, state.factor, state.logdet, u, log_new,
        kappa0, nu0, Z.shape[0] if n_valid is None else n_valid, full=full)[:2]


@pytest.mark.parametrize("cov, dtype, n, d, K, C", [
    ("full", np.float32, 60, 3, 12, 11), ("full", np.float64, 45, 12, 9, 5),
    ("diag", np.float32, 45, 12, 9, 5), ("diag", np.float64, 60, 3, 12, 11)])
def test_point_moves_match_the_xla_scan(x64, cov, dtype, n, d, K, C):
    """Same uniforms, same draws: every label and overflow flag (float32 may part on a
    uniform within rounding of a CDF boundary: 99% of the labels then)."""
    rng = np.random.default_rng(7 + d)
    Z, state, u, log_new, kappa0, nu0 = _problem(rng, cov, n, d, K, C, dtype)
    full = cov == "full"
    ref_labels, ref_over = _scan(Z, state, u, log_new, kappa0, nu0, full=full)
    labels, over = _native_moves(Z, state, u, log_new, kappa0, nu0, full)
    agree = np.mean(np.asarray(labels) == np.asarray(ref_labels))
    assert agree == 1.0 if dtype == np.float64 else agree >= 0.99, agree
    np.testing.assert_array_equal(np.asarray(over) != 0, np.asarray(ref_over))
    moved = np.mean(np.asarray(labels) != np.asarray(state.labels))
    assert moved > 0.3  # random starting partitions: the sweep has moves to agree on


def test_full_buffer_is_flagged_as_on_the_xla_path(x64):
    rng = np.random.default_rng(3)
    Z, state, u, log_new, kappa0, nu0 = _problem(rng, "diag", 60, 3, 12, 11, np.float64, k_max=2)
    log_new = log_new + 30.0  # every point wants a new cluster
    ref_labels, ref_over = _scan(Z, state, u, log_new, kappa0, nu0, full=False)
    labels, over = _native_moves(Z, state, u, log_new, kappa0, nu0, False)
    assert np.asarray(ref_over).all()
    np.testing.assert_array_equal(np.asarray(over) != 0, np.asarray(ref_over))
    np.testing.assert_array_equal(np.asarray(labels), np.asarray(ref_labels))


@pytest.mark.parametrize("cov", ["full", "diag"])
def test_padded_rows_are_not_moved(x64, cov):
    """Rows from ``n_valid`` on are padding: the valid rows make the draws of the
    unpadded problem, the padded rows keep their labels."""
    rng = np.random.default_rng(5)
    Z, state, u, log_new, kappa0, nu0 = _problem(rng, cov, 36, 3, 10, 4, np.float64)
    full = cov == "full"
    labels, _ = _native_moves(Z, state, u, log_new, kappa0, nu0, full)
    pad = 5
    Zp = jnp.concatenate([Z, jnp.full((pad, 3), 9.0, Z.dtype)])
    junk = jnp.asarray(rng.integers(0, 10, (4, pad)), jnp.int32)
    sp = state._replace(labels=jnp.concatenate([state.labels, junk], axis=1))
    widen = lambda a: jnp.concatenate([a, jnp.zeros((4, pad), a.dtype)], axis=1)  # noqa: E731
    lp, _ = _native_moves(Zp, sp, widen(u), widen(log_new), kappa0, nu0, full, n_valid=len(Z))
    np.testing.assert_array_equal(np.asarray(lp[:, :len(Z)]), np.asarray(labels))
    np.testing.assert_array_equal(np.asarray(lp[:, len(Z):]), np.asarray(junk))


def test_the_sweeps_moves_lower_to_the_native_kernel_on_cpu():
    Z = jax.ShapeDtypeStruct((20, 2), jnp.float32)
    C, K = 2, 4
    state = GG.GaussianGibbsState(*(jax.ShapeDtypeStruct(s, t) for s, t in [
        ((C, 20), jnp.int32), ((C, K), jnp.float32), ((C, K, 2), jnp.float32),
        ((C, K, 2, 2), jnp.float32), ((C, K), jnp.float32), ((C,), jnp.float32), ((C,), bool)]))
    u = jax.ShapeDtypeStruct((C, 20), jnp.float32)
    keys = jax.ShapeDtypeStruct((C, 2), jnp.uint32)
    hlo = jax.jit(lambda Z, s, u, k: GG._moves(Z, s, u, u, k, 0.5, 4.0, full=True, split_merge=2)
                  ).lower(Z, state, u, keys).as_text()
    assert "bayesclust_gibbs_gaussian_f32" in hlo


@pytest.mark.parametrize("cov", ["full", "diag"])
def test_native_split_merge_moves_alone_match_exact_enumeration(cov):
    """The kernel's split-merge moves alone (no point moves: splits and merges reach every
    partition) leave the exact posterior over the 15 partitions of 4 points invariant:
    4 chains x 20,000 moves from one cluster (the reference: enumeration, as
    tests/test_gibbs_gaussian.py checks the XLA moves)."""
    from .test_gibbs_gaussian import CASES, _case_prior, _exact_posterior, _tv

    X = CASES[f"{cov}-d2"][1]
    n, full, alpha, C = X.shape[0], cov == "full", 1.3, 4
    prior = _case_prior(X)
    parts, exact = _exact_posterior(X, prior, alpha, cov)
    Z, kappa0, nu0, _ = GG.whitened_problem(X, GG.check_gaussian_prior(prior, 2, cov), cov)
    Z = jnp.asarray(Z, jnp.float32)
    K = n + 1
    log_alpha = jnp.full((C,), np.log(alpha), jnp.float32)
    none = jnp.zeros((C, n), jnp.float32)

    def step(labels, key):
        s = jax.vmap(lambda lab: GG.init_gaussian_state(Z, lab, K, 0.0, kappa0, full=full))(labels)
        seeds = jax.random.bits(key, (C, 2), jnp.uint32)
        labels, over, acc = _native.gibbs_gaussian_ffi(
            Z, labels, s.counts, s.means, s.factor, s.logdet, none, none, kappa0, nu0, n,
            log_alpha, seeds, full=full, split_merge=1, point_moves=False)
        return labels, (labels, over, acc)

    _, (labels, over, acc) = jax.jit(lambda k: jax.lax.scan(
        step, jnp.zeros((C, n), jnp.int32), jax.random.split(k, 20_000)))(jax.random.key(0))
    assert not np.asarray(over).any()
    assert 0.05 < np.asarray(acc).mean() < 0.95
    tv, worst = _tv(parts, exact, np.asarray(labels).reshape(-1, n))
    assert exact.max() < 0.5
    assert tv < 0.03, (tv, exact.round(3))
    assert worst < 0.01, worst
