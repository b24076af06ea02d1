"""RankBoost paper Sec. 6.2.3 baselines: regression, nearest neighbour, VSIM; the movie-task protocol."""

import numpy as np
import pytest

from lrank.baselines import VSIM, NearestNeighbourRanker, RegressionRanker
from lrank.papers.rankboost import evaluate_task, movie_task


def _ratings(seed=0, users=40, movies=30, density=0.5):
    rng = np.random.default_rng(seed)
    R = rng.integers(1, 6, size=(users, movies)).astype(float)
    R[rng.random(R.shape) > density] = np.nan
    R[0, :12] = np.arange(12) % 5 + 1  # the target rates 12 movies
    R[0, 12:] = np.nan
    return R


def test_regression_is_minimum_norm_least_squares():
    rng = np.random.default_rng(1)
    X = rng.integers(1, 6, size=(6, 10)).astype(float)  # more viewers than movies: many solutions
    X[0, 3] = np.nan
    y = rng.integers(1, 6, size=6)
    means = np.nanmean(X, 0) + 0.25
    m = RegressionRanker(feature_means=means).fit(X, y, group=[6])
    C = np.where(np.isnan(X), means, X)
    np.testing.assert_allclose(m.coef_, np.linalg.pinv(C) @ y, atol=1e-10)
    np.testing.assert_allclose(m.predict(X), C @ m.coef_, atol=1e-12)
    np.testing.assert_allclose(m.predict(X), y, atol=1e-8)  # under-determined: exact fit


def test_nearest_neighbour_finds_the_identical_viewer_and_q_def():
    y = np.array([5, 4, 3, 2, 1, 5, 1])
    X = np.full((7, 3), np.nan)
    X[:, 0] = [1, 2, 3, 4, 5, 1, 5]  # reversed
    X[:, 1] = [5, 4, 3, 2, 1, np.nan, np.nan]  # agrees, misses two movies (one good, one bad)
    X[:, 2] = [2, 2, 2, 2, 2, 2, 2]
    m = NearestNeighbourRanker().fit(X, y, group=[7])
    assert m.feature_ == 1
    # missing movies rated 5 and 1: any q_def gives the same loss on them -> smallest such q
    s = m.predict(X)
    assert np.all(np.diff(s[:5]) < 0)
    # brute-force check of the loss minimisation over q
    from lrank.baselines.collaborative import _rloss_candidates
    from lrank.data.container import RankingData

    p = RankingData(X, y, np.array([0, 7])).pairs("uniform")
    grid = np.linspace(-1, 7, 161)
    assert abs(_rloss_candidates(X[:, 1], p.hi, p.lo, p.weight, grid).min() - m.train_loss_) < 1e-12


def test_vsim_formula():
    rng = np.random.default_rng(2)
    X = rng.integers(1, 6, size=(8, 4)).astype(float)
    X[rng.random(X.shape) < 0.3] = np.nan
    y = rng.integers(1, 6, size=8).astype(float)
    m = VSIM().fit(X, y, group=[8])
    w = np.array([np.nansum(X[:, i] * y) / (np.linalg.norm(y) * np.sqrt(np.nansum(X[:, i] ** 2)))
                  for i in range(4)])
    np.testing.assert_allclose(m.weights_, w, atol=1e-12)
    mu = np.nanmean(X, 0)
    pred = y.mean() + (np.where(np.isnan(X), 0, X - mu) @ w) / np.abs(w).sum()
    np.testing.assert_allclose(m.predict(X), pred, atol=1e-12)


def test_movie_task_split_and_protocol():
    R = _ratings()
    task = movie_task(R, 0, np.arange(1, 40), random_state=0)
    assert task.train.n_docs == 6 and task.test.n_docs == 6
    assert task.train.n_features == 39
    np.testing.assert_allclose(task.feature_means, np.nanmean(R[1:], 1))
    res = evaluate_task(task, n_estimators=5)
    assert set(res) == {"RankBoost", "Regression", "NN", "VSIM"}
    for d in res.values():
        assert 0 <= d["disagreement"] <= 1 and 0 < d["ap"] <= 1
    with pytest.raises(ValueError, match="target"):
        movie_task(R, 0, [0, 1])
    again = evaluate_task(movie_task(R, 0, np.arange(1, 40), random_state=0), n_estimators=5)
    assert again == res


@pytest.mark.parametrize("cls", [RegressionRanker, NearestNeighbourRanker, VSIM])
def test_one_shot_contract(cls):
    R = _ratings(3)
    task = movie_task(R, 0, np.arange(1, 40), random_state=0)
    m = cls().fit(task.train)
    assert m.n_iter_ == 1 and m.best_iteration_ is None and m.stop_reason_
    np.testing.assert_array_equal(m.predict(task.test.X, num_iteration=1), m.predict(task.test.X))
    np.testing.assert_array_equal(m.predict(task.test.X, num_iteration=0), np.zeros(task.test.n_docs))
    with pytest.raises(ValueError, match="feature_means"):
        cls(feature_means="abc").fit(task.train)
