"""Experiment runner: cross-validation with learning curves, round selection, per-task grids."""

from lrank.experiments.cv import NO_FEATURES, cross_validate, fit_and_score, select_rounds, summarize
from lrank.experiments.grid import SCHEDULER_ENV, dask_backend, run_grid

__all__ = ["NO_FEATURES", "SCHEDULER_ENV", "cross_validate", "dask_backend", "fit_and_score", "run_grid",
           "select_rounds", "summarize"]
