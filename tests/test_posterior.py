"""Tests of bayesclust.inference.mixtures.posterior.Posterior.

References: hand counts and plain loops (number of clusters, k distribution, co-clustering),
ArviZ called directly on the same arrays (R-hat / ESS), brute-force checks of the
relabelling (per-point parameters are unchanged; random permutations are undone exactly).
"""

import collections
import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from bayesclust.inference.mixtures import posterior as posterior_module
from bayesclust.inference.mixtures.posterior import Posterior, Relabelled


def _arviz():
    az = pytest.importorskip("arviz")
    return az


def _az_import():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return _arviz()


def permuted_posterior(rng, C=3, S=40, K=4, d=2, truth=None, means=None, weights=None):
    """Draws that are random relabellings of one labelling / one set of component params."""
    truth = np.repeat(np.arange(K), 5) if truth is None else truth
    means = rng.normal(size=(K, d)) * 5 if means is None else means
    weights = rng.dirichlet(np.ones(K)) if weights is None else weights
    n = truth.shape[0]
    labels = np.empty((C, S, n), dtype=np.int64)
    M = np.empty((C, S, K, d))
    Wt = np.empty((C, S, K))
    cov = np.empty((C, S, K, d, d))
    for c in range(C):
        for s in range(S):
            perm = rng.permutation(K)  # new slot j holds old component perm[j]
            inv = np.argsort(perm)
            labels[c, s] = inv[truth]
            M[c, s] = means[perm]
            Wt[c, s] = weights[perm]
            cov[c, s] = (np.arange(K)[perm] + 1.0)[:, None, None] * np.eye(d)
    return labels, M, Wt, cov, truth, means, weights


# --------------------------------------------------------------------------- construction


def test_shapes_and_attributes():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, size=(2, 5, 7))
    post = Posterior(
        labels,
        log_likelihood=rng.normal(size=(2, 5)),
        params={"alpha": rng.random((2, 5)), "means": rng.normal(size=(2, 5, 3, 2))},
        sample_stats={"accept_prob": rng.random((2, 5))},
        sampler="gibbs",
        model="dp_gmm",
        seconds=1.5,
    )
    assert (post.n_chains, post.n_draws, post.n_samples, post.n_points) == (2, 5, 10, 7)
    assert post.n_components == 3
    assert post.labels.shape == (2, 5, 7) and post.labels.dtype == np.int8
    assert post.pooled_labels.shape == (10, 7)
    assert post.log_likelihood.shape == (2, 5)
    assert post.params["means"].shape == (2, 5, 3, 2)
    assert post.sample_stats["accept_prob"].shape == (2, 5)
    assert post.n_clusters.shape == (2, 5) and post.n_clusters.dtype == np.int64
    assert (post.sampler, post.model, post.seconds) == ("gibbs", "dp_gmm", 1.5)
    with pytest.raises(ValueError):
        post.labels[0, 0, 0] = 5  # stored read-only, so cached results stay valid
    before = int(post.labels[0, 0, 0])
    labels[0, 0, 0] = before + 1  # the caller's array is copied
    assert post.labels[0, 0, 0] == before


def test_two_dimensional_input_is_one_chain():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, size=(6, 4))
    post = Posterior(
        labels,
        log_likelihood=np.arange(6.0),
        params={"weights": rng.dirichlet(np.ones(3), size=6), "alpha": np.ones(6)},
        sample_stats={"diverging": np.zeros(6, bool)},
    )
    assert (post.n_chains, post.n_draws, post.n_points) == (1, 6, 4)
    np.testing.assert_array_equal(post.labels[0], labels)
    np.testing.assert_array_equal(post.log_likelihood, np.arange(6.0)[None])
    assert post.params["weights"].shape == (1, 6, 3)
    assert post.params["alpha"].shape == (1, 6)
    assert post.sample_stats["diverging"].shape == (1, 6)


def test_accepts_jax_arrays_and_integral_floats():
    jnp = pytest.importorskip("jax.numpy")
    post = Posterior(jnp.array([[0, 1, 1], [2, 2, 0]]), log_likelihood=jnp.zeros(2))
    assert post.n_draws == 2
    post = Posterior(np.array([[0.0, 1.0, 1.0]]))
    assert post.labels.dtype == np.int8


@pytest.mark.parametrize("low, high, dtype", [
    (0, 127, np.int8), (-128, 6, np.int8), (0, 128, np.int16), (-129, 0, np.int16),
    (0, 2**15, np.int32), (-(2**31), 0, np.int32), (0, 2**31, np.int64),
])
def test_labels_take_the_narrowest_integer_type(low, high, dtype):
    post = Posterior(np.array([[low, high, 7, 7]]))
    assert post.labels.dtype == dtype
    assert post.labels[0, 0].tolist() == [low, high, 7, 7]
    assert post.n_clusters.tolist() == [[3]]


def test_copy_false_takes_over_the_arrays_read_only():
    labels = np.zeros((2, 3, 4), np.int8)
    ll = np.zeros((2, 3))
    post = Posterior(labels, log_likelihood=ll, copy=False)
    assert np.shares_memory(post.labels, labels) and not labels.flags.writeable
    assert np.shares_memory(post.log_likelihood, ll)
    source = np.zeros((2, 3, 4), np.int32)
    post = Posterior(source)
    assert source.flags.writeable and not np.shares_memory(post.labels, source)


GOOD = np.zeros((2, 3, 4), dtype=int)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(labels=np.zeros(4, int)), ValueError, "labels must be a 3-D"),
        (dict(labels=np.zeros((1, 2, 3, 4), int)), ValueError, "labels must be a 3-D"),
        (dict(labels=np.zeros((2, 0, 4), int)), ValueError, "labels must not be empty"),
        (dict(labels=np.full((2, 3, 4), 0.5)), ValueError, "labels must contain integer"),
        (dict(labels=np.full((2, 3, 4), np.nan)), ValueError, "labels contains NaN"),
        (dict(labels=np.full((2, 3, 4), "a")), TypeError, "labels"),
        (dict(labels=None), TypeError, "labels"),
        (dict(log_likelihood=np.zeros((2, 4))), ValueError, "log_likelihood must have shape"),
        (dict(log_likelihood=np.full((2, 3), np.inf)), ValueError, "log_likelihood contains"),
        (dict(params=[1, 2]), TypeError, "params must be a dict"),
        (dict(params={1: np.zeros((2, 3))}), TypeError, "params keys"),
        (dict(params={"alpha": np.zeros((3, 2))}), ValueError, r"params\['alpha'\]"),
        (dict(params={"alpha": np.full((2, 3), np.nan)}), ValueError, r"params\['alpha'\]"),
        (dict(params={"means": np.zeros((2, 3))}), ValueError, "component axis"),
        (
            dict(params={"means": np.zeros((2, 3, 4, 2)), "weights": np.zeros((2, 3, 5))}),
            ValueError,
            "same number of components",
        ),
        (dict(sample_stats={"x": np.zeros((2, 3, 1))}), ValueError, r"sample_stats\['x'\]"),
        (dict(sampler=3), TypeError, "sampler"),
        (dict(model=None), TypeError, "model"),
        (dict(seconds=-1.0), ValueError, "seconds"),
        (dict(seconds="1"), TypeError, "seconds"),
        (dict(copy="no"), TypeError, "copy must be a bool"),
    ],
)
def test_bad_input(kwargs, exc, match):
    labels = kwargs.pop("labels", GOOD)
    with pytest.raises(exc, match=match):
        Posterior(labels, **kwargs)


def test_labels_must_index_the_component_axis():
    labels = np.array([[[0, 1, 3]]])
    with pytest.raises(ValueError, match=r"lie in \[0, 3\)"):
        Posterior(labels, params={"weights": np.ones((1, 1, 3)) / 3})
    with pytest.raises(ValueError, match=r"lie in \[0, 3\)"):
        Posterior(-labels, params={"means": np.zeros((1, 1, 3, 2))})


def test_two_dimensional_input_messages_use_the_unbatched_shape():
    with pytest.raises(ValueError, match=r"\(3,\)"):
        Posterior(np.zeros((3, 4), int), log_likelihood=np.zeros(4))
    with pytest.raises(ValueError, match=r"\(3, \.\.\.\)"):
        Posterior(np.zeros((3, 4), int), params={"alpha": np.zeros(4)})


# --------------------------------------------------------------------------- k and psm


def test_n_clusters_and_k_distribution_match_hand_counts():
    rng = np.random.default_rng(2)
    C, S, n = 3, 30, 9
    labels = rng.integers(-3, 4, size=(C, S, n)) * 10
    post = Posterior(labels)
    hand = np.array([[len(set(labels[c, s].tolist())) for s in range(S)] for c in range(C)])
    np.testing.assert_array_equal(post.n_clusters, hand)
    counts = collections.Counter(hand.ravel().tolist())
    expected = {k: counts[k] / (C * S) for k in sorted(counts)}
    dist = post.k_distribution()
    assert list(dist) == sorted(dist)
    assert dist == pytest.approx(expected, abs=1e-15)
    assert sum(dist.values()) == pytest.approx(1.0)


def test_k_distribution_toy():
    post = Posterior([[0, 0, 1], [1, 1, 0], [0, 0, 0], [2, 2, 5]])
    assert post.k_distribution() == {1: 0.25, 2: 0.75}


def test_co_clustering_matches_double_loop_and_is_cached():
    rng = np.random.default_rng(3)
    C, S, n = 2, 15, 8
    labels = rng.integers(0, 3, size=(C, S, n))
    post = Posterior(labels)
    ref = np.zeros((n, n))
    for c in range(C):
        for s in range(S):
            for i in range(n):
                for j in range(n):
                    ref[i, j] += labels[c, s, i] == labels[c, s, j]
    ref /= C * S
    psm = post.co_clustering()
    np.testing.assert_allclose(psm, ref, rtol=0, atol=1e-15)
    psm[0, 1] = 42.0  # a copy: the cache is not affected
    np.testing.assert_allclose(post.co_clustering(), ref, rtol=0, atol=1e-15)


@pytest.mark.parametrize("loss", ["binder", "vi"])
def test_point_estimate_recovers_the_truth_from_noisy_copies(loss):
    rng = np.random.default_rng(4)
    C, S, n = 2, 60, 30
    truth = np.repeat([0, 1, 2], 10)
    noisy = np.where(rng.random((C, S, n)) < 0.1, rng.integers(0, 5, (C, S, n)), truth)
    # random relabelling of each draw (label switching)
    perms = rng.permuted(np.tile(np.arange(5), (C, S, 1)), axis=-1)
    labels = np.take_along_axis(perms, noisy, axis=-1)
    post = Posterior(labels)
    est = post.point_estimate(loss)
    np.testing.assert_array_equal(est, truth)
    est[0] = 99  # a copy
    np.testing.assert_array_equal(post.point_estimate(loss), truth)
    with pytest.raises(ValueError, match="loss"):
        post.point_estimate("l2")


# --------------------------------------------------------------------------- relabel


def test_relabel_undoes_random_permutations():
    rng = np.random.default_rng(5)
    labels, M, Wt, cov, truth, means, weights = permuted_posterior(rng)
    C, S, K = M.shape[:3]
    post = Posterior(
        labels,
        params={"means": M, "weights": Wt, "cov": cov, "alpha": rng.random((C, S))},
    )
    out = post.relabel(truth)
    assert isinstance(out, Relabelled)
    # every draw identical after relabelling, and equal to the truth in the truth's order
    for name, ref in (("means", means), ("weights", weights)):
        arr = out.params[name]
        assert np.ptp(arr, axis=(0, 1)).max() == 0.0
        np.testing.assert_array_equal(arr[0, 0], ref)
    np.testing.assert_array_equal(
        out.params["cov"][0, 0], (np.arange(K) + 1.0)[:, None, None] * np.eye(2)
    )
    assert out.params["alpha"] is post.params["alpha"]  # not component-indexed: untouched
    np.testing.assert_array_equal(out.labels, np.broadcast_to(truth, labels.shape))
    # the permutation is the one applied: params[c, s] == original[c, s][perm[c, s]]
    for c in range(C):
        for s in range(S):
            np.testing.assert_array_equal(out.params["means"][c, s], M[c, s][out.permutation[c, s]])
    # default reference (the Binder point estimate) gives the same alignment here
    default = post.relabel()
    np.testing.assert_array_equal(default.reference, truth)
    np.testing.assert_array_equal(default.params["means"], out.params["means"])


def test_relabel_keeps_per_point_parameters_and_handles_empty_components():
    rng = np.random.default_rng(6)
    C, S, n, K, d = 2, 25, 20, 6, 3
    labels = rng.integers(0, 3, size=(C, S, n))  # components 3..5 mostly empty
    labels[rng.random((C, S, n)) < 0.1] = 4
    M = rng.normal(size=(C, S, K, d))
    Wt = rng.dirichlet(np.ones(K), size=(C, S))
    post = Posterior(labels, params={"means": M, "weights": Wt})
    reference = rng.permutation(np.arange(n) % 4)
    out = post.relabel(reference)
    assert out.permutation.shape == (C, S, K)
    for c in range(C):
        for s in range(S):
            assert sorted(out.permutation[c, s]) == list(range(K))
            # the mean attached to each point is unchanged by relabelling
            np.testing.assert_array_equal(
                out.params["means"][c, s][out.labels[c, s]], M[c, s][labels[c, s]]
            )
            np.testing.assert_array_equal(
                out.params["weights"][c, s], Wt[c, s][out.permutation[c, s]]
            )
            # matching is never worse than leaving the labels as they are
            assert np.sum(out.labels[c, s] == reference) >= np.sum(labels[c, s] == reference)
            # unmatched (here: the empty or surplus) components come after the R = 4 matched
            # slots, by decreasing size, then decreasing weight
            sizes = np.bincount(out.labels[c, s], minlength=K)[4:]
            w = out.params["weights"][c, s, 4:]
            keys = list(zip(-sizes, -w))
            assert keys == sorted(keys)


def test_relabel_with_fewer_components_than_reference_clusters():
    rng = np.random.default_rng(16)
    C, S, n, K = 1, 10, 12, 2
    labels = rng.integers(0, K, size=(C, S, n))
    M = rng.normal(size=(C, S, K, 1))
    post = Posterior(labels, params={"means": M})
    reference = np.arange(n) % 3  # R = 3 > K
    out = post.relabel(reference)
    assert out.labels.max() < K
    for s in range(S):
        np.testing.assert_array_equal(
            out.params["means"][0, s][out.labels[0, s]], M[0, s][labels[0, s]]
        )
        # matched components keep the order of their reference clusters
        table = np.zeros((K, 3), int)
        np.add.at(table, (labels[0, s], reference), 1)
        rows, cols = linear_sum_assignment(table, maximize=True)
        order = rows[np.argsort(cols)]
        np.testing.assert_array_equal(out.permutation[0, s], order)


def test_relabel_overlap_is_maximal():
    """Brute force over all injective maps of the draw's clusters to reference clusters."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = 12
        draw = rng.integers(0, 4, n)
        reference = rng.permutation(np.arange(n) % 3)
        post = Posterior(draw[None, None])
        out = post.relabel(reference)
        clusters = np.unique(draw)
        best = 0
        for targets in itertools.permutations(list(range(3)) + [-1] * len(clusters), len(clusters)):
            mapping = dict(zip(clusters.tolist(), targets))
            hits = sum(mapping[v] == r for v, r in zip(draw.tolist(), reference.tolist()))
            best = max(best, hits)
        assert np.sum(out.labels[0, 0] == reference) == best


def test_relabel_without_component_params():
    rng = np.random.default_rng(8)
    truth = np.repeat([0, 1, 2], 4)
    labels = np.stack([rng.permutation(7)[:3][truth] * 3 - 5 for _ in range(10)])
    post = Posterior(labels)
    out = post.relabel([9, 9, 9, 9, 4, 4, 4, 4, 7, 7, 7, 7])  # reference ids sorted: 4, 7, 9
    expected = np.array([2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(out.labels[0], np.broadcast_to(expected, (10, 12)))
    assert out.permutation is None and out.params == {}
    with pytest.raises(ValueError, match="reference"):
        post.relabel([0, 1])


def test_relabel_component_params_argument():
    rng = np.random.default_rng(9)
    labels, M, Wt, cov, truth, means, weights = permuted_posterior(rng, C=1, S=5)
    post = Posterior(labels, params={"means": M, "weights": Wt, "cov": cov})
    out = post.relabel(truth, component_params=["means"])
    assert out.params["cov"] is post.params["cov"]
    assert np.ptp(out.params["means"], axis=(0, 1)).max() == 0.0
    with pytest.raises(ValueError, match="unknown"):
        post.relabel(truth, component_params=["nope"])


# --------------------------------------------------------------------------- diagnostics


def test_diagnostics_iid_draws_match_arviz():
    az = _az_import()
    rng = np.random.default_rng(10)
    C, S = 4, 300
    # i.i.d. draws: each draw is one of three partitions with k = 1, 2, 3
    parts = np.array([[0] * 6, [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]])
    pick = rng.choice(3, size=(C, S), p=[0.2, 0.5, 0.3])
    ll = rng.normal(size=(C, S))
    post = Posterior(parts[pick], log_likelihood=ll)
    diag = post.diagnostics()
    assert diag["backend"] == "arviz"
    k = (pick + 1).astype(float)
    for name, x in (("n_clusters", k), ("log_likelihood", ll)):
        assert diag[name]["rhat"] == pytest.approx(float(az.rhat(x, method="rank")), rel=1e-12)
        assert diag[name]["ess_bulk"] == pytest.approx(float(az.ess(x, method="bulk")), rel=1e-12)
        assert diag[name]["ess_tail"] == pytest.approx(float(az.ess(x, method="tail")), rel=1e-12)
        assert abs(diag[name]["rhat"] - 1.0) < 0.02  # 4 x 300 i.i.d. draws
        assert diag[name]["ess_bulk"] > 0.5 * C * S


def test_diagnostics_chains_stuck_at_different_k():
    az = _az_import()
    rng = np.random.default_rng(11)
    S, n = 200, 8
    chains = []
    for k_main in (2, 4):
        lab = np.tile(np.arange(n) % k_main, (S, 1))
        flip = rng.random(S) < 0.1  # occasional extra cluster so no chain is constant
        lab[flip, 0] = 7
        chains.append(lab)
    labels = np.stack(chains)
    post = Posterior(labels, log_likelihood=np.stack([rng.normal(0, 1, S), rng.normal(5, 1, S)]))
    diag = post.diagnostics()
    k = post.n_clusters.astype(float)
    assert diag["n_clusters"]["rhat"] > 1.5
    assert diag["n_clusters"]["rhat"] == pytest.approx(float(az.rhat(k, method="rank")), rel=1e-12)
    assert diag["log_likelihood"]["rhat"] > 1.5


def test_diagnostics_degenerate_cases_follow_arviz():
    _az_import()
    post = Posterior(np.tile([0, 0, 1], (2, 10, 1)))  # k == 2 in every draw
    diag = post.diagnostics()["n_clusters"]
    assert np.isnan(diag["rhat"]) and diag["ess_bulk"] == 20 and diag["ess_tail"] == 20
    one_chain = Posterior(np.random.default_rng(0).integers(0, 3, size=(30, 5)))
    d1 = one_chain.diagnostics()["n_clusters"]
    assert np.isnan(d1["rhat"]) and np.isfinite(d1["ess_bulk"])
    short = Posterior(np.zeros((2, 3, 4), int)).diagnostics()["n_clusters"]
    assert all(np.isnan(v) for v in short.values())
    assert "log_likelihood" not in post.diagnostics()


def test_numpyro_fallback_agrees_with_arviz(monkeypatch):
    az = _az_import()
    rng = np.random.default_rng(12)
    C, S = 3, 200
    ar = np.zeros((C, S))  # autocorrelated chains with some between-chain spread
    for t in range(1, S):
        ar[:, t] = 0.8 * ar[:, t - 1] + rng.normal(size=C)
    ar += np.array([0.0, 0.3, -0.2])[:, None]
    fb = posterior_module._rank_diagnostics_numpy(ar)
    assert fb["rhat"] == pytest.approx(float(az.rhat(ar, method="rank")), rel=1e-10)
    # numpyro truncates the autocorrelation sum slightly differently from ArviZ
    assert fb["ess_bulk"] == pytest.approx(float(az.ess(ar, method="bulk")), rel=0.05)
    assert fb["ess_tail"] == pytest.approx(float(az.ess(ar, method="tail")), rel=0.05)

    def no_arviz():
        raise ImportError("no arviz")

    monkeypatch.setattr(posterior_module, "_import_arviz", no_arviz)
    labels = rng.integers(0, 3, size=(C, S, 5))
    diag = Posterior(labels, log_likelihood=ar).diagnostics()
    assert diag["backend"] == "numpyro"
    assert diag["log_likelihood"]["rhat"] == pytest.approx(fb["rhat"], rel=1e-12)
    const = posterior_module._rank_diagnostics_numpy(np.ones((2, 10)))
    assert np.isnan(const["rhat"]) and const["ess_bulk"] == 20 and const["ess_tail"] == 20


# --------------------------------------------------------------------------- export, summary


def test_to_arviz_round_trip():
    az = _az_import()
    rng = np.random.default_rng(13)
    C, S, n, K, d = 2, 7, 5, 3, 2
    labels = rng.integers(0, K, size=(C, S, n))
    ll = rng.normal(size=(C, S))
    post = Posterior(
        labels,
        log_likelihood=ll,
        params={"means": rng.normal(size=(C, S, K, d)), "alpha": rng.random((C, S))},
        sample_stats={"accept_prob": rng.random((C, S))},
        sampler="nuts",
        model="dp_gmm",
        seconds=2.0,
    )
    obj = post.to_arviz()
    if int(az.__version__.split(".")[0]) < 1:
        assert isinstance(obj, az.InferenceData)
        assert {"posterior", "log_likelihood", "sample_stats"} <= set(obj.groups())
    nc = obj["posterior"]["n_clusters"]
    assert nc.dims == ("chain", "draw")
    np.testing.assert_array_equal(nc.values, post.n_clusters)
    lab = obj["posterior"]["labels"]
    assert lab.dims == ("chain", "draw", "point")
    np.testing.assert_array_equal(lab.values, labels)
    assert obj["posterior"]["means"].dims[:3] == ("chain", "draw", "component")
    np.testing.assert_array_equal(obj["posterior"]["alpha"].values, post.params["alpha"])
    ll_var = obj["log_likelihood"]["log_likelihood"]
    assert ll_var.dims == ("chain", "draw")
    np.testing.assert_array_equal(ll_var.values, ll)
    np.testing.assert_array_equal(
        obj["sample_stats"]["accept_prob"].values, post.sample_stats["accept_prob"]
    )
    assert obj["posterior"].attrs["sampler"] == "nuts"
    # ArviZ's own diagnostics on the exported object agree with ours
    rhat = float(az.rhat(obj, var_names=["n_clusters"])["n_clusters"])
    assert post.diagnostics()["n_clusters"]["rhat"] == pytest.approx(rhat, rel=1e-12)

    bare = Posterior(labels).to_arviz()
    groups = set(bare.groups()) if isinstance(bare, az.InferenceData) else set(bare.children)
    assert "posterior" in groups and "log_likelihood" not in groups


def test_summary_and_repr():
    _az_import()
    rng = np.random.default_rng(14)
    labels = rng.integers(0, 3, size=(2, 20, 6))
    post = Posterior(labels, log_likelihood=rng.normal(size=(2, 20)), sampler="gibbs", seconds=0.5)
    s = post.summary()
    dist = post.k_distribution()
    assert s["k_distribution"] == dist
    assert s["k_mode"] == max(sorted(dist), key=lambda k: dist[k])
    assert s["k_mean"] == pytest.approx(post.n_clusters.mean())
    assert set(s["diagnostics"]) == {"n_clusters", "log_likelihood", "backend"}
    assert (s["sampler"], s["seconds"], s["n_chains"], s["n_draws"], s["n_points"]) == (
        "gibbs", 0.5, 2, 20, 6
    )
    text = repr(post)
    assert "Posterior(" in text and "gibbs" in text and "chains=2" in text and "P(k)" in text


# --------------------------------------------------------------------------- concat


def test_concat():
    rng = np.random.default_rng(15)
    mk = lambda sampler, seconds: Posterior(  # noqa: E731
        rng.integers(0, 3, size=(2, 10, 5)),
        log_likelihood=rng.normal(size=(2, 10)),
        params={"weights": rng.dirichlet(np.ones(3), size=(2, 10))},
        sampler=sampler,
        seconds=seconds,
    )
    a, b = mk("gibbs", 1.0), mk("gibbs", 2.0)
    both = Posterior.concat([a, b])
    assert both.n_chains == 4 and both.n_draws == 10
    np.testing.assert_array_equal(both.labels, np.concatenate([a.labels, b.labels]))
    np.testing.assert_array_equal(
        both.log_likelihood, np.concatenate([a.log_likelihood, b.log_likelihood])
    )
    np.testing.assert_array_equal(both.params["weights"][2:], b.params["weights"])
    assert both.sampler == "gibbs" and both.seconds == 3.0
    assert Posterior.concat([a, mk("nuts", None)]).sampler == "gibbs+nuts"
    assert Posterior.concat([a, mk("nuts", None)]).seconds is None


def test_kernels_recorded_in_summary_repr_arviz_and_concat():
    """``kernels`` (which code made the draws) is validated, reported everywhere the sampler's
    name is, and joined by concat (unrecorded wins: a mixture is not known to be one path)."""
    _az_import()
    labels = np.zeros((1, 4, 3), int)
    native = Posterior(labels, sampler="gibbs", kernels="native")
    xla = Posterior(labels, sampler="gibbs", kernels="xla")
    assert Posterior(labels).kernels == ""
    assert native.summary()["kernels"] == "native" and "kernels='native'" in repr(native)
    assert "kernels" not in repr(Posterior(labels))
    obj = xla.to_arviz()
    assert obj["posterior"].attrs["kernels"] == "xla"
    assert "kernels" not in Posterior(labels).to_arviz()["posterior"].attrs
    assert Posterior.concat([native, native]).kernels == "native"
    assert Posterior.concat([native, xla]).kernels == "native+xla"
    assert Posterior.concat([native, Posterior(labels)]).kernels == ""
    with pytest.raises(TypeError, match="kernels must be a string"):
        Posterior(labels, kernels=True)
    for bad in ("gpu", "native+", "Native"):
        with pytest.raises(ValueError, match="kernels must be one of"):
            Posterior(labels, kernels=bad)


@pytest.mark.parametrize(
    "other, match",
    [
        (Posterior(np.zeros((1, 10, 6), int)), "points"),
        (Posterior(np.zeros((1, 9, 5), int)), "draws per chain"),
        (Posterior(np.zeros((1, 10, 5), int)), "log_likelihood"),
        (Posterior(np.zeros((1, 10, 5), int), log_likelihood=np.zeros((1, 10))), "params"),
        (
            Posterior(
                np.zeros((1, 10, 5), int),
                log_likelihood=np.zeros((1, 10)),
                params={"weights": np.ones((1, 10, 4)) / 4},
            ),
            "per-draw shape",
        ),
    ],
)
def test_concat_mismatch(other, match):
    base = Posterior(
        np.zeros((1, 10, 5), int),
        log_likelihood=np.zeros((1, 10)),
        params={"weights": np.ones((1, 10, 3)) / 3},
    )
    with pytest.raises(ValueError, match=match):
        Posterior.concat([base, other])


def test_concat_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        Posterior.concat([])
    with pytest.raises(TypeError, match="posteriors"):
        Posterior.concat([Posterior(np.zeros((1, 2, 3), int)), "x"])
    with pytest.raises(TypeError, match="list"):
        Posterior.concat(Posterior(np.zeros((1, 2, 3), int)))


# --------------------------------------------------------------------------- storage


def _stored_posterior(rng, C=3, S=12, n=9, K=6):
    """Draws using slots 0..3 of a 6-slot buffer (slots 4 and 5 never used)."""
    labels = rng.integers(0, 4, size=(C, S, n))
    return Posterior(
        labels, log_likelihood=rng.normal(size=(C, S)),
        params={"means": rng.normal(size=(C, S, K, 2)), "alpha": rng.random((C, S))},
        sample_stats={"accept": rng.random((C, S))}, sampler="gibbs")


def test_compact_to_an_int_thins_every_array_evenly_and_cuts_unused_slots():
    post = _stored_posterior(np.random.default_rng(0))
    small = post.compact(4)
    idx = [0, 4, 7, 11]  # 4 of 12 draws spread evenly: round(linspace(0, 11, 4))
    assert (small.n_chains, small.n_draws, small.n_points) == (3, 4, 9)
    np.testing.assert_array_equal(small.labels, post.labels[:, idx])
    np.testing.assert_array_equal(small.log_likelihood, post.log_likelihood[:, idx])
    np.testing.assert_array_equal(small.params["alpha"], post.params["alpha"][:, idx])
    np.testing.assert_array_equal(small.sample_stats["accept"], post.sample_stats["accept"][:, idx])
    used = int(post.labels[:, idx].max()) + 1
    assert small.n_components == used < 6
    np.testing.assert_array_equal(small.params["means"], post.params["means"][:, idx, :used])
    # Summaries are the kept draws' own (a hand count), and nothing is shared.
    k = [[len(set(d)) for d in chain] for chain in post.labels[:, idx]]
    assert small.n_clusters.tolist() == k
    for a, b in [(small.labels, post.labels), (small.params["means"], post.params["means"])]:
        assert not np.shares_memory(a, b) and not a.flags.writeable
    assert post.compact("all") is post and post.compact(12) is post and post.compact(50) is post
    # "weights" give empty slots mass: the component axis is kept whole.
    w = Posterior(post.labels, params={"means": post.params["means"],
                                        "weights": np.full((3, 12, 6), 1 / 6)})
    assert w.compact(4).n_components == 6


def test_compact_summary_keeps_the_whole_runs_summaries_without_label_draws():
    import pickle

    post = _stored_posterior(np.random.default_rng(1))
    full = {"k": post.k_distribution(), "diag": post.diagnostics(), "psm": post.co_clustering(),
            "point": post.point_estimate("binder"), "n_clusters": post.n_clusters}
    small = pickle.loads(pickle.dumps(post.compact("summary", loss="binder")))
    assert (small.n_chains, small.n_draws, small.n_points) == (3, 12, 9)
    assert small.k_distribution() == full["k"]
    np.testing.assert_array_equal(small.n_clusters, full["n_clusters"])
    assert small.diagnostics() == full["diag"]
    np.testing.assert_array_equal(small.co_clustering(), full["psm"])
    np.testing.assert_array_equal(small.point_estimate("binder"), full["point"])
    np.testing.assert_array_equal(small.log_likelihood, post.log_likelihood)
    assert set(small.params) == {"alpha"} and small.n_components is None
    assert small.summary()["k_distribution"] == full["k"]
    assert "no label draws" in repr(small)
    for needs_draws in (lambda: small.labels, lambda: small.pooled_labels,
                        lambda: small.point_estimate("vi"), lambda: small.relabel(),
                        lambda: small.compact(2)):
        with pytest.raises(ValueError, match="keeps no label draws"):
            needs_draws()


def test_compact_summary_of_many_points_keeps_no_co_clustering():
    n = posterior_module.GREEDY_MAX_N + 1
    post = Posterior(np.zeros((2, 3, n), np.int8))
    small = post.compact("summary")
    np.testing.assert_array_equal(small.point_estimate("vi"), np.zeros(n))
    with pytest.raises(ValueError, match="co_clustering: this Posterior keeps no label draws"):
        small.co_clustering()


def test_pickle_leaves_out_the_co_clustering_cache_of_a_posterior_with_draws():
    import pickle

    post = _stored_posterior(np.random.default_rng(2))
    psm = post.co_clustering()
    back = pickle.loads(pickle.dumps(post))
    assert back._psm is None  # recomputed from the draws on demand
    np.testing.assert_array_equal(back.co_clustering(), psm)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "some", True, None, "ALL"])
def test_compact_names_keep_draws_on_bad_values(bad):
    post = Posterior(np.zeros((1, 3, 4), np.int8))
    with pytest.raises(ValueError, match="keep_draws must be 'all', 'summary' or a positive int"):
        post.compact(bad)
    with pytest.raises(ValueError, match="loss must be one of"):
        post.compact(1, loss="l2")
