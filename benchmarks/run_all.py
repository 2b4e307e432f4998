"""Run every benchmark and write BENCHMARKS.md (``make bench``).

Each benchmark script prints JSON lines; this collects them (also into
``benchmarks/results.jsonl``) and renders the tables.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCRIPTS = ["dp_means.py", "samplers.py", "dp_mixture.py", "hdp.py", "discriminative.py", "cecib.py", "spectral.py", "smic.py", "consensus.py", "did.py",
           "scale.py", "limit_path.py", "hdp_path.py", "first_call.py", "gmd.py", "constrained.py",
           "spom.py", "temporal.py", "hard_dc.py", "kl_means.py", "defaults.py", "sharded_chains.py",
           "hdp_sampler.py"]


def run(script: str, extra: list[str]) -> list[dict]:
    print(f"running {script} ...", flush=True)
    out = subprocess.run(
        [sys.executable, str(HERE / script), *extra], check=True, capture_output=True, text=True
    ).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for row in rows:
        print("  ", json.dumps(row), flush=True)
    return rows


def dp_means_table(rows: list[dict]) -> list[str]:
    def num(r, key, fmt, scale=1.0):
        """``r[key]`` formatted, or "–" when the row lacks it (older rows) or it is NaN."""
        v = r.get(key)
        if v is None or v != v:
            return "–"
        return format(v * scale, fmt)

    env = next((r for r in rows if r.get("benchmark") == "environment"
                and r.get("machine_matmul_gflops") is not None
                and r.get("script") in (None, "dp_means.py")), None)
    if env is not None:
        peak = (
            f"Measured float32 matmul rate of this machine (best of square "
            f"{env.get('matmul_size', '?')} x {env.get('matmul_size', '?')} products): "
            f"**{env['machine_matmul_gflops']:.1f} GFLOP/s** (XLA `jnp.matmul` "
            f"{num(env, 'xla_matmul_gflops', '.1f')}, NumPy/BLAS `np.matmul` "
            f"{num(env, 'numpy_matmul_gflops', '.1f')}); the % columns are relative to it."
        )
    else:
        peak = "The machine's matmul rate was not measured in this run (% of peak: –)."
    lines = [
        "## DP-means iteration vs scikit-learn Lloyd k-means (same k, same process)",
        "",
        "`benchmarks/dp_means.py`. One DP-means iteration = assignment pass (Algorithm 1, bulk) "
        "+ mean update + objective; one Lloyd iteration = scikit-learn `KMeans(algorithm=\"lloyd\")` "
        "at the number of clusters DP-means found. **Ratio = DP-means / scikit-learn (lower is "
        "better; targets: <= 1.0x scikit-learn Lloyd at d >= 16 and n >= 100k, <= 1.3x at every "
        "shape).** `full run` includes the first passes that open the clusters. "
        "Milliseconds are given for context only; compile time is separate. "
        "GFLOP/s = 2 n k d (the distance product, the dominant flop count) per steady "
        "iteration; % = of the machine's measured matmul rate (tiny at d = 2, where the "
        "product is a small part of the work). **NumPy loop = speedup of a DP-means iteration "
        "over the plain per-point NumPy loop of Algorithm 1** (one pass + mean update from the "
        "converged centres; target >= 100x at n = 100k; – = not measured). " + peak,
        "",
        "| n | d | k | ratio (steady) | ratio (isolated call) | ratio (full run) | DP-means ms/iter "
        "| sklearn ms/iter | GFLOP/s DP-means / sklearn | % of matmul peak DP-means / sklearn "
        "| NumPy loop ms/iter | speedup vs NumPy loop | DP-means iters | compile s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r.get("benchmark") != "dp_means_iteration_vs_sklearn_lloyd":
            continue
        speedup = num(r, "speedup_vs_numpy_loop", ",.0f")
        flop = 2.0 * r["n"] * r["k_dp_means"] * r["d"] / 1e9  # older rows: rates from ms/iter
        r = {"dp_means_gflops": flop / (r["dp_means_ms_per_iter_steady"] / 1e3),
             "sklearn_gflops": flop / (r["sklearn_lloyd_ms_per_iter"] / 1e3), **r}
        lines.append(
            f"| {r['n']:,} | {r['d']} | {r['k_dp_means']} | **{r['ratio_steady']:.2f}** | "
            f"{num(r, 'ratio_single_call', '.2f')} | {r['ratio_full_run']:.2f} | "
            f"{r['dp_means_ms_per_iter_steady']:.1f} | {r['sklearn_lloyd_ms_per_iter']:.1f} | "
            f"{num(r, 'dp_means_gflops', '.1f')} / {num(r, 'sklearn_gflops', '.1f')} | "
            f"{num(r, 'dp_means_fraction_of_peak', '.1f', 100)} / "
            f"{num(r, 'sklearn_fraction_of_peak', '.1f', 100)} | "
            f"{num(r, 'numpy_loop_ms_per_iter', ',.0f')} | "
            f"{speedup if speedup == '–' else '**' + speedup + 'x**'} | "
            f"{r['dp_means_n_iter']} | {r['dp_means_compile_s']:.1f} |"
        )
    return lines


def _fmt(x: float) -> str:
    """A rate or ratio with 3 significant digits (``inf``/``nan`` as words)."""
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


SAMPLERS_READING = (
    "Reading the numbers: with many chains the collapsed Gibbs sampler reaches 58x NUTS's "
    "effective draws of k per second at n = 300 (log-likelihood 41x), 547x at n = 1,000 "
    "(107x) and 43x at n = 10,000 (12x): the 10x target is met at every size, on both "
    "quantities. At equal chains (2 each) it is 8.3x / 82x / 7.3x NUTS on k (6.0x / 14x / "
    "2.9x on the log-likelihood). NUTS is adapted at every size now (n = 10,000: 300 "
    "warm-up iterations, ~3 minutes; at 10 it ran at the maximum tree depth and was not "
    "evidence), and keeps 1,000 draws per chain at n <= 1,000 (with 50-200 its ESS of k "
    "was overestimated: k decorrelates slowly in NUTS -- 155 effective draws of 2,000 at "
    "n = 1,000). Timing is fairer than in earlier runs: before, compile time was subtracted "
    "from a wall time during which JAX had been running NUTS's scans asynchronously, which "
    "hid most of NUTS's sampling time at n = 300 (0.23 ms per draw then, 1.19 ms now); now "
    "every function of NUTS's sampling phase is compiled before it is timed, and the Gibbs "
    "sampler is timed on a second identical call. NUTS's labels are drawn by inverse CDF "
    "(one uniform per point; Gumbel-max drew one per point and component, 3x the time). "
    "The Gibbs point moves run in a native kernel (`bayesclust/_native/gibbs.cc`, an XLA "
    "FFI call; the XLA scan stays the path on other platforms and the tested reference): 8 "
    "chains sit on the lanes of an AVX register, every slot caches its terms and those with "
    "one member fewer, so a step is a few vector instructions per cluster in use and writes "
    "nothing unless a chain moves the point, and a whole segment of draws runs per call. "
    "New since the last run: the step is compiled for d <= 3 and for up to 6 clusters in use "
    "(loops unrolled, weights in registers), each chain's clusters are renumbered onto slots "
    "0..k-1 before a sweep (a step weighs max-k slots, not the highest slot in use: 4.7 -> "
    "4.0 on average at n = 300), and the moving lanes are visited by their bit mask: a "
    "chain-sweep at n = 300, 256 chains, went from 1.53 to 1.16 us (kernel alone, both "
    "cores). Split-merge moves (Dahl 2003) now run in the kernel too, all lanes walking the "
    "points together, about half a sweep per move (in XLA ~10 sweeps); one move per sweep "
    "raises the ESS of k per sweep ~1.5x at n = 300, which about pays for itself at 2 chains "
    "and not with many (the single-site sweeps alone are then cheaper per effective draw). "
    "The sampler keeps every 10th sweep: k decorrelates over ~40 single-site sweeps, and a "
    "kept draw costs its own recording. The blocked sampler (the NUTS program's truncated "
    "model) mixes k worst (an empty component's mean is drawn from the diffuse prior "
    "N(0, 100 I)). Mean k: NUTS sits slightly below the collapsed sampler at n = 300 (about "
    "0.1), consistent with NUTS at the default `target_accept_prob = 0.8` under-visiting "
    "states with a small extra cluster; the log-likelihood means agree."
)


def _sampler_row_ok(r: dict) -> bool:
    """Both samplers converged (R-hat <= 1.1 for k and log-lik) and NUTS adapted."""
    rhats = [r[f"{s}_rhat_{q}"] for s in ("gibbs", "nuts") for q in ("k", "loglik")]
    converged = all(x <= 1.1 for x in rhats if x == x)  # NaN: k constant, no evidence against
    return converged and r.get("nuts_frac_max_tree_depth", 0.0) < 0.5


def _mean_k(r: dict, sampler: str) -> str:
    """Posterior mean of k, with its Monte Carlo standard error when recorded."""
    mcse = r.get(f"{sampler}_k_mean_mcse")
    text = f"{r[f'{sampler}_k_mean']:.2f}"
    return text if mcse is None else f"{text} ± {mcse:.2f}"


def samplers_table(rows: list[dict]) -> list[str]:
    lines = [
        "## Collapsed Gibbs vs NumPyro NUTS on the DP Gaussian mixture (same data, same process)",
        "",
        "`benchmarks/samplers.py`. Three 2-D Gaussians (`datasets.three_gaussians`, std 0.65), "
        "alpha = 1, sigma2 = 0.65^2, rho2 = 100 for both; Gibbs = `gibbs_dp_gmm(collapsed=True, "
        "thin=10)` from one cluster (the package's default sequential scan, Neal's Algorithm 3, "
        "every 10th sweep kept; on this CPU the native sweep kernel); "
        "SM = the collapsed sampler plus one split-merge move per sweep (`split_merge=1`, Dahl "
        "2003; every 10th sweep kept, its moves in the native kernel too); "
        "blocked = `gibbs_dp_gmm(scheme=\"blocked\", truncation=20, thin=10)` (Ishwaran & James 2001, "
        "the NUTS program's own truncated model, all labels drawn in parallel); NUTS = NumPyro's NUTS kernel on `models.dp_gmm.dp_gmm` (truncation "
        "20, NumPyro defaults), labels drawn from their conditional, every draw kept; 2 chains "
        "each (Gibbs: one chain per thread; NUTS: vmapped). Warm-up counts sweeps (Gibbs) or "
        "iterations (NUTS), draws count kept draws; ms/draw is per kept draw (Gibbs, SM, "
        "blocked: 10 sweeps). "
        "ESS = ArviZ bulk ESS of k (number of clusters in the label draws) and of the "
        "complete-data log-likelihood log p(X | z, mu, sigma2), chains x draws. "
        "**Ratio = Gibbs ESS/s / NUTS ESS/s (higher is better; target >= 10)**, per second of "
        "the sampling phase (kept draws); `incl. warm-up` also counts the warm-up iterations "
        "listed (so it depends on them). Compile time is excluded and listed separately: "
        "every function of NUTS's sampling phase is compiled before the phase is timed, and "
        "each Gibbs configuration is timed on a second identical call. "
        "NUTS gets fewer draws (it is slower per draw, its warm-up much slower), so its ESS is "
        "noisier. † = not converged (an R-hat > 1.1) or NUTS not adapted (most trajectories "
        "at the maximum tree depth): that row's ratios are not meaningful (on a split-merge or "
        "blocked cell: that sampler's R-hat > 1.1). ‡ = draw counts "
        "set on the command line (`--gibbs-draws`, `--nuts-draws`), not by `make bench`.",
        "",
        "| n | ratio k | ratio log-lik | ratio k / log-lik incl. warm-up "
        "| split-merge: ratio k / log-lik | blocked: ratio k / log-lik "
        "| ESS/s k Gibbs / NUTS | ESS/s log-lik Gibbs / NUTS | ESS k Gibbs / SM / blocked / NUTS "
        "| R-hat k Gibbs / SM / blocked / NUTS | mean k Gibbs / NUTS | warm-up + draws Gibbs / NUTS "
        "| ms/draw Gibbs / SM / blocked / NUTS | NUTS steps/draw (% max depth) "
        "| compile s Gibbs / NUTS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r.get("benchmark") != "gibbs_vs_nuts_ess_per_second":
            continue
        mark = "" if _sampler_row_ok(r) else " †"
        mark += " ‡" if r.get("draws_overridden") else ""
        def variant(key, fmt):
            """A variant's value across Gibbs / split-merge / blocked / NUTS ("-" if absent)."""
            return " / ".join("-" if f"{p}_{key}" not in r else format(r[f"{p}_{key}"], fmt)
                              for p in ("gibbs", "gibbs_sm", "blocked", "nuts"))

        def ratios(prefix):
            if f"ratio_{prefix}_k" not in r:
                return "-"
            rhats = [r[f"{prefix}_rhat_{q}"] for q in ("k", "loglik")]
            mark = " †" if any(x > 1.1 for x in rhats if x == x) else ""
            return f"{_fmt(r[f'ratio_{prefix}_k'])} / {_fmt(r[f'ratio_{prefix}_loglik'])}{mark}"

        lines.append(
            f"| {r['n']:,}{mark} | **{_fmt(r['ratio_k'])}** | **{_fmt(r['ratio_loglik'])}** | "
            f"{_fmt(r['ratio_k_incl_warmup'])} / {_fmt(r['ratio_loglik_incl_warmup'])} | "
            f"{ratios('gibbs_sm')} | {ratios('blocked')} | "
            f"{_fmt(r['gibbs_ess_per_s_k'])} / {_fmt(r['nuts_ess_per_s_k'])} | "
            f"{_fmt(r['gibbs_ess_per_s_loglik'])} / {_fmt(r['nuts_ess_per_s_loglik'])} | "
            f"{variant('ess_k', '.0f')} | "
            f"{variant('rhat_k', '.2f')} | "
            f"{_mean_k(r, 'gibbs')} / {_mean_k(r, 'nuts')} | "
            f"{r['gibbs_num_warmup']}+{r['gibbs_num_samples']} / "
            f"{r['nuts_num_warmup']}+{r['nuts_num_samples']} | "
            f"{variant('ms_per_draw', '.2f')} | "
            f"{r['nuts_mean_num_steps']:.0f} ({100 * r.get('nuts_frac_max_tree_depth', 0):.0f}%) | "
            f"{r['gibbs_compile_s']:.0f} / {r['nuts_compile_s']:.0f} |"
        )
    lines += many_chains_table(rows)
    return lines


def many_chains_table(rows: list[dict]) -> list[str]:
    """The many-chains comparison of ``benchmarks/samplers.py`` (``MANY_GIBBS``, ``MANY_NUTS``)."""
    rows = [r for r in rows
            if r.get("benchmark") == "gibbs_vs_nuts_ess_per_second" and "ratio_many_k" in r]
    if not rows:
        return []
    lines = [
        "",
        "Many chains. The collapsed sampler's native kernel moves 8 chains per AVX register "
        "and spreads the registers over the cores, so its cost per chain falls until every "
        "lane of every core is busy; NumPyro's vectorised NUTS chains each wait for the "
        "longest trajectory in the batch. Here Gibbs runs many chains (same sampler, same "
        "data, fewer draws per chain) "
        "and NUTS runs 2 chains (the rows above) and, at n = 300, also more chains; "
        "**ratio = Gibbs (many chains) ESS/s / the better NUTS ESS/s**. † = the many-chain "
        "Gibbs run has an R-hat > 1.1 or NUTS is not adapted (as above): not evidence.",
        "",
        "| n | ratio k | ratio log-lik | Gibbs chains (warm-up + draws) "
        "| ESS/s k Gibbs many / NUTS 2 / NUTS many "
        "| ESS/s log-lik Gibbs many / NUTS 2 / NUTS many | ESS per draw k Gibbs 2 / many "
        "| R-hat k / log-lik Gibbs many | us per chain-sweep Gibbs 2 / many "
        "| NUTS many: chains, steps/draw (% max depth) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        def three(q):
            vals = [r.get(f"{p}_ess_per_s_{q}") for p in ("gibbs_many", "nuts", "nuts_many")]
            return " / ".join("-" if v is None else _fmt(v) for v in vals)

        def per_draw(p):
            return r[f"{p}_ess_k"] / (r[f"{p}_num_chains"] * r[f"{p}_num_samples"])

        rhat = " / ".join(f"{r[f'gibbs_many_rhat_{q}']:.2f}" for q in ("k", "loglik"))
        nuts_many = "-"
        if "nuts_many_num_chains" in r:
            nuts_many = (f"{r['nuts_many_num_chains']}, {r['nuts_many_mean_num_steps']:.0f} "
                         f"({100 * r['nuts_many_frac_max_tree_depth']:.0f}%)")
        converged = all(r[f"gibbs_many_rhat_{q}"] <= 1.1 for q in ("k", "loglik")
                        if r[f"gibbs_many_rhat_{q}"] == r[f"gibbs_many_rhat_{q}"])
        adapted = r.get("nuts_frac_max_tree_depth", 0.0) < 0.5
        mark = "" if converged and adapted else " †"
        lines.append(
            f"| {r['n']:,}{mark} | **{_fmt(r['ratio_many_k'])}** | **{_fmt(r['ratio_many_loglik'])}** | "
            f"{r['gibbs_many_num_chains']} ({r['gibbs_many_num_warmup']}+"
            f"{r['gibbs_many_num_samples']}) | {three('k')} | {three('loglik')} | "
            f"{per_draw('gibbs'):.3f} / {per_draw('gibbs_many'):.3f} | {rhat} | "
            f"{1e3 * r['gibbs_ms_per_draw'] / r.get('gibbs_thin', 1):.1f} / "
            f"{1e3 * r['gibbs_many_ms_per_draw'] / r.get('gibbs_many_thin', 1):.2f} | {nuts_many} |"
        )
    return lines


def hdp_tables(rows: list[dict]) -> list[str]:
    """Accuracy and timing tables of ``benchmarks/hdp.py`` (KJ §6.3)."""
    draws = [r for r in rows if r.get("benchmark") == "hdp_synthetic_nmi"]
    mean = next((r for r in rows if r.get("benchmark") == "hdp_synthetic_nmi_mean"), None)
    if not draws:
        return []
    lines = [
        "## Hard Gaussian HDP vs k-means / DP-means on the paper's grouped data (Kulis & Jordan §6.3)",
        "",
        "`benchmarks/hdp.py`. `datasets.hdp_groups(seed)`: 50 data sets of 25 2-D points, each "
        "from 5 of 15 shared Gaussians (std 0.1). NMI (arithmetic; truth = which Gaussian) per "
        "data set, averaged over the data sets; pooled methods cluster all 1,250 points at once "
        "and are scored per data set. Hard HDP = `hard_hdp` at `hard_hdp_penalties(groups, "
        "n_local=5, n_global=15)` (lambda_l / lambda_g listed); DP-means lambda by farthest-first "
        "at k = 15 pooled, k = 5 per data set; k-means = scikit-learn `KMeans(init=\"random\", "
        "n_init=1)` at k = 15 pooled, k = 5 per data set, NMI averaged over 10 random states "
        "(the expected NMI of one run, like the paper's Table 1 protocol); in brackets "
        "scikit-learn's default (`k-means++`, `n_init=\"auto\"` = one start). Hard HDP and "
        "DP-means visit the points in the given order and are deterministic. Paper: one draw.",
        "",
        "| draw | hard HDP | k-means pooled | DP-means pooled (k) | k-means per data set "
        "| DP-means per data set | hard HDP global / local per data set | lambda_l / lambda_g |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(label, r, bold=False):
        b = "**" if bold else ""
        return (
            f"| {label} | {b}{r['hard_hdp']:.3f}{b} | {r['kmeans_pooled']:.3f} "
            f"({r['kmeans_pooled_kmeanspp']:.3f}) | {r['dp_means_pooled']:.3f} "
            f"({r['dp_means_pooled_k']:.3g}) | {r['kmeans_per_group']:.3f} "
            f"({r['kmeans_per_group_kmeanspp']:.3f}) | {r['dp_means_per_group']:.3f} | "
            f"{r['hard_hdp_n_global']:.3g} / {r['hard_hdp_n_local_mean']:.2f} | "
            f"{r['lam_local']:.3f} / {r['lam_global']:.3f} |"
        )

    lines += [row(str(r["seed"]), r) for r in draws]
    if mean is not None:
        lines.append(row("mean", mean, bold=True))
        p = mean["paper"]
        lines.append(
            f"| KJ 2012 | {p['hard_hdp']:.2f} | {p['kmeans_pooled']:.2f} | "
            f"{p['dp_means_pooled']:.2f} | {p['kmeans_per_group']:.2f} | "
            f"{p['dp_means_per_group']:.2f} | {p['n_global']} / {p['n_local_mean']} | - |"
        )
        pooled = max(mean["kmeans_pooled"], mean["kmeans_pooled_kmeanspp"], mean["dp_means_pooled"])
        local = max(mean["kmeans_per_group"], mean["kmeans_per_group_kmeanspp"],
                    mean["dp_means_per_group"])
        n_beat = sum(r["hard_hdp"] > max(r["kmeans_pooled"], r["kmeans_pooled_kmeanspp"],
                                         r["dp_means_pooled"]) for r in draws)
        lines += [
            "",
            f"Reading the numbers: hard HDP's mean NMI is {mean['hard_hdp'] - pooled:+.3f} "
            f"against the best pooled method (better on {n_beat} of {len(draws)} draws; KJ: "
            f"{p['hard_hdp'] - p['kmeans_pooled']:+.2f}) and {mean['hard_hdp'] - local:+.3f} "
            f"against the best per-data-set method (KJ: "
            f"{p['hard_hdp'] - p['kmeans_per_group']:+.2f}).",
        ]
    timing = [r for r in rows if r.get("benchmark") == "hdp_synthetic_time"]
    if timing:
        lines += [
            "",
            "Time on the pooled data of one draw (1,250 points): `hard_hdp` with the penalties "
            "fixed vs scikit-learn k-means at k = 15 (one start, as above; k-means++ in "
            "brackets), warm wall time, least of interleaved repeats. **Ratio = hard HDP / "
            "k-means** (paper: 28.8 s / 2.7 s). Compile time of `hard_hdp` (first call after "
            "`jax.clear_caches()`) and the warm time of the penalty heuristic are separate.",
            "",
            "| draw | ratio (k-means++) | paper ratio | hard HDP ms (iters) | k-means ms "
            "(k-means++) | penalties ms | hard HDP compile s |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for r in timing:
            lines.append(
                f"| {r['seed']} | **{r['ratio']:.1f}** ({r['ratio_kmeanspp']:.1f}) | "
                f"{r['paper_ratio']:.1f} | {1e3 * r['hard_hdp_s']:.1f} ({r['hard_hdp_n_iter']}) | "
                f"{1e3 * r['kmeans_s']:.1f} ({1e3 * r['kmeans_kmeanspp_s']:.1f}) | "
                f"{1e3 * r['penalties_s']:.0f} | {r['hard_hdp_compile_s']:.1f} |"
            )
    return lines


_DC_METHODS = ["cg_map", "sa_map", "sdc"]
_DC_REFERENCE = ["mog", "mda2", "vq"]
_DC_LABELS = {"cg_map": "CG MAP", "sa_map": "SA MAP", "sdc": "sDC", "mog": "MoG",
              "mda2": "MDA2", "vq": "VQ", "cg_map_kmeans": "CG MAP k-means init"}


def _p(p: float | None) -> str:
    if p is None or p != p:
        return "-"
    return f"{p:.2g}" + (" \\*\\*" if p < 0.01 else " \\*" if p < 0.05 else "")


def dc_tables(rows: list[dict]) -> list[str]:
    """Tables of ``benchmarks/discriminative.py`` (Kaski et al. 2005, Table 1 protocol, §7.3)."""
    table = [r for r in rows if r.get("benchmark") == "dc_table1"]
    if not table:
        return []
    r0 = table[0]
    methods = [m for m in _DC_METHODS + _DC_REFERENCE if any(m in r["methods"] for r in table)]
    grid = r0["grid_over_s0"]
    lines = [
        "## Discriminative clustering vs MoG / MDA2 / k-means (Kaski et al. 2005, Table 1 protocol)",
        "",
        "`benchmarks/discriminative.py`. Stand-in data (scikit-learn's bundled sets; the paper's "
        "Landsat / Letter / TIMIT are not available offline), so these are **not** reproductions "
        f"of the paper's numbers. {r0['cv']} {r0['folds']}-fold cross-validation; "
        "**cost = -(9)** (Dirichlet-marginalised log posterior, n0 = 1) of the held-out fold with "
        "its points clustered from x alone by the hard Voronoi cells of the learned centres; "
        "mean over folds, **lower is better**, row minimum in bold. Hyper-parameters (DC "
        "smoothing, SA jump width, mixture spread) chosen inside each training set on one "
        f"stratified {1 - r0['inner_validation']:.0%}/{r0['inner_validation']:.0%} split over "
        f"s0 x geomspace({grid[0]:g}, {grid[-1]:g}, {len(grid)}) (paper: 30 values), s0 = RMS "
        f"per-feature std; features: {r0['scaling']} (training-fold statistics). One random "
        f"start per fit. CG <= {r0['cg_max_iter']} iterations, EM {r0['em_iter']} iterations, "
        f"SA {r0['sa_n_iter'] // r0['K']:,} x K steps and sDC {r0['sdc_n_steps'] // r0['K']:,} x K "
        "steps (paper: 100,000 x K). Last column: best DC method minus best reference method "
        "(mean cost difference) and the two-tailed paired t-test p over folds "
        "(\\* p < 0.05, \\*\\* p < 0.01).",
        "",
        "| data | K | " + " | ".join(_DC_LABELS[m] for m in methods)
        + " | best DC - best reference (p) |",
        "|---|---:|" + "---:|" * len(methods) + "---|",
    ]
    for r in table:
        costs = {m: r["methods"][m]["mean_cost"] for m in methods if m in r["methods"]}
        low = min(costs.values())
        cells = []
        for m in methods:
            if m not in costs:
                cells.append("-")
                continue
            v = f"{costs[m]:.2f}"
            cells.append(f"**{v}**" if costs[m] == low else v)
        cmp_ = r.get("best_dc_vs_reference")
        last = "-" if not cmp_ else (
            f"{_DC_LABELS[cmp_['a']]} - {_DC_LABELS[cmp_['b']]}: {cmp_['mean_diff']:+.2f} "
            f"({_p(cmp_['p'])})")
        lines.append(f"| {r['dataset']} (n={r['n']}, d={r['d']}, C={r['n_classes']}) | {r['K']} | "
                     + " | ".join(cells) + f" | {last} |")
    cmps = [r["best_dc_vs_reference"] for r in table if r.get("best_dc_vs_reference")]
    if cmps:
        better = sum(c["mean_diff"] < 0 for c in cmps)
        sig = sum(c["mean_diff"] < 0 and c["p"] < 0.05 for c in cmps)
        worse = sum(c["mean_diff"] > 0 and c["p"] < 0.05 for c in cmps)
        lines += ["", f"Reading the numbers: the best DC method has the lower mean cost in {better} "
                  f"of {len(cmps)} rows, significantly (p < 0.05) in {sig}; the best reference "
                  f"method is significantly better in {worse}. Paper (Table 1): the best DC "
                  "variant was always significantly better than either reference method."]
    inits = [r for r in table if r.get("kmeans_init_vs_random")]
    if inits:
        lines += [
            "",
            "K-means initialisation of CG MAP (Kaski et al. §7.3: it \"significantly improves "
            "almost all DC variants\"): CG MAP from the centres of one k-means run vs from random "
            "training points, each with its own validated smoothing, same folds; mean held-out "
            "cost, difference = k-means init - random (negative: k-means init better), paired "
            "t-test over folds.",
            "",
            "| data | K | CG MAP random | CG MAP k-means init | difference (p) |",
            "|---|---:|---:|---:|---|",
        ]
        for r in inits:
            c = r["kmeans_init_vs_random"]
            lines.append(
                f"| {r['dataset']} | {r['K']} | {r['methods']['cg_map']['mean_cost']:.2f} | "
                f"{r['methods']['cg_map_kmeans']['mean_cost']:.2f} | {c['mean_diff']:+.2f} "
                f"({_p(c['p'])}) |")
        cs = [r["kmeans_init_vs_random"] for r in inits]
        lines += ["", f"k-means initialisation is better on average in "
                  f"{sum(c['mean_diff'] < 0 for c in cs)} of {len(cs)} rows, significantly in "
                  f"{sum(c['mean_diff'] < 0 and c['p'] < 0.05 for c in cs)}, significantly worse "
                  f"in {sum(c['mean_diff'] > 0 and c['p'] < 0.05 for c in cs)}."]
    timed = [m for m in _DC_METHODS + _DC_REFERENCE + ["cg_map_kmeans"]
             if any(m in r["methods"] for r in table)]
    lines += [
        "",
        "Time per fit on a full training set (warm: median over the fits whose shapes were "
        "already compiled; results fetched to the host) in ms, and in brackets the compile "
        "time in s (mean excess of a first call per shape). `select` = wall time of the whole "
        "hyper-parameter search over all folds, compiles included, in s.",
        "",
        "| data | K | " + " | ".join(_DC_LABELS[m] for m in timed) + " | select s (all methods) |",
        "|---|---:|" + "---:|" * len(timed) + "---:|",
    ]
    for r in table:
        cells = []
        for m in timed:
            x = r["methods"].get(m)
            cells.append("-" if x is None else f"{x['fit_ms']:.3g} ({x['compile_s']:.2g})")
        sel = sum(x["select_s"] for x in r["methods"].values())
        lines.append(f"| {r['dataset']} | {r['K']} | " + " | ".join(cells) + f" | {sel:.0f} |")
    return lines


#: Benchmarks rendered by a dedicated table above; everything else goes through generic_tables.
_DEDICATED = ("environment", "dp_means_iteration_vs_sklearn_lloyd", "gibbs_vs_nuts_ess_per_second",
              "hdp_", "dc_table1", "dp_means_many_clusters_opening", "dp_means_restarts_vs_pdc")
#: Title and reading notes of a script's generic table (scripts may also print a "note" row).
GENERIC_TITLES: dict[str, str] = {
    "defaults_real": "Defaults on real data: every clustering estimator with its defaults beside scikit-learn's nearest estimator with its own",
    "dp_means_restarts_vs_pdc": "DP-means restarts: objective at the same lambda vs pdc-dp-means",
    "dp_mixture_real": "The DP Gaussian mixture on real data: DPGaussianMixture (each covariance type, defaults) vs BayesianGaussianMixture (DP prior): NMI, R-hat, ESS/s",
    "dp_mixture_real_summary": "DP mixtures on real data: mean NMI over seeds (target: the best of bayesclust's reaches BayesianGaussianMixture on >= 4 of 5)",
    "dp_mixture_sweep": "gibbs_dp_gaussian's cost per sweep and first call (compiles included), diag / full, with and without split-merge moves, beside the main branch's sampler (same draws)",
    "dp_mixture_memory": "DPGaussianMixture's memory with its defaults: peak RSS of a fit and its pickle, label draws int8 and written once, keep_draws (target: under 2 GiB at 100,000 x 2; a fit on iris pickled under 1 MB)",
    "limit_path_collapse": "Every family's limit path (dp, hdp, dc, aspect): collapse onto its hard limit over 10 seeds, and the hard objective along the path (target: >= 8 of 10 collapsed per data set, no rise beyond the noise)",
    "crf_sampler_first_fit": "The HDP mixture's CRF sampler: a whole first fit with its defaults (compilation included), native kernel vs XLA path (target: <= 20 s on 2 cores, R-hat <= 1.05, no ConvergenceWarning for compare --model hdp)",
    "limit_path_time": "limit_path of every family at n = 500: a fresh process (compilation included) and warm (target < 30 s on 2 cores)",
    "hard_dc_heldout": "HardDC (ours) vs CG MAP: held-out DC cost at the same k, and time",
    "hard_dc_limit_path": "HardDC (ours): limit_path(model='dc') at n = 500",
    "kl_means_consensus": "KL-means consensus (ours) vs EAC, PEnCA and PPC on the same ensemble at the true K: NMI / ARI to the classes, seconds (per seed)",
    "kl_means_consensus_mean": "KL-means consensus (ours) vs EAC, PEnCA and PPC: mean over seeds (target: within .02 of the best peer, faster than PEnCA's EM)",
    "kl_means_limit_path": "limit_path(model=\"aspect\") at n = 500 in a fresh process, compilation included (target < 30 s)",
    "limit_path_hdp_fresh_process": "The HDP mixture's limit path at n = 500 (5 data sets x 100): wall seconds in a fresh process, every compilation counted (target < 30 s)",
    "limit_path_hdp": "The HDP mixture's limit path: collapse onto the hard HDP (or a lower objective) over 10 seeds",
    "first_call": "Time to first result: import, first fit (compilation cache cold / warm), refits, warm fit vs scikit-learn",
    "dp_means_many_clusters_opening": "DP-means when thousands of clusters open in one pass: the first pass vs a steady iteration",
    "cecib_nmi": "CEC-IB vs GaussianMixture / KMeans as the labelled fraction grows (Śmieja & Geiger 2017, §5.2): NMI to the classes",
    "cecib_speed": "CEC-IB vs GaussianMixture on digits (PCA-10), warm, side by side: at the same k with one start, and with the protocol's 2 k starting clusters and restarts (target: <= 3x)",
    "cecib_noisy": "CEC-IB with wrong labels (§5.4): NMI as the fraction of wrong labels grows, beta = 1 vs beta_0",
    "cecib_few_classes": "CEC-IB with labels from only some classes (§5.3)",
    "cecib_iterations": "Iterations to converge (Śmieja & Geiger 2017, Table 3): CEC vs EM-GMM vs Lloyd",
    "cecib_wall": "CEC-IB benchmark wall time",
    "ncut_iteration": "Penalised normalised cut: time per iteration on sparse graphs",
    "scaling_fixed_n": "Penalised normalised cut: time per iteration vs |E| at fixed n",
    "scaling_fixed_degree": "Penalised normalised cut: time per iteration vs n at fixed degree",
    "ncut_vs_sklearn": "Penalised normalised cut (k not given) vs scikit-learn SpectralClustering (k given)",
    "smic_toys": "SMIC on the four toys of Sugiyama et al. 2014 §4.1 (ARI, t by LSMI) vs k-means and spectral clustering",
    "smic_table1_protocol": "SMIC vs k-means and self-tuning spectral clustering on offline data (Table 1 protocol)",
    "smic_scaling": "SMIC at large n (sparse kernel, ARPACK)",
    "scale": "DP-means at scale: peak memory and time, one device vs 8 forced host devices",
    "scale-summary": "DP-means at scale: sharded vs single device",
    "sharded_chains": "Chains and ensembles across devices: the samplers' 8 chains and a k-means ensemble with its co-association, one device vs 8 forced host devices (first run compiles; on 2 cores not faster)",
    "sharded_chains-summary": "Chains and ensembles across devices: sharded vs single device (same draws and counts; warm-time ratio)",
    "consensus_point": "Sparse co-association vs n (Lourenco, Fred & Jain 2010): memory and time with the K_min rule, dense peer where it fits",
    "consensus_slopes": "Sparse co-association: log-log slopes against n (1 = linear)",
    "consensus_validity": "Validity indices (Lourenço & Fred 2010) at n = 10,000: similarity space from the sparse vs the dense co-association, data space vs scikit-learn",
    "consensus_aspect_bayes": "PEnCA's MAP two ways: SVI (AutoDelta, 2000 Adam steps) vs aspect_em (one start, 10 starts); steady and compile seconds, log-posteriors reached",
    "consensus_anmi": "ANMI of a consensus against 150 partitions at n = 100,000: bayesclust.metrics.anmi vs a loop of scikit-learn's NMI",
    "consensus_ppc_dense": "PPC (Rota Bulò et al. 2010, eq. 5) at n = 5,000: the sparse growth transform vs a dense NumPy loop from the same start (50 iterations)",
    "consensus_ppc_scaling": "PPC: time per iteration against the stored pairs (linear K rule, K = 10): it grows with nnz, not n^2",
    "consensus_ensemble_consensus": "Consensus functions on the same k-means ensemble (150 partitions) at the true K: CI of EAC, PEnCA, PPC, CSPA, MCLA (Strehl & Ghosh 2002) and of the consensus chosen by ANMI / ACC (target: selected >= CSPA within one object; breast-cancer-norm is a check outside the target)",
    "did_increments": "Dissimilarity increments (Aidos & Fred 2012): graphs.increments vs O(n^2) NumPy peers",
    "did_hierarchy": "SL-DID and SL-AGLO vs SciPy single linkage: time and peak memory",
    "did_gdid_cut": "G-DID cut of an average-link tree vs building the tree",
    "did_gmdid_cache": "GMDID: increments of the merged pair only vs recomputing everything",
    "gmd_vs_sklearn": "GMD (Figueiredo & Jain 2002) at k_min = k_max = k vs scikit-learn GaussianMixture, same start: log-likelihood and warm time",
    "gmd_vs_sklearn_summary": "GMD vs scikit-learn GaussianMixture: medians over the starts (target: log-likelihood >= scikit-learn's - 0.1%)",
    "gmd_full_run": "GMD, the whole algorithm (k_max components down to k_min), warm",
    "constrained_csl_vs_single": "Constrained single link (CEAC) vs SciPy single link on the same dense co-association, K = 10 (target: <= 3x)",
    "spom_epoch_vs_sgd": "SPOM (Martins et al. 2011, Alg. 3) on digits, three kernel blocks: time per epoch vs scikit-learn SGDClassifier (hinge) on the same features",
    "prox_vs_numpy": "Proximity operators at M = 10^6 (Martins et al. 2011, Alg. 2 and 4) vs a NumPy transcription",
    "constrained_ccl_shortest_paths": "Constrained complete link (Klein et al. 2002): shortest paths through the must-link components vs SciPy Floyd-Warshall (target: >= 10x, identical distances)",
    "constrained_acc_population": "ACC of a GA population (20 candidates, 50 partitions, n = 1,000): one matrix product vs a loop of metrics.acc (target: >= 10x)",
    "constrained_weacs": "WEACS (validity-weighted EAC, 80 % sub-samples) vs unweighted EAC on the same ensemble, average link at the true K, consistency index (mean over seeds)",
    "temporal_fitness_vs_sklearn": "Temporal states (Medina & Fred): one GA fitness evaluation (280 batched NJW / Shi-Malik partitions + EAC + 5 linkages) vs 280 scikit-learn SpectralClustering fits over the same (K, sigma) grid",
    "temporal_denoise_run": "Temporal states: one whole GA denoising run at n = 300 (DS2, seed 0, Table 1's parameters), warm",
    "temporal_ds2_seeds": "Temporal states over seeds: DS1 found without denoising, DS2 before / after GA denoising (success = two states found and >= 80 % of the transition removed; check: >= 8 of 10)",
}


def dp_means_targets(rows: list[dict]) -> str:
    """Which shapes of the recorded run meet the speed targets (<= 1.0x / 1.3x scikit-learn, >= 100x the NumPy loop; sentence)."""
    grid = [r for r in rows if r.get("benchmark") == "dp_means_iteration_vs_sklearn_lloyd"]
    if not grid:
        return ""

    def shape(r):
        n = f"{r['n'] / 1e6:g}M" if r["n"] >= 1_000_000 else f"{r['n'] // 1000}k"
        return f"{n} x {r['d']} ({r['ratio_steady']:.2f})"

    strict = [r for r in grid if r["d"] >= 16 and r["n"] >= 100_000]
    meet1 = [shape(r) for r in strict if r["ratio_steady"] <= 1.0]
    miss1 = [shape(r) for r in strict if r["ratio_steady"] > 1.0]
    miss13 = [shape(r) for r in grid if r["ratio_steady"] > 1.3]
    loop = [r for r in grid if r.get("speedup_vs_numpy_loop") is not None]
    miss_loop = [f"d = {r['d']} ({r['speedup_vs_numpy_loop']:.0f}x)" for r in loop
                 if r["speedup_vs_numpy_loop"] < 100]
    parts = [
        "Targets in this run: <= 1.0x at d >= 16 met at "
        + (", ".join(meet1) or "no shape") + ", missed at " + (", ".join(miss1) or "no shape"),
        "<= 1.3x at every shape " + ("met" if not miss13 else "missed at " + ", ".join(miss13)),
        ">= 100x over the NumPy loop " + ("met" if not miss_loop else "missed at " + ", ".join(miss_loop)),
    ]
    return "; ".join(parts) + "."


def numpy_loop_bound(rows: list[dict]) -> str:
    """What 100x over the NumPy loop would demand of the machine (sentence), where missed."""
    out = []
    for r in rows:
        if (r.get("benchmark") != "dp_means_iteration_vs_sklearn_lloyd"
                or r.get("speedup_vs_numpy_loop") is None or r["speedup_vs_numpy_loop"] >= 100):
            continue
        budget_ms = r["numpy_loop_ms_per_iter"] / 100
        need = 2.0 * r["n"] * r["k_dp_means"] * r["d"] / (budget_ms / 1e3) / 1e9
        peak = next((e.get("machine_matmul_gflops") for e in rows
                     if e.get("benchmark") == "environment" and e.get("machine_matmul_gflops")), None)
        of_peak = f", {100 * need / peak:.0f}% of the measured matmul peak" if peak else ""
        out.append(
            f" 100x over the NumPy loop at {r['n']:,} x {r['d']} means {budget_ms:.1f} ms per "
            f"iteration, i.e. {need:.0f} GFLOP/s of useful product work{of_peak} (the peak "
            "comes from large square products that stream no data), while an iteration also "
            "reads X from memory once: out of reach on this machine; the kernel's product runs "
            "at about 80 GFLOP/s per core."
        )
    return "".join(out)


def _cell(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v != v:
            return "-"
        return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.3g}"
    return str(v)


def generic_tables(rows: list[dict], only: tuple[str, ...] | None = None) -> list[str]:
    """One table per benchmark name for scripts without a dedicated renderer.

    Columns are the rows' scalar fields (lists and dicts stay in ``results.jsonl``);
    a row ``{"benchmark": NAME, "note": TEXT}`` adds TEXT under that table's title.
    ``only``: render just these benchmark names (placed by the caller).
    """
    lines: list[str] = []
    names: list[str] = []
    for r in rows:
        name = r.get("benchmark", "")
        wanted = name in only if only is not None else not name.startswith(_DEDICATED)
        if name and wanted and name not in names:
            names.append(name)
    for name in names:
        group = [r for r in rows if r.get("benchmark") == name and "note" not in r]
        notes = [r["note"] for r in rows if r.get("benchmark") == name and "note" in r]
        cols: list[str] = []
        for r in group:
            for k, v in r.items():
                if k not in ("benchmark", "script") and k not in cols and not isinstance(v, (list, dict)):
                    cols.append(k)
        script = next((r.get("script") for r in rows if r.get("benchmark") == name), None)
        lines += ["", f"## {GENERIC_TITLES.get(name, name)}", ""]
        if script:
            lines += [f"`benchmarks/{script}`." + (" " + " ".join(notes) if notes else ""), ""]
        elif notes:
            lines += [" ".join(notes), ""]
        if group and cols:
            lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
            lines += ["| " + " | ".join(_cell(r.get(c, "")) for c in cols) + " |" for r in group]
    return lines


#: Hand-written: the measurements behind choices between implementations that the code's
#: docstrings and comments state without numbers (one-off timings on the shared 2-core
#: machine, not re-run by ``make bench``), by the function or constant they justify.
IMPLEMENTATION_MEASUREMENTS = [
    "`kernels.nearest_center` (`_UNROLL_MAX_CENTERS`): on XLA:CPU `jnp.argmin` over the "
    "centres was 3-5x slower than the unrolled compare/select chain used up to 128 centres.",
    "`kernels.nearest._chain_over_centers`: the GEMM scores laid out (k, b) instead of (b, k), in a "
    "DP-means iteration: 200k x 16 at 1,731 clusters 225-229 ms instead of 315-326 ms; "
    "100k x 16 at 62 clusters 4.1-4.2 ms instead of 4.4-5.0 ms; 100k x 128 at 100 clusters "
    "unchanged (31-36 ms).",
    "`kernels.map_row_blocks`: an overlapping last block (one compiled block shape instead of "
    "two) made the compile of a DP-means loop at 2,048 clusters 40% shorter.",
    "`kernels.gaussian_logpdf_full`: on XLA:CPU a triangular solve against the n differences "
    "was 20x slower than one product with L^-1 at n = 10,000, d = 5.",
    "`inference.consensus.ensembles.kmeans_ensemble` (`backend`): iris (N = 150, K in [7, 27]): numpy "
    "0.3 s; jax 1.1 s plus a 5 s compilation per data shape. n = 200,000, d = 2, K = 7,000, "
    "20 iterations: numpy (KD-tree) 0.6 s, jax 1.4 s (native nearest-centre kernel, capacity "
    "K) and 2.9 s (pure XLA), scikit-learn `KMeans(n_init=1)` from the same starts 14 s.",
    "`inference.hard.kmeans.lloyd_host` (`assignment=\"kdtree\"`): querying the rows in the leaf "
    "order of a KD-tree on X is about 30% faster at n = 200,000, K = 7,000, d = 2.",
    "`inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`: the default run (8 chains, 4,500 sweeps "
    "each) on the 300 points of `datasets.three_gaussians` took 0.6-0.8 s on 2 cores.",
    "`inference.mixtures.convergence.HDP_SAMPLER_DEFAULTS`: a CRF sweep of the 1,250 points in 50 data "
    "sets of `datasets.hdp_groups` took ~0.15 s on 2 cores; 8 chains on the vectorised axis "
    "cost ~1.7x one (an earlier measurement; see the next item, which found 5.6x).",
    "`inference.mixtures.hdp_gibbs` (where an `HDPGaussianMixture` fit's time goes; 2026-11-29, load "
    "average 10-17 on the 2 cores, so seconds are inflated several-fold and only ratios measured side "
    "by side count): on the 1,250 points of `datasets.hdp_groups` (50 data sets, L = 16 table and "
    "P = 64 dish slots) one chain's sweep took 12 ms, 8 chains on the vectorised axis 68 ms (5.6x "
    "one), 8 chains one after the other (`lax.map`) 133 ms; at P = 256 dish slots a sweep cost ~6x "
    "one at 64 (every point move draws over L + P + 1 seats). Compiling `_run_segment` for "
    "standardised wine in 3 data sets (178 x 13, 8 chains) took 35-45 s with one split-merge move "
    "per sweep and 15 s without, against ~1 s for 50 sweeps: a first fit is mostly compilation, "
    "and every growth of the table / dish buffers compiles again (wine grew twice by doubling, "
    "8 -> 16 -> 32 tables and 64 -> 128 -> 178 dishes). Growing the tables fourfold and the dishes "
    "straight to n when n <= 4P compiled once instead of twice and took the first fit from 196 s "
    "to 171 s, but it changes the draws of runs whose buffers grow less (not adopted: the stored "
    "notebooks' numbers would change). On `compare --model hdp`'s data the split-merge move was "
    "accepted in 0.1% of proposals (1 or 8 moves per sweep); on wine in 3 data sets it helps "
    "(`split_merge=0` / `1`, both fresh at the same time: 106 s / 113 s, R-hat of k 1.229 / 1.171). "
    "`bayesclust compare --model hdp` (defaults, same load) took 667 s: the sampler 556 s "
    "(8 chains x 4,500 sweeps at thin 8; R-hat of k 1.003, no ConvergenceWarning), the limit path "
    "67 s, the peers 11 s, the report 5 s, the penalties 2 s. `HDPGaussianMixture(random_state=0)` "
    "on `datasets.hdp_groups(0)`: 146 s, R-hat of k 1.022 and of the log-likelihood 1.014.",
    "`_native/hdp.cc` (the CRF sampler's point, table and split-merge moves; 2026-11-29, load 8-19 "
    "on the 2 cores, seconds inflated several-fold): on `datasets.hdp_groups` (8 chains, 128 dish "
    "slots) the moves of one sweep took 22 ms as first written (a loop over every slot and a log "
    "and an exp per seat) and 5 ms once they weighed only the dishes in use with logs of counts "
    "from a table; the XLA scans took about 4x the first version's time in the same process "
    "(225 sweeps: 16.2 s against 4.0 s). Compiling the sweep (`jit` of a vmapped `hdp_sweep`) took "
    "17 s with the XLA split-merge move and 9 s without; its random numbers alone (4 draws, "
    "threefry) 4 s, the move alone 10.6 s (7.7 s with its numbers from one `jax.random.bits` "
    "call and its data set gathered without a sort); with the moves native the whole sweep "
    "compiled in 4-5 s. Compiling with `xla_cpu_use_fusion_emitters=False`, "
    "`xla_backend_optimization_level=0` and `xla_llvm_disable_expensive_passes=True` "
    "took 0.7 s instead of 5 s but made a sweep's XLA part 2-3x slower (not adopted: 5,000 "
    "sweeps per fit). The phases of `compare --model hdp` (CPU seconds, load 15, cache off): "
    "penalties 7 (the hard HDP's compilation), sampler 21, VI point estimate 4, peers 8.4, limit "
    "path 17.5, report 1.8.",
    "`inference.mixtures.gibbs._draw_slot_or_new`: with the new cluster's weight concatenated to the "
    "slots' ((K + 1, C) array) a step at 256 chains took 1.5x as long.",
    "`inference.mixtures.gibbs._scan_points`: caching the slot terms and updating only the two slots a "
    "move touches took longer at n = 300: 66 instead of 51 ns per point and chain at 256 "
    "chains, 1.0 instead of 0.65 us at 2.",
    "`_native/gibbs.cc`: the XLA:CPU scan step costs about 80 ns per point and chain at 256 "
    "chains, the native step about 7-8 ns per point and chain on one core at n = 300; two "
    "groups of chains interleaved point by point gained 4%.",
    "`inference.hard.dp_means._open_clusters`: a first pass from the global mean (jitted, warm) "
    "with super-blocks: 1M x 128 opening 100 clusters 1.44 -> 0.49 s; uniform 1M x 2 opening "
    "775, 1.24 -> 0.19 s; uniform 200k x 16 opening 1,693, 0.55 -> 0.22 s.",
    "`inference.hard.dp_means` (the iteration loop): a precomputed (n, d) copy w * X costs 512 MiB "
    "and 0.15 s per run at 1M x 128; the initial state run op by op costs about 1 s in (n, d) "
    "temporaries at 1M x 128 (hence compiled).",
    "`inference.consensus.ppc.ppc`: on ten Gaussians with n = 10,000 (50 k-means partitions, linear K "
    "rule, K = 10) one start took 22 s for 1,000 iterations.",
    "`inference.consensus.ensembles.njw_partition` (ARPACK above 2,000 vertices, dense affinities "
    "too, component by component): MCLA on the 150-partition k-means ensembles of "
    "`benchmarks/consensus.py` (2,477-3,665 hyperedges; one BLAS thread, load average 12, "
    "2026-11-29): iris 2.6-4.8 s -> 0.47-0.50 s warm (1.05 s on the process's first call), wine "
    "3.2-3.7 -> 0.67-1.1 s, biopsy 9.7-17 -> 2.3-2.7 s, breast cancer 8.4-9.5 -> 1.8-2.2 s, the "
    "same partitions on all 12 ensembles; with OpenBLAS's two threads the dense `eigh` on iris "
    "took 12-40 s on the loaded machine. One Lanczos run over the whole meta-graph (iris's has "
    "two components) returned another partition on a three-component graph: hence per component.",
    "`inference.information.smic` (`_one_blas_thread`): OpenBLAS's threading made a 50 x 50 `eigh` ~50x "
    "slower on a loaded 2-core machine.",
    "`inference.discriminative.dc_map._smoothed_value_and_grad`: on the n = 10,000 toy (K = 6, "
    "float64, 2-core CPU) 1.4 ms per evaluation against 6.8 ms for "
    "`jax.value_and_grad(dc_objective)`; the optimisation barriers halve it; the host round "
    "trip of `dc_map`'s SciPy CG is ~0.05 ms per evaluation.",
    "`inference.discriminative.dc_anneal.dc_anneal`: about 1.5e5 proposals/s at n = 1,000, K = 6, "
    "`move=\"one\"` on a 2-core CPU (the paper's 600,000 in about 4 s, compilation excluded).",
    "`inference.consensus.constrained._is_symmetric`: comparing with the whole `C.T` (column-wise "
    "memory walk) was twice as slow as row blocks at n = 2,000.",
    "`jobs.hdp.grouped_peers`: tens of tiny k-means fits with OpenMP threads were 10-50x "
    "slower on a busy machine than on one thread.",
    '`estimators.consensus.EvidenceAccumulation` (default `select="silhouette"`, ties to the most clusters): with every default (150 k-means partitions, average link, k_range 2..142) at n = 20,000, five round blobs (unit variance, centres on a radius-10 circle, 4,000 each): 5 clusters, NMI 1.0 (silhouette 1 at 2-5 clusters, .992 at 6); scikit-learn\'s `make_blobs(n_samples=20000, centers=5, random_state=0)`: 2 clusters, NMI .47 (silhouette 1 at 2, .993 at 3). Each fit 208-239 CPU s (889-1,265 s wall at load 10), peak RSS 1.41-1.42 GiB, on 2026-11-29 (a fresh process per data set, `random_state=0`).',
]


def render(rows: list[dict], date: str | None = None) -> str:
    """BENCHMARKS.md from the collected rows (every script's JSON lines)."""
    env = next((r for r in rows if r.get("benchmark") == "environment"), {})
    versions = {}
    for r in rows:
        if r.get("benchmark") == "environment":
            for k in ("jax", "numpyro", "sklearn", "python"):
                if r.get(k) is not None:
                    versions.setdefault(k, r[k])
    # Which kernels the rows measured: the native CPU kernels, or the XLA path where they
    # were off (BAYESCLUST_NATIVE=0) or not built.
    native = {r["native_kernels"] for r in rows
              if r.get("benchmark") == "environment" and "native_kernels" in r}
    kernels = {frozenset([True]): "native CPU kernels, ", frozenset([False]): "XLA path only, ",
               frozenset([True, False]): "native CPU kernels in some scripts only, "}.get(
                   frozenset(native), "")
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `make bench` on {date or datetime.date.today().isoformat()}: "
        f"{env.get('cpu_count', '?')} CPU cores ({env.get('machine', '?')}), "
        f"JAX {versions.get('jax') or '?'}, NumPyro {versions.get('numpyro') or '?'}, "
        f"scikit-learn {versions.get('sklearn') or '?'}, Python {versions.get('python') or '?'}, "
        f"{kernels}float32. Peers run side by side in the same process; raw rows are in "
        "`benchmarks/results.jsonl`.",
        "",
    ]
    lines += dp_means_table(rows)
    lines += [
        "",
        "Reading the numbers: `steady` is the marginal cost of an iteration inside a running fit "
        "on both sides (DP-means: a compiled loop of iterations, as `dp_means` runs them; "
        "scikit-learn: the difference of two fits). `isolated call` times one jitted iteration "
        "on its own, which also allocates and first-touches its temporaries: "
        "glibc returns blocks over 32 MiB to the OS on free, so every isolated call page-faults "
        "them in again, while inside `dp_means` the buffers are allocated once per run. On a "
        "CPU the assignment step is one native XLA FFI call (`bayesclust/_native/nearest.cc`): "
        "the GEMM scores, the argmin, the winner's exact distance (recomputed by direct "
        "differences, so GEMM cancellation cannot reach the objective or the new-cluster test) "
        "and, on passes where no cluster opens, the per-cluster weighted sums are computed tile "
        "by tile in registers (rows on the vector lanes for d <= 32, packed panels of 16 centres "
        "-- the BLIS 6 x 16 layout -- above), over the valid buffer slots only, in one pass "
        "over X. That is the fusion scikit-learn gets from its 256-row chunks, and one XLA:CPU "
        "cannot express: its GEMM writes the whole n x k product to memory, a `lax.map` of "
        "small GEMMs runs on one thread, and the cluster buffer's padding slots (128 for "
        "k = 100) are computed too. The pure-XLA path, still used on other platforms, measured "
        "1.42x / 1.12x at 100k / 1M x 128 and 1.19x at 1M x 16 (the last run before the "
        "kernel, commit 2720311). `full run` adds the first passes, which open the clusters "
        "(Algorithm 1's sequential semantics: candidates already within lambda of a seed are "
        "dropped 4,096 at a time, the rest validated in blocks of 256). "
        + dp_means_targets(rows)
        + numpy_loop_bound(rows) + " This is a 2-core VM shared with other tenants: "
        "scikit-learn's own time per iteration has varied by up to 2x between runs of this "
        "script (e.g. 3.8-7.3 ms at 100k x 16, 16-32 ms at 100k x 128; three runs with "
        "the kernel on one day gave 0.96 / 0.98 / 0.84 at 100k x 128, scikit-learn taking "
        "22.2 / 22.3 / 28.3 ms), so single ratios "
        "carry about +-30%; both sides are measured after the other's threads had 0.5 s to "
        "park.",
        "",
    ]
    lines += generic_tables(rows, only=("dp_means_many_clusters_opening", "dp_means_restarts_vs_pdc"))
    lines += [""]
    lines += samplers_table(rows)
    lines += ["", SAMPLERS_READING]
    hdp = hdp_tables(rows)
    if hdp:
        lines += [""] + hdp
    dc = dc_tables(rows)
    if dc:
        lines += [""] + dc
    lines += generic_tables(rows)
    notes = [f"* `{r['script']}`: {r['note']}" for r in rows
             if r.get("benchmark") == "environment" and r.get("note")]
    if notes:
        lines += ["", "## Notes on the runs", ""] + notes
    lines += ["", "## Measurements behind implementation choices", "",
              "One-off timings on the shared 2-core machine (not re-run by `make bench`) behind "
              "choices the code states without numbers:", ""]
    lines += [f"* {m}" for m in IMPLEMENTATION_MEASUREMENTS]
    return "\n".join(lines) + "\n"


#: Scripts of the rows stored before rows carried a ``script`` tag (by benchmark-name prefix).
_LEGACY = {"dp_means_": "dp_means.py", "gibbs_vs_nuts": "samplers.py", "hdp_": "hdp.py",
           "dc_": "discriminative.py"}


def stored_rows() -> list[dict]:
    """Rows of ``results.jsonl``, each tagged with the script that wrote it.

    Untagged rows are attributed by benchmark name; an untagged environment row
    belongs to the script of the row after it (every script prints it first).
    """
    path = HERE / "results.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row in rows:
        name = row.get("benchmark", "")
        row.setdefault("script", next((s for p, s in _LEGACY.items() if name.startswith(p)), None))
    for row, after in zip(rows[::-1][1:], rows[::-1]):
        if row["script"] is None:
            row["script"] = after["script"]
    return rows


def _named(row: dict) -> dict:
    """Rows name their benchmark in ``benchmark``; some scripts say ``bench`` (+ ``kind``)."""
    if "benchmark" not in row and "bench" in row:
        row = dict(row)
        bench, kind = row.pop("bench"), row.pop("kind", None)
        row["benchmark"] = "environment" if "environment" in (bench, kind) else (
            f"{bench}_{kind}" if kind else bench)
    return row


def main():
    """``run_all.py [--only SCRIPT | --ingest SCRIPT FILE ... | --merge SCRIPT FILE] [args]``.

    With ``--only``, runs just those scripts and keeps every other script's stored rows;
    ``--ingest`` takes a script's rows from the JSON lines of a saved run of it.
    ``--merge`` takes rows from a saved partial run of a script (e.g.
    ``consensus.py --validity-only``): they replace only the stored rows of that script
    with the same benchmark names; everything else is kept and nothing is run.
    """
    argv = sys.argv[1:]
    if argv[:1] in (["-h"], ["--help"]):
        print(main.__doc__)
        return
    if argv[:1] == ["--merge"]:
        script = argv[1] if argv[1].endswith(".py") else argv[1] + ".py"
        if script not in SCRIPTS:
            raise SystemExit(f"--merge: unknown script {script}; known: {SCRIPTS}")
        new = [dict(_named(json.loads(line)), script=script)
               for line in Path(argv[2]).read_text().splitlines() if line.startswith("{")]
        new = [r for r in new if r["benchmark"] != "environment"]
        names = {r["benchmark"] for r in new}
        rows = [r for r in stored_rows()
                if not (r["script"] == script and _named(r).get("benchmark") in names)]
        last = max((i for i, r in enumerate(rows) if r["script"] == script), default=len(rows) - 1)
        rows = rows[: last + 1] + new + rows[last + 1 :]
        (HERE / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (ROOT / "BENCHMARKS.md").write_text(render([_named(r) for r in rows]))
        print(f"merged {len(new)} rows of {script}; wrote {ROOT / 'BENCHMARKS.md'}")
        return
    only, ingest = [], {}
    while argv and argv[0] in ("--only", "--ingest"):
        script = argv[1] if argv[1].endswith(".py") else argv[1] + ".py"
        if argv[0] == "--ingest":  # a saved run of the script: ``--ingest SCRIPT FILE``
            ingest[script] = Path(argv[2])
            argv = argv[3:]
        else:
            argv = argv[2:]
        only.append(script)
    unknown = sorted(set(only) - set(SCRIPTS))
    if unknown:
        raise SystemExit(f"--only/--ingest: unknown scripts {unknown}; known: {SCRIPTS}")
    scripts = only or SCRIPTS
    kept = [r for r in stored_rows() if r["script"] not in scripts] if only else []
    rows = list(kept)
    for script in scripts:
        if script in ingest:
            new = [json.loads(line) for line in ingest[script].read_text().splitlines()
                   if line.startswith("{")]
        else:
            new = run(script, argv)
        if not new:  # nothing measured (e.g. the script only printed help): keep its old rows
            print(f"  {script} printed no rows; its stored rows are kept", flush=True)
            rows += [r for r in stored_rows() if r["script"] == script]
            continue
        rows += [dict(_named(r), script=script) for r in new]
    order = {s: i for i, s in enumerate(SCRIPTS)}
    rows.sort(key=lambda r: order.get(r["script"], len(SCRIPTS)))  # stable: keeps each script's order
    (HERE / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (ROOT / "BENCHMARKS.md").write_text(render(rows))
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
