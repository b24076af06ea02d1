"""Boosting algorithms, one module per family (rankboost, rankboost_plus, adarank, gbrt, ...).

Import the estimator from its module, e.g. ``from lrank.models.rankboost import RankBoost``; the names
below are resolved lazily so that ``import lrank.models`` stays instant.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "RankBoost": "rankboost",
    "RankBoostPlus": "rankboost_plus",
    "AdaRank": "adarank",
    "MART": "gbrt",
    "LambdaMART": "gbrt",
    "McRank": "gbrt",
    "AdaBoostStumps": "adaboost",
    "NDCGBoost": "ndcgboost",
    "BoostingTree": "boostingtree",
    "Exp3P": "boostingtree",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"lrank.models.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lrank.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(_WHERE)
