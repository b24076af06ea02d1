"""Cross-validation with per-round learning curves and the papers' round selection on validation."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from lrank.data.container import Fold, RankingData

SPLITS = ("train", "valid", "test")
COLUMNS = ["fold", "split", "round", "metric", "value", "selected", "stop_reason"]
#: ``stop_reason`` of a fold whose data has no feature: nothing is fitted, the constant model is scored.
NO_FEATURES = "no features: scored as the constant model"


def _new_estimator(make_estimator: Any):
    """A fresh estimator: a zero-argument factory (a function, a class) is called, an estimator cloned."""
    if isinstance(make_estimator, type) or (callable(make_estimator) and not hasattr(make_estimator, "fit")):
        return make_estimator()
    return clone(make_estimator)


def _staged_scores(est: Any, X: np.ndarray) -> Iterable[tuple[int, np.ndarray]]:
    """``(round, scores)`` for every fitted round; round 0 (the constant model) when none was fitted.

    Uses ``staged_predict`` where the estimator has it, else ``predict(X, num_iteration=k)`` for
    k = 1..n_iter_, else one ``predict(X)`` (counted as round ``n_iter_``, or 1).
    A model with ``n_iter_ == 0`` (it stopped before its first round, e.g. Rb-d with eps- = 0) is the
    constant model: every document gets the same score (0).
    """
    n_iter = getattr(est, "n_iter_", None)
    if n_iter is not None and int(n_iter) == 0:
        yield 0, np.zeros(X.shape[0])
        return
    if hasattr(est, "staged_predict"):
        any_round = False
        for r, scores in enumerate(est.staged_predict(X), start=1):
            any_round = True
            yield r, scores
        if not any_round:  # no round although n_iter_ did not say 0: still the constant model
            yield 0, np.zeros(X.shape[0])
    elif n_iter is not None and "num_iteration" in inspect.signature(est.predict).parameters:
        for k in range(1, int(n_iter) + 1):
            yield k, est.predict(X, num_iteration=k)
    else:
        yield int(n_iter or 1), est.predict(X)


def _higher_is_better(metric: str) -> bool:
    name = metric.split("@")[0].lower()
    return name not in ("r1", "r2", "expected_disagreement", "disagreement", "e1", "e2")


def _curves(staged: Iterable[tuple[int, np.ndarray]], split: str, data: RankingData,
            metrics: Sequence[str], metric_options: dict) -> list:
    from lrank.metrics import evaluate

    rows = []
    for r, scores in staged:
        vals = evaluate(data.y, np.asarray(scores, dtype=np.float64), data.qptr, list(metrics),
                        **metric_options)
        rows.extend((split, r, m, float(vals[m])) for m in metrics)
    return rows


def fit_and_score(make_estimator: Any, fold: Fold, metrics: Sequence[str],
                  metric_options: dict | None = None) -> pd.DataFrame:
    """Train one fresh estimator on ``fold.train`` and score every round on train / valid / test.
    ``fold`` may be a `lrank.data.fetch.FoldFiles` (a fold on disk): it is loaded here, in the job.

    Every fold gives rows, whatever happened in training:

    * a model that stopped before its first round (``n_iter_ == 0``) is scored as the constant model
      (all scores equal) at ``round`` 0;
    * a fold whose training data has no feature is not fitted and is scored as the constant model at
      ``round`` 0, with ``stop_reason`` `NO_FEATURES`.

    Returns
    -------
    pandas.DataFrame
        Tidy: ``split, round, metric, value, stop_reason`` (``round`` counts from 1; 0 is the constant
        model). ``stop_reason`` is the estimator's ``stop_reason_`` (empty when it has none).
        ``df.attrs["n_iter"]`` and ``df.attrs["best_iteration"]`` hold the fitted ``n_iter_`` and
        ``best_iteration_`` (``None`` without early stopping).
    """
    from lrank.data.fetch import as_fold

    fold = as_fold(fold)
    cols = ["split", "round", "metric", "value", "stop_reason"]
    if fold.train.n_features == 0:
        rows: list = []
        for split, data in zip(SPLITS, fold):
            if data is not None:
                rows.extend(_curves([(0, np.zeros(data.n_docs))], split, data, metrics, metric_options or {}))
        df = pd.DataFrame(rows, columns=cols[:-1]).assign(stop_reason=NO_FEATURES)
        df.attrs.update(n_iter=0, best_iteration=None)
        return df
    est = _new_estimator(make_estimator)
    est.fit(fold.train)
    rows = []
    for split, data in zip(SPLITS, fold):
        if data is not None:
            rows.extend(_curves(_staged_scores(est, data.X), split, data, metrics, metric_options or {}))
    reason = getattr(est, "stop_reason_", None)
    df = pd.DataFrame(rows, columns=cols[:-1]).assign(stop_reason="" if reason is None else str(reason))
    best = getattr(est, "best_iteration_", None)
    df.attrs.update(n_iter=int(getattr(est, "n_iter_", df["round"].max() if len(df) else 0)),
                    best_iteration=None if best is None else int(best))
    return df


def scored_fold(make_estimator: Any, fold: Fold, metrics: Sequence[str],
                metric_options: dict | None = None) -> tuple[pd.DataFrame, int | None]:
    """`fit_and_score` and the fold's final round (what ``select_by="last"`` takes): one job of
    `cross_validate` and `lrank.experiments.run_grid`."""
    df = fit_and_score(make_estimator, fold, metrics, metric_options)
    return df, _final_round(df)


def fold_fingerprint(job: Any) -> tuple:
    """What a `scored_fold` job computes from, for its checkpoint: the estimator the factory makes
    (class and parameters, not the factory's code), the fold's data, metrics and options."""
    make, fold, metrics, metric_options = job.args
    return _new_estimator(make), fold, list(metrics), metric_options or {}


def select_rounds(curves: pd.DataFrame, select_by: str | dict | None = None,
                  split: str = "valid", final_rounds: dict | None = None) -> pd.DataFrame:
    """Mark, per fold and metric, the round chosen on ``split`` (validation) as the papers do.

    ``select_by=None`` selects each metric's round by that same metric (the RankBoost+ protocol);
    a metric name selects every metric's round by it (e.g. ``"map"``: the MQ2007/MQ2008 tables);
    ``"last"`` takes the round ``predict(X)`` uses (the estimator's ``best_iteration_`` when its early
    stopping chose one, else its final round: when the algorithm chose its own length, as AdaRank
    does); a dict maps a metric to its selector. Ties go to the earliest round. Without a validation
    split the last round is taken. A fold scored only as the constant model (round 0) selects round 0.

    Parameters
    ----------
    curves : DataFrame
        ``[fold,] split, round, metric, value`` rows.
    select_by : None, str or dict
    split : str
        The split the choice is made on.
    final_rounds : dict, optional
        ``{fold: round}`` that ``"last"`` selects (default: each fold's largest round).
    """
    curves = curves.copy()
    curves["selected"] = False
    keys = ["fold"] if "fold" in curves.columns else []
    groups = curves.groupby(keys) if keys else [((), curves)]
    for key, part in groups:
        fold = key[0] if isinstance(key, tuple) and key else key
        last = part["round"].max()
        if final_rounds is not None and final_rounds.get(fold) is not None:
            last = final_rounds[fold]
        metrics = part["metric"].unique()
        for m in metrics:
            sel = select_by.get(m, m) if isinstance(select_by, dict) else (select_by or m)
            val = part[(part["split"] == split) & (part["metric"] == sel)]
            if sel == "last" or val.empty:
                best_round = last
            else:
                v = val["value"].to_numpy()
                i = int(np.argmax(v) if _higher_is_better(sel) else np.argmin(v))
                best_round = int(val["round"].to_numpy()[i])
            mask = (part["metric"] == m) & (part["round"] == best_round)
            curves.loc[part.index[mask.to_numpy()], "selected"] = True
    return curves


def _final_round(df: pd.DataFrame) -> int | None:
    best = df.attrs.get("best_iteration")
    if best is not None:
        return int(best)
    return int(df["round"].max()) if len(df) else None


def cross_validate(
    make_estimator: Callable[[], Any] | Any,
    data: RankingData | None = None,
    folds: int | Sequence[Fold] = 5,
    metrics: Sequence[str] = ("ndcg@10",),
    select_by: str | dict | None = None,
    random_state: int | None = None,
    n_jobs: int = 1,
    metric_options: dict | None = None,
    checkpoint: bool | str | os.PathLike | None = None,
    verbose: bool | None = None,
) -> pd.DataFrame:
    """Train on each fold, score every round on train / validation / test, select rounds on validation.

    Parameters
    ----------
    make_estimator : callable or estimator
        A zero-argument factory returning a fresh estimator (a function, or an estimator class), or an
        estimator that is cloned per fold.
        It follows the estimator contract (`lrank.models._base`): ``fit(RankingData)``,
        ``staged_predict(X)`` (else ``predict(X, num_iteration=k)``), ``n_iter_``,
        ``best_iteration_``, ``stop_reason_``. Every round is scored.
    data : RankingData, optional
        Split with ``data.kfold(folds, random_state)`` when ``folds`` is an int (a single-query task
        with ``data.task_folds``).
    folds : int or sequence of Fold
    metrics : sequence of str
        lrank metric names (``lrank.metrics.evaluate``).
    select_by : None, str or dict
        See :func:`select_rounds`.
    random_state : int, optional
        Shuffles queries (or a task's documents) before cutting folds.
    n_jobs : int
        Folds in parallel through joblib (results do not depend on it).
    metric_options : dict, optional
        Passed to ``evaluate`` (``discount``, ``empty``, ...).
    checkpoint : None, bool or path
        Keep each finished fold in a checkpoint file; the same call after an interruption fits only
        the folds that had not finished (default: on for the paper profile only; see
        `lrank.experiments.jobs`).
    verbose : bool, optional
        A tqdm bar over the folds (default: on for the paper profile only).

    Returns
    -------
    pandas.DataFrame
        Tidy: ``fold, split, round, metric, value, selected, stop_reason``; ``selected`` marks the
        chosen round of each (fold, metric) on every split; ``stop_reason`` is the fold's model's
        ``stop_reason_``. Every fold is returned: a model that stopped before its first round
        (``n_iter_ == 0``), or a fold with no feature, is scored as the constant model at ``round`` 0
        (see `fit_and_score`). ``summarize(df)`` gives the usual table.
    """
    if isinstance(folds, (int, np.integer)):
        if data is None:
            raise TypeError("pass data when folds is a number")
        folds = (data.task_folds(int(folds), random_state) if data.n_queries == 1
                 else data.kfold(int(folds), random_state))
    elif data is not None:
        raise TypeError("pass either data with a number of folds, or a list of folds")
    metrics = list(metrics)
    from lrank.experiments.jobs import Job, run_jobs

    jobs = [Job({"fold": i, "seed": random_state}, (make_estimator, f, metrics, metric_options))
            for i, f in enumerate(folds)]
    outs = run_jobs(scored_fold, jobs, label="cv", checkpoint=checkpoint, n_jobs=n_jobs, verbose=verbose,
                    desc="folds", fingerprint_args=fold_fingerprint)
    final, parts = {}, []
    for i, (p, last) in enumerate(outs):
        final[i] = last
        p.insert(0, "fold", i)
        parts.append(p)
    cols = [c for c in COLUMNS if c != "selected"]
    curves = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)
    return select_rounds(curves, select_by, final_rounds=final)[COLUMNS]


def summarize(results: pd.DataFrame, split: str = "test", by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean over folds of the selected rounds' values on ``split``: one column per metric."""
    sel = results[results["selected"] & (results["split"] == split)]
    if not by:
        return sel.groupby("metric")["value"].mean().to_frame(split).T
    return sel.groupby([*by, "metric"])["value"].mean().unstack("metric")
