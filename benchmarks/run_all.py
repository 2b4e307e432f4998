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
SCRIPTS = ["dp_means.py", "samplers.py"]


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
    lines = [
        "## DP-means iteration vs scikit-learn Lloyd k-means (same k, same process)",
        "",
        "`benchmarks/dp_means.py`. One DP-means iteration = assignment pass (Algorithm 1, bulk) "
        "+ mean update + objective; one Lloyd iteration = scikit-learn `KMeans(algorithm=\"lloyd\")` "
        "at the number of clusters DP-means found. **Ratio = DP-means / scikit-learn (lower is "
        "better; target <= 1.5).** `full run` includes the first passes that open the clusters. "
        "Milliseconds are given for context only; compile time is separate.",
        "",
        "| n | d | k | ratio (steady) | ratio (isolated call) | ratio (full run) | DP-means ms/iter "
        "| sklearn ms/iter | DP-means iters | compile s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r.get("benchmark") != "dp_means_iteration_vs_sklearn_lloyd":
            continue
        lines.append(
            f"| {r['n']:,} | {r['d']} | {r['k_dp_means']} | **{r['ratio_steady']:.2f}** | "
            f"{r.get('ratio_single_call', float('nan')):.2f} | {r['ratio_full_run']:.2f} | {r['dp_means_ms_per_iter_steady']:.1f} | "
            f"{r['sklearn_lloyd_ms_per_iter']:.1f} | {r['dp_means_n_iter']} | "
            f"{r['dp_means_compile_s']:.1f} |"
        )
    return lines


def _fmt(x: float) -> str:
    """A rate or ratio with 3 significant digits (``inf``/``nan`` as words)."""
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


SAMPLERS_READING = (
    "Reading the numbers: the 10x target is not met. Per second of sampling the collapsed "
    "Gibbs sampler still yields fewer effective draws of k than NUTS at n = 300 and 1,000. "
    "What changed: the sequential sweep caches each slot's predictive terms and updates only "
    "the two slots a move touches, and the buffer starts at 8 slots (it doubles on overflow), "
    "so a step no longer costs work over 33 slots; one split-merge move per sweep (SM, Dahl "
    "2003) about doubles to triples k's ESS per draw for +30-50% cost per sweep; and the "
    "blocked sampler on the truncated model (the NUTS program) draws all labels in one "
    "vectorised pass (0.2 ms per draw at n = 300, 1 ms at n = 10,000, 5-20x cheaper than a "
    "sequential sweep). Why still short: (1) a sequential step costs ~1-2 us per point per "
    "chain on XLA:CPU however little it computes (per-operation dispatch inside the scan), so "
    "at n = 300 even a sampler with independent draws would reach only ~3x NUTS's ESS/s of k; "
    "(2) the blocked sampler is cheap but mixes k badly (ESS of k ~1-2% of its draws): an "
    "extra cluster can only open where an empty component's mean, drawn from the diffuse "
    "prior N(0, 100 I), lands near the data, and only dissolve when all its points leave, "
    "whereas NUTS moves the empty components' means continuously and redraws the labels "
    "every iteration (k's ESS 25-100% of its draws). At n = 10,000 the default budget "
    "converges no sampler (†; NUTS unadapted), so its ratios are not evidence either way. "
    "Mean k: NUTS sits slightly below the collapsed samplers (about 0.05-0.15, up to ~2 "
    "MCSE), consistent with NUTS at the default `target_accept_prob = 0.8` under-visiting "
    "states with a small extra cluster; the log-likelihood means agree. What would help "
    "next: a vectorised move that opens/dissolves clusters for the blocked sampler (e.g. "
    "split-merge or a collapsed reallocation of a few points per sweep on top of the blocked "
    "pass), and several chains per program (a blocked sweep at n = 300 is dispatch-bound, so "
    "more vmapped chains are nearly free)."
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
        "alpha = 1, sigma2 = 0.65^2, rho2 = 100 for both; Gibbs = `gibbs_dp_gmm(collapsed=True)` "
        "from one cluster (the package's default sequential scan, Neal's Algorithm 3); "
        "SM = the same plus one split-merge move per sweep (`split_merge=1`, Dahl 2003); "
        "blocked = `gibbs_dp_gmm(scheme=\"blocked\", truncation=20)` (Ishwaran & James 2001, "
        "the NUTS program's own truncated model, all labels drawn in parallel); NUTS = NumPyro's NUTS kernel on `models.dp_gmm.dp_gmm` (truncation "
        "20, NumPyro defaults), labels drawn from their conditional; 2 chains each, vmapped. "
        "ESS = ArviZ bulk ESS of k (number of clusters in the label draws) and of the "
        "complete-data log-likelihood log p(X | z, mu, sigma2), chains x draws. "
        "**Ratio = Gibbs ESS/s / NUTS ESS/s (higher is better; target >= 10)**, per second of "
        "the sampling phase (kept draws); `incl. warm-up` also counts the warm-up iterations "
        "listed (so it depends on them). Compile time is excluded and listed separately. "
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
    return lines


def render(rows: list[dict], date: str | None = None) -> str:
    """BENCHMARKS.md from the collected rows (every script's JSON lines)."""
    env = next((r for r in rows if r.get("benchmark") == "environment"), {})
    versions = {}
    for r in rows:
        if r.get("benchmark") == "environment":
            for k in ("jax", "numpyro", "sklearn", "python"):
                if r.get(k) is not None:
                    versions.setdefault(k, r[k])
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `make bench` on {date or datetime.date.today().isoformat()}: "
        f"{env.get('cpu_count', '?')} CPU cores ({env.get('machine', '?')}), "
        f"JAX {versions.get('jax') or '?'}, NumPyro {versions.get('numpyro') or '?'}, "
        f"scikit-learn {versions.get('sklearn') or '?'}, Python {versions.get('python') or '?'}, "
        "float32. Peers run side by side in the same process; raw rows are in "
        "`benchmarks/results.jsonl`.",
        "",
    ]
    lines += dp_means_table(rows)
    lines += [
        "",
        "Reading the numbers: `steady` is the marginal cost of an iteration inside a running fit "
        "on both sides (DP-means: a compiled loop of iterations, as `dp_means` runs them; "
        "scikit-learn: the difference of two fits). `isolated call` times one jitted iteration "
        "on its own, which also allocates and first-touches its temporaries (the n x k scores): "
        "glibc returns blocks over 32 MiB to the OS on free, so every isolated call page-faults "
        "them in again, while inside `dp_means` the buffers are allocated once per run. The "
        "assignment step (one GEMM for the scores, an unrolled compare/select argmin fused with "
        "the score affine, the winner's exact distance fused with its gather) is most of an "
        "iteration; at d = 128 the GEMM alone costs about a scikit-learn iteration, because "
        "scikit-learn keeps 256-row chunks of scores in cache while XLA writes the whole n x k "
        "product to memory. `full run` adds the first passes, which open the clusters one "
        "candidate block at a time (Algorithm 1's sequential semantics).",
        "",
    ]
    lines += samplers_table(rows)
    lines += ["", SAMPLERS_READING]
    return "\n".join(lines) + "\n"


def main():
    extra = sys.argv[1:]
    rows = []
    for script in SCRIPTS:
        rows += run(script, extra)
    (HERE / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (ROOT / "BENCHMARKS.md").write_text(render(rows))
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
