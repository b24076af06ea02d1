"""AdaBoost with decision stumps: the illustrative example of the BoostingTree paper (Sec. 3.2).

A stump (Sec. 3.2) is a half line ``H`` and a weight ``v``: ``w(u) = v`` if ``u in H`` and ``-v``
otherwise, with ``H = {u <= theta}`` or ``H = {u > theta}``.  The model is ``M(x) = sum_j w_j(x_{i_j})``
and the classifier says ``+`` when ``M(x) >= 0``.  One AdaBoost step (Freund & Schapire 1997) reweights
the data by ``D(i) ~ exp(-y_i M(x_i))``, picks the stump of least weighted error ``eps`` (optionally
among the stumps of the features a *constraint* allows) and weights it by

    alpha = 1/2 ln((1 - eps) / eps).

Ties.  On the paper's 8-point problem (as notebook 03 reconstructs it, Sec. 5a) several stumps often
have exactly the same weighted error, and the choice decides the sequence.  ``tie_break="paper"`` (the
default) is the tie rule notebook 03 reconstructs (Secs. 5b-5c), the only documented rule found that
reproduces every choice of Tables 1 and 2: *unconstrained* steps prefer ``H = {u <= theta}``, then the
lower feature index, then the lower threshold; *constrained* steps prefer ``H = {u > theta}``, then the
higher threshold (then the lower feature).  ``"first"`` takes ``<=`` before ``>``, lower feature, lower
threshold; ``"random"`` draws among the tied stumps with ``random_state``.  Two errors count as tied when
they differ by at most ``tol`` (floating-point noise; the exact errors are multiples of 1/72 on the
example), and ``M(x) >= -tol * sum|alpha|`` counts as ``M(x) >= 0`` (the paper's tie ``M(x) = 0 -> +``
matters in Table 2, where two stumps of equal weight cancel).

Missing values (NaN) lie below every value: they are in ``{u <= theta}`` for every threshold.
Thresholds are midpoints between consecutive distinct values of a feature.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from lrank.models._base import BaseRanker, TreeEnsembleMixin
from lrank.models._params import Count

__all__ = ["Stump", "AdaBoostStep", "AdaBoostStumps"]

TIE_BREAKS = ("paper", "first", "random")


@dataclass(frozen=True)
class Stump:
    """A weighted decision stump ``w(u) = alpha`` if ``u in H`` else ``-alpha`` (paper Sec. 3.2).

    ``direction`` is ``"le"`` for ``H = {u <= threshold}`` and ``"gt"`` for ``H = {u > threshold}``.
    ``error`` is the weighted training error it had when chosen.
    """

    feature: int
    threshold: float
    direction: str
    alpha: float
    error: float = float("nan")

    def contains(self, X: np.ndarray) -> np.ndarray:
        """``x_feature in H`` for every row (NaN is below every value)."""
        u = np.asarray(X, dtype=np.float64)[:, self.feature]
        u = np.where(np.isnan(u), -np.inf, u)
        inside = u <= self.threshold
        return inside if self.direction == "le" else ~inside

    def predict(self, X: np.ndarray) -> np.ndarray:
        """``w(x) = alpha`` inside ``H``, ``-alpha`` outside."""
        return np.where(self.contains(X), self.alpha, -self.alpha)

    def split(self) -> str:
        """The split as the paper prints it (Table 1): ``'<= 0.4'`` or ``'> 0.6'``."""
        return f"{'<=' if self.direction == 'le' else '>'} {self.threshold:.6g}"

    def __str__(self) -> str:
        return f"f{self.feature + 1} {self.split()} (alpha={self.alpha:.4f})"


def _candidates(X: np.ndarray, y: np.ndarray, D: np.ndarray, features: Sequence[int]):
    """Weighted error of every stump on ``features``: arrays (err, direction 0=le/1=gt, feature, theta)."""
    errs, dirs, feats, thetas = [], [], [], []
    pos = y > 0
    for j in features:
        u = X[:, j].astype(np.float64)
        u = np.where(np.isnan(u), -np.inf, u)
        order = np.argsort(u, kind="stable")
        us = u[order]
        wpos = np.where(pos[order], D[order], 0.0)
        wneg = np.where(pos[order], 0.0, D[order])
        last = np.flatnonzero(us[1:] != us[:-1])  # last index of each distinct value but the largest
        if last.size == 0:
            continue
        cpos = np.cumsum(wpos)[last]
        cneg = np.cumsum(wneg)[last]
        tot_pos = wpos.sum()
        tot_neg = wneg.sum()
        err_le = cneg + (tot_pos - cpos)          # H = {u <= theta}: + inside, - outside
        err_gt = cpos + (tot_neg - cneg)          # H = {u > theta}
        a, b = us[last], us[last + 1]
        with np.errstate(invalid="ignore"):
            theta = a + (b - a) / 2.0
        theta = np.where((theta >= b) | ~np.isfinite(theta), a, theta)
        k = last.size
        errs += [err_le, err_gt]
        dirs += [np.zeros(k, np.int8), np.ones(k, np.int8)]
        feats += [np.full(k, j, np.int64)] * 2
        thetas += [theta, theta]
    if not errs:
        return None
    return np.concatenate(errs), np.concatenate(dirs), np.concatenate(feats), np.concatenate(thetas)


def _break_tie(idx: np.ndarray, dirs, feats, thetas, rule: str, constrained: bool,
               rng: np.random.Generator | None) -> int:
    """Pick one of the tied candidates ``idx`` (notebook 03's tie rule for ``rule="paper"``, Secs. 5b-5c)."""
    if idx.size == 1:
        return int(idx[0])
    if rule == "random":
        return int(idx[rng.integers(idx.size)])
    d, f, th = dirs[idx], feats[idx], thetas[idx]
    if rule == "first":
        keys = (th, f, d)                       # lexsort: last key is primary
    elif constrained:  # RULE_C: prefer '>', then the higher theta, then the lower feature
        keys = (f, -th, -d.astype(np.int64))
    else:  # RULE_U: prefer '<=', then the lower feature, then the lower theta
        keys = (th, f, d)
    return int(idx[np.lexsort(keys)[0]])


class AdaBoostStep:
    """The boosting-step protocol for AdaBoost with stumps (binary classification).

    A *model* is the vector of scores ``M(x_i)`` on the training points; ``step(model, constraint)``
    returns ``(stump, new_model)`` and ``score(model)`` the training accuracy ``f = 1 - error`` that
    BOOSTINGTREE maximises (Sec. 3.2).  A constraint is a tuple of allowed feature indices (the paper's
    constraints allow one feature); ``None`` allows every feature.
    """

    def __init__(self, X: Any, y: Any, tie_break: str = "paper", tol: float = 1e-9,
                 random_state: int | np.random.Generator | None = None) -> None:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}")
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must hold one label per row ({X.shape[0]}), got shape {y.shape}")
        labels = np.unique(y)
        if not (set(labels.tolist()) <= {-1, 1} or set(labels.tolist()) <= {0, 1}):
            raise ValueError(f"AdaBoostStumps is binary: labels must be in {{-1, +1}} or {{0, 1}}, "
                             f"got {labels}")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
        self.X = X
        self.y = np.where(y > 0, 1.0, -1.0)
        self.tie_break = tie_break
        self.tol = float(tol)
        self.rng = np.random.default_rng(random_state)
        self.n_features = X.shape[1]
        self.constraint_size = 1
        self.metric = "accuracy"          # the measure f of `score` (history_ column train_accuracy)

    def initial_model(self) -> np.ndarray:
        """The empty model: ``M = 0`` on every training point."""
        return np.zeros(self.X.shape[0])

    def weights(self, model: np.ndarray) -> np.ndarray:
        """AdaBoost's distribution ``D(i) ~ exp(-y_i M(x_i))`` (the reweighting, recomputed from M)."""
        m = -self.y * model
        w = np.exp(m - m.max())
        return w / w.sum()

    def fit_stump(self, model: np.ndarray, constraint: Sequence[int] | None = None) -> Stump:
        """The weak learner: least weighted error stump, ties by ``tie_break``; alpha = 1/2 ln((1-e)/e)."""
        D = self.weights(model)
        constrained = constraint is not None
        feats = range(self.n_features) if constraint is None else [int(k) for k in constraint]
        for k in feats:
            if not 0 <= k < self.n_features:
                raise ValueError(f"constraint feature {k} out of range 0..{self.n_features - 1}")
        cand = _candidates(self.X, self.y, D, feats)
        if cand is None:  # every allowed feature is constant: no split, a zero hypothesis
            k = next(iter(feats), 0)
            return Stump(int(k), float("inf"), "le", 0.0, 0.5)
        err, dirs, fs, th = cand
        best = err.min()
        tied = np.flatnonzero(err <= best + self.tol)
        i = _break_tie(tied, dirs, fs, th, self.tie_break, constrained, self.rng)
        eps = float(min(max(err[i], 1e-12), 1 - 1e-12))
        alpha = 0.5 * np.log((1.0 - eps) / eps)
        return Stump(int(fs[i]), float(th[i]), "le" if dirs[i] == 0 else "gt", float(alpha), float(err[i]))

    def step(self, model: np.ndarray, constraint: Sequence[int] | None = None) -> tuple[Stump, np.ndarray]:
        """One AdaBoost step ``A(M, C, D)``: returns ``(w, M + w)`` on the training points."""
        w = self.fit_stump(model, constraint)
        return w, model + w.predict(self.X)

    def apply(self, hypothesis: Stump, X: np.ndarray) -> np.ndarray:
        return hypothesis.predict(X)

    def classify(self, scores: np.ndarray, total_alpha: float) -> np.ndarray:
        """``+1`` where ``M(x) >= 0`` (to within ``tol * sum|alpha|``), else ``-1``."""
        return np.where(scores >= -self.tol * max(total_alpha, 1.0), 1.0, -1.0)

    def score(self, model: np.ndarray) -> float:
        """``f = 1 - training classification error`` of the model (``M >= 0`` -> class +)."""
        pred = self.classify(model, float(np.abs(model).max(initial=0.0)))
        return float(np.mean(pred == self.y))


class AdaBoostStumps(TreeEnsembleMixin, BaseRanker):
    """AdaBoost with decision stumps (the BoostingTree paper's illustrative example, Sec. 3.2).

    A binary classifier, not a ranker: ``fit(X, y)`` takes labels in {-1, +1} (or {0, 1}) and no
    ``qid`` / ``group`` (class flag ``binary_classifier = True``); ``predict`` gives classes and
    ``decision_function`` the scores ``M(x)``. Otherwise it follows the estimator contract of
    `lrank.models._base` (``n_estimators``, ``history_`` by iteration, ``num_iteration``, save/load).

    Parameters
    ----------
    n_estimators : int
        Number of stumps T.
    constraint : int or sequence of int or None
        Restrict every stump to these feature indices (Table 1, right: ``constraint=0``, feature 1).
    tie_break : {"paper", "first", "random"}
        Rule among stumps of equal weighted error (module docstring; notebook 03, Secs. 5b-5c).
    tol : float
        Tolerance for equal errors and for ``M(x) = 0``.
    random_state : int or None
        Used by ``tie_break="random"``.

    Attributes
    ----------
    estimators_ : list
        The stumps, one per round.
    alphas_ : ndarray
    n_iter_, best_iteration_ (always None), stop_reason_
    history_ : pandas.DataFrame
        Indexed by ``iteration``: ``feature`` (1-based, as the paper), ``threshold``, ``split``, ``error``
        (the weighted error eps_t), ``alpha``, ``train_error``.

    Examples
    --------
    >>> from lrank.papers.boostingtree import illustrative_example
    >>> X, y = illustrative_example()
    >>> [round(a, 4) for a in AdaBoostStumps(n_estimators=5).fit(X, y).alphas_]
    [0.5493, 0.5493, 0.6264, 0.763, 0.673]
    """

    #: a binary classifier: ``fit(X, y)`` without query ids (the rankers' contract asks for qid/group)
    binary_classifier: ClassVar[bool] = True
    _estimator_type = "classifier"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Count(1)],
        "constraint": [Count(0), "array-like", None],
        "tie_break": [StrOptions(set(TIE_BREAKS))],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators: int = 10, constraint: int | Sequence[int] | None = None,
                 tie_break: str = "paper", tol: float = 1e-9, random_state: int | None = None) -> None:
        self.n_estimators = n_estimators
        self.constraint = constraint
        self.tie_break = tie_break
        self.tol = tol
        self.random_state = random_state

    # ------------------------------------------------------------------ the protocol
    def boosting_step(self, X: Any, y: Any = None, **_: Any) -> AdaBoostStep:
        """The step protocol object BoostingTree and Exp3P drive (data given as arrays)."""
        self._validate()
        if y is None and hasattr(X, "y"):
            X, y = X.X, X.y
        return AdaBoostStep(X, y, tie_break=self.tie_break, tol=self.tol, random_state=self.random_state)

    def fit(self, X: Any, y: Any = None) -> AdaBoostStumps:
        """``n_estimators`` AdaBoost rounds on the binary problem ``(X, y)``."""
        self._validate()
        self._set_feature_names(X)
        base = self.boosting_step(X, y)
        c = self.constraint
        constraint = None if c is None else ((int(c),) if np.isscalar(c) else tuple(int(k) for k in c))
        model = base.initial_model()
        self.estimators_: list[Stump] = []
        rows = []
        for _ in self._progress(self.n_estimators):
            w, model = base.step(model, constraint)
            self.estimators_.append(w)
            rows.append({"feature": w.feature + 1, "threshold": w.threshold, "split": w.split(),
                         "error": w.error, "alpha": w.alpha, "train_error": 1.0 - base.score(model)})
        self.alphas_ = np.array([w.alpha for w in self.estimators_], dtype=np.float64)
        self.n_iter_ = len(self.estimators_)
        self.n_features_in_ = base.n_features
        self.best_iteration_ = None
        self.stop_reason_ = "n_estimators reached"
        self.history_ = self._history(rows, columns=["feature", "threshold", "split", "error", "alpha",
                                                     "train_error"])
        return self

    def decision_function(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """``M(x) = sum_j w_j(x)`` over the first ``num_iteration`` stumps (all by default)."""
        k = self._num_iteration(num_iteration)
        X = self._features(X).astype(np.float64)
        out = np.zeros(X.shape[0])
        for w in self.estimators_[:k]:
            out += w.predict(X)
        return out

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """``M(x)`` after each stump."""
        self._check_fitted()
        X = self._features(X).astype(np.float64)
        out = np.zeros(X.shape[0])
        for w in self.estimators_:
            out = out + w.predict(X)
            yield out

    def _classes(self, m: np.ndarray, k: int) -> np.ndarray:
        return np.where(m >= -self.tol * max(float(np.abs(self.alphas_[:k]).sum()), 1.0), 1, -1)

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Class ``+1`` where ``M(x) >= 0`` (to within ``tol * sum|alpha|``), else ``-1``."""
        k = self._num_iteration(num_iteration)
        return self._classes(self.decision_function(X, k), k)

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Classes after each stump."""
        for k, m in enumerate(self.staged_decision_function(X), start=1):
            yield self._classes(m, k)

    def score(self, X: Any, y: Any = None, **_: Any) -> float:
        """Classification accuracy of ``predict(X)`` against ``y`` in {-1, +1} or {0, 1}."""
        y = np.where(np.asarray(y) > 0, 1, -1)
        return float(np.mean(self.predict(X) == y))
