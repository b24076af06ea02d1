"""Experiment runner: cross-validation with learning curves, round selection, per-task grids."""

from lrank.experiments.cv import cross_validate, fit_and_score, select_rounds, summarize
from lrank.experiments.grid import run_grid

__all__ = ["cross_validate", "fit_and_score", "run_grid", "select_rounds", "summarize"]
