"""lrank: boosting for learning to rank, derived, checked and fast.

Importing lrank compiles nothing (and imports nothing heavy until used); :func:`warmup` compiles every
numba kernel on a toy set. ``python -m lrank.dev test|reproduce`` sets up a fresh machine with only the
standard library, so this module must stay importable without numpy.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["RankingData", "__version__", "config_context", "get_config", "set_config", "warmup"]


def __getattr__(name: str):
    if name in ("config_context", "get_config", "set_config"):
        from lrank import _config

        return getattr(_config, name)
    if name == "RankingData":
        from lrank.data.container import RankingData

        return RankingData
    raise AttributeError(f"module 'lrank' has no attribute {name!r}")


def warmup() -> None:
    """Compile (or load from numba's cache) every kernel on a toy data set (``python -m lrank warmup`` from
    a shell): afterwards no fit compiles, its kernels load from the cache."""
    from lrank._warmup import run

    run()
