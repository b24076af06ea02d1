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


# --------------------------------------------------- the same scores and choices on every CPU
EPS = np.finfo(np.float64).eps


def _regression_task(seed, n=30, F=80, n_test=57, missing=0.6):
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 6, size=(n, F)).astype(float)
    X[rng.random(X.shape) < missing] = np.nan
    y = rng.integers(1, 6, size=n)
    T = rng.integers(1, 6, size=(n_test, F)).astype(float)
    T[rng.random(T.shape) < missing] = np.nan
    return X, y, T


@pytest.mark.parametrize("seed", range(4))
def test_regression_scores_identical_rows_alike(seed):
    # BLAS's matrix-vector product scored identical rows differently in the last bit (blocks and a
    # remainder loop), and the paper's measures count a tie as half a misordered pair
    X, y, T = _regression_task(seed)
    same = [3, 17, 30, 41, 56]
    T[same] = T[3]
    s = RegressionRanker().fit(X, y, group=[len(y)]).predict(T)
    assert np.ptp(s[same]) == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_regression_equal_scores_of_different_rows_are_ties(seed):
    # viewers 0 and 1 rate the training movies alike, so the minimum-norm weights are equal and swapping
    # their ratings of a test movie leaves its score unchanged in exact arithmetic (not in floating point)
    X, y, T = _regression_task(seed)
    X[:, 1] = X[:, 0]
    T[:, 0], T[:, 1] = 2.0, 5.0
    T[1::2, 0], T[1::2, 1] = 5.0, 2.0
    m = RegressionRanker(feature_means=np.full(X.shape[1], 3.0)).fit(X, y, group=[len(y)])
    assert m.coef_[0] == pytest.approx(m.coef_[1], rel=1e-9)
    swapped = T.copy()
    swapped[:, [0, 1]] = T[:, [1, 0]]
    s = m.predict(np.vstack([T, swapped]))
    np.testing.assert_array_equal(s[len(T):], s[:len(T)])


def test_regression_rank_does_not_depend_on_rounding_zeros():
    # an exactly rank-deficient design (viewer 2 = viewer 0 + viewer 1): one singular value is 0 in exact
    # arithmetic and comes out near 1e-16 here; another BLAS may leave 1e-13 (still rounding). Both must be
    # zero for the solve: numpy's default cutoff (eps * max(m, n)) kept the 1e-13 one and the solution
    # jumped
    rng = np.random.default_rng(3)
    X = rng.integers(1, 6, size=(12, 6)).astype(float)
    X[:, 2] = X[:, 0] + X[:, 1]
    y = rng.integers(1, 6, size=12)
    u, sv, vt = np.linalg.svd(X, full_matrices=False)
    sv[-1] = 1e-13 * sv[0]  # the rounding zero of another CPU
    X2 = (u * sv) @ vt
    from lrank.baselines.collaborative import min_norm_lstsq

    w1, w2 = min_norm_lstsq(X, y), min_norm_lstsq(X2, y)
    np.testing.assert_allclose(w2, w1, atol=1e-6 * np.abs(w1).max())
    np.testing.assert_allclose(RegressionRanker().fit(X, y, group=[12]).coef_, w1, atol=1e-12)


def test_merge_near_ties():
    from lrank.baselines.collaborative import merge_near_ties

    s = np.array([1.0, 2.0, 1.0 + 4 * EPS, 3.0, 2.0 - 2 * EPS, np.nan, 1.0 + 1e-6])
    out = merge_near_ties(s)
    np.testing.assert_array_equal(out[[0, 2]], [1.0, 1.0])
    np.testing.assert_array_equal(out[[1, 4]], [2.0 - 2 * EPS] * 2)  # the smallest of the run
    assert out[3] == 3.0 and out[6] == 1.0 + 1e-6 and np.isnan(out[5])


def test_nearest_neighbour_near_tie_keeps_the_first_viewer(monkeypatch):
    # two viewers whose training losses are equal up to the last bits: the first one wins on every CPU
    from lrank.baselines import collaborative as co

    y = np.array([5, 4, 3, 2, 1])
    X = np.c_[y, y, y].astype(float)
    def fake(losses):
        calls = iter(range(3))
        return lambda x, hi, lo, w, cand: np.full(cand.size, losses[next(calls)])

    monkeypatch.setattr(co, "_rloss_candidates", fake({0: 0.3, 1: 0.3 - 2 * EPS, 2: 0.3 + 1e-6}))
    assert co.NearestNeighbourRanker().fit(X, y, group=[5]).feature_ == 0
    monkeypatch.setattr(co, "_rloss_candidates", fake({0: 0.3, 1: 0.3 - 1e-6, 2: 0.3}))
    assert co.NearestNeighbourRanker().fit(X, y, group=[5]).feature_ == 1  # a real difference still wins
