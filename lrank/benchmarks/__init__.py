"""Benchmarks behind ``python -m lrank bench``.

Each module here exposes ``run(profile: str = "quick") -> list[dict]``: one dict per row with keys
``benchmark`` (what is measured), ``ours_s`` (seconds), ``reference`` (the peer or reference run, named),
``reference_s``, ``ratio`` (reference_s / ours_s unless ``ratio_kind`` says otherwise), ``target``
(the issue's target as text), ``met`` (bool) and ``notes``. Ratios are measured in one process.
"""

from __future__ import annotations

import importlib
import pkgutil


def modules() -> list[str]:
    """Names of the benchmark modules, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load(name: str):
    return importlib.import_module(f"lrank.benchmarks.{name}")
