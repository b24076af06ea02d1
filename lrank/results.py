"""Checked numbers of each notebook, recorded as JSON that tests read after the notebook ran.

``record("05_rankboost_plus", "prop1_R1_h1", 16/19, paper=16/19)`` adds an entry to
``<figures>/results/05_rankboost_plus.json``. A paper's printed value is stored only as ``paper``,
the value compared against.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from lrank.paths import results_dir


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def results_path(notebook: str, profile: str | None = None) -> Path:
    return results_dir(profile) / f"{notebook}.json"


def record(notebook: str, name: str, value: Any, paper: Any = None, profile: str | None = None,
           **extra: Any) -> Any:
    """Record ``value`` (and the paper's printed value, if any) under ``name``; returns ``value``."""
    path = results_path(notebook, profile)
    data = json.loads(path.read_text()) if path.is_file() else {}
    entry = {"value": _plain(value)}
    if paper is not None:
        entry["paper"] = _plain(paper)
    entry.update({k: _plain(v) for k, v in extra.items()})
    data[name] = entry
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return value


def load(notebook: str, profile: str | None = None) -> dict:
    """All recorded entries of a notebook (``{}`` when it has not run)."""
    path = results_path(notebook, profile)
    return json.loads(path.read_text()) if path.is_file() else {}


def reset(notebook: str, profile: str | None = None) -> None:
    """Forget a notebook's recorded numbers (its setup cell calls this, so a rerun starts clean)."""
    path = results_path(notebook, profile)
    if path.is_file():
        path.unlink()
