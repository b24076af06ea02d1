"""Gradient-boosted regression trees for ranking: MART, McRank and LambdaMART (Xia, Zhai & Wang).

All three boost `lrank.weak.tree.RegressionTree` over the binned features with one Newton step per leaf
(Eq. 11) and ``f_{t+1} = f_t + alpha g_t`` (Eq. 1, ``alpha = learning_rate``); they differ in the loss:

* `MART`: least squares ``L = sum_d (f(d) - y(d))^2 / 2`` (Example 1; ``L' = f - y``, ``L'' = 1``),
  initial score the mean label. By Theorem 2 every criterion picks the same splits.
* `McRank` (Li, Burges & Wu 2007): ``K``-class logistic regression, Eq. 4-5 (Example 2; per class
  ``L' = p_k - [y = k]``, ``L'' = p_k (1 - p_k)``), one tree per class per iteration; documents are
  ranked by the expected relevance ``sum_k k p_k(d)``. (Friedman's multi-class ``(K-1)/K`` leaf factor
  is not used: the leaf value is the plain Newton step of Eq. 11, the same for SE and OLE.)
* `LambdaMART` (Wu et al. 2010; ALGORITHMS.md section 6): lambdas of NDCG@k with ``sigma = 1``,
  ``L' = -lambda``, ``L'' = w`` (``lrank._kernels.lambdas``); leaf value ``sum lambda / sum w``.
  With ``criterion="ole"`` the split uses the exact pairwise second derivative (Example 4).

``criterion`` is ``"se"`` (the gradient-boosting default, Eq. 3), ``"wse"``, ``"rwse"`` or ``"ole"``.

One boosting step for other algorithms (BoostingTree, EXP3.P)
--------------------------------------------------------------
:func:`lambdamart_step` runs one LambdaMART iteration from a given score vector under a feature
constraint and returns ``(tree, new_scores)``::

    from lrank.data.binning import bin_features
    from lrank.models.gbrt import lambdamart_step, LambdaMARTParams
    bins = bin_features(train.X, strategy="quantile")
    params = LambdaMARTParams(max_leaves=2, learning_rate=0.2, min_data_in_leaf=1)
    tree, new_scores = lambdamart_step(bins.codes, train.y, train.qptr, scores, constraint=[5],
                                       params=params, n_bins=bins.n_bins, thresholds=bins.thresholds)
    test_scores += tree.predict(test.X)   # tree.value_ already includes the learning rate

``constraint`` is None (unconstrained) or the features of the internal nodes in split order (an int
for every node); ``tree.predict(X)`` is the hypothesis ``w(x) = alpha sum_l v_l [x in R_l]`` of
ALGORITHMS.md step (e); ``new_scores = scores + w(training rows)``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lrank._kernels import trees as _tk
from lrank._kernels.lambdas import lambdamart_gradients
from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.models._base import BaseRanker
from lrank.weak.tree import RegressionTree, TreeWorkspace


@dataclass(frozen=True)
class LambdaMARTParams:
    """Parameters of one LambdaMART step (ALGORITHMS.md section 6)."""

    max_leaves: int = 10
    learning_rate: float = 0.1
    min_data_in_leaf: int = 20
    min_sum_hessian_in_leaf: float = 1e-3
    criterion: str = "se"
    growth: str = "best_first"
    ndcg_at: int = 10
    sigma: float = 1.0
    n_jobs: int = 1


# Workspaces reused across lambdamart_step calls on the same codes (BoostingTree, EXP3.P and the standard
# variant call it once per iteration on one binned matrix): (id(codes), thread) -> TreeWorkspace. An entry
# is dropped when its codes are freed; the thread in the key keeps concurrent fits from sharing buffers.
_STEP_WORKSPACES: dict[tuple[int, int], TreeWorkspace] = {}


def _step_workspace(codes: np.ndarray) -> TreeWorkspace | None:
    ws = _STEP_WORKSPACES.get((id(codes), threading.get_ident()))
    return ws if ws is not None and ws.codes is codes else None


def _keep_step_workspace(codes: np.ndarray, ws: TreeWorkspace) -> None:
    if ws.codes is not codes:  # made for a contiguous copy of codes: nothing to reuse
        return
    key = (id(codes), threading.get_ident())
    if _STEP_WORKSPACES.get(key) is None:
        weakref.finalize(codes, _STEP_WORKSPACES.pop, key, None)
    _STEP_WORKSPACES[key] = ws


def lambdamart_step(codes: np.ndarray, y: np.ndarray, qptr: np.ndarray, scores: np.ndarray,
                    constraint: Any = None, params: LambdaMARTParams | dict | None = None, *,
                    n_bins: np.ndarray | None = None, thresholds: list | None = None,
                    workspace: TreeWorkspace | None = None) -> tuple[RegressionTree, np.ndarray]:
    """One LambdaMART iteration from ``scores`` (ALGORITHMS.md section 6, steps (a)-(e)).

    Parameters
    ----------
    codes : uint8 array (n, F)
        Binned training features.
    y, qptr : arrays
        Labels and query offsets of the training documents.
    scores : float array (n,)
        Current model scores ``M(x)``.
    constraint : int, sequence of int or None
        Feature of each internal node in split order (`RegressionTree` ``feature_constraint``).
    params : LambdaMARTParams or dict
        Leaves, learning rate, criterion, NDCG truncation, sigma, ...
    n_bins, thresholds : optional
        From `FeatureBins`; ``thresholds`` lets ``tree.predict`` work on raw features.
    workspace : TreeWorkspace, optional
        Reused buffers; by default those of the previous call on the same ``codes`` in this thread.

    Returns
    -------
    tree : RegressionTree
        Its ``value_`` includes the learning rate: ``tree.predict(X)`` is the weak hypothesis ``w``.
    new_scores : float64 array (n,)
        ``scores + w`` on the training documents.
    """
    if params is None:
        params = LambdaMARTParams()
    elif isinstance(params, dict):
        params = replace(LambdaMARTParams(), **params)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    lam, w, pairs = lambdamart_gradients(y, qptr, scores, k=params.ndcg_at, sigma=params.sigma,
                                         with_pairs=params.criterion == "ole")
    tree = RegressionTree(max_leaves=params.max_leaves, min_data_in_leaf=params.min_data_in_leaf,
                          min_sum_hessian_in_leaf=params.min_sum_hessian_in_leaf, growth=params.growth,
                          criterion=params.criterion, feature_constraint=constraint, n_jobs=params.n_jobs)
    cached = workspace is None
    if cached:
        workspace = _step_workspace(codes)
    tree.fit_gradients(codes, -lam, w, n_bins=n_bins, thresholds=thresholds, pairs=pairs, workspace=workspace)
    if cached:
        _keep_step_workspace(codes, tree.workspace_)
    del tree.workspace_  # the returned tree does not hold the (shared) buffers
    tree.value_ = tree.value_ * params.learning_rate
    return tree, scores + tree.value_[tree.leaf_of_]


class _GBRT(BaseRanker):
    """Shared boosting loop: binning, trees, staged prediction, early stopping on validation."""

    _n_outputs = 1

    def __init__(self, n_trees: int = 100, learning_rate: float = 0.1, max_leaves: int = 10,
                 min_data_in_leaf: int = 20, min_sum_hessian_in_leaf: float = 1e-3, criterion: str = "se",
                 growth: str = "best_first", max_thresholds: int = 254, bin_strategy: str = "quantile",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10", n_jobs: int = 1,
                 random_state: int | None = None, verbose: bool = False):
        self.n_trees = n_trees
        self.learning_rate = learning_rate
        self.max_leaves = max_leaves
        self.min_data_in_leaf = min_data_in_leaf
        self.min_sum_hessian_in_leaf = min_sum_hessian_in_leaf
        self.criterion = criterion
        self.growth = growth
        self.max_thresholds = max_thresholds
        self.bin_strategy = bin_strategy
        self.early_stopping_rounds = early_stopping_rounds
        self.eval_metric = eval_metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- loss-specific hooks -------------------------------------------------------------------
    def _init_raw(self, data: RankingData) -> np.ndarray:
        return np.zeros(self._n_outputs)

    def _derivatives(self, data: RankingData, raw: np.ndarray):
        """Yield ``(output index, grad, hess, pairs)`` for the trees of one iteration."""
        raise NotImplementedError

    def _scores(self, raw: np.ndarray) -> np.ndarray:
        return raw[:, 0]

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None, eval_set: Any = None):
        """Fit on a `RankingData` or arrays; ``eval_set`` (a `RankingData` or ``(X, y, qid)``) enables
        ``early_stopping_rounds`` on ``eval_metric`` and records it in ``history_``."""
        if int(self.n_trees) < 1 or not float(self.learning_rate) > 0:
            raise ValueError("n_trees must be >= 1 and learning_rate > 0")
        data = self._ranking_data(X, y, qid, group)
        valid = None
        if eval_set is not None:
            valid = eval_set if isinstance(eval_set, RankingData) else self._ranking_data(*eval_set[:2],
                                                                                         qid=eval_set[2])
        bins = bin_features(data.X, max_thresholds=self.max_thresholds, strategy=self.bin_strategy,
                            random_state=self.random_state)
        return self._fit_binned(data, bins, valid)

    def _fit_binned(self, data: RankingData, bins, valid: RankingData | None = None):
        """The boosting loop on already binned features (``bins`` from `bin_features` on ``data.X``)."""
        if int(self.n_trees) < 1 or not float(self.learning_rate) > 0:
            raise ValueError("n_trees must be >= 1 and learning_rate > 0")
        self.bins_ = bins
        K = self._n_outputs
        L = int(self.max_leaves)
        M = 2 * L - 1
        T = int(self.n_trees) * K
        feat = np.zeros((T, M), dtype=np.int64)
        theta = np.zeros((T, M))
        left = np.full((T, M), -1, dtype=np.int64)
        right = np.full((T, M), -1, dtype=np.int64)
        value = np.zeros((T, M))
        init = self._init_raw(data)
        raw = np.tile(init, (data.n_docs, 1))
        vraw = np.tile(init, (valid.n_docs, 1)) if valid is not None else None
        ws = None
        hist = {"n_leaves": [], "sum_abs_grad": []}
        if valid is not None:
            hist["valid_" + self.eval_metric] = []
        best, best_it, since = -np.inf, 0, 0
        iterator = range(int(self.n_trees))
        if self.verbose:
            from tqdm.auto import tqdm

            iterator = tqdm(iterator, desc=type(self).__name__)
        t = 0
        n_iter = 0
        for it in iterator:
            leaves = 0
            sag = 0.0
            for k, grad, hess, pairs in self._derivatives(data, raw):
                tree = self._tree().fit_gradients(bins.codes, grad, hess, n_bins=bins.n_bins,
                                                  thresholds=bins.thresholds, pairs=pairs, workspace=ws)
                ws = tree.workspace_  # buffers reused by the next tree
                del tree.workspace_
                v = tree.value_ * self.learning_rate
                raw[:, k] += v[tree.leaf_of_]  # Eq. 1
                m = tree.value_.size
                feat[t, :m] = np.maximum(tree.feature_, 0)
                theta[t, :m] = tree.threshold_
                left[t, :m] = tree.children_left_
                right[t, :m] = tree.children_right_
                value[t, :m] = v
                if valid is not None:
                    _tk.predict_add(valid.X, feat, theta, left, right, value, np.array([t]), 1.0, vraw[:, k])
                leaves += tree.n_leaves_
                sag += float(np.abs(grad).sum())
                t += 1
            n_iter = it + 1
            hist["n_leaves"].append(leaves)
            hist["sum_abs_grad"].append(sag)
            if valid is not None:
                from lrank.metrics import evaluate

                score = float(evaluate(valid.y, self._scores(vraw), valid.qptr,
                                       metrics=[self.eval_metric])[self.eval_metric])
                hist["valid_" + self.eval_metric].append(score)
                if score > best:
                    best, best_it, since = score, n_iter, 0
                else:
                    since += 1
                if self.early_stopping_rounds is not None and since >= int(self.early_stopping_rounds):
                    break
        self.init_ = init
        self.trees_ = (feat[:t], theta[:t], left[:t], right[:t], value[:t])
        self.n_iter_ = n_iter
        self.n_features_in_ = data.n_features
        self.best_iteration_ = best_it if valid is not None else n_iter
        self.history_ = {k: np.asarray(v) for k, v in hist.items()}
        self.train_scores_ = self._scores(raw)
        return self

    def _tree(self) -> RegressionTree:
        return RegressionTree(max_leaves=self.max_leaves, min_data_in_leaf=self.min_data_in_leaf,
                              min_sum_hessian_in_leaf=self.min_sum_hessian_in_leaf, growth=self.growth,
                              criterion=self.criterion, n_jobs=self.n_jobs)

    # -- prediction ----------------------------------------------------------------------------
    def _raw(self, X: Any, n_iter: int) -> np.ndarray:
        X = self._features(X, self.n_features_in_)
        K = self._n_outputs
        raw = np.tile(self.init_, (X.shape[0], 1))
        f, th, lt, rt, v = self.trees_
        for k in range(K):
            ids = np.arange(k, n_iter * K, K, dtype=np.int64)
            col = np.ascontiguousarray(raw[:, k])
            _tk.predict_add(X, f, th, lt, rt, v, ids, 1.0, col)
            raw[:, k] = col
        return raw

    def predict(self, X: Any, n_iter: int | None = None) -> np.ndarray:
        """Ranking scores after ``n_iter`` iterations (default: the best validation iteration when
        an ``eval_set`` was given, else all)."""
        self._check_fitted()
        n_iter = self.best_iteration_ if n_iter is None else min(int(n_iter), self.n_iter_)
        return self._scores(self._raw(X, n_iter))

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Ranking scores after each iteration ``1..n_iter_``."""
        self._check_fitted()
        X = self._features(X, self.n_features_in_)
        K = self._n_outputs
        raw = np.tile(self.init_, (X.shape[0], 1))
        f, th, lt, rt, v = self.trees_
        cols = [np.ascontiguousarray(raw[:, k]) for k in range(K)]
        for it in range(self.n_iter_):
            for k in range(K):
                _tk.predict_add(X, f, th, lt, rt, v, np.array([it * K + k], dtype=np.int64), 1.0, cols[k])
            yield self._scores(np.stack(cols, axis=1))


class MART(_GBRT):
    """MART: gradient boosting of regression trees on the least-squares loss (Example 1)."""

    def _init_raw(self, data: RankingData) -> np.ndarray:
        return np.array([float(np.mean(data.y))])

    def _derivatives(self, data, raw):
        yield 0, raw[:, 0] - data.y, np.ones(data.n_docs), None  # L' = f - y, L'' = 1


class McRank(_GBRT):
    """McRank: K-class logistic gradient boosting ranked by expected relevance (Eq. 4-5, Example 2).

    ``n_classes`` defaults to ``max label + 1`` of the training data.
    """

    def __init__(self, n_trees: int = 100, learning_rate: float = 0.1, max_leaves: int = 10,
                 min_data_in_leaf: int = 20, min_sum_hessian_in_leaf: float = 1e-3, criterion: str = "se",
                 growth: str = "best_first", max_thresholds: int = 254, bin_strategy: str = "quantile",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10", n_jobs: int = 1,
                 random_state: int | None = None, verbose: bool = False, n_classes: int | None = None):
        super().__init__(n_trees=n_trees, learning_rate=learning_rate, max_leaves=max_leaves,
                         min_data_in_leaf=min_data_in_leaf, min_sum_hessian_in_leaf=min_sum_hessian_in_leaf,
                         criterion=criterion, growth=growth, max_thresholds=max_thresholds,
                         bin_strategy=bin_strategy, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, n_jobs=n_jobs, random_state=random_state, verbose=verbose)
        self.n_classes = n_classes

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None, eval_set: Any = None):
        data = self._ranking_data(X, y, qid, group)
        if data.y.min() < 0:
            raise ValueError("McRank needs labels 0..K-1")
        self._n_outputs = int(self.n_classes) if self.n_classes is not None else int(data.y.max()) + 1
        if data.y.max() >= self._n_outputs:
            raise ValueError(f"labels reach {data.y.max()} but n_classes={self._n_outputs}")
        self.n_classes_ = self._n_outputs
        return super().fit(data, eval_set=eval_set)

    @staticmethod
    def _proba(raw: np.ndarray) -> np.ndarray:
        e = np.exp(raw - raw.max(axis=1, keepdims=True))  # Eq. 4
        return e / e.sum(axis=1, keepdims=True)

    def _derivatives(self, data, raw):
        p = self._proba(raw)  # all K trees of an iteration use the same p (Friedman's Algorithm 6)
        for k in range(self._n_outputs):
            yield k, p[:, k] - (data.y == k), p[:, k] * (1.0 - p[:, k]), None  # Example 2

    def _scores(self, raw: np.ndarray) -> np.ndarray:
        return self._proba(raw) @ np.arange(raw.shape[1], dtype=np.float64)  # expected relevance

    def predict_proba(self, X: Any, n_iter: int | None = None) -> np.ndarray:
        """Class probabilities ``p_k(d)`` (Eq. 4)."""
        self._check_fitted()
        n_iter = self.best_iteration_ if n_iter is None else min(int(n_iter), self.n_iter_)
        return self._proba(self._raw(X, n_iter))


class LambdaMART(_GBRT):
    """LambdaMART with NDCG@``ndcg_at`` lambdas (``sigma`` = 1) and Newton leaves (ALGORITHMS.md 6)."""

    def __init__(self, n_trees: int = 100, learning_rate: float = 0.1, max_leaves: int = 10,
                 min_data_in_leaf: int = 20, min_sum_hessian_in_leaf: float = 1e-3, criterion: str = "se",
                 growth: str = "best_first", max_thresholds: int = 254, bin_strategy: str = "quantile",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10", n_jobs: int = 1,
                 random_state: int | None = None, verbose: bool = False, ndcg_at: int = 10,
                 sigma: float = 1.0):
        super().__init__(n_trees=n_trees, learning_rate=learning_rate, max_leaves=max_leaves,
                         min_data_in_leaf=min_data_in_leaf, min_sum_hessian_in_leaf=min_sum_hessian_in_leaf,
                         criterion=criterion, growth=growth, max_thresholds=max_thresholds,
                         bin_strategy=bin_strategy, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, n_jobs=n_jobs, random_state=random_state, verbose=verbose)
        self.ndcg_at = ndcg_at
        self.sigma = sigma

    def _derivatives(self, data, raw):
        lam, w, pairs = lambdamart_gradients(data.y, data.qptr, raw[:, 0], k=self.ndcg_at, sigma=self.sigma,
                                             with_pairs=self.criterion == "ole")
        yield 0, -lam, w, pairs
