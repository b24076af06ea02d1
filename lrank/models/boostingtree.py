"""BOOSTINGTREE and EXP3.P over a boosting-step protocol (Kocsis, György, Bán 2013).

The boosting-step protocol
--------------------------
Both algorithms drive a *step object* (the paper's ``A(M, C, D)``, Sec. 3) that a base estimator
returns from ``base.boosting_step(X, y, qid=..., group=...)``:

* ``initial_model() -> model``: the empty model ``M_0`` (a model is the vector of its scores on the
  training data, from which every base recomputes its data weights: AdaBoost's ``exp(-y M)``,
  LambdaMART's lambdas, NDCGBoost's gammas);
* ``step(model, constraint) -> (hypothesis, new_model)``: reweight, fit the weak learner under the
  constraint, weight it; ``constraint=None`` is the unconstrained step;
* ``score(model) -> f``: the performance ``f(M, D)`` that is maximised (training accuracy for
  AdaBoost, MeanNDCG or NDCG@k for the rankers);
* ``X`` (the training features, on which a node's model is recomputed from its path),
  ``n_features`` and ``constraint_size`` (features per constraint: 1 for stumps, ``L - 1`` for an
  ``L``-leaf feature tree, Sec. 4.2); hypotheses have ``predict(X)``;
* optionally ``reweight(model) -> weights`` (the data weights of a model: LambdaMART's lambdas,
  NDCGBoost's gammas) and ``step(model, constraint, weights=...)``: BoostingTree keeps a node's weights
  with its cached model (Sec. 3.3's auxiliary records), so a node extended several times is reweighted
  once; the step's result is the same with or without them.

Implemented for `lrank.models.adaboost.AdaBoostStumps`, `lrank.models.ndcgboost.NDCGBoost` and
`LambdaMARTBase` below (which wraps `lrank.models.gbrt.lambdamart_step`). `Standard` drives any of
them unconstrained: the paper's "standard variant". The step also names its training measure
(``metric``: ``"accuracy"``, ``"mean_ndcg"``, ...), which gives the ``train_<metric>`` /
``valid_<metric>`` columns of ``history_``.

All three estimators follow the contract of `lrank.models._base` (``n_estimators``, ``history_``
indexed by ``iteration``, ``predict(X, num_iteration=)``, ``save_model``); for BoostingTree an
*iteration* is one generated model (one boosting step, the paper's ``t``) and ``n_estimators`` the
number of models (hypothesis sequences) it may generate.

The paper's tables, replay orders (Table 2), Theorem 2 checks and experiment protocol live in
`lrank.papers.boostingtree`.

BOOSTINGTREE (paper Fig. 3; the box as notebook 03 reconstructs it, Sec. 4)
---------------------------------------------------
(a) select the active nodes on the corners of the upper convex hull of ``{(h_r(n_i), f^_i)}`` and the
virtual point ``(0, max f^)`` (`lrank.metamax.hull_select`, Eq. (1)); among selected nodes with the
same cumulative length ``n`` keep the one of smallest depth ``l``, then larger ``f``, then the
earliest created; (b) extend each with a constraint not yet used at it (uniformly at random, or by a
fixed order given as a callable, e.g. the Table 2 replays), ``n_parent += 1``; (c) while some node worse
than the best
``f*`` is at least as deep as the best leaf-model ``I`` (the deepest node with ``f^ = f*``), extend
``I`` (the reconstruction that replays Table 2 exactly).  ``step_c="theorem"`` additionally extends
``I`` until it is deeper than the previous round's best leaf-model (the growth the proof of Theorem 2
assumes; the reconstruction's "known gap").  ``h_r(n) = exp(-n / sqrt(t_{r-1}))`` with ``t_0`` taken as 1.

The tree is kept compactly (parent pointer, hypothesis, ``l``, ``n``, ``f``, ``f^``); a node's model
(its training scores) is recomputed from the nearest cached ancestor when the node is expanded (Sec.
3.3), with an LRU cache of models bounded by ``cache_bytes``.

EXP3.P (paper Fig. 5; the box as notebook 03 reconstructs it, Sec. 4):
``p_k = (1 - lam) w_k / sum_j w_j + lam / K``; the constraint's features are drawn i.i.d. from ``p``;
reward ``f_t - f_{t-1}``; every played arm gets ``x^_k = reward / p_k``;
``w_k <- w_k exp(lam / (3K) (x^_k + eta / (p_k sqrt K)))`` for every arm.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from numbers import Real
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError, StrOptions

from lrank.metamax import h_exp_sqrt, hull_select
from lrank.models._base import BaseRanker, MeasuredStep, SumOfEstimators, TreeEnsembleMixin, improves
from lrank.models._params import Count

__all__ = ["BoostingTree", "Exp3P", "Standard", "LambdaMARTBase", "LambdaMARTStep", "make_step"]

Constraint = tuple


# ---------------------------------------------------------------------------------- helpers
def make_step(base: Any, X: Any, y: Any = None, qid: Any = None, group: Any = None, **kwargs: Any):
    """The step object of ``base`` on the training data (see the module docstring).

    The base decides what the data must be: the rankers need ``qid`` / ``group`` (or a `RankingData`),
    `lrank.models.adaboost.AdaBoostStumps` takes a binary ``(X, y)``.
    """
    if not hasattr(base, "boosting_step"):
        raise TypeError(f"{type(base).__name__} has no boosting_step(); it cannot be driven by "
                        "BoostingTree, Exp3P or Standard")
    if qid is None and group is None:
        return base.boosting_step(X, y, **kwargs)
    return base.boosting_step(X, y, qid=qid, group=group, **kwargs)


class _Tree:
    """The boosting tree: parallel lists indexed by node id (0 = the empty model)."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.hyp: list[Any] = []
        self.constraint: list[Constraint | None] = []
        self.depth: list[int] = []      # l_i
        self.n: list[int] = []          # cumulative length n_i = l_i + number of children
        self.f: list[float] = []
        self.fhat: list[float] = []
        self.f_valid: list[float] = []
        self.created: list[int] = []    # round of creation
        self.used: list[set] = []

    def add(self, parent: int, hyp: Any, constraint: Constraint | None, f: float, f_valid: float,
            rnd: int) -> int:
        i = len(self.parent)
        self.parent.append(parent)
        self.hyp.append(hyp)
        self.constraint.append(constraint)
        d = 0 if parent < 0 else self.depth[parent] + 1
        self.depth.append(d)
        self.n.append(d)
        self.f.append(f)
        self.fhat.append(f if parent < 0 else max(self.fhat[parent], f))
        self.f_valid.append(f_valid)
        self.created.append(rnd)
        self.used.append(set())
        return i

    def path(self, i: int) -> list[int]:
        out = []
        while i > 0:
            out.append(i)
            i = self.parent[i]
        return out[::-1]

    def __len__(self) -> int:
        return len(self.parent)


class _ModelCache:
    """LRU cache of node models (training and validation scores, and the step's data weights once the
    node was extended: Sec. 3.3's auxiliary records), bounded in bytes; root pinned."""

    def __init__(self, budget: int) -> None:
        self.budget = int(budget)
        self.used = 0
        self.store: OrderedDict[int, tuple] = OrderedDict()

    @staticmethod
    def _size(v: Any) -> int:
        if isinstance(v, np.ndarray):
            return v.nbytes
        if isinstance(v, tuple):
            return sum(_ModelCache._size(a) for a in v)
        return int(getattr(v, "nbytes", 0))  # e.g. a step's checked derivatives (their own copies)

    def get(self, i: int):
        v = self.store.get(i)
        if v is not None:
            self.store.move_to_end(i)
        return v

    def put(self, i: int, v: tuple) -> None:
        if i in self.store:
            return
        self.store[i] = v
        self.used += self._size(v)
        self._evict()

    def update(self, i: int, v: tuple) -> None:
        """Replace the entry of ``i`` (kept in the cache, e.g. with its weights added)."""
        old = self.store.get(i)
        if old is None:
            return self.put(i, v)
        self.store[i] = v
        self.store.move_to_end(i)
        self.used += self._size(v) - self._size(old)
        self._evict()

    def _evict(self) -> None:
        while self.used > self.budget and len(self.store) > 1:
            k = next(iter(self.store))
            if k == 0:  # keep the root
                self.store.move_to_end(0)
                k = next(iter(self.store))
                if k == 0:
                    break
            self.used -= self._size(self.store.pop(k))


def _step_metric(step: Any) -> str:
    """The name of the step's training measure ``f`` (``history_`` column ``train_<metric>``)."""
    return str(getattr(step, "metric", "f"))


class _Driver(TreeEnsembleMixin, BaseRanker):
    """Shared fit plumbing of the estimators that drive a base's step object."""

    def _setup(self, X: Any, y: Any, qid: Any, group: Any, eval_set: Any, sample_weight: Any = None,
               eval_group: Any = None, eval_qid: Any = None, eval_names: Any = None):
        from lrank.data.container import RankingData
        from lrank.models._base import _check_X_y

        if self.base is None:  # the default: a driver of nothing; say what to pass
            raise InvalidParameterError(  # a ValueError and a TypeError, as scikit-learn's own check raised
                f"{type(self).__name__} drives a base boosting algorithm: pass base=, e.g. "
                f"{type(self).__name__}(base=lrank.LambdaMARTBase()), base=lrank.NDCGBoost() or "
                "base=lrank.AdaBoostStumps()")
        self._validate()
        self._set_feature_names(X)
        train = (X, y)  # the caller's own objects (eval_set[0] must not be them under early stopping)
        if not isinstance(X, RankingData):       # scikit-learn's checks and messages, as BaseRanker's
            X, y = _check_X_y(self, X, y)
        step = make_step(self.base, X, y, qid=qid, group=group)
        self.n_features_in_ = int(step.n_features)
        if isinstance(getattr(step, "data", None), RankingData):  # lrank's steps; a user's may hold none
            self._warn_if_nothing_to_rank(step.data)
        evals = self._eval_sets(eval_set, eval_group, eval_qid, eval_names, train=train)
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__} has no natural weighting of documents or queries: "
                             "sample_weight is not supported (weighted: MART and McRank per document; "
                             "RankBoost, RankBoostPlus, AdaRank and LambdaMART per query)")
        valid = evals[0] if evals else None
        vmetric = self.eval_metric or getattr(step, "metric", None)
        if valid is not None:
            if vmetric is None:
                raise ValueError("eval_set needs eval_metric (e.g. 'mean_ndcg')")
            from lrank.metrics import parse_metric

            parse_metric(vmetric)
        return step, valid, vmetric

    @staticmethod
    def _valid_measure(step: Any, valid: Any, vmetric: str) -> Callable[[np.ndarray], float]:
        """The validation measure of one fit, ``scores -> float``: ``evaluate(valid.y, scores, valid.qptr,
        [vmetric], **step.metric_kwargs)[vmetric]`` bit for bit, built once (`lrank.metrics.training_measure`:
        an `lrank.metrics.Evaluator`, labels and offsets checked once, where it computes ``vmetric``; else
        `evaluate` itself)."""
        from lrank.metrics import training_measure

        return training_measure(valid.y, valid.qptr, vmetric, **getattr(step, "metric_kwargs", {}))


_BASE = [HasMethods(["boosting_step"])]


# ---------------------------------------------------------------------------------- BoostingTree
class BoostingTree(_Driver):
    """BOOSTINGTREE (paper Fig. 3; box: notebook 03, Sec. 4): parallel, tree-structured boosting sequences.

    Parameters
    ----------
    base : estimator with ``boosting_step``
        ``AdaBoostStumps``, ``NDCGBoost`` or ``LambdaMARTBase`` (the base boosting algorithm ``A``).
        Required: the default None is an error at ``fit``.
    h : callable ``h(n, t)`` or None
        Positive, decreasing in ``n``; ``None`` is the paper's ``exp(-n / sqrt(t))`` (Sec. 4.2.1),
        called with ``t = t_{r-1}`` (clipped at 1). A callable cannot be written by `save_model`.
    n_estimators : int
        The number of models (hypothesis sequences, the paper's ``t``) BoostingTree may generate;
        every generated model is one boosting step (Table 3: 5,000).
    constraint_sampler : "random" or callable
        ``"random"``: uniformly among the constraints not yet used at the node (Sec. 4.2.1). A
        callable ``(path, unused, rng) -> constraint`` fixes the order (the Table 2 replays in
        `lrank.papers.boostingtree`); ``path`` is the tuple of constraints from the root.
    step_c : {"table", "theorem"}
        The reconstructed step (c) (replays Table 2) or that plus the leader-growth rule the proof of
        Theorem 2 uses.
    stop_at : float or None
        Also stop as soon as a generated model reaches ``f >= stop_at`` (1.0: zero training error,
        as the Table 2 runs end); the other nodes selected in that round are still extended.
    eval_metric : str or None
        Metric of each model on the first ``eval_set`` (``history_["valid_<metric>"]``, for
        validation-based model choice with `select_node`); default: the base's training measure.
    cache_bytes : int
        Memory budget for cached node models (Sec. 3.3); the cache lives only during ``fit``.
    random_state : int or None
        Seeds the constraint draws.
    verbose : bool
        A tqdm progress bar over generated models.

    Attributes
    ----------
    history_ : pandas.DataFrame
        One row per generated model (``iteration`` = its node id): ``node``, ``parent``, ``depth``
        (``l``), ``n`` (final cumulative length), ``round`` (created in), ``path`` (the constraints'
        first features, 1-based), ``train_<metric>`` (``f``), ``fhat`` (``f^``), ``valid_<metric>``.
    rounds_ : pandas.DataFrame
        One row per round: ``round``, ``t`` (models generated by its end), ``round_length``,
        ``best_length`` (``l_{I_r}``), ``best_leaf`` (``I_r``), ``f_star``, ``n_selected``, ``step_c``
        (models added by step (c)), ``complete`` (False for a round cut short by ``n_estimators`` or
        ``stop_at``), ``select_s`` / ``step_s`` (seconds in selection / in boosting steps).
    trace_ : list of dict
        Per round: the active nodes with their ``n``, the selected ones, the tie groups, the created.
    tree_ : object
        The tree: parent, hypothesis, constraint, depth, ``n``, ``f``, ``f^`` per node (node 0: the
        empty model).
    best_node_ : int
        The node of largest training ``f`` (shallowest, then earliest, among equals).
    estimators_ : list
        The hypotheses on the path to ``best_node_``.
    n_iter_ : int
        Models generated. ``predict(X, num_iteration=k)`` uses the best model among the first ``k``.
    best_iteration_ : None
        No early stopping.
    stop_reason_ : str
    """

    _parameter_constraints: ClassVar[dict] = {
        "base": _BASE,
        "h": [callable, None],
        "n_estimators": [Count(1)],
        "constraint_sampler": [StrOptions({"random"}), callable],
        "step_c": [StrOptions({"table", "theorem"})],
        "stop_at": [Real, None],
        "eval_metric": [str, None],
        "cache_bytes": [Count(0)],
        "random_state": ["random_state"],
        "verbose": ["boolean"],
    }

    def __init__(self, base: Any = None, h: Callable | None = None, n_estimators: int = 5000,
                 constraint_sampler: str | Callable = "random", step_c: str = "table",
                 stop_at: float | None = None, eval_metric: str | None = None,
                 cache_bytes: int = 256 * 2**20, random_state: int | None = None,
                 verbose: bool = False) -> None:
        self.base = base
        self.h = h
        self.n_estimators = n_estimators
        self.constraint_sampler = constraint_sampler
        self.step_c = step_c
        self.stop_at = stop_at
        self.eval_metric = eval_metric
        self.cache_bytes = cache_bytes
        self.random_state = random_state
        self.verbose = verbose

    # -------------------------------------------------------------- fitting
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> BoostingTree:
        """Grow the boosting tree until ``n_estimators`` models were generated (or ``stop_at``)."""
        import time

        import pandas as pd

        step, valid, vmetric = self._setup(X, y, qid, group, eval_set, sample_weight, eval_group, eval_qid,
                                           eval_names)
        rng = np.random.default_rng(self.random_state)
        K, s = int(step.n_features), int(step.constraint_size)
        total = float(K) ** s
        h = self.h if self.h is not None else h_exp_sqrt
        sampler = self.constraint_sampler
        Xv = None if valid is None else np.ascontiguousarray(valid.X, dtype=np.float32)

        if valid is not None:
            vmeasure = self._valid_measure(step, valid, vmetric)

        def vscore(scores_v):
            return float("nan") if valid is None else vmeasure(scores_v)

        tree = _Tree()
        cache = _ModelCache(self.cache_bytes)
        reweight = getattr(step, "reweight", None)
        m0 = step.initial_model()
        v0 = None if valid is None else np.zeros(valid.n_docs)
        tree.add(-1, None, None, step.score(m0), vscore(v0) if valid is not None else float("nan"), 0)
        cache.put(0, (m0, v0))

        def model_of(i: int):
            got = cache.get(i)
            if got is not None:
                return got[:2]
            chain = []
            j = i
            while cache.get(j) is None:
                chain.append(j)
                j = tree.parent[j]
            m, v = cache.get(j)[:2]
            m = m.copy()
            v = None if v is None else v.copy()
            for k in reversed(chain):
                hk = tree.hyp[k]
                m += hk.predict(step.X)
                if v is not None:
                    v += hk.predict(Xv)
            cache.put(i, (m, v))
            return m, v

        def unused_constraints(i: int) -> list:
            used = tree.used[i]
            if s == 1:
                return [(k,) for k in range(K) if (k,) not in used]
            return []

        def draw(i: int) -> Constraint:
            if callable(sampler):
                path = tuple(tree.constraint[k] for k in tree.path(i))
                un = unused_constraints(i) if s == 1 else None
                if un is None:
                    raise ValueError("a fixed constraint order needs one-feature constraints (stumps)")
                return tuple(sampler(path, un, rng))
            if s == 1:
                un = unused_constraints(i)
                return un[int(rng.integers(len(un)))]
            while True:  # rejection: the constraint space K^s is huge next to the children of a node
                c = tuple(int(v) for v in rng.integers(K, size=s))
                if c not in tree.used[i]:
                    return c

        def extend(i: int, rnd: int) -> int:
            c = draw(i)
            if c in tree.used[i]:
                raise ValueError(f"constraint {c} was already used at node {i}")
            m, v = model_of(i)
            if reweight is None:
                hyp, m_new = step.step(m, c)
            else:  # the node's data weights are a function of its model: computed once per node (Sec. 3.3)
                got = cache.get(i)
                wts = got[2] if got is not None and len(got) > 2 else None
                if wts is None:
                    wts = reweight(m)
                    cache.update(i, (m, v, wts))
                hyp, m_new = step.step(m, c, weights=wts)
            v_new = None if v is None else v + hyp.predict(Xv)
            j = tree.add(i, hyp, c, step.score(m_new), vscore(v_new), rnd)
            tree.used[i].add(c)
            tree.n[i] += 1                                   # step (b): n_i <- n_i + 1
            cache.put(j, (m_new, v_new))
            return j

        def active(i: int) -> bool:
            return len(tree.used[i]) < total

        def leader() -> int:
            fs = max(tree.fhat)
            cand = [i for i in range(len(tree)) if tree.fhat[i] == fs]
            return max(cand, key=lambda i: (tree.depth[i], tree.f[i], -i))

        bar = None
        if self.verbose:
            from tqdm.auto import tqdm

            bar = tqdm(total=int(self.n_estimators), desc="BoostingTree", leave=False)
        rows, trace = [], []
        limit = int(self.n_estimators)
        stop_at = self.stop_at
        prev_leader_depth = 0
        rnd = 0
        done = False
        while not done:
            rnd += 1
            t_prev = len(tree) - 1
            t0 = time.perf_counter()
            act = [i for i in range(len(tree)) if active(i)]
            if not act:
                break
            n_act = np.array([tree.n[i] for i in act], dtype=np.float64)
            fh_act = np.array([tree.fhat[i] for i in act], dtype=np.float64)
            x = np.asarray(h(n_act, max(t_prev, 1)), dtype=np.float64)
            sel_mask = hull_select(x, fh_act)                       # step (a), Eq. (1)
            groups: dict[int, list[int]] = {}
            for i, ok in zip(act, sel_mask):
                if ok:
                    groups.setdefault(tree.n[i], []).append(i)
            selected, ties = [], []
            for n_val in sorted(groups):
                g = groups[n_val]
                best = min(g, key=lambda i: (tree.depth[i], -tree.f[i], i))   # same n: smallest l, better f
                selected.append(best)
                if len(g) > 1:
                    ties.append(sorted(g))
            selected.sort()
            t_sel = time.perf_counter() - t0
            t1 = time.perf_counter()
            created, created_c = [], []
            n_before = {i: tree.n[i] for i in act}
            for i in selected:                                       # step (b)
                if len(tree) - 1 >= limit:
                    done = True
                    break
                created.append(extend(i, rnd))
                if bar is not None:
                    bar.update(1)
                if stop_at is not None and tree.f[created[-1]] >= stop_at:
                    done = True
            # step (c): extend the best leaf-model until it is deeper than every worse model
            before_c = {i: tree.n[i] for i in range(len(tree)) if active(i)}
            c_parents = []
            I = leader()
            while not done:
                fstar = tree.fhat[I]
                worse_deep = any(tree.fhat[j] < fstar and tree.depth[j] >= tree.depth[I]
                                 for j in range(len(tree)))
                short = self.step_c == "theorem" and tree.depth[I] <= prev_leader_depth
                if not (worse_deep or short):
                    break
                if len(tree) - 1 >= limit:
                    done = True
                    break
                c_parents.append(I)
                j = extend(I, rnd)
                created_c.append(j)
                if bar is not None:
                    bar.update(1)
                I = leader()
                if stop_at is not None and tree.f[j] >= stop_at:
                    done = True
            t_step = time.perf_counter() - t1
            prev_leader_depth = tree.depth[I]
            t_r = len(tree) - 1
            rows.append({"round": rnd, "t": t_r, "round_length": t_r - t_prev,
                         "best_length": tree.depth[I], "best_leaf": I, "f_star": tree.fhat[I],
                         "n_selected": len(selected), "step_c": len(created_c), "complete": not done,
                         "select_s": t_sel, "step_s": t_step})
            trace.append({"round": rnd, "active": {i: n_before[i] for i in act},
                          "selected": list(selected), "ties": ties, "created": created,
                          "created_c": created_c, "c_parents": c_parents, "active_c": before_c,
                          "leader": I})
            if len(tree) - 1 >= limit:
                done = True
        if bar is not None:
            bar.close()
        metric = _step_metric(step)
        self.tree_ = tree
        self.rounds_ = pd.DataFrame(rows, columns=["round", "t", "round_length", "best_length", "best_leaf",
                                                   "f_star", "n_selected", "step_c", "complete",
                                                   "select_s", "step_s"])
        self.trace_ = trace
        self.n_iter_ = len(tree) - 1
        self.best_node_ = self.select_node()
        self.estimators_ = [tree.hyp[k] for k in tree.path(self.best_node_)]
        self.best_iteration_ = None
        self.stop_reason_ = ("stop_at reached" if stop_at is not None and max(tree.f) >= stop_at
                             else "n_estimators reached" if self.n_iter_ >= limit
                             else "every constraint used at every node")
        hist = {
            "node": np.arange(1, len(tree)), "parent": tree.parent[1:], "depth": tree.depth[1:],
            "n": tree.n[1:], "round": tree.created[1:],
            "path": [self.path_label(i) for i in range(1, len(tree))],
            f"train_{metric}": tree.f[1:], "fhat": tree.fhat[1:],
        }
        if valid is not None:
            hist[f"valid_{vmetric}"] = tree.f_valid[1:]
        self.history_ = self._history(pd.DataFrame(hist))
        return self

    # -------------------------------------------------------------- using the tree
    def path_label(self, i: int) -> str:
        """The node's feature sequence as in Table 2 (``'1,2'``; ``'-'`` for the empty model)."""
        t = self.tree_
        p = t.path(i)
        if not p:
            return "-"
        return ",".join("+".join(str(k + 1) for k in t.constraint[j]) for j in p)

    def select_node(self, by: str = "train", max_length: int | None = None,
                    num_iteration: int | None = None) -> int:
        """The best node on the training ``f`` (``by="train"``) or on ``eval_set`` (``"valid"``).

        Only nodes of depth ``<= max_length`` count (Fig. 9: the best model of at most so many
        hypotheses), and only the first ``num_iteration`` generated models (all by default); ties go
        to the shallower, then the earlier node.
        """
        if by not in ("train", "valid"):
            raise ValueError(f"by must be 'train' or 'valid', got {by!r}")
        t = self.tree_
        m = len(t) if num_iteration is None else int(num_iteration) + 1
        vals = np.array(t.f if by == "train" else t.f_valid, dtype=np.float64)[:m]
        depth = np.array(t.depth)[:m]
        ok = np.ones(m, bool) if max_length is None else depth <= max_length
        vals = np.where(ok & ~np.isnan(vals), vals, -np.inf)
        best = vals.max()
        cand = np.flatnonzero(vals == best)
        return int(cand[np.lexsort((cand, depth[cand]))[0]])

    def predict_node(self, X: Any, node: int) -> np.ndarray:
        """Scores of the model of ``node`` (the sum of the hypotheses on its path)."""
        self._check_fitted()
        X = self._features(X)
        out = np.zeros(X.shape[0])
        for k in self.tree_.path(node):
            out += self.tree_.hyp[k].predict(X)
        return out

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Scores of the best model (training ``f``) among the first ``num_iteration`` generated ones."""
        k = self._num_iteration(num_iteration)
        node = self.best_node_ if k == self.n_iter_ else self.select_node(num_iteration=k)
        return self.predict_node(X, node)

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """``predict(X, num_iteration=k)`` for ``k = 1 .. n_iter_`` (recomputed when the best changes)."""
        self._check_fitted()
        last, out = -1, None
        for k in range(1, self.n_iter_ + 1):
            node = self.select_node(num_iteration=k)
            if node != last:
                last, out = node, self.predict_node(X, node)
            yield out

    def save_model(self, path: str | Path) -> Path:
        """`BaseRanker.save_model`; refuses callable ``h`` / ``constraint_sampler`` (a file holds no code)."""
        for name in ("h", "constraint_sampler"):
            v = getattr(self, name)
            if callable(v):
                raise TypeError(f"BoostingTree.save_model: parameter {name}={v!r} is a callable and a "
                                "model file cannot hold code; refit with the default (None / 'random') or "
                                "pickle the model")
        return super().save_model(path)


# ---------------------------------------------------------------------------------- EXP3.P
class Exp3P(SumOfEstimators, _Driver):
    """EXP3.P applied to boosting (paper Fig. 5; box: notebook 03, Sec. 4; Busa-Fekete & Kégl 2010).

    Parameters
    ----------
    base : estimator with ``boosting_step``
        The base boosting algorithm (as for `BoostingTree`). Required: the default None is an error at
        ``fit``.
    n_estimators : int
        Boosting iterations ``T`` (Table 3: 5,000).
    lam : float
        Exploration ``lambda`` in (0, 1] (paper: 0.3).
    eta : float
        Smoothing ``eta`` > 0 (paper: 0.1; the ``1/sqrt(T)`` factor of the original is absorbed).
    reward : {"delta"}
        ``f_t - f_{t-1}``, the change of the training measure (Sec. 4.2.2).
    eval_metric : str or None
        Metric on the first ``eval_set`` after every iteration; default the base's training measure.
    random_state : int or None
        Seeds the arm draws.
    verbose : bool

    Attributes
    ----------
    estimators_ : list
        The hypotheses, one per round.
    history_ : pandas.DataFrame
        Indexed by ``iteration``: ``arms`` (the constraint's features), ``reward``, ``train_<metric>``,
        ``valid_<metric>``, ``p_played`` (probability of the first played arm), ``p_max``.
    weights_ : ndarray
        Final log-weights ``ln omega_k``.
    n_iter_, best_iteration_ (None), stop_reason_
    """

    _parameter_constraints: ClassVar[dict] = {
        "base": _BASE,
        "n_estimators": [Count(1)],
        "lam": [Interval(Real, 0, 1, closed="right")],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "reward": [StrOptions({"delta"})],
        "eval_metric": [str, None],
        "random_state": ["random_state"],
        "verbose": ["boolean"],
    }

    def __init__(self, base: Any = None, n_estimators: int = 1000, lam: float = 0.3, eta: float = 0.1,
                 reward: str = "delta", eval_metric: str | None = None, random_state: int | None = None,
                 verbose: bool = False) -> None:
        self.base = base
        self.n_estimators = n_estimators
        self.lam = lam
        self.eta = eta
        self.reward = reward
        self.eval_metric = eval_metric
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> Exp3P:
        """``n_estimators`` EXP3.P-constrained steps of the base."""
        step, valid, vmetric = self._setup(X, y, qid, group, eval_set, sample_weight, eval_group, eval_qid,
                                           eval_names)
        rng = np.random.default_rng(self.random_state)
        K, s = int(step.n_features), int(step.constraint_size)
        lam, eta = float(self.lam), float(self.eta)
        metric = _step_metric(step)
        logw = np.zeros(K)                                    # omega_k^(1) = 1
        model = step.initial_model()
        f_prev = step.score(model)
        v = None if valid is None else np.zeros(valid.n_docs)
        Xv = None if valid is None else np.ascontiguousarray(valid.X, dtype=np.float32)
        vmeasure = None if valid is None else self._valid_measure(step, valid, vmetric)
        hyps, rows = [], []
        for _ in self._progress(self.n_estimators, "Exp3P"):
            w = np.exp(logw - logw.max())
            p = (1.0 - lam) * w / w.sum() + lam / K                       # step (a)
            arms = tuple(int(a) for a in rng.choice(K, size=s, p=p))     # step (b)
            hyp, model = step.step(model, arms)                           # step (c)
            f = step.score(model)                                         # step (d)
            rew = f - f_prev
            f_prev = f
            xhat = np.zeros(K)
            played = np.unique(arms)
            xhat[played] = rew / p[played]                                # step (e)
            logw += lam / (3.0 * K) * (xhat + eta / (p * np.sqrt(K)))      # step (f)
            hyps.append(hyp)
            row = {"arms": arms, "reward": rew, f"train_{metric}": f}
            if valid is not None:
                v = v + hyp.predict(Xv)
                row[f"valid_{vmetric}"] = vmeasure(v)
            row.update(p_played=float(p[arms[0]]), p_max=float(p.max()))
            rows.append(row)
        self.estimators_ = hyps
        self.history_ = self._history(rows)
        self.weights_ = logw
        self.n_iter_ = len(hyps)
        self.best_iteration_ = None
        self.stop_reason_ = "n_estimators reached"
        return self


# ---------------------------------------------------------------------------------- standard variant
class Standard(SumOfEstimators, _Driver):
    """The standard variant: ``n_estimators`` unconstrained steps of ``base`` (``A(M, {}, D)``).

    Same step object as BoostingTree and Exp3P use, so the three differ only in how they choose
    constraints. Deterministic (no ``random_state``: the unconstrained step has no random choice).

    Parameters
    ----------
    base : estimator with ``boosting_step``
        The base boosting algorithm (as for `BoostingTree`). Required: the default None is an error at
        ``fit``.
    n_estimators : int
        Boosting iterations T.
    eval_metric : str or None
        Metric on the first ``eval_set`` after every iteration; default the base's training measure.
    early_stopping_rounds : int or None
        Stop when ``eval_metric`` did not improve for this many iterations (``best_iteration_``).
    verbose : bool

    Attributes
    ----------
    estimators_, n_iter_, best_iteration_, stop_reason_
    history_ : pandas.DataFrame
        Indexed by ``iteration``: ``train_<metric>``, ``valid_<metric>``.
    """

    _parameter_constraints: ClassVar[dict] = {
        "base": _BASE,
        "n_estimators": [Count(1)],
        "eval_metric": [str, None],
        "early_stopping_rounds": [Count(1), None],
        "verbose": ["boolean"],
    }

    def __init__(self, base: Any = None, n_estimators: int = 1000, eval_metric: str | None = None,
                 early_stopping_rounds: int | None = None, verbose: bool = False) -> None:
        self.base = base
        self.n_estimators = n_estimators
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            sample_weight: Any = None, eval_set: Any = None, eval_group: Any = None,
            eval_qid: Any = None, eval_names: Any = None) -> Standard:
        """``n_estimators`` unconstrained steps (or fewer, with early stopping)."""
        step, valid, vmetric = self._setup(X, y, qid, group, eval_set, sample_weight, eval_group, eval_qid,
                                           eval_names)
        if self.early_stopping_rounds is not None and valid is None:
            raise ValueError("early_stopping_rounds needs an eval_set")
        metric = _step_metric(step)
        model = step.initial_model()
        v = None if valid is None else np.zeros(valid.n_docs)
        Xv = None if valid is None else np.ascontiguousarray(valid.X, dtype=np.float32)
        vmeasure = None if valid is None else self._valid_measure(step, valid, vmetric)
        hyps, rows = [], []
        best, best_t, stop = -np.inf, 0, "n_estimators reached"
        for t in self._progress(self.n_estimators, "Standard"):
            hyp, model = step.step(model, None)
            hyps.append(hyp)
            row = {f"train_{metric}": step.score(model)}
            if valid is not None:
                v = v + hyp.predict(Xv)
                row[f"valid_{vmetric}"] = fv = vmeasure(v)
                if improves(fv, best):
                    best, best_t = fv, t + 1
            rows.append(row)
            if self.early_stopping_rounds is not None and t + 1 - best_t >= self.early_stopping_rounds:
                stop = f"early stopping: valid_{vmetric} not better for {self.early_stopping_rounds} rounds"
                break
        self.estimators_ = hyps
        self.history_ = self._history(rows)
        self.n_iter_ = len(hyps)
        self.best_iteration_ = best_t if self.early_stopping_rounds is not None else None
        self.stop_reason_ = stop
        return self


# ---------------------------------------------------------------------------------- LambdaMART base
class LambdaMARTStep(MeasuredStep):
    """Boosting-step protocol of LambdaMART (box: notebook 03, Sec. 4) over the tree engine: one
    `lrank.trees.grower.TreeGrower` of
    the binned training matrix grows every step's tree (a constrained one over the columns of its
    constraint's features)."""

    def __init__(self, data: Any, num_leaves: int, learning_rate: float, ndcg_at: int, min_child_samples: int,
                 max_thresholds: int, threshold_strategy: str, metric: str, discount: str,
                 random_state: Any = None) -> None:
        from lrank.data.binning import bin_features
        from lrank.models.gbrt import LambdaMARTParams, step_grower

        self.data = data
        self.X = np.ascontiguousarray(data.X, dtype=np.float32)
        self.y, self.qptr = data.y, data.qptr
        self.n_features = data.n_features
        self.constraint_size = int(num_leaves) - 1
        self.bins = bin_features(self.X, max_thresholds=max_thresholds, threshold_strategy=threshold_strategy,
                                 random_state=random_state)
        self.params = LambdaMARTParams(num_leaves=int(num_leaves), learning_rate=float(learning_rate),
                                       min_child_samples=int(min_child_samples), ndcg_at=int(ndcg_at))
        self.grower = step_grower(self.bins.codes, self.params, self.bins.n_bins, self.bins.thresholds)
        self.metric = metric
        self.metric_kwargs = {"discount": discount}
        self._measure = None  # `score`'s, made on its first call

    def initial_model(self) -> np.ndarray:
        return np.zeros(self.X.shape[0])

    def reweight(self, model: np.ndarray) -> tuple:
        """Step (b) alone (LambdaMART box): ``(grad, w, pairs, derivatives)`` of the model, ``grad = L' =
        -lambda`` and ``w = L''`` the derivatives the step's tree is fitted to (``derivatives``: the grower's
        check of them, with the root histograms the node's trees share); a driver that extends one model
        several times (BoostingTree, Sec. 3.3) may keep them and pass them to `step`. The lambdas are
        negated in place (exact), so a kept node holds one array of them, not two. Stumps (``num_leaves=2``)
        keep no root histograms: a node's stumps each take another feature (a constraint is used once per
        node), so a cached root row would be made once and never read again."""
        return self._weights(model, share_roots=self.constraint_size > 1)

    def _weights(self, model: np.ndarray, share_roots: bool) -> tuple:
        """`reweight`; ``share_roots=False`` for the one tree of a step that reweights itself."""
        from lrank.models.gbrt import lambda_derivatives

        p = self.params
        lam, w, pairs = lambda_derivatives(self.y, self.qptr, np.ascontiguousarray(model, dtype=np.float64),
                                           ndcg_at=p.ndcg_at, sigma=p.sigma, with_pairs=p.criterion == "ole",
                                           truncation_level=p.lambdarank_truncation_level,
                                           norm=p.lambdarank_norm, label_gain=p.label_gain)
        grad = np.negative(lam, out=lam)
        return grad, w, pairs, self.grower.derivatives(grad, w, share_roots=share_roots)

    def step(self, model: np.ndarray, constraint: Any = None, weights: tuple | None = None):
        """One LambdaMART iteration (`lrank.models.gbrt.lambdamart_step` on this step's grower); with
        ``weights = reweight(model)`` (or its first three, ``(grad, w, pairs)``, ``grad = -lambda``) the
        lambdas are not recomputed (the same result)."""
        from lrank.models.gbrt import weighted_step

        cons = None if constraint is None else tuple(constraint)
        weights = self._weights(model, share_roots=False) if weights is None else weights
        grad, w, pairs = weights[:3]
        derivatives = weights[3] if len(weights) > 3 else self.grower.derivatives(grad, w, share_roots=False)
        return weighted_step(self.grower, derivatives, pairs, cons, self.params.learning_rate,
                             np.ascontiguousarray(model, dtype=np.float64))


class LambdaMARTBase(BaseEstimator):
    """LambdaMART as a base for BoostingTree / Exp3P / Standard (paper Sec. 4.3.1, Fig. 6).

    A base-learner specification, not a ranker (it has no ``fit``: `lrank.models.gbrt.LambdaMART` is
    the ranker; ``Standard(LambdaMARTBase())`` is the paper's standard variant). Its lambdas use
    ``sigma = 1``. Parameters are checked when a driver calls `boosting_step`.

    Parameters
    ----------
    num_leaves : int, default 2
        Leaves per tree (2: stumps, the paper's choice on MQ2007).
    learning_rate : float, default 0.2
        The combination coefficient of each step (the paper's 0.2).
    ndcg_at : int, default 0
        The lambdas are those of NDCG at rank ``ndcg_at``; 0: the whole list (the paper's NDCG).
    min_child_samples : int, default 1
        Fewest documents in a leaf.
    max_thresholds : int, default 254
        Candidate thresholds per feature (`lrank.data.binning.bin_features`).
    threshold_strategy : {"quantile", "subsample", "all"}, default "quantile"
        How the thresholds are chosen.
    metric : str, default "mean_ndcg"
        The measure ``f`` the drivers track (an `lrank.metrics` name; MeanNDCG on MQ2007).
    discount : {"jk", "log2"}, default "jk"
        The discount of ``metric``: Jarvelin-Kekalainen's (the paper's on MQ2007) or ``1 / log2(1 + r)``.
    random_state : int or None, default None
        Seeds the ``"subsample"`` thresholds.
    """

    _parameter_constraints: ClassVar[dict] = {
        "num_leaves": [Count(2)],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "ndcg_at": [Count(0)],
        "min_child_samples": [Count(1)],
        "max_thresholds": [Count(1, 254)],
        "threshold_strategy": [StrOptions({"quantile", "subsample", "all"})],
        "metric": [str],
        "discount": [StrOptions({"jk", "log2"})],
        "random_state": ["random_state"],
    }

    def __init__(self, num_leaves: int = 2, learning_rate: float = 0.2, ndcg_at: int = 0,
                 min_child_samples: int = 1, max_thresholds: int = 254, threshold_strategy: str = "quantile",
                 metric: str = "mean_ndcg", discount: str = "jk", random_state: int | None = None) -> None:
        self.num_leaves = num_leaves
        self.learning_rate = learning_rate
        self.ndcg_at = ndcg_at
        self.min_child_samples = min_child_samples
        self.max_thresholds = max_thresholds
        self.threshold_strategy = threshold_strategy
        self.metric = metric
        self.discount = discount
        self.random_state = random_state

    def boosting_step(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> LambdaMARTStep:
        """The step object on the training queries (``qid`` / ``group`` or a `RankingData`)."""
        from lrank.data.container import as_ranking_data
        from lrank.metrics import parse_metric

        self._validate_params()
        parse_metric(self.metric)
        data = as_ranking_data(X, y, qid=qid, group=group)
        return LambdaMARTStep(data, self.num_leaves, self.learning_rate, self.ndcg_at, self.min_child_samples,
                              self.max_thresholds, self.threshold_strategy, self.metric, self.discount,
                              self.random_state)
