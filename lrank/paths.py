"""Where lrank reads and writes: absolute paths from the package location, overridable by env vars.

* ``LRANK_DATA``: data root (downloads, caches); default ``<repo>/data`` in a checkout of the repository,
  ``~/lrank_data`` for an installed package (as scikit-learn's ``~/scikit_learn_data``).
* ``LRANK_OUTPUT_DIR``: output root; figures and tables go to ``<root>/figures`` (quick profile),
  ``<root>/figures/paper`` (paper profile) and ``<root>/figures/rehearsal`` (rehearsal profile); default the
  repository root in a checkout, the current working directory for an installed package.

An installed package (``pip install`` of a wheel) lives in ``site-packages``: it never writes there.
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


def in_checkout() -> bool:
    """Whether the package runs from a checkout of the repository (its parent folder holds
    ``pyproject.toml`` and ``notebooks/``), rather than installed into ``site-packages``."""
    return (REPO_DIR / "pyproject.toml").is_file() and (REPO_DIR / "notebooks").is_dir()


def data_dir() -> Path:
    """Data root: ``$LRANK_DATA``, else ``<repo>/data`` in a checkout, else ``~/lrank_data``."""
    default = REPO_DIR / "data" if in_checkout() else Path.home() / "lrank_data"
    return Path(os.environ.get("LRANK_DATA", default)).resolve()


def output_root() -> Path:
    """Output root: ``$LRANK_OUTPUT_DIR``, else the repository in a checkout, else the working directory."""
    default = REPO_DIR if in_checkout() else Path.cwd()
    return Path(os.environ.get("LRANK_OUTPUT_DIR", default)).resolve()


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


def figures_dir(profile_name: str | None = None, create: bool = True) -> Path:
    """``<output>/figures`` for the quick profile, ``<output>/figures/<profile>`` for the others; created
    unless ``create=False`` (to name it only, as ``python -m lrank info`` does)."""
    p = profile() if profile_name is None else check_profile(profile_name)
    d = output_root() / "figures"
    if p != "quick":
        d = d / p
    if create:
        d.mkdir(parents=True, exist_ok=True)
    return d


def results_dir(profile_name: str | None = None) -> Path:
    """JSON of checked numbers per notebook: ``<figures>/results``."""
    d = figures_dir(profile_name) / "results"
    d.mkdir(parents=True, exist_ok=True)
    return d


def notebooks_dir() -> Path:
    return REPO_DIR / "notebooks"
