"""Where lrank reads and writes: absolute paths from the package location, overridable by env vars.

* ``LRANK_DATA``: data root (downloads, caches); default ``<repo>/data``.
* ``LRANK_OUTPUT_DIR``: output root; figures and tables go to ``<root>/figures`` (quick profile) and
  ``<root>/figures/paper`` (paper profile); default the repository root.
* ``LRANK_PROFILE``: the default profile of the notebooks (``quick`` unless set).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent


def repo_dir() -> Path:
    """The checkout the package lives in (its parent folder)."""
    return REPO_DIR


def data_dir() -> Path:
    """Data root: ``$LRANK_DATA`` or ``<repo>/data``."""
    return Path(os.environ.get("LRANK_DATA", REPO_DIR / "data")).resolve()


def output_root() -> Path:
    return Path(os.environ.get("LRANK_OUTPUT_DIR", REPO_DIR)).resolve()


def profile(default: str = "quick") -> str:
    """The active profile: ``$LRANK_PROFILE`` or ``default``; must be ``quick`` or ``paper``."""
    p = os.environ.get("LRANK_PROFILE", default)
    if p not in ("quick", "paper"):
        raise ValueError(f"LRANK_PROFILE must be 'quick' or 'paper', got {p!r}")
    return p


def figures_dir(profile_name: str | None = None) -> Path:
    """``<output>/figures`` for the quick profile, ``<output>/figures/paper`` for the paper profile."""
    p = profile_name or profile()
    d = output_root() / "figures"
    if p == "paper":
        d = d / "paper"
    d.mkdir(parents=True, exist_ok=True)
    return d


def results_dir(profile_name: str | None = None) -> Path:
    """JSON of checked numbers per notebook: ``<figures>/results``."""
    d = figures_dir(profile_name) / "results"
    d.mkdir(parents=True, exist_ok=True)
    return d


def notebooks_dir() -> Path:
    return REPO_DIR / "notebooks"
