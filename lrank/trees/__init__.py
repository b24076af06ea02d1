"""The tree engine: histogram trees for every tree-based learner of lrank, in the shape of scikit-learn's
HistGradientBoosting.

* `lrank.trees.grower`: `TreeGrower` grows the trees of one binned matrix and owns their workspace;
* ``lrank._kernels.splitting``: the split scores of each criterion (SE, WSE, RWSE, OLE, NDCGBoost's
  classifier rule) and their scans;
* ``lrank._kernels.histograms``: histogram building and subtraction (row-major, global-bin and
  column-group layouts; OLE's pair histograms);
* ``lrank._kernels.grower``: the one growth loop, and the level loop of symmetric (oblivious) trees;
* `lrank.trees.predictor`: `Tree`, the one node record, and the predictor of every tree and ensemble;
* `lrank.trees.tree`: `RegressionTree`, one tree fitted to a loss's derivatives (or by least squares).

The names below are resolved lazily: ``import lrank.trees`` compiles nothing.
"""

from __future__ import annotations

from lrank._lazy import lazy_getattr

_WHERE = {
    "TreeGrower": "grower",
    "Tree": "predictor",
    "RegressionTree": "tree",
}

__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(_WHERE)
