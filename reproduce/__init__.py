"""Reproductions of the seed papers' numbers (``make reproduce``; ``python -m reproduce``).

One module per paper; each has ``PAPER`` (author, year), ``DESCRIPTION`` and ``rows(quick)``,
which runs the package's public code and yields the report's rows (``reproduce._common.row``).
The runner writes the raw rows to ``reproduce/results.jsonl`` and renders ``REPRODUCTION.md``.
"""

#: Report order: the module names under ``reproduce/``.
MODULES = (
    "kulis_jordan_2012",
    "sugiyama_2014",
    "kaski_2005",
    "smieja_geiger",
    "simbad_eac",
    "simbad_consensus",
    "simbad_ceac",
    "simbad_did",
    "simbad_temporal",
)
