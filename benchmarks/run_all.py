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
    "Reading the numbers: the 10x target is not met; per second of sampling the collapsed "
    "Gibbs sampler yields several times *fewer* effective draws of k than NUTS. Two causes. "
    "(1) Mixing: single-site moves open and dissolve small clusters one point at a time, so "
    "k's bulk ESS is a few per cent to ~15% of the Gibbs draws against ~25-100% for NUTS, whose "
    "labels are drawn afresh from p(z | w, mu) at every draw. (2) Cost: a sweep is a "
    "sequential `lax.scan` over the points at ~2-4 us per point per chain on XLA:CPU, the "
    "work over all 33 slots of the cluster buffer (K = 32 + new) in every step (an 8-slot "
    "buffer cuts it 2-3x; the loop itself costs ~0.04 us), so a sweep costs about as much as "
    "an adapted NUTS draw (~20-30 vectorised gradients). NUTS's cost is its warm-up: until "
    "the mass matrix is adapted its trajectories run to the maximum tree depth (seconds per "
    "iteration at n = 10,000), which is why the `incl. warm-up` ratios favour Gibbs; they "
    "shrink as runs get longer. At n = 10,000 the default budget converges neither sampler "
    "(†); `python benchmarks/samplers.py --n 10000 --gibbs-draws 1000 1000 --nuts-draws 200 "
    "100` (~12 min on 2 busy cores; ‡) does. Mean k: NUTS sits slightly below Gibbs (about "
    "0.05-0.15, up to ~2 MCSE), consistent with NUTS at the default `target_accept_prob = 0.8` "
    "under-visiting states with a small extra cluster; the log-likelihood means agree. "
    "What would help: split-merge "
    "moves (Jain & Neal 2004) for k; a blocked Gibbs sampler on the truncated stick-breaking "
    "form (all labels drawn in parallel given w and mu: one vectorised O(nK) pass per sweep); "
    "a leaner step (a buffer sized to the active clusters, per-cluster terms cached and "
    "updated only for the two slots a move touches)."
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
        "from one cluster, NUTS = NumPyro's NUTS kernel on `models.dp_gmm.dp_gmm` (truncation "
        "20, NumPyro defaults), labels drawn from their conditional; 2 chains each, vmapped. "
        "ESS = ArviZ bulk ESS of k (number of clusters in the label draws) and of the "
        "complete-data log-likelihood log p(X | z, mu, sigma2), chains x draws. "
        "**Ratio = Gibbs ESS/s / NUTS ESS/s (higher is better; target >= 10)**, per second of "
        "the sampling phase (kept draws); `incl. warm-up` also counts the warm-up iterations "
        "listed (so it depends on them). Compile time is excluded and listed separately. "
        "NUTS gets fewer draws (it is slower per draw, its warm-up much slower), so its ESS is "
        "noisier. † = not converged (an R-hat > 1.1) or NUTS not adapted (most trajectories "
        "at the maximum tree depth): that row's ratios are not meaningful. ‡ = draw counts "
        "set on the command line (`--gibbs-draws`, `--nuts-draws`), not by `make bench`.",
        "",
        "| n | ratio k | ratio log-lik | ratio k / log-lik incl. warm-up "
        "| ESS/s k Gibbs / NUTS | ESS/s log-lik Gibbs / NUTS | ESS k Gibbs / NUTS "
        "| R-hat k Gibbs / NUTS | mean k Gibbs / NUTS | warm-up + draws Gibbs / NUTS "
        "| ms/draw Gibbs / NUTS | NUTS steps/draw (% max depth) | compile s Gibbs / NUTS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r.get("benchmark") != "gibbs_vs_nuts_ess_per_second":
            continue
        mark = "" if _sampler_row_ok(r) else " †"
        mark += " ‡" if r.get("draws_overridden") else ""
        lines.append(
            f"| {r['n']:,}{mark} | **{_fmt(r['ratio_k'])}** | **{_fmt(r['ratio_loglik'])}** | "
            f"{_fmt(r['ratio_k_incl_warmup'])} / {_fmt(r['ratio_loglik_incl_warmup'])} | "
            f"{_fmt(r['gibbs_ess_per_s_k'])} / {_fmt(r['nuts_ess_per_s_k'])} | "
            f"{_fmt(r['gibbs_ess_per_s_loglik'])} / {_fmt(r['nuts_ess_per_s_loglik'])} | "
            f"{r['gibbs_ess_k']:.0f} / {r['nuts_ess_k']:.0f} | "
            f"{r['gibbs_rhat_k']:.2f} / {r['nuts_rhat_k']:.2f} | "
            f"{_mean_k(r, 'gibbs')} / {_mean_k(r, 'nuts')} | "
            f"{r['gibbs_num_warmup']}+{r['gibbs_num_samples']} / "
            f"{r['nuts_num_warmup']}+{r['nuts_num_samples']} | "
            f"{r['gibbs_ms_per_draw']:.1f} / {r['nuts_ms_per_draw']:.1f} | "
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
        "Reading the numbers: the assignment step (GEMM-form scores, unrolled compare/select "
        "argmin, exact recompute of the winner's distance) is the bulk of a steady iteration; "
        "`jnp.argmin` on XLA:CPU is 3-5x slower than the unrolled chain, row blocking with "
        "`lax.map` was slower than one block, and first-touch of large temporaries (the n x k "
        "scores, the gathered winners) costs about as much as the arithmetic at d = 128. "
        "scikit-learn reuses 256-row chunk buffers and fuses the argmin into its BLAS loop. "
        "The 1.5x target is met only at d = 2 so far; closing the gap is tracked in the "
        "performance issue (fused per-block assignment, avoiding the n x d gather).",
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
