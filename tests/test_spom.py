"""SPOM (Martins et al., 2011, Alg. 1 and 3): decoding against enumeration, one proximal round
by hand, the objective over epochs, sparse kernel weights, digits and a chain task,
the scikit-learn contract of MKLClassifier and bad input."""

import itertools

import jax
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesclust as bc
from bayesclust.datasets import chain_sequences, load_digits
from bayesclust.structured.spom import kernel_weights

RNG = np.random.default_rng(0)


def test_multiclass_decode_toy():
    s = np.array([2.0, 1.5, 0.0])
    assert int(bc.multiclass_decode(s)[0]) == 0
    label, value = bc.multiclass_decode(s, y=0)  # 1.5 + 1 > 2
    assert int(label) == 1 and float(value) == 2.5


def _brute_viterbi(u, A, y=None):
    best, arg = -np.inf, None
    for path in itertools.product(range(u.shape[1]), repeat=u.shape[0]):
        v = sum(u[t, p] for t, p in enumerate(path)) + sum(A[a, b] for a, b in zip(path, path[1:]))
        if y is not None:
            v += sum(p != yt for p, yt in zip(path, y))
        if v > best:
            best, arg = v, path
    return list(arg), best


@pytest.mark.parametrize("seed", range(4))
def test_viterbi_against_enumeration(x64, seed):
    rng = np.random.default_rng(seed)
    T, K = rng.integers(1, 5), 3
    u, A = rng.normal(size=(T, K)), rng.normal(size=(K, K))
    y = rng.integers(0, K, T)
    for yy in (None, y):
        path, value = bc.viterbi(u, A, yy)
        ref_path, ref_value = _brute_viterbi(u, A, yy)
        assert np.asarray(path).tolist() == ref_path
        assert abs(float(value) - ref_value) < 1e-10


def test_proximal_update_one_round_by_hand(x64):
    theta = [np.array([1.0, 0.0]), np.array([0.0, 0.5, 0.0])]
    grad = [np.array([-2.0, 0.0]), np.array([0.0, 0.1, 0.0])]
    eta, lam, radius = 0.5, 0.4, 1.5
    out = bc.proximal_update(theta, grad, eta, [("l1_squared", lam)], radius=radius)
    tilde = [t - eta * g for t, g in zip(theta, grad)]  # norms 2.0 and 0.45
    b = np.array([2.0, 0.45])
    # Algorithm 2 by hand with eta * lam = 0.2: rho = 2 (0.45 - 0.2/1.4 * 2.45 = 0.1 > 0)
    tau = 0.2 * 2.45 / 1.4
    new = b - tau
    scaled = [t * n / bb for t, n, bb in zip(tilde, new, b)]
    norm = np.sqrt(sum(np.sum(s ** 2) for s in scaled))
    expect = [s * min(1, radius / norm) for s in scaled]
    for o, e in zip(out, expect):
        np.testing.assert_allclose(np.asarray(o), e, atol=1e-12)


def _toy_blocks(n=300, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    good = np.eye(k)[y] + 0.5 * rng.normal(size=(n, k))
    weak = 0.3 * np.eye(k)[y] + rng.normal(size=(n, k))
    noise = rng.normal(size=(n, 5))
    return [(b / np.linalg.norm(b, axis=1, keepdims=True)).astype(np.float32)
            for b in (good, weak, noise)], y


def test_objective_decreases_over_epochs():
    blocks, y = _toy_blocks()
    res = bc.spom(0, blocks, y, 1e-3, n_epochs=15)
    trace = res.objective_trace
    assert trace[-1] < trace[0] - 0.02
    assert np.all(np.diff(trace) <= 1e-3 * trace[0]), trace  # the averaged model's objective
    assert res.n_iter == 15 * len(y) and res.converged
    assert trace.shape == (16,) and trace[0] == pytest.approx(1.0)  # the zero model: hinge 1, penalty 0
    np.testing.assert_allclose(res.beta.sum(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("structure", ["multiclass", "sequence"])
def test_steps_by_hand_reproduce_spom(structure):
    """init_spom_state + spom_step, epoch e keyed by the e-th split, give spom bit for bit."""
    if structure == "multiclass":
        blocks, y = _toy_blocks(n=60)
        kw = {}
    else:
        X, y, lengths = chain_sequences(0, n_sequences=20, max_length=6, min_length=3)
        blocks = [np.concatenate([X, np.ones(X.shape[:2] + (1,))], -1).astype(np.float32)]
        kw = dict(structure="sequence", lengths=lengths)
    res = bc.spom(7, blocks, y, 1e-2, n_epochs=3, **kw)
    state = bc.init_spom_state(blocks, y, 1e-2, n_epochs=3, **kw)
    key = jax.random.PRNGKey(7)
    losses = []
    while not state.converged:
        key, sub = jax.random.split(key)
        before = state
        state, info = bc.spom_step(sub, state)
        assert info.objective == state.objective and info.changed
        assert before.n_iter + len(y) == state.n_iter and len(before.objective_trace) == 1 + len(losses)
        losses.append(info.mean_loss)
    assert len(losses) == 3 and res.n_iter == state.n_iter == 3 * len(y) and res.converged
    np.testing.assert_array_equal(res.objective_trace, state.objective_trace)
    for a, b in zip(res.theta + res.theta_last, state.theta + state.theta_last):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert losses[-1] < losses[0]


def test_large_lam_concentrates_the_kernel_weights():
    blocks, y = _toy_blocks()
    small = bc.spom(0, blocks, y, 1e-3, n_epochs=20).beta
    large = bc.spom(0, blocks, y, 0.1, n_epochs=20).beta
    assert large[0] > 0.9 and large[2] < 0.05, large
    assert large[0] > small[0] + 0.1, (small, large)


def test_digits_mkl_against_single_kernels_and_average():
    X, y = load_digits()
    rng = np.random.default_rng(0)
    test = np.zeros(len(y), bool)
    test[rng.permutation(len(y))[: len(y) * 3 // 10]] = True
    kw = dict(lam=1e-4, n_epochs=10, random_state=0)  # 20 epochs: the same ordering, 2x the time
    acc = {}
    for name, kernels, comb in [("linear", ["linear"], "mkl"), ("rbf", ["rbf"], "mkl"),
                                ("poly", ["poly"], "mkl"), ("average", None, "average"),
                                ("mkl", None, "mkl")]:
        clf = bc.MKLClassifier(kernels=kernels or ("linear", "rbf", "poly"), combination=comb, **kw)
        acc[name] = clf.fit(X[~test], y[~test]).score(X[test], y[test])
    best = max(acc["linear"], acc["rbf"], acc["poly"])
    assert acc["mkl"] >= best - 0.01, acc
    assert acc["mkl"] > acc["average"], acc


def test_chain_task_viterbi_uses_the_transitions():
    X, y, lengths = chain_sequences(0, n_sequences=120, max_length=12, min_length=4)
    Xt, yt, lt = chain_sequences(1, n_sequences=80, max_length=12, min_length=4)
    centres = np.array([[np.cos(a), np.sin(a)] for a in np.linspace(0, 2 * np.pi, 16, endpoint=False)])

    def blocks(X):
        lin = np.concatenate([X, np.ones(X.shape[:2] + (1,))], -1)
        rbf = np.exp(-2.0 * ((X[..., None, :] - centres) ** 2).sum(-1))
        return [(b / np.linalg.norm(b, axis=-1, keepdims=True)).astype(np.float32) for b in (lin, rbf)]

    res = bc.spom(0, blocks(X), y, 1e-3, structure="sequence", lengths=lengths, n_epochs=8)
    assert len(res.theta) == 3 and res.theta[-1].shape == (4, 4)
    pred = bc.spom_predict(res.theta, blocks(Xt), structure="sequence", lengths=lt)
    assert np.all((pred >= 0) == (yt >= 0))  # -1 exactly past each length
    acc = np.mean(pred[yt >= 0] == yt[yt >= 0])
    # the same model decoded position by position, without the transitions
    unary = sum(b @ t.T for b, t in zip(blocks(Xt), res.theta[:-1]))
    indep = np.argmax(np.asarray(unary), -1)
    acc_indep = np.mean(indep[yt >= 0] == yt[yt >= 0])
    assert acc > 0.85 and acc > acc_indep + 0.03, (acc, acc_indep)
    assert res.beta[0] < res.beta[1]  # one position's linear map cannot separate the states
    assert res.objective_trace[-1] < res.objective_trace[0]


def test_kernel_form_equals_the_primal_with_linear_kernels(x64):
    """The coefficient recursion (kernel form) and the explicit blocks give the same model."""
    blocks, y = _toy_blocks(n=80)
    blocks = [b.astype(np.float64) for b in blocks]
    primal = bc.spom(3, blocks, y, 0.01, n_epochs=4)
    dual = bc.spom_kernel(3, [b @ b.T for b in blocks], y, 0.01, n_epochs=4)
    np.testing.assert_allclose(dual.objective_trace, primal.objective_trace, rtol=1e-10)
    np.testing.assert_allclose(dual.beta, primal.beta, rtol=1e-10)
    for m, b in enumerate(blocks):
        np.testing.assert_allclose(np.einsum("nd,nk->kd", b, dual.coef[m]), np.asarray(primal.theta[m]),
                                   atol=1e-12)
    scores = bc.spom_kernel_decision(dual.coef, [b[:5] @ b.T for b in blocks])
    np.testing.assert_allclose(scores, np.asarray(bc.spom_decision(primal.theta, [b[:5] for b in blocks])),
                               atol=1e-12)


def test_kernel_weights_on_the_simplex():
    np.testing.assert_allclose(kernel_weights([np.ones(4), np.zeros(3), np.ones(1)]), [2 / 3, 0, 1 / 3])


@parametrize_with_checks([bc.MKLClassifier(kernels=["linear", "rbf"], n_epochs=5, n_components=20,
                                           random_state=0)])
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize("call,match", [
    (lambda: bc.spom(0, [np.ones((5, 2)), np.ones((4, 2))], np.arange(5) % 2, 0.1), "mismatched"),
    (lambda: bc.spom(0, [np.ones((5, 2))], np.arange(5) % 2, 0.0), "lam"),
    (lambda: bc.spom(0, [np.ones((5, 2))], np.arange(5) % 2, -1.0), "lam"),
    (lambda: bc.spom(0, [np.ones((5, 2))], np.arange(5) % 2, 0.1, eta0=0.0), "eta0"),
    (lambda: bc.spom(0, [np.ones((5, 2))], np.zeros(5, int), 0.1), "one class"),
    (lambda: bc.spom(0, [np.ones((5, 2))], np.arange(5) % 2, 0.1, structure="tree"), "structure"),
    (lambda: bc.spom(0, [], np.arange(5) % 2, 0.1), "feature_blocks"),
    (lambda: bc.spom(0, [np.ones((2, 3, 2))], np.array([[0, 1, 0], [1, 0, 1]]), 0.1,
                     structure="sequence", lengths=[3, 0]), "empty sequence"),
    (lambda: bc.viterbi(np.zeros((0, 3)), np.zeros((3, 3))), "empty sequence"),
    (lambda: bc.spom_kernel(0, [np.eye(4), np.eye(5)], np.arange(4) % 2, 0.1), "mismatched"),
    (lambda: bc.spom_kernel(0, [np.ones((4, 3))], np.arange(4) % 2, 0.1), "square"),
    (lambda: bc.spom_kernel(0, [np.eye(4)], np.arange(4) % 2, 0.0), "lam"),
    (lambda: bc.spom_kernel_decision(np.ones((1, 4, 2)), [np.ones((2, 3))]), "columns"),
    (lambda: bc.viterbi(np.zeros((2, 3)), np.zeros((2, 2))), "transition"),
    (lambda: bc.MKLClassifier().fit(np.ones((6, 2)), np.zeros(6)), "class"),
    (lambda: bc.MKLClassifier(lam=0).fit(np.ones((6, 2)), np.arange(6) % 2), "lam"),
    (lambda: bc.MKLClassifier(eta0=-1.0).fit(np.ones((6, 2)), np.arange(6) % 2), "eta0"),
    (lambda: bc.MKLClassifier(kernels=["sigmoid"]).fit(np.ones((6, 2)), np.arange(6) % 2), "kernels"),
    (lambda: bc.MKLClassifier(kernels=["linear", lambda X: X[:-1]]).fit(
        np.random.default_rng(0).normal(size=(6, 2)), np.arange(6) % 2), "mismatched"),
    (lambda: bc.online_proximal(0, lambda t, e: (0.0, t), [np.zeros(2)], np.ones((3, 2)),
                                regularisers=[("l1_squared", 1.0)], eta0=0.0), "eta0"),
    (lambda: bc.proximal_update([np.zeros(2)], [np.zeros(2)], 1.0, [("l3", 1.0)]), "regularisers"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
