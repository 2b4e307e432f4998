"""The linear-in-n point estimate (the best draw by contingency tables) and when it is used."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.stats import entropy
from sklearn.metrics import mutual_info_score
from sklearn.metrics.cluster import pair_confusion_matrix

from bayesclust.inference.mixtures import point_estimates, posterior
from bayesclust.inference.mixtures.point_estimates import draws_point_estimate, partition_point_estimate
from bayesclust.inference.mixtures.posterior import Posterior

from ._reference import all_partitions, canonical


def _binder(a, b) -> float:
    """Pairs on which two partitions disagree (scikit-learn's pair confusion counts ordered pairs)."""
    C = pair_confusion_matrix(a, b)
    return (C[0, 1] + C[1, 0]) / 2.0


def _vi(a, b) -> float:
    return (entropy(np.bincount(a)) + entropy(np.bincount(b))
            - 2.0 * mutual_info_score(a, b))


def _brute_force(draws, loss):
    """Expected loss of every draw over all draws, by a slow loop: the minimiser's labels."""
    f = _binder if loss == "binder" else _vi
    losses = [np.mean([f(c, d) for d in draws]) for c in draws]
    return canonical(draws[int(np.argmin(losses))]), np.sort(losses)


def _noisy_draws(rng, S, n, k=3, flip=0.15):
    base = rng.integers(0, k, n)
    draws = np.repeat(base[None, :], S, axis=0)
    mask = rng.random((S, n)) < flip
    draws[mask] = rng.integers(0, k + 2, mask.sum())
    return draws


@pytest.mark.parametrize("loss", ["binder", "vi"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force_expected_loss_over_the_draws(loss, seed):
    rng = np.random.default_rng(seed)
    draws = _noisy_draws(rng, S=25, n=40)
    want, losses = _brute_force(draws, loss)
    assert losses[1] - losses[0] > 1e-9  # a unique minimiser
    got = draws_point_estimate(draws, loss, max_candidates=100, max_draws=100)
    np.testing.assert_array_equal(got, want)
    relabelled = (draws * 7 + 3) % 11  # label ids are irrelevant
    np.testing.assert_array_equal(draws_point_estimate(relabelled, loss), want)


@pytest.mark.parametrize("loss", ["binder", "vi"])
def test_every_partition_a_draw_gives_the_exact_optimum(loss):
    # n = 5: the draws are all 52 partitions with random multiplicities, so the best draw
    # is the minimiser of the expected loss over all partitions (found by enumeration).
    rng = np.random.default_rng(3)
    parts = np.array([canonical(p) for p in all_partitions(5)])
    counts = rng.integers(1, 12, len(parts))
    draws = np.repeat(parts, counts, axis=0)
    f = _binder if loss == "binder" else _vi
    exact = [sum(w * f(c, d) for d, w in zip(parts, counts)) for c in parts]
    want = parts[int(np.argmin(exact))]
    assert np.sort(exact)[1] - np.min(exact) > 1e-9
    np.testing.assert_array_equal(draws_point_estimate(rng.permutation(draws), loss), want)


def test_thinned_candidates_and_draws_stay_among_the_draws():
    rng = np.random.default_rng(4)
    draws = _noisy_draws(rng, S=200, n=30)
    got = draws_point_estimate(draws, "vi", max_candidates=5, max_draws=7)
    assert any(np.array_equal(got, canonical(d)) for d in draws)


def test_bad_arguments():
    with pytest.raises(ValueError, match="loss"):
        draws_point_estimate([[0, 1]], "l2")
    with pytest.raises(ValueError, match="max_candidates"):
        draws_point_estimate([[0, 1]], max_candidates=0)
    with pytest.raises(ValueError, match="method"):
        Posterior(np.zeros((1, 3, 4), np.int32)).point_estimate("vi", method="fast")


def test_auto_is_greedy_for_small_n_and_never_builds_the_matrix_above(monkeypatch):
    rng = np.random.default_rng(5)
    draws = _noisy_draws(rng, S=60, n=50).reshape(2, 30, 50)
    post = Posterior(draws)
    for loss in ("binder", "vi"):  # today's result below the threshold
        np.testing.assert_array_equal(
            post.point_estimate(loss), partition_point_estimate(draws.reshape(60, 50), loss))

    def no_matrix(*args, **kwargs):
        raise AssertionError("built the n x n co-clustering matrix")

    monkeypatch.setattr(posterior, "GREEDY_MAX_N", 49)
    monkeypatch.setattr(posterior, "co_clustering_matrix", no_matrix)
    monkeypatch.setattr(point_estimates, "co_clustering_matrix", no_matrix)
    fresh = Posterior(draws)
    for loss in ("binder", "vi"):
        np.testing.assert_array_equal(
            fresh.point_estimate(loss), draws_point_estimate(draws.reshape(60, 50), loss))
    with pytest.raises(AssertionError, match="n x n"):
        fresh.point_estimate("vi", method="greedy")


def test_greedy_thins_many_draws(monkeypatch):
    rng = np.random.default_rng(6)
    draws = _noisy_draws(rng, S=40, n=20).reshape(4, 10, 20)
    monkeypatch.setattr(posterior, "GREEDY_MAX_DRAWS", 8)
    got = Posterior(draws).point_estimate("vi", method="greedy")
    kept = draws.reshape(40, 20)[point_estimates._evenly(40, 8)]
    np.testing.assert_array_equal(got, partition_point_estimate(kept, "vi"))


@pytest.mark.slow
def test_dp_mixture_on_100k_points_fits_in_4_gib():
    code = textwrap.dedent("""
        import warnings
        import numpy as np
        from sklearn.datasets import make_blobs
        from bayesclust import ConvergenceWarning, DPGaussianMixture
        X, _ = make_blobs(100_000, n_features=2, centers=3, cluster_std=0.5, random_state=0)
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = DPGaussianMixture(sigma2=0.25, rho2=100.0, num_warmup=10, num_samples=10, thin=1,
                                random_state=0).fit(X)
        # VmHWM: the peak RSS of this process's own address space, which exec creates
        # afresh (getrusage's ru_maxrss survives exec: it would report the xdist worker's).
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))  # KiB
        print(est.n_clusters_, est.labels_.shape[0], peak)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    k, n, peak_kib = map(int, out.stdout.split()[-3:])
    assert n == 100_000
    assert k == 3
    assert peak_kib < 4 * 1024 * 1024, f"peak RSS {peak_kib / 2**20:.2f} GiB"
