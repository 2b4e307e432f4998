"""Execute the notebooks in full and store them with their outputs (``make notebooks``).

Each notebook runs top to bottom on the ``python3`` kernel with ``BAYESCLUST_SMOKE`` unset, in
the notebooks folder, and is written back in place.  Outputs that would name this machine
(absolute paths of the interpreter or the home directory) fail the run rather than being
stored; paths inside the checkout or the installed packages are stored relative to them.

Usage: ``python notebooks/execute.py [NAME.ipynb ...]`` (default: every notebook).
"""

import os
import sys
import sysconfig
import time
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def machine_paths() -> list[str]:
    """Strings that must not appear in a stored output."""
    paths = {str(ROOT), str(Path.home()), sys.prefix, sys.base_prefix}
    return sorted(p for p in paths if p not in ("", "/"))


#: tqdm's notice, on importing tqdm.auto (NumPyro does), that the kernel has no ipywidgets: it
#: says what the executing machine's Jupyter lacks (`make notebooks` runs nbclient without a
#: front end), nothing about the notebook, and a reader's Jupyter (the `lab` extra) has them.
FRONT_END_NOTICE = "TqdmWarning: IProgress not found"


def drop_front_end_notice(nb) -> None:
    """Remove the stderr outputs that hold only :data:`FRONT_END_NOTICE` (in place)."""
    for cell in nb.cells:
        if "outputs" in cell:
            cell.outputs = [
                out for out in cell.outputs
                if not (out.get("output_type") == "stream" and out.get("name") == "stderr"
                        and FRONT_END_NOTICE in out.get("text", "")
                        and len(out.get("text", "").strip().splitlines()) <= 2)
            ]


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    os.environ.pop("BAYESCLUST_SMOKE", None)  # the kernel inherits this process's environment
    start = time.perf_counter()
    nbclient.NotebookClient(
        nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    seconds = time.perf_counter() - start
    drop_front_end_notice(nb)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                print(f"{path.name} stderr: {out['text'][:2000]}", file=sys.stderr)
    # Warnings name the file that raised them: shown relative to the checkout or to the
    # installed packages' folder.
    text = nbformat.writes(nb)
    for folder in (str(ROOT), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        text = text.replace(folder + os.sep, "")
    leaks = [p for p in machine_paths() if p in text]
    if leaks:
        at = text.index(leaks[0])
        raise SystemExit(f"{path.name}: an output names {leaks[0]} ({text[max(0, at - 300):at + 200]!r}); not stored")
    path.write_text(text)
    return seconds


def main(names: list[str]) -> None:
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        seconds = execute(path)
        size = path.stat().st_size / 1e3
        print(f"{path.name}: executed in {seconds:.0f} s, {size:.0f} kB stored", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
