"""Gradient-boosted regression trees for ranking: MART, McRank and LambdaMART (Xia, Zhai & Wang).

All three boost the tree engine's regression trees (`lrank.trees.grower.TreeGrower`, one per fit) over
the binned features with one Newton step per leaf (Eq. 11) and ``f_{t+1} = f_t + alpha g_t`` (Eq. 1,
``alpha = learning_rate``); they differ in the loss:

* `MART`: least squares ``L = sum_d (f(d) - y(d))^2 / 2`` (Example 1; ``L' = f - y``, ``L'' = 1``),
  initial score the mean label. By Theorem 2 every criterion picks the same splits.
* `McRank` (Li, Burges & Wu 2007): ``K``-class logistic regression, Eq. 4-5 (Example 2; per class
  ``L' = p_k - [y = k]``, ``L'' = p_k (1 - p_k)``), one tree per class per iteration; documents are
  ranked by the expected relevance ``sum_k k p_k(d)``. (Friedman's multi-class ``(K-1)/K`` leaf factor
  is not used: the leaf value is the plain Newton step of Eq. 11, the same for SE and OLE.)
* `LambdaMART` (Wu et al. 2010; the LambdaMART box of notebook 03, Sec. 4): lambdas of NDCG@k with
  ``sigma = 1``, ``L' = -lambda``, ``L'' = w`` (`lambda_derivatives`, the one call into
  ``lrank._kernels.lambdas``); leaf value ``sum lambda / sum w``.
  With ``criterion="ole"`` the split uses the exact pairwise second derivative (Example 4).

``criterion`` is ``"se"`` (the gradient-boosting default, Eq. 3), ``"wse"``, ``"rwse"`` or ``"ole"``.

One boosting step for other algorithms (BoostingTree, EXP3.P)
--------------------------------------------------------------
:func:`lambdamart_step` runs one LambdaMART iteration from a given score vector under a feature
constraint and returns ``(tree, new_scores)``::

    from lrank.data.binning import bin_features
    from lrank.models.gbrt import lambdamart_step, LambdaMARTParams
    bins = bin_features(train.X, threshold_strategy="quantile")
    params = LambdaMARTParams(num_leaves=2, learning_rate=0.2, min_child_samples=1)
    tree, new_scores = lambdamart_step(bins.codes, train.y, train.qptr, scores, constraint=[5],
                                       params=params, n_bins=bins.n_bins, thresholds=bins.thresholds)
    test_scores += tree.predict(test.X)   # tree.value already includes the learning rate

``constraint`` is None (unconstrained) or the features of the internal nodes in split order (an int
for every node); ``tree.predict(X)`` is the hypothesis ``w(x) = alpha sum_l v_l [x in R_l]`` of
step (e) of that box; ``new_scores = scores + w(training rows)``. A caller that takes many steps on one
binned matrix passes ``grower=`` (a `TreeGrower` of those codes and the step's tree parameters) to reuse its
buffers.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, Options, StrOptions

from lrank._kernels.lambdas import check_label_gain, lambdamart_gradients
from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.models._base import BaseRanker, TreeEnsembleMixin, improves
from lrank.models._params import SIGMA
from lrank.trees.grower import Derivatives, TreeGrower
from lrank.trees.predictor import Tree, predict_add, stack


@dataclass(frozen=True)
class LambdaMARTParams:
    """Parameters of one LambdaMART step (reconstructed LambdaMART box): the tree's (as `LambdaMART`'s
    parameters of the same names) and the lambdas' (``ndcg_at``, ``sigma``, ``lambdarank_truncation_level``,
    ``lambdarank_norm``, ``label_gain``: see `LambdaMART`). The defaults are Burges' NDCG@10 lambdas with
    ``2^y - 1`` gains, no truncation below the cut and no normalisation."""

    num_leaves: int = 10
    learning_rate: float = 0.1
    min_child_samples: int = 20
    min_child_weight: float = 1e-3
    criterion: str = "se"
    growth: str = "best_first"
    ndcg_at: int | None = 10
    sigma: float = 1.0
    n_jobs: int = 1
    lambdarank_truncation_level: int | None = None
    lambdarank_norm: bool = False
    label_gain: str | list[float] | None = None


#: documents from which LambdaMART's lambdas use the ``n_jobs`` threads (the parallel twin, ``prange`` over
#: queries: the same bits on any thread count). Below it they stay serial, as small trees do: at 5,000
#: documents (0.8-1.8 ms of lambdas per tree) the second thread was slower on a loaded host (1.8 vs 2.3 ms);
#: at 200,000 documents the lambdas are ~25 ms, a fifth of a 1-thread LambdaMART tree.
PARALLEL_MIN_LAMBDA_DOCS = 50_000


def _lambda_jobs(n_jobs: int, n_docs: int) -> int:
    """Threads for the lambdas of ``n_docs`` documents (`PARALLEL_MIN_LAMBDA_DOCS`)."""
    return n_jobs if n_docs >= PARALLEL_MIN_LAMBDA_DOCS else 1


def lambda_derivatives(y: np.ndarray, qptr: np.ndarray, scores: np.ndarray, *, ndcg_at: int | None,
                       sigma: float, with_pairs: bool, n_jobs: int = 1, truncation_level: int | None = None,
                       norm: bool = False, label_gain: str | np.ndarray | list[float] | None = None,
                       ) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    """LambdaMART's lambdas, weights and (``with_pairs``) pair list at ``scores``: the one call into
    ``lrank._kernels.lambdas`` of `LambdaMART`, `lambdamart_step` and BoostingTree's LambdaMART base
    (``L' = -lambda``, ``L'' = w``; ``ndcg_at`` None: the whole list; ``truncation_level`` and ``norm``:
    LightGBM's lambdarank; ``label_gain``: the gain of each label, see `LambdaMART`)."""
    return lambdamart_gradients(y, qptr, scores, k=ndcg_at or 0, sigma=sigma, with_pairs=with_pairs,
                                n_jobs=_lambda_jobs(n_jobs, scores.size), truncation_level=truncation_level,
                                norm=bool(norm), label_gain=label_gain)


def step_grower(codes: np.ndarray, params: LambdaMARTParams, n_bins: np.ndarray | None = None,
                thresholds: list | None = None) -> TreeGrower:
    """The `TreeGrower` of LambdaMART steps with ``params`` on one binned matrix."""
    return TreeGrower(codes, n_bins, thresholds, num_leaves=params.num_leaves,
                      min_child_samples=params.min_child_samples, min_child_weight=params.min_child_weight,
                      growth=params.growth, criterion=params.criterion, n_jobs=params.n_jobs)


def lambdamart_step(codes: np.ndarray, y: np.ndarray, qptr: np.ndarray, scores: np.ndarray,
                    constraint: Any = None, params: LambdaMARTParams | dict | None = None, *,
                    n_bins: np.ndarray | None = None, thresholds: list | None = None,
                    grower: TreeGrower | None = None) -> tuple[Tree, np.ndarray]:
    """One LambdaMART iteration from ``scores`` (reconstructed LambdaMART box, steps (a)-(e)).

    Parameters
    ----------
    codes : uint8 array (n, F)
        Binned training features.
    y, qptr : arrays
        Labels and query offsets of the training documents.
    scores : float array (n,)
        Current model scores ``M(x)``.
    constraint : int, sequence of int or None
        Feature of each internal node in split order (`lrank.trees.tree.RegressionTree`'s
        ``feature_constraint``).
    params : LambdaMARTParams or dict
        Leaves, learning rate, criterion, NDCG truncation, sigma, ...
    n_bins, thresholds : optional
        From `FeatureBins`; ``thresholds`` lets ``tree.predict`` work on raw features.
    grower : TreeGrower, optional
        The grower of these codes and the tree parameters of ``params`` (`step_grower`), reused from step
        to step; a new one by default.

    Returns
    -------
    tree : Tree
        Its ``value`` includes the learning rate: ``tree.predict(X)`` is the weak hypothesis ``w``.
    new_scores : float64 array (n,)
        ``scores + w`` on the training documents.
    """
    if params is None:
        params = LambdaMARTParams()
    elif isinstance(params, dict):
        params = replace(LambdaMARTParams(), **params)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    lam, w, pairs = lambda_derivatives(y, qptr, scores, ndcg_at=params.ndcg_at, sigma=params.sigma,
                                       with_pairs=params.criterion == "ole", n_jobs=params.n_jobs,
                                       truncation_level=params.lambdarank_truncation_level,
                                       norm=params.lambdarank_norm, label_gain=params.label_gain)
    if grower is None:
        grower = step_grower(codes, params, n_bins, thresholds)
    return weighted_step(grower, grower.derivatives(-lam, w, share_roots=False), pairs, constraint,
                         params.learning_rate, scores)


def weighted_step(grower: TreeGrower, derivatives: Derivatives, pairs: tuple | None, constraint: Any,
                  learning_rate: float, scores: np.ndarray) -> tuple[Tree, np.ndarray]:
    """Fit the step's tree to the lambdas (``derivatives`` of ``grower``: ``L' = -lambda``, ``L'' = w``)
    and weight it: ``(tree, scores + learning_rate * tree(training rows))``, the tree's ``value`` including
    the learning rate."""
    tree, leaf_of = grower.grow(derivatives, pairs=pairs, constraint=constraint)
    tree.value = tree.value * learning_rate
    return tree, scores + tree.value.take(leaf_of)


def mvs_probabilities(grad: np.ndarray, hess: np.ndarray, target: float) -> np.ndarray:
    """Minimal variance sampling's keep probabilities (Ibragimov & Gusev 2019; XGBoost's
    ``sampling_method="gradient_based"``): ``p_i = min(1, s_i / mu)`` with ``s_i = sqrt(g_i^2 + lam h_i^2)``,
    ``lam = (mean |g|)^2``, and ``mu`` such that ``sum p_i = target`` (exact, by sorting: the ``k`` largest
    scores capped at 1, ``mu = (sum of the others) / (target - k)`` for the least ``k`` that keeps the
    others below 1). When at most ``target`` rows have a positive score, every such row has ``p = 1``
    (the sum is then below ``target``); all scores 0: every row ``p = 1``.

    Parameters
    ----------
    grad, hess : float arrays (n,)
        The tree's first and second derivatives.
    target : float
        The expected sample size, ``0 < target <= n`` (``subsample n``).

    Returns
    -------
    float64 array (n,)
    """
    g = np.asarray(grad, dtype=np.float64)
    h = np.asarray(hess, dtype=np.float64)
    lam = float(np.mean(np.abs(g))) ** 2
    s = np.sqrt(g * g + lam * h * h)  # MVS's regularised gradient norm
    pos = int(np.count_nonzero(s > 0))
    if pos == 0:
        return np.ones(g.size)
    if pos <= target:
        return (s > 0).astype(np.float64)
    desc = np.sort(s)[::-1]
    rest = np.cumsum(desc[::-1])[::-1]  # rest[k] = sum of desc[k:]
    k = np.arange(desc.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = rest / (target - k)  # the k largest capped at 1
    ok = (target - k > 0) & (desc <= mu * (1 + 1e-12))  # the largest uncapped score stays <= 1
    kk = int(np.argmax(ok))
    return np.minimum(1.0, s / mu[kk])  # p_i = min(1, s_i / mu)


def mvs_sample(grad: np.ndarray, hess: np.ndarray, target: float, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One minimal variance sample (`mvs_probabilities`): row ``i`` kept when ``u_i < p_i`` (``u`` one
    uniform per row from ``rng``; none kept: the first most probable row), and ``(rows, grad, hess)`` with
    the kept rows (increasing) and copies of the derivatives whose kept entries are divided by ``p_i``."""
    p = mvs_probabilities(grad, hess, target)
    keep = rng.random(p.size) < p
    if not keep.any():
        keep[int(np.argmax(p))] = True
    rows = np.flatnonzero(keep).astype(np.int64)
    g = np.array(grad, dtype=np.float64)
    h = np.array(hess, dtype=np.float64)
    g[rows] /= p[rows]  # unbiased: each kept row stands for 1 / p_i rows
    h[rows] /= p[rows]
    return rows, g, h


def _padded_stats(stats: list[tuple[np.ndarray, ...]], M: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-node split gains and training document counts of the trees as two ``(n_trees, M)`` arrays
    (0 after each tree's own nodes), for ``feature_importances_`` and the LightGBM export."""
    gain, count = np.zeros((len(stats), M)), np.zeros((len(stats), M))
    for t, (g, c) in enumerate(stats):
        gain[t, : g.size], count[t, : c.size] = g, c
    return gain, count


_INT_PARAMS = ("n_estimators", "num_leaves", "min_child_samples", "max_thresholds", "early_stopping_rounds",
               "n_jobs", "random_state", "ndcg_at", "n_classes", "lambdarank_truncation_level")


class _GBRT(TreeEnsembleMixin, BaseRanker):
    """Shared boosting loop: binning, trees, staged prediction, early stopping on ``eval_set``.

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting iterations T (McRank grows ``n_classes`` trees per iteration).
    learning_rate : float, default 0.1
        The shrinkage ``alpha`` of Eq. 1, ``f_{t+1} = f_t + alpha g_t``.
    num_leaves : int, default 10
        Leaves per tree.
    min_child_samples : int, default 20
        Fewest documents in a leaf.
    min_child_weight : float, default 1e-3
        Smallest second-derivative sum ``sum L''`` in a leaf (the exact one for OLE with pairs).
    criterion : {"se", "wse", "rwse", "ole"}, default "se"
        Split criterion: Eq. 3, 7, 9 or 13.
    growth : {"best_first", "breadth_first", "depth_first", "symmetric"}, default "best_first"
        Leaf-wise growth, the paper's width-first growth (Sec. 4.2), depth-first (pre-order: a node's
        left subtree before its right one) growth, which the paper reports as running poorly (notebook 04,
        Sec. 6.5), or symmetric (oblivious) trees, CatBoost's default shape: one split per level shared by
        all its nodes, chosen by CatBoost's Cosine score over all the level's leaves
        (`lrank.trees.grower.TreeGrower.grow_symmetric`); ``num_leaves`` must then be a power of two
        (``2^depth``), ``criterion`` ``"se"`` or ``"rwse"``, and ``min_child_samples`` is not applied (as
        CatBoost's ``min_data_in_leaf``, which its symmetric trees ignore).
    max_thresholds : int, default 254
        Candidate thresholds per feature (`lrank.data.binning.bin_features`).
    threshold_strategy : {"quantile", "subsample", "all"}, default "quantile"
        How the thresholds are chosen.
    early_stopping_rounds : int or None, default None
        Stop when ``eval_metric`` on the first ``eval_set`` has not improved for this many iterations;
        ``predict`` then uses ``best_iteration_``. Needs ``eval_set``.
    eval_metric : str, default "ndcg@10"
        An `lrank.metrics` name, scored on each ``eval_set`` after every iteration (``history_`` columns
        ``valid_<metric>``, ``valid1_<metric>``, ...). The training data is not scored unless it is
        passed in ``eval_set`` (as LightGBM does): a fit without ``eval_set`` evaluates nothing.
    n_jobs : int, default 1
        Threads of the histogram kernels, of ``predict`` and its float32 cast (on enough rows and trees:
        `lrank.trees.predictor.PARALLEL_MIN_PREDICT_WORK`) and, from `PARALLEL_MIN_LAMBDA_DOCS`
        documents, of LambdaMART's lambdas (-1: all numba threads); results do not depend on it.
    random_state : int or None
        Seeds the random choices: the ``"subsample"`` binning, the features of each tree
        (``colsample_bytree``) and the documents of each iteration (``subsample``, a stream of its own:
        the features drawn do not depend on it); the same seed gives the same bits.
    verbose : bool, default False
        A tqdm bar over the iterations.
    reg_lambda : float, default 0.0
        L2 penalty on the leaf values (XGBoost's ``reg_lambda``, LightGBM's ``lambda_l2``), with
        ``criterion="rwse"`` only: each side of a split scores ``G^2 / (H + reg_lambda)`` and a leaf outputs
        ``-G / (H + reg_lambda)`` (`lrank.trees.grower.TreeGrower`); 0 is Eq. 9 and Eq. 11 as printed.
    colsample_bytree : float in (0, 1], default 1.0
        Feature subsampling (LightGBM's ``feature_fraction``, XGBoost's ``colsample_bytree``): each tree
        may split on ``max(1, round(colsample_bytree * n_features))`` features drawn without replacement
        (seeded by ``random_state``), a new draw per tree (per class tree for McRank). 1.0: every feature,
        no draw (the papers' trees).
    subsample : float in (0, 1], default 1.0
        Row subsampling, bagging (XGBoost's ``subsample``, LightGBM's ``bagging_fraction`` with
        ``bagging_freq=1``): each iteration draws ``max(1, round(subsample * n_docs))`` documents (rounded
        half up) without replacement (seeded by ``random_state``; one draw for McRank's class trees of an
        iteration), and its trees are grown on those only (histograms, ``min_child_samples``, leaf values);
        the derivatives are still computed on every document (LambdaMART's lambdas need whole queries) and
        every document's score moves by its leaf's value. 1.0: every document, no draw (the same bits). Not
        with LambdaMART's ``criterion="ole"`` (its pair list).
    random_strength : float >= 0, default 0.0
        CatBoost's split-score noise (``random_strength`` with its default ``random_score_type``,
        NormalWithModelSizeDecrease), ``growth="symmetric"`` only: at iteration ``t`` (from 0) every
        candidate's score at every level of a tree gets ``+ N(0, sigma^2)``, ``sigma = random_strength
        sqrt(mean g^2) m``, the mean over the tree's rows, ``m = e^x / (1 + e^x)`` with ``x = ln n - t
        learning_rate`` (``n`` training documents: the noise decays as the model grows). The normals come
        from a stream of ``random_state`` of their own (spawn key 2). 0.0: no noise, nothing drawn.
    sampling_method : {"uniform", "gradient_based"}, default "uniform"
        How ``subsample`` draws the documents of a tree: uniformly without replacement (bagging), or by
        minimal variance sampling (Ibragimov & Gusev 2019, MVS; XGBoost's ``"gradient_based"``): document
        ``i`` is kept with probability ``p_i = min(1, s_i / mu)``, ``s_i = sqrt(g_i^2 + lam h_i^2)``, ``lam =
        (mean |g|)^2``, ``mu`` such that ``sum p_i = subsample n``, on the bagging stream, and a kept
        document's gradient and hessian are divided by ``p_i`` (a draw per tree: per class tree for
        McRank; should no document be kept, the most probable one is). With ``subsample=1.0`` nothing is
        drawn either way.
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "min_child_samples": [Interval(Integral, 1, None, closed="left")],
        "min_child_weight": [Interval(Real, 0, None, closed="left")],
        "criterion": [StrOptions({"se", "wse", "rwse", "ole"})],
        "growth": [StrOptions({"best_first", "breadth_first", "depth_first", "symmetric"})],
        "max_thresholds": [Interval(Integral, 1, None, closed="left")],
        "threshold_strategy": [StrOptions({"quantile", "subsample", "all"})],
        "early_stopping_rounds": [Interval(Integral, 1, None, closed="left"), None],
        "eval_metric": [str],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "verbose": ["boolean"],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "random_strength": [Interval(Real, 0, None, closed="left")],
        "sampling_method": [StrOptions({"uniform", "gradient_based"})],
    }

    def __init__(self, n_estimators: int = 100, learning_rate: float = 0.1, num_leaves: int = 10,
                 min_child_samples: int = 20, min_child_weight: float = 1e-3, criterion: str = "se",
                 growth: str = "best_first", max_thresholds: int = 254, threshold_strategy: str = "quantile",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10", n_jobs: int = 1,
                 random_state: int | None = None, verbose: bool = False, reg_lambda: float = 0.0,
                 colsample_bytree: float = 1.0, subsample: float = 1.0, random_strength: float = 0.0,
                 sampling_method: str = "uniform"):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.min_child_weight = min_child_weight
        self.criterion = criterion
        self.growth = growth
        self.max_thresholds = max_thresholds
        self.threshold_strategy = threshold_strategy
        self.early_stopping_rounds = early_stopping_rounds
        self.eval_metric = eval_metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.reg_lambda = reg_lambda
        self.colsample_bytree = colsample_bytree
        self.subsample = subsample
        self.random_strength = random_strength
        self.sampling_method = sampling_method

    def _validate(self) -> None:
        """Declared constraints, then what they cannot say: no bools for integers, a known metric."""
        params = self.get_params(deep=False)
        for name in _INT_PARAMS:
            if isinstance(params.get(name), (bool, np.bool_)):
                raise TypeError(f"the {name!r} parameter of {type(self).__name__} must be an int, "
                                f"got {params[name]!r}")
        super()._validate()
        from lrank.metrics import parse_metric

        try:
            parse_metric(self.eval_metric)
        except ValueError as exc:
            raise ValueError(f"the 'eval_metric' parameter of {type(self).__name__}: {exc}") from None

    # -- loss-specific hooks -------------------------------------------------------------------
    def _init_raw(self, data: RankingData) -> np.ndarray:
        return np.zeros(1)

    def _init_raw_weighted(self, data: RankingData, w: np.ndarray) -> np.ndarray:
        return self._init_raw(data)

    def _derivatives(self, data: RankingData, raw: np.ndarray):
        """Yield ``(output index, grad, hess, pairs)`` for the trees of one iteration."""
        raise NotImplementedError

    def _scores(self, raw: np.ndarray) -> np.ndarray:
        return raw[:, 0]

    # -- fitting -------------------------------------------------------------------------------
    #: the natural weighting of ``sample_weight``: "document" (pointwise losses) or "query"
    _weighting: ClassVar[str] = "document"
    #: L'' = 1 for every document (MART): a weighted SE split is then RWSE's
    _unit_hessian: ClassVar[bool] = False
    #: ``criterion="ole"`` grows from a pair list (LambdaMART): no row subsampling
    _ole_pairs: ClassVar[bool] = False

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None, sample_weight: Any = None,
            eval_set: Any = None, eval_group: Any = None, eval_qid: Any = None, eval_names: Any = None):
        """Fit on a `RankingData` or on arrays with ``qid`` / ``group``.

        ``eval_set`` (a `RankingData`, a tuple ``(X, y, qid)``, ``(X, y)`` with ``eval_group`` /
        ``eval_qid``, or a list of them) is scored after every iteration (``history_["valid_<eval_metric>"]``,
        the first set) and enables ``early_stopping_rounds``. ``sample_weight`` multiplies each document's
        gradient and hessian (per document for MART and McRank, per query for LambdaMART), which weighs
        the loss exactly as repeating a document (query) would with the criteria that sum hessians,
        ``"rwse"`` and ``"wse"``. MART's ``"se"`` is then weighted least squares (its ``L'' = 1`` makes
        it RWSE); LambdaMART's and McRank's ``"se"`` (which counts documents) and ``"ole"`` refuse a
        weight.
        """
        self._validate()
        data = self._ranking_data(X, y, qid, group)
        self._check_labels(data)  # before the binning, which takes a while on large sets
        self._warn_if_nothing_to_rank(data)
        valid = self._eval_sets(eval_set, eval_group, eval_qid, eval_names, train=(X, y))
        w = self._sample_weight(sample_weight, data, self._weighting)
        if w is not None and self._weighting == "query":
            w = np.repeat(w, data.group)
        if self.early_stopping_rounds is not None and not valid:
            raise ValueError("early_stopping_rounds needs an eval_set to watch")
        bins = bin_features(data.X, max_thresholds=self.max_thresholds,
                            threshold_strategy=self.threshold_strategy, random_state=self.random_state)
        return self._fit_binned(data, bins, valid, sample_weight=w)

    def _check_labels(self, data: RankingData) -> None:
        """Loss-specific label checks (McRank)."""

    def _fit_binned(self, data: RankingData, bins, valid: list[RankingData] | RankingData | None = None,
                    sample_weight: np.ndarray | None = None):
        """The boosting loop on already binned features (``bins`` from `bin_features` on ``data.X``).

        ``sample_weight`` (float64, one per document) multiplies every gradient and hessian.

        The ensemble is stored as the trees are made (lists of per-tree node arrays, stacked at the
        end): memory follows the iterations run, not ``n_estimators``.
        """
        from lrank.metrics import training_measure

        self._validate()
        self._check_labels(data)
        valid = [] if valid is None else ([valid] if isinstance(valid, RankingData) else list(valid))
        w = sample_weight
        criterion = self.criterion
        if w is not None and criterion == "se" and self._unit_hessian:
            criterion = "rwse"  # L'' = 1: RWSE's G^2/H is SE's G^2/N, with H the documents' weights
        if w is not None and criterion not in ("wse", "rwse"):
            raise ValueError(f"sample_weight needs a split criterion that weighs documents: criterion='rwse' "
                             f"or 'wse', not {self.criterion!r} (SE counts documents; OLE's pairwise second "
                             "derivative has no per-document weight)")
        n_bag = max(1, int(np.floor(self.subsample * data.n_docs + 0.5)))  # as colsample_bytree's count
        if n_bag < data.n_docs and criterion == "ole" and self._ole_pairs:
            raise ValueError(f"subsample={self.subsample!r} cannot be used with criterion='ole': its trees "
                             "split on the pair list's second derivatives, whose pairs reach out-of-bag "
                             "documents")
        if self.random_strength > 0 and self.growth != "symmetric":
            raise ValueError(f"random_strength={self.random_strength!r} needs growth='symmetric' (the other "
                             f"growths' split scans take no score noise), got growth={self.growth!r}")
        mvs = self.sampling_method == "gradient_based" and n_bag < data.n_docs
        init = self._init_raw(data) if w is None else self._init_raw_weighted(data, w)
        M = 2 * int(self.num_leaves) - 1  # nodes of a full tree
        raw = np.tile(init, (data.n_docs, 1))
        vraws = [np.tile(init, (v.n_docs, 1)) for v in valid]
        metric = self.eval_metric
        nodes: list[tuple[np.ndarray, ...]] = []  # per tree: feature, theta, left, right, value (<= M each)
        stats: list[tuple[np.ndarray, ...]] = []  # per tree: split gain, training documents (per node)
        rows: list[dict] = []
        grower = TreeGrower(bins.codes, bins.n_bins, bins.thresholds, num_leaves=self.num_leaves,
                            min_child_samples=self.min_child_samples, min_child_weight=self.min_child_weight,
                            growth=self.growth, criterion=criterion, n_jobs=self.n_jobs,
                            reg_lambda=self.reg_lambda)
        best, best_it, since = -np.inf, 0, 0
        stop = f"n_estimators={self.n_estimators} iterations done"
        n_iter = 0
        step = np.empty(data.n_docs)  # per tree: the leaf values of the documents, then |L'| (no new arrays)
        F = data.n_features
        n_feat = max(1, int(np.floor(self.colsample_bytree * F + 0.5)))  # LightGBM's count, at least one
        rng = np.random.default_rng(self.random_state) if n_feat < F else None  # 1.0: no draw, same bits
        # the documents' draws: a stream of their own (spawn key 1), so the features drawn stay the same
        bag = (np.random.default_rng(np.random.SeedSequence(self.random_state, spawn_key=(1,)))
               if n_bag < data.n_docs else None)
        # the split-score noise (random_strength): a stream of its own (spawn key 2); 0: nothing drawn
        noise = (np.random.default_rng(np.random.SeedSequence(self.random_state, spawn_key=(2,)))
                 if self.random_strength > 0 else None)
        log_n = float(np.log(data.n_docs))
        measures = [training_measure(vd.y, vd.qptr, metric) for vd in valid]  # labels checked once
        for it in self._progress(self.n_estimators):
            leaves = 0
            sag = 0.0
            # bagging: one draw per iteration, in increasing order (the grower's row order)
            rows_in = None if bag is None or mvs else np.sort(bag.choice(data.n_docs, n_bag, replace=False))
            # CatBoost's NormalWithModelSizeDecrease: m = e^x / (1 + e^x), x = ln n - t learning_rate
            scale = 0.0 if noise is None else \
                self.random_strength / (1.0 + np.exp(it * self.learning_rate - log_n))
            for k, grad, hess, pairs in self._derivatives(data, raw):
                if w is not None:
                    grad, hess = grad * w, hess * w
                feats = None if rng is None else rng.choice(F, n_feat, replace=False)  # the grower sorts
                tg, th = grad, hess
                if mvs:  # minimal variance sampling: a draw per tree, the kept rows' derivatives over p
                    rows_in, tg, th = mvs_sample(grad, hess, self.subsample * data.n_docs, bag)
                tree, leaf_of = grower.grow(tg, th, pairs=pairs, features=feats, sample=rows_in,
                                            score_noise=scale, rng=noise)
                v = tree.value * self.learning_rate
                raw[:, k] += np.take(v, leaf_of, out=step)  # Eq. 1: f_{t+1} = f_t + alpha g_t
                one = (tree.feature, tree.threshold, tree.left, tree.right, v)
                nodes.append(one)
                stats.append((tree.gain, tree.count.astype(np.float64)))
                if valid:
                    one = stack([one], M)
                for vd, vr in zip(valid, vraws):
                    col = np.ascontiguousarray(vr[:, k])
                    predict_add(vd.X, one, (0,), col, n_jobs=self.n_jobs)
                    vr[:, k] = col
                leaves += tree.n_leaves
                sag += float(np.abs(grad, out=step).sum())
            n_iter = it + 1
            row = {"n_leaves": leaves, "sum_abs_grad": sag}
            for j, (measure, vr) in enumerate(zip(measures, vraws)):
                name = f"valid_{metric}" if j == 0 else f"valid{j}_{metric}"
                row[name] = measure(self._scores(vr))
            rows.append(row)
            if valid:
                score = row[f"valid_{metric}"]
                if improves(score, best):
                    best, best_it, since = score, n_iter, 0
                else:
                    since += 1
                if self.early_stopping_rounds is not None and since >= self.early_stopping_rounds:
                    stop = (f"early stopping: valid_{metric} did not improve for {since} iterations "
                            f"after iteration {best_it}")
                    break
        self.init_ = init
        self.trees_ = stack(nodes, M)
        self.tree_gain_, self.tree_count_ = _padded_stats(stats, M)
        self.n_iter_ = n_iter
        self.n_features_in_ = data.n_features
        self.best_iteration_ = best_it if self.early_stopping_rounds is not None else None
        self.stop_reason_ = stop
        self.history_ = self._history(rows)
        return self

    # -- prediction ----------------------------------------------------------------------------
    def _raw(self, X: Any, n_iter: int) -> np.ndarray:
        X = self._features(X, self.n_features_in_)
        K = self.init_.size
        raw = np.tile(self.init_, (X.shape[0], 1))
        for k in range(K):
            ids = np.arange(k, n_iter * K, K, dtype=np.int64)
            col = np.ascontiguousarray(raw[:, k])
            predict_add(X, self.trees_, ids, col, n_jobs=self.n_jobs)
            raw[:, k] = col
        return raw

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Ranking scores after ``num_iteration`` iterations.

        ``None``: ``best_iteration_`` when early stopping chose one, else every iteration.
        """
        n = self._num_iteration(num_iteration)
        return self._scores(self._raw(X, n))

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Ranking scores after each iteration ``1..n_iter_``."""
        self._check_fitted()
        X = self._features(X, self.n_features_in_)
        K = self.init_.size
        raw = np.tile(self.init_, (X.shape[0], 1))
        cols = [np.ascontiguousarray(raw[:, k]) for k in range(K)]
        for it in range(self.n_iter_):
            for k in range(K):
                predict_add(X, self.trees_, (it * K + k,), cols[k], n_jobs=self.n_jobs)
            yield self._scores(np.stack(cols, axis=1))


def _parameter_entries(doc: str) -> list[tuple[str, str]]:
    """The entries ``(name, text)`` of a numpydoc docstring's Parameters section, in order."""
    body = inspect.cleandoc(doc).split("\nParameters\n----------\n", 1)[1]
    body = re.split(r"\n\n(?=\S)", body, maxsplit=1)[0]  # up to the next unindented paragraph or section
    starts = [m.start() for m in re.finditer(r"^\w+ : ", body, re.M)]
    ends = [*starts[1:], None]
    return [(body[a:].split(" : ", 1)[0], body[a:b].rstrip("\n")) for a, b in zip(starts, ends)]


def _with_shared_parameters(cls: type) -> type:
    """Class decorator: after ``cls``'s own Parameters entries (its docstring's last section, if it has one)
    come those of `_GBRT` that it does not write itself, so that ``help(cls)`` and the API reference list
    every parameter while the text the tree ensembles share is written once. Under ``python -OO`` (no
    docstrings) it leaves ``cls`` as it is."""
    if cls.__doc__ is None or _GBRT.__doc__ is None:
        return cls
    own = inspect.cleandoc(cls.__doc__)
    written = {name for name, _ in _parameter_entries(own)} if "\nParameters\n---" in own else set()
    shared = "\n".join(text for name, text in _parameter_entries(_GBRT.__doc__) if name not in written)
    cls.__doc__ = own + ("\n" if written else "\n\nParameters\n----------\n") + shared + "\n"
    return cls


@_with_shared_parameters
class MART(_GBRT):
    """MART: gradient boosting of regression trees on the least-squares loss (Example 1).

    ``L = sum_d (f(d) - y(d))^2 / 2``, ``L' = f - y``, ``L'' = 1``; the initial score is the mean label.
    """

    def _init_raw(self, data: RankingData) -> np.ndarray:
        return np.array([float(np.mean(data.y))])

    _unit_hessian: ClassVar[bool] = True

    def _init_raw_weighted(self, data: RankingData, w: np.ndarray) -> np.ndarray:
        return np.array([float(np.average(data.y, weights=w))])

    def _derivatives(self, data, raw):
        # Example 1: L' = f - y, L'' = 1 (a read-only view of one 1.0: no array of ones per tree)
        yield 0, raw[:, 0] - data.y, np.broadcast_to(np.float64(1.0), (data.n_docs,)), None


@_with_shared_parameters
class McRank(_GBRT):
    """McRank: K-class logistic gradient boosting ranked by expected relevance (Eq. 4-5, Example 2).

    One tree per class per iteration.

    Parameters
    ----------
    n_classes : int or None, default None
        The classes ``0 .. n_classes - 1`` (at least 2); None: ``max label + 1`` of the training data
        (fitted: ``n_classes_``).
    """

    _parameter_constraints: ClassVar[dict] = {**_GBRT._parameter_constraints,
                                              "n_classes": [Interval(Integral, 2, None, closed="left"), None]}

    def __init__(self, n_estimators: int = 100, learning_rate: float = 0.1, num_leaves: int = 10,
                 min_child_samples: int = 20, min_child_weight: float = 1e-3, criterion: str = "se",
                 growth: str = "best_first", max_thresholds: int = 254, threshold_strategy: str = "quantile",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10", n_jobs: int = 1,
                 random_state: int | None = None, verbose: bool = False, n_classes: int | None = None,
                 reg_lambda: float = 0.0, colsample_bytree: float = 1.0, subsample: float = 1.0,
                 random_strength: float = 0.0, sampling_method: str = "uniform"):
        super().__init__(n_estimators=n_estimators, learning_rate=learning_rate, num_leaves=num_leaves,
                         min_child_samples=min_child_samples, min_child_weight=min_child_weight,
                         criterion=criterion, growth=growth, max_thresholds=max_thresholds,
                         threshold_strategy=threshold_strategy, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
                         reg_lambda=reg_lambda, colsample_bytree=colsample_bytree, subsample=subsample,
                         random_strength=random_strength, sampling_method=sampling_method)
        self.n_classes = n_classes

    def _check_labels(self, data: RankingData) -> None:
        if data.y.min() < 0:
            raise ValueError(f"McRank needs labels 0..K-1, got {data.y.min()}")
        K = int(self.n_classes) if self.n_classes is not None else max(int(data.y.max()) + 1, 2)
        if data.y.max() >= K:
            raise ValueError(f"labels reach {data.y.max()} but n_classes={K}")
        self.n_classes_ = K

    def _init_raw(self, data: RankingData) -> np.ndarray:
        return np.zeros(self.n_classes_)

    @staticmethod
    def _proba(raw: np.ndarray) -> np.ndarray:
        e = np.exp(raw - raw.max(axis=1, keepdims=True))  # Eq. 4
        return e / e.sum(axis=1, keepdims=True)

    def _derivatives(self, data, raw):
        p = self._proba(raw)  # all K trees of an iteration use the same p (Friedman's Algorithm 6)
        for k in range(raw.shape[1]):
            yield k, p[:, k] - (data.y == k), p[:, k] * (1.0 - p[:, k]), None  # Example 2

    def _scores(self, raw: np.ndarray) -> np.ndarray:
        return self._proba(raw) @ np.arange(raw.shape[1], dtype=np.float64)  # expected relevance

    def predict_proba(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Class probabilities ``p_k(d)`` (Eq. 4) after ``num_iteration`` iterations."""
        return self._proba(self._raw(X, self._num_iteration(num_iteration)))


@_with_shared_parameters
class LambdaMART(_GBRT):
    """LambdaMART: lambdas of NDCG at rank ``ndcg_at``, Newton leaves (reconstructed LambdaMART box).

    ``L' = -lambda``, ``L'' = w`` per document (`lambda_derivatives`); the leaf value is
    ``sum lambda / sum w``. With ``criterion="ole"`` the split uses the node's exact pairwise second
    derivative (Example 3-4).


    The defaults are LightGBM's lambdarank (``ndcg_at=None, lambdarank_truncation_level=30,
    lambdarank_norm=True``) with Newton splits (``criterion="rwse"``, LightGBM's ``G^2 / H`` gain): on the
    MSLR sample and a 200,000-document ``make_letor_like`` set they reach a given test NDCG@10 in fewer trees
    than Burges' NDCG@10 lambdas with least-squares splits (``ndcg_at=10, lambdarank_truncation_level=None,
    lambdarank_norm=False, criterion="se"``, the papers' variant, which `lrank.papers` passes explicitly);
    ``figures/benchmarks.md``, rows "test NDCG@10 reached per second".

    Parameters
    ----------
    ndcg_at : int or None, default None
        Truncation of the NDCG whose changes weight the lambdas: the discount is zero below rank
        ``ndcg_at`` and ``maxDCG`` is the ideal DCG at ``ndcg_at`` (a swap below it weighs nothing). None: the
        discount runs down the whole list (LightGBM's lambdarank), the ideal DCG is cut at
        ``lambdarank_truncation_level``.
    sigma : float, default 1.0
        Steepness of the pairwise logistic loss, ``rho = 1 / (1 + exp(sigma (s_i - s_j)))``.
    lambdarank_truncation_level : int or None, default 30
        LightGBM's pair truncation: only pairs whose higher-scored document ranks in the top
        ``lambdarank_truncation_level`` contribute (LightGBM's default, 30). None: the pairs of NDCG at
        ``ndcg_at`` (every pair with a document in its top ``ndcg_at``; every pair when both are None).
    lambdarank_norm : bool, default True
        LightGBM's lambda normalisation: each pair's ``|Delta NDCG|`` divided by ``0.01 + |s_i - s_j|``
        (once a query's scores differ), then the query's lambdas and weights times ``log2(1 + S) / S``,
        ``S`` the sum of its pairs' ``2 sigma |Delta NDCG| rho``.
    label_gain : None, "linear" or array-like of float, default None
        The gain ``g(y)`` of a label in ``|Delta NDCG|`` and ``maxDCG``. None: ``2^y - 1`` (LightGBM's
        default table). ``"linear"``: the label itself, ``g(y) = y`` (CatBoost's LambdaMart default).
        An array: LightGBM's ``label_gain``, ``g(y) = label_gain[y]`` for the labels ``0, 1, ...``: finite,
        ``>= 0``, non-decreasing in the label (two labels of equal gain make their pairs weigh 0) and
        at least ``max label + 1`` long for the training data (checked at fit time).
    criterion : {"se", "wse", "rwse", "ole"}, default "rwse"
        Split criterion: Eq. 3, 7, 9 or 13 (``"rwse"``: Eq. 9, the Newton gain ``G^2 / H``).
    """

    _weighting: ClassVar[str] = "query"
    _ole_pairs: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict] = {**_GBRT._parameter_constraints,
                                              "ndcg_at": [Interval(Integral, 1, None, closed="left"), None],
                                              "sigma": [SIGMA],
                                              "lambdarank_truncation_level": [
                                                  Interval(Integral, 1, None, closed="left"), None],
                                              "lambdarank_norm": ["boolean"],
                                              "label_gain": [None, StrOptions({"linear"}), "array-like"]}

    def __init__(self, n_estimators: int = 100, learning_rate: float = 0.1, num_leaves: int = 10,
                 min_child_samples: int = 20, min_child_weight: float = 1e-3, criterion: str = "rwse",
                 growth: str = "best_first", max_thresholds: int = 254, threshold_strategy: str = "quantile",
                 early_stopping_rounds: int | None = None, eval_metric: str = "ndcg@10", n_jobs: int = 1,
                 random_state: int | None = None, verbose: bool = False, ndcg_at: int | None = None,
                 sigma: float = 1.0, lambdarank_truncation_level: int | None = 30,
                 lambdarank_norm: bool = True, reg_lambda: float = 0.0, colsample_bytree: float = 1.0,
                 subsample: float = 1.0, random_strength: float = 0.0, sampling_method: str = "uniform",
                 label_gain: str | np.ndarray | list[float] | None = None):
        super().__init__(n_estimators=n_estimators, learning_rate=learning_rate, num_leaves=num_leaves,
                         min_child_samples=min_child_samples, min_child_weight=min_child_weight,
                         criterion=criterion, growth=growth, max_thresholds=max_thresholds,
                         threshold_strategy=threshold_strategy, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
                         reg_lambda=reg_lambda, colsample_bytree=colsample_bytree, subsample=subsample,
                         random_strength=random_strength, sampling_method=sampling_method)
        self.ndcg_at = ndcg_at
        self.sigma = sigma
        self.lambdarank_truncation_level = lambdarank_truncation_level
        self.lambdarank_norm = lambdarank_norm
        self.label_gain = label_gain

    def _check_labels(self, data: RankingData) -> None:
        check_label_gain(self.label_gain, data.y)

    def _derivatives(self, data, raw):
        lam, w, pairs = lambda_derivatives(data.y, data.qptr, raw[:, 0], ndcg_at=self.ndcg_at,
                                           sigma=self.sigma, with_pairs=self.criterion == "ole",
                                           n_jobs=self.n_jobs, norm=self.lambdarank_norm,
                                           truncation_level=self.lambdarank_truncation_level,
                                           label_gain=self.label_gain)
        yield 0, np.negative(lam, out=lam), w, pairs  # L' = -lambda, in place (no second array of n)
