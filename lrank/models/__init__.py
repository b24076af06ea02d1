"""Boosting algorithms, one module per family (rankboost, rankboost_plus, adarank, gbrt, ...).

Every estimator is importable from ``lrank`` itself (``from lrank import RankBoost``), from here, or from
its module (``from lrank.models.rankboost import RankBoost``); the names below are resolved lazily so that
``import lrank.models`` stays instant.
"""

from __future__ import annotations

from lrank._lazy import lazy_getattr

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
    "Standard": "boostingtree",
    "LambdaMARTBase": "boostingtree",
    "load_model": "_base",
}

__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(_WHERE)
