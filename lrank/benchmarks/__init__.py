"""Benchmarks behind ``python -m lrank bench``.

Each module here exposes ``run(profile: str = "quick") -> list[dict]``: one dict per row with keys
``benchmark`` (what is measured), ``ours_s`` (seconds), ``reference`` (the peer or reference run, named),
``reference_s``, ``ratio`` (reference_s / ours_s unless ``ratio_kind`` says otherwise), ``target``
(the issue's target as text), ``met`` (bool) and ``notes``. Ratios are measured in one process.

A module may also define ``side_files() -> dict[str, pandas.DataFrame]``: tables of its last ``run`` too
long for a row (e.g. the per-round times notebook 05's Fig. 1 plots), which ``python -m lrank bench`` writes
as ``figures/<name>.csv`` beside the page with ``profile`` and ``commit`` columns (``--only`` without
``--into-page``: ``figures/benchmarks_<only>_<name>.csv``, beside that run's page). Notebooks read the
stored files and time nothing themselves.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any


def modules() -> list[str]:
    """Names of the benchmark modules, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load(name: str):
    return importlib.import_module(f"lrank.benchmarks.{name}")


def read_table(path: str | Path, **kwargs: Any):
    """The stored page ``figures/benchmarks.csv`` or one of its side files (`lrank.plots.read_table`: its
    ``commit`` and ``profile`` columns as text)."""
    from lrank.plots import read_table as read

    return read(path, **kwargs)


def page_markdown(df) -> str:
    """The page's table as Markdown (numbers to 4 significant digits); the text columns
    (`lrank.plots.TEXT_COLUMNS`) stay text, never parsed as numbers (``tabulate`` would print the commit
    ``836e026`` as ``8.36e+28``)."""
    from lrank.plots import TEXT_COLUMNS

    if not len(df):
        return "(no rows)"
    text = [i for i, c in enumerate(df.columns) if c in TEXT_COLUMNS]
    # a missing value (NaN in a text column read back from the CSV) is a blank cell, never "nan"
    return df.astype(object).where(df.notna(), None).to_markdown(index=False, floatfmt=".4g",
                                                                  disable_numparse=text, missingval="")
