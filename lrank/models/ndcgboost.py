"""NDCGBoost (Valizadegan, Jin, Zhang & Mao 2009) as the BoostingTree paper uses it (Sec. 4.3.2, Fig. 7).

One iteration (reconstructed NDCGBoost box; the constants are the reconstruction's own derivation):

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
be used").  Trees search the bin thresholds of `lrank.data.binning.bin_features`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import StrOptions

from lrank._kernels.ndcgboost import ab_sums, gamma_pairs, histograms, pair_offsets
from lrank.models._base import BaseRanker, MeasuredStep, SumOfEstimators, TreeEnsembleMixin, improves
from lrank.models._params import Count

__all__ = ["NDCGBoost", "NDCGBoostStep", "FeatureTree", "grow_tree", "ndcgboost_gamma",
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
@dataclass
class FeatureTree:
    """A small binary tree: internal nodes split ``x_feature <= threshold`` (NaN goes left).

    ``feature[k] = -1`` marks leaf ``k`` with output ``value[k]`` (times ``scale``).
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    scale: float = 1.0
    splits: list = field(default_factory=list)
    #: the gain of the split at each internal node (0 at leaves); None for a tree saved before it was kept
    gain: np.ndarray | None = None

    def leaf_index(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X)
        node = np.zeros(X.shape[0], dtype=np.int64)
        for _ in range(len(self.feature)):
            f = self.feature[node]
            inner = f >= 0
            if not inner.any():
                break
            rows = np.flatnonzero(inner)
            x = X[rows, f[rows]].astype(np.float64)
            go_right = x > self.threshold[node[rows]]             # NaN > t is False: missing goes left
            node[rows] = np.where(go_right, self.right[node[rows]], self.left[node[rows]])
        return node

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.scale * self.value[self.leaf_index(X)]

    @property
    def num_leaves(self) -> int:
        return int((self.feature < 0).sum())


#: split gains within ``TIE_RTOL`` times the tree's scale (`_gain_tol`) are ties, and a gain that small is
#: no gain: a gain is a difference of sums, and sums of the same numbers round differently on CPUs with and
#: without fused multiply-adds or wide vector paths (an NDCGBoost split of gain 1.2e-16 on one CPU was 7e-17
#: or 0 on another, and the trees, hence notebook 03's chess curves, parted there)
TIE_RTOL = 1e-10


def _gain_tol(s: np.ndarray, c: np.ndarray, criterion: str) -> float:
    """The tie tolerance of one tree's split gains: ``TIE_RTOL`` times a bound on every term of a gain.

    ``"classify"``: ``sum |s|`` bounds ``|S_L|``, ``|S_R|`` and ``|S|`` of every node; ``"ls"``:
    ``sum s^2 / c`` bounds every ``S_L^2 / C_L`` (Cauchy-Schwarz).
    """
    if criterion == "classify":
        return TIE_RTOL * float(np.abs(s).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(c > 0, s * s / c, 0.0)
    return TIE_RTOL * float(q.sum())


def _best_split(codes: np.ndarray, rows: np.ndarray, features: Sequence[int], s: np.ndarray,
                c: np.ndarray, n_codes: np.ndarray, criterion: str, tol: float = 0.0):
    """Best ``code <= j`` split of ``rows`` over ``features``: (gain, feature, j) or None.

    Gains within ``tol`` of the largest are ties (`_gain_tol`); ties go to the first feature (in
    ``features`` order), then the lowest ``j`` (``tol = 0``: ``np.argmax``'s first maximum).
    """
    feats = np.asarray(list(features), dtype=np.int64)
    if feats.size == 0:
        return None
    S = s[rows].sum()
    C = c[rows].sum()
    nb = int(n_codes[feats].max())
    if feats.size == 1:
        cf = codes[rows, feats[0]].astype(np.int64)
        hs = np.bincount(cf, weights=s[rows], minlength=nb)[None, :nb]
        hc = np.bincount(cf, weights=c[rows], minlength=nb)[None, :nb]
        cnt = np.bincount(cf, minlength=nb)[None, :nb].astype(np.float64)
    else:
        sub = np.ascontiguousarray(codes[:, feats]) if feats.size < codes.shape[1] else codes
        hist = histograms(sub, s, c, rows, nb)
        hs, hc, cnt = hist[0, :, :nb], hist[1, :, :nb], hist[2, :, :nb]
    SL = np.cumsum(hs, axis=1)[:, :-1]
    CL = np.cumsum(hc, axis=1)[:, :-1]
    NL = np.cumsum(cnt, axis=1)[:, :-1]
    SR, CR, NR = S - SL, C - CL, rows.size - NL
    ok = (NL > 0) & (NR > 0)
    if not ok.any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        if criterion == "classify":
            gain = np.maximum(SL, 0) + np.maximum(SR, 0) - max(S, 0.0)
        else:  # least squares on s with weights c (LambdaMART: fit the lambdas)
            gain = SL * SL / CL + SR * SR / CR - S * S / C
    gain = np.where(ok & np.isfinite(gain), gain, -np.inf)
    k = int(np.argmax(gain >= gain.max() - tol))           # the first within tol of the best
    fi, j = divmod(k, gain.shape[1])
    if not np.isfinite(gain[fi, j]):
        return None
    return (float(gain[fi, j]), int(feats[fi]), int(j))


def grow_tree(codes: np.ndarray, thresholds: list[np.ndarray], s: np.ndarray, c: np.ndarray | None,
              num_leaves: int, constraint: Sequence[int] | None, criterion: str = "classify",
              min_gain: float = 0.0, columns: np.ndarray | None = None) -> tuple[FeatureTree, np.ndarray]:
    """Grow an ``num_leaves`` tree leaf-wise (best first) on binned data, under a feature constraint.

    ``criterion="classify"``: NDCGBoost's classifier (leaf 1 iff ``sum s > 0``; split gain
    ``max(0, S_L) + max(0, S_R) - max(0, S)``); ``"ls"``: least squares on the responses ``s`` with
    counts ``c`` (split gain ``S_L^2 / C_L + S_R^2 / C_R - S^2 / C``; leaf value left to the caller).
    The ``k``-th split (in the order made) may use only feature ``constraint[k]``; a split that does
    not improve the criterion is not made, so a constraint element can go unused.

    ``columns`` (optional) is ``codes`` by columns (``F x n``): a one-feature classifier stump is then
    fitted by `_classifier_stump` over one column (the same tree, bit for bit).

    Returns the tree (leaf values: 0/1 for "classify", 0 for "ls") and each row's leaf index.
    """
    if columns is not None and int(num_leaves) == 2 and criterion == "classify" and constraint is not None \
            and len(constraint) >= 1 and min_gain == 0.0:
        return _classifier_stump(columns[int(constraint[0])], thresholds, s, int(constraint[0]))
    n, F = codes.shape
    if c is None:
        c = np.ones(n)
    n_codes = np.array([t.size + 2 for t in thresholds], dtype=np.int64)
    tol = _gain_tol(s, c, criterion)
    feature, threshold, left, right, gains = [-1], [np.nan], [-1], [-1], [0.0]
    leaf_rows = {0: np.arange(n)}
    splits = []
    all_feats = range(F)
    cand: dict[int, Any] = {}
    for k in range(max(int(num_leaves) - 1, 0)):
        feats = all_feats if constraint is None else ([int(constraint[k])] if k < len(constraint) else [])
        if not feats:
            break
        # the k-th split's feature is fixed by the constraint, so candidates are re-evaluated per split
        best_leaf, best = None, None
        for leaf, rows in leaf_rows.items():
            if constraint is None and leaf in cand:
                b = cand[leaf]
            else:
                b = _best_split(codes, rows, feats, s, c, n_codes, criterion, tol)
                if constraint is None:
                    cand[leaf] = b
            # a gain within tol of min_gain (of 0: rounding) is none; near-ties keep the earlier leaf
            if b is not None and b[0] > min_gain + tol and (best is None or b[0] > best[0] + tol):
                best_leaf, best = leaf, b
        if best is None:
            break
        _, f, j = best
        rows = leaf_rows.pop(best_leaf)
        cand.pop(best_leaf, None)
        go_right = codes[rows, f] > j
        li, ri = len(feature), len(feature) + 1
        feature += [-1, -1]
        threshold += [np.nan, np.nan]
        left += [-1, -1]
        right += [-1, -1]
        gains += [0.0, 0.0]
        gains[best_leaf] = float(best[0])
        feature[best_leaf] = f
        # code <= j  <=>  x <= theta_j (1-based), or missing for j = 0
        threshold[best_leaf] = -np.inf if j == 0 else float(thresholds[f][j - 1])
        left[best_leaf], right[best_leaf] = li, ri
        leaf_rows[li] = rows[~go_right]
        leaf_rows[ri] = rows[go_right]
        splits.append((f, threshold[best_leaf]))
    m = len(feature)
    value = np.zeros(m)
    leaf_of = np.zeros(n, dtype=np.int64)
    for leaf, rows in leaf_rows.items():
        leaf_of[rows] = leaf
        if criterion == "classify":
            value[leaf] = 1.0 if s[rows].sum() > 0 else 0.0
    tree = FeatureTree(np.array(feature, np.int64), np.array(threshold, np.float64),
                       np.array(left, np.int64), np.array(right, np.int64), value, 1.0, splits,
                       np.array(gains))
    return tree, leaf_of


def _classifier_stump(col: np.ndarray, thresholds: list[np.ndarray], s: np.ndarray,
                      f: int) -> tuple[FeatureTree, np.ndarray]:
    """Step (b) for a stump constrained to feature ``f`` (binned column ``col``): the split ``code <= j``
    maximising ``max(0, S_L) + max(0, S_R) - max(0, S)`` with a document on each side, leaves 1 iff their
    ``sum s > 0``; the same sums in the same order as `grow_tree`'s general path, so the same tree."""
    from lrank._kernels.feature_stump import classifier_split

    n = col.size
    nb = thresholds[f].size + 2
    S = s.sum()
    s = np.asarray(s, dtype=np.float64)              # the leaf sums below, as the kernel's, in float64
    tol = _gain_tol(s, None, "classify")                   # grow_tree's tie rule
    j, gain = classifier_split(col, nb, s, float(S), tol)
    if j < 0 or not gain > tol:                            # no split improves (beyond rounding): one leaf
        value = np.array([1.0 if S > 0 else 0.0])
        tree = FeatureTree(np.array([-1], np.int64), np.array([np.nan]), np.array([-1], np.int64),
                           np.array([-1], np.int64), value, 1.0, [], np.zeros(1))
        return tree, np.zeros(n, dtype=np.int64)
    go_right = col > j
    theta = -np.inf if j == 0 else float(thresholds[f][j - 1])   # code <= j  <=>  x <= theta_j (1-based)
    value = np.array([0.0, 1.0 if s[~go_right].sum() > 0 else 0.0, 1.0 if s[go_right].sum() > 0 else 0.0])
    tree = FeatureTree(np.array([f, -1, -1], np.int64), np.array([theta, np.nan, np.nan]),
                       np.array([1, -1, -1], np.int64), np.array([2, -1, -1], np.int64), value, 1.0,
                       [(f, theta)], np.array([float(gain), 0.0, 0.0]))
    return tree, go_right.astype(np.int64) + 1


# ----------------------------------------------------------------------------------- the step
class NDCGBoostStep(MeasuredStep):
    """Boosting-step protocol of NDCGBoost (see `lrank.models.boostingtree`): a model is the score
    vector on the training documents; ``score`` is the training ``metric``."""

    # a constrained stump is fitted over one binned column (`_classifier_stump`; False: `grow_tree`'s
    # general path, the same bits, kept for the tests)
    _stump_path = True

    def __init__(self, data: Any, num_leaves: int = 2, max_thresholds: int = 254, metric: str = "mean_ndcg",
                 discount: str = "jk", smoothing: float = 1e-6, random_state: Any = None,
                 bin_strategy: str = "quantile") -> None:
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
        bins = bin_features(self.X, max_thresholds=max_thresholds, strategy=bin_strategy,
                            random_state=random_state)
        self.codes, self.thresholds = bins.codes, bins.thresholds
        self.g = np.power(2.0, self.y.astype(np.float64)) - 1.0
        Z = ideal_dcg(self.y, self.qptr, None, gain="exp", discount="log2")
        self.invZ = np.where(Z > 0, 1.0 / np.where(Z > 0, Z, 1.0), 0.0)
        self.metric = metric
        self.metric_kwargs = {"discount": discount}
        self.smoothing = float(smoothing)
        self._cols = None  # `_columns`
        self._measure = None  # `score`'s, made on its first call

    def initial_model(self) -> np.ndarray:
        return np.zeros(self.X.shape[0])

    @property
    def _columns(self) -> np.ndarray:
        """The binned matrix by columns (``F x n``), made once: a constrained stump reads one column."""
        if self._cols is None:
            self._cols = np.ascontiguousarray(self.codes.T)
        return self._cols

    def gamma(self, model: np.ndarray) -> np.ndarray:
        """Step (a): the document weights."""
        return gamma_pairs(model, self.g, self.qptr, self.invZ)[0]

    def reweight(self, model: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step (a) alone, ``(gamma, beta, ex)``: a function of the model only, so a driver that extends
        one model several times (BoostingTree, Sec. 3.3) may keep it and pass it to `step`."""
        return gamma_pairs(np.ascontiguousarray(model, dtype=np.float64), self.g, self.qptr, self.invZ)

    def step(self, model: np.ndarray, constraint: Sequence[int] | None = None, weights: tuple | None = None):
        """One NDCGBoost iteration ``A(M, C, D)``: returns ``(alpha f, M + alpha f)``.

        ``weights`` is ``reweight(model)`` when the caller kept it (the same result, step (a) skipped).
        """
        model = np.ascontiguousarray(model, dtype=np.float64)
        gamma, beta, ex = self.reweight(model) if weights is None else weights                  # (a)
        # (b)
        cols = self._columns if constraint is not None and self._stump_path else None
        tree, leaf_of = grow_tree(self.codes, self.thresholds, gamma, None, self.num_leaves, constraint,
                                  columns=cols)
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
    bin_strategy : {"quantile", "subsample", "all"}
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
        Seeds the threshold subsample (``bin_strategy="subsample"``).
    verbose : bool
        A tqdm bar over the iterations.

    Attributes
    ----------
    estimators_ : list of FeatureTree
    alphas_ : ndarray
    history_ : pandas.DataFrame
        Indexed by ``iteration``: ``alpha``, ``A``, ``B``, ``train_<metric>``, ``valid_<eval_metric>``.
    n_iter_, best_iteration_, stop_reason_
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Count(1)],
        "num_leaves": [Count(2)],
        "max_thresholds": [Count(1, 254)],
        "bin_strategy": [StrOptions({"quantile", "subsample", "all"})],
        "metric": [str],
        "discount": [StrOptions({"jk", "log2"})],
        "eval_metric": [str, None],
        "early_stopping_rounds": [Count(1), None],
        "random_state": ["random_state"],
        "verbose": ["boolean"],
    }

    def __init__(self, n_estimators: int = 100, num_leaves: int = 2, max_thresholds: int = 254,
                 bin_strategy: str = "quantile", metric: str = "mean_ndcg", discount: str = "jk",
                 eval_metric: str | None = None, early_stopping_rounds: int | None = None,
                 random_state: int | None = None, verbose: bool = False) -> None:
        self.n_estimators = n_estimators
        self.num_leaves = num_leaves
        self.max_thresholds = max_thresholds
        self.bin_strategy = bin_strategy
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
                             self.discount, random_state=self.random_state, bin_strategy=self.bin_strategy)

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> NDCGBoost:
        """Run ``n_estimators`` NDCGBoost iterations (reconstructed NDCGBoost box) on the queries of ``X``.

        ``eval_set``, ``eval_group``, ``eval_qid`` and ``eval_names`` follow LightGBM (see
        `lrank.models._base`); ``sample_weight`` is refused (NDCGBoost's bound has no weighting).
        """
        from lrank.metrics import parse_metric

        self._validate()
        data = self._ranking_data(X, y, qid, group)
        evals = self._eval_sets(eval_set, eval_group, eval_qid, eval_names)
        self._sample_weight(sample_weight, data, None)
        valid = evals[0] if evals else None
        vmetric = self.eval_metric or self.metric
        parse_metric(self.metric)
        parse_metric(vmetric)
        if self.early_stopping_rounds is not None and valid is None:
            raise ValueError("early_stopping_rounds needs an eval_set")
        step = NDCGBoostStep(data, self.num_leaves, self.max_thresholds, self.metric, self.discount,
                             random_state=self.random_state, bin_strategy=self.bin_strategy)
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
