"""The ``bayesclust`` command.

Subcommands
-----------
``bayesclust fit``      cluster a CSV / .npy file and write the labels.
``bayesclust compare``  the main job: fit a model by its hard limit and by
                        sampling on built-in data or a file (``--labels``: its
                        true classes), compare with the peers, write a JSON
                        summary and a figure.
``bayesclust --version``

Bad input is reported as one line on stderr naming the option as typed, with exit
status 2, never a traceback, and before any fitting or any file is created.  Outputs
replace existing files by an atomic rename (README, "Command line").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .datasets import read_matrix

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line and exit status 2."""

    def error(self, message):  # noqa: D401 - argparse API
        raise _UsageError(f"{self.prog}: error: {message}")


class _UsageError(Exception):
    pass


def _fail(message: str):
    raise _UsageError(f"bayesclust: error: {message}")


def _check_folder(path: Path, option: str, shown: str) -> None:
    """``path`` is a writable folder, or can be created as one; checked without creating it."""
    if path.exists() and not path.is_dir():
        _fail(f"{option} {shown!r}: {str(path)!r} is a file, not a folder")
    existing = path
    while not existing.exists():  # the nearest existing ancestor is where mkdir would write
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        _fail(f"{option} {shown!r}: {str(existing)!r} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        _fail(f"{option} {shown!r}: the folder {str(existing)!r} is not writable")


def _check_out_file(path: Path, option: str) -> None:
    """``path`` can be written as a file (not a folder; its folder writable), creating nothing."""
    if path.is_dir():
        _fail(f"{option} {str(path)!r} is a folder; give a file name, e.g. {str(path / 'labels.csv')!r}")
    _check_folder(path.parent, option, str(path))


def _check_count(value, option: str, minimum: int = 1) -> None:
    if value is not None and value < minimum:
        _fail(f"{option} must be an integer >= {minimum}, got {value}")


def labels_file(data: str) -> Path:
    """Default labels file of ``bayesclust fit DATA``: the whole file name + ``.labels.csv``, so
    ``data.csv`` and ``data.npy`` do not write the same file."""
    p = Path(data)
    return p.with_name(p.name + ".labels.csv")


def _cmd_fit(args) -> int:
    from . import _validation as V
    from .inference.hard.dp_means import dp_means, farthest_first_lambda
    from .jobs import replace_atomically

    if (args.lam is None) == (args.n_clusters is None):
        _fail("give exactly one of --lam and --n-clusters")
    if args.lam is not None:
        lam = V.check_positive(args.lam, "--lam")
    _check_count(args.n_clusters, "--n-clusters")
    _check_count(args.max_iter, "--max-iter")
    out = Path(args.out) if args.out else labels_file(args.data)
    _check_out_file(out, "--out")
    X = read_matrix(args.data)
    X = V.check_array(X, f"data in {args.data}")
    if args.n_clusters is not None:
        k = args.n_clusters
        if k > X.shape[0]:
            raise ValueError(f"--n-clusters must be <= the number of rows ({X.shape[0]}), got {k}")
        lam = farthest_first_lambda(X, k)
        if not lam > 0:  # farthest-first ran out of distinct rows: lambda 0 opens a cluster per row
            n_distinct = len(np.unique(X, axis=0))
            smaller = "" if k == 1 else f" or --n-clusters below {k}"
            _fail(f"--n-clusters {k}: {args.data} has {n_distinct} distinct row(s), too few for "
                  f"farthest-first to choose lambda; give --lam (a squared distance > 0){smaller}")
    t0 = time.perf_counter()
    res = dp_means(X, lam, max_iter=args.max_iter)
    seconds = time.perf_counter() - t0
    # Written beside the target and renamed onto it: an existing labels file is replaced whole
    # or kept, never left half-written (README, "Command line").
    replace_atomically(out, lambda tmp: np.savetxt(tmp, res.labels, fmt="%d"))
    summary = {
        "method": args.method,
        "data": str(args.data),
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "lam": lam,
        "n_clusters": res.n_clusters,
        "objective": res.objective,
        "n_iter": res.n_iter,
        "converged": res.converged,
        "seconds": round(seconds, 4),
        "labels_file": str(out),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"dpmeans: {summary['n_samples']} x {summary['n_features']}, lam={lam:.6g} -> "
            f"{res.n_clusters} clusters, objective {res.objective:.6g}, "
            f"{res.n_iter} iterations ({'converged' if res.converged else 'NOT converged'}), "
            f"{seconds:.3f} s; labels written to {out}"
        )
    return 0


def _cmd_compare(args) -> int:
    from . import _validation as V
    from .jobs import run_compare

    _check_count(args.seed, "--seed", minimum=0)
    _check_count(args.n_clusters, "--n-clusters")
    for option in ("num_warmup", "num_samples", "num_chains", "thin"):
        _check_count(getattr(args, option), "--" + option.replace("_", "-"),
                     minimum=0 if option == "num_warmup" else 1)
    if args.lam is not None:
        V.check_positive(args.lam, "--lam")
    _check_folder(Path(args.out_dir), "--out", args.out_dir)
    summary = run_compare(
        data=args.data, out_dir=args.out_dir, model=args.model, n_clusters=args.n_clusters, lam=args.lam,
        seed=args.seed, num_warmup=args.num_warmup, num_samples=args.num_samples,
        num_chains=args.num_chains, thin=args.thin, plot=not args.no_plot, progress_bar=not args.no_progress,
        labels=args.labels,
    )
    print(summary["report"])
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .datasets import DATASETS
    from .inference.mixtures.convergence import DP_SAMPLER_DEFAULTS as _DP
    from .inference.mixtures.convergence import HDP_SAMPLER_DEFAULTS as _HDP
    from .jobs import DP_JOB_THIN, HDP_JOB_THIN

    parser = _Parser(
        prog="bayesclust",
        description=(
            "Probabilistic clustering: fit a model by sampling its posterior and by its "
            "hard (small-variance) limit, and compare."
        ),
    )
    parser.add_argument("--version", action="version", version=f"bayesclust {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    fit = sub.add_parser(
        "fit",
        help="cluster a data file and write one label per row",
        description="Cluster the rows of a CSV/TSV (header optional) or .npy file.",
    )
    fit.add_argument("data", help="data file: .csv, .tsv or .npy, one row per point")
    fit.add_argument("--method", choices=["dpmeans"], default="dpmeans",
                     help="clustering method (default: dpmeans)")
    fit.add_argument("--lam", type=float, help="DP-means penalty per cluster (a squared distance)")
    fit.add_argument("--n-clusters", dest="n_clusters", type=int,
                     help="desired number of clusters; lam from the farthest-first heuristic")
    fit.add_argument("--max-iter", type=int, default=100, help="maximum iterations (default 100)")
    fit.add_argument("--out", help="labels file (default: DATA.labels.csv, e.g. data.csv.labels.csv)")
    fit.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    fit.set_defaults(func=_cmd_fit)

    cmp_ = sub.add_parser(
        "compare",
        help="the main job: a model by sampling and by its hard limit, JSON + figure",
        description=(
            "Fit the DP Gaussian mixture by its hard limit (DP-means) and by Gibbs sampling, "
            "next to the k-means peer; print the comparison table and write compare.json and "
            "compare.png (data coloured by each solution, co-clustering matrix, k trace as the "
            "chains' median and 10-90% band, the limit path annealed onto the hard limit) to "
            "--out, each written whole (a temporary file renamed).  --model hdp and --model dc run the same kind of "
            "job for the HDP mixture (compare_hdp.*) and discriminative clustering (compare_dc.*), "
            "--model aspect for the DP mixture of multinomials on an ensemble's co-association "
            "rows and KL-means (compare_aspect.*); "
            "--model consensus compares consensus methods on one ensemble (compare_consensus.*); "
            "--model did compares the dissimilarity-increments methods with the DP mixture's "
            "posterior of k (compare_did.*); --model temporal finds the states of a time-ordered "
            "sequence by evidence accumulation before and after genetic-algorithm denoising "
            "(compare_temporal.*)."
        ),
    )
    cmp_.add_argument("--model", default="dp", choices=["dp", "hdp", "dc", "aspect", "consensus", "did", "temporal"],
                      help="dp: DP mixture vs DP-means; hdp: HDP mixture of grouped data vs hard "
                           "HDP, on hdp-groups; dc: discriminative clustering (NUTS, CG / SA MAP, "
                           "sDC, HardDC and its sampler) vs k-means, MoG, MDA2 on held-out data; "
                           "aspect: the DP mixture of multinomials on a k-means ensemble's "
                           "co-association rows vs KL-means, PEnCA the peer; consensus: a k-means "
                           "ensemble's sparse co-association by PEnCA, EAC linkage and MM; did: "
                           "GMD, GMDID, SL-DID, k-means, single / average link and the DP "
                           "mixture's posterior of k on iris, wine-norm, biopsy or crabs; "
                           "temporal: state detection of a time-ordered sequence (temporal-ds1, "
                           "temporal-ds2 or a file) before and after GA denoising (default: dp)")
    cmp_.add_argument("--data", default=None,
                      help=f"built-in data set ({', '.join(DATASETS)}) or a CSV/TSV/NPY file "
                           "(default: three-gaussians; hdp-groups for --model hdp; dc-toy for "
                           "--model dc, which needs a labelled built-in set; iris for --model "
                           "aspect, --model consensus and --model did; temporal-ds2 for --model temporal)")
    cmp_.add_argument("--labels", default=None, metavar="COLUMN|FILE",
                      help="true labels of a data file (--model dp, aspect, dc, consensus and "
                           "did; needed by the last three with a file): a column of the CSV (its "
                           "header name or 0-based index; removed from the features) or a file "
                           "with one label per row; NMI / ARI to them are reported (dc: the "
                           "auxiliary classes; consensus, did: their number is K)")
    cmp_.add_argument("--n-clusters", dest="n_clusters", type=int, default=None,
                      help="clusters for farthest-first lambda and k-means; prototypes for "
                           "--model dc; KL-means' and PEnCA's clusters for --model aspect "
                           "(default: number of true classes; 6 on dc-toy)")
    cmp_.add_argument("--lam", type=float, default=None,
                      help="DP-means penalty (overrides --n-clusters)")
    cmp_.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    cmp_.add_argument("--num-warmup", type=int, default=None,
                      help=f"warm-up sweeps (dp: {_DP.num_warmup}, hdp: {_HDP.num_warmup}, dc: 200, "
                           "aspect: 100)")
    cmp_.add_argument("--num-samples", type=int, default=None,
                      help=f"draws kept per chain (dp: {_DP.num_samples}, hdp: {_HDP.num_samples}, "
                           "dc: 200, aspect: 100)")
    cmp_.add_argument("--num-chains", type=int, default=None,
                      help=f"chains (dp: {_DP.num_chains}, hdp: {_HDP.num_chains}, dc: 2, aspect: 4)")
    cmp_.add_argument("--thin", type=int, default=None,
                      help=f"Gibbs sweeps per kept draw (dp: {DP_JOB_THIN}, hdp: {HDP_JOB_THIN})")
    cmp_.add_argument("--out", "--out-dir", dest="out_dir", default="results",
                      help="output folder (default: results)")
    cmp_.add_argument("--no-plot", action="store_true", help="skip the figure")
    cmp_.add_argument("--no-progress", action="store_true", help="no progress bar")
    cmp_.set_defaults(func=_cmd_compare)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesclust`` console script."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return args.func(args)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError, OSError, ImportError, RuntimeError) as exc:
        message = " ".join(str(exc).split())
        print(f"bayesclust: error: {message}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
