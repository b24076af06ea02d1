"""Histogram regression trees: `RegressionTree` lives in the tree engine, `lrank.trees.tree` (this name
is kept for the notebooks that import it from here)."""

from lrank.trees.tree import CRITERIA, GROWTH, RegressionTree

__all__ = ["CRITERIA", "GROWTH", "RegressionTree"]
