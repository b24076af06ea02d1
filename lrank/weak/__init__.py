"""Weak learners: binary stumps, single-feature rankers, histogram regression trees.

``RegressionTree`` (histogram-based, SE / WSE / RWSE / OLE split criteria) is resolved lazily so that
``import lrank.weak`` compiles nothing.
"""

from __future__ import annotations

from lrank._lazy import lazy_getattr

_WHERE = {
    "RegressionTree": "tree",
    "BinnedStumps": "stumps",
    "ScaledFeatures": "stumps",
}

__getattr__ = lazy_getattr(__name__, _WHERE)
