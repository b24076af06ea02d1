"""cross_validate / run_grid: curves per round, selection on validation, identical results on Dask."""

import numpy as np
import pandas as pd
import pytest

from lrank.data import RankingData
from lrank.experiments import cross_validate, run_grid, select_rounds, summarize
from lrank.models._base import BaseRanker


class FeaturePrefixRanker(BaseRanker):
    """Test double: round r scores with the sum of the first r features (weights drawn from the seed)."""

    def __init__(self, n_rounds=4, random_state=None):
        self.n_rounds = n_rounds
        self.random_state = random_state

    def fit(self, X, y=None, *, qid=None, group=None):
        data = self._ranking_data(X, y, qid, group)
        rng = np.random.default_rng(self.random_state)
        self.w_ = rng.normal(size=min(self.n_rounds, data.n_features))
        self.n_iter_ = self.w_.size
        return self

    def staged_predict(self, X):
        X = self._features(X)
        s = np.zeros(X.shape[0])
        for r in range(self.n_iter_):
            s = s + self.w_[r] * X[:, r]
            yield s.copy()

    def predict(self, X):
        return list(self.staged_predict(X))[-1]


def data(seed=0, n_queries=12):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 9, n_queries)
    n = sizes.sum()
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 5)) + y[:, None] * np.array([1.0, 0.5, 0.0, -0.5, 0.2])
    return RankingData.from_group(X, y, sizes)


def test_cross_validate_is_tidy_and_selects_on_validation():
    res = cross_validate(lambda: FeaturePrefixRanker(random_state=3), data(), folds=4,
                         metrics=["ndcg@5", "map", "r2"], random_state=0)
    assert list(res.columns) == ["fold", "split", "round", "metric", "value", "selected"]
    assert set(res["split"]) == {"train", "valid", "test"}
    assert res["round"].max() == 4 and res["fold"].nunique() == 4
    for (_fold, metric), part in res.groupby(["fold", "metric"]):
        chosen = part[part["selected"]]["round"].unique()
        assert chosen.size == 1
        val = part[part["split"] == "valid"].set_index("round")["value"]
        best = val.idxmin() if metric == "r2" else val.idxmax()
        assert val[chosen[0]] == val[best]
    table = summarize(res)
    assert set(table.columns) == {"ndcg@5", "map", "r2"}


def test_select_by_one_metric_for_all():
    res = cross_validate(lambda: FeaturePrefixRanker(random_state=3), data(), folds=3,
                         metrics=["ndcg@5", "map"], select_by="map", random_state=0)
    for _, part in res.groupby("fold"):
        rounds = part[part["selected"]].groupby("metric")["round"].unique()
        assert rounds["ndcg@5"].tolist() == rounds["map"].tolist()


def test_single_query_task_uses_task_folds():
    rng = np.random.default_rng(1)
    task = RankingData(rng.normal(size=(30, 4)), rng.integers(1, 6, 30), [0, 30])
    res = cross_validate(FeaturePrefixRanker(random_state=0), task, folds=5, metrics=["r1"], random_state=2)
    assert res["fold"].nunique() == 5


def test_grid_is_deterministic_and_independent_of_n_jobs():
    tasks = {"a": data(1), "b": data(2)}
    algos = {"x": lambda: FeaturePrefixRanker(random_state=0),
             "y": lambda: FeaturePrefixRanker(random_state=1)}
    r1 = run_grid(tasks, algos, n_folds=3, metrics=["ndcg@3", "r2"], verbose=False)
    r2 = run_grid(tasks, algos, n_folds=3, metrics=["ndcg@3", "r2"], n_jobs=2, verbose=False)
    pd.testing.assert_frame_equal(r1, r2)
    assert set(r1["task"]) == {"a", "b"} and set(r1["algorithm"]) == {"x", "y"}


def test_grid_on_dask_local_cluster_gives_the_local_results():
    distributed = pytest.importorskip("distributed")
    import joblib

    tasks = {"a": data(1), "b": data(2)}
    algos = {"x": lambda: FeaturePrefixRanker(random_state=0)}
    local = run_grid(tasks, algos, n_folds=3, metrics=["ndcg@3", "map"], verbose=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            remote = run_grid(tasks, algos, n_folds=3, metrics=["ndcg@3", "map"], verbose=False)
    pd.testing.assert_frame_equal(local, remote)


def test_select_rounds_without_validation_takes_last_round():
    curves = pd.DataFrame({"fold": 0, "split": "test", "round": [1, 2, 3], "metric": "map",
                           "value": [0.3, 0.5, 0.4]})
    sel = select_rounds(curves)
    assert sel[sel["selected"]]["round"].tolist() == [3]


def test_select_last_takes_final_round():
    res = cross_validate(lambda: FeaturePrefixRanker(random_state=3), data(), folds=3,
                         metrics=["map"], select_by="last", random_state=0)
    assert (res[res["selected"]]["round"] == 4).all()
