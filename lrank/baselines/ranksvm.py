"""Pairwise linear Ranking SVM (Herbrich et al. 2000; Joachims 2002) and the BM25 feature columns.

Ranking SVM, the AdaRank paper's baseline, learns a linear ``f(x) = w . x`` with the hinge loss on
within-query document-pair differences:

    min_w  1/2 ||w||^2 + C sum_{(i, j): y_i > y_j, same query} max(0, 1 - w . (x_i - x_j)).

It is solved here as a binary linear SVM on the difference vectors with scikit-learn's ``LinearSVC``
(liblinear; ``loss="hinge"``, no intercept). Half of the pairs, chosen with ``random_state``, enter
as ``(x_j - x_i, -1)`` so that both classes are present (the objective is unchanged: the hinge of the
flipped pair is the same number). Features are standardised with the training documents' mean and
standard deviation, and a missing value (NaN) becomes the training mean (0 after standardising), so
it does not move a document. ``C`` is chosen on validation queries (``eval_set``, or a query split of
the training data) by a ranking metric, then the model is refit on all training queries.

``BM25_FEATURES`` names the columns that hold BM25 in the benchmark data sets, for the BM25 baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval

from lrank.data.container import RankingData
from lrank.models._base import BaseRanker

#: BM25 columns (0-based) per data set family, by stream.
#:
#: * ``"mslr"`` (MSLR-WEB10K / WEB30K, 136 features): features 106-110 (1-based) are BM25 of body,
#:   anchor, title, url and whole document. The official feature list (Microsoft Research's MSLR
#:   "feature.aspx" page) groups features in blocks of five streams in that order from feature 1; the
#:   copy of the page that could be read here stops at feature 70 (1-5 covered query term number, ...,
#:   66-70 variance of stream-length-normalised tf), and the rest is from memory of the same list:
#:   71-95 tf*idf statistics, 96-100 boolean model, 101-105 vector space model, 106-110 BM25,
#:   111-125 LMIR.ABS / DIR / JM, 126-136 query-independent features. On the MSLR sample, columns
#:   106 and 110 (body and whole-document BM25) are close on every row, as they should be.
#: * ``"letor3-gov"`` (LETOR 3.0 TD2003 / TD2004 / HP / NP, 64 features): 21-25 are BM25 of body,
#:   anchor, title, URL, whole document (1-based); LETOR book Table 10.2 lists 36-40 as LMIR.JM of the
#:   same streams.
#: * ``"letor3-ohsumed"`` (45 features): 11, 26, 41 (1-based) are BM25 of title, abstract and
#:   title + abstract, recalled from the LETOR 3.0 feature list (15 features per field: L1-L10, BM25,
#:   log BM25, LMIR.DIR, LMIR.JM, LMIR.ABS) and not checked against the file here.
BM25_FEATURES: dict[str, dict[str, int]] = {
    "mslr": {"body": 105, "anchor": 106, "title": 107, "url": 108, "whole document": 109},
    "letor3-gov": {"body": 20, "anchor": 21, "title": 22, "url": 23, "whole document": 24},
    "letor3-ohsumed": {"title": 10, "abstract": 25, "title + abstract": 40},
}

#: The single BM25 column the AdaRank figures use per data set family (whole document / title+abstract).
BM25_FEATURE: dict[str, int] = {"mslr": 109, "letor3-gov": 24, "letor3-ohsumed": 40}


def pair_differences(data: RankingData, random_state: int | None = None,
                     max_pairs_per_query: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Difference vectors ``x_hi - x_lo`` of every within-query critical pair, half of them flipped.

    Parameters
    ----------
    data : RankingData
        Features must already be finite (standardised, NaN filled).
    random_state : int, optional
        Chooses the flipped half (and the subsample).
    max_pairs_per_query : int, optional
        Keep at most this many pairs per query (uniform without replacement). None keeps all.

    Returns
    -------
    D : ndarray (n_pairs, n_features), float64
    s : ndarray (n_pairs,), int  (+1 or -1)
    """
    rng = np.random.default_rng(random_state)
    hi, lo, _ = data.pairs("none")
    if max_pairs_per_query is not None:
        qof = data.query_index()[hi]
        keep = np.zeros(hi.size, dtype=bool)
        starts = np.r_[0, np.flatnonzero(np.diff(qof)) + 1, hi.size] if hi.size else np.zeros(1, dtype=int)
        for a, b in zip(starts[:-1], starts[1:]):
            if b - a <= max_pairs_per_query:
                keep[a:b] = True
            else:
                keep[a + rng.choice(b - a, size=max_pairs_per_query, replace=False)] = True
        hi, lo = hi[keep], lo[keep]
    X = data.X.astype(np.float64)
    D = X[hi] - X[lo]
    s = np.where(rng.random(hi.size) < 0.5, 1, -1)
    D *= s[:, None]
    return D, s


class RankSVM(BaseRanker):
    """Pairwise linear Ranking SVM (hinge loss on within-query pair differences; liblinear).

    Parameters
    ----------
    C : float or None, default None
        The SVM's C. ``None`` chooses it from ``Cs`` on validation queries.
    Cs : sequence of float
        Candidates for ``C``.
    select_by : str, default "map"
        lrank metric used to choose ``C`` (higher is better).
    validation_fraction : float, default 0.25
        Share of the training queries held out to choose ``C`` when ``fit`` gets no ``eval_set``.
    max_pairs_per_query : int, optional
        Subsample each query's pairs (None: all pairs, the paper's setting).
    max_iter : int, default 2000
        liblinear iterations (large C on heavy-tailed features converges slowly; the default Cs stay small).
    metric_options : dict, optional
        Passed to `lrank.metrics.evaluate` when choosing ``C``.
    random_state : int, optional
        Flipped pairs, subsample and the validation split (liblinear's own shuffling too).

    Not a boosting model: it has no rounds, so no ``n_estimators`` / ``staged_predict`` / ``history_``.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
        ``w`` on the standardised features.
    C_ : float
        The C used.
    validation_scores_ : dict
        ``C -> select_by`` on the validation queries (empty when ``C`` was given).
    n_iter_ : int
        liblinear's iterations in the final fit (scikit-learn's meaning; there are no boosting rounds).
    mean_, scale_ : ndarray
        Standardisation of the training documents.
    """

    _parameter_constraints: ClassVar[dict] = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "Cs": ["array-like"],
        "select_by": [str],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "max_pairs_per_query": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "metric_options": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(self, C: float | None = None, Cs: Sequence[float] = (1e-4, 1e-3, 1e-2, 1e-1),
                 select_by: str = "map", validation_fraction: float = 0.25,
                 max_pairs_per_query: int | None = None, max_iter: int = 2000,
                 metric_options: dict | None = None, random_state: int | None = None) -> None:
        self.C = C
        self.Cs = Cs
        self.select_by = select_by
        self.validation_fraction = validation_fraction
        self.max_pairs_per_query = max_pairs_per_query
        self.max_iter = max_iter
        self.metric_options = metric_options
        self.random_state = random_state

    # -------------------------------------------------------------------------------- helpers
    def _standardise(self, X: np.ndarray) -> np.ndarray:
        Z = (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_
        return np.where(np.isnan(Z), 0.0, Z)

    def _solve(self, data: RankingData, C: float) -> tuple[np.ndarray, int]:
        from sklearn.svm import LinearSVC

        std = RankingData(self._standardise(data.X), data.y, data.qptr)
        D, s = pair_differences(std, self.random_state, self.max_pairs_per_query)
        if D.shape[0] == 0:
            return np.zeros(data.n_features), 0
        if np.unique(s).size < 2:  # a single pair: add its mirror so liblinear sees two classes
            D, s = np.vstack([D, -D]), np.r_[s, -s]
        svm = LinearSVC(C=C, loss="hinge", fit_intercept=False, dual=True, max_iter=self.max_iter,
                        random_state=0 if self.random_state is None else self.random_state)
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svm.fit(D, s)
        return svm.coef_.ravel().astype(np.float64), int(svm.n_iter_)

    # ------------------------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            eval_set: Any = None) -> RankSVM:
        """Train; with ``C=None`` first choose C on the first ``eval_set`` (or held-out training queries)."""
        from lrank.metrics import evaluate, parse_metric

        self._validate()
        try:
            parse_metric(self.select_by)
        except (ValueError, KeyError) as exc:
            raise ValueError(f"select_by={self.select_by!r} is not an lrank metric: {exc}") from None
        if self.random_state is not None and not isinstance(self.random_state, (int, np.integer)):
            raise TypeError(f"random_state must be an int or None, got {type(self.random_state).__name__}")
        data = self._ranking_data(X, y, qid, group)
        valids = self._eval_sets(eval_set)
        eval_set = valids[0] if valids else None
        Xd = data.X.astype(np.float64)
        mean = np.nanmean(np.where(np.isnan(Xd).all(axis=0), 0.0, Xd), axis=0)
        sd = np.nanstd(np.where(np.isnan(Xd).all(axis=0), 0.0, Xd), axis=0)
        self.mean_ = np.nan_to_num(mean)
        self.scale_ = np.where(np.nan_to_num(sd) > 0, np.nan_to_num(sd), 1.0)
        self.n_features_in_ = data.n_features
        opts = dict(self.metric_options or {})
        self.validation_scores_: dict = {}
        if self.C is not None:
            C = float(self.C)
        else:
            Cs = [float(c) for c in self.Cs]
            if not Cs or min(Cs) <= 0 or not all(np.isfinite(Cs)):
                raise ValueError(f"Cs must be a non-empty sequence of positive numbers, got {self.Cs!r}")
            if eval_set is not None:
                train, valid = data, eval_set
            else:
                if data.n_queries < 2:
                    raise ValueError("choosing C needs >= 2 training queries or an eval_set")
                order = np.random.default_rng(self.random_state).permutation(data.n_queries)
                n_val = max(1, int(round(self.validation_fraction * data.n_queries)))
                train, valid = data.subset(np.sort(order[n_val:])), data.subset(np.sort(order[:n_val]))
            for c in Cs:
                w, _ = self._solve(train, c)
                s = self._standardise(valid.X) @ w
                self.validation_scores_[c] = float(evaluate(valid.y, s, valid.qptr, [self.select_by],
                                                            **opts)[self.select_by])
            C = max(Cs, key=lambda c: (self.validation_scores_[c], -Cs.index(c)))
        self.C_ = C
        self.coef_, self.n_iter_ = self._solve(data, C)
        return self

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Scores ``w . standardise(x)`` (``num_iteration`` must be None: a linear model has no rounds)."""
        if num_iteration is not None:
            raise ValueError(f"num_iteration must be None for RankSVM (no rounds), got {num_iteration!r}")
        self._check_fitted("coef_")
        Xf = self._features(X, self.n_features_in_)
        return self._standardise(Xf) @ self.coef_


__all__ = ["BM25_FEATURE", "BM25_FEATURES", "RankSVM", "pair_differences"]
