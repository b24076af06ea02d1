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


class ProfileError(ValueError):
    """A profile name that is not one of `PROFILES` (``python -m lrank`` prints it as one line)."""


def check_profile(name: str, what: str = "profile") -> str:
    """``name`` if it is one of `PROFILES`, else a `ProfileError` naming ``what`` and the allowed names."""
    if name not in PROFILES:
        raise ProfileError(f"{what} must be one of {', '.join(map(repr, PROFILES))}, got {name!r}")
    return name


def profile(default: str = "quick") -> str:
    """The active profile: ``$LRANK_PROFILE`` or ``default``; one of `PROFILES`."""
    return check_profile(os.environ.get("LRANK_PROFILE", default), "LRANK_PROFILE")


def figures_dir(profile_name: str | None = None) -> Path:
    """``<output>/figures`` for the quick profile, ``<output>/figures/<profile>`` for the others."""
    p = profile() if profile_name is None else check_profile(profile_name)
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
