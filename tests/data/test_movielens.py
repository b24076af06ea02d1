"""MovieLens: the u.data reader and the RankBoost+ per-user tasks (Sec. 4)."""

import numpy as np
import pytest

from lrank.data import RankingData
from lrank.data.generators import make_collaborative_filtering
from lrank.data.movielens import MovieLensFormatError, load_movielens, movielens_tasks


def _write_udata(path, R):
    with open(path, "w") as fh:
        for u, m in zip(*np.nonzero(~np.isnan(R))):
            fh.write(f"{u + 1}\t{m + 1}\t{int(R[u, m])}\t{880000000 + u}\n")


def test_load_round_trip(tmp_path):
    R = make_collaborative_filtering(n_users=30, n_movies=40, density=0.3, min_ratings_per_user=5,
                                     random_state=0)
    R[:, -1] = np.nan
    R[-1, -1] = 3  # so the largest ids are in the file
    p = tmp_path / "u.data"
    _write_udata(p, R)
    L = load_movielens(p)
    assert L.shape == R.shape and L.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(L), np.isnan(R))
    np.testing.assert_array_equal(L[~np.isnan(L)], R[~np.isnan(R)])
    assert load_movielens(p, n_users=35, n_movies=50).shape == (35, 50)


@pytest.mark.parametrize(
    "text, match",
    [
        ("1\t1\t5\n", ":1: expected"),
        ("1\t1\t5\t0\n1\t2\tx\t0\n", ":2: expected"),
        ("1\t1\t6\t0\n", ":1: rating 6"),
        ("0\t1\t3\t0\n", ":1: user and item ids"),
        ("1\t1\t3\t0\n2\t2\t3\t0\n1\t1\t4\t0\n", ":3: user 1 rates movie 1 a second time"),
        ("", "no ratings"),
    ],
)
def test_load_errors_name_file_and_line(tmp_path, text, match):
    p = tmp_path / "u.data"
    p.write_text(text)
    with pytest.raises(MovieLensFormatError, match=match) as err:
        load_movielens(p)
    assert str(p) in str(err.value)


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_movielens(tmp_path / "nope")


def _reference_tasks(R, min_ratings, max_missing):
    """Straight from the paper's wording, one loop per user and per feature user."""
    out = []
    for u in range(R.shape[0]):
        movies = [m for m in range(R.shape[1]) if not np.isnan(R[u, m])]
        if len(movies) < min_ratings:
            continue
        feats, names = [], []
        for v in range(R.shape[0]):
            if v == u:
                continue
            col = np.array([R[v, m] for m in movies])
            if np.isnan(col).sum() / len(movies) > max_missing:  # "over 50% missing ratings"
                continue
            feats.append(col)
            names.append(f"u{v + 1}")
        X = np.array(feats).T if feats else np.zeros((len(movies), 0))
        out.append((u + 1, X, R[u, movies], names))
    return out


def test_tasks_match_reference():
    R = make_collaborative_filtering(n_users=40, n_movies=60, density=0.35, min_ratings_per_user=5,
                                     random_state=1)
    tasks = movielens_tasks(R, min_ratings=20, max_missing=0.5)
    ref = [r for r in _reference_tasks(R, 20, 0.5) if r[1].shape[1] > 0]
    assert len(tasks) == len(ref) > 0
    for t, (user, X, y, names) in zip(tasks, ref):
        assert isinstance(t, RankingData) and t.n_queries == 1
        assert t.provenance["user"] == user and t.qid.tolist() == [user]
        assert t.feature_names == names
        np.testing.assert_array_equal(t.y, y.astype(np.int32))
        np.testing.assert_array_equal(np.isnan(t.X), np.isnan(X))
        np.testing.assert_array_equal(t.X[~np.isnan(t.X)], X[~np.isnan(X)].astype(np.float32))


def test_tasks_threshold_is_strictly_over_half():
    nan = np.nan
    R = np.array(
        [
            [5, 4, 3, 2],  # target user 1: 4 movies
            [1, 2, nan, nan],  # 50% missing: kept
            [1, nan, nan, nan],  # 75% missing: dropped
            [nan, nan, nan, nan],  # nothing: dropped
            [2, 2, 2, 2],  # complete: kept
        ]
    )
    tasks = movielens_tasks(R, min_ratings=4)
    assert [x.provenance["user"] for x in tasks] == [1, 5]
    assert tasks.without_features == [] and tasks.n_eligible == 2
    t = tasks[0]
    assert t.feature_names == ["u2", "u5"]
    assert t.n_docs == 4 and t.y.tolist() == [5, 4, 3, 2]
    assert np.isnan(t.X[2, 0]) and t.X[0, 1] == 2
    t0 = movielens_tasks(R, min_ratings=4, max_missing=0.0)[0]
    assert t0.feature_names == ["u5"]


def test_tasks_provenance_merge_and_errors():
    R = np.array([[1.0, 2.0], [3.0, np.nan]])
    (t,) = movielens_tasks(R, min_ratings=2, provenance={"source": "generator", "random_state": 3})
    assert t.provenance["source"] == "generator" and t.provenance["random_state"] == 3
    assert t.provenance["user"] == 1
    with pytest.raises(ValueError, match="integral"):
        movielens_tasks(np.array([[1.5, 2.0]]), min_ratings=1)
    with pytest.raises(ValueError, match="max_missing"):
        movielens_tasks(R, max_missing=1.5)
    with pytest.raises(ValueError, match="2-d"):
        movielens_tasks(np.ones(3))


def test_tasks_on_movielens_shaped_data():
    R = make_collaborative_filtering(random_state=0)
    tasks = movielens_tasks(R)
    assert 250 <= len(tasks) <= 450  # paper: 367 users with >= 100 ratings in ML-100K
    assert all(t.n_docs >= 100 for t in tasks)
    assert all(t.y.min() >= 1 and t.y.max() <= 5 for t in tasks)
    # every kept feature user rated at least half of the task's movies
    for t in tasks[:20]:
        assert (np.isnan(t.X).mean(axis=0) <= 0.5).all()
        folds = t.task_folds(5, random_state=0)
        assert sum(f.test.n_docs for f in folds) == t.n_docs


def test_users_without_feature_users_are_reported_not_dropped():
    """Users 2 and 3 have enough ratings, but nobody else rated half of their movies."""
    nan = np.nan
    R = np.array(
        [
            [5, 4, 3, 2, nan, nan, nan, nan, nan],
            [nan, nan, nan, nan, 1, 2, 3, 4, nan],  # only user 3 rated one of its movies (75% missing)
            [1, nan, nan, nan, nan, nan, nan, 5, 5],  # every other user misses 2 of its 3 movies
            [4, 4, 4, 1, nan, nan, nan, nan, nan],
        ]
    )
    tasks = movielens_tasks(R, min_ratings=3)
    assert [t.provenance["user"] for t in tasks] == [1, 4]
    assert tasks.without_features == [2, 3]
    assert tasks.n_eligible == 4 == len(tasks) + len(tasks.without_features)
    assert all(t.n_features > 0 for t in tasks)
    assert "without feature users: [2, 3]" in repr(tasks)


def test_load_recbole_inter_format(tmp_path):
    p = tmp_path / "ml-100k.inter"
    p.write_text("user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
                 "2\t3\t4\t881250949\n1\t1\t5.0\t881250949\n")
    R = load_movielens(p)
    assert R.shape == (2, 3) and R[1, 2] == 4 and R[0, 0] == 5 and np.isnan(R).sum() == 4
    p.write_text("user_id:token\titem_id:token\trating:float\ttimestamp:float\n1\t1\t4.5\t0\n")
    with pytest.raises(MovieLensFormatError, match=":2: expected"):
        load_movielens(p)
    p.write_text("1\t1\t4\t0\nuser_id:token\titem_id:token\trating:float\ttimestamp:float\n")
    with pytest.raises(MovieLensFormatError, match=":2: expected"):  # a header only on line 1
        load_movielens(p)


def _real_movielens():
    import importlib

    F = importlib.import_module("lrank.data.fetch")
    ds = F.REGISTRY["movielens-100k"]
    for f in (ds.directory / ds.files[0].path, ds.directory / ds.pip_fallback.files[0].path):
        if f.is_file():
            return f
    return None


@pytest.mark.skipif(_real_movielens() is None, reason="MovieLens-100K not fetched here "
                    "(python -m lrank fetch movielens-100k)")
def test_real_movielens_100k_tasks():
    """ML-100K: 364 users with >= 100 ratings; 4 of them keep no feature user after the 50% rule."""
    import lrank.data

    R = lrank.data.fetch("movielens-100k")
    assert R.shape == (943, 1682) and int((~np.isnan(R)).sum()) == 100_000
    tasks = movielens_tasks(R)
    assert tasks.n_eligible == 364
    assert len(tasks) == 360 and len(tasks.without_features) == 4
