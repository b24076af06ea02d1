"""LightGBM's text model format, written from lrank's tree and stump ensembles.

LightGBM (and everything that reads its files: treelite, SHAP through ``pred_contrib``, ONNX converters,
search-engine plugins) then loads an lrank model and predicts exactly what lrank predicts. The format
(LightGBM's ``src/io/gbdt_model_text.cpp`` and ``src/io/tree.cpp``, version v4): a header (``num_class``,
``num_tree_per_iteration``, ``max_feature_idx``, ``objective``, ``feature_names``, ``feature_infos``),
then one block per tree. In a tree, internal nodes are numbered from the root 0 and leaves from 0; a
child index ``>= 0`` is an internal node and ``~leaf`` (``-leaf - 1``) a leaf. A split sends ``x <=
threshold`` left; ``decision_type`` 8 says "a missing value is NaN, and goes right", 10 (8 + 2) "goes
left". ``leaf_count`` / ``internal_count`` are the training documents of each node (TreeSHAP weighs
paths by them), ``split_gain`` feeds ``feature_importance("gain")``. A constant is a 1-leaf tree.

The file holds the rounds ``predict`` uses by default: after early stopping the first
``best_iteration_`` (LightGBM's ``save_model`` likewise writes its best iteration), else all; so
``booster_.predict(X)`` equals ``predict(X)``.

Thresholds of ``+-inf`` (lrank's "every value" / "missing vs known" splits) are written as the largest
finite double of that sign, which sends every float the same way.

McRank is written as LightGBM's multiclass model (``objective=multiclass``, one tree per class per
iteration): LightGBM's ``predict`` gives the class probabilities ``p_k`` and lrank's score is the
expected relevance ``predict(X) @ arange(num_class)``. AdaRank (a weighted sum of min-max scaled
features) is not a tree ensemble, and LightGBM's linear trees fall back to a constant when any feature
is missing, unlike AdaRank: `to_lightgbm` refuses it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from lrank.io.trees import Tree, TreeEnsemble, node_counts, tree_ensemble

_BIG = np.finfo(np.float64).max


def _num(v: float) -> str:
    return repr(float(v))


def _join(values: Any, fmt: Any = _num) -> str:
    return " ".join(fmt(v) for v in values)


def _tree_block(index: int, tree: Tree, shrinkage: float = 1.0) -> str:
    """One ``Tree=i`` block of LightGBM's text model."""
    count = tree.count if tree.count is not None else np.zeros(tree.left.size)
    if tree.left[0] < 0:  # a constant
        return "\n".join([
            f"Tree={index}", "num_leaves=1", "num_cat=0", "split_feature=", "split_gain=", "threshold=",
            "decision_type=", "left_child=", "right_child=", f"leaf_value={_num(tree.value[0])}",
            f"leaf_weight={_num(count[0])}", f"leaf_count={int(count[0])}", "internal_value=",
            "internal_weight=", "internal_count=", "is_linear=0", f"shrinkage={_num(shrinkage)}", "", ""])
    inner, leaves, order = {}, {}, [0]
    while order:  # breadth-first numbering from the root
        node = order.pop(0)
        if tree.left[node] >= 0:
            inner[node] = len(inner)
            order += [int(tree.left[node]), int(tree.right[node])]
        else:
            leaves[node] = len(leaves)
    value = _subtree_values(tree, count)

    def child(c: int) -> int:
        return inner[c] if c in inner else ~leaves[c]

    nodes = sorted(inner, key=inner.get)
    leaf_nodes = sorted(leaves, key=leaves.get)
    th = np.clip(tree.threshold[nodes], -_BIG, _BIG)
    lines = [
        f"Tree={index}", f"num_leaves={len(leaves)}", "num_cat=0",
        f"split_feature={_join(tree.feature[nodes], str)}",
        f"split_gain={_join(np.nan_to_num(tree.gain[nodes], nan=0.0))}",
        f"threshold={_join(th)}",
        f"decision_type={_join([10 if tree.missing_left[n] else 8 for n in nodes], str)}",
        f"left_child={_join([child(int(tree.left[n])) for n in nodes], str)}",
        f"right_child={_join([child(int(tree.right[n])) for n in nodes], str)}",
        f"leaf_value={_join(tree.value[leaf_nodes])}",
        f"leaf_weight={_join(count[leaf_nodes])}",
        f"leaf_count={_join(count[leaf_nodes].astype(np.int64), str)}",
        f"internal_value={_join(value[nodes])}",
        f"internal_weight={_join(count[nodes])}",
        f"internal_count={_join(count[nodes].astype(np.int64), str)}",
        "is_linear=0", f"shrinkage={_num(shrinkage)}", "", ""]
    return "\n".join(lines)


def _subtree_values(tree: Tree, count: np.ndarray) -> np.ndarray:
    """Count-weighted mean leaf value under every node (LightGBM's ``internal_value``)."""
    n = tree.left.size
    total, weight = np.zeros(n), np.zeros(n)
    for node in range(n - 1, -1, -1):  # children come after their parent in every lrank tree
        if tree.left[node] < 0:
            total[node], weight[node] = tree.value[node] * count[node], count[node]
    for node in _postorder(tree):
        if tree.left[node] >= 0:
            lt, rt = int(tree.left[node]), int(tree.right[node])
            total[node], weight[node] = total[lt] + total[rt], weight[lt] + weight[rt]
    return np.divide(total, weight, out=np.zeros(n), where=weight > 0)


def _postorder(tree: Tree) -> list[int]:
    out, stack = [], [(0, False)]
    while stack:
        node, done = stack.pop()
        if done or tree.left[node] < 0:
            out.append(node)
            continue
        stack += [(node, True), (int(tree.right[node]), False), (int(tree.left[node]), False)]
    return out


def ensemble_text(ens: TreeEnsemble) -> str:
    """LightGBM's text model of a `TreeEnsemble` (every tree needs its node counts).

    Parameters
    ----------
    ens : lrank.io.trees.TreeEnsemble
        The trees (from ``lrank.io.trees.tree_ensemble``), with their node counts (``Tree.count``; a
        tree whose ``count`` is None is written with zero counts, which `to_lightgbm` refuses for any
        tree but a constant). ``kind == "multiclass"`` writes LightGBM's multiclass objective with
        ``num_class`` trees per iteration, any other kind ``lambdarank``. Without ``feature_names``
        the features are named ``f1``, ``f2``, ... (so is a blank name); a run of whitespace in a name
        becomes ``_``.

    Returns
    -------
    str
        The model text.
    """
    F = ens.n_features
    names = ens.feature_names or [f"f{j + 1}" for j in range(F)]
    names = ["_".join(str(n).split()) or f"f{j + 1}" for j, n in enumerate(names)]
    K = ens.num_class
    objective = f"multiclass num_class:{K}" if ens.kind == "multiclass" else "lambdarank"
    blocks = [_tree_block(i, t) for i, t in enumerate(ens.trees)]
    head = [
        "tree", "version=v4", f"num_class={K}", f"num_tree_per_iteration={K}", "label_index=0",
        f"max_feature_idx={F - 1}", f"objective={objective}", f"feature_names={' '.join(names)}",
        f"feature_infos={' '.join(['none'] * F)}",
        f"tree_sizes={' '.join(str(len(b.encode())) for b in blocks)}", "", ""]
    tail = ["end of trees", "", "parameters:", "end of parameters", "", "pandas_categorical:null", ""]
    return "\n".join(head) + "".join(blocks) + "\n".join(tail)


def to_lightgbm(model: Any, path: str | os.PathLike | None = None, data: Any = None) -> str:
    """LightGBM's text model of a fitted lrank tree or stump ensemble (see the module docstring).

    Parameters
    ----------
    model : a fitted MART, LambdaMART, McRank, NDCGBoost, RankBoost, RankBoostPlus, BoostingTree, Exp3P,
        Standard or AdaBoostStumps
    path : path-like, optional
        Also write the text there (``lightgbm.Booster(model_file=path)`` loads it).
    data : array or RankingData, optional
        Documents whose paths through the trees give ``leaf_count`` / ``internal_count`` (TreeSHAP's
        weights). Required for the families that record no node counts at fit (RankBoost, RankBoost+,
        NDCGBoost, AdaBoost stumps); the training set is the natural choice. With recorded counts
        (MART, LambdaMART, McRank, LambdaMART bases) ``data`` replaces them.

    Returns
    -------
    str
        The model text.
    """
    if type(model).__name__ == "AdaRank":
        raise ValueError("AdaRank is a weighted sum of scaled features, not a tree ensemble. The closest "
                         "LightGBM form, a linear tree (is_linear=1), drops its whole linear part when any "
                         "feature is missing, where AdaRank scores a missing feature at its lowest training "
                         "value: no LightGBM file predicts as AdaRank does, so none is written (its model "
                         "is alphas_ over weak_rankers_)")
    ens = tree_ensemble(model)
    if data is not None:
        node_counts(ens, data)
    missing = [i for i, t in enumerate(ens.trees) if t.count is None and t.left[0] >= 0]
    if missing:
        raise ValueError(f"{type(model).__name__} records no node counts at fit: pass data= (e.g. the "
                         "training set) so that leaf_count / internal_count, which LightGBM's pred_contrib "
                         "(TreeSHAP) weighs paths by, are real counts")
    for tree in ens.trees:
        if tree.count is None:
            tree.count = np.zeros(tree.left.size)
    text = ensemble_text(ens)
    if path is not None:
        Path(path).write_text(text)
    return text
