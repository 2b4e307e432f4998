"""The bayesclust command: fit, compare, help, and one-line errors with exit status 2."""

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bayesclust import _native
from bayesclust.cli import main
from bayesclust.jobs._common import write_outputs


@pytest.fixture
def blobs_csv(tmp_path):
    rng = np.random.default_rng(0)
    # 30 x 2: the shape bucket (32 rows) of the other fit tests' data, one compiled program.
    X = np.concatenate([rng.normal(0, 0.3, (15, 2)), rng.normal(5, 0.3, (15, 2))])
    path = tmp_path / "blobs.csv"
    np.savetxt(path, X, delimiter=",", header="a,b", comments="")
    return path, X


def test_fit_csv_with_n_clusters_writes_labels_and_summary(blobs_csv, capsys):
    path, X = blobs_csv
    out = path.parent / "labels.txt"
    assert main(["fit", str(path), "--n-clusters", "2", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    labels = np.loadtxt(out, dtype=int)
    assert summary["n_clusters"] == 2 and summary["n_samples"] == 30
    assert len(labels) == 30 and len(set(labels[:15])) == 1 and labels[0] != labels[-1]


def test_fit_npy_with_lam(tmp_path, capsys):
    X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    path = tmp_path / "x.npy"
    np.save(path, X)
    assert main(["fit", str(path), "--lam", "1.0"]) == 0
    assert "2 clusters" in capsys.readouterr().out
    assert np.loadtxt(tmp_path / "x.npy.labels.csv", dtype=int).tolist() == [0, 0, 1, 1]


def test_fit_of_data_csv_and_data_npy_write_different_labels_files(tmp_path, capsys):
    X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    np.save(tmp_path / "data.npy", X)
    np.savetxt(tmp_path / "data.csv", X[::-1], delimiter=",")
    assert main(["fit", str(tmp_path / "data.npy"), "--lam", "1.0"]) == 0
    assert main(["fit", str(tmp_path / "data.csv"), "--lam", "1.0"]) == 0
    from_npy = np.loadtxt(tmp_path / "data.npy.labels.csv", dtype=int).tolist()
    from_csv = np.loadtxt(tmp_path / "data.csv.labels.csv", dtype=int).tolist()
    for labels in (from_npy, from_csv):  # each file holds its own run's 4 labels
        assert len(labels) == 4 and labels[0] == labels[1] != labels[2] == labels[3]
    assert (tmp_path / "data.npy.labels.csv").stat().st_mtime_ns <= (
        tmp_path / "data.csv.labels.csv").stat().st_mtime_ns


@pytest.mark.parametrize("content, n_rows", [
    ("a,b\n1,2\n3,4\n", 2),       # a header: no field is a number
    ("x, y\n1,2\n", 1),
    ("1,2\n3,4\n", 2),             # no header
    ("1\n2\n3\n", 3),             # one value per line: one column
])
def test_fit_reads_a_header_only_when_no_field_is_a_number(tmp_path, capsys, content, n_rows):
    path = tmp_path / "d.csv"
    path.write_text(content)
    assert main(["fit", str(path), "--lam", "1.0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_samples"] == n_rows


@pytest.mark.parametrize(
    "content,args,match",
    [
        (None, ["--n-clusters", "2"], "does not exist"),
        ("1,2\n3\n", ["--n-clusters", "1"], "malformed"),
        ("1,2\nnan,4\n", ["--n-clusters", "1"], "contains NaN"),
        ("1,2\n3,4\n", ["--lam", "-1"], "--lam must be a positive"),
        ("1,2\n3,4\n", ["--n-clusters", "5"], "--n-clusters must be <="),
        ("1,2\n3,4\n", [], "exactly one of --lam and --n-clusters"),
        ("1,2\n3,4\n", ["--lam", "abc"], "invalid float value"),
        ("", ["--n-clusters", "1"], "no data"),
        # a typo in the first row is an error, not a header
        ("1,2a\n3,4\n5,6\n", ["--n-clusters", "1"], "line 1 has a field '2a' that is not a number"),
        ("x,y\n1,2\n3,oops\n", ["--n-clusters", "1"], "line 3 has a field 'oops'"),
        ("1,2\n\n3,4,5\n", ["--n-clusters", "1"], "line 3 has 3 fields, the rows above have 2"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, args, match):
    path = tmp_path / "data.csv"
    if content is not None:
        path.write_text(content)
    assert main(["fit", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert match in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_one_dimensional_npy_is_refused(tmp_path, capsys):
    """As the README says: a 1-D array is not a matrix of rows (scikit-learn refuses it too)."""
    path = tmp_path / "x.npy"
    np.save(path, np.arange(5.0))
    assert main(["fit", str(path), "--n-clusters", "1"]) == 2
    err = capsys.readouterr().err
    assert "1-D array of shape (5,)" in err and "reshape(-1, 1)" in err and err.count("\n") == 1


@pytest.mark.parametrize("command", [["fit", "DATA", "--lam", "1.0", "--out", "BLOCKED/labels.csv"],
                                     ["compare", "--out", "BLOCKED/results"]])
def test_an_unwritable_out_is_reported_before_any_work(tmp_path, capsys, monkeypatch, command):
    data = tmp_path / "d.csv"
    data.write_text("1,2\n3,4\n")
    blocked = tmp_path / "a_file"
    blocked.write_text("")  # a file where a folder is needed
    import bayesclust.jobs as jobs

    monkeypatch.setattr(jobs, "run_compare", lambda **kw: pytest.fail("the job ran"))
    argv = [a.replace("DATA", str(data)).replace("BLOCKED", str(blocked)) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and err.count("\n") == 1


def test_malformed_npy(tmp_path, capsys):
    path = tmp_path / "bad.npy"
    path.write_bytes(b"not a numpy file")
    assert main(["fit", str(path), "--n-clusters", "1"]) == 2
    assert "not a valid .npy file" in capsys.readouterr().err


def test_compare_writes_json_and_figure(tmp_path, capsys):
    """``bayesclust compare`` as the README's first command and ``make demo`` run it: the
    default job at its real defaults, the one end-to-end run of the CLI at full size (the
    other models' jobs run at their smallest settings below)."""
    import warnings

    from PIL import Image

    from bayesclust import ConvergenceWarning
    from bayesclust.inference.mixtures.convergence import DP_SAMPLER_DEFAULTS
    from bayesclust.jobs import DP_JOB_THIN
    from bayesclust.jobs._common import SETTINGS_KEY

    with warnings.catch_warnings():
        # The default command converges: a warning here is what DP_JOB_THIN was raised to stop.
        warnings.simplefilter("error", ConvergenceWarning)
        assert main(["compare", "--out", str(tmp_path), "--no-progress"]) == 0
    summary = json.loads((tmp_path / "compare.json").read_text())
    gibbs = summary["gibbs"]
    assert (gibbs["num_warmup"], gibbs["num_samples"], gibbs["num_chains"], gibbs["thin"]) == (
        DP_SAMPLER_DEFAULTS.num_warmup, DP_SAMPLER_DEFAULTS.num_samples,
        DP_SAMPLER_DEFAULTS.num_chains, DP_JOB_THIN)
    assert summary["dp_means"]["n_clusters"] == 3
    assert summary["dp_means"]["nmi"] > 0.7
    # The statistical claims of the sampler are tested in test_gibbs.py; here: the job's
    # posterior at full length agrees with the three well-separated classes.
    assert gibbs["k_point"] == 3 and gibbs["rhat_k"] < 1.01
    assert gibbs["point_estimate"]["nmi"] > 0.7
    # The limit path ends on the DP-means partition.
    path = summary["limit_path"]
    assert path["model"] == "dp" and path["hard_name"] == "DP-means"
    assert path["nmi_point_to_hard"][-1] == 1.0 and path["stop"] == "hard"
    rows = {r["method"]: r for r in summary["comparison"]["rows"]}
    assert rows["hard limit (DP-means)"]["objective"] == pytest.approx(
        summary["dp_means"]["objective"], rel=1e-6)
    # Which path ran: the native kernels on this CPU unless switched off.
    assert summary["native_kernels"] is _native.available()
    assert gibbs["kernels"] == ("native" if _native.available() else "xla")
    assert "hard limit (DP-means)" in capsys.readouterr().out
    png = tmp_path / "compare.png"
    assert png.stat().st_size > 10_000
    with Image.open(png) as img:  # the settings the README's figure is checked against
        settings = json.loads(img.text[SETTINGS_KEY])
    assert settings["num_samples"] == DP_SAMPLER_DEFAULTS.num_samples and settings["thin"] == DP_JOB_THIN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.json", "compare.png"]


@pytest.mark.parametrize("native", [
    pytest.param(True, marks=pytest.mark.skipif(
        not _native.available(), reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")),
    False,
])
def test_job_json_records_whether_the_native_kernels_ran(tmp_path, native):
    with contextlib.nullcontext() if native else _native.disabled():
        write_outputs({"data": "x"}, tmp_path, "job")
    summary = json.loads((tmp_path / "job.json").read_text())
    assert summary == {"data": "x", "native_kernels": native}


def test_job_outputs_are_replaced_atomically(tmp_path):
    """A failing figure leaves the previous JSON and figure as they were, and no temporary file."""
    write_outputs({"run": 1}, tmp_path, "job", lambda p: p.write_bytes(b"png 1"))
    assert json.loads((tmp_path / "job.json").read_text())["run"] == 1

    def broken(p):
        p.write_bytes(b"half a png")
        raise RuntimeError("the figure failed")

    with pytest.raises(RuntimeError, match="the figure failed"):
        write_outputs({"run": 2}, tmp_path, "job", broken)
    assert json.loads((tmp_path / "job.json").read_text())["run"] == 1
    assert (tmp_path / "job.png").read_bytes() == b"png 1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.json", "job.png"]
    write_outputs({"run": 3}, tmp_path, "job", lambda p: p.write_bytes(b"png 3"))
    assert (tmp_path / "job.png").read_bytes() == b"png 3"
    # Created as any file would be (the umask's permissions), not private like a temporary file.
    umask = os.umask(0)
    os.umask(umask)
    for name in ("job.json", "job.png"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask
    assert json.loads((tmp_path / "job.json").read_text())["figure"] == str(tmp_path / "job.png")


def test_compare_on_a_file_needs_n_clusters_or_lam(tmp_path, capsys):
    path = tmp_path / "x.csv"
    np.savetxt(path, np.random.default_rng(0).normal(size=(20, 2)), delimiter=",")
    assert main(["compare", "--data", str(path), "--out", str(tmp_path)]) == 2
    assert "give --n-clusters or --lam" in capsys.readouterr().err


def test_console_script_help_documents_every_subcommand(capsys):
    run = subprocess.run(
        [sys.executable, "-m", "bayesclust.cli", "--help"], capture_output=True, text=True, check=True
    )
    for name in ("fit", "compare"):
        assert name in run.stdout
    # The subcommands' help from the same parser, in this process (the console entry point is
    # the subprocess above's).
    for name in ("fit", "compare"):
        with pytest.raises(SystemExit) as exit_:
            main([name, "--help"])
        assert exit_.value.code == 0
        assert "usage: bayesclust " + name in capsys.readouterr().out


def test_console_script_error_has_no_traceback(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "bayesclust.cli", "fit", str(tmp_path / "missing.csv"), "--n-clusters", "2"],
        capture_output=True, text=True,
    )
    assert run.returncode == 2
    assert run.stderr.strip().startswith("bayesclust: error:") and "Traceback" not in run.stderr


def test_compare_hdp_writes_json_and_figure(tmp_path, capsys):
    """``compare --model hdp``: the hard HDP, the sampled HDP and the four peers on the
    grouped synthetic data, scored by per-data-set NMI (KJ §6.3)."""
    from bayesclust import hard_hdp, hard_hdp_penalties
    from bayesclust.datasets import hdp_groups
    from bayesclust.metrics import mean_group_nmi

    # The smallest run (its cost is compiling the job's programs, not running them): the
    # plumbing and the hard side are checked; the sampler's statistics are test_hdp_gibbs.py's.
    args = ["compare", "--model", "hdp", "--out", str(tmp_path), "--num-warmup", "5",
            "--num-samples", "5", "--num-chains", "1", "--thin", "1", "--no-progress"]
    with pytest.warns(Warning):  # so short a run warns (ConvergenceWarning)
        assert main(args) == 0
    summary = json.loads((tmp_path / "compare_hdp.json").read_text())
    rows = {r["method"]: r for r in summary["rows"]}
    # The hard HDP row is the functional core's result, scored independently here.
    groups, labels, _ = hdp_groups(0)
    res = hard_hdp(groups, *hard_hdp_penalties(groups, 5, 15))
    assert rows["hard HDP"]["k"] == res.n_global
    assert rows["hard HDP"]["nmi"] == pytest.approx(mean_group_nmi(labels, res.labels))
    # KJ §6.3's claim, in the same run: the hard HDP beats the pooled peers.
    assert rows["hard HDP"]["nmi"] > rows["kmeans pooled"]["nmi"]
    assert rows["hard HDP"]["nmi"] > rows["DP-means pooled"]["nmi"]
    assert rows["sampled HDP (VI point)"]["nmi"] > 0.7
    assert summary["native_kernels"] is _native.available()  # the hard HDP's assignments
    assert summary["gibbs"]["kernels"] == ("native" if _native.used_on() else "xla")
    # The sampled HDP beside the hard one in compare's report: the hard HDP objective of the
    # hard partition is the result's own (the engine's global-partition objective, at the
    # hard HDP's fixed point), and the limit path anneals onto it.
    both = {r["method"]: r for r in summary["comparison"]["rows"]}
    assert summary["comparison"]["model"] == "hdp"
    assert both["hard limit (hard HDP)"]["k"] == res.n_global
    assert both["hard limit (hard HDP)"]["objective"] == pytest.approx(res.objective, rel=1e-5)
    _check_limit_path(summary["limit_path"], "hdp", "hard HDP", res.objective)
    out = capsys.readouterr().out
    assert "hard HDP" in out and "limit path (hdp" in out
    assert (tmp_path / "compare_hdp.png").stat().st_size > 10_000


@pytest.mark.parametrize("model, extra, match", [
    ("hdp", ["--data", "iris"], "grouped data"),
    ("hdp", ["--n-clusters", "3"], "--n-clusters is an option of --model dp, dc and aspect"),
    ("dp", ["--k", "3"], "unrecognized arguments: --k"),  # no aliases before the first release
    ("consensus", ["--n-clusters", "3"], "--n-clusters is an option of --model dp, dc and aspect"),
    ("consensus", ["--data", "no-such-set"], "no-such-set"),
    ("did", ["--data", "three-gaussians"], "unknown data set"),
    ("did", ["--n-clusters", "3"], "--n-clusters is an option of --model dp, dc and aspect"),
    ("did", ["--num-chains", "0"], "--num-chains must be an integer >= 1"),
    ("dc", ["--data", "hdp-groups"], "needs auxiliary class labels"),
    ("dc", ["--lam", "1.0"], "--lam is an option of --model dp"),
    ("dc", ["--n-clusters", "0"], "--n-clusters must be an integer >= 1"),
    ("dc", ["--n-clusters", "100000"], "--n-clusters must be <="),
])
def test_compare_bad_input_is_one_line_and_exit_2(tmp_path, capsys, model, extra, match):
    assert main(["compare", "--model", model, "--out", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and err.count("\n") == 1


def test_compare_consensus_writes_json_and_figure(tmp_path, capsys):
    """``compare --model consensus``: one k-means ensemble of iris, every consensus method
    scored by the consistency index; PEnCA near the paper's .920 and above MM."""
    assert main(["compare", "--model", "consensus", "--out", str(tmp_path), "--no-progress"]) == 0
    report = capsys.readouterr().out
    summary = json.loads((tmp_path / "compare_consensus.json").read_text())
    rows = {r["method"]: r for r in summary["rows"]}
    assert "PEnCA (EM)" in rows and "MM (EM)" in rows and "PEnCA (EM)" in report
    assert rows["PEnCA (EM)"]["k"] == 3
    assert rows["PEnCA (EM)"]["ci"] == pytest.approx(0.92, abs=0.05)  # PEnCA Table 1, iris
    assert rows["PEnCA (EM)"]["ci"] > rows["MM (EM)"]["ci"]  # paper: .920 vs .693
    for r in summary["rows"]:
        assert 0.0 <= r["ci"] <= 1.0
        assert len(r["indices"]) == 11 and all(np.isfinite(v) or k.startswith("DB") for k, v in r["indices"].items())
    # which consensus to trust: every index chooses at K and at 2..2K; at K on iris the
    # likelihood and ACC choose average link (validation paper, Table 1)
    chosen = {(c["index"], c["candidates"]): c for c in summary["selection"]["chosen"]}
    assert len(chosen) == 22
    for name in ("ACC", "L_s"):
        assert chosen[(name, "K")]["method"] == "average" and chosen[(name, "K")]["ci"] >= 0.85
    assert "validity indices" in report and "which consensus each index selects" in report
    # soft memberships: a mean normalised entropy per true class, for PPC and PEnCA
    assert set(summary["entropy_by_class"]) == {"PPC", "PEnCA"}
    for by_class in summary["entropy_by_class"].values():
        assert len(by_class) == 3 and all(0.0 <= v <= 1.0 for v in by_class.values())
    assert "PPC (Baum-Eagon)" in rows
    assert (tmp_path / "compare_consensus.png").stat().st_size > 10_000




def test_compare_did_writes_json_and_figure(tmp_path, capsys):
    """``compare --model did`` on iris: GMD, GMDID, SL-DID and the peers at K scored by CI, and
    the DP mixture's posterior of k beside them; GMDID near the DID paper's 98.00 % with 3.

    Iris comes as a user's file with its species column (``--labels``): the same data and
    shapes as the built-in set, so the same compiled programs, and the file path end to end."""
    from bayesclust import datasets

    X, y = datasets.load_iris()
    path = tmp_path / "iris.csv"
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    path.write_text("a,b,species,c,d\n" + "".join(
        f"{r[0]!r},{r[1]!r},{s},{r[2]!r},{r[3]!r}\n" for r, s in zip(X.tolist(), names)))
    with pytest.warns(Warning):  # the smallest sampler run warns (ConvergenceWarning)
        assert main(["compare", "--model", "did", "--data", str(path), "--labels", "species",
                     "--out", str(tmp_path), "--no-progress",
                     "--num-warmup", "5", "--num-samples", "5", "--num-chains", "1", "--thin", "1"]) == 0
    report = capsys.readouterr().out
    summary = json.loads((tmp_path / "compare_did.json").read_text())
    assert summary["n_features"] == 4 and summary["n_true_classes"] == 3
    assert summary["paper_table3"] is None  # a file is not the paper's data set
    rows = {r["method"]: r for r in summary["rows"]}
    assert set(rows) >= {"GMD (Figueiredo & Jain)", "GMDID (MDL)", "SL-DID", "k-means, K",
                         "single link, K", "average link, K"}
    assert rows["GMDID (MDL)"]["k"] == 3 and rows["GMDID (MDL)"]["ci"] >= 0.9
    assert rows["GMDID (MDL)"]["ci"] >= rows["GMD (Figueiredo & Jain)"]["ci"]
    assert rows["single link, K"]["ci"] == pytest.approx(0.68)  # the DID paper's Table 4
    k = summary["dp_posterior_k"]
    assert sum(k["distribution"].values()) == pytest.approx(1.0)
    assert k["interval_90"][0] <= k["mode"] <= k["interval_90"][1]
    assert "posterior of k" in report
    assert (tmp_path / "compare_did.png").stat().st_size > 10_000


def _check_limit_path(path, model, hard_name, hard_objective):
    """What every job's limit path records: its own names, a decreasing temperature, a stop."""
    assert path["model"] == model and path["hard_name"] == hard_name
    assert path["hard_objective"] == pytest.approx(hard_objective, rel=1e-6)
    assert np.all(np.diff(path["temperature"]) < 0)
    assert path["stop"] in ("hard", "lower_objective", "floor", "grid")
    for low, median, high in zip(path["k_low"], path["k_median"], path["k_high"]):
        assert low <= median <= high
    if path["stop"] == "hard":
        assert path["nmi_point_to_hard"][-1] == 1.0
    if path["stop"] == "lower_objective":
        assert path["objective_point"][-1] < path["hard_objective"] and path["lower_objective_found"]


def test_compare_aspect_writes_json_and_figure(tmp_path, capsys):
    """``compare --model aspect``: KL-means and the DP mixture of multinomials on iris's
    k-means co-association, both sides of compare's report and the limit path."""
    from bayesclust import KLMeansConsensus, datasets, kmeans_ensemble
    from bayesclust.metrics import kl_means_objective, nmi

    args = ["compare", "--model", "aspect", "--out", str(tmp_path), "--num-warmup", "5",
            "--num-samples", "5", "--num-chains", "1", "--no-progress"]
    assert main(args) == 0
    report = capsys.readouterr().out
    summary = json.loads((tmp_path / "compare_aspect.json").read_text())
    rows = {r["method"]: r for r in summary["comparison"]["rows"]}
    assert summary["comparison"]["model"] == "aspect" and "hard limit (KL-means)" in rows
    # The hard side is KLMeansConsensus on the job's ensemble, rescored independently here.
    X, y = datasets.load_iris()
    ensemble = kmeans_ensemble(0, X, 150).labels
    hard = KLMeansConsensus(3, random_state=0).fit(ensemble=ensemble)
    assert rows["hard limit (KL-means)"]["k"] == hard.n_clusters_
    assert rows["hard limit (KL-means)"]["nmi_truth"] == pytest.approx(nmi(y, hard.labels_))
    assert rows["hard limit (KL-means)"]["objective"] == pytest.approx(
        kl_means_objective(hard.coassociation_, hard.labels_, hard.lam_), rel=1e-9)
    assert summary["kl_means"]["lam"] == pytest.approx(hard.lam_)
    _check_limit_path(summary["limit_path"], "aspect", "KL-means",
                      rows["hard limit (KL-means)"]["objective"])
    assert "hard limit (KL-means)" in report and "limit path (aspect" in report
    assert (tmp_path / "compare_aspect.png").stat().st_size > 10_000


class _Stop(Exception):
    """Raised by a stub where a job's fitting would start."""


def test_consensus_and_dc_jobs_read_a_files_classes(tmp_path, monkeypatch):
    """``--labels`` reaches the consensus and dc jobs: the features without the label column,
    the classes as K (consensus) or as the auxiliary data (dc); stopped where fitting starts."""
    import bayesclust.jobs.consensus as consensus_job
    import bayesclust.jobs.dc as dc_job

    path = tmp_path / "d.csv"
    path.write_text("a,b,c\n1,2,x\n1.5,2,x\n8,9,y\n8.5,9,z\n")
    seen = {}

    def ensemble_stub(seed, X, n_partitions):
        seen["X"] = X
        raise _Stop

    def split_stub(key, classes, fraction):
        seen["classes"] = classes
        raise _Stop

    monkeypatch.setattr(consensus_job, "kmeans_ensemble", ensemble_stub)
    monkeypatch.setattr(dc_job, "stratified_split", split_stub)
    with pytest.raises(_Stop):
        main(["compare", "--model", "consensus", "--data", str(path), "--labels", "c", "--out", str(tmp_path)])
    np.testing.assert_array_equal(seen["X"], [[1, 2], [1.5, 2], [8, 9], [8.5, 9]])
    with pytest.raises(_Stop):
        main(["compare", "--model", "dc", "--data", str(path), "--labels", "2", "--out", str(tmp_path)])
    np.testing.assert_array_equal(seen["classes"], [0, 0, 1, 2])


def test_compare_aspect_on_a_file_needs_n_clusters(tmp_path, capsys):
    path = tmp_path / "x.csv"
    np.savetxt(path, np.random.default_rng(0).normal(size=(20, 2)), delimiter=",")
    assert main(["compare", "--model", "aspect", "--data", str(path), "--out", str(tmp_path)]) == 2
    assert "give --n-clusters" in capsys.readouterr().err



# -- checked before any work, named as the user typed it -------------------------------------------

def test_version_is_the_package_version(capsys):
    from importlib.metadata import version

    import bayesclust

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"bayesclust {bayesclust.__version__}"
    assert bayesclust.__version__ == version("bayesclust")


@pytest.fixture
def no_fitting(monkeypatch):
    """Any fit or compare job fails the test: the error must come before the work."""
    import bayesclust.inference.hard.dp_means as dpm_module
    import bayesclust.jobs.dp as dp_job

    monkeypatch.setattr(dpm_module, "dp_means", lambda *a, **k: pytest.fail("dp_means ran"))
    monkeypatch.setattr(dp_job, "run_compare_dp", lambda *a, **k: pytest.fail("the job ran"))


@pytest.mark.parametrize("argv, match, internal", [
    # an existing folder where the labels file is expected (was: [Errno 21] after the fit)
    (["fit", "DATA", "--lam", "1", "--out", "TMP"], "--out 'TMP' is a folder; give a file name", "Errno"),
    (["fit", "DATA", "--lam", "1", "--out", "DATA/x.csv"], "is a file, not a folder", "Errno"),
    (["fit", "CONST", "--n-clusters", "1"], "--n-clusters 1: CONST has 1 distinct row(s)", "lam must"),
    (["fit", "CONST", "--n-clusters", "1"], "give --lam", "0.0"),
    (["fit", "DATA", "--lam", "1", "--max-iter", "0"], "--max-iter must be an integer >= 1", "max_iter"),
    (["fit", "DATA", "--n-clusters", "0"], "--n-clusters must be an integer >= 1", "n_clusters"),
    (["fit", "DATA", "--lam", "inf"], "--lam must be a positive finite number", "lam must"),
    (["compare", "--seed", "-1", "--out", "TMP/new"], "--seed must be an integer >= 0", "random_state"),
    (["compare", "--num-samples", "0", "--out", "TMP/new"], "--num-samples must be", "num_samples"),
    (["compare", "--thin", "0", "--out", "TMP/new"], "--thin must be", "thin must"),
    (["compare", "--out", "DATA"], "is a file, not a folder", "Errno"),
    (["compare", "--data", "DATA", "--out", "TMP/new"], "give --n-clusters or --lam (or --labels", "n_clusters"),
    (["compare", "--data", "DATA", "--labels", "nope", "--out", "TMP/new"],
     "--labels 'nope' is neither a file nor a column of", "KeyError"),
    (["compare", "--data", "DATA", "--labels", "7", "--out", "TMP/new"], "column index out of range", "Index"),
    (["compare", "--data", "iris", "--labels", "c", "--out", "TMP/new"], "--labels is for a data file", "labels_true"),
    (["compare", "--model", "hdp", "--labels", "c", "--out", "TMP/new"], "--labels is an option of", "labels_true"),
    (["compare", "--model", "temporal", "--data", "DATA", "--labels", "c", "--out", "TMP/new"],
     "--labels is an option of --model dp, aspect, dc, consensus, did", "labels_true"),
    (["compare", "--model", "consensus", "--data", "DATA", "--out", "TMP/new"],
     "--model consensus scores against the true classes: give --labels", "KeyError"),
    (["compare", "--model", "did", "--data", "DATA", "--out", "TMP/new"],
     "--model did scores against the true classes: give --labels", "KeyError"),
    (["compare", "--model", "did", "--data", "DATA", "--labels", "nope", "--out", "TMP/new"],
     "--labels 'nope' is neither a file nor a column of", "KeyError"),
    (["compare", "--model", "dc", "--data", "DATA", "--out", "TMP/new"],
     "needs auxiliary class labels", "KeyError"),
    (["compare", "--model", "dc", "--data", "DATA", "--labels", "7", "--out", "TMP/new"],
     "column index out of range", "Index"),
    (["compare", "--model", "consensus", "--data", "iris", "--labels", "c", "--out", "TMP/new"],
     "--labels is for a data file", "labels_true"),
    (["compare", "--model", "temporal", "--data", "CONST", "--out", "TMP/new"],
     "needs a sequence of at least 20 time-ordered rows", "window ("),
])
def test_arguments_and_outputs_are_checked_before_any_work(tmp_path, capsys, no_fitting, argv, match,
                                                          internal):
    """One line naming the user's argument, exit 2, nothing fitted and nothing created."""
    data, const = tmp_path / "d.csv", tmp_path / "const.csv"
    data.write_text("a,b,c\n1,2,0\n1.5,2,0\n8,9,1\n8.5,9,1\n")
    const.write_text("1,1\n1,1\n1,1\n")
    before = sorted(tmp_path.iterdir())

    def sub(a):
        return a.replace("DATA", str(data)).replace("CONST", str(const)).replace("TMP", str(tmp_path))

    assert main([sub(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert sub(match) in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and internal not in err.replace(sub(match), "")
    assert sorted(tmp_path.iterdir()) == before  # no output folder, no labels file


def test_labels_from_a_column_or_a_file(tmp_path):
    from bayesclust.jobs._common import load_data

    rows = [(0.0, 1.0, "setosa"), (0.1, 1.1, "setosa"), (5.0, 6.0, "virginica"), (5.1, 6.2, "virginica")]
    csv = tmp_path / "d.csv"
    csv.write_text("x,y,species\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    X, y = load_data(str(csv), 0, "species")
    np.testing.assert_array_equal(X, [[0.0, 1.0], [0.1, 1.1], [5.0, 6.0], [5.1, 6.2]])
    np.testing.assert_array_equal(y, [0, 0, 1, 1])
    X2, y2 = load_data(str(csv), 0, "2")  # the same column by its index
    np.testing.assert_array_equal(X2, X) and np.testing.assert_array_equal(y2, y)
    # a file with one label per row; the data keep all their columns
    npy, labels = tmp_path / "d.npy", tmp_path / "truth.txt"
    np.save(npy, X)
    labels.write_text("b\nb\na\nc\n")
    X3, y3 = load_data(str(npy), 0, str(labels))
    np.testing.assert_array_equal(X3, X)
    np.testing.assert_array_equal(y3, [1, 1, 0, 2])
    labels.write_text("b\nb\na\n")
    with pytest.raises(ValueError, match="holds 3 labels .* have 4 rows"):
        load_data(str(npy), 0, str(labels))


def test_compare_reports_nmi_to_the_given_labels(tmp_path, capsys):
    """``--labels`` makes a user's file as scored as a built-in set: NMI / ARI to the truth."""
    from bayesclust import dp_means, farthest_first_lambda, metrics

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 0.3, (20, 2)), rng.normal(4, 0.3, (20, 2))])
    truth = np.repeat(["left", "right"], 20)
    path = tmp_path / "d.csv"
    path.write_text("u,v,class\n" + "".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, truth)))
    args = ["compare", "--data", str(path), "--labels", "class", "--out", str(tmp_path / "out"),
            "--num-warmup", "20", "--num-samples", "20", "--num-chains", "2", "--no-plot", "--no-progress"]
    with pytest.warns(Warning):  # so short a run warns (ConvergenceWarning)
        assert main(args) == 0
    summary = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert summary["n_features"] == 2 and summary["n_true_classes"] == 2
    expected = dp_means(X, farthest_first_lambda(X, 2))  # k from the two given classes
    y = (truth == "right").astype(int)
    assert summary["dp_means"]["nmi"] == pytest.approx(metrics.nmi(y, expected.labels))
    assert summary["dp_means"]["ari"] == pytest.approx(metrics.ari(y, expected.labels))
    assert "2 true classes" in capsys.readouterr().out


# -- outputs: replaced whole, never truncated ------------------------------------------------------

_SLOW_WRITER = r"""
import sys, time
import numpy as np

def slow_savetxt(fname, labels, fmt="%d"):
    # The CLI's own write path, slowed down: one label per line, flushed, so the process can
    # be killed in the middle of the file.
    with open(fname, "w") as fh:
        for v in np.asarray(labels).tolist() * 400:
            fh.write(f"{v}\n")
            fh.flush()
            time.sleep(1e-4)

np.savetxt = slow_savetxt
from bayesclust.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_fit_killed_while_writing_leaves_the_old_labels_file_intact(tmp_path):
    """SIGKILL in the middle of writing the labels: the old file is whole (the new one is
    written under another name and renamed onto it only once complete)."""
    import signal
    import time

    data = tmp_path / "d.csv"
    data.write_text("0,0\n0.1,0\n5,5\n5.1,5\n")
    out = tmp_path / "labels.csv"
    out.write_text("old\n" * 10)
    script = tmp_path / "slow.py"
    script.write_text(_SLOW_WRITER)
    proc = subprocess.Popen([sys.executable, str(script), "fit", str(data), "--lam", "1",
                             "--out", str(out)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    partial = []
    while time.monotonic() < deadline and proc.poll() is None:
        partial = [p for p in tmp_path.iterdir() if p.name.startswith(".labels.") and p.stat().st_size > 100]
        if partial:
            break
        time.sleep(0.02)
    assert partial, f"the writer never started: {proc.poll()}, {proc.stderr.read() if proc.poll() else ''}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert out.read_text() == "old\n" * 10  # intact, not truncated or half-new
    # Unkilled, the same write (in this process: one interpreter start less) replaces it whole.
    assert main(["fit", str(data), "--lam", "1", "--out", str(out)]) == 0
    assert out.read_text() == "0\n0\n1\n1\n"


def test_fit_overwrites_its_labels_file_by_rename(tmp_path, monkeypatch, capsys):
    """A failed write keeps the previous labels and leaves no temporary file."""
    from pathlib import Path

    data = tmp_path / "d.csv"
    data.write_text("0,0\n0.1,0\n5,5\n5.1,5\n")
    out = tmp_path / "labels.csv"
    assert main(["fit", str(data), "--lam", "1", "--out", str(out)]) == 0
    assert out.read_text() == "0\n0\n1\n1\n"

    def broken(fname, *a, **k):
        Path(fname).write_text("0\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savetxt", broken)
    assert main(["fit", str(data), "--lam", "1", "--out", str(out)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text() == "0\n0\n1\n1\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "d.csv", "labels.csv"]


# -- the figure of the README is the demo's ---------------------------------------------------------

def test_docs_figure_was_drawn_with_the_demo_settings():
    """``docs/compare.png`` records the settings of the run that drew it (a PNG text chunk written
    by the job); they are ``bayesclust compare``'s defaults, which ``make demo`` runs."""
    from pathlib import Path

    from PIL import Image

    from bayesclust.cli import build_parser
    from bayesclust.inference.mixtures.convergence import DP_SAMPLER_DEFAULTS
    from bayesclust.jobs import DP_JOB_THIN, MODELS
    from bayesclust.jobs._common import SETTINGS_KEY

    png = Path(__file__).resolve().parents[1] / "docs" / "compare.png"
    with Image.open(png) as img:
        text = img.text
    assert SETTINGS_KEY in text, "docs/compare.png has no settings: regenerate it with `make figure`"
    settings = json.loads(text[SETTINGS_KEY])
    args = build_parser().parse_args(["compare"])
    assert settings == {
        "command": "bayesclust compare", "model": args.model, "data": MODELS[args.model][2],
        "seed": args.seed, "n_clusters": args.n_clusters, "lam": args.lam,
        "num_warmup": DP_SAMPLER_DEFAULTS.num_warmup, "num_samples": DP_SAMPLER_DEFAULTS.num_samples,
        "num_chains": DP_SAMPLER_DEFAULTS.num_chains, "thin": DP_JOB_THIN,
    }


def test_job_figure_records_its_settings(tmp_path):
    import matplotlib.pyplot as plt
    from PIL import Image

    from bayesclust.jobs._common import SETTINGS_KEY, save_figure

    save_figure(plt.figure(), tmp_path / "f.png", settings={"num_chains": 8, "seed": 0})
    with Image.open(tmp_path / "f.png") as img:
        assert json.loads(img.text[SETTINGS_KEY]) == {"num_chains": 8, "seed": 0}


# -- ties: objectives within float tolerance are equal ---------------------------------------------

def _path(hard_objective, best_objective):
    from types import SimpleNamespace

    from bayesclust.comparison.path import LimitPath

    one = np.array([1.0])
    labels = np.array([0, 0, 1, 1])
    return LimitPath("dp", "sigma2", one, 1.0, one, one, one, 2 * one, 2 * one, 2 * one, 2 * one,
                     np.array([hard_objective]), np.array([best_objective]), hard_objective,
                     SimpleNamespace(labels=labels), labels, np.array([0, 1, 1, 1]), "hard", "DP-means")


@pytest.mark.parametrize("best, finding", [(35.334, False), (35.335 * (1 - 9e-5), False),
                                           (35.335 * (1 - 2e-4), True), (30.0, True)])
def test_a_lower_objective_within_rounding_is_a_tie_not_a_finding(best, finding):
    """35.334 against DP-means' 35.335 (2.8e-5 relative) is below what a float32 sampler
    resolves: no "finding" line, ``lower_objective`` False; a real gap stays a finding."""
    from bayesclust.jobs._common import path_report, path_summary

    path = _path(35.335, best)
    assert path.lower_objective is finding
    assert ("finding:" in path_report(path)) is finding
    assert path_summary(path)["lower_objective_found"] is finding


@pytest.mark.parametrize("a, b, order", [(35.334, 35.335, "equal"), (35.335, 35.334, "equal"),
                                         (35.0, 35.335, "lower"), (36.0, 35.335, "higher"),
                                         (0.0, 0.0, "equal"), (None, 1.0, None)])
def test_objective_order_has_a_relative_tolerance(a, b, order):
    from bayesclust.comparison.report import objective_order

    assert objective_order(a, b) == order
