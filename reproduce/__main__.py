"""``python -m reproduce [--paper NAME ...] [--quick] [--render]``.

Runs every paper module (or the named ones), stores their rows in ``reproduce/results.jsonl``
-- the other modules' stored rows are kept, so one paper can be re-run alone -- and renders
``REPRODUCTION.md``.  ``--quick`` runs each row on a few seeds (a smoke run; the report marks
it).  ``--render`` only re-renders the report from the stored rows.  The README's "Reproduced numbers"
section gets the per-paper summary.
"""

from __future__ import annotations

import argparse
import importlib

from reproduce import MODULES
from reproduce import _common as c


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m reproduce", description=__doc__.split("\n\n")[1])
    p.add_argument("--paper", action="append", choices=MODULES, metavar="NAME",
                   help=f"run only this paper module (repeatable); one of {', '.join(MODULES)}")
    p.add_argument("--quick", action="store_true", help="few seeds per row (smoke run)")
    p.add_argument("--render", action="store_true", help="only re-render REPRODUCTION.md")
    a = p.parse_args(argv)
    names = a.paper or list(MODULES)
    if not a.render:
        for name in names:
            mod = importlib.import_module(f"reproduce.{name}")
            print(f"== {name}: {mod.PAPER}", flush=True)
            new = c.timed_rows(name, mod.PAPER, mod.rows, a.quick)
            with c.locked():  # after each paper: a later crash keeps this one
                c.write(c.merge(new, [name]))
    info = []
    for name in MODULES:
        mod = importlib.import_module(f"reproduce.{name}")
        info.append((name, mod.PAPER, mod.DESCRIPTION))
    order = {n: i for i, n in enumerate(MODULES)}
    rows = sorted(c.stored_rows(), key=lambda r: order.get(r["module"], len(order)))
    c.REPORT.write_text(c.render(rows, info))
    c.update_readme(rows, info)
    print(f"wrote {c.REPORT} ({sum(r['ok'] for r in rows)} of {len(rows)} rows within tolerance)")


if __name__ == "__main__":
    main()
