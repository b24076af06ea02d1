"""Cross-validation with per-round learning curves and the papers' round selection on validation."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from lrank.data.container import Fold, RankingData

SPLITS = ("train", "valid", "test")
COLUMNS = ["fold", "split", "round", "metric", "value", "selected"]


def _new_estimator(make_estimator: Any):
    if callable(make_estimator) and not hasattr(make_estimator, "fit"):
        return make_estimator()
    return clone(make_estimator)


def _staged_scores(est: Any, X: np.ndarray) -> Iterable[np.ndarray]:
    if hasattr(est, "staged_predict"):
        yield from est.staged_predict(X)
    else:
        yield est.predict(X)


def _higher_is_better(metric: str) -> bool:
    name = metric.split("@")[0].lower()
    return name not in ("r1", "r2", "expected_disagreement", "disagreement", "e1", "e2")


def _curves(est: Any, split: str, data: RankingData, metrics: Sequence[str], metric_options: dict) -> list:
    from lrank.metrics import evaluate

    rows = []
    for r, scores in enumerate(_staged_scores(est, data.X), start=1):
        vals = evaluate(data.y, np.asarray(scores, dtype=np.float64), data.qptr, list(metrics),
                        **metric_options)
        rows.extend((split, r, m, float(vals[m])) for m in metrics)
    return rows


def fit_and_score(make_estimator: Any, fold: Fold, metrics: Sequence[str],
                  metric_options: dict | None = None) -> pd.DataFrame:
    """Train one fresh estimator on ``fold.train`` and score every round on train / valid / test.

    Returns a tidy DataFrame with columns ``split, round, metric, value`` (``round`` counts from 1).
    """
    est = _new_estimator(make_estimator)
    est.fit(fold.train)
    rows: list = []
    for split, data in zip(SPLITS, fold):
        if data is not None:
            rows.extend(_curves(est, split, data, metrics, metric_options or {}))
    return pd.DataFrame(rows, columns=["split", "round", "metric", "value"])


def select_rounds(curves: pd.DataFrame, select_by: str | dict | None = None,
                  split: str = "valid") -> pd.DataFrame:
    """Mark, per fold and metric, the round chosen on ``split`` (validation) as the papers do.

    ``select_by=None`` selects each metric's round by that same metric (the RankBoost+ protocol);
    a metric name selects every metric's round by it (e.g. ``"map"``: the MQ2007/MQ2008 tables);
    ``"last"`` takes the final round (when the algorithm chose its own length, as AdaRank does); a dict
    maps a metric to its selector. Ties go to the earliest round. Without a validation split the last
    round is taken.
    """
    curves = curves.copy()
    curves["selected"] = False
    keys = ["fold"] if "fold" in curves.columns else []
    groups = curves.groupby(keys) if keys else [((), curves)]
    for _, part in groups:
        metrics = part["metric"].unique()
        for m in metrics:
            sel = select_by.get(m, m) if isinstance(select_by, dict) else (select_by or m)
            val = part[(part["split"] == split) & (part["metric"] == sel)]
            if sel == "last" or val.empty:
                best_round = part["round"].max()
            else:
                v = val["value"].to_numpy()
                i = int(np.argmax(v) if _higher_is_better(sel) else np.argmin(v))
                best_round = int(val["round"].to_numpy()[i])
            mask = (part["metric"] == m) & (part["round"] == best_round)
            curves.loc[part.index[mask.to_numpy()], "selected"] = True
    return curves


def cross_validate(
    make_estimator: Callable[[], Any] | Any,
    data: RankingData | None = None,
    folds: int | Sequence[Fold] = 5,
    metrics: Sequence[str] = ("ndcg@10",),
    select_by: str | dict | None = None,
    random_state: int | None = None,
    n_jobs: int = 1,
    metric_options: dict | None = None,
) -> pd.DataFrame:
    """Train on each fold, score every round on train / validation / test, select rounds on validation.

    Parameters
    ----------
    make_estimator : callable or estimator
        A zero-argument factory returning a fresh estimator, or an estimator that is cloned per fold.
        It must have ``fit(RankingData)`` and ``predict(X)``; with ``staged_predict(X)`` every round
        is scored.
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

    Returns
    -------
    pandas.DataFrame
        Tidy: ``fold, split, round, metric, value, selected``; ``selected`` marks the chosen round of
        each (fold, metric) on every split. ``summarize(df)`` gives the usual table.
    """
    if isinstance(folds, (int, np.integer)):
        if data is None:
            raise TypeError("pass data when folds is a number")
        folds = (data.task_folds(int(folds), random_state) if data.n_queries == 1
                 else data.kfold(int(folds), random_state))
    elif data is not None:
        raise TypeError("pass either data with a number of folds, or a list of folds")
    metrics = list(metrics)
    from joblib import Parallel, delayed

    parts = Parallel(n_jobs=n_jobs)(
        delayed(fit_and_score)(make_estimator, f, metrics, metric_options) for f in folds
    )
    for i, p in enumerate(parts):
        p.insert(0, "fold", i)
    curves = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS[:-1])
    return select_rounds(curves, select_by)[COLUMNS]


def summarize(results: pd.DataFrame, split: str = "test", by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean over folds of the selected rounds' values on ``split``: one column per metric."""
    sel = results[results["selected"] & (results["split"] == split)]
    if not by:
        return sel.groupby("metric")["value"].mean().to_frame(split).T
    return sel.groupby([*by, "metric"])["value"].mean().unstack("metric")
