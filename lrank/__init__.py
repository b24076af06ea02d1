"""lrank: boosting for learning to rank, derived, checked and fast.

Every estimator is importable from here (``from lrank import LambdaMART``), as are `RankingData`,
`load_model` and the tree engine's `RegressionTree`. The names are resolved lazily: importing lrank
compiles nothing (and imports nothing heavy until used); :func:`warmup` compiles every numba kernel on a
toy set. ``python -m lrank.dev test|reproduce`` sets up a fresh machine with only the standard library,
so this module must stay importable without numpy.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: name -> the module that defines it (imported on first use)
_WHERE = {
    "RankingData": "lrank.data.container",
    "config_context": "lrank._config",
    "get_config": "lrank._config",
    "set_config": "lrank._config",
    "RankBoost": "lrank.models.rankboost",
    "RankBoostPlus": "lrank.models.rankboost_plus",
    "AdaRank": "lrank.models.adarank",
    "MART": "lrank.models.gbrt",
    "LambdaMART": "lrank.models.gbrt",
    "McRank": "lrank.models.gbrt",
    "AdaBoostStumps": "lrank.models.adaboost",
    "NDCGBoost": "lrank.models.ndcgboost",
    "BoostingTree": "lrank.models.boostingtree",
    "Exp3P": "lrank.models.boostingtree",
    "Standard": "lrank.models.boostingtree",
    "LambdaMARTBase": "lrank.models.boostingtree",
    "load_model": "lrank.models._base",
    "RegressionTree": "lrank.trees.tree",
}

__all__ = ["__version__", "warmup", *sorted(_WHERE)]


def __getattr__(name: str):
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'lrank' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


def warmup() -> None:
    """Compile (or load from numba's cache) every kernel on a toy data set (``python -m lrank warmup`` from
    a shell): afterwards no fit compiles, its kernels load from the cache."""
    from lrank._warmup import run

    run()
