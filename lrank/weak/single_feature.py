"""Single-feature weak rankers (AdaRank paper, Sec. 3.6): ``h(x) = x_k``, possibly reversed and rescaled.

AdaRank's weak ranker is one feature: the documents of a query are ranked by the value of feature ``k``
and the weak ranker's goodness is the metric of that ranking (Sec. 3.6). Because the model is the
linear combination ``f = sum_t alpha_t h_t`` (Eq. 7), the *values* of ``h`` matter once weak rankers are
added, not only their order. This module fixes those values, and the three choices the paper leaves
open:

Direction
    A feature can rank better reversed (a document length, a URL depth). With ``directions="both"``
    every feature gives two candidates, ``h = z_k`` and ``h = -z_k``; with ``"positive"`` (the paper's
    setting) only ``z_k``. (A constant shift of ``h`` changes no ranking, so ``-z_k`` ranks as ``1 - z_k``.)
Scaling
    ``"minmax"`` (default): ``z_k = (x_k - min_k) / (max_k - min_k)`` with the minimum and maximum over
    the *training* documents, so every weak ranker lies in [0, 1] on the training data and no feature
    dominates ``f`` because of its unit (MSLR mixes counts, lengths and PageRank). ``"standard"``:
    ``z_k = (x_k - mean_k) / sd_k`` (training mean and standard deviation, NaN ignored). Both maps are
    affine and strictly increasing, so each single-feature ranking, and hence the feature x query metric
    matrix, is the one of the raw values; only the values that ``f = sum_t alpha_t h_t`` adds up differ.
    ``"none"``: the raw value, as the paper (whose LETOR features were already normalised). A constant
    feature gets ``z_k = 0``.
Missing values (NaN)
    A missing value is scored as the weak ranker's lowest training value (0, or -1 reversed, after
    min-max scaling):
    a document never gains from a missing feature; it ties with the lowest present value. A feature that
    is missing on every training document is constant (``h = 0``).

A candidate is the pair ``(feature, direction)``; `SingleFeatureRankers.transform` returns the values of
every candidate, `SingleFeatureRanker` is one fitted candidate (callable on a feature matrix), and
`feature_query_matrix` the metric of every candidate on every query (computed once per AdaRank fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

SCALINGS = ("minmax", "standard", "none")
DIRECTIONS = ("positive", "both")


@dataclass(frozen=True)
class SingleFeatureRanker:
    """One weak ranker ``h(x) = direction * (x_k - center) / span`` with a fixed score for a missing ``x_k``.

    Attributes
    ----------
    feature : int
        Column ``k`` (0-based).
    direction : int
        ``+1`` ranks large values first, ``-1`` small values first.
    center, span : float
        ``h(x) = direction * (x_k - center) / span`` for a present value (``center = 0, span = 1``
        without scaling). Subtracting then dividing by a positive number never merges two distinct
        float32 values, so ``h`` ranks exactly as the raw feature.
    missing : float
        ``h`` of a document whose feature ``k`` is NaN (the lowest training value of ``h``).
    """

    feature: int
    direction: int
    center: float
    span: float
    missing: float

    def __call__(self, X: Any) -> np.ndarray:
        """Scores ``h(x)`` of the rows of ``X`` (float64)."""
        x = np.asarray(X, dtype=np.float64)[:, self.feature]
        h = self.direction * ((x - self.center) / self.span)
        return np.where(np.isnan(x), self.missing, h)


class SingleFeatureRankers:
    """All single-feature weak rankers of a feature matrix: each feature, in one or both directions.

    Parameters
    ----------
    scaling : {"minmax", "none"}
        See the module docstring.
    directions : {"positive", "both"}
        ``"positive"``: one candidate per feature (the paper); ``"both"``: also each feature reversed.

    Attributes
    ----------
    candidates_ : ndarray of shape (n_candidates, 2), int64
        ``(feature, direction)`` of each candidate; features first in order, then (with ``"both"``)
        the reversed ones: candidate ``c`` and ``c + n_features`` are one feature's two directions.
    """

    def __init__(self, scaling: str = "minmax", directions: str = "positive") -> None:
        if scaling not in SCALINGS:
            raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
        if directions not in DIRECTIONS:
            raise ValueError(f"directions must be one of {DIRECTIONS}, got {directions!r}")
        self.scaling = scaling
        self.directions = directions

    def fit(self, X: Any) -> SingleFeatureRankers:
        """Learn each feature's training minimum and maximum (NaN ignored)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}")
        n, F = X.shape
        present = ~np.isnan(X)
        any_present = present.any(axis=0)
        lo = np.where(any_present, np.min(np.where(present, X, np.inf), axis=0), 0.0)
        hi = np.where(any_present, np.max(np.where(present, X, -np.inf), axis=0), 0.0)
        self.min_ = lo
        self.max_ = hi
        cnt = present.sum(axis=0)
        mean = np.where(any_present, np.where(present, X, 0.0).sum(axis=0) / np.maximum(cnt, 1), 0.0)
        var = np.where(present, (X - mean) ** 2, 0.0).sum(axis=0) / np.maximum(cnt, 1)
        self.mean_ = mean
        self.std_ = np.sqrt(var)
        self.n_features_in_ = F
        signs = [1] if self.directions == "positive" else [1, -1]
        self.candidates_ = np.array([(k, s) for s in signs for k in range(F)], dtype=np.int64).reshape(-1, 2)
        return self

    def ranker(self, candidate: int) -> SingleFeatureRanker:
        """The fitted weak ranker of candidate ``candidate``."""
        k, s = (int(v) for v in self.candidates_[candidate])
        lo, hi = float(self.min_[k]), float(self.max_[k])
        if self.scaling == "minmax":
            # z = (x - lo) / (hi - lo) in [0, 1]; h = z or -z; lowest training h is 0 or -1
            center, span = lo, (hi - lo if hi > lo else 1.0)
            missing = 0.0 if s == 1 else -(hi - lo) / span
        elif self.scaling == "standard":
            # z = (x - mean) / sd; the lowest training h is (lo - mean) / sd, or -(hi - mean) / sd reversed
            sd = float(self.std_[k])
            center, span = float(self.mean_[k]), (sd if sd > 0 else 1.0)
            missing = (lo - center) / span if s == 1 else -(hi - center) / span
        else:
            center, span = 0.0, 1.0
            missing = lo if s == 1 else -hi
        return SingleFeatureRanker(k, s, center, span, missing)

    def transform(self, X: Any) -> np.ndarray:
        """Values of every candidate on the rows of ``X``: array (n_docs, n_candidates), float64."""
        if not hasattr(self, "candidates_"):
            raise RuntimeError("SingleFeatureRankers is not fitted; call fit first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}), got {X.shape}")
        out = np.empty((X.shape[0], self.candidates_.shape[0]), dtype=np.float64)
        for c in range(self.candidates_.shape[0]):
            out[:, c] = self.ranker(c)(X)
        return out


def feature_query_matrix(H: np.ndarray, y: np.ndarray, qptr: np.ndarray, metric: str,
                         metric_options: dict | None = None) -> np.ndarray:
    """``M[c, q]``: metric ``metric`` of query ``q`` ranked by candidate ``c``'s scores ``H[:, c]``.

    A single-feature weak ranker's measure on a query never changes while AdaRank trains (Sec. 3.6 of
    Xu & Li 2007), so AdaRank computes this matrix once and each round is a weighted sum over it
    (`lrank._kernels.adarank.choose_weak_ranker`). Row ``c`` is ``lrank.metrics.evaluate(y, H[:, c], qptr,
    [metric], per_query=True)`` bit for bit (`lrank.metrics.per_query_measure`: the labels checked once),
    so AdaRank's E is exactly lrank's metric with its tie and empty-query conventions.

    Parameters
    ----------
    H : ndarray of shape (n_docs, n_candidates)
        Scores of every candidate weak ranker (`SingleFeatureRankers.transform`).
    y, qptr : ndarray
        Labels and CSR query offsets.
    metric : str
        An lrank metric name (``"map"``, ``"ndcg@5"``, ...).
    metric_options : dict, optional
        Passed to `lrank.metrics.evaluate` (``gain``, ``discount``, ``empty``, ``rel_threshold``...).

    Returns
    -------
    ndarray of shape (n_candidates, n_queries), float64
        NaN where the metric skips a query (e.g. MAP of a query without relevant documents and
        ``empty="skip"``).
    """
    from lrank.metrics import per_query_measure

    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[0] != np.asarray(y).shape[0]:
        raise ValueError(f"H must be (n_docs, n_candidates) with n_docs = len(y), got {H.shape}")
    measure = per_query_measure(y, qptr, metric, **dict(metric_options or {}))
    nq = np.asarray(qptr).size - 1
    M = np.empty((H.shape[1], nq), dtype=np.float64)
    for c in range(H.shape[1]):
        M[c] = measure(np.ascontiguousarray(H[:, c]))
    return M
