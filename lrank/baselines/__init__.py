"""Baselines the papers compare against.

* RankBoost paper Sec. 6.2.3 (collaborative filtering): `RegressionRanker`, `NearestNeighbourRanker`,
  `VSIM` (module ``collaborative``).
* AdaRank paper: a pairwise linear `RankSVM` (module ``ranksvm``) and the BM25 feature.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "RegressionRanker": "collaborative",
    "NearestNeighbourRanker": "collaborative",
    "VSIM": "collaborative",
    "RankSVM": "ranksvm",
    "BM25_FEATURES": "ranksvm",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"lrank.baselines.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lrank.baselines' has no attribute {name!r}")
