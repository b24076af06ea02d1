"""NDCGBoost (Valizadegan, Jin, Zhang & Mao 2009) as the BoostingTree paper uses it (Sec. 4.3.2, Fig. 7).

One iteration (the NDCGBoost box as notebook 03 reconstructs it, Sec. 4; the constants are derived there):

(a) for each query ``i`` and documents ``j != j'`` with current scores ``F``::

        sig_jj'  = 1 / (1 + exp(2 (F_j - F_j')))             Pr[d_j' ranked above d_j]
        pibar_j  = 1 + sum_{j' != j} sig_jj'                   expected rank
        beta_j   = g_j / (Z_i (1 + pibar_j) ln^2(1 + pibar_j))  (g = 2^l - 1, Z_i = maxDCG_i)
        theta_jj' = beta_j sig_jj' (1 - sig_jj')
        gamma_j  = sum_j' (theta_jj' - theta_j'j) = sum_j' sig_jj' (1 - sig_jj') (beta_j - beta_j')

    ``gamma_j`` is (half) the derivative of the relaxed expected NDCG ``sum_j g_j / (Z ln(1 + pibar_j))``
    with respect to ``F_j`` (checked symbolically in the notebook);
(b) a binary classifier ``f: X -> {0, 1}``, an ``L``-leaf decision tree (``L = 2``: a stump) that
    maximises ``sum_j gamma_j f(x_j)``: a leaf is 1 iff the sum of ``gamma`` in it is positive; a split
    is chosen to maximise ``max(0, S_left) + max(0, S_right) - max(0, S)``; every internal node may split
    only on the feature the constraint gives it (the *feature tree* of Sec. 4.2);
(c) ``A = sum theta_jj' [f(x_j) > f(x_j')]``, ``B = sum theta_jj' [f(x_j) < f(x_j')]`` and
    ``alpha = 1/4 ln(A / B)``; the hypothesis is ``alpha f``.

A query whose ideal DCG is 0 contributes nothing.  ``A`` or ``B`` equal to 0 is smoothed by
``smoothing * (A + B)`` (default ``1e-6``); ``A <= B`` gives ``alpha = 0``.

Feature trees.  A constraint is a tuple of feature indices, one per internal node, in the order the
tree makes its splits (leaf-wise, best first); ``None`` is unconstrained.  This split-order indexing
is our choice (Sec. 4.2 says only that "the constraint determines for each node which feature should
be used").  Trees search the bin thresholds of `lrank.data.binning.bin_features` and are grown by the
tree engine (`lrank.trees.grower.TreeGrower`, criterion ``"classify"``: the split score ``max(0, S)``
with ``S`` a side's sum of ``gamma``, summed as NumPy sums it); a hypothesis is an engine
`lrank.trees.predictor.Tree` whose ``scale`` is ``alpha``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import StrOptions

from lrank._kernels.ndcgboost import ab_sums, gamma_pairs, gamma_workspace, pair_offsets
from lrank.models._base import BaseRanker, MeasuredStep, SumOfEstimators, TreeEnsembleMixin, improves
from lrank.models._params import Count
from lrank.trees.grower import TreeGrower
from lrank.trees.predictor import Tree

__all__ = ["NDCGBoost", "NDCGBoostStep", "classifier_grower", "grow_tree", "ndcgboost_gamma",
           "ndcgboost_AB", "pair_offsets"]


def ndcgboost_gamma(F: np.ndarray, g: np.ndarray, qptr: np.ndarray, invZ: np.ndarray) -> np.ndarray:
    """Per-document ``gamma`` (step (a)); ``invZ`` is ``1 / maxDCG`` per query (0 for none)."""
    return gamma_pairs(F, g, qptr, invZ)[0]


def ndcgboost_AB(F: np.ndarray, g: np.ndarray, qptr: np.ndarray, invZ: np.ndarray,
                 fx: np.ndarray) -> tuple[float, float]:
    """``(A, B)`` of step (c) for classifier outputs ``fx``."""
    _, beta, ex = gamma_pairs(F, g, qptr, invZ)
    return ab_sums(qptr, invZ, F, fx, beta, ex)


# ----------------------------------------------------------------------------------- trees
def classifier_grower(codes: np.ndarray, thresholds: list[np.ndarray], num_leaves: int) -> TreeGrower:
    """The `TreeGrower` of step (b)'s classifier trees on one binned matrix: best first, a document on
    each side of a split, the split score ``max(0, S_left) + max(0, S_right) - max(0, S)``, a leaf 1 iff its
    sum of ``gamma`` is positive."""
    n_bins = np.array([t.size + 2 for t in thresholds], dtype=np.int64)
    return TreeGrower(codes, n_bins, thresholds, num_leaves=int(num_leaves), min_child_samples=1,
                      min_child_weight=0.0, criterion="classify")


def grow_tree(codes: np.ndarray, thresholds: list[np.ndarray], s: np.ndarray, num_leaves: int,
              constraint: Sequence[int] | None, grower: TreeGrower | None = None) -> tuple[Tree, np.ndarray]:
    """Step (b): grow a ``num_leaves`` classifier tree leaf-wise on binned data under a feature constraint
    (the ``k``-th split may use only feature ``constraint[k]``; a split that does not improve the score is
    not made, and growth stops). Returns the tree (leaf outputs 0/1) and each row's leaf; ``grower`` (from
    `classifier_grower` on the same matrix) reuses its buffers."""
    if grower is None:
        grower = classifier_grower(codes, thresholds, num_leaves)
    tree, leaf_of = grower.grow(s, constraint=constraint)
    return tree, leaf_of


# ----------------------------------------------------------------------------------- the step
class NDCGBoostStep(MeasuredStep):
    """Boosting-step protocol of NDCGBoost (see `lrank.models.boostingtree`): a model is the score
    vector on the training documents; ``score`` is the training ``metric``."""

    def __init__(self, data: Any, num_leaves: int = 2, max_thresholds: int = 254, metric: str = "mean_ndcg",
                 discount: str = "jk", smoothing: float = 1e-6, random_state: Any = None,
                 threshold_strategy: str = "quantile") -> None:
        from lrank.data.binning import bin_features
        from lrank.metrics import ideal_dcg

        self.data = data
        self.X = np.ascontiguousarray(data.X, dtype=np.float32)
        self.y = data.y
        self.qptr = data.qptr
        self.n_features = data.n_features
        self.num_leaves = int(num_leaves)
        if self.num_leaves < 2:
            raise ValueError(f"num_leaves must be >= 2, got {num_leaves}")
        self.constraint_size = self.num_leaves - 1
        bins = bin_features(self.X, max_thresholds=max_thresholds, threshold_strategy=threshold_strategy,
                            random_state=random_state)
        self.codes, self.thresholds = bins.codes, bins.thresholds
        self.g = np.power(2.0, self.y.astype(np.float64)) - 1.0
        Z = ideal_dcg(self.y, self.qptr, None, gain="exp", discount="log2")
        self.invZ = np.where(Z > 0, 1.0 / np.where(Z > 0, Z, 1.0), 0.0)
        self.metric = metric
        self.metric_kwargs = {"discount": discount}
        self.smoothing = float(smoothing)
        self.grower = classifier_grower(self.codes, self.thresholds, self.num_leaves)
        self._work = gamma_workspace(self.qptr)  # step (a)'s scratch, kept: see `gamma_pairs`
        self._measure = None  # `score`'s, made on its first call

    def initial_model(self) -> np.ndarray:
        return np.zeros(self.X.shape[0])

    def gamma(self, model: np.ndarray) -> np.ndarray:
        """Step (a): the document weights."""
        return gamma_pairs(model, self.g, self.qptr, self.invZ, self._work)[0]

    def reweight(self, model: np.ndarray) -> tuple:
        """Step (a) alone, ``(gamma, beta, ex, derivatives)`` (``derivatives``: the grower's checked
        ``gamma``, with the root histograms the node's trees share): a function of the model only, so a
        driver that extends one model several times (BoostingTree, Sec. 3.3) may keep it and pass it to
        `step`. Stumps (``num_leaves=2``) keep no root histograms: a node's stumps each take another feature,
        so a cached root row would be made once and never read again."""
        return self._weights(model, share_roots=self.constraint_size > 1)

    def _weights(self, model: np.ndarray, share_roots: bool) -> tuple:
        """`reweight`; ``share_roots=False`` for the one tree of a step that reweights itself."""
        gamma, beta, ex = gamma_pairs(np.ascontiguousarray(model, dtype=np.float64), self.g, self.qptr,
                                      self.invZ, self._work)
        return gamma, beta, ex, self.grower.derivatives(gamma, share_roots=share_roots)

    def step(self, model: np.ndarray, constraint: Sequence[int] | None = None, weights: tuple | None = None):
        """One NDCGBoost iteration ``A(M, C, D)``: returns ``(alpha f, M + alpha f)``.

        ``weights`` is ``reweight(model)`` when the caller kept it (the same result, step (a) skipped).
        """
        model = np.ascontiguousarray(model, dtype=np.float64)
        weights = self._weights(model, share_roots=False) if weights is None else weights       # (a)
        gamma, beta, ex = weights[:3]
        derivatives = weights[3] if len(weights) > 3 else self.grower.derivatives(gamma, share_roots=False)
        tree, leaf_of = self.grower.grow(derivatives, constraint=constraint)                   # (b)
        fx = tree.value[leaf_of]
        A, B = ab_sums(self.qptr, self.invZ, model, fx, beta, ex)                          # (c)
        d = self.smoothing * (A + B)
        alpha = 0.25 * np.log((A + d) / (B + d)) if A > B else 0.0       # minimises A e^{-2a} + B e^{2a}
        tree.scale = float(alpha)
        tree.A, tree.B = float(A), float(B)
        return tree, model + alpha * fx


class NDCGBoost(TreeEnsembleMixin, SumOfEstimators, BaseRanker):
    """NDCGBoost (Valizadegan et al. 2009) with ``L``-leaf decision trees, as in BoostingTree Sec. 4.3.2.

    Also a base algorithm for `lrank.models.boostingtree.BoostingTree`, ``Exp3P`` and ``Standard``
    (through `boosting_step`).

    Parameters
    ----------
    n_estimators : int
        Boosting iterations T (Table 3: 1,000).
    num_leaves : int
        Leaves of the binary decision tree (2 = stumps, the paper's MQ2007 choice).
    max_thresholds : int
        Bin thresholds per feature (`lrank.data.binning.bin_features`).
    threshold_strategy : {"quantile", "subsample", "all"}
        How the thresholds are picked when a feature has more distinct values (``"quantile"`` is
        deterministic; ``"subsample"`` draws with ``random_state``).
    metric : str
        Training measure reported in ``history_`` (``train_<metric>``) and used as ``f`` by
        BoostingTree / Exp3P (``"mean_ndcg"``, ``"ndcg@10"``, ...).
    discount : {"jk", "log2"}
        Discount of ``metric`` and ``eval_metric`` (the paper's MQ2007 numbers use Jarvelin-Kekalainen's).
    eval_metric : str or None
        Metric on the first ``eval_set`` after every iteration (``history_["valid_<eval_metric>"]``);
        default ``metric`` when an ``eval_set`` is given.
    early_stopping_rounds : int or None
        Stop when ``eval_metric`` on the first ``eval_set`` did not improve for this many iterations;
        ``best_iteration_`` is then the best one.
    random_state : int or None
        Seeds the threshold subsample (``threshold_strategy="subsample"``).
    verbose : bool
        A tqdm bar over the iterations.

    Attributes
    ----------
    estimators_ : list
        The classifier trees, one per round.
    alphas_ : ndarray
    history_ : pandas.DataFrame
        Indexed by ``iteration``: ``alpha``, ``A``, ``B``, ``train_<metric>``, ``valid_<eval_metric>``.
    n_iter_, best_iteration_, stop_reason_
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Count(1)],
        "num_leaves": [Count(2)],
        "max_thresholds": [Count(1, 254)],
        "threshold_strategy": [StrOptions({"quantile", "subsample", "all"})],
        "metric": [str],
        "discount": [StrOptions({"jk", "log2"})],
        "eval_metric": [str, None],
        "early_stopping_rounds": [Count(1), None],
        "random_state": ["random_state"],
        "verbose": ["boolean"],
    }

    def __init__(self, n_estimators: int = 100, num_leaves: int = 2, max_thresholds: int = 254,
                 threshold_strategy: str = "quantile", metric: str = "mean_ndcg", discount: str = "jk",
                 eval_metric: str | None = None, early_stopping_rounds: int | None = None,
                 random_state: int | None = None, verbose: bool = False) -> None:
        self.n_estimators = n_estimators
        self.num_leaves = num_leaves
        self.max_thresholds = max_thresholds
        self.threshold_strategy = threshold_strategy
        self.metric = metric
        self.discount = discount
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.verbose = verbose

    def boosting_step(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
                      metric: str | None = None) -> NDCGBoostStep:
        """The step object ``A(M, C, D)`` BoostingTree / Exp3P / Standard drive (training data inside)."""
        from lrank.data.container import as_ranking_data
        from lrank.metrics import parse_metric

        self._validate()
        parse_metric(metric or self.metric)
        data = as_ranking_data(X, y, qid=qid, group=group)
        return NDCGBoostStep(data, self.num_leaves, self.max_thresholds, metric or self.metric,
                             self.discount, random_state=self.random_state,
                             threshold_strategy=self.threshold_strategy)

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> NDCGBoost:
        """Run ``n_estimators`` NDCGBoost iterations (notebook 03, Sec. 4) on the queries of ``X``.

        ``eval_set``, ``eval_group``, ``eval_qid`` and ``eval_names`` follow LightGBM (see
        `lrank.models._base`); ``sample_weight`` is refused (NDCGBoost's bound has no weighting).
        """
        from lrank.metrics import parse_metric

        self._validate()
        data = self._ranking_data(X, y, qid, group)
        self._warn_if_nothing_to_rank(data)
        evals = self._eval_sets(eval_set, eval_group, eval_qid, eval_names, train=(X, y))
        self._sample_weight(sample_weight, data, None)
        valid = evals[0] if evals else None
        vmetric = self.eval_metric or self.metric
        parse_metric(self.metric)
        parse_metric(vmetric)
        if self.early_stopping_rounds is not None and valid is None:
            raise ValueError("early_stopping_rounds needs an eval_set")
        step = NDCGBoostStep(data, self.num_leaves, self.max_thresholds, self.metric, self.discount,
                             random_state=self.random_state, threshold_strategy=self.threshold_strategy)
        model = step.initial_model()
        v = None if valid is None else np.zeros(valid.n_docs)
        trees, rows = [], []
        best, best_t, stop = -np.inf, 0, "n_estimators reached"
        if valid is not None:
            from lrank.metrics import training_measure

            vmeasure = training_measure(valid.y, valid.qptr, vmetric, discount=self.discount)
        for t in self._progress(self.n_estimators):
            tree, model = step.step(model, None)
            trees.append(tree)
            row = {"alpha": tree.scale, "A": tree.A, "B": tree.B, f"train_{self.metric}": step.score(model)}
            if valid is not None:
                v = v + tree.predict(valid.X)
                fv = vmeasure(v)
                row[f"valid_{vmetric}"] = fv
                if improves(fv, best):
                    best, best_t = fv, t + 1
            rows.append(row)
            if self.early_stopping_rounds is not None and t + 1 - best_t >= self.early_stopping_rounds:
                stop = f"early stopping: valid_{vmetric} not better for {self.early_stopping_rounds} rounds"
                break
        self.estimators_ = trees
        self.alphas_ = np.array([tr.scale for tr in trees])
        self.history_ = self._history(rows)
        self.n_iter_ = len(trees)
        self.best_iteration_ = best_t if self.early_stopping_rounds is not None else None
        self.stop_reason_ = stop
        return self
