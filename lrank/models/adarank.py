"""AdaRank (Xu & Li, SIGIR 2007): boosting that directly optimises an IR measure E over queries.

The algorithm is the paper's Fig. 1, with the single-feature weak rankers of Sec. 3.6:

* ``P_1(i) = 1/m`` over the m training queries;
* round t: ``h_t = argmax_k sum_i P_t(i) E(pi(q_i, d_i, x_k), y_i)`` (Sec. 3.6);
* ``alpha_t = 1/2 ln( sum_i P_t(i) (1 + E(h_t)_i) / sum_i P_t(i) (1 - E(h_t)_i) )`` (Fig. 1);
* ``f_t = sum_{k<=t} alpha_k h_k`` (Fig. 1, Eq. 7);
* ``P_{t+1}(i) = exp(-E(f_t)_i) / sum_j exp(-E(f_t)_j)``: from the *combined* model, not a
  multiplicative update (Sec. 3.5);
* stop when the training measure no longer improves (Sec. 4.1).

``E(h_k)_i`` never changes during training, so it is computed once for every candidate weak ranker and
query (`lrank._kernels.adarank.feature_query_matrix`); each round is then an O(candidates x queries)
weighted sum plus one ranking of the combined model ``f_t`` (needed for ``P_{t+1}``).

Conventions (documented deviations or choices the paper leaves open)
---------------------------------------------------------------------
* E is any higher-is-better lrank metric with values in [-1, 1] (``"map"``, ``"ndcg@5"``, ``"err@10"``,
  ``"mrr"``, ``"p@5"``, ...); its ties and empty-query conventions are lrank.metrics'
  (``metric_options`` are passed through). Queries on which the metric is undefined (NaN, e.g. MAP of a
  query with no relevant document under ``empty="skip"``) are left out of training: they carry no
  information about any ranking.
* ``f_0`` counts as ``E(f_0) = 0`` in ``delta_i^1`` (the convention the appendix proof uses when it
  unrolls ``Z_1``).
* If a weak ranker ranks every weighted query perfectly (``varphi(t) = 1``) the printed alpha is
  infinite; alpha is then computed with ``varphi`` capped at ``1 - 1e-12`` (alpha ~ 14.2), and the
  Theorem 1 bound uses that capped value, which keeps it valid. If no candidate has ``varphi(t) > 0``,
  training stops (the paper requires ``alpha_t > 0``).
* Weak rankers: see `lrank.weak.single_feature` (min-max scaling by default, missing values scored as
  the lowest training value, optional reversed features).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from lrank._kernels.adarank import choose_weak_ranker, feature_query_matrix
from lrank.models._base import BaseRanker
from lrank.weak.single_feature import SingleFeatureRanker, SingleFeatureRankers

VARPHI_CAP = 1.0 - 1e-12
_LOWER_IS_BETTER = ("r1", "r2", "expected_disagreement")


def _check_metric(metric: str) -> str:
    if not isinstance(metric, str) or not metric:
        raise ValueError(f"metric must be an lrank metric name such as 'map' or 'ndcg@5', got {metric!r}")
    if metric.split("@")[0].lower() in _LOWER_IS_BETTER:
        raise ValueError(f"AdaRank maximises its measure E; {metric!r} is a loss (lower is better)")
    return metric


def _per_query(y: np.ndarray, scores: np.ndarray, qptr: np.ndarray, metric: str, opts: dict) -> np.ndarray:
    from lrank.metrics import evaluate

    return np.asarray(evaluate(y, scores, qptr, [metric], per_query=True, **opts)[metric], dtype=np.float64)


class AdaRank(BaseRanker):
    """AdaRank with single-feature weak rankers (Xu & Li 2007, Fig. 1 and Sec. 3.6).

    Parameters
    ----------
    metric : str, default "map"
        The measure E trained on: ``"map"`` gives AdaRank.MAP, ``"ndcg@5"`` AdaRank.NDCG (the paper's
        two); any higher-is-better lrank metric with values in [-1, 1] works.
    n_rounds : int, default 500
        Maximum number of rounds T.
    early_stopping : int or None, default 1
        Stop after this many consecutive rounds without an improvement of the training measure larger
        than ``tol`` and keep the rounds up to the best one (the paper's rule, Sec. 4.1, is 1). ``None``
        runs all ``n_rounds`` and keeps them all (for learning curves).
    tol : float, default 0.0
        Minimum improvement of the mean training measure that counts.
    directions : {"positive", "both"}, default "positive"
        Candidate weak rankers: each feature as is (the paper), or also reversed.
    scaling : {"minmax", "none"}, default "minmax"
        Values of the weak rankers (see `lrank.weak.single_feature`).
    max_consecutive : int or None, default None
        Not in the paper (RankLib's AdaRank has it): a candidate chosen this many rounds in a row is
        excluded from the next round. Choosing the same feature again leaves the ranking of ``f``, hence
        ``P``, unchanged, so without it AdaRank repeats that feature forever once it stalls.
    metric_options : dict, optional
        Passed to `lrank.metrics.evaluate` (``rel_threshold``, ``gain``, ``discount``, ``empty``...).
    random_state : int, optional
        Unused: AdaRank is deterministic (kept for the common estimator API).
    verbose : bool, default False
        A tqdm progress bar over rounds.

    Attributes
    ----------
    estimators_ : list of SingleFeatureRanker
        ``h_1 .. h_T`` of the kept rounds.
    alphas_ : ndarray of shape (n_iter_,)
    n_iter_ : int
        Rounds kept (T).
    history_ : pandas.DataFrame
        One row per round run (rounds after the kept T were tried and discarded: ``kept`` is False):
        ``round, candidate, feature, direction, alpha, varphi, delta_min, bound_factor, bound, train_E,
        Z, kept``. ``bound`` is Theorem 1's ``1 - prod_t e^{-delta_min^t} sqrt(1 - varphi(t)^2)``,
        ``bound_factor`` the round's factor, ``Z`` is ``sum_i exp(-E(f_t)_i)``.
    metric_matrix_ : ndarray of shape (n_candidates, n_train_queries)
        ``E`` of every candidate on every training query.
    train_queries_ : ndarray of int64
        Positions of the training queries used (those where E is defined).
    weak_rankers_ : SingleFeatureRankers
        The candidate set.
    feature_importances_ : ndarray of shape (n_features,)
        Sum of alpha per feature (reversed candidates count negatively).
    stop_reason_ : str
    """

    def __init__(self, metric: str = "map", n_rounds: int = 500, early_stopping: int | None = 1,
                 tol: float = 0.0, directions: str = "positive", scaling: str = "minmax",
                 max_consecutive: int | None = None, metric_options: dict | None = None,
                 random_state: int | None = None, verbose: bool = False) -> None:
        self.metric = metric
        self.n_rounds = n_rounds
        self.early_stopping = early_stopping
        self.tol = tol
        self.directions = directions
        self.scaling = scaling
        self.max_consecutive = max_consecutive
        self.metric_options = metric_options
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> AdaRank:
        """Train on a `RankingData` or on arrays with ``qid`` / ``group``."""
        metric = _check_metric(self.metric)
        if not isinstance(self.n_rounds, (int, np.integer)) or self.n_rounds < 1:
            raise ValueError(f"n_rounds must be a positive integer, got {self.n_rounds!r}")
        if self.early_stopping is not None and (
            not isinstance(self.early_stopping, (int, np.integer)) or self.early_stopping < 1
        ):
            raise ValueError(f"early_stopping must be None or an integer >= 1, got {self.early_stopping!r}")
        if self.max_consecutive is not None and (
            not isinstance(self.max_consecutive, (int, np.integer)) or self.max_consecutive < 1
        ):
            raise ValueError(f"max_consecutive must be None or an integer >= 1, got {self.max_consecutive!r}")
        data = self._ranking_data(X, y, qid, group)
        opts = dict(self.metric_options or {})
        opts.setdefault("empty", "skip")  # queries where E is undefined carry no information

        weak = SingleFeatureRankers(scaling=self.scaling, directions=self.directions).fit(data.X)
        H = weak.transform(data.X)
        M_all = feature_query_matrix(H, data.y, data.qptr, metric, opts)
        defined = ~np.isnan(M_all).any(axis=0)
        if not defined.any():
            raise ValueError(f"{metric!r} is undefined on every training query (no relevant documents?)")
        M = np.ascontiguousarray(M_all[:, defined])
        if M.min() < -1.0 - 1e-12 or M.max() > 1.0 + 1e-12:
            raise ValueError(f"AdaRank needs E in [-1, 1]; {metric!r} took values in [{M.min()}, {M.max()}]")
        m = M.shape[1]

        P = np.full(m, 1.0 / m)  # Fig. 1: P_1(i) = 1/m
        f = np.zeros(data.n_docs)
        E_prev = np.zeros(m)  # E(f_0) := 0, as in the appendix proof
        allowed = np.ones(M.shape[0], dtype=np.bool_)
        log_prod = 0.0
        rows: list[dict] = []
        chosen: list[int] = []
        alphas: list[float] = []
        best_E, best_t, stall = -np.inf, 0, 0
        reason = "n_rounds reached"
        rounds = range(1, int(self.n_rounds) + 1)
        if self.verbose:
            from tqdm.auto import tqdm

            rounds = tqdm(rounds, desc=f"AdaRank.{metric}")
        run = 0
        for t in rounds:
            allowed[:] = True
            if self.max_consecutive is not None and chosen and run >= self.max_consecutive:
                allowed[chosen[-1]] = False
            c, varphi, _ = choose_weak_ranker(M, P, allowed)  # Sec. 3.6
            run = run + 1 if chosen and c == chosen[-1] else 1
            if c < 0 or not varphi > 0.0:
                reason = f"no weak ranker with positive weighted {metric} (round {t})"
                break
            Eh = M[c]
            num = float(np.sum(P * (1.0 + Eh)))
            den = float(np.sum(P * (1.0 - Eh)))
            vp = min(varphi, VARPHI_CAP)
            if den <= (1.0 - VARPHI_CAP) * (num + den) / 2.0:
                num, den = 1.0 + vp, 1.0 - vp
            alpha = 0.5 * math.log(num / den)  # Fig. 1: alpha_t
            f = f + alpha * H[:, c]  # Fig. 1: f_t = f_{t-1} + alpha_t h_t
            E_t = _per_query(data.y, f, data.qptr, metric, opts)[defined]
            delta = E_t - E_prev - alpha * Eh  # Theorem 1: delta_i^t
            delta_min = float(delta.min())
            factor = math.exp(-delta_min) * math.sqrt(max(0.0, 1.0 - vp * vp))
            log_prod += -delta_min + 0.5 * math.log(max(1e-300, 1.0 - vp * vp))
            bound = 1.0 - math.exp(log_prod)  # Theorem 1
            expo = np.exp(-E_t)
            Z = float(expo.sum())
            P = expo / Z  # Fig. 1: P_{t+1}(i) = exp(-E(f_t)_i) / sum_j exp(-E(f_t)_j)
            train_E = float(E_t.mean())
            k, s = (int(v) for v in weak.candidates_[c])
            rows.append(dict(round=t, candidate=c, feature=k, direction=s, alpha=alpha, varphi=varphi,
                             delta_min=delta_min, bound_factor=factor, bound=bound, train_E=train_E, Z=Z))
            chosen.append(c)
            alphas.append(alpha)
            E_prev = E_t
            if train_E > best_E + self.tol:
                best_E, best_t, stall = train_E, t, 0
            else:
                stall += 1
                if self.early_stopping is not None and stall >= self.early_stopping:
                    reason = f"no improvement of training {metric} for {stall} round(s) (Sec. 4.1)"
                    break
        if self.early_stopping is None:
            best_t = len(chosen)
        if best_t == 0:
            raise ValueError(f"AdaRank found no round that improves training {metric}: {reason}")

        self.weak_rankers_ = weak
        self.candidates_ = np.asarray(chosen[:best_t], dtype=np.int64)
        self.estimators_ = [weak.ranker(c) for c in self.candidates_]
        self.alphas_ = np.asarray(alphas[:best_t], dtype=np.float64)
        self.n_iter_ = int(best_t)
        hist = pd.DataFrame(rows)
        hist["kept"] = hist["round"] <= best_t
        self.history_ = hist
        self.metric_matrix_ = M
        self.train_queries_ = np.flatnonzero(defined).astype(np.int64)
        self.n_features_in_ = data.n_features
        self.stop_reason_ = reason
        imp = np.zeros(data.n_features)
        for h, a in zip(self.estimators_, self.alphas_):
            imp[h.feature] += a * h.direction
        self.feature_importances_ = imp
        return self

    # -------------------------------------------------------------------------------- predict
    def staged_predict(self, X: Any):
        """Yield ``f_t(x)`` for t = 1 .. n_iter_ (float64 arrays)."""
        self._check_fitted()
        Xf = self._features(X, self.n_features_in_)
        f = np.zeros(Xf.shape[0])
        for h, a in zip(self.estimators_, self.alphas_):
            f = f + a * h(Xf)
            yield f.copy()

    def predict(self, X: Any) -> np.ndarray:
        """Scores ``f_T(x) = sum_t alpha_t h_t(x)`` (Eq. 7); higher ranks first."""
        self._check_fitted()
        Xf = self._features(X, self.n_features_in_)
        f = np.zeros(Xf.shape[0])
        for h, a in zip(self.estimators_, self.alphas_):
            f = f + a * h(Xf)
        return f


__all__ = ["AdaRank", "SingleFeatureRanker", "VARPHI_CAP"]
