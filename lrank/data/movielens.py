"""MovieLens: the ML-100K ratings file and the RankBoost+ paper's per-user ranking tasks.

RankBoost+ (Connamacher et al. 2020), Sec. 4: "Each user induces a separate ranking task using the
movie ratings from other users as features. [...] we only consider users who have rated at least 100
movies [...]. In each such task, we select features a priori by removing other users (features) that
have over 50% missing ratings on the movies in the task under consideration."
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from lrank.data.container import RankingData


class MovieLensFormatError(ValueError):
    """A ratings file that is not ``user<TAB>item<TAB>rating<TAB>timestamp``; names file and line."""


_INTER_HEADER = ("user_id:token", "item_id:token", "rating:float")


def load_movielens(
    path: str | os.PathLike, n_users: int | None = None, n_movies: int | None = None
) -> np.ndarray:
    """Read MovieLens ratings: ML-100K's ``u.data`` or RecBole's ``ml-100k.inter``.

    ``u.data`` lines are ``user item rating timestamp`` (tab separated, ids from 1). RecBole's atomic
    ``.inter`` file (shipped in the ``recbole==1.2.1`` wheel) holds the same rows under the header
    ``user_id:token item_id:token rating:float timestamp:float``; the header is recognised and
    skipped, and ratings written as floats must be integral.

    Parameters
    ----------
    path : path-like
        The ``u.data`` file (or any ``u*.base``/``u*.test`` split in the same format), or a ``.inter``.
    n_users, n_movies : int, optional
        Matrix shape (default: the largest ids in the file; ML-100K has 943 x 1682).

    Returns
    -------
    ndarray of shape (n_users, n_movies), float64
        ``ratings[u - 1, m - 1]`` is user ``u``'s rating of movie ``m``; NaN where unrated.

    Raises
    ------
    MovieLensFormatError
        A line without four fields (user, item and rating integers), an id below 1, a rating outside
        1..5, or a (user, movie) pair rated twice; the message gives ``file:line``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no MovieLens ratings file at {path}")
    rows = []
    with open(path, encoding="latin-1") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            parts = line.split()
            if lineno == 1 and tuple(parts[:3]) == _INTER_HEADER:
                continue  # RecBole's .inter header
            try:
                if len(parts) != 4:
                    raise ValueError
                u, m = int(parts[0]), int(parts[1])
                rf = float(parts[2])
                if rf != int(rf):
                    raise ValueError
                r = int(rf)
            except (ValueError, OverflowError):
                raise MovieLensFormatError(
                    f"{path}:{lineno}: expected 'user<TAB>item<TAB>rating<TAB>timestamp' with integer "
                    f"user, item and rating, got {line.strip()[:80]!r}"
                ) from None
            if u < 1 or m < 1:
                raise MovieLensFormatError(f"{path}:{lineno}: user and item ids start at 1, got {u}, {m}")
            if not 1 <= r <= 5:
                raise MovieLensFormatError(f"{path}:{lineno}: rating {r} is outside 1..5")
            rows.append((u, m, r, lineno))
    if not rows:
        raise MovieLensFormatError(f"{path}: no ratings")
    a = np.asarray(rows, dtype=np.int64)
    nu = int(a[:, 0].max()) if n_users is None else int(n_users)
    nm = int(a[:, 1].max()) if n_movies is None else int(n_movies)
    if a[:, 0].max() > nu or a[:, 1].max() > nm:
        raise MovieLensFormatError(f"{path}: ids exceed the requested shape ({nu} users x {nm} movies)")
    flat = (a[:, 0] - 1) * nm + (a[:, 1] - 1)
    order = np.argsort(flat, kind="stable")
    dup = np.flatnonzero(flat[order][1:] == flat[order][:-1])
    if dup.size:
        first = order[dup[0] + 1]
        u, m, _, lineno = a[first]
        raise MovieLensFormatError(f"{path}:{lineno}: user {u} rates movie {m} a second time")
    ratings = np.full((nu, nm), np.nan)
    ratings[a[:, 0] - 1, a[:, 1] - 1] = a[:, 2]
    return ratings


class MovieLensTasks(list):
    """The list of per-user tasks that have at least one feature user, plus what was left out.

    A plain ``list`` of `RankingData` (one single-query task per target user) with two attributes:

    Attributes
    ----------
    without_features : list of int
        Target users (1-based ids) with at least ``min_ratings`` ratings whose tasks keep no feature
        user after the ``max_missing`` rule (ML-100K: 4 of its 364 users). They are not in the list
        (no ranker can learn from zero features), but they are counted here, never dropped silently.
    n_eligible : int
        Users with at least ``min_ratings`` ratings: ``len(self) + len(self.without_features)``.
    """

    without_features: list[int]
    n_eligible: int

    def __init__(self, tasks: list[RankingData], without_features: list[int], n_eligible: int):
        super().__init__(tasks)
        self.without_features = list(without_features)
        self.n_eligible = int(n_eligible)

    def __repr__(self) -> str:
        return (f"MovieLensTasks({len(self)} tasks of {self.n_eligible} eligible users; "
                f"without feature users: {self.without_features})")


def movielens_tasks(
    ratings: np.ndarray,
    min_ratings: int = 100,
    max_missing: float = 0.5,
    provenance: dict | None = None,
) -> MovieLensTasks:
    """One single-query ranking task per target user (RankBoost+ Sec. 4).

    For every user ``u`` with at least ``min_ratings`` ratings: the instances are the movies ``u``
    rated (in movie-id order), the label is ``u``'s rating, and the features are the other users'
    ratings of those movies (NaN where unrated). Feature users missing more than ``max_missing`` of
    the task's movies are dropped (``max_missing=0.5``: "over 50% missing ratings").

    Parameters
    ----------
    ratings : ndarray of shape (n_users, n_movies)
        NaN = unrated (as :func:`load_movielens` or
        :func:`lrank.data.generators.make_collaborative_filtering` return).
    min_ratings : int
    max_missing : float in [0, 1]
    provenance : dict, optional
        Merged into every task's ``provenance`` (say where ``ratings`` came from).

    Returns
    -------
    MovieLensTasks
        A list of `RankingData`, users in increasing id order, holding every eligible user whose task
        keeps at least one feature user; the eligible users whose task keeps none are listed in
        ``.without_features`` (1-based ids) and ``.n_eligible`` counts all eligible users (ML-100K:
        364 eligible, 360 tasks, 4 without features). Each task's ``qid`` is ``[user]`` (1-based) and
        its ``provenance`` records ``user``, ``min_ratings``, ``max_missing`` and
        ``n_candidate_features``; feature names are ``"u<id>"`` of the kept feature users.
    """
    R = np.asarray(ratings, dtype=np.float64)
    if R.ndim != 2:
        raise ValueError(f"ratings must be a 2-d users x movies matrix, got shape {R.shape}")
    if not 0.0 <= max_missing <= 1.0:
        raise ValueError(f"max_missing must be in [0, 1], got {max_missing}")
    known = ~np.isnan(R)
    vals = R[known]
    if vals.size and ((vals != np.round(vals)).any() or np.isinf(vals).any()):
        raise ValueError("ratings must be integral (NaN = unrated)")
    counts = known.sum(axis=1)
    targets = np.flatnonzero(counts >= min_ratings)
    K = known.astype(np.float64)
    # co[i, v]: movies rated by both target i and user v (exact integers in float64)
    co = K[targets] @ K.T if targets.size else np.zeros((0, R.shape[0]))
    base = dict(provenance or {})
    base.setdefault("source", "movielens")
    tasks = []
    empty = []
    for i, u in enumerate(targets):
        movies = np.flatnonzero(known[u])
        n_u = movies.size
        missing = (n_u - co[i]) / n_u  # share of u's movies that user v did not rate
        keep = missing <= max_missing
        keep[u] = False  # the target user is the label, never a feature
        users = np.flatnonzero(keep)
        if users.size == 0:
            empty.append(int(u + 1))
            continue
        X = R[np.ix_(users, movies)].T  # (movies of u) x (kept feature users)
        names = [f"u{v + 1}" for v in users]
        others = R.shape[0] - 1
        prov = dict(
            base, user=int(u + 1), min_ratings=min_ratings, max_missing=max_missing,
            n_candidate_features=others,
        )
        tasks.append(
            RankingData(X, R[u, movies], np.array([0, movies.size]), qid=np.array([u + 1]),
                        feature_names=names, provenance=prov)
        )
    return MovieLensTasks(tasks, empty, targets.size)
