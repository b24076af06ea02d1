"""RankBoost (Freund, Iyer, Schapire, Singer 2003) with the binary-stump weak learner of Sec. 4.

* Fig. 1: the general algorithm over a distribution D on crucial pairs (any weighted feedback Phi).
* Fig. 2 / Sec. 3.3: RankBoost.B, used automatically when the feedback is a sum of per-query bipartite
  functions (every query has at most two label values): the boosting step is O(n) per round instead of
  O(m) (the train loss recorded in ``history_`` still costs one O(m) pass).
* Sec. 3.2: the three ways to set alpha (``alpha_method``): "first" (numerical minimisation of Z),
  "second" (Eq. 2, weak learner minimises Eq. 3: WeakLearn.2), "third" (Eq. 6, weak learner maximises
  |r|: WeakLearn.3); ``cumulative_positive=True`` gives the ``.cum`` variants (Sec. 4).

Example
-------
>>> from lrank.models.rankboost import RankBoost
>>> model = RankBoost(n_estimators=50).fit(train)  # doctest: +SKIP
>>> scores = model.predict(test.X)                  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, Options, StrOptions

from lrank._kernels import stumps as K
from lrank.data.container import RankingData
from lrank.metrics import parse_metric, training_measure
from lrank.models._base import BaseRanker, TreeEnsembleMixin
from lrank.weak.stumps import BinnedStumps, ScaledFeatures, feature_ranking_values

ALPHA_METHODS = ("first", "second", "third")
_LOSS_METRICS = ("r1", "r2", "expected_disagreement")  # lower is better
HISTORY_COLUMNS = ["feature", "bin", "threshold", "q_def", "low", "high", "r", "alpha", "Z", "eps_plus",
                   "eps_zero", "eps_minus", "bound", "train_rloss", "train_rloss_strict"]


class DegenerateRoundWarning(UserWarning):
    """Boosting stopped early: no stump has r != 0, or a weak ranking orders every pair correctly."""


# ------------------------------------------------------------------------------------ choosing alpha
def alpha_third(r: float) -> float:
    """Eq. (6): alpha = 1/2 ln((1 + r) / (1 - r)), the minimiser of the bound of Eq. (4)."""
    return 0.5 * float(np.log((1.0 + r) / (1.0 - r)))


def alpha_second(w_minus: float, w_plus: float, eps: float = 0.0) -> float:
    """Eq. (2): alpha = 1/2 ln(W_- / W_+), the exact minimiser of Z for a {0,1}-valued h.

    When W_- or W_+ is 0, Z has no minimiser (alpha -> +-inf); then both are smoothed by ``eps`` as in
    Schapire and Singer (1999), Sec. 4.2.
    """
    if w_minus > 0.0 and w_plus > 0.0:
        return 0.5 * float(np.log(w_minus / w_plus))
    return 0.5 * float(np.log((w_minus + eps) / (w_plus + eps)))


def z_value(diff: np.ndarray, weight: np.ndarray, alpha: float) -> float:
    """Z(alpha) = sum_p D_p exp(alpha (h(x_0) - h(x_1)))."""
    d = np.ascontiguousarray(diff, dtype=np.float64)
    return float(K.z_of_alpha(d, np.ascontiguousarray(weight, dtype=np.float64), alpha)[0])


def alpha_first(diff: np.ndarray, weight: np.ndarray, eps: float = 0.0, tol: float = 1e-13) -> float:
    """The "first method": minimise Z(alpha) = sum_p D_p exp(alpha d_p) numerically (binary search).

    ``diff[p] = h(x_0) - h(x_1)`` in [-1, 1]. Z is convex in alpha; a binary search on the sign of dZ/dalpha
    finds its unique minimiser. When every weighted difference has the same sign there is none: the
    weights ``eps`` at d = -1 and d = +1 are then added (the smoothing of `alpha_second`), which for a
    binary h reproduces `alpha_second` exactly.
    """
    diff = np.ascontiguousarray(diff, dtype=np.float64)
    weight = np.ascontiguousarray(weight, dtype=np.float64)
    has_neg = bool(np.any((diff < 0) & (weight > 0)))
    has_pos = bool(np.any((diff > 0) & (weight > 0)))
    if not has_neg and not has_pos:
        return 0.0
    if not (has_neg and has_pos):
        if eps <= 0:
            raise ValueError("Z(alpha) has no minimiser (all differences have one sign) and eps = 0")
        diff = np.r_[diff, -1.0, 1.0]
        weight = np.r_[weight, eps, eps]

    def dz(a: float) -> float:
        return float(K.z_of_alpha(diff, weight, a)[1])

    lo, hi = -1.0, 1.0
    while dz(lo) > 0:
        lo *= 2.0
    while dz(hi) < 0:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if dz(mid) > 0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= tol * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


# --------------------------------------------------------------------------------- feedback structure
def bipartite_structure(data: RankingData) -> tuple[np.ndarray, np.ndarray] | None:
    """``side`` (+1 in X_1, -1 in X_0, 0 outside the feedback) and ``n_pairs`` per query when every query
    has at most two label values (a sum of per-query bipartite feedback functions, Sec. 3.3); else None."""
    y = data.y
    qptr = data.qptr
    side = np.zeros(data.n_docs, dtype=np.int64)
    n_pairs = np.zeros(data.n_queries, dtype=np.float64)
    for q in range(data.n_queries):
        a, b = qptr[q], qptr[q + 1]
        labels = np.unique(y[a:b])
        if labels.size > 2:
            return None
        if labels.size == 2:
            top = y[a:b] == labels[1]
            side[a:b] = np.where(top, 1, -1)
            n_pairs[q] = float(top.sum()) * float((~top).sum())
    return side, n_pairs


class RankBoost(TreeEnsembleMixin, BaseRanker):
    """RankBoost with binary stumps (Freund et al. 2003, Fig. 1-3).

    Parameters
    ----------
    n_estimators : int, default 300
        Boosting rounds T (the final ranking is H = sum_{t=1}^T alpha_t h_t).
    alpha_method : {"third", "second", "first"}, default "third"
        "third": WeakLearn.3 (max ``|r|``, alpha by Eq. 6); "second": WeakLearn.2 (min Z of Eq. 3, alpha by
        Eq. 2); "first": stumps by max ``|r|``, alpha by numerical minimisation of Z.
    cumulative_positive : bool, default False
        WeakLearn.cum: only stumps whose cumulative weight stays positive (Sec. 4).
    positive_alpha : bool, default False
        Only weak rankings with r > 0 (so alpha_t > 0) in every round, as RankLib's RankBoost does. The
        paper's WeakLearn (Fig. 3) maximises ``|r|`` and takes a negative alpha when r < 0 (default).
    q_def : None, 0 or 1
        Value of a stump on a missing feature; None lets the weak learner choose it per stump.
    max_thresholds : int, default 255
        Candidate thresholds per feature (``lrank.data.binning``; 255 needs uint16 codes, 254 uint8).
    threshold_strategy : {"subsample", "quantile", "all"}, default "subsample"
        How thresholds are picked when a feature has more distinct values (see `bin_features`).
    bipartite : "auto" or bool, default "auto"
        RankBoost.B (Fig. 2) when the feedback is per-query bipartite ("auto"), always (error if not
        bipartite) or never.
    weak_ranker : {"stump", "feature"}, default "stump"
        "stump": binary stumps of Eq. 9 (WeakLearn, Fig. 3). "feature": the [0, 1]-valued weak ranking
        h = the raw feature scaled to its training range (q_def on missing values), chosen by max ``|r|``;
        pair it with ``alpha_method="first"`` (numerical minimisation of Z) or "third".
    early_stopping_rounds : int or None, default None
        Stop when ``eval_metric`` on the first ``eval_set`` (a `fit` argument) has not improved for this
        many rounds; ``best_iteration_`` is then the best round, which `predict` uses by default.
    eval_metric : str, default "ndcg@10"
        An `lrank.metrics` name scored on every ``eval_set`` after each round (``history_`` columns
        ``valid_<eval_metric>``); the losses ``r1``, ``r2``, ``expected_disagreement`` are minimised,
        every other metric maximised.
    random_state : int or None
        Seeds the threshold subsample; the same seed gives bit-identical models.
    verbose : bool
        tqdm progress bar over rounds.

    Attributes
    ----------
    alphas_, features_, thresholds_, q_defs_ : ndarray, one entry per round
        The final ranking H(x) = sum_t alpha_t [x_{f_t} > theta_t] (q_def_t if x_{f_t} is missing).
    history_ : pandas.DataFrame
        One row per round, indexed by ``iteration``: feature, bin, threshold, q_def, low, high, r (Eq. 5),
        alpha, Z, eps_plus = ``W_-`` (weight of the pairs h orders correctly), eps_zero = ``W_0`` (tied),
        eps_minus = ``W_+`` (misordered), bound (prod_s Z_s, Theorem 1), train_rloss (Eq. 21 under the
        initial D), train_rloss_strict (Eq. 1); ``valid_<eval_metric>`` with an ``eval_set``.
    n_iter_ : int
    best_iteration_ : int or None
        The round with the best ``valid_<eval_metric>`` when ``early_stopping_rounds`` is set, else None.
    bipartite_ : bool
        Whether RankBoost.B ran.
    stop_reason_ : str

    Notes
    -----
    Choices the paper leaves open, made here:

    * candidate thresholds come from `lrank.data.binning` (midpoints of distinct values, at most
      ``max_thresholds`` per feature) instead of every value of the feature; bin 0 / k+1 are
      theta = -inf / +inf as in Fig. 3;
    * a tie in ``|r|`` (or Z) keeps the first stump in the order features, then thresholds from +inf down;
    * when ``W_-`` or ``W_+`` is 0, Eq. 2 has no finite minimiser; alpha is then smoothed with eps = 1/(2m)
      (Schapire and Singer 1999);
    * a weak ranking with ``|r| = 1`` orders every crucial pair: it is added with alpha = ``sign(r) (1 +
      sum |alpha_s|)``, so that the final ranking orders every training pair, and training stops with a
      `DegenerateRoundWarning`; so does a round where no allowed stump has r != 0.

    Cost of a round (general feedback, Fig. 1): WeakLearn's potential histogram and scan, O(n F),
    then one pair kernel (`lrank._kernels.stumps.round_pairs`, two passes) for the update of D, the
    train losses of ``history_`` and the next round's potentials, O(m); summation orders are fixed, so
    the same data give the same bits.
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "alpha_method": [StrOptions(set(ALPHA_METHODS))],
        "cumulative_positive": ["boolean"],
        "positive_alpha": ["boolean"],
        "q_def": [None, Options(Integral, {0, 1})],
        "max_thresholds": [Interval(Integral, 1, 65534, closed="both")],
        "threshold_strategy": [StrOptions({"subsample", "quantile", "all"})],
        "bipartite": [StrOptions({"auto"}), "boolean"],
        "weak_ranker": [StrOptions({"stump", "feature"})],
        "early_stopping_rounds": [Interval(Integral, 1, None, closed="left"), None],
        "eval_metric": [str],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "verbose": ["boolean"],
    }

    def __init__(self, n_estimators: int = 300, alpha_method: str = "third",
                 cumulative_positive: bool = False,
                 positive_alpha: bool = False, q_def: int | None = None, max_thresholds: int = 255,
                 threshold_strategy: str = "subsample", bipartite: Any = "auto", weak_ranker: str = "stump",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10",
                 random_state: int | None = None, verbose: bool = False) -> None:
        self.n_estimators = n_estimators
        self.alpha_method = alpha_method
        self.cumulative_positive = cumulative_positive
        self.positive_alpha = positive_alpha
        self.q_def = q_def
        self.max_thresholds = max_thresholds
        self.threshold_strategy = threshold_strategy
        self.bipartite = bipartite
        self.weak_ranker = weak_ranker
        self.early_stopping_rounds = early_stopping_rounds
        self.eval_metric = eval_metric
        self.random_state = random_state
        self.verbose = verbose

    # ---------------------------------------------------------------------------------- fitting
    def _validate(self) -> None:
        super()._validate()
        for name in ("n_estimators", "max_thresholds", "q_def", "random_state", "early_stopping_rounds"):
            if isinstance(getattr(self, name), bool):  # bool is an Integral to scikit-learn
                raise TypeError(f"The '{name}' parameter of {type(self).__name__} must be an int, got "
                                f"{getattr(self, name)!r}")
        if self.weak_ranker == "feature" and self.alpha_method == "second":
            raise ValueError("alpha_method='second' (Eq. 2-3) needs {0,1}-valued weak rankings; with "
                             "weak_ranker='feature' use alpha_method='first' or 'third'")
        try:
            parse_metric(self.eval_metric)
        except ValueError as exc:
            raise ValueError(f"eval_metric: {exc}") from None

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> RankBoost:
        """Learn from graded labels: the crucial pairs are ``y[x_1] > y[x_0]`` within each query, all
        with the same initial weight 1/m (D = c max(0, Phi), Phi = sum of the queries' feedback).

        ``eval_set`` (a `RankingData`, a tuple ``(X, y, qid)`` or a list of them) is scored after every
        round and enables ``early_stopping_rounds``. ``sample_weight`` weighs queries: the initial
        distribution D_1 gives each crucial pair of query q a weight proportional to ``w_q``.
        ``sample_weight``, ``eval_group``, ``eval_qid`` and ``eval_names`` follow LightGBM (see
        `lrank.models._base`).
        """
        self._validate()
        data = self._ranking_data(X, y, qid, group)
        valid = self._eval_sets(eval_set, eval_group, eval_qid, eval_names, train=(X, y))
        wq = self._sample_weight(sample_weight, data, "query")
        if self.early_stopping_rounds is not None and not valid:
            raise ValueError("early_stopping_rounds needs an eval_set to watch")
        pairs = data.pairs("uniform")
        structure = bipartite_structure(data) if self.bipartite in ("auto", True) else None
        if self.bipartite is True and structure is None:
            raise ValueError("bipartite=True needs at most two label values per query")
        D1 = pairs.weight
        if wq is not None:
            D1 = wq[data.query_index()[pairs.hi]]
            if not D1.sum() > 0:
                raise ValueError("sample_weight is zero on every query that has a crucial pair")
            D1 = D1 / D1.sum()
            if structure is not None:
                structure = (structure[0], structure[1] * wq)
        return self._fit(data.X, pairs.hi, pairs.lo, D1, structure, data.query_index(),
                         data.n_queries, valid)

    def fit_feedback(self, X: Any, hi: Any, lo: Any, weight: Any = None) -> RankBoost:
        """Learn from general feedback Phi given as weighted pairs: ``hi[p]`` should rank above ``lo[p]``
        with importance ``weight[p]`` (Sec. 2). Several feedback functions are summed by concatenating
        their pairs; a negative weight means the opposite preference; zero weights are dropped."""
        self._validate()
        if self.early_stopping_rounds is not None:
            raise ValueError("early_stopping_rounds: fit_feedback has no eval_set; use fit()")
        if self.bipartite is True:
            raise ValueError("bipartite=True: fit_feedback runs the general algorithm (Fig. 1); use fit() "
                             "for RankBoost.B")
        X = self._features(X, n_features=np.shape(X)[1] if np.ndim(X) == 2 else None, reset=True)
        hi = np.asarray(hi, dtype=np.int64).ravel()
        lo = np.asarray(lo, dtype=np.int64).ravel()
        w = np.ones(hi.size) if weight is None else np.asarray(weight, dtype=np.float64).ravel()
        if not (hi.size == lo.size == w.size):
            raise ValueError("hi, lo and weight must have the same length")
        if hi.size and (min(hi.min(), lo.min()) < 0 or max(hi.max(), lo.max()) >= X.shape[0]):
            raise ValueError("pair index out of range of X's rows")
        if not np.all(np.isfinite(w)):
            raise ValueError("feedback weights must be finite")
        if np.any(hi == lo):
            raise ValueError("a pair ranks an instance against itself (Phi(x, x) must be 0)")
        neg = w < 0
        hi, lo = np.where(neg, lo, hi), np.where(neg, hi, lo)
        w = np.abs(w)
        keep = w > 0
        hi, lo, w = hi[keep], lo[keep], w[keep]
        if w.size:
            w = w / w.sum()
        return self._fit(X, hi, lo, w, None, np.zeros(X.shape[0], dtype=np.int64), 1)

    def _fit(self, X, hi, lo, D1, structure, doc_query, n_queries, valid=()) -> RankBoost:
        X = np.ascontiguousarray(X, dtype=np.float32)  # fit / fit_feedback checked it
        self.n_features_in_ = X.shape[1]
        hi = np.ascontiguousarray(hi, dtype=np.int64)
        lo = np.ascontiguousarray(lo, dtype=np.int64)
        D1 = np.ascontiguousarray(D1, dtype=np.float64)
        D = D1.copy()
        m = hi.size
        n = X.shape[0]
        use_features = self.weak_ranker == "feature"
        stumps = None if use_features else BinnedStumps(X, self.max_thresholds, self.threshold_strategy,
                                                        self.random_state)
        feats = ScaledFeatures(X) if use_features else None
        rows = np.unique(np.r_[hi, lo]) if m else np.zeros(0, dtype=np.int64)
        dense = rows.size == n
        eps = 1.0 / (2.0 * m) if m else 0.0
        method = self.alpha_method
        cum = None
        # WeakLearn.cum keeps cumulative weights; positive_alpha alone is the same test with the weights
        # held at 0 (cum + alpha > 0  <=>  alpha > 0  <=>  r > 0)
        if self.cumulative_positive or self.positive_alpha:
            shape = (X.shape[1], 2) if use_features else (stumps.n_features, stumps.n_bins, 2)
            cum = np.zeros(shape)
        accumulate = self.cumulative_positive
        self.bipartite_ = structure is not None
        if self.bipartite_:
            side, n_pairs = structure
            v = np.zeros(n)
            doc_query = np.ascontiguousarray(doc_query, dtype=np.int64)
            for s in (1, -1):
                cnt = np.bincount(doc_query[side == s], minlength=n_queries).astype(float)
                sel = side == s
                v[sel] = 1.0 / cnt[doc_query[sel]]
            c = n_pairs / n_pairs.sum() if n_pairs.sum() > 0 else n_pairs.copy()
        H = np.zeros(n)
        pi = None  # the potentials of the pairs path, computed in place by `K.round_pairs` after round 1
        metric = self.eval_metric
        lower_better = parse_metric(metric).base in _LOSS_METRICS
        vX = [self._features(vd, X.shape[1]) for vd in valid]
        vH = [np.zeros(v.shape[0]) for v in vX]
        measures = [training_measure(vd.y, vd.qptr, metric) for vd in valid]  # labels checked once
        best, best_it, since = np.inf, 0, 0
        rows_out: list[dict] = []  # grows with the rounds actually run (memory follows work)
        sum_abs_alpha = 0.0
        bound = 1.0
        self.stop_reason_ = "n_estimators reached"
        for _t in self._progress(self.n_estimators, "RankBoost"):
            if m == 0:
                self._stop("no crucial pairs (every query's labels are equal)")
                break
            if self.bipartite_:
                pi = K.potentials_bipartite(v, side, c, doc_query)  # pi = d(x) s(x), Sec. 4
            elif pi is None:
                pi = K.potentials_from_pairs(hi, lo, D, n)  # Eq. (10); later rounds: `K.round_pairs`
            pairs = None
            if method == "second":
                if self.bipartite_:
                    D = c[doc_query[hi]] * v[hi] * v[lo]  # Eq. (7), materialised for the pair histogram
                pairs = (hi, lo, D)
            if use_features:
                st = feats.search(pi, q_def=self.q_def, cum=cum)
            else:
                st = stumps.search(pi, q_def=self.q_def, rows=None if dense else rows, cum=cum, pairs=pairs,
                                   eps=eps)
            if st is None:
                self._stop("no allowed weak ranking has r != 0"
                           + (" (r > 0 required)" if self.positive_alpha else "")
                           + (" with a positive cumulative weight" if self.cumulative_positive else ""))
                break
            if not np.isfinite(st.r):  # never a silent NaN model: say which weak ranking broke
                raise FloatingPointError(
                    f"RankBoost round {len(rows_out) + 1}: the weak ranking on feature {st.feature} has "
                    f"r = {st.r} (Eq. 10); check that feature's values (finite, float32 range)")
            h = feats.values(st) if use_features else stumps.values(st.feature, st.bin, st.q_def)
            perfect = False
            if method == "third":
                if abs(st.r) >= 1.0 - 1e-12:
                    perfect = True
                else:
                    alpha = alpha_third(st.r)  # Eq. (6)
            elif method == "second":
                if st.w_zero <= 1e-15 and min(st.w_minus, st.w_plus) <= 1e-15:
                    perfect = True
                else:
                    alpha = alpha_second(st.w_minus, st.w_plus, eps)  # Eq. (2)
            else:
                Dp = c[doc_query[hi]] * v[hi] * v[lo] if self.bipartite_ else D
                diff = h[lo] - h[hi]
                if abs(st.r) >= 1.0 - 1e-12:
                    perfect = True
                else:
                    alpha = alpha_first(diff, Dp, eps)  # the first method: argmin Z(alpha)
            if perfect:
                # h alone orders every crucial pair: give it a weight that dominates the rest of H
                alpha = float(np.sign(st.r)) * (1.0 + sum_abs_alpha)
            H += alpha * h
            if self.bipartite_:
                Z, wm, w0, wp = K.update_bipartite(v, side, c, doc_query, h, alpha, n_queries)  # Fig. 2
                loss_half, loss_strict = K.ranking_losses(hi, lo, D1, H)  # Eq. (21) and Eq. (1)
            else:
                # Fig. 1's update of D, the losses of H (Eq. 21, Eq. 1) and the next round's pi (Eq. 10)
                Z, wm, w0, wp, loss_half, loss_strict = K.round_pairs(hi, lo, D, h, alpha, D1, H, pi)
            if accumulate:
                if use_features:
                    cum[st.feature, st.q_def] += alpha
                else:
                    cum[st.feature, st.bin, st.q_def] += alpha
            if use_features:  # W_b is defined for {0,1}-valued rankings only (Sec. 3.2)
                wm = w0 = wp = float("nan")
            sum_abs_alpha += abs(alpha)
            bound *= Z  # Theorem 1: rloss_D(H) <= prod_t Z_t
            rows_out.append({
                "feature": st.feature, "bin": -1 if use_features else st.bin,
                "threshold": np.nan if use_features else st.threshold, "q_def": st.q_def,
                "low": st.low if use_features else np.nan, "high": st.high if use_features else np.nan,
                "r": st.r, "alpha": alpha, "Z": Z, "eps_plus": wm, "eps_zero": w0, "eps_minus": wp,
                "bound": bound, "train_rloss": loss_half, "train_rloss_strict": loss_strict})
            for j, (measure, x_v, h_v) in enumerate(zip(measures, vX, vH)):
                if use_features:
                    h_v += alpha * feature_ranking_values(x_v, st.feature, st.low, st.high, st.q_def)
                else:
                    K.stump_scores(x_v, np.array([st.feature], dtype=np.int64), np.array([st.threshold]),
                                   np.array([float(st.q_def)]), np.array([alpha]), h_v)
                score = measure(h_v)
                rows_out[-1][f"valid_{metric}" if j == 0 else f"valid{j}_{metric}"] = score
                if j == 0:
                    loss = score if lower_better else -score
                    if loss < best:
                        best, best_it, since = loss, len(rows_out), 0
                    else:
                        since += 1
            if perfect:
                self._stop("|r| = 1: one weak ranking orders every crucial pair")
                break
            if self.early_stopping_rounds is not None and since >= self.early_stopping_rounds:
                self.stop_reason_ = (f"early stopping: valid_{metric} did not improve for {since} rounds "
                                     f"after round {best_it}")
                break
        columns = HISTORY_COLUMNS + [k for k in (rows_out[0] if rows_out else {}) if k not in HISTORY_COLUMNS]
        self.history_ = self._history(rows_out, columns=columns)
        self.n_iter_ = len(self.history_)
        self.best_iteration_ = best_it if self.early_stopping_rounds is not None else None
        h_ = self.history_
        self.alphas_ = h_["alpha"].to_numpy(dtype=np.float64)
        self.features_ = h_["feature"].to_numpy(dtype=np.int64)
        self.thresholds_ = h_["threshold"].to_numpy(dtype=np.float64)
        self.q_defs_ = h_["q_def"].to_numpy(dtype=np.float64)
        self.lows_ = h_["low"].to_numpy(dtype=np.float64)
        self.highs_ = h_["high"].to_numpy(dtype=np.float64)
        return self

    def _stop(self, why: str) -> None:
        self.stop_reason_ = why
        warnings.warn(f"RankBoost stopped early: {why}", DegenerateRoundWarning, stacklevel=3)

    # ------------------------------------------------------------------------------- prediction
    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """H(x) = sum_{t <= num_iteration} alpha_t h_t(x) (float64); higher means ranked higher.

        ``num_iteration`` None: every round. No qid needed.
        """
        k = self._num_iteration(num_iteration)
        X = self._features(X, self.n_features_in_)
        out = np.zeros(X.shape[0])
        if self.weak_ranker == "feature":
            for t in range(k):
                out += self.alphas_[t] * self._feature_h(X, t)
            return out
        return K.stump_scores(X, self.features_[:k].copy(), self.thresholds_[:k].copy(),
                              self.q_defs_[:k].copy(), self.alphas_[:k].copy(), out)

    def _feature_h(self, X: np.ndarray, t: int) -> np.ndarray:
        return feature_ranking_values(X, int(self.features_[t]), self.lows_[t], self.highs_[t],
                                      self.q_defs_[t])

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Scores after each round t = 1..n_iter_ (a fresh array each time)."""
        self._check_fitted()
        X = self._features(X, self.n_features_in_)
        out = np.zeros(X.shape[0])
        for t in range(self.n_iter_):
            if self.weak_ranker == "feature":
                out += self.alphas_[t] * self._feature_h(X, t)
            else:
                s = slice(t, t + 1)
                K.stump_scores(X, self.features_[s], self.thresholds_[s], self.q_defs_[s], self.alphas_[s],
                               out)
            yield out.copy()

    def staged_ranking_loss(self, X: Any, hi: Any = None, lo: Any = None, weight: Any = None) -> np.ndarray:
        """rloss (Eq. 21) after each round on pairs of ``X``; with a `RankingData` and no pairs, its
        crucial pairs with D = 1/m (the test error of Fig. 4)."""
        if isinstance(X, RankingData) and hi is None:
            p = X.pairs("uniform")
            hi, lo, weight = p.hi, p.lo, p.weight
        return np.array([ranking_loss(s, hi, lo, weight) for s in self.staged_predict(X)])


# ------------------------------------------------------------------------- evaluation helpers (Sec. 5, 6.1)
def ranking_loss(scores: Any, hi: Any, lo: Any, weight: Any = None) -> float:
    """rloss_D(H) over weighted pairs (``hi`` should rank above ``lo``), ties counted 1/2 (Eq. 21).

    Unlike ``lrank.metrics``' per-query ``r2`` (a mean over queries), this is the paper's pooled loss:
    each pair weighs ``weight`` (default: all pairs equally, D = 1/m).
    """
    s = np.ascontiguousarray(scores, dtype=np.float64)
    hi = np.ascontiguousarray(hi, dtype=np.int64)
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    w = (np.full(hi.size, 1.0 / max(hi.size, 1)) if weight is None
         else np.ascontiguousarray(weight, dtype=np.float64))
    return float(K.ranking_loss(hi, lo, w, s))


def warmup() -> None:
    """Compile RankBoost's kernels."""
    K.warmup()
