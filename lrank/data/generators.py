"""Synthetic data sets, each seeded and recorded in ``provenance``.

* :func:`make_letor_like`: queries with graded labels from a latent relevance; features are noisy
  monotone transforms of it, some are pure noise, some values missing (the LETOR / MSLR shape).
* :func:`make_collaborative_filtering`: a users x movies matrix of ratings 1..5 from a low-rank model
  with popularity-skewed missingness (the shape of MovieLens 100K and EachMovie; the quick-profile
  substitute for them, since GroupLens forbids redistribution and EachMovie is retired).
* :func:`make_bipartite`: queries with 0/1 labels (RankBoost.B's bipartite feedback).
* :func:`subset_lattice`: the RankBoost+ paper's Prop. 1 instance (the subsets of {a, b, c} ordered
  by strict inclusion) as weighted pair feedback.

Same ``random_state`` gives bit-identical output (NumPy's ``default_rng``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
from scipy.special import ndtri

from lrank.data.container import RankingData

#: Approximate share of the ratings 1..5 in MovieLens 100K (about 6%, 11%, 27%, 34%, 21% of 100,000).
ML100K_RATING_SHARES: tuple[float, ...] = (0.0611, 0.1137, 0.2715, 0.3417, 0.2120)


def _rng(random_state: Any) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        raise TypeError("pass an integer seed (or None), so the seed can be recorded in provenance")
    return np.random.default_rng(random_state)


def _provenance(generator: str, random_state: Any, **params: Any) -> dict:
    return {"source": "generator", "generator": generator, "params": params, "random_state": random_state}


def _query_sizes(
    rng: np.random.Generator, n_queries: int, docs_per_query: int | tuple[int, int],
    name: str = "docs_per_query",
) -> np.ndarray:
    """Documents per query: ``docs_per_query`` for every query, or drawn uniformly from ``(lo, hi)``;
    ``name`` is the caller's parameter, for the error message."""
    if isinstance(docs_per_query, (int, np.integer)):
        if docs_per_query < 1:
            raise ValueError(f"{name} must be >= 1, got {docs_per_query}")
        return np.full(n_queries, int(docs_per_query), dtype=np.int64)
    lo, hi = docs_per_query
    if not 1 <= lo <= hi:
        raise ValueError(f"{name}=(lo, hi) needs 1 <= lo <= hi, got {docs_per_query}")
    return rng.integers(lo, hi, size=n_queries, endpoint=True).astype(np.int64)


# Monotone increasing transforms applied to informative features (the "noisy monotone transforms").
_TRANSFORMS = (
    lambda z: z,
    lambda z: np.exp(0.5 * z),
    np.tanh,
    lambda z: 1.0 / (1.0 + np.exp(-2.0 * z)),
    np.cbrt,
    lambda z: np.log1p(np.exp(z)),
)


def make_letor_like(
    n_queries: int = 100,
    docs_per_query: int | tuple[int, int] = (20, 200),
    n_features: int = 46,
    n_grades: int = 3,
    missing_rate: float = 0.0,
    noise: float = 1.0,
    n_informative: int | None = None,
    random_state: int | None = None,
) -> RankingData:
    """Queries with graded labels ``0..n_grades-1`` from a latent relevance (LETOR-like).

    Each document has a latent relevance ``r = mu_q + z`` (``mu_q ~ N(0, 0.5^2)`` per query,
    ``z ~ N(0, 1)``). Labels cut ``r`` at fixed normal quantiles so that grade ``k`` has prior share
    proportional to ``2^-k`` (most documents irrelevant, as in LETOR). An informative feature is
    ``g(a * r + noise * e)`` with a random monotone ``g``, slope ``a ~ U(0.2, 1)`` and ``e ~ N(0, 1)``;
    the others are pure noise. Informative and noise features are shuffled; their positions are in
    ``provenance["informative_features"]``. Each value is then missing (NaN) with probability
    ``missing_rate``.

    Parameters
    ----------
    n_queries : int, default 100
        Number of queries (>= 1).
    docs_per_query : int or (lo, hi), default (20, 200)
        Documents per query (>= 1), fixed or drawn uniformly from ``lo..hi`` (inclusive).
    n_features : int, default 46
        46 as MQ2007/MQ2008.
    n_grades : int, default 3
        Number of relevance grades (>= 2); 3 as LETOR 4.0, 5 as MSLR.
    missing_rate : float in [0, 1), default 0.0
        Probability that a feature value is NaN.
    noise : float >= 0, default 1.0
        Standard deviation of the feature noise (relative to the latent relevance's ~1).
    n_informative : int, optional
        Informative features, ``0..n_features`` (None: ``round(0.75 * n_features)``).
    random_state : int, optional
        Seed of NumPy's ``default_rng`` (None: fresh entropy); recorded in ``provenance``. A
        ``Generator`` is refused, since it cannot be recorded.

    Returns
    -------
    RankingData
    """
    if n_queries < 1 or n_features < 1:
        raise ValueError("n_queries and n_features must be >= 1")
    if n_grades < 2:
        raise ValueError(f"n_grades must be >= 2, got {n_grades}")
    if not 0.0 <= missing_rate < 1.0:
        raise ValueError(f"missing_rate must be in [0, 1), got {missing_rate}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    n_inf = int(round(0.75 * n_features)) if n_informative is None else int(n_informative)
    if not 0 <= n_inf <= n_features:
        raise ValueError(f"n_informative must be in 0..n_features, got {n_inf}")
    rng = _rng(random_state)
    sizes = _query_sizes(rng, n_queries, docs_per_query)
    n = int(sizes.sum())
    mu = rng.normal(0.0, 0.5, size=n_queries)
    r = np.repeat(mu, sizes) + rng.standard_normal(n)
    # grade shares proportional to 2^-k; cut points are quantiles of r's marginal N(0, 1.25)
    share = 0.5 ** np.arange(n_grades)
    share /= share.sum()
    cuts = np.sqrt(1.25) * ndtri(np.cumsum(share)[:-1])
    y = np.searchsorted(cuts, r).astype(np.int32)
    X = rng.standard_normal((n, n_features))
    slopes = rng.uniform(0.2, 1.0, size=n_inf)
    which = rng.integers(0, len(_TRANSFORMS), size=n_inf)
    for j in range(n_inf):
        X[:, j] = _TRANSFORMS[which[j]](slopes[j] * r + noise * X[:, j])
    perm = rng.permutation(n_features)
    X = X[:, perm]
    informative = np.sort(np.flatnonzero(perm < n_inf))
    if missing_rate > 0:
        X[rng.random(X.shape) < missing_rate] = np.nan
    prov = _provenance(
        "make_letor_like", random_state, n_queries=n_queries, docs_per_query=docs_per_query,
        n_features=n_features, n_grades=n_grades, missing_rate=missing_rate, noise=noise,
        n_informative=n_inf,
    )
    prov["informative_features"] = informative.tolist()
    return RankingData(X, y, np.r_[0, np.cumsum(sizes)], provenance=prov)


def make_collaborative_filtering(
    n_users: int = 943,
    n_movies: int = 1682,
    n_factors: int = 5,
    density: float = 0.063,
    noise: float = 0.5,
    activity_sigma: float = 1.0,
    popularity_sigma: float = 1.3,
    min_ratings_per_user: int = 20,
    rating_shares: tuple[float, ...] = ML100K_RATING_SHARES,
    random_state: int | None = None,
    return_provenance: bool = False,
) -> np.ndarray | tuple[np.ndarray, dict]:
    """A users x movies rating matrix with the shape of MovieLens 100K / EachMovie.

    Preferences follow a low-rank model ``s[u, m] = b_u + c_m + <p_u, q_m> / sqrt(k) + noise * e``
    (all terms standard normal draws). Which entries are observed is popularity skewed and user
    skewed, as in real rating data: ``P(observed) = min(1, t * a_u * w_m)`` with log-normal user
    activity ``a_u`` and movie popularity ``w_m``, ``t`` set by bisection to the requested
    ``density``; every user gets at least ``min_ratings_per_user`` ratings (MovieLens 100K keeps only
    users with >= 20). The observed scores are cut at their empirical quantiles so the ratings 1..5
    have the shares ``rating_shares`` (default: about MovieLens 100K's).

    Parameters
    ----------
    n_users : int, default 943
        Rows (>= 1); 943 as MovieLens 100K.
    n_movies : int, default 1682
        Columns (>= 1); 1682 as MovieLens 100K.
    n_factors : int, default 5
        Rank ``k`` of the preference model (>= 1).
    density : float in (0, 1], default 0.063
        Target share of observed entries before the ``min_ratings_per_user`` top-up (MovieLens 100K:
        100,000 of 943 x 1682, about 0.063).
    noise : float, default 0.5
        Scale of the noise ``e`` added to the preferences.
    activity_sigma : float, default 1.0
        Standard deviation of ``log a_u`` (user activity skew; 0: every user alike).
    popularity_sigma : float, default 1.3
        Standard deviation of ``log w_m`` (movie popularity skew; 0: every movie alike).
    min_ratings_per_user : int, default 20
        Each user with fewer observed entries gets more, drawn without replacement with probability
        proportional to popularity (``0..n_movies``; 0: no top-up).
    rating_shares : sequence of float, optional
        Non-negative shares of the ratings ``1..K``, ``K = len(rating_shares) >= 2`` (normalised to sum
        to 1); default ``ML100K_RATING_SHARES``, MovieLens 100K's shares of 1..5.
    random_state : int, optional
        Seed of NumPy's ``default_rng`` (None: fresh entropy). A ``Generator`` is refused.
    return_provenance : bool, default False
        Also return the provenance dict.

    Returns
    -------
    ratings : ndarray of shape (n_users, n_movies), float64
        Ratings ``1..K`` (1..5 by default), NaN where unrated.
    provenance : dict
        Only with ``return_provenance=True``: generator name, parameters, seed.
    """
    if n_users < 1 or n_movies < 1 or n_factors < 1:
        raise ValueError("n_users, n_movies and n_factors must be >= 1")
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1], got {density}")
    shares = np.asarray(rating_shares, dtype=np.float64)
    if shares.ndim != 1 or shares.size < 2 or (shares < 0).any() or shares.sum() <= 0:
        raise ValueError("rating_shares must be non-negative shares of ratings 1..K")
    if not 0 <= min_ratings_per_user <= n_movies:
        raise ValueError("min_ratings_per_user must be in 0..n_movies")
    rng = _rng(random_state)
    P = rng.standard_normal((n_users, n_factors))
    Q = rng.standard_normal((n_movies, n_factors))
    b_user = rng.standard_normal(n_users)
    b_movie = rng.standard_normal(n_movies)
    score = b_user[:, None] + b_movie[None, :] + (P @ Q.T) / np.sqrt(n_factors)
    score += noise * rng.standard_normal((n_users, n_movies))
    activity = np.exp(activity_sigma * rng.standard_normal(n_users))
    popularity = np.exp(popularity_sigma * rng.standard_normal(n_movies))
    base = np.outer(activity, popularity)
    flat = np.sort(base.ravel())
    csum = np.r_[0.0, np.cumsum(flat)]

    def mean_prob(t: float) -> float:  # mean(min(1, t * base)) from the sorted values, O(log n)
        k = np.searchsorted(flat, 1.0 / t)
        return (t * csum[k] + (flat.size - k)) / flat.size

    lo, hi = 0.0, 1.0 / flat[0]
    for _ in range(200):  # bisection on the scale t
        mid = 0.5 * (lo + hi)
        if mean_prob(mid) < density:
            lo = mid
        else:
            hi = mid
    observed = rng.random((n_users, n_movies)) < np.minimum(1.0, hi * base)
    counts = observed.sum(axis=1)
    for u in np.flatnonzero(counts < min_ratings_per_user):
        free = np.flatnonzero(~observed[u])
        w = popularity[free] / popularity[free].sum()
        extra = rng.choice(free, size=min_ratings_per_user - counts[u], replace=False, p=w)
        observed[u, extra] = True
    vals = score[observed]
    cuts = np.quantile(vals, np.cumsum(shares / shares.sum())[:-1])
    ratings = np.full((n_users, n_movies), np.nan)
    ratings[observed] = 1.0 + np.searchsorted(cuts, vals, side="right")
    if return_provenance:
        prov = _provenance(
            "make_collaborative_filtering", random_state, n_users=n_users, n_movies=n_movies,
            n_factors=n_factors, density=density, noise=noise, activity_sigma=activity_sigma,
            popularity_sigma=popularity_sigma, min_ratings_per_user=min_ratings_per_user,
            rating_shares=tuple(float(s) for s in shares),
        )
        return ratings, prov
    return ratings


def make_bipartite(
    n_queries: int = 10,
    n_good: int | tuple[int, int] = 5,
    n_bad: int | tuple[int, int] = 20,
    n_features: int = 10,
    separation: float = 1.0,
    n_informative: int | None = None,
    random_state: int | None = None,
) -> RankingData:
    """Queries with 0/1 labels (bipartite feedback, RankBoost Sec. 3.3 / RankBoost.B).

    Per query, ``n_good`` documents with label 1 and ``n_bad`` with label 0 (each an int or an
    inclusive range ``(lo, hi)``); good documents come first. Features are ``N(0, 1)``; the informative
    ones (default half, at random positions listed in ``provenance["informative_features"]``) are
    shifted by ``separation * a_j`` (``a_j ~ U(0.5, 1)``) for good documents.

    Parameters
    ----------
    n_queries : int, default 10
        Number of queries (>= 1).
    n_good : int or (lo, hi), default 5
        Relevant (label 1) documents per query, fixed or drawn uniformly from ``lo..hi`` (inclusive);
        at least 1.
    n_bad : int or (lo, hi), default 20
        Non-relevant (label 0) documents per query, as ``n_good``; at least 1.
    n_features : int, default 10
        Number of features (>= 1).
    separation : float, default 1.0
        Scale of the good documents' shift on the informative features (0: labels and features
        independent).
    n_informative : int, optional
        Informative features, ``0..n_features`` (None: ``n_features // 2``).
    random_state : int, optional
        Seed of NumPy's ``default_rng`` (None: fresh entropy); recorded in ``provenance``. A
        ``Generator`` is refused.

    Returns
    -------
    RankingData
        Good documents first in each query; ``provenance["informative_features"]`` lists the informative
        columns.
    """
    if n_queries < 1 or n_features < 1:
        raise ValueError("n_queries and n_features must be >= 1")
    rng = _rng(random_state)
    good = _query_sizes(rng, n_queries, n_good, "n_good")
    bad = _query_sizes(rng, n_queries, n_bad, "n_bad")
    sizes = good + bad
    n = int(sizes.sum())
    y = np.concatenate([np.r_[np.ones(g, np.int32), np.zeros(b, np.int32)] for g, b in zip(good, bad)])
    n_inf = n_features // 2 if n_informative is None else int(n_informative)
    if not 0 <= n_inf <= n_features:
        raise ValueError(f"n_informative must be in 0..n_features, got {n_inf}")
    informative = np.sort(rng.choice(n_features, size=n_inf, replace=False))
    X = rng.standard_normal((n, n_features))
    X[:, informative] += separation * rng.uniform(0.5, 1.0, size=n_inf)[None, :] * y[:, None]
    prov = _provenance(
        "make_bipartite", random_state, n_queries=n_queries, n_good=n_good, n_bad=n_bad,
        n_features=n_features, separation=separation, n_informative=n_inf,
    )
    prov["informative_features"] = informative.tolist()
    return RankingData(X, y, np.r_[0, np.cumsum(sizes)], provenance=prov)


class PairFeedback(NamedTuple):
    """General pair feedback (RankBoost's Phi): instance ``hi[i]`` must rank above ``lo[i]``.

    Parameters
    ----------
    X : ndarray of shape (n_instances, n_features), float32
        One row per instance.
    hi, lo : ndarray of shape (m,), int64
        Critical pairs ``(lo[i], hi[i])`` with ``hi[i]`` preferred.
    weight : ndarray of shape (m,), float64
        The initial distribution ``D_1`` (uniform, summing to 1).
    names : list of str
        One name per instance.
    """

    X: np.ndarray
    hi: np.ndarray
    lo: np.ndarray
    weight: np.ndarray
    names: list[str]


def subset_lattice(elements: str = "abc") -> PairFeedback:
    """The RankBoost+ paper's Prop. 1 data set: all subsets of ``{a, b, c}``, ordered by inclusion.

    Instances are the ``2^3 = 8`` subsets, ordered by size and then lexicographically
    (``{}, {a}, {b}, {c}, {a,b}, {a,c}, {b,c}, {a,b,c}``); features are the indicators of ``a, b, c``.
    The critical pairs are ``(x, y)`` with ``x`` a strict subset of ``y`` (19 pairs: a set of size
    ``k`` has ``2^k - 1`` strict subsets, ``3*1 + 3*3 + 1*7 = 19``), the superset ``y`` being preferred
    (``hi``). Weights are uniform, ``1/19``.

    Parameters
    ----------
    elements : str, default "abc"
        The elements, one character each, distinct and at least one. The numbers above are those of the
        default ``"abc"``; with ``n`` elements there are ``2^n`` instances and ``3^n - 2^n`` pairs.

    Returns
    -------
    PairFeedback
        Instances named ``{}``, ``{a}``, ..., ``{a,b,c}``.
    """
    els = list(elements)
    if len(set(els)) != len(els) or not els:
        raise ValueError("elements must be distinct characters")
    subsets = [frozenset(c) for k in range(len(els) + 1) for c in combinations(els, k)]
    X = np.array([[e in s for e in els] for s in subsets], dtype=np.float32)
    hi, lo = [], []
    for i, big in enumerate(subsets):
        for j, small in enumerate(subsets):
            if small < big:  # strict inclusion
                hi.append(i)
                lo.append(j)
    m = len(hi)
    names = ["{" + ",".join(sorted(s)) + "}" for s in subsets]
    return PairFeedback(X, np.asarray(hi, np.int64), np.asarray(lo, np.int64), np.full(m, 1.0 / m), names)
