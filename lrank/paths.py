"""Where lrank reads and writes: absolute paths from the package location, overridable by env vars.

* ``LRANK_DATA``: data root (downloads, caches); default ``<repo>/data``.
* ``LRANK_OUTPUT_DIR``: output root; figures and tables go to ``<root>/figures`` (quick profile),
  ``<root>/figures/paper`` (paper profile) and ``<root>/figures/rehearsal`` (rehearsal profile); default the
  repository root.
* ``LRANK_PROFILE``: the default profile of the notebooks (``quick`` unless set); one of `PROFILES`.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent

#: The profiles of the notebooks: ``quick`` (CI scale, the stored results), ``paper`` (the papers' data and
#: budgets) and ``rehearsal`` (the paper profile's code path on stand-in files, budgets scaled down)
PROFILES: tuple[str, ...] = ("quick", "paper", "rehearsal")


def repo_dir() -> Path:
    """The checkout the package lives in (its parent folder)."""
    return REPO_DIR


def data_dir() -> Path:
    """Data root: ``$LRANK_DATA`` or ``<repo>/data``."""
    return Path(os.environ.get("LRANK_DATA", REPO_DIR / "data")).resolve()


def output_root() -> Path:
    return Path(os.environ.get("LRANK_OUTPUT_DIR", REPO_DIR)).resolve()


def profile(default: str = "quick") -> str:
    """The active profile: ``$LRANK_PROFILE`` or ``default``; must be one of `PROFILES`."""
    p = os.environ.get("LRANK_PROFILE", default)
    if p not in PROFILES:
        raise ValueError(f"LRANK_PROFILE must be one of {', '.join(map(repr, PROFILES))}, got {p!r}")
    return p


def figures_dir(profile_name: str | None = None) -> Path:
    """``<output>/figures`` for the quick profile, ``<output>/figures/<profile>`` for the others."""
    p = profile_name or profile()
    if p not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(map(repr, PROFILES))}, got {p!r}")
    d = output_root() / "figures"
    if p != "quick":
        d = d / p
    d.mkdir(parents=True, exist_ok=True)
    return d


def results_dir(profile_name: str | None = None) -> Path:
    """JSON of checked numbers per notebook: ``<figures>/results``."""
    d = figures_dir(profile_name) / "results"
    d.mkdir(parents=True, exist_ok=True)
    return d


def notebooks_dir() -> Path:
    return REPO_DIR / "notebooks"
