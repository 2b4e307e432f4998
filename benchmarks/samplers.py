"""Collapsed Gibbs vs NumPyro NUTS on the DP Gaussian mixture: effective samples per second.

Prints one JSON line per data size n.  Both samplers see the same data in the same
process: ``three_gaussians`` (three isotropic 2-D Gaussians, std 0.65) with
``ceil(n / 3)`` points per cluster, the first n rows, centred once, float32.  Same model
hyper-parameters for both: ``alpha = 1``, ``sigma2 = 0.65**2`` (the generating variance),
``rho2 = 100`` (Kulis & Jordan).  Gibbs: ``gibbs_dp_gmm(collapsed=True, thin=10)`` (Neal's
Algorithm 3, the untruncated CRP form, every 10th sweep kept: :data:`GIBBS_THIN`), starting
from one cluster; on a CPU its sweeps run in the package's native kernel
(``bayesclust/_native/gibbs.cc``: chains on SIMD lanes, a segment of draws per call); two more Gibbs
configurations are run on the same data (:data:`VARIANTS`): ``gibbs_sm`` adds one
split-merge move per sweep (``split_merge=1``, Dahl 2003) and ``blocked`` is Ishwaran &
James's blocked sampler on the truncated stick-breaking model at NUTS's truncation
(``scheme="blocked"``); their ratios to NUTS are ``ratio_gibbs_sm_*`` and ``ratio_blocked_*``.  NUTS: NumPyro's NUTS
kernel on the truncated stick-breaking program ``models.dp_gmm.dp_gmm`` with
``truncation = DEFAULT_TRUNCATION`` and NumPyro's defaults (``init_to_uniform``, diagonal
mass matrix adapted in Stan's windows, ``max_tree_depth = 10``), then the labels drawn
from ``p(z | x, w, mu, sigma2)`` with ``inference.mixtures.mcmc.sample_mixture_labels`` -- what
``run_nuts`` does, with the warm-up and sampling phases timed separately (see
:func:`run_nuts_phased`).  Both run 2 chains (Gibbs: all chains in one native call, one
chain per thread; NUTS: vmapped, as ``chain_method="vectorized"``).  Then the many-chains comparison (:data:`MANY_GIBBS`,
:data:`MANY_NUTS`): the collapsed sampler with many chains against NUTS with 2 and, at
n = 300, with more vectorised chains.

Two label-invariant scalars per draw, the same estimator for both samplers:

* ``k``: the number of distinct labels (``Posterior.n_clusters``);
* the complete-data log-likelihood ``log p(X | z, mu, sigma2)``
  (``kernels.complete_data_log_likelihood``) from each draw's labels and means: the
  Gibbs sampler records a draw of the means from their conditional after every sweep;
  NUTS samples them.  (The samplers' own ``log_likelihood`` fields are different
  quantities -- collapsed ``log p(X | z, sigma2)`` and the mixture marginal
  ``log p(X | w, mu, sigma2)`` -- so neither is used.)

ESS is ArviZ's rank-normalised bulk ESS over chains x draws (``Posterior.diagnostics``).

Timing.  Compile time is reported separately and subtracted everywhere: the sum of JAX's
own trace + lowering + XLA-compile durations during a call (``jax.monitoring`` events
``/jax/core/compile/*``; NumPyro builds its jitted programs per call, so a warm-up call
would not remove it).  ``*_seconds`` is the sampling phase (the kept draws; for NUTS also
the constrained sites and the label draws; for Gibbs the non-compile sweeping time of the
one call times kept / all sweeps, a sweep costing the same in both phases, plus the rest
of the call -- copying the kept draws out, building the Posterior), the basis of ESS/s and
of ``ratio_k`` / ``ratio_loglik``; ``*_warmup_seconds`` is the warm-up phase, counted in
``ratio_*_incl_warmup`` (which therefore depends on the warm-up lengths chosen here).

Draw counts (``DRAWS``) keep the whole script at a few minutes on 2 cores.  NUTS gets far
fewer draws than Gibbs: ESS/s is a rate, so the ratio stays comparable, but small ESS
estimates are noisy.  NUTS's warm-up is the expensive part: until the step size and the
mass matrix are adapted its trajectories run to the maximum tree depth (1023 leapfrog
steps), and at n = 10,000 that costs seconds per iteration, so the default run gives it a
warm-up far too short to adapt (``nuts_frac_max_tree_depth`` near 1): its n = 10,000
rates are those of an unadapted NUTS, not of a well-tuned one.

Usage: python benchmarks/samplers.py [--quick] [--n 300 1000 ...]
"""

from __future__ import annotations

import math
import warnings

import _common as bench
import jax
import jax.numpy as jnp
import numpy as np

from bayesclust.datasets import three_gaussians
from bayesclust.inference.mixtures.gibbs import gibbs_dp_gmm
from bayesclust.inference.mixtures.mcmc import sample_mixture_labels
from bayesclust.inference.mixtures.posterior import Posterior
from bayesclust.kernels import complete_data_log_likelihood
from bayesclust.models.dp_gmm import DEFAULT_TRUNCATION, check_truncation, dp_gmm

STD = 0.65
HYPER = {"alpha": 1.0, "sigma2": STD**2, "rho2": 100.0}
NUM_CHAINS = 2
# n -> (Gibbs warm-up, Gibbs kept draws, NUTS warm-up, NUTS kept draws), per chain.  NUTS
# at n = 10,000 needs ~300 warm-up iterations to adapt (~3 minutes, most of them at the
# maximum tree depth); fewer leave it at depth 10 and its ratios are not evidence.
DRAWS = {300: (1000, 1000, 500, 1000), 1000: (1000, 1000, 500, 1000),
         10_000: (1000, 1000, 300, 200)}
QUICK = {300: (40, 40, 20, 20)}
#: The many-chains comparison, n -> (chains, warm-up, kept draws per chain).  The collapsed
#: sampler moves all its chains in one scan with the chains on the vectorised axis, so its
#: cost per chain falls as chains are added; NUTS's vectorised chains all wait for the
#: longest trajectory, so its ESS per second does not grow with them (``MANY_NUTS`` measures
#: that once).  ``ratio_many_*`` = Gibbs at ``MANY_GIBBS`` chains over the better of the two
#: NUTS runs.
MANY_GIBBS = {300: (256, 1000, 1000), 1000: (128, 1000, 1000), 10_000: (32, 1000, 1000)}
MANY_NUTS = {300: (8, 200, 100)}
QUICK_MANY_GIBBS = {300: (16, 20, 20)}
QUICK_MANY_NUTS = {300: (4, 10, 10)}
#: NUTS's ``max_tree_depth`` (NumPyro's default): a trajectory of 2**10 - 1 leapfrog steps
#: means the step size / mass matrix are not adapted to the posterior.
_MAX_STEPS = 2**10 - 1

_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)
_compile_seconds = [0.0]


def _on_duration(event, duration, **_):
    if event in _COMPILE_EVENTS:
        _compile_seconds[0] += duration


jax.monitoring.register_event_duration_secs_listener(_on_duration)


def timed(fn):
    """(result, wall seconds, compile seconds) of ``fn()``; compile from jax.monitoring."""
    before = _compile_seconds[0]
    out, wall = bench.timed(fn)
    return out, wall, _compile_seconds[0] - before


def data(n, seed=0):
    X, _ = three_gaussians(seed, n_per_cluster=-(-n // 3), std=STD)
    X = X[:n]
    return (X - X.mean(0)).astype(np.float32)


@jax.jit
def _loglik_draws(X, means, labels, sigma2):
    """complete_data_log_likelihood for every draw (S draws), bounded memory."""
    batch = max(1, min(means.shape[0], (1 << 22) // X.shape[0]))
    return jax.lax.map(
        lambda a: complete_data_log_likelihood(X, a[0], a[1], a[2]),
        (means, labels, sigma2),
        batch_size=batch,
    )


def complete_loglik(X, post: Posterior) -> np.ndarray:
    """``log p(X | z, mu, sigma2)`` of every draw, shape (chains, draws)."""
    C, S = post.n_chains, post.n_draws
    means = post.params["means"]
    means = jnp.asarray(means, X.dtype).reshape((C * S,) + means.shape[2:])
    labels = jnp.asarray(post.labels.reshape(C * S, -1), jnp.int32)
    sigma2 = jnp.asarray(post.params["sigma2"], X.dtype).reshape(C * S)
    out = _loglik_draws(jnp.asarray(X), means, labels, sigma2)
    return np.asarray(out, np.float64).reshape(C, S)


def summarise(prefix, post, X, seconds, warmup_seconds, compile_s, num_warmup, thin=1):
    loglik = complete_loglik(X, post)
    diag = Posterior(post.labels, log_likelihood=loglik).diagnostics()
    seconds = max(seconds, 1e-9)
    ess_k = diag["n_clusters"]["ess_bulk"]
    ess_ll = diag["log_likelihood"]["ess_bulk"]
    ks = post.n_clusters
    return {
        f"{prefix}_num_warmup": num_warmup,
        f"{prefix}_thin": thin,
        f"{prefix}_num_samples": post.n_draws,
        f"{prefix}_seconds": seconds,
        f"{prefix}_warmup_seconds": warmup_seconds,
        f"{prefix}_compile_s": compile_s,
        f"{prefix}_num_chains": post.n_chains,
        f"{prefix}_ms_per_draw": seconds / (post.n_chains * post.n_draws) * 1e3,
        f"{prefix}_k_mean": float(ks.mean()),
        f"{prefix}_k_min": int(ks.min()),
        f"{prefix}_k_max": int(ks.max()),
        f"{prefix}_k_sd": float(ks.std()),
        # Monte Carlo standard error of the mean of k (sd / sqrt(bulk ESS)).
        f"{prefix}_k_mean_mcse": float(ks.std() / math.sqrt(max(ess_k, 1.0))),
        f"{prefix}_loglik_mean": float(loglik.mean()),
        f"{prefix}_loglik_sd": float(loglik.std()),
        f"{prefix}_ess_k": ess_k,
        f"{prefix}_ess_loglik": ess_ll,
        f"{prefix}_ess_tail_k": diag["n_clusters"]["ess_tail"],
        f"{prefix}_ess_tail_loglik": diag["log_likelihood"]["ess_tail"],
        f"{prefix}_rhat_k": diag["n_clusters"]["rhat"],
        f"{prefix}_rhat_loglik": diag["log_likelihood"]["rhat"],
        f"{prefix}_ess_per_s_k": ess_k / seconds,
        f"{prefix}_ess_per_s_loglik": ess_ll / seconds,
        f"{prefix}_ess_per_s_k_incl_warmup": ess_k / (seconds + warmup_seconds),
        f"{prefix}_ess_per_s_loglik_incl_warmup": ess_ll / (seconds + warmup_seconds),
    }


#: Sweeps per kept draw of the collapsed and blocked samplers.  The number of
#: clusters decorrelates over tens of single-site sweeps, while each kept draw costs
#: its own recording (n labels, means, log-likelihood) -- more than a sweep on
#: CPU; keeping every 10th sweep is the usual remedy (NUTS's draws are nearly
#: independent, so it keeps all).  The split-merge variant too (its moves run in the
#: native kernel, about half a sweep each).
GIBBS_THIN = 10

#: The Gibbs configurations compared with NUTS: prefix -> gibbs_dp_gmm options.  ``gibbs``
#: is the collapsed sampler with the package's defaults (the issue's "collapsed Gibbs");
#: ``gibbs_sm`` adds one split-merge move per sweep (Dahl 2003); ``blocked`` is Ishwaran &
#: James's blocked sampler on the truncated stick-breaking model -- the NUTS program itself,
#: at the same truncation.
VARIANTS = {
    "gibbs": dict(collapsed=True, thin=GIBBS_THIN),
    "gibbs_sm": dict(collapsed=True, split_merge=1, thin=GIBBS_THIN),
    "blocked": dict(scheme="blocked", truncation=DEFAULT_TRUNCATION, thin=GIBBS_THIN),
}


def run_gibbs(key, X, num_warmup, num_samples, num_chains=NUM_CHAINS, **options):
    """(Posterior, sampling s, warm-up s, compile s) of one Gibbs configuration.

    Two identical calls: the first compiles (its time is the compile time reported),
    the second is timed with every cache warm.  Its sweeping time (``Posterior.seconds``, compile subtracted) is split
    between the phases in proportion to their sweeps (a sweep costs the same in both;
    ``num_warmup`` counts sweeps, rounded up to whole draws of ``thin`` sweeps, and
    each kept draw is ``thin`` sweeps); the rest of the call -- copying the kept draws
    out and building the Posterior -- serves the kept draws only and is counted in
    the sampling phase.
    """
    thin = options.get("thin", 1)
    call = lambda: gibbs_dp_gmm(  # noqa: E731
        key, X, num_warmup=num_warmup, num_samples=num_samples,
        num_chains=num_chains, center=False, progress_bar=False, **HYPER, **options,
    )
    _, _, comp = timed(call)
    post, wall, comp_again = timed(call)
    sweeping = post.seconds - comp_again
    assembly = wall - post.seconds
    warm_draws = -(-num_warmup // thin)
    share = num_samples / (warm_draws + num_samples)
    return post, sweeping * share + assembly, sweeping * (1 - share), comp


def run_nuts_phased(key, X, num_warmup, num_samples, num_chains=NUM_CHAINS):
    """(Posterior, sampling s, warm-up s, compile s) of NUTS, phases timed separately.

    NumPyro's NUTS kernel driven as ``MCMC(chain_method="vectorized")`` drives it (the
    kernel vmaps over chains when given a batch of keys; adaptation runs while the
    iteration counter is below ``num_warmup``; same keys, same draws), but by one jitted
    ``lax.scan`` of ``gcd(num_warmup, num_samples)`` iterations called repeatedly --
    warm-up, then the kept draws -- so one compile serves both phases and each is timed
    on its own.  Then the constrained sites (``kernel.postprocess_fn``) and the labels
    (``sample_mixture_labels``), as ``run_nuts`` does.
    """
    from numpyro.infer import NUTS

    key_init, key_labels = jax.random.split(key)
    Xj = jnp.asarray(X)
    args, kwargs = (Xj,), dict(truncation=DEFAULT_TRUNCATION, **HYPER)
    kernel = NUTS(dp_gmm)
    chunk = math.gcd(num_warmup, num_samples)

    @jax.jit
    def phase(state):
        def body(s, _):
            s = kernel.sample(s, args, kwargs)
            return s, (s.z, s.num_steps, s.diverging, s.accept_prob)

        return jax.lax.scan(body, state, None, length=chunk)

    @jax.jit
    def constrain(z):
        return jax.vmap(kernel.postprocess_fn(args, kwargs))(z)

    def warmup():
        state = kernel.init(jax.random.split(key_init, num_chains), num_warmup,
                            model_args=args, model_kwargs=kwargs)
        for _ in range(num_warmup // chunk):
            state = phase(state)[0]
        return jax.block_until_ready(state)

    def sample(state):
        parts = []
        for _ in range(num_samples // chunk):
            state, out = phase(state)
            parts.append(out)
        z, num_steps, diverging, accept_prob = jax.tree.map(
            lambda *a: jnp.concatenate(a), *parts
        )
        draws = num_samples
        flat = jax.tree.map(lambda v: v.reshape((draws * num_chains,) + v.shape[2:]), z)
        site = constrain(flat)  # draws x chains, draw-major
        labels = sample_mixture_labels(key_labels, Xj, site["weights"], site["means"],
                                       site["sigma2"])
        site = jax.tree.map(
            lambda v: np.swapaxes(np.asarray(v).reshape((draws, num_chains) + v.shape[1:]), 0, 1),
            site,
        )
        stats = {"num_steps": num_steps, "diverging": diverging, "accept_prob": accept_prob}
        stats = {k: np.asarray(v).T for k, v in stats.items()}
        labels = np.swapaxes(np.asarray(labels).reshape(draws, num_chains, -1), 0, 1)
        return site, labels, stats

    def prewarm(state):
        # The sampling phase's other functions, compiled for its shapes untimed (the
        # scan was compiled by the warm-up), so that no compile time has to be
        # subtracted from it.
        z = jax.tree.map(lambda v: jnp.repeat(v, num_samples, axis=0), state.z)
        site = constrain(z)
        jax.block_until_ready(sample_mixture_labels(key_labels, Xj, site["weights"],
                                                    site["means"], site["sigma2"]))

    state, warm_wall, warm_comp = timed(warmup)
    _, _, pre_comp = timed(lambda: prewarm(state))
    (site, labels, stats), wall, comp = timed(lambda: sample(state))
    check_truncation(site["weights"])
    post = Posterior(
        labels,
        params={k: site[k] for k in ("means", "weights", "sigma2")},
        sample_stats=stats, sampler="NUTS", model="dp_gmm",
    )
    return post, wall - comp, warm_wall - warm_comp, comp + warm_comp + pre_comp


def nuts_stats(prefix, post):
    """Trajectory length, adaptation and divergence summaries of a NUTS run."""
    steps = post.sample_stats["num_steps"]
    return {
        f"{prefix}_mean_num_steps": float(steps.mean()),
        f"{prefix}_max_num_steps": int(steps.max()),
        f"{prefix}_frac_max_tree_depth": float(np.mean(steps >= _MAX_STEPS)),
        f"{prefix}_divergences": int(post.sample_stats["diverging"].sum()),
        f"{prefix}_mean_accept_prob": float(post.sample_stats["accept_prob"].mean()),
    }


def bench_size(n, gibbs_warmup, gibbs_samples, nuts_warmup, nuts_samples, seed=0,
               many_gibbs=None, many_nuts=None):
    X = data(n, seed)
    key_gibbs, key_nuts = jax.random.split(jax.random.PRNGKey(seed))
    row = {
        "benchmark": "gibbs_vs_nuts_ess_per_second",
        "n": n, "d": int(X.shape[1]), "model": "dp_gmm", **HYPER,
        "truncation": DEFAULT_TRUNCATION, "num_chains": NUM_CHAINS,
        "gibbs_sampler": "gibbs_dp_gmm(collapsed=True)",
        "variants": {k: "gibbs_dp_gmm(" + ", ".join(f"{a}={v!r}" for a, v in o.items()) + ")"
                     for k, o in VARIANTS.items()},
        "nuts_sampler": "numpyro NUTS(dp_gmm) kernel, 2 chains vmapped (as MCMC "
                        "chain_method='vectorized') + sample_mixture_labels",
        "timed": "seconds = sampling phase (kept draws; NUTS: the kept-draw scans + constrain + "
                 "label draws, all compiled beforehand; Gibbs: a second identical call, its "
                 "time split by sweeps between warm-up and kept draws, plus copying the kept "
                 "draws out); compile time (JAX trace/lower/compile durations from "
                 "jax.monitoring) reported separately",
        "ess": "arviz bulk ESS (rank-normalised, chains x draws)",
        "loglik": "complete-data log p(X | z, mu, sigma2) per draw",
    }

    for prefix, options in VARIANTS.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            post, seconds, warm, comp = run_gibbs(key_gibbs, X, gibbs_warmup, gibbs_samples,
                                                  **options)
        row.update(summarise(prefix, post, X, seconds, warm, comp, gibbs_warmup,
                             options.get("thin", 1)))
        row[f"{prefix}_warnings"] = sorted({f"{type(w.message).__name__}: {w.message}"
                                            for w in caught})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        post, seconds, warm, comp = run_nuts_phased(key_nuts, X, nuts_warmup, nuts_samples)
    row.update(summarise("nuts", post, X, seconds, warm, comp, nuts_warmup))
    row.update(nuts_stats("nuts", post))
    row["nuts_warnings"] = sorted({f"{type(w.message).__name__}: {w.message}" for w in caught})

    for prefix in VARIANTS:
        for q in ("k", "loglik", "k_incl_warmup", "loglik_incl_warmup"):
            g, u = row[f"{prefix}_ess_per_s_{q}"], row[f"nuts_ess_per_s_{q}"]
            name = f"ratio_{q}" if prefix == "gibbs" else f"ratio_{prefix}_{q}"
            row[name] = g / u if u > 0 else math.inf

    if many_nuts:
        chains, warm_n, kept = many_nuts
        post, seconds, warm, comp = run_nuts_phased(key_nuts, X, warm_n, kept, num_chains=chains)
        row.update(summarise("nuts_many", post, X, seconds, warm, comp, warm_n))
        row.update(nuts_stats("nuts_many", post))
    if many_gibbs:
        chains, warm_n, kept = many_gibbs
        post, seconds, warm, comp = run_gibbs(key_gibbs, X, warm_n, kept, num_chains=chains,
                                              **VARIANTS["gibbs"])
        row.update(summarise("gibbs_many", post, X, seconds, warm, comp, warm_n,
                             VARIANTS["gibbs"].get("thin", 1)))
        for q in ("k", "loglik"):
            best = max(row.get(f"{p}_ess_per_s_{q}", 0.0) for p in ("nuts", "nuts_many"))
            g = row[f"gibbs_many_ess_per_s_{q}"]
            row[f"ratio_many_{q}"] = g / best if best > 0 else math.inf
    return row


def main():
    parser = bench.parser(__doc__, "n = 300, a few draws (smoke test)")
    parser.add_argument("--n", type=int, nargs="+", help=f"sizes (default {sorted(DRAWS)})")
    parser.add_argument("--gibbs-draws", type=int, nargs=2, metavar=("WARMUP", "SAMPLES"),
                        help="override the Gibbs warm-up and kept draws per chain")
    parser.add_argument("--nuts-draws", type=int, nargs=2, metavar=("WARMUP", "SAMPLES"),
                        help="override the NUTS warm-up and kept draws per chain (e.g. a "
                             "warm-up long enough to adapt at n = 10,000: slow)")
    parser.add_argument("--no-many", action="store_true",
                        help="skip the many-chains comparison (MANY_GIBBS, MANY_NUTS)")
    args = parser.parse_args()
    table = QUICK if args.quick else DRAWS
    many_gibbs = QUICK_MANY_GIBBS if args.quick else MANY_GIBBS
    many_nuts = QUICK_MANY_NUTS if args.quick else MANY_NUTS
    sizes = args.n or sorted(table)
    bench.emit(bench.environment("samplers.py", ("jax", "numpyro", "arviz")))
    for n in sizes:
        draws = table.get(n) or DRAWS.get(n) or DRAWS[min(DRAWS, key=lambda m: abs(m - n))]
        gibbs = tuple(args.gibbs_draws or draws[:2])
        nuts = tuple(args.nuts_draws or draws[2:])
        row = bench_size(n, *gibbs, *nuts, many_gibbs=None if args.no_many else many_gibbs.get(n),
                         many_nuts=None if args.no_many else many_nuts.get(n))
        row["draws_overridden"] = bool(args.gibbs_draws or args.nuts_draws)
        bench.emit(row)


if __name__ == "__main__":
    main()
