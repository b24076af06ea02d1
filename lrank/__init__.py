"""lrank: boosting for learning to rank, derived, checked and fast.

Importing lrank compiles nothing; :func:`warmup` compiles every numba kernel on a toy set.
"""

from __future__ import annotations

__version__ = "0.1.0"

from lrank.data.container import RankingData  # noqa: E402

__all__ = ["RankingData", "__version__", "warmup"]


def warmup() -> None:
    """Compile (or load from numba's cache) every kernel on a toy data set."""
    from lrank._warmup import run

    run()
