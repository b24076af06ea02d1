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

Each is a one-shot model (``n_iter_ = 1``); ``predict(X, num_iteration=0)`` gives the empty model's
constant 0. The paper's movie protocol (tasks, Fig. 5-7) lives in `lrank.papers.rankboost`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from lrank.models._base import BaseRanker


class _OneShot(BaseRanker):
    """A ranker fitted in one step (no rounds): ``n_iter_ = 1``, no early stopping."""

    def _done(self, n_features: int) -> None:
        self.n_features_in_ = n_features
        self.n_iter_ = 1
        self.best_iteration_ = None
        self.stop_reason_ = "closed form (one step)"

    def _prepare(self, X: Any, num_iteration: int | None) -> tuple[np.ndarray, int]:
        k = self._num_iteration(num_iteration)
        return self._features(X, self.n_features_in_).astype(np.float64), k


#: singular values below this fraction of the largest are zero in RegressionRanker's least squares
LSTSQ_RCOND = 1e-10
#: scores closer than this fraction of the largest |score| are one score (RegressionRanker; VSIM needs
#: none: over the same tasks its distinct scores were at least 2.2e-8 of the largest apart)
SCORE_TIE_RTOL = 1e-11
#: NearestNeighbourRanker: training losses (pair weights summing to 1) closer than this are ties
LOSS_TIE_TOL = 1e-10


def _row_dot(A: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``A @ w`` with every row summed by the same loop, so identical rows get identical values.

    BLAS's matrix-vector product computes rows in blocks and leftover rows in another loop, so two
    identical rows can differ in the last bit; numpy's row sum treats every row alike.
    """
    return (A * w[None, :]).sum(axis=1)


def min_norm_lstsq(C: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The ``w`` minimising ``||C w - a||`` with the smallest ``||w||`` (LAPACK gelsd via numpy).

    Singular values below ``LSTSQ_RCOND`` times the largest count as zero (`RegressionRanker`: numpy's
    default cutoff, ``eps * max(m, n)``, decides the rank by rounding).

    Parameters
    ----------
    C : ndarray (m, n)
        Design matrix.
    a : ndarray (m,)
        Targets.

    Returns
    -------
    ndarray (n,)
    """
    return np.linalg.lstsq(np.asarray(C, dtype=np.float64), np.asarray(a, dtype=np.float64),
                           rcond=LSTSQ_RCOND)[0]


def merge_near_ties(s: np.ndarray, rtol: float = SCORE_TIE_RTOL) -> np.ndarray:
    """Scores that differ by less than ``rtol`` times the largest ``|s|`` become one score.

    Sorted, each run of neighbours less than ``rtol * max|s|`` apart takes the run's smallest score (a
    fixed rule): a difference that small is rounding, which differs between CPUs, and the measures of
    Sec. 6.2.4 treat a tie (an expectation over the order) and a 1e-16 difference very differently.

    Parameters
    ----------
    s : ndarray (n,)
        Scores (NaN and infinities are kept as they are).
    rtol : float
        Relative tolerance (``SCORE_TIE_RTOL``).

    Returns
    -------
    ndarray (n,)
        ``s`` with every near-tie made an exact tie.
    """
    out = np.array(s, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(out))  # NaN and infinities are left as they are
    if finite.size < 2:
        return out
    order = finite[np.argsort(out[finite], kind="stable")]
    v = out[order]
    run = np.r_[0, np.cumsum(np.diff(v) > rtol * float(np.abs(v).max()))]
    starts = np.r_[0, np.flatnonzero(np.diff(run)) + 1]
    out[order] = v[starts][run]
    return out


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


class RegressionRanker(_OneShot):
    """Minimum-norm least squares on the viewers' ratings (Sec. 6.2.3, after Hill et al.).

    The same scores on every CPU. The ratings of the viewers (filled with their means) are often exactly
    rank-deficient (more viewers than training movies; viewers who rated none of the training movies
    give proportional constant columns), and BLAS computes in the last bits differently from one CPU
    to the next. Measured over the 1,128 least-squares problems of the RankBoost notebook's Figs. 5-7
    (quick profile): the singular values that are zero in exact arithmetic come out at most 4.8e-16 of
    the largest, the smallest genuine one is 1.6e-8 of it (so the retained part has condition number up
    to 6.4e7), and a relative perturbation of the inputs by one unit in the last place moves the
    coefficients by at most 6e-11 of their largest. The solve is therefore stable once its rank is fixed;
    two things made the paper's measures move by up to 7.6% between two CPUs, and both are fixed here:

    * **The rank cutoff.** numpy's default (``eps * max(m, n)``, 6e-15 to 9e-14 here) sat only 13x above
      the largest rounding zero; singular values below ``LSTSQ_RCOND = 1e-10`` of the largest count as
      zero: 2e5x above every rounding zero, 160x below every genuine value, the same rank on every CPU.
    * **Ties between scores.** The measures of Sec. 6.2.4 take the expectation over the order of tied
      movies, so a tie turned into a 1e-16 difference moves them by a whole pair. BLAS's matrix-vector
      product computes rows in blocks and a remainder loop (223 groups of identical test rows scored
      differently); each row is now summed by the same loop (identical rows, identical scores), and
      scores within ``SCORE_TIE_RTOL = 1e-11`` of the largest |score| of their neighbour in sorted order
      are one score (the smallest of their run): rounding separated equal scores by at most 2.5e-14 of
      the largest, distinct scores were at least 2.5e-9 apart. With both, Figs. 5-7's 56 Regression
      means did not move under relative input perturbations of one and four units in the last place
      (before: 25 of 56 moved, by up to 3.5e-3 relative).

    Parameters
    ----------
    feature_means : array-like (n_features,), optional
        Each viewer's average rating over all the movies they rated (fills their unrated movies); by
        default the average over the rows of ``X`` the viewer rated. A viewer with no rating at all gets
        the mean of the target's ratings.
    """

    _parameter_constraints: ClassVar[dict] = {"feature_means": ["array-like", None]}

    def __init__(self, feature_means: Any = None) -> None:
        self.feature_means = feature_means

    def _fill(self, X: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(X), self.fill_values_[None, :], X).astype(np.float64)

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> RegressionRanker:
        """Least squares of the target's ratings ``y`` on the filled viewers' ratings ``X``."""
        self._validate()
        data = self._ranking_data(X, y, qid, group)
        Xf = data.X.astype(np.float64)
        means, _ = _viewer_stats(Xf, self.feature_means, None)
        self.fill_values_ = np.where(np.isnan(means), float(data.y.mean()), means)
        self.n_features_in_ = Xf.shape[1]
        C = self._fill(Xf)
        self.coef_ = min_norm_lstsq(C, data.y.astype(np.float64))
        self._done(Xf.shape[1])
        return self

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """The fitted linear combination of the (filled) viewers' ratings, near-ties merged."""
        Xf, k = self._prepare(X, num_iteration)
        return merge_near_ties(_row_dot(self._fill(Xf), self.coef_)) if k else np.zeros(Xf.shape[0])


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


class NearestNeighbourRanker(_OneShot):
    """The single most similar viewer under the ranking loss, with a searched default score (Sec. 6.2.3).

    For each viewer i the loss of h(x) = f_i(x) (``q_def`` where f_i is missing) on the target's
    training pairs (Eq. 21, uniform D) is minimised over ``q_def``: every distinct rating of the viewer,
    every midpoint between two of them, and one value below and one above all of them (the loss only
    depends on where q_def falls). A viewer who rated every training movie gets ``q_def`` = their
    average rating (``feature_means``). The viewer with the lowest loss wins (first on ties). Losses
    within ``LOSS_TIE_TOL = 1e-10`` (of a total pair weight of 1) are ties, for the viewer and for
    ``q_def``: the losses are sums of pair weights whose last bits differ between CPUs (numpy's SIMD
    sums), and two viewers of equal loss must not be told apart by them.

    Parameters
    ----------
    feature_means : array-like (n_features,), optional
        Each viewer's average rating over all the movies they rated.
    """

    _parameter_constraints: ClassVar[dict] = {"feature_means": ["array-like", None]}

    def __init__(self, feature_means: Any = None) -> None:
        self.feature_means = feature_means

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> NearestNeighbourRanker:
        """Choose the viewer and default score with the lowest training ranking loss (Eq. 21)."""
        self._validate()
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
            i = int(np.flatnonzero(losses <= losses.min() + LOSS_TIE_TOL)[0])  # the first near-minimum
            if losses[i] < best[0] - LOSS_TIE_TOL:
                best = (float(losses[i]), f, float(cand[i]))
        self.train_loss_, self.feature_, self.q_def_ = best
        self._done(Xf.shape[1])
        return self

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """The chosen viewer's ratings, ``q_def_`` where that viewer did not rate."""
        Xf, k = self._prepare(X, num_iteration)
        x = Xf[:, self.feature_]
        return np.where(np.isnan(x), self.q_def_, x) if k else np.zeros(Xf.shape[0])


class VSIM(_OneShot):
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

    _parameter_constraints: ClassVar[dict] = {"feature_means": ["array-like", None],
                                              "feature_norms": ["array-like", None]}

    def __init__(self, feature_means: Any = None, feature_norms: Any = None) -> None:
        self.feature_means = feature_means
        self.feature_norms = feature_norms

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> VSIM:
        """Cosine weights of every viewer against the target's ratings ``y``."""
        self._validate()
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
        self._done(Xf.shape[1])
        return self

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """C_hat = mean_k + alpha sum_i w_i (C_i - mean_i) over the viewers who rated each movie."""
        Xf, k = self._prepare(X, num_iteration)
        if not k:
            return np.zeros(Xf.shape[0])
        dev = np.where(np.isnan(Xf), 0.0, Xf - self.viewer_means_[None, :])
        return self.target_mean_ + self.alpha_ * (dev @ self.weights_)
