"""cross_validate / run_grid: curves per round, selection on validation, identical results on Dask."""

import numpy as np
import pandas as pd
import pytest

from lrank.data import RankingData
from lrank.experiments import NO_FEATURES, cross_validate, run_grid, select_rounds, summarize
from lrank.models._base import BaseRanker


class FeaturePrefixRanker(BaseRanker):
    """Test double following the estimator contract: round r scores with the sum of the first r
    features (weights drawn from the seed). ``halt_at=0`` stops before the first round (as Rb-d does
    with eps- = 0); ``best`` sets ``best_iteration_`` (as early stopping would)."""

    def __init__(self, n_estimators=4, random_state=None, halt_at=None, best=None):
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.halt_at = halt_at
        self.best = best

    def fit(self, X, y=None, *, qid=None, group=None, eval_set=None):
        data = self._ranking_data(X, y, qid, group)
        rng = np.random.default_rng(self.random_state)
        n = min(self.n_estimators, data.n_features)
        if self.halt_at is not None:
            n = min(n, self.halt_at)
        self.w_ = rng.normal(size=n)
        self.n_iter_ = n
        self.best_iteration_ = self.best
        self.stop_reason_ = "halted: eps- = 0" if self.halt_at is not None else "n_estimators reached"
        return self

    def staged_predict(self, X):
        X = self._features(X)
        s = np.zeros(X.shape[0])
        for r in range(self.n_iter_):
            s = s + self.w_[r] * X[:, r]
            yield s.copy()

    def predict(self, X, num_iteration=None):
        k = self._num_iteration(num_iteration)
        X = self._features(X)
        return X[:, :k] @ self.w_[:k]


class NoStagedRanker(FeaturePrefixRanker):
    """Has only ``predict(X, num_iteration=k)``: cv scores each k."""

    staged_predict = property()  # hasattr() is False

    def __getattribute__(self, name):
        if name == "staged_predict":
            raise AttributeError(name)
        return super().__getattribute__(name)


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
    assert list(res.columns) == ["fold", "split", "round", "metric", "value", "selected", "stop_reason"]
    assert (res["stop_reason"] == "n_estimators reached").all()
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


def test_grid_on_dask_local_cluster_gives_the_local_results(monkeypatch):
    """run_grid(scheduler=address) and $LRANK_DASK_SCHEDULER run the grid on Dask, same numbers."""
    distributed = pytest.importorskip("distributed")
    import joblib

    tasks = {"a": data(1), "b": data(2)}
    algos = {"x": lambda: FeaturePrefixRanker(random_state=0), "y": FeaturePrefixRanker(random_state=5)}
    kw = dict(n_folds=3, metrics=["ndcg@3", "map"], verbose=False)
    local = run_grid(tasks, algos, **kw)
    seen = []
    original = joblib.parallel_config

    def spy(*args, **kwargs):
        seen.append(kwargs.get("backend"))
        return original(*args, **kwargs)

    monkeypatch.setattr(joblib, "parallel_config", spy)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        by_argument = run_grid(tasks, algos, scheduler=cluster.scheduler_address, n_jobs=2, **kw)
        monkeypatch.setenv("LRANK_DASK_SCHEDULER", cluster.scheduler_address)
        by_env = run_grid(tasks, algos, n_jobs=2, **kw)
        with distributed.Client(cluster) as client:
            before = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.transition_log))
            by_client = run_grid(tasks, algos, scheduler=client, **kw)  # n_jobs=1: still on the cluster
            after = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.transition_log))
            assert after > before
    assert seen == ["dask", "dask", "dask"]
    for remote in (by_argument, by_env, by_client):
        pd.testing.assert_frame_equal(local, remote)


def test_unreachable_scheduler_is_a_clear_error(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setenv("LRANK_DASK_TIMEOUT", "1s")
    with pytest.raises(OSError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:1'"):
        run_grid({"a": data(1)}, {"x": FeaturePrefixRanker()}, n_folds=3, verbose=False,
                 scheduler="tcp://127.0.0.1:1")


def test_a_model_that_stops_at_round_zero_keeps_its_fold():
    """Rb-d halting with eps- = 0 at round 1 has n_iter_ = 0: the fold is the constant model."""
    d = data(3)
    res = cross_validate(lambda: FeaturePrefixRanker(random_state=0, halt_at=0), d, folds=5,
                         metrics=["ndcg@5", "r2"], random_state=0)
    assert sorted(res["fold"].unique()) == [0, 1, 2, 3, 4]
    assert (res["round"] == 0).all() and res["selected"].all()
    assert (res["stop_reason"] == "halted: eps- = 0").all()
    from lrank.metrics import evaluate

    folds = d.kfold(5, 0)
    for f, fold in enumerate(folds):
        const = evaluate(fold.test.y, np.zeros(fold.test.n_docs), fold.test.qptr, ["ndcg@5", "r2"])
        got = res[(res["fold"] == f) & (res["split"] == "test")].set_index("metric")["value"]
        assert got["ndcg@5"] == const["ndcg@5"] and got["r2"] == const["r2"]
    # in a grid beside a model that trains, every fold of both is there
    grid = run_grid({"t": d}, {"halt": FeaturePrefixRanker(halt_at=0), "ok": FeaturePrefixRanker()},
                    n_folds=5, metrics=["r2"], verbose=False)
    assert grid.groupby("algorithm")["fold"].nunique().to_dict() == {"halt": 5, "ok": 5}
    assert set(grid[grid["algorithm"] == "ok"]["round"]) == {1, 2, 3, 4}


def test_tasks_without_features_are_counted_not_dropped():
    rng = np.random.default_rng(0)
    full = RankingData(rng.normal(size=(30, 3)), rng.integers(1, 6, 30), [0, 30])
    empty = RankingData(np.zeros((25, 0)), rng.integers(1, 6, 25), [0, 25])
    res = cross_validate(FeaturePrefixRanker(), empty, folds=5, metrics=["r1"], random_state=0)
    assert res["fold"].nunique() == 5 and (res["round"] == 0).all()
    assert (res["stop_reason"] == NO_FEATURES).all()
    with pytest.warns(UserWarning, match="1 of 2 tasks have no feature and are not run: e"):
        rep = run_grid({"f": full, "e": empty}, {"x": FeaturePrefixRanker()}, metrics=["r1"],
                       verbose=False)
    assert set(rep["task"]) == {"f"} and rep.attrs["empty_tasks"] == ["e"]
    const = run_grid({"f": full, "e": empty}, {"x": FeaturePrefixRanker()}, metrics=["r1"],
                     verbose=False, empty_tasks="constant")
    assert const[const["task"] == "e"]["fold"].nunique() == 5
    assert const.attrs["empty_tasks"] == ["e"]
    with pytest.raises(ValueError, match="empty_tasks"):
        run_grid({"f": full}, {"x": FeaturePrefixRanker()}, empty_tasks="drop")


def test_last_selects_the_round_predict_uses_and_num_iteration_fallback():
    d = data(4)
    res = cross_validate(lambda: FeaturePrefixRanker(random_state=3, best=2), d, folds=3,
                         metrics=["map"], select_by="last", random_state=0)
    assert (res[res["selected"]]["round"] == 2).all() and res["round"].max() == 4
    a = cross_validate(lambda: FeaturePrefixRanker(random_state=3), d, folds=3, metrics=["map", "r2"],
                       random_state=0)
    b = cross_validate(lambda: NoStagedRanker(random_state=3), d, folds=3, metrics=["map", "r2"],
                       random_state=0)
    assert not hasattr(NoStagedRanker(), "staged_predict")
    pd.testing.assert_frame_equal(a, b)


def test_select_rounds_without_validation_takes_last_round():
    curves = pd.DataFrame({"fold": 0, "split": "test", "round": [1, 2, 3], "metric": "map",
                           "value": [0.3, 0.5, 0.4]})
    sel = select_rounds(curves)
    assert sel[sel["selected"]]["round"].tolist() == [3]


def test_select_last_takes_final_round():
    res = cross_validate(lambda: FeaturePrefixRanker(random_state=3), data(), folds=3,
                         metrics=["map"], select_by="last", random_state=0)
    assert (res[res["selected"]]["round"] == 4).all()


def test_a_model_without_n_iter_that_yields_no_round_keeps_its_fold():
    class Legacy(FeaturePrefixRanker):
        def fit(self, X, y=None, **kw):
            super().fit(X, y, **kw)
            del self.n_iter_
            self.w_ = self.w_[:0]
            return self

        def staged_predict(self, X):
            yield from ()

    res = cross_validate(Legacy(), data(5), folds=3, metrics=["map"], random_state=0)
    assert res["fold"].nunique() == 3 and (res["round"] == 0).all() and res["selected"].all()
