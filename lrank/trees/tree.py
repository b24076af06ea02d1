"""`RegressionTree`: one histogram regression tree with the split criteria of Xia, Zhai & Wang.

The single-tree face of the engine (`lrank.trees.grower.TreeGrower`): ``fit(X, y)`` bins raw features and
fits least squares; ``fit_gradients(codes, grad, hess)`` grows from a boosting loss's derivatives at
``o = 0`` with criterion ``"se"`` (Eq. 3, least squares on ``r = -L'``), ``"wse"`` (Eq. 7-8), ``"rwse"``
(Eq. 9) or ``"ole"`` (Eq. 13; with ``pairs=(pa, pb, pw)``, LambdaMART's pairwise second derivatives, on
the node's exact second derivative, in which the pairs inside a node cancel: Example 3-4). Leaf values
by one Newton step ``-sum L' / sum L''`` (Eq. 11) whatever the criterion, so SE and OLE trees differ
only in their splits, as in the paper's experiments.

``feature_constraint``: the BoostingTree paper's feature tree. Split ``t`` (in split order; node ids follow
it, 0 = the root) may use only feature ``feature_constraint[t]``; an int constrains every split. In
breadth-first and depth-first growth a node that cannot split on the feature due next stays a leaf and
the entry passes to the next node.

``growth``: ``"best_first"`` (leaf-wise: split the leaf with the largest gain until ``num_leaves``),
``"breadth_first"`` (level order, the paper's "width-first" search, which its tables use) or
``"depth_first"`` (pre-order: a node's left subtree is grown before its right one, until ``num_leaves``;
the order the paper reports as running poorly). With enough leaves for every valid split the three give
the same tree; below that they differ in which nodes are split. ``"symmetric"``: CatBoost's oblivious
trees, one split per level shared by its nodes (``num_leaves`` a power of two, criterion ``"se"`` or
``"rwse"``, no ``feature_constraint``, ``min_child_samples`` not applied;
`lrank.trees.grower.TreeGrower.grow_symmetric`); its node ids are in heap order.

Fitted arrays are indexed by node (root 0, children appended in split order): ``feature_``, ``bin_``
(the ``j`` of ``code > j``), ``threshold_`` (the raw ``theta_j``; ``-inf`` for the split "missing vs
known"), ``children_left_``/``children_right_`` (-1 at leaves), ``value_`` (leaf outputs), ``gain_``;
``tree_`` is the engine's `lrank.trees.predictor.Tree`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lrank.trees.grower import CRITERIA, GROWTH, TreeGrower, check_tree_params
from lrank.trees.predictor import Tree

__all__ = ["CRITERIA", "GROWTH", "RegressionTree"]


class RegressionTree:
    """A histogram regression tree fitted to first/second derivatives with the paper's criteria.

    Parameters
    ----------
    num_leaves : int, default 10
        Number of leaves to grow to (fewer if no valid split remains).
    min_child_samples : int, default 20
        Minimum number of documents in a leaf.
    min_child_weight : float, default 1e-3
        Minimum second-derivative sum in a leaf (exact second derivative for OLE with pairs).
    growth : {"best_first", "breadth_first", "depth_first", "symmetric"}
        Leaf-wise (LightGBM), level-order ("width-first", the paper's choice) or pre-order (left subtree
        first) growth, or symmetric (oblivious) trees (module docstring).
    criterion : {"se", "wse", "rwse", "ole"}
        The split criterion (module docstring).
    feature_constraint : int or sequence of int, optional
        The feature allowed at each internal node, in split order (module docstring).
    n_jobs : int, default 1
        Threads of the kernels that have a parallel twin (same results).
    """

    def __init__(self, num_leaves: int = 10, min_child_samples: int = 20,
                 min_child_weight: float = 1e-3, growth: str = "best_first", criterion: str = "se",
                 feature_constraint: int | Sequence[int] | None = None, n_jobs: int = 1):
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.min_child_weight = min_child_weight
        self.growth = growth
        self.criterion = criterion
        self.feature_constraint = feature_constraint
        self.n_jobs = n_jobs

    def _params(self) -> dict:
        return dict(num_leaves=self.num_leaves, min_child_samples=self.min_child_samples,
                    min_child_weight=self.min_child_weight, growth=self.growth, criterion=self.criterion,
                    n_jobs=self.n_jobs)

    # ------------------------------------------------------------------------------ fitting
    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None,
            max_thresholds: int = 254) -> RegressionTree:
        """Least-squares regression of ``y`` on raw ``X`` (bins ``X`` first): ``L = sum w (f - y)^2 / 2``."""
        from lrank.data.binning import bin_features

        X = np.ascontiguousarray(X, dtype=np.float32)
        y = np.asarray(y, dtype=np.float64)
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        bins = bin_features(X, max_thresholds=max_thresholds, threshold_strategy="quantile")
        return self.fit_gradients(bins.codes, -w * y, w, n_bins=bins.n_bins, thresholds=bins.thresholds)

    def fit_gradients(self, codes: np.ndarray, grad: np.ndarray, hess: np.ndarray, *,
                      n_bins: np.ndarray | None = None, thresholds: Sequence[np.ndarray] | None = None,
                      pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                      grower: TreeGrower | None = None) -> RegressionTree:
        """Grow the tree from per-document ``grad = L'(o=0)`` and ``hess = L''(o=0)``.

        Parameters
        ----------
        codes : uint8/uint16 array (n, F)
            Bin codes (``FeatureBins.codes``).
        grad, hess : float arrays (n,)
            First and second derivatives of the loss with respect to each document's score.
        n_bins : int array (F,), optional
            Codes in use per feature (``FeatureBins.n_bins``); default ``codes.max(axis=0) + 1``.
        thresholds : list of arrays, optional
            ``FeatureBins.thresholds``, to express the splits on raw features (``predict``).
        pairs : (pa, pb, pw), optional
            Pair list with the pairwise second derivatives (OLE with a pairwise loss only).
        grower : TreeGrower, optional
            A grower of these codes with this tree's parameters, to reuse its buffers (``grower_``).
        """
        check_tree_params(self.num_leaves, self.min_child_samples, self.min_child_weight, self.growth,
                          self.criterion, self.n_jobs)
        codes = np.ascontiguousarray(codes)
        if grower is None or grower.codes is not codes or grower.thresholds is not thresholds or any(
                getattr(grower, k) != v for k, v in self._params().items()) or (
                n_bins is not None and not np.array_equal(grower.n_bins, n_bins)):
            grower = TreeGrower(codes, n_bins, thresholds, **self._params())
        tree, leaf_of = grower.grow(grad, hess, pairs=pairs, constraint=self.feature_constraint)
        return self._set(tree, leaf_of.copy(), codes.shape[1], grower)

    def _set(self, tree: Tree, leaf_of: np.ndarray, n_features: int,
             grower: TreeGrower | None) -> RegressionTree:
        self.tree_ = tree
        self.feature_ = tree.feature
        self.bin_ = tree.bin
        self.threshold_ = tree.threshold
        self.children_left_ = tree.left
        self.children_right_ = tree.right
        self.value_ = tree.value
        self.gain_ = tree.gain
        self.n_leaves_ = tree.n_leaves
        self.n_node_samples_ = tree.count
        self.sum_grad_ = tree.sum_grad
        self.sum_hess_ = tree.sum_hess
        self.leaf_of_ = leaf_of
        self.n_features_in_ = n_features
        self.grower_ = grower
        return self

    # ---------------------------------------------------------------------------- prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "tree_"):
            raise RuntimeError("RegressionTree is not fitted yet")

    def apply_codes(self, codes: np.ndarray) -> np.ndarray:
        """Leaf node index of every row of a binned matrix."""
        self._check_fitted()
        return self.tree_.apply_codes(codes)

    def predict_codes(self, codes: np.ndarray) -> np.ndarray:
        """Leaf values for the rows of a binned matrix."""
        return self.value_[self.apply_codes(codes)]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf values for raw features (needs the ``thresholds`` given at fit time)."""
        self._check_fitted()
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_})")
        return self.tree_.predict(X)
