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
  ``L``-leaf feature tree, Sec. 4.2); hypotheses have ``predict(X)``.

Implemented for `lrank.models.adaboost.AdaBoostStumps`, `lrank.models.ndcgboost.NDCGBoost` and
`LambdaMARTBase` below (which wraps the tree-fitting issue's `lrank.models.gbrt.lambdamart_step`).
`Standard` drives any of them unconstrained: the paper's "standard variant".

BOOSTINGTREE (ALGORITHMS.md section 4, paper Fig. 3)
---------------------------------------------------
(a) select the active nodes on the corners of the upper convex hull of ``{(h_r(n_i), f^_i)}`` and the
virtual point ``(0, max f^)`` (`lrank.metamax.hull_select`, Eq. (1)); among selected nodes with the
same cumulative length ``n`` keep the one of smallest depth ``l``, then larger ``f``, then the
earliest created; (b) extend each with a constraint not yet used at it (uniformly at random, or by a
fixed order for the Table 2 replays), ``n_parent += 1``; (c) while some node worse than the best
``f*`` is at least as deep as the best leaf-model ``I`` (the deepest node with ``f^ = f*``), extend
``I`` (the reconstruction that replays Table 2 exactly).  ``step_c="theorem"`` additionally extends
``I`` until it is deeper than the previous round's best leaf-model (the growth the proof of Theorem 2
assumes; ALGORITHMS.md 4 "Known gap").  ``h_r(n) = exp(-n / sqrt(t_{r-1}))`` with ``t_0`` taken as 1.

The tree is kept compactly (parent pointer, hypothesis, ``l``, ``n``, ``f``, ``f^``); a node's model
(its training scores) is recomputed from the nearest cached ancestor when the node is expanded (Sec.
3.3), with an LRU cache of models bounded by ``cache_bytes``.

EXP3.P (ALGORITHMS.md section 5, paper Fig. 5): ``p_k = (1 - lam) w_k / sum_j w_j + lam / K``; the
constraint's features are drawn i.i.d. from ``p``; reward ``f_t - f_{t-1}``; every played arm gets
``x^_k = reward / p_k``; ``w_k <- w_k exp(lam / (3K) (x^_k + eta / (p_k sqrt K)))`` for every arm.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from lrank.metamax import h_exp_sqrt, hull_select

__all__ = ["BoostingTree", "Exp3P", "Standard", "LambdaMARTBase", "LambdaMARTStep", "make_step",
           "three_grades", "protocol_curves", "table2_worst_case", "table2_best_case",
           "table2_frame", "theorem2_check"]

Constraint = tuple


# ---------------------------------------------------------------------------------- helpers
def make_step(base: Any, X: Any, y: Any = None, qid: Any = None, group: Any = None, **kwargs: Any):
    """The step object of ``base`` on the training data (see the module docstring)."""
    if not hasattr(base, "boosting_step"):
        raise TypeError(f"{type(base).__name__} has no boosting_step(); it cannot be driven by "
                        "BoostingTree or Exp3P")
    if qid is None and group is None:
        return base.boosting_step(X, y, **kwargs)
    return base.boosting_step(X, y, qid=qid, group=group, **kwargs)


def table2_worst_case(path: tuple, unused: list, rng: np.random.Generator) -> tuple:
    """Table 2 (top) constraint order: the feature *unlike* the last one (feature 2 at the root)."""
    last = path[-1][0] if path else 0
    for c in unused:
        if c[0] != last:
            return c
    return unused[0]


def table2_best_case(path: tuple, unused: list, rng: np.random.Generator) -> tuple:
    """Table 2 (bottom) constraint order: the *same* feature as the last one (feature 1 at the root)."""
    last = path[-1][0] if path else 0
    for c in unused:
        if c[0] == last:
            return c
    return unused[0]


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
    """LRU cache of node models (training and validation scores), bounded in bytes; root pinned."""

    def __init__(self, budget: int) -> None:
        self.budget = int(budget)
        self.used = 0
        self.store: OrderedDict[int, tuple] = OrderedDict()

    @staticmethod
    def _size(v: tuple) -> int:
        return sum(a.nbytes for a in v if a is not None)

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
        while self.used > self.budget and len(self.store) > 1:
            k = next(iter(self.store))
            if k == 0:  # keep the root
                self.store.move_to_end(0)
                k = next(iter(self.store))
                if k == 0:
                    break
            self.used -= self._size(self.store.pop(k))


def _as_eval(eval_set: Any):
    if eval_set is None:
        return None
    from lrank.data.container import RankingData

    if isinstance(eval_set, RankingData):
        return eval_set
    if isinstance(eval_set, (tuple, list)) and len(eval_set) == 3:
        from lrank.data.container import as_ranking_data

        return as_ranking_data(eval_set[0], eval_set[1], qid=eval_set[2])
    raise TypeError("eval_set must be a RankingData or (X, y, qid)")


def _constraint_total(K: int, s: int) -> float:
    return float(K) ** s


# ---------------------------------------------------------------------------------- BoostingTree
class BoostingTree(BaseEstimator):
    """BOOSTINGTREE (paper Fig. 3, ALGORITHMS.md 4): parallel, tree-structured boosting sequences.

    Parameters
    ----------
    base : estimator with ``boosting_step``
        ``AdaBoostStumps``, ``NDCGBoost`` or ``LambdaMARTBase`` (the base boosting algorithm ``A``).
    h : callable ``h(n, t)`` or None
        Positive, decreasing in ``n``; ``None`` is the paper's ``exp(-n / sqrt(t))`` (Sec. 4.2.1),
        called with ``t = t_{r-1}`` (clipped at 1).
    n_sequences : int
        Stop once this many models (hypothesis sequences) were generated (Table 3: 5,000).
    constraint_sampler : "random" or callable
        ``"random"``: uniformly among the constraints not yet used at the node (Sec. 4.2.1).  A
        callable ``(path, unused, rng) -> constraint`` fixes the order (`table2_worst_case`,
        `table2_best_case`); ``path`` is the tuple of constraints from the root.
    step_c : {"table", "theorem"}
        The reconstructed step (c) (replays Table 2) or that plus the leader-growth rule the proof of
        Theorem 2 uses.
    stop_at : float or None
        Also stop as soon as a generated model reaches ``f >= stop_at`` (1.0: zero training error,
        as the Table 2 runs end); the other nodes selected in that round are still extended.
    eval_metric : str or None
        Metric of each node on ``eval_set`` (for validation-based model choice), e.g. ``"mean_ndcg"``.
    cache_bytes : int
        Memory budget for cached node models (Sec. 3.3).
    random_state : int or None
    verbose : bool
        A tqdm progress bar over generated models.

    Attributes
    ----------
    nodes_ : pandas.DataFrame
        One row per model: node, parent, depth ``l``, final cumulative length ``n``, ``f``, ``fhat``,
        ``f_valid``, round created, path (the constraints' first features, 1-based).
    history_ : pandas.DataFrame
        One row per round: ``round``, ``t`` (models generated by its end), ``round_length``,
        ``best_length`` (``l_{I_r}``), ``best_leaf`` (``I_r``), ``f_star``, ``n_selected``,
        ``step_c`` (models added by step (c)), ``complete`` (False for a round cut short by
        ``n_sequences`` or ``stop_at``), ``select_s``/``step_s`` (time in selection / steps).
    trace_ : list of dict
        Per round: the active nodes with their ``n``, the selected ones, the tie groups, the created.
    best_node_ : int
        The node of largest ``f`` (shallowest among equals): the best model found on the training data.
    estimators_ : list
        The hypotheses on the path to ``best_node_``.
    """

    def __init__(self, base: Any = None, h: Callable | None = None, n_sequences: int = 5000,
                 constraint_sampler: str | Callable = "random", step_c: str = "table",
                 stop_at: float | None = None, eval_metric: str | None = None,
                 cache_bytes: int = 256 * 2**20, random_state: int | None = None,
                 verbose: bool = False) -> None:
        self.base = base
        self.h = h
        self.n_sequences = n_sequences
        self.constraint_sampler = constraint_sampler
        self.step_c = step_c
        self.stop_at = stop_at
        self.eval_metric = eval_metric
        self.cache_bytes = cache_bytes
        self.random_state = random_state
        self.verbose = verbose

    # -------------------------------------------------------------- fitting
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            eval_set: Any = None) -> BoostingTree:
        if self.base is None:
            raise ValueError("BoostingTree needs a base boosting algorithm (base=...)")
        if self.step_c not in ("table", "theorem"):
            raise ValueError(f"step_c must be 'table' or 'theorem', got {self.step_c!r}")
        if int(self.n_sequences) < 1:
            raise ValueError(f"n_sequences must be >= 1, got {self.n_sequences}")
        import time

        rng = np.random.default_rng(self.random_state)
        step = make_step(self.base, X, y, qid=qid, group=group)
        self.step_ = step
        K, s = int(step.n_features), int(step.constraint_size)
        total = _constraint_total(K, s)
        h = self.h if self.h is not None else h_exp_sqrt
        sampler = self.constraint_sampler
        if not (sampler == "random" or callable(sampler)):
            raise ValueError("constraint_sampler must be 'random' or a callable (path, unused, rng)")
        valid = _as_eval(eval_set)
        if valid is not None and self.eval_metric is None:
            raise ValueError("eval_set needs eval_metric (e.g. 'mean_ndcg')")
        Xv = None if valid is None else np.ascontiguousarray(valid.X, dtype=np.float32)

        def vscore(scores_v):
            if valid is None:
                return float("nan")
            from lrank.metrics import evaluate

            return float(evaluate(valid.y, scores_v, valid.qptr, [self.eval_metric],
                                  **getattr(step, "metric_kwargs", {}))[self.eval_metric])

        tree = _Tree()
        cache = _ModelCache(self.cache_bytes)
        m0 = step.initial_model()
        v0 = None if valid is None else np.zeros(valid.n_docs)
        tree.add(-1, None, None, step.score(m0), vscore(v0) if valid is not None else float("nan"), 0)
        cache.put(0, (m0, v0))

        def model_of(i: int):
            got = cache.get(i)
            if got is not None:
                return got
            chain = []
            j = i
            while cache.get(j) is None:
                chain.append(j)
                j = tree.parent[j]
            m, v = cache.get(j)
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
            hyp, m_new = step.step(m, c)
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

            bar = tqdm(total=int(self.n_sequences), desc="BoostingTree", leave=False)
        rows, trace = [], []
        limit = int(self.n_sequences)
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
        self.tree_ = tree
        self.history_ = pd.DataFrame(rows)
        self.trace_ = trace
        self.n_iter_ = len(tree) - 1
        self.n_features_in_ = K
        self.best_node_ = self.select_node()
        self.estimators_ = [tree.hyp[k] for k in tree.path(self.best_node_)]
        self.nodes_ = pd.DataFrame({
            "node": np.arange(len(tree)), "parent": tree.parent, "depth": tree.depth, "n": tree.n,
            "f": tree.f, "fhat": tree.fhat, "f_valid": tree.f_valid, "round": tree.created,
            "path": [self.path_label(i) for i in range(len(tree))],
        })
        return self

    # -------------------------------------------------------------- using the tree
    def path_label(self, i: int) -> str:
        """The node's feature sequence as in Table 2 (``'1,2'``; ``'-'`` for the empty model)."""
        t = self.tree_
        p = t.path(i)
        if not p:
            return "-"
        return ",".join("+".join(str(k + 1) for k in t.constraint[j]) for j in p)

    def select_node(self, by: str = "train", max_length: int | None = None) -> int:
        """The best node on the training ``f`` (``by="train"``) or on ``eval_set`` (``"valid"``).

        Only nodes of depth ``<= max_length`` count (Fig. 9: the best model of at most so many
        hypotheses); ties go to the shallower, then the earlier node.
        """
        t = self.tree_
        vals = np.array(t.f if by == "train" else t.f_valid, dtype=np.float64)
        if by not in ("train", "valid"):
            raise ValueError("by must be 'train' or 'valid'")
        depth = np.array(t.depth)
        ok = np.ones(len(t), bool) if max_length is None else depth <= max_length
        vals = np.where(ok & ~np.isnan(vals), vals, -np.inf)
        best = vals.max()
        cand = np.flatnonzero(vals == best)
        return int(cand[np.lexsort((cand, depth[cand]))[0]])

    def predict_node(self, X: Any, node: int) -> np.ndarray:
        """Scores of the model of ``node`` (the sum of the hypotheses on its path)."""
        X = self._X(X)
        out = np.zeros(X.shape[0])
        for k in self.tree_.path(node):
            out += self.tree_.hyp[k].predict(X)
        return out

    def predict(self, X: Any) -> np.ndarray:
        """Scores of the best model found (``best_node_``)."""
        if not hasattr(self, "tree_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("BoostingTree is not fitted yet; call fit first")
        return self.predict_node(X, self.best_node_)

    def staged_predict(self, X: Any):
        """Scores after each hypothesis on the path to ``best_node_``."""
        X = self._X(X)
        out = np.zeros(X.shape[0])
        for w in self.estimators_:
            out = out + w.predict(X)
            yield out

    @staticmethod
    def _X(X: Any) -> np.ndarray:
        if hasattr(X, "X") and hasattr(X, "qptr"):
            X = X.X
        return np.asarray(X)


def table2_frame(bt: BoostingTree) -> pd.DataFrame:
    """A fitted run laid out as the paper's Table 2 (cumulative length ``n`` per round, as strings).

    Rows are the models in creation order; ``error`` is ``1 - f`` with ``1 - f^`` in brackets when it
    differs.  A cell holds ``n`` at the start of the round, ``**n**`` when the model is selected,
    ``e`` in the round that creates it, ``(t)`` when it is in a same-``n`` tie that only ``f`` breaks,
    and ``(c)`` for the step-(c) expansion, which the paper shows as a round of its own (so the
    paper's round ``r + 1`` follows a round ``r`` with a step (c)).  Empty: no longer active.
    """
    t = bt.tree_
    cols: list[dict[int, str]] = []
    for tr in bt.trace_:
        col: dict[int, str] = {}
        tie_f = set()
        for g in tr["ties"]:
            lmin = min(t.depth[i] for i in g)
            top = [i for i in g if t.depth[i] == lmin]
            if len(top) > 1:
                tie_f.update(g)
        for i, n_i in tr["active"].items():
            cell = f"**{n_i}**" if i in tr["selected"] else str(n_i)
            col[i] = cell + (" (t)" if i in tie_f else "")
        for j in tr["created"]:
            col[j] = "e"
        cols.append(col)
        if tr["created_c"]:
            cc: dict[int, str] = {}
            for i, n_i in tr["active_c"].items():
                cc[i] = f"**{n_i}** (c)" if i == tr["c_parents"][0] else str(n_i)
            for j in tr["created_c"]:
                cc[j] = "e"
            cols.append(cc)
    rows = []
    for i in range(len(t)):
        err = 1.0 - t.f[i]
        e = f"{err:.3g}" + (f" ({1.0 - t.fhat[i]:.3g})" if t.fhat[i] != t.f[i] else "")
        row = {"model": bt.path_label(i), "error": e}
        for r, col in enumerate(cols, start=1):
            row[f"r = {r}"] = col.get(i, "")
        rows.append(row)
    return pd.DataFrame(rows)


def theorem2_check(history: pd.DataFrame) -> pd.DataFrame:
    """Theorem 2 per round: ``r <= l_{I_r}``, ``l_{I_r} < 2r``, ``l_{I_r} >= (sqrt(2 t_r + 7) - 1)/2``.

    Rounds cut short by ``n_sequences`` or ``stop_at`` (``complete`` False) are left out.
    """
    history = history[history["complete"]] if "complete" in history else history
    r = history["round"].to_numpy()
    lI = history["best_length"].to_numpy()
    t = history["t"].to_numpy()
    bound3 = (np.sqrt(2.0 * t + 7.0) - 1.0) / 2.0
    return pd.DataFrame({"round": r, "t_r": t, "l_I": lI, "eq2_lower (r <= l)": r <= lI,
                         "eq2_upper (l < 2r)": lI < 2 * r, "eq3 bound": bound3,
                         "eq3 (l >= bound)": lI >= bound3 - 1e-12})


# ---------------------------------------------------------------------------------- EXP3.P
class _HypothesisSum:
    """``predict`` / ``staged_predict`` of a model that is the sum of its hypotheses ``estimators_``."""

    def predict(self, X: Any, n_estimators: int | None = None) -> np.ndarray:
        """Scores of the first ``n_estimators`` hypotheses (all by default)."""
        if not hasattr(self, "estimators_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        X = BoostingTree._X(X)
        out = np.zeros(X.shape[0])
        for w in self.estimators_[:n_estimators]:
            out += w.predict(X)
        return out

    def staged_predict(self, X: Any):
        """Scores after each hypothesis."""
        X = BoostingTree._X(X)
        out = np.zeros(X.shape[0])
        for w in self.estimators_:
            out = out + w.predict(X)
            yield out


class Exp3P(_HypothesisSum, BaseEstimator):
    """EXP3.P applied to boosting (paper Fig. 5, ALGORITHMS.md 5; Busa-Fekete & Kégl 2010).

    Parameters
    ----------
    base : estimator with ``boosting_step``
    n_iter : int
        Boosting iterations ``T`` (Table 3: 5,000).
    lam : float
        Exploration ``lambda`` in (0, 1] (paper: 0.3).
    eta : float
        Smoothing ``eta`` > 0 (paper: 0.1; the ``1/sqrt(T)`` factor of the original is absorbed).
    reward : {"delta"}
        ``f_t - f_{t-1}``, the change of the training measure (Sec. 4.2.2).
    eval_metric : str or None
        Metric on ``eval_set`` after every iteration (``history_["f_valid"]``).
    random_state : int or None
    verbose : bool

    Attributes
    ----------
    estimators_ : list of hypotheses
    history_ : pandas.DataFrame
        One row per iteration: ``t``, ``arms`` (the constraint's features), ``reward``, ``f``,
        ``f_valid``, ``p_played`` (probability of the first played arm), ``p_max``.
    weights_ : ndarray
        Final log-weights ``ln omega_k``.
    """

    def __init__(self, base: Any = None, n_iter: int = 1000, lam: float = 0.3, eta: float = 0.1,
                 reward: str = "delta", eval_metric: str | None = None, random_state: int | None = None,
                 verbose: bool = False) -> None:
        self.base = base
        self.n_iter = n_iter
        self.lam = lam
        self.eta = eta
        self.reward = reward
        self.eval_metric = eval_metric
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            eval_set: Any = None) -> Exp3P:
        if self.base is None:
            raise ValueError("Exp3P needs a base boosting algorithm (base=...)")
        if not 0.0 < float(self.lam) <= 1.0:
            raise ValueError(f"lam must be in (0, 1], got {self.lam}")
        if float(self.eta) <= 0:
            raise ValueError(f"eta must be > 0, got {self.eta}")
        if self.reward != "delta":
            raise ValueError(f"reward must be 'delta' (f_t - f_(t-1)), got {self.reward!r}")
        rng = np.random.default_rng(self.random_state)
        step = make_step(self.base, X, y, qid=qid, group=group)
        K, s = int(step.n_features), int(step.constraint_size)
        lam, eta = float(self.lam), float(self.eta)
        valid = _as_eval(eval_set)
        if valid is not None and self.eval_metric is None:
            raise ValueError("eval_set needs eval_metric (e.g. 'mean_ndcg')")
        logw = np.zeros(K)                                    # omega_k^(1) = 1
        model = step.initial_model()
        f_prev = step.score(model)
        v = None if valid is None else np.zeros(valid.n_docs)
        Xv = None if valid is None else np.ascontiguousarray(valid.X, dtype=np.float32)
        hyps, rows = [], []
        it = range(int(self.n_iter))
        if self.verbose:
            from tqdm.auto import tqdm

            it = tqdm(it, desc="Exp3P", leave=False)
        for t in it:
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
            fv = float("nan")
            if valid is not None:
                from lrank.metrics import evaluate

                v = v + hyp.predict(Xv)
                fv = float(evaluate(valid.y, v, valid.qptr, [self.eval_metric],
                                    **getattr(step, "metric_kwargs", {}))[self.eval_metric])
            rows.append({"t": t + 1, "arms": arms, "reward": rew, "f": f, "f_valid": fv,
                         "p_played": float(p[arms[0]]), "p_max": float(p.max())})
        self.estimators_ = hyps
        self.history_ = pd.DataFrame(rows, columns=["t", "arms", "reward", "f", "f_valid", "p_played",
                                                    "p_max"])
        self.weights_ = logw
        self.n_iter_ = len(hyps)
        self.n_features_in_ = K
        return self


# ---------------------------------------------------------------------------------- LambdaMART base
class LambdaMARTStep:
    """Boosting-step protocol of LambdaMART (ALGORITHMS.md 6) over `lrank.models.gbrt.lambdamart_step`."""

    def __init__(self, data: Any, n_leaves: int, learning_rate: float, ndcg_at: int, min_data_in_leaf: int,
                 max_thresholds: int, bin_strategy: str, metric: str, discount: str,
                 random_state: Any = None) -> None:
        from lrank.data.binning import bin_features
        from lrank.models.gbrt import LambdaMARTParams

        self.data = data
        self.X = np.ascontiguousarray(data.X, dtype=np.float32)
        self.y, self.qptr = data.y, data.qptr
        self.n_features = data.n_features
        if int(n_leaves) < 2:
            raise ValueError(f"n_leaves must be >= 2, got {n_leaves}")
        self.constraint_size = int(n_leaves) - 1
        self.bins = bin_features(self.X, max_thresholds=max_thresholds, strategy=bin_strategy,
                                 random_state=random_state)
        self.n_bins = self.bins.n_bins  # computed once: a property that loops over features
        self.params = LambdaMARTParams(max_leaves=int(n_leaves), learning_rate=float(learning_rate),
                                       min_data_in_leaf=int(min_data_in_leaf), ndcg_at=int(ndcg_at))
        self.metric = metric
        self.metric_kwargs = {"discount": discount}

    def initial_model(self) -> np.ndarray:
        return np.zeros(self.X.shape[0])

    def step(self, model: np.ndarray, constraint: Any = None):
        from lrank.models.gbrt import lambdamart_step

        return lambdamart_step(self.bins.codes, self.y, self.qptr, model,
                               constraint=None if constraint is None else list(constraint),
                               params=self.params, n_bins=self.n_bins, thresholds=self.bins.thresholds)

    def score(self, model: np.ndarray) -> float:
        from lrank.metrics import evaluate

        return float(evaluate(self.y, model, self.qptr, [self.metric], **self.metric_kwargs)[self.metric])


class LambdaMARTBase(BaseEstimator):
    """LambdaMART as a base for BoostingTree / Exp3P / Standard (paper Sec. 4.3.1, Fig. 6).

    ``n_leaves`` leaves (2 = stumps, the paper's MQ2007 choice), combination coefficient
    ``learning_rate`` (paper: 0.2), lambdas of NDCG@``ndcg_at`` (0 = the whole list, the paper's NDCG),
    ``sigma = 1``; ``metric``/``discount`` define ``f`` (MeanNDCG with the Jarvelin-Kekalainen discount
    on MQ2007).  The step is `lrank.models.gbrt.lambdamart_step` (the tree-fitting issue's code).
    """

    def __init__(self, n_leaves: int = 2, learning_rate: float = 0.2, ndcg_at: int = 0,
                 min_data_in_leaf: int = 1, max_thresholds: int = 254, bin_strategy: str = "quantile",
                 metric: str = "mean_ndcg", discount: str = "jk", random_state: int | None = None) -> None:
        self.n_leaves = n_leaves
        self.learning_rate = learning_rate
        self.ndcg_at = ndcg_at
        self.min_data_in_leaf = min_data_in_leaf
        self.max_thresholds = max_thresholds
        self.bin_strategy = bin_strategy
        self.metric = metric
        self.discount = discount
        self.random_state = random_state

    def boosting_step(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None) -> LambdaMARTStep:
        from lrank.data.container import as_ranking_data

        data = as_ranking_data(X, y, qid=qid, group=group)
        return LambdaMARTStep(data, self.n_leaves, self.learning_rate, self.ndcg_at, self.min_data_in_leaf,
                              self.max_thresholds, self.bin_strategy, self.metric, self.discount,
                              self.random_state)


# ---------------------------------------------------------------------------------- standard variant
class Standard(_HypothesisSum, BaseEstimator):
    """The standard variant: ``n_iter`` unconstrained steps of ``base`` (``A(M, {}, D)``).

    Same step object as BoostingTree and Exp3P use, so the three differ only in how they choose
    constraints. ``history_`` has ``t``, ``f`` (training measure) and ``f_valid``.
    """

    def __init__(self, base: Any = None, n_iter: int = 1000, eval_metric: str | None = None,
                 verbose: bool = False) -> None:
        self.base = base
        self.n_iter = n_iter
        self.eval_metric = eval_metric
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
            eval_set: Any = None) -> Standard:
        if self.base is None:
            raise ValueError("Standard needs a base boosting algorithm (base=...)")
        step = make_step(self.base, X, y, qid=qid, group=group)
        valid = _as_eval(eval_set)
        if valid is not None and self.eval_metric is None:
            raise ValueError("eval_set needs eval_metric (e.g. 'mean_ndcg')")
        model = step.initial_model()
        v = None if valid is None else np.zeros(valid.n_docs)
        Xv = None if valid is None else np.ascontiguousarray(valid.X, dtype=np.float32)
        hyps, rows = [], []
        it: Any = range(int(self.n_iter))
        if self.verbose:
            from tqdm.auto import tqdm

            it = tqdm(it, desc="Standard", leave=False)
        for t in it:
            hyp, model = step.step(model, None)
            hyps.append(hyp)
            fv = float("nan")
            if valid is not None:
                from lrank.metrics import evaluate

                v = v + hyp.predict(Xv)
                fv = float(evaluate(valid.y, v, valid.qptr, [self.eval_metric],
                                    **getattr(step, "metric_kwargs", {}))[self.eval_metric])
            rows.append({"t": t + 1, "f": step.score(model), "f_valid": fv})
        self.estimators_ = hyps
        self.history_ = pd.DataFrame(rows, columns=["t", "f", "f_valid"])
        self.n_iter_ = len(hyps)
        self.n_features_in_ = step.n_features
        return self


# ---------------------------------------------------------------------------------- experiment protocol
def three_grades(data: Any) -> Any:
    """Relabel a 0-4 graded set to MQ2007's three grades (0 -> 0, 1 -> 1, 2..4 -> 2); a quick-profile
    substitute for MQ2007, stated in every caption that uses it."""
    from lrank.data.container import RankingData

    y = np.minimum(np.asarray(data.y), 2).astype(np.int32)
    prov = dict(data.provenance or {})
    prov["relabelled"] = "0->0, 1->1, 2..4->2 (MQ2007's three grades)"
    return RankingData(data.X, y, data.qptr, qid=data.qid, feature_names=data.feature_names, provenance=prov)


def _model_scores(est: Any, X: Any, length: int | None, by: str = "valid"):
    """Scores of the model of at most ``length`` hypotheses with the best validation measure, and its
    length (the Table 3 / Fig. 9 protocol)."""
    if isinstance(est, BoostingTree):
        node = est.select_node(by, max_length=length)
        return est.predict_node(X, node), est.tree_.depth[node]
    h = est.history_
    col = "f_valid" if by == "valid" else "f"
    vals = h[col].to_numpy()
    if length is not None:
        vals = vals[:length]
    if vals.size == 0 or np.all(np.isnan(vals)):
        return np.zeros(BoostingTree._X(X).shape[0]), 0
    t = int(np.nanargmax(vals)) + 1                     # first best iteration
    return est.predict(X, n_estimators=t), t


def protocol_curves(estimators: dict, folds: list, metric: str = "mean_ndcg",
                    test_metrics: tuple = ("mean_ndcg",), lengths: tuple = (None,),
                    metric_kwargs: dict | None = None, keep: list | None = None,
                    verbose: bool = False) -> pd.DataFrame:
    """Fit every estimator on every fold and report the test measures of the validation-selected model.

    Parameters
    ----------
    estimators : dict name -> estimator
        ``Standard``, ``Exp3P`` or ``BoostingTree`` (each is cloned per fold and fitted with
        ``eval_set=fold.valid`` and ``eval_metric=metric``), or any ranker with ``staged_predict``
        (the RankBoost baseline: the round is picked on ``fold.valid`` from its staged scores).
    folds : list of Fold
        ``(train, valid, test)`` RankingData triples (`RankingData.kfold`).
    metric : str
        The validation measure that picks the model (Table 3: MeanNDCG; Figs. 10-11: NDCG@10).
    test_metrics : tuple of str
        Measures of the picked model on the test part.
    lengths : tuple of int or None
        Largest allowed number of hypotheses (Fig. 9-11's x axis); ``None`` = no limit (Table 3).
    metric_kwargs : dict
        Conventions for `lrank.metrics.evaluate` (e.g. ``{"discount": "jk"}``).
    keep : list or None
        If given, ``(fold number, name, fitted estimator)`` is appended for every fit.

    Returns
    -------
    pandas.DataFrame
        One row per fold x algorithm x length: ``fold``, ``algorithm``, ``max_length``, ``length``
        (of the picked model), ``fit_s``, ``iterations`` and one column per test measure.
    """
    import time

    from sklearn.base import clone

    from lrank.metrics import evaluate

    kw = dict(metric_kwargs or {})
    rows = []
    for fi, fold in enumerate(folds):
        for name, est0 in estimators.items():
            own = isinstance(est0, (BoostingTree, Exp3P, Standard))
            est = clone(est0).set_params(eval_metric=metric) if own else clone(est0)
            t0 = time.perf_counter()
            if own:
                est.fit(fold.train, eval_set=fold.valid)
            else:  # any other ranker with staged_predict (the RankBoost baseline)
                est.fit(fold.train)
            fit_s = time.perf_counter() - t0
            if keep is not None:
                keep.append((fi + 1, name, est))
            if not own:
                fv = np.array([evaluate(fold.valid.y, sv, fold.valid.qptr, [metric], **kw)[metric]
                               for sv in est.staged_predict(fold.valid.X)])
                staged_test = list(est.staged_predict(fold.test.X))
            for L in lengths:
                if own:
                    s, used = _model_scores(est, fold.test.X, L)
                else:
                    cut = fv if L is None else fv[:L]
                    used = int(np.argmax(cut)) + 1 if cut.size else 0
                    s = staged_test[used - 1] if used else np.zeros(fold.test.n_docs)
                res = evaluate(fold.test.y, s, fold.test.qptr, list(test_metrics), **kw)
                rows.append({"fold": fi + 1, "algorithm": name, "max_length": L, "length": used,
                             "fit_s": fit_s, "iterations": getattr(est, "n_iter_", 0), **res})
            if verbose:
                print(f"fold {fi + 1} {name}: {fit_s:.1f}s")
    return pd.DataFrame(rows)
