"""The collaborative-filtering baselines of the RankBoost paper (Sec. 6.2.3) and its movie protocol.

A *task* is one target user ("Alice"): the instances are the movies she rated, the label is her
rating, and feature ``i`` is another viewer's rating of each movie (NaN where that viewer did not rate
it). Three baselines:

* `RegressionRanker`: Alice's rating as a linear combination of the viewers' ratings; a viewer's
  unrated movies get that viewer's average rating; the minimum-norm least-squares solution.
* `NearestNeighbourRanker`: the single viewer (and default score ``q_def`` for the movies that viewer
  did not rate) with the lowest ranking loss (Eq. 21) on Alice's training pairs.
* `VSIM`: Breese, Heckerman and Kadie's vector similarity: a prediction from the viewers' mean-offset
  ratings weighted by cosine similarity.

`movie_task` builds one task of Sec. 6.2.5 from a ratings matrix (half of the target's movies for
training, the other half for testing) and `evaluate_task` runs RankBoost and the three baselines on it
with the paper's four measures.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from lrank.data.container import RankingData
from lrank.models._base import BaseRanker


def _viewer_stats(X: np.ndarray, feature_means: Any, feature_norms: Any) -> tuple[np.ndarray, np.ndarray]:
    known = ~np.isnan(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(known.any(0), np.nansum(X, 0) / np.maximum(known.sum(0), 1), np.nan)
    norms = np.sqrt(np.nansum(X * X, 0))
    if feature_means is not None:
        means = np.asarray(feature_means, dtype=np.float64)
    if feature_norms is not None:
        norms = np.asarray(feature_norms, dtype=np.float64)
    if means.shape != (X.shape[1],) or norms.shape != (X.shape[1],):
        raise ValueError(f"feature_means / feature_norms need one value per feature ({X.shape[1]})")
    return means, norms


class RegressionRanker(BaseRanker):
    """Minimum-norm least squares on the viewers' ratings (Sec. 6.2.3, after Hill et al.).

    Parameters
    ----------
    feature_means : array-like (n_features,), optional
        Each viewer's average rating over all the movies they rated (fills their unrated movies); by
        default the average over the rows of ``X`` the viewer rated. A viewer with no rating at all gets
        the mean of the target's ratings.
    """

    def __init__(self, feature_means: Any = None) -> None:
        self.feature_means = feature_means

    def _fill(self, X: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(X), self.fill_values_[None, :], X).astype(np.float64)

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> RegressionRanker:
        data = self._ranking_data(X, y, qid, group)
        Xf = data.X.astype(np.float64)
        means, _ = _viewer_stats(Xf, self.feature_means, None)
        self.fill_values_ = np.where(np.isnan(means), float(data.y.mean()), means)
        self.n_features_in_ = Xf.shape[1]
        C = self._fill(Xf)
        # w minimising ||C w - a|| with the smallest ||w|| (LAPACK gelsd via numpy)
        self.coef_ = np.linalg.lstsq(C, data.y.astype(np.float64), rcond=None)[0]
        self.n_iter_ = 1
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted()
        Xf = self._features(X, self.n_features_in_).astype(np.float64)
        return self._fill(Xf) @ self.coef_


def _rloss_candidates(x: np.ndarray, hi: np.ndarray, lo: np.ndarray, w: np.ndarray, cand: np.ndarray):
    """Eq. (21) of h = x (q for NaN) on the pairs, for every candidate default q in ``cand``."""
    a, b = x[hi], x[lo]
    ka, kb = ~np.isnan(a), ~np.isnan(b)
    both = ka & kb
    fixed = w[both & (a < b)].sum() + 0.5 * w[both & (a == b)].sum() + 0.5 * w[~ka & ~kb].sum()
    out = np.full(cand.size, fixed)
    m1 = ~ka & kb  # x_1 missing: misordered iff q < b, tie iff q == b
    if m1.any():
        bv, bw = b[m1], w[m1]
        out += (bw[None, :] * ((cand[:, None] < bv[None, :]) + 0.5 * (cand[:, None] == bv[None, :]))).sum(1)
    m0 = ka & ~kb  # x_0 missing: misordered iff a < q, tie iff a == q
    if m0.any():
        av, aw = a[m0], w[m0]
        out += (aw[None, :] * ((av[None, :] < cand[:, None]) + 0.5 * (av[None, :] == cand[:, None]))).sum(1)
    return out


class NearestNeighbourRanker(BaseRanker):
    """The single most similar viewer under the ranking loss, with a searched default score (Sec. 6.2.3).

    For each viewer i the loss of h(x) = f_i(x) (``q_def`` where f_i is missing) on the target's
    training pairs (Eq. 21, uniform D) is minimised over ``q_def``: every distinct rating of the viewer,
    every midpoint between two of them, and one value below and one above all of them (the loss only
    depends on where q_def falls). A viewer who rated every training movie gets ``q_def`` = their
    average rating (``feature_means``). The viewer with the lowest loss wins (first on ties).

    Parameters
    ----------
    feature_means : array-like (n_features,), optional
        Each viewer's average rating over all the movies they rated.
    """

    def __init__(self, feature_means: Any = None) -> None:
        self.feature_means = feature_means

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> NearestNeighbourRanker:
        data = self._ranking_data(X, y, qid, group)
        Xf = data.X.astype(np.float64)
        means, _ = _viewer_stats(Xf, self.feature_means, None)
        p = data.pairs("uniform")
        self.n_features_in_ = Xf.shape[1]
        best = (np.inf, 0, 0.0)
        for f in range(Xf.shape[1]):
            x = Xf[:, f]
            known = ~np.isnan(x)
            if not known.any():
                continue
            if known.all():
                q = float(means[f]) if np.isfinite(means[f]) else float(x.mean())
                cand = np.array([q])
            else:
                v = np.unique(x[known])
                cand = np.r_[v[0] - 1.0, v, (v[:-1] + v[1:]) / 2.0, v[-1] + 1.0]
            losses = _rloss_candidates(x, p.hi, p.lo, p.weight, cand) if p.hi.size else np.zeros(cand.size)
            i = int(np.argmin(losses))
            if losses[i] < best[0]:
                best = (float(losses[i]), f, float(cand[i]))
        self.train_loss_, self.feature_, self.q_def_ = best
        self.n_iter_ = 1
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted()
        x = self._features(X, self.n_features_in_)[:, self.feature_].astype(np.float64)
        return np.where(np.isnan(x), self.q_def_, x)


class VSIM(BaseRanker):
    """Vector similarity (Breese, Heckerman, Kadie 1998) as in Sec. 6.2.3.

    w_{k,i} = C_k . C_i / (||C_k|| ||C_i||), the inner product over the movies both rated and each norm
    over the movies that viewer rated; prediction C_hat_{k,j} = mean_k + alpha sum_i w_{k,i}
    (C_{i,j} - mean_i) over the viewers who rated j, with alpha = 1 / sum_i |w_{k,i}|.

    Parameters
    ----------
    feature_means, feature_norms : array-like (n_features,), optional
        Each viewer's average rating and rating-vector norm over all the movies they rated (default:
        over the rows of ``X``).
    """

    def __init__(self, feature_means: Any = None, feature_norms: Any = None) -> None:
        self.feature_means = feature_means
        self.feature_norms = feature_norms

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> VSIM:
        data = self._ranking_data(X, y, qid, group)
        Xf = data.X.astype(np.float64)
        a = data.y.astype(np.float64)
        means, norms = _viewer_stats(Xf, self.feature_means, self.feature_norms)
        dot = np.nansum(Xf * a[:, None], axis=0)
        na = float(np.sqrt((a * a).sum()))
        with np.errstate(invalid="ignore", divide="ignore"):
            w = dot / (na * norms)
        w[~np.isfinite(w)] = 0.0
        self.weights_ = w
        s = np.abs(w).sum()
        self.alpha_ = 1.0 / s if s > 0 else 0.0
        self.target_mean_ = float(a.mean())
        self.viewer_means_ = np.where(np.isnan(means), 0.0, means)
        self.n_features_in_ = Xf.shape[1]
        self.n_iter_ = 1
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted()
        Xf = self._features(X, self.n_features_in_).astype(np.float64)
        dev = np.where(np.isnan(Xf), 0.0, Xf - self.viewer_means_[None, :])
        return self.target_mean_ + self.alpha_ * (dev @ self.weights_)


# ---------------------------------------------------------------------------------- the protocol
class MovieTask(NamedTuple):
    """One target user's task: train / test halves and the viewers' statistics over all their ratings."""

    train: RankingData
    test: RankingData
    feature_means: np.ndarray
    feature_norms: np.ndarray


def movie_task(ratings: np.ndarray, target: int, feature_users: Any, random_state: Any = None,
               train_fraction: float = 0.5) -> MovieTask:
    """Sec. 6.2.5: the target's rated movies split at random into training and test halves.

    Parameters
    ----------
    ratings : ndarray (n_users, n_movies)
        NaN = unrated.
    target : int
        Row of the target user (the feedback).
    feature_users : array-like of int
        Rows of the viewers that serve as ranking features (must not contain ``target``).
    random_state : int, Generator or None
        Seeds the split.
    """
    R = np.asarray(ratings, dtype=np.float64)
    feats = np.asarray(feature_users, dtype=np.int64)
    if np.any(feats == target):
        raise ValueError("the target user cannot be one of the feature users")
    movies = np.flatnonzero(~np.isnan(R[target]))
    if movies.size < 2:
        raise ValueError(f"user {target} rated {movies.size} movie(s); need at least 2")
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(movies)
    n_train = int(round(train_fraction * movies.size))
    n_train = min(max(n_train, 1), movies.size - 1)
    tr, te = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    F = R[feats]
    known = ~np.isnan(F)
    cnt = known.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(cnt > 0, np.nansum(F, 1) / np.maximum(cnt, 1), np.nan)
    norms = np.sqrt(np.nansum(F * F, 1))
    names = [f"u{u + 1}" for u in feats]
    prov = {"source": "movie_task", "target": int(target) + 1}

    def part(rows: np.ndarray) -> RankingData:
        return RankingData(R[np.ix_(feats, rows)].T, R[target, rows], np.array([0, rows.size]),
                           qid=np.array([target + 1]), feature_names=names, provenance=prov)

    return MovieTask(part(tr), part(te), means, norms)


ALGORITHMS = ("RankBoost", "Regression", "NN", "VSIM")
MEASURES = ("disagreement", "ap", "prot", "coverage")


def evaluate_task(task: MovieTask, n_rounds: int | None = None, algorithms: Any = ALGORITHMS,
                  random_state: int | None = 0) -> dict[str, dict[str, float]]:
    """Fit RankBoost (WeakLearn.3.cum, q_def chosen adaptively, T = 40 + N/10) and the baselines on the
    training half and return the four measures of Sec. 6.2.4 on the test half (expectations over random
    tie-breaking, good movies = the target's highest test rating)."""
    import warnings

    from lrank.metrics import evaluate
    from lrank.models.rankboost import DegenerateRoundWarning, RankBoost

    n_feat = task.train.n_features
    T = 40 + n_feat // 10 if n_rounds is None else n_rounds
    out = {}
    for name in algorithms:
        if name == "RankBoost":
            model = RankBoost(n_rounds=T, alpha_method="third", cumulative_positive=True,
                              random_state=random_state)
        elif name == "Regression":
            model = RegressionRanker(feature_means=task.feature_means)
        elif name == "NN":
            model = NearestNeighbourRanker(feature_means=task.feature_means)
        elif name == "VSIM":
            model = VSIM(feature_means=task.feature_means, feature_norms=task.feature_norms)
        else:
            raise ValueError(f"unknown algorithm {name!r}; choose from {ALGORITHMS}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateRoundWarning)
            model.fit(task.train)
        s = model.predict(task.test.X)
        res = evaluate(task.test.y, s, task.test.qptr, ["expected_disagreement", "expected_ap",
                                                       "expected_prot", "expected_coverage"])
        out[name] = {"disagreement": res["expected_disagreement"], "ap": res["expected_ap"],
                     "prot": res["expected_prot"], "coverage": res["expected_coverage"]}
    return out


def evaluate_tasks(ratings: np.ndarray, targets: Any, feature_users: Any, seed: int = 0,
                   random_state: int | None = 0, n_rounds: int | None = None):
    """`evaluate_task` for every target user (split seeded by ``seed + target``) plus random guessing.

    Tasks whose training or test half has no crucial pair (all ratings equal) are skipped. Returns a tidy
    ``pandas.DataFrame`` with columns ``target, algorithm, measure, value``; algorithm ``"random"`` is
    random guessing on the same test half (`lrank.metrics.random_guessing`).
    """
    import pandas as pd

    from lrank.metrics import random_guessing

    rows = []
    for u in np.asarray(targets, dtype=np.int64):
        task = movie_task(ratings, int(u), feature_users, random_state=seed + int(u))
        if task.train.n_critical_pairs().sum() == 0 or task.test.n_critical_pairs().sum() == 0:
            continue
        res = evaluate_task(task, n_rounds=n_rounds, random_state=random_state)
        yt = task.test.y
        res["random"] = random_guessing(int(yt.size), int((yt == yt.max()).sum()))
        for alg, d in res.items():
            rows.extend({"target": int(u), "algorithm": alg, "measure": k, "value": float(d[k])}
                        for k in MEASURES)
    return pd.DataFrame(rows, columns=["target", "algorithm", "measure", "value"])
