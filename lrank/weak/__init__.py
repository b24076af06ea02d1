"""Weak learners: binary stumps, single-feature rankers, histogram regression trees.

``RegressionTree`` (histogram-based, SE / WSE / RWSE / OLE split criteria) is resolved lazily so that
``import lrank.weak`` compiles nothing.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "RegressionTree": "tree",
    "BinnedStumps": "stumps",
    "ScaledFeatures": "stumps",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"lrank.weak.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lrank.weak' has no attribute {name!r}")
