"""Baselines the papers compare against.

* RankBoost paper Sec. 6.2.3 (collaborative filtering): `RegressionRanker`, `NearestNeighbourRanker`,
  `VSIM` (module ``collaborative``).
* AdaRank paper: a pairwise linear `RankSVM` (module ``ranksvm``) and the BM25 feature.
"""

from __future__ import annotations

from lrank._lazy import lazy_getattr

_WHERE = {
    "RegressionRanker": "collaborative",
    "NearestNeighbourRanker": "collaborative",
    "VSIM": "collaborative",
    "RankSVM": "ranksvm",
    "BM25_FEATURES": "ranksvm",
}

__getattr__ = lazy_getattr(__name__, _WHERE)
