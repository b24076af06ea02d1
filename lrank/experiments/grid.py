"""Per-task grids (tasks x algorithms x folds) through joblib, with a tqdm progress bar.

The grid runs on whatever joblib backend is active, so on a cluster::

    from dask.distributed import Client
    import joblib
    with Client(scheduler_address), joblib.parallel_config(backend="dask"):
        results = run_grid(tasks, algorithms)

runs the same grid across machines and returns the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from joblib import Parallel, delayed
from tqdm import tqdm

from lrank.data.container import RankingData
from lrank.experiments.cv import COLUMNS, fit_and_score, select_rounds


def _folds(data: RankingData, k: int, random_state: int | None):
    if data.n_queries == 1:
        return data.task_folds(k, random_state)
    return data.kfold(k, random_state)


def run_grid(
    tasks: Mapping[str, RankingData] | Sequence[RankingData],
    algorithms: Mapping[str, Any],
    n_folds: int = 5,
    metrics: Sequence[str] = ("r1", "r2", "ndcg@3", "ndcg@5", "ndcg@7"),
    select_by: str | dict | None = None,
    random_state: int | None = 0,
    n_jobs: int = 1,
    metric_options: dict | None = None,
    verbose: bool = True,
) -> pd.DataFrame:
    """Cross-validate every algorithm on every task.

    Parameters
    ----------
    tasks : mapping name -> RankingData, or a sequence (named ``task0``, ``task1``, ...)
        A single-query task is split with ``task_folds`` (the RankBoost+ protocol, 3/1/1 rotating),
        a multi-query data set with ``kfold``.
    algorithms : mapping name -> estimator factory (zero-argument callable) or estimator to clone
    n_folds, metrics, select_by, metric_options
        As in :func:`lrank.experiments.cross_validate`.
    random_state : int, optional
        Seeds the fold split of every task (the same split for every algorithm).
    n_jobs : int
        Parallel jobs; each (task, algorithm, fold) is one job. Use ``joblib.parallel_config`` to pick
        the backend (``"dask"`` for a cluster). The result does not depend on ``n_jobs`` or backend.
    verbose : bool
        Show a tqdm progress bar over jobs.

    Returns
    -------
    pandas.DataFrame
        ``task, algorithm, fold, split, round, metric, value, selected``.
    """
    if not isinstance(tasks, Mapping):
        tasks = {f"task{i}": t for i, t in enumerate(tasks)}
    metrics = list(metrics)
    jobs = []
    for tname, data in tasks.items():
        folds = _folds(data, n_folds, random_state)
        for aname, make in algorithms.items():
            for i, fold in enumerate(folds):
                jobs.append((tname, aname, i, make, fold))
    par = Parallel(n_jobs=n_jobs, return_as="generator")
    gen = par(delayed(fit_and_score)(make, fold, metrics, metric_options) for *_, make, fold in jobs)
    parts = []
    for (tname, aname, i, _, _), df in zip(jobs, tqdm(gen, total=len(jobs), disable=not verbose,
                                                      desc="grid")):
        df.insert(0, "fold", i)
        df.insert(0, "algorithm", aname)
        df.insert(0, "task", tname)
        parts.append(df)
    if not parts:
        return pd.DataFrame(columns=["task", "algorithm", *COLUMNS])
    out = []
    for (_, _), part in pd.concat(parts, ignore_index=True).groupby(["task", "algorithm"], sort=False):
        sel = select_rounds(part.drop(columns=["task", "algorithm"]), select_by)
        sel.insert(0, "algorithm", part["algorithm"].to_numpy())
        sel.insert(0, "task", part["task"].to_numpy())
        out.append(sel)
    return pd.concat(out, ignore_index=True)[["task", "algorithm", *COLUMNS]]
