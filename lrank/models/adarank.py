"""AdaRank (Xu & Li, SIGIR 2007): boosting that directly optimises an IR measure E over queries.

The algorithm is the paper's Fig. 1, with the single-feature weak rankers of Sec. 3.6:

* ``P_1(i) = 1/m`` over the m training queries;
* round t: ``h_t = argmax_k sum_i P_t(i) E(pi(q_i, d_i, x_k), y_i)`` (Sec. 3.6);
* ``alpha_t = 1/2 ln( sum_i P_t(i) (1 + E(h_t)_i) / sum_i P_t(i) (1 - E(h_t)_i) )`` (Fig. 1);
* ``f_t = sum_{k<=t} alpha_k h_k`` (Fig. 1, Eq. 7);
* ``P_{t+1}(i) = exp(-E(f_t)_i) / sum_j exp(-E(f_t)_j)``: from the *combined* model, not a
  multiplicative update (Sec. 3.5);
* stop when the training measure no longer improves (Sec. 4.1): ``early_stopping_rounds=1`` without an
  ``eval_set`` (the measure monitored is then the training measure E itself).

``E(h_k)_i`` never changes during training, so it is computed once for every candidate weak ranker and
query (`lrank.weak.single_feature.feature_query_matrix`); each round is then an O(candidates x queries)
weighted sum (`lrank._kernels.adarank.choose_weak_ranker`) plus one ranking of the combined model
``f_t`` (needed for ``P_{t+1}``).

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
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from lrank._kernels.adarank import choose_weak_ranker
from lrank.models._base import BaseRanker
from lrank.weak.single_feature import (
    DIRECTIONS,
    SCALINGS,
    SingleFeatureRanker,
    SingleFeatureRankers,
    feature_query_matrix,
)

VARPHI_CAP = 1.0 - 1e-12
_LOWER_IS_BETTER = ("r1", "r2", "expected_disagreement")


def _check_metric(metric: str, name: str = "metric") -> str:
    from lrank.metrics import parse_metric

    if not isinstance(metric, str) or not metric:
        raise ValueError(f"{name} must be an lrank metric name such as 'map' or 'ndcg@5', got {metric!r}")
    if metric.split("@")[0].lower() in _LOWER_IS_BETTER:
        raise ValueError(f"AdaRank maximises its measure; {name}={metric!r} is a loss (lower is better)")
    try:
        parse_metric(metric)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{name}={metric!r} is not an lrank metric: {exc}") from None
    return metric


class AdaRank(BaseRanker):
    """AdaRank with single-feature weak rankers (Xu & Li 2007, Fig. 1 and Sec. 3.6).

    Parameters
    ----------
    metric : str, default "map"
        The measure E trained on: ``"map"`` gives AdaRank.MAP, ``"ndcg@5"`` AdaRank.NDCG (the paper's
        two); any higher-is-better lrank metric with values in [-1, 1] works.
    n_estimators : int, default 500
        Maximum number of rounds T.
    early_stopping_rounds : int or None, default 1
        Stop after this many consecutive rounds in which the monitored measure did not improve by more
        than ``tol``; the model keeps the rounds up to the best one (``n_iter_ = best_iteration_``; the
        rounds tried after it are discarded and counted in ``stop_reason_``). The monitored
        measure is ``eval_metric`` on the first ``eval_set`` when ``fit`` gets one, else the training
        measure E: with 1 and no ``eval_set`` this is the paper's rule (Sec. 4.1: T is the round after
        which the training measure stops improving). ``None`` runs all ``n_estimators`` rounds and
        ``predict`` uses them all (learning curves).
    eval_metric : str or None, default None
        Measure on ``eval_set`` (``valid_<eval_metric>`` in ``history_``); ``None``: ``metric``.
    tol : float, default 0.0
        Minimum improvement of the monitored measure that counts.
    directions : {"positive", "both"}, default "positive"
        Candidate weak rankers: each feature as is (the paper), or also reversed.
    scaling : {"minmax", "standard", "none"}, default "minmax"
        Values of the weak rankers (see `lrank.weak.single_feature`); rankings do not depend on it, the
        combined model ``f_t`` does.
    max_consecutive : int or None, default None
        Not in the paper (RankLib's AdaRank has it): a candidate chosen this many rounds in a row is
        excluded from the next round. Choosing the same feature again leaves the ranking of ``f``, hence
        ``P``, unchanged, so without it AdaRank repeats that feature forever once it stalls.
    metric_options : dict, optional
        Passed to `lrank.metrics.evaluate` (``rel_threshold``, ``gain``, ``discount``, ``empty``...).
    verbose : bool, default False
        A tqdm progress bar over rounds.

    AdaRank has no randomness (ties go to the lowest candidate index), so it takes no ``random_state``.

    Attributes
    ----------
    estimators_ : list
        ``h_1 .. h_{n_iter_}`` (single-feature weak rankers).
    alphas_ : ndarray
        ``alpha_1 .. alpha_{n_iter_}`` (Fig. 1), one per round.
    candidates_ : ndarray
        Index (an integer) of each round's weak ranker in ``weak_rankers_``.
    n_iter_ : int
        Rounds kept.
    best_iteration_ : int or None
        The round early stopping chose, equal to ``n_iter_`` (``None`` when ``early_stopping_rounds``
        is None).
    stop_reason_ : str
    history_ : pandas.DataFrame
        Indexed by ``iteration``: ``candidate, feature, direction, alpha, varphi, delta_min,
        bound_factor, bound, Z, train_<metric>`` (and ``valid_<eval_metric>`` with an ``eval_set``).
        ``bound`` is Theorem 1's ``1 - prod_t e^{-delta_min^t} sqrt(1 - varphi(t)^2)``, ``bound_factor``
        the round's factor, ``Z`` is ``sum_i exp(-E(f_t)_i)`` over the training queries (``Z_0 = m``).
    weak_rankers_ : object
        The candidate set (every feature as a weak ranker).
    feature_importances_ : ndarray of shape (n_features,)
        Sum of alpha per feature over the rounds ``predict`` uses (reversed candidates count negatively).
    metric_matrix_ : ndarray of shape (n_candidates, n_train_queries)
        ``E`` of every candidate on every training query (training only: not pickled, not saved).
    train_queries_ : ndarray
        Positions (integers) of the training queries used (E defined there; training only).
    """

    _parameter_constraints: ClassVar[dict] = {
        "metric": [str],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "early_stopping_rounds": [Interval(Integral, 1, None, closed="left"), None],
        "eval_metric": [str, None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "directions": [StrOptions(set(DIRECTIONS))],
        "scaling": [StrOptions(set(SCALINGS))],
        "max_consecutive": [Interval(Integral, 1, None, closed="left"), None],
        "metric_options": [dict, None],
        "verbose": ["boolean"],
    }
    _training_only: ClassVar[tuple[str, ...]] = ("metric_matrix_", "train_queries_")

    def __init__(self, metric: str = "map", n_estimators: int = 500, early_stopping_rounds: int | None = 1,
                 eval_metric: str | None = None, tol: float = 0.0, directions: str = "positive",
                 scaling: str = "minmax", max_consecutive: int | None = None,
                 metric_options: dict | None = None, verbose: bool = False) -> None:
        self.metric = metric
        self.n_estimators = n_estimators
        self.early_stopping_rounds = early_stopping_rounds
        self.eval_metric = eval_metric
        self.tol = tol
        self.directions = directions
        self.scaling = scaling
        self.max_consecutive = max_consecutive
        self.metric_options = metric_options
        self.verbose = verbose

    # ------------------------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> AdaRank:
        """Train on a `RankingData` or on arrays with ``qid`` / ``group``.

        ``eval_set`` (a `RankingData`, a tuple ``(X, y, qid)`` or a list of them): the first one is
        scored every round (``valid_<eval_metric>``) and, with ``early_stopping_rounds``, decides when
        to stop. ``sample_weight`` weighs queries: ``P_1(i)`` proportional to ``w_i`` and ``P_{t+1}(i)`` to
        ``w_i exp(-E(f_t)_i)`` (a weighted exponential loss; Theorem 1's bound then assumes equal
        weights).
        ``sample_weight``, ``eval_group``, ``eval_qid`` and ``eval_names`` follow LightGBM (see
        `lrank.models._base`).
        """
        self._validate()
        for name in ("n_estimators", "early_stopping_rounds", "max_consecutive"):
            if isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be an int, got {getattr(self, name)!r}")
        metric = _check_metric(self.metric)
        eval_metric = _check_metric(self.eval_metric or metric, "eval_metric")
        data = self._ranking_data(X, y, qid, group)
        self._warn_if_nothing_to_rank(data)
        valids = self._eval_sets(eval_set, eval_group, eval_qid, eval_names, train=(X, y))
        wq = self._sample_weight(sample_weight, data, "query")
        valid = valids[0] if valids else None
        opts = dict(self.metric_options or {})
        opts.setdefault("empty", "skip")  # queries where E is undefined carry no information
        vopts = dict(self.metric_options or {})  # validation scored as evaluate scores it (lrank's default)

        from lrank.metrics import per_query_measure

        # E(f)_i of every training (validation) query: evaluate's values, labels checked once (an Evaluator)
        measure = per_query_measure(data.y, data.qptr, metric, **opts)
        vmeasure = per_query_measure(valid.y, valid.qptr, eval_metric, **vopts) if valid is not None else None
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
        Hv = weak.transform(valid.X) if valid is not None else None

        P = np.full(m, 1.0 / m)  # Fig. 1: P_1(i) = 1/m
        if wq is not None:
            wq = wq[defined]
            if not wq.sum() > 0:
                raise ValueError(f"sample_weight is zero on every query where {metric!r} is defined")
            P = wq / wq.sum()
        f = np.zeros(data.n_docs)
        fv = np.zeros(valid.n_docs) if valid is not None else None
        E_prev = np.zeros(m)  # E(f_0) := 0, as in the appendix proof
        allowed = np.ones(M.shape[0], dtype=np.bool_)
        log_prod = 0.0
        rows: list[dict] = []
        chosen: list[int] = []
        alphas: list[float] = []
        best_v, best_t, stall = -np.inf, 0, 0
        monitored = f"valid_{eval_metric}" if valid is not None else f"train_{metric}"
        reason = f"n_estimators={self.n_estimators} rounds reached"
        run = 0
        for t in self._progress(self.n_estimators, desc=f"AdaRank.{metric}"):
            t += 1
            allowed[:] = True
            if self.max_consecutive is not None and chosen and run >= self.max_consecutive:
                allowed[chosen[-1]] = False
            c, varphi, _ = choose_weak_ranker(M, P, allowed)  # Sec. 3.6: argmax_k sum_i P_t(i) E(h_k)_i
            if c < 0 or not varphi > 0.0:
                reason = f"no weak ranker with positive weighted {metric} (round {t}; Fig. 1: alpha_t > 0)"
                break
            run = run + 1 if chosen and c == chosen[-1] else 1
            Eh = M[c]
            num = float(np.sum(P * (1.0 + Eh)))
            den = float(np.sum(P * (1.0 - Eh)))
            vp = min(varphi, VARPHI_CAP)
            if den <= (1.0 - VARPHI_CAP) * (num + den) / 2.0:
                num, den = 1.0 + vp, 1.0 - vp
            alpha = 0.5 * math.log(num / den)  # Fig. 1: alpha_t = 1/2 ln(sum P (1 + E) / sum P (1 - E))
            f = f + alpha * H[:, c]  # Fig. 1 / Eq. 7: f_t = f_{t-1} + alpha_t h_t
            E_t = measure(f)[defined]
            # Theorem 1: delta_i^t = E(f_t)_i - E(f_{t-1})_i - alpha_t E(h_t)_i
            delta = E_t - E_prev - alpha * Eh
            delta_min = float(delta.min())
            factor = math.exp(-delta_min) * math.sqrt(max(0.0, 1.0 - vp * vp))
            log_prod += -delta_min + 0.5 * math.log(max(1e-300, 1.0 - vp * vp))
            bound = 1.0 - math.exp(log_prod)  # Theorem 1: 1 - prod_t e^{-delta_min^t} sqrt(1 - varphi(t)^2)
            expo = np.exp(-E_t)
            if wq is not None:
                expo *= wq
            Z = float(expo.sum())
            P = expo / Z  # Fig. 1: P_{t+1}(i) = exp(-E(f_t)_i) / sum_j exp(-E(f_t)_j)
            k, s = (int(v) for v in weak.candidates_[c])
            row = dict(candidate=c, feature=k, direction=s, alpha=alpha, varphi=varphi, delta_min=delta_min,
                       bound_factor=factor, bound=bound, Z=Z)
            row[f"train_{metric}"] = float(E_t.mean())
            if valid is not None:
                fv = fv + alpha * Hv[:, c]
                Ev = vmeasure(fv)
                row[f"valid_{eval_metric}"] = float(np.nanmean(Ev))
            rows.append(row)
            chosen.append(c)
            alphas.append(alpha)
            E_prev = E_t
            v = row[monitored]
            if v > best_v + self.tol:
                best_v, best_t, stall = v, t, 0
            else:
                stall += 1
                if self.early_stopping_rounds is not None and stall >= self.early_stopping_rounds:
                    reason = (f"no improvement of {monitored} for {stall} round(s)"
                              + ("" if valid is not None else " (the paper's rule, Sec. 4.1)"))
                    break

        if self.early_stopping_rounds is not None:
            # keep the rounds up to the best one (the rounds tried after it are discarded, as the paper's
            # T is the last round that improved); n_iter_ = best_iteration_
            if len(chosen) > best_t:
                reason += f"; rounds {best_t + 1}..{len(chosen)} discarded"
            chosen, alphas, rows = chosen[:best_t], alphas[:best_t], rows[:best_t]
        self.weak_rankers_ = weak
        self.candidates_ = np.asarray(chosen, dtype=np.int64)
        self.estimators_ = [weak.ranker(c) for c in self.candidates_]
        self.alphas_ = np.asarray(alphas, dtype=np.float64)
        self.n_iter_ = len(chosen)
        self.best_iteration_ = None if self.early_stopping_rounds is None or not chosen else int(best_t)
        cols = ["candidate", "feature", "direction", "alpha", "varphi", "delta_min", "bound_factor", "bound",
                "Z", f"train_{metric}"] + ([f"valid_{eval_metric}"] if valid is not None else [])
        self.history_ = self._history(rows, columns=cols)
        self.metric_matrix_ = M
        self.train_queries_ = np.flatnonzero(defined).astype(np.int64)
        self.stop_reason_ = reason
        imp = np.zeros(data.n_features)
        used = self._num_iteration(None)
        for h, a in zip(self.estimators_[:used], self.alphas_[:used]):
            imp[h.feature] += a * h.direction
        self.feature_importances_ = imp
        return self

    def to_lightgbm(self, path: Any = None, data: Any = None) -> str:
        """Refused, with the reason: no LightGBM model predicts as AdaRank (`lrank.io.lightgbm`)."""
        from lrank.io.lightgbm import to_lightgbm

        return to_lightgbm(self, path, data=data)

    # -------------------------------------------------------------------------------- predict
    def staged_predict(self, X: Any):
        """Yield ``f_t(x)`` for t = 1 .. n_iter_ (float64 arrays)."""
        self._check_fitted()
        Xf = self._features(X, self.n_features_in_)
        f = np.zeros(Xf.shape[0])
        for h, a in zip(self.estimators_, self.alphas_):
            f = f + a * h(Xf)
            yield f.copy()

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Scores ``f_T(x) = sum_{t<=T} alpha_t h_t(x)`` (Eq. 7); higher ranks first.

        ``T = num_iteration``, else ``best_iteration_`` (early stopping), else ``n_iter_``.
        """
        T = self._num_iteration(num_iteration)
        Xf = self._features(X, self.n_features_in_)
        f = np.zeros(Xf.shape[0])
        for h, a in zip(self.estimators_[:T], self.alphas_[:T]):
            f = f + a * h(Xf)
        return f


__all__ = ["AdaRank", "SingleFeatureRanker", "VARPHI_CAP"]
