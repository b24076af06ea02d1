"""Every lrank tree and stump ensemble as neutral node arrays, for feature importances and model export.

One adapter per model family turns a fitted model into a `TreeEnsemble`: a list of `Tree` (nodes indexed
from the root 0: ``feature``, ``threshold`` (``x <= threshold`` goes left), ``left`` / ``right`` (-1 at a
leaf), leaf ``value``, ``missing_left`` (the side a NaN goes), split ``gain``, training ``count``) whose
sum over the trees is the model's score. The export (`lrank.io.lightgbm`) and ``feature_importances_``
read only these arrays, so a change of how a family stores its trees changes its adapter only.

=====================================  ===============================================================
family                                 trees
=====================================  ===============================================================
MART, LambdaMART, McRank               the fitted trees (McRank: one per class per iteration), after a
                                       constant 1-leaf tree (per class) holding ``init_``; NaN left;
                                       gains and counts recorded at fit
RankBoost (stumps)                     one 2-leaf tree per round: ``0`` left, ``alpha`` right; NaN to
                                       the side whose value is ``q_def * alpha`` (a 3-leaf tree when
                                       ``q_def`` is neither 0 nor 1); gain = the drop of the bound
                                       ``prod Z``
RankBoost+ / Rb-d / Rb-c               one 2-leaf tree per distinct stump, its right leaf the sum of its
                                       weights over the rounds; NaN left; gain = the drop of ``prod Z``
                                       shared by the round's stumps in proportion to ``|weight|``
NDCGBoost                              its feature trees scaled by their step; NaN left; the gain and
                                       training documents of each node as its tree grew
BoostingTree, Exp3P, Standard          the hypotheses of the model ``predict`` uses: LambdaMART trees
                                       (gains, counts), NDCGBoost trees, AdaBoost stumps (``alpha``
                                       inside ``H``, ``-alpha`` outside; gain ``1 - 2 sqrt(e (1 - e))``)
=====================================  ===============================================================

Every adapter takes the rounds that ``predict`` uses by default: the first ``best_iteration_`` when early
stopping chose one, else all (as LightGBM's ``save_model`` and ``feature_importance`` without an
``iteration``).

Counts are the training documents that reached each node where the family records them (the trees of
the gradient boosting families and NDCGBoost's); for the others they come from data passed to the export
(`node_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Tree:
    """One tree as node arrays (root 0). ``value`` is read at leaves only; ``count`` may be None."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    missing_left: np.ndarray
    gain: np.ndarray
    count: np.ndarray | None = None

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf node each row of ``X`` (float, NaN = missing) reaches."""
        node = np.zeros(X.shape[0], dtype=np.int64)
        for _ in range(self.left.size):
            inner = self.left[node] >= 0
            if not inner.any():
                break
            rows = np.flatnonzero(inner)
            x = X[rows, self.feature[node[rows]]].astype(np.float64)
            nd = node[rows]
            go_left = np.where(np.isnan(x), self.missing_left[nd], x <= self.threshold[nd])
            node[rows] = np.where(go_left, self.left[nd], self.right[nd])
        return node

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.value[self.apply(X)]


@dataclass
class TreeEnsemble:
    """Trees whose sum is the score; ``num_class`` > 1: trees interleaved by class (McRank's softmax)."""

    trees: list[Tree]
    n_features: int
    num_class: int = 1
    kind: str = "ranking"  # "ranking" (a score) or "multiclass" (McRank: class scores, softmax)
    feature_names: list[str] | None = None
    notes: list[str] = field(default_factory=list)

    def raw(self, X: np.ndarray) -> np.ndarray:
        """``(n, num_class)`` sums of the trees of each class."""
        X = np.asarray(X, dtype=np.float64)
        out = np.zeros((X.shape[0], self.num_class))
        for t, tree in enumerate(self.trees):
            out[:, t % self.num_class] += tree.predict(X)
        return out


def _node_tree(feature, threshold, left, right, value, missing_left=True, gain=None, count=None) -> Tree:
    left = np.asarray(left, dtype=np.int64)
    n = left.size
    ml = np.full(n, bool(missing_left)) if np.ndim(missing_left) == 0 else np.asarray(missing_left, bool)
    return Tree(np.where(left >= 0, np.asarray(feature, dtype=np.int64), -1),
                np.asarray(threshold, np.float64), left, np.asarray(right, dtype=np.int64),
                np.asarray(value, dtype=np.float64), ml,
                np.zeros(n) if gain is None else np.where(left >= 0, np.asarray(gain, np.float64), 0.0),
                None if count is None else np.asarray(count, dtype=np.float64))


def _leaf(value: float, count: float | None = None) -> Tree:
    """A 1-leaf tree: a constant (LightGBM's way of writing an initial score)."""
    return _node_tree([-1], [0.0], [-1], [-1], [value], True, None, None if count is None else [count])


def _stump(feature: int, threshold: float, low: float, high: float, nan_value: float, gain: float) -> Tree:
    """``low`` for ``x <= threshold``, ``high`` above, ``nan_value`` for a missing ``x``."""
    if nan_value == low or nan_value == high:
        return _node_tree([feature, -1, -1], [threshold, 0, 0], [1, -1, -1], [2, -1, -1], [0.0, low, high],
                          [nan_value == low, True, True], [gain, 0, 0])
    # NaN in a leaf of its own: the root sends every number left (<= the largest double) and NaN right
    return _node_tree([feature, feature, -1, -1, -1], [np.finfo(np.float64).max, threshold, 0, 0, 0],
                      [1, 3, -1, -1, -1], [2, 4, -1, -1, -1], [0.0, 0.0, nan_value, low, high],
                      [False, True, True, True, True], [0.0, gain, 0, 0, 0])


# ----------------------------------------------------------------------------------- the adapters
def _gbrt(model: Any) -> TreeEnsemble:
    """MART / LambdaMART / McRank: ``init_`` as 1-leaf trees, then ``trees_`` (padded node arrays)."""
    K = int(model.init_.size)
    f, th, lt, rt, v = model.trees_
    gain = getattr(model, "tree_gain_", None)
    if gain is None:
        gain = np.full(f.shape, np.nan)
    count = getattr(model, "tree_count_", None)
    n_docs = None if count is None else float(count[0, 0]) if count.shape[0] else None
    trees = [_leaf(float(c), n_docs) for c in model.init_]
    for t in range(model._num_iteration(None) * K):  # the iterations predict uses (best_iteration_, else all)
        m = _used_nodes(lt[t], rt[t])
        trees.append(_node_tree(f[t, :m], th[t, :m], lt[t, :m], rt[t, :m], v[t, :m], True,
                                gain[t, :m], None if count is None else count[t, :m]))
    kind = "multiclass" if type(model).__name__ == "McRank" else "ranking"
    return TreeEnsemble(trees, int(model.n_features_in_), K, kind)


def _used_nodes(left: np.ndarray, right: np.ndarray) -> int:
    """Nodes of a padded tree: 1 + the largest child index (a 1-leaf tree has 1)."""
    kids = np.r_[left[left >= 0], right[right >= 0]]
    return int(kids.max()) + 1 if kids.size else 1


def _rankboost(model: Any) -> TreeEnsemble:
    if model.weak_ranker != "stump":
        raise ValueError("RankBoost with weak_ranker='feature' scores by scaled raw features, not by "
                         "thresholds: it has no tree form")
    k = model._num_iteration(None)
    bound = np.r_[1.0, model.history_["bound"].to_numpy(np.float64)]
    trees = [_stump(int(model.features_[t]), float(model.thresholds_[t]), 0.0, float(model.alphas_[t]),
                    float(model.alphas_[t] * model.q_defs_[t]), float(bound[t] - bound[t + 1]))
             for t in range(k)]
    return TreeEnsemble(trees, int(model.n_features_in_))


def _rankboost_plus(model: Any) -> TreeEnsemble:
    if model.infinite_last_:
        raise ValueError("this RankBoost+ model ends in an infinite weight (eps_minus_zero='infinite'): no "
                         "finite tree can hold it")
    weights = np.zeros(model.stump_features_.size)
    gains = np.zeros(model.stump_features_.size)
    logz = np.r_[0.0, model.history_["log_prod_Z"].to_numpy(np.float64)]
    for t in range(model.n_iter_):
        s, w = model.round_stumps_[t], model.round_weights_[t]
        np.add.at(weights, s, w)
        drop = float(np.exp(logz[t]) - np.exp(logz[t + 1]))
        share = np.abs(w) / np.abs(w).sum() if np.abs(w).sum() > 0 else np.zeros(w.size)
        np.add.at(gains, s, drop * share)
    used = np.flatnonzero(weights != 0)
    trees = [_stump(int(model.stump_features_[j]), float(model.stump_thresholds_[j]), 0.0, float(weights[j]),
                    0.0, float(gains[j])) for j in used]
    return TreeEnsemble(trees, int(model.n_features_in_))


def _engine_tree(h: Any) -> Tree:
    """A tree of the tree engine, `lrank.trees.predictor.Tree` (NDCGBoost's and BoostingTree's hypotheses;
    NaN left), values times its ``scale``."""
    value = np.asarray(h.value, np.float64) * h.scale
    return _node_tree(h.feature, h.threshold, h.left, h.right, value, True, h.gain, h.count)


def _regression_tree(h: Any) -> Tree:
    """A `lrank.trees.tree.RegressionTree` (NaN left)."""
    return _node_tree(h.feature_, h.threshold_, h.children_left_, h.children_right_, h.value_, True, h.gain_,
                      h.n_node_samples_)


def _adaboost_stump(h: Any) -> Tree:
    """An AdaBoost `Stump`: ``alpha`` inside ``H``, ``-alpha`` outside; NaN is below every value."""
    e = float(h.error)
    gain = 1.0 - 2.0 * np.sqrt(e * (1.0 - e)) if np.isfinite(e) else 0.0
    inside_low = h.direction == "le"
    low, high = (h.alpha, -h.alpha) if inside_low else (-h.alpha, h.alpha)
    return _stump(int(h.feature), float(h.threshold), float(low), float(high), float(low), gain)


def _hypothesis(h: Any) -> Tree:
    name = type(h).__name__
    if name == "RegressionTree":
        return _regression_tree(h)
    if name == "Tree" and type(h).__module__ == "lrank.trees.predictor":
        return _engine_tree(h)
    if name == "Stump":
        return _adaboost_stump(h)
    raise ValueError(f"no tree form for a hypothesis of type {name}")


def _sum_of_hypotheses(model: Any) -> TreeEnsemble:
    """NDCGBoost, BoostingTree, Exp3P, Standard, AdaBoostStumps: the hypotheses ``predict`` sums."""
    name = type(model).__name__
    if name == "BoostingTree":
        hyps = list(model.estimators_)
    else:
        hyps = list(model.estimators_[: model._num_iteration(None)])
    trees = [_hypothesis(h) for h in hyps]
    if not trees:
        trees = [_leaf(0.0)]
    return TreeEnsemble(trees, int(model.n_features_in_))


ADAPTERS = {
    "MART": _gbrt, "LambdaMART": _gbrt, "McRank": _gbrt,
    "RankBoost": _rankboost,
    "RankBoostPlus": _rankboost_plus,
    "NDCGBoost": _sum_of_hypotheses, "BoostingTree": _sum_of_hypotheses, "Exp3P": _sum_of_hypotheses,
    "Standard": _sum_of_hypotheses, "AdaBoostStumps": _sum_of_hypotheses,
}


def tree_ensemble(model: Any) -> TreeEnsemble:
    """The fitted ``model`` as a `TreeEnsemble` (its adapter from `ADAPTERS`)."""
    model._check_fitted()
    name = type(model).__name__
    if name not in ADAPTERS:
        raise ValueError(f"{name} is not a tree or stump ensemble; tree forms exist for {sorted(ADAPTERS)}")
    ens = ADAPTERS[name](model)
    ens.feature_names = getattr(model, "feature_names_in_", None)
    return ens


def node_counts(ens: TreeEnsemble, X: Any) -> None:
    """Fill every tree's ``count`` with the rows of ``X`` that reach each node (in place)."""
    X = np.asarray(getattr(X, "X", X), dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != ens.n_features:
        raise ValueError(f"data for the node counts must have {ens.n_features} features, got shape {X.shape}")
    for tree in ens.trees:
        counts = np.zeros(tree.left.size)
        node = np.zeros(X.shape[0], dtype=np.int64)
        counts[0] = X.shape[0]
        for _ in range(tree.left.size):
            inner = tree.left[node] >= 0
            if not inner.any():
                break
            rows = np.flatnonzero(inner)
            nd = node[rows]
            x = X[rows, tree.feature[nd]]
            go_left = np.where(np.isnan(x), tree.missing_left[nd], x <= tree.threshold[nd])
            node[rows] = np.where(go_left, tree.left[nd], tree.right[nd])
            np.add.at(counts, node[rows], 1.0)
        tree.count = counts


def feature_importance(model: Any, importance_type: str = "split") -> np.ndarray:
    """Per-feature importance of a tree or stump ensemble, as LightGBM's ``Booster.feature_importance``:
    ``"split"`` counts the splits on each feature (float64), ``"gain"`` sums their gains.

    As LightGBM, a split whose gain is not positive (a degenerate round) is not counted; where a model
    file kept no gains (saved before lrank recorded them) every split counts and ``"gain"`` is refused.
    """
    if importance_type not in ("split", "gain"):
        raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
    ens = tree_ensemble(model)
    out = np.zeros(ens.n_features)
    for tree in ens.trees:
        inner = tree.left >= 0
        unknown = np.isnan(tree.gain[inner])
        if importance_type == "gain" and unknown.any():
            raise ValueError(f"{type(model).__name__}: this model kept no split gains (a file saved before "
                             "lrank recorded them): importance_type='gain' is not available (use 'split')")
        counted = unknown | (tree.gain[inner] > 0)
        np.add.at(out, tree.feature[inner][counted],
                  1.0 if importance_type == "split" else tree.gain[inner][counted])
    return out
