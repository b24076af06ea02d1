"""Per-task grids (tasks x algorithms x folds) through joblib, with a tqdm progress bar.

The grid runs on whatever joblib backend is active; on a Dask cluster pass the scheduler's address
(or set ``LRANK_DASK_SCHEDULER``)::

    results = run_grid(tasks, algorithms, scheduler="tcp://scheduler-host:8786")

which is the same as::

    from dask.distributed import Client
    import joblib
    with Client("tcp://scheduler-host:8786"), joblib.parallel_config(backend="dask"):
        results = run_grid(tasks, algorithms)

and returns the same numbers as the local run (every job is seeded by its task, algorithm and fold,
never by the worker it lands on).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from lrank.data.container import RankingData
from lrank.experiments.cv import COLUMNS, fold_fingerprint, scored_fold, select_rounds
from lrank.experiments.jobs import Job, run_jobs

#: Environment variable naming a Dask scheduler address for `run_grid` and ``python -m lrank reproduce``.
SCHEDULER_ENV = "LRANK_DASK_SCHEDULER"


def _folds(data: RankingData, k: int, random_state: int | None):
    if data.n_queries == 1:
        return data.task_folds(k, random_state)
    return data.kfold(k, random_state)


def dask_scheduler(scheduler: Any = None) -> Any:
    """The scheduler to use: ``scheduler`` if given, else ``$LRANK_DASK_SCHEDULER``, else None (local)."""
    if scheduler is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
    return scheduler


@contextlib.contextmanager
def dask_backend(scheduler: Any = None) -> Iterator[Any]:
    """Run joblib work inside the block on a Dask cluster when a scheduler is given (else do nothing).

    Parameters
    ----------
    scheduler : str, distributed.Client, or None
        A scheduler address (``"tcp://host:8786"``), a connected ``distributed.Client``, or None for
        ``$LRANK_DASK_SCHEDULER`` (unset: the local joblib backend, nothing changes). Connecting waits
        at most ``$LRANK_DASK_TIMEOUT`` (default ``"30s"``).

    Yields
    ------
    distributed.Client or None
    """
    scheduler = dask_scheduler(scheduler)
    if scheduler is None:
        yield None
        return
    try:
        import joblib
        from distributed import Client
    except ImportError:  # pragma: no cover - the [dask] extra is missing
        raise ImportError(
            f"a Dask scheduler was given ({scheduler!r}, argument or ${SCHEDULER_ENV}) but the "
            "'distributed' package is not installed: pip install 'lrank[dask]'"
        ) from None
    if isinstance(scheduler, Client):
        with joblib.parallel_config(backend="dask", client=scheduler):
            yield scheduler
        return
    try:
        client = Client(str(scheduler), timeout=os.environ.get("LRANK_DASK_TIMEOUT", "30s"),
                        set_as_default=False)
    except OSError as exc:
        raise OSError(f"cannot reach the Dask scheduler at {scheduler!r} (argument or ${SCHEDULER_ENV}): "
                      f"{exc}") from None
    with client, joblib.parallel_config(backend="dask", client=client):
        yield client


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
    scheduler: Any = None,
    empty_tasks: str = "report",
    checkpoint: bool | str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Cross-validate every algorithm on every task.

    Parameters
    ----------
    tasks : mapping name -> RankingData, or a sequence (named ``task0``, ``task1``, ...)
        A single-query task is split with ``task_folds`` (the RankBoost+ protocol, 3/1/1 rotating),
        a multi-query data set with ``kfold``.
    algorithms : mapping name -> estimator factory (zero-argument callable, e.g. a class) or estimator
        to clone
    n_folds, metrics, select_by, metric_options
        As in :func:`lrank.experiments.cross_validate`.
    random_state : int, optional
        Seeds the fold split of every task (the same split for every algorithm).
    n_jobs : int
        Local parallel jobs; each (task, algorithm, fold) is one job. With a Dask ``scheduler`` every
        worker of the cluster takes jobs and ``n_jobs`` is not used. The result does not depend on
        ``n_jobs`` or backend.
    verbose : bool
        Show a tqdm progress bar over jobs (done, to go, from checkpoints, ETA).
    scheduler : str, distributed.Client, or None
        A Dask scheduler address to run the jobs on a cluster (default: ``$LRANK_DASK_SCHEDULER``;
        unset: the local joblib backend, or whatever ``joblib.parallel_config`` is active).
    empty_tasks : {"report", "constant"}
        Tasks without any feature cannot be learned. ``"report"``: they are not run; a warning names
        them and ``result.attrs["empty_tasks"]`` lists them. ``"constant"``: every fold of them is
        scored as the constant model (round 0, ``stop_reason`` = `lrank.experiments.cv.NO_FEATURES`)
        for every algorithm. Either way they are counted, never dropped silently.
    checkpoint : None, bool or path
        Keep every finished (task, algorithm, fold) job in a checkpoint file, so that the same call
        after an interruption runs only the jobs that had not finished, with identical results.
        Default: on for the paper profile only (``$LRANK_PROFILE``; ``$LRANK_CHECKPOINTS`` overrides);
        see `lrank.experiments.jobs`.

    Returns
    -------
    pandas.DataFrame
        ``task, algorithm, fold, split, round, metric, value, selected, stop_reason``; every fold of
        every run task is present (a model that stopped before its first round is scored as the
        constant model at round 0). ``attrs["empty_tasks"]``: names of the tasks without features.

    Raises
    ------
    lrank.experiments.jobs.JobError
        A job raised: the error names each failed job's task, algorithm, fold and seed; every other
        job ran and, with checkpoints on, is kept for the next run.
    """
    if empty_tasks not in ("report", "constant"):
        raise ValueError(f"empty_tasks must be 'report' or 'constant', got {empty_tasks!r}")
    if not isinstance(tasks, Mapping):
        tasks = {f"task{i}": t for i, t in enumerate(tasks)}
    metrics = list(metrics)
    empty = [name for name, data in tasks.items() if data.n_features == 0]
    if empty and empty_tasks == "report":
        warnings.warn(f"run_grid: {len(empty)} of {len(tasks)} tasks have no feature and are not run: "
                      f"{', '.join(map(str, empty[:20]))}{' ...' if len(empty) > 20 else ''} "
                      "(empty_tasks='constant' scores them as the constant model)", stacklevel=2)
    jobs = []
    for tname, data in tasks.items():
        if tname in empty and empty_tasks == "report":
            continue
        folds = _folds(data, n_folds, random_state)
        for aname, make in algorithms.items():
            for i, fold in enumerate(folds):
                jobs.append(Job({"task": tname, "algorithm": aname, "fold": i, "seed": random_state},
                                (make, fold, metrics, metric_options)))
    outs = run_jobs(scored_fold, jobs, label="grid", checkpoint=checkpoint, n_jobs=n_jobs,
                    scheduler=scheduler, verbose=verbose, desc="grid", fingerprint_args=fold_fingerprint)
    parts = []
    finals: dict = {}
    for job, (df, final) in zip(jobs, outs):
        tname, aname, i = job.key["task"], job.key["algorithm"], job.key["fold"]
        finals.setdefault((tname, aname), {})[i] = final
        df.insert(0, "fold", i)
        df.insert(0, "algorithm", aname)
        df.insert(0, "task", tname)
        parts.append(df)
    if not parts:
        out = pd.DataFrame(columns=["task", "algorithm", *COLUMNS])
        out.attrs["empty_tasks"] = empty
        return out
    out = []
    every = pd.concat(parts, ignore_index=True)
    for (tname, aname), part in every.groupby(["task", "algorithm"], sort=False):
        sel = select_rounds(part.drop(columns=["task", "algorithm"]), select_by,
                            final_rounds=finals[(tname, aname)])
        sel.insert(0, "algorithm", part["algorithm"].to_numpy())
        sel.insert(0, "task", part["task"].to_numpy())
        out.append(sel)
    result = pd.concat(out, ignore_index=True)[["task", "algorithm", *COLUMNS]]
    result.attrs["empty_tasks"] = empty
    return result
