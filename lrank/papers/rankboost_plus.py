"""RankBoost+ (Connamacher, Pancha, Liu, Ray 2020): the paper's formulas on pair lists, its
counterexample data sets, task builders, the per-task protocol, Fig. 1's task with the reader of its stored
times (timed by ``python -m lrank bench``, never in the notebook) and the verdict helpers of notebook 05.

The algorithm itself (Rb-d, Rb-c, RankBoost+, Algorithm 2) is `lrank.models.RankBoostPlus`; this module
holds only what reproducing the paper needs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lrank.data.container import RankingData
from lrank.models.rankboost_plus import RankBoostPlus, pair_log_terms
from lrank.papers import budgets

NB = "05_rankboost_plus"
ALGORITHMS = {"Rb-d": "d", "Rb-c": "c", "Rb+": "plus"}
#: optimal RankBoost+ (Sec. 3.5: every direction, span(S) included), for `run_tasks`' ``algorithms``
OPTIMAL = {"Rb+ (optimal)": {"variant": "plus", "implementation": "optimal"}}
METRICS = ("r1", "r2", "ndcg@3", "ndcg@5", "ndcg@7")
CURVE_METRICS = ("r1", "r2", "ndcg@5")  # Fig. 2's test curves
LOWER_IS_BETTER = {"r1", "r2"}


# --------------------------------------------------------------------------------------------------
# The paper's quantities on explicit pair lists
# --------------------------------------------------------------------------------------------------
def pair_outcomes(h: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Outcome ``u_i = h(hi_i) - h(lo_i)`` in {-1, 0, +1} of a binary ranker ``h`` (values per instance)."""
    h = np.asarray(h, dtype=np.float64)
    return np.sign(h[hi] - h[lo]).astype(np.int8)


def eps_stats(u: np.ndarray, D: np.ndarray) -> tuple[float, float, float]:
    """``(eps+, eps-, eps0)`` of Eq. 8: the weight of correct, reversed and tied pairs."""
    u = np.asarray(u)
    D = np.asarray(D, dtype=np.float64)
    return float(D[u > 0].sum()), float(D[u < 0].sum()), float(D[u == 0].sum())


def f2(U: np.ndarray, eta: np.ndarray, weight: np.ndarray) -> float:
    """``F_2(eta)`` of Eq. 22 for patterns ``U`` (m x N, entries in {-1, 0, 1}) and weights ``eta``."""
    U = np.asarray(U)
    lt = np.zeros(U.shape[0])
    for s, e in enumerate(np.asarray(eta, dtype=np.float64)):
        lt += pair_log_terms(U[:, s], e)
    return float(np.sum(np.asarray(weight) * np.exp(lt)))


def pair_losses(scores: np.ndarray, hi: np.ndarray, lo: np.ndarray, weight: np.ndarray | None = None
                ) -> dict[str, float]:
    """R1 (Eq. 3), R2 (Eq. 4) and E1 (Eq. 5) of a scoring on general pair feedback (``hi`` preferred).

    ``weight`` is the distribution over pairs (uniform ``1/m`` by default). For graded labels within
    queries, ``lrank.metrics`` gives R1 and R2 per query; this function takes any pair list.
    """
    s = np.asarray(scores, dtype=np.float64)
    hi = np.asarray(hi)
    lo = np.asarray(lo)
    w = np.full(hi.size, 1.0 / hi.size) if weight is None else np.asarray(weight, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        margin = s[hi] - s[lo]
        margin = np.where(np.isnan(margin), 0.0, margin)  # inf - inf: a tie
        return {
            "R1": float(np.sum(w * (margin <= 0))),
            "R2": float(np.sum(w * ((margin < 0) + 0.5 * (margin == 0)))),
            "E1": float(np.sum(w * np.exp(-margin))),
        }


# --------------------------------------------------------------------------------------------------
# The paper's counterexamples as data sets (single-query tasks: label 1 above label 0, or a total order)
# --------------------------------------------------------------------------------------------------
def lemma1_data(n: int) -> RankingData:
    """Fig. 5 (Lemma 1): ``a_1..a_{n+1}`` above ``b_1..b_{n+1}``; features are ``h1`` and ``h2``.

    ``h1`` is 1 on ``a_1..a_n`` and ``b_{n+1}`` (n^2 correct, 1 reversed, 2n tied); ``h2`` is 1 on
    ``a_{n+1}`` only (n+1 correct, none reversed). Stumps at 0.5 are exactly ``h1`` and ``h2``.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    a = np.zeros((n + 1, 2), dtype=np.float32)
    b = np.zeros((n + 1, 2), dtype=np.float32)
    a[:n, 0] = 1.0
    b[n, 0] = 1.0
    a[n, 1] = 1.0
    X = np.vstack([a, b])
    y = np.r_[np.ones(n + 1), np.zeros(n + 1)].astype(np.int32)
    return RankingData(X, y, np.array([0, 2 * n + 2]), feature_names=["h1", "h2"],
                       provenance={"source": "RankBoost+ Lemma 1 (Fig. 5)", "n": n})


def lemma2_data(n: int) -> RankingData:
    """Lemma 2: ``a_1..a_5n`` above ``b_1..b_5n``; ``h1 = 1`` on ``a_1..a_4n``; ``h2 = 1`` on
    ``a_{4n+1}..a_{5n}`` and ``b_1..b_{4n}``."""
    if n < 1:
        raise ValueError("n must be >= 1")
    a = np.zeros((5 * n, 2), dtype=np.float32)
    b = np.zeros((5 * n, 2), dtype=np.float32)
    a[: 4 * n, 0] = 1.0
    a[4 * n:, 1] = 1.0
    b[: 4 * n, 1] = 1.0
    X = np.vstack([a, b])
    y = np.r_[np.ones(5 * n), np.zeros(5 * n)].astype(np.int32)
    return RankingData(X, y, np.array([0, 10 * n]), feature_names=["h1", "h2"],
                       provenance={"source": "RankBoost+ Lemma 2", "n": n})


def lemma3_data() -> RankingData:
    """Lemma 3: elements 1 > 2 > ... > 6; ``h1`` is 1 on {1,2,3,6}, ``h2`` is 1 on {2}."""
    X = np.zeros((6, 2), dtype=np.float32)
    X[[0, 1, 2, 5], 0] = 1.0
    X[1, 1] = 1.0
    y = np.arange(6, 0, -1).astype(np.int32)
    return RankingData(X, y, np.array([0, 6]), feature_names=["h1", "h2"],
                       provenance={"source": "RankBoost+ Lemma 3"})




# --------------------------------------------------------------------------------------------------
# Observation 1 and Theorem 3: the minimum of F1 / F2 found by a convex solver
# --------------------------------------------------------------------------------------------------
#: The small tasks of the convergence check: one query, few documents, features with 3 levels (2 stumps each)
SMALL_TASK = {"n_docs": 40, "n_features": 4, "levels": 3, "noise": 2.5}


def small_task(seed: int, n_docs: int = 40, n_features: int = 4, levels: int = 3, noise: float = 2.5
               ) -> RankingData:
    """A one-query task whose candidate stumps are few and (almost surely) linearly independent.

    Features take ``levels`` integer values (``levels - 1`` stumps each, ``n_features * (levels - 1)`` in
    all, fewer than the ``n_docs - 1`` dimensions of the pair space); labels are 3 grades of a noisy linear
    score plus ``noise`` times a standard normal, so that usually no combination of stumps avoids every
    reversed pair (`f1_bounded` says whether one does).
    """
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n_docs, n_features)).astype(np.float32)
    score = X @ rng.normal(size=n_features)
    y = np.digitize(score + rng.normal(scale=noise, size=n_docs), np.quantile(score, [1 / 3, 2 / 3]))
    return RankingData(X, y.astype(np.int32), np.array([0, n_docs]),
                       provenance={"source": "RankBoost+ notebook: small task for Obs. 1 / Theorem 3",
                                   "seed": seed})


def stump_patterns(data: RankingData) -> tuple[np.ndarray, list[tuple[int, float]], Any]:
    """Every stump ``[x_f > theta]`` at the midpoints of consecutive values of each feature, as its pattern
    over the critical pairs: ``(U, keys, pairs)`` with ``U`` (pairs x stumps) in {-1, 0, 1} (Sec. 3.5's vector
    ``h_j``), ``keys`` the ``(feature, threshold)`` of each column and ``pairs`` the critical pairs."""
    cp = data.pairs()
    cols, keys = [], []
    for f in range(data.n_features):
        vals = np.unique(data.X[:, f][~np.isnan(data.X[:, f])])
        for a, b in zip(vals[:-1], vals[1:]):
            th = float((a + b) / 2)
            cols.append(pair_outcomes((data.X[:, f] > th).astype(float), cp.hi, cp.lo))
            keys.append((f, th))
    U = np.array(cols, dtype=np.float64).T if cols else np.zeros((cp.hi.size, 0))
    return U, keys, cp


def log_loss(U: np.ndarray, eta: np.ndarray, which: str) -> tuple[float, np.ndarray]:
    """``ln F1(eta)`` (Eq. 6) or ``ln F2(eta)`` (Eq. 22) with uniform pair weights, and its gradient.

    A tie costs 1 in F1 and ``cosh(eta_s)`` in F2; ``ln F = logsumexp_i(sum_s ln omega*(i, s)) - ln m``.
    """
    from scipy.special import logsumexp

    if which not in ("F1", "F2"):
        raise ValueError(f"which must be 'F1' or 'F2', got {which!r}")
    eta = np.asarray(eta, dtype=np.float64)
    if which == "F1":
        lt, dl = -(U @ eta), -U
    else:
        lt = np.where(U != 0, -U * eta, np.logaddexp(eta, -eta) - math.log(2.0)).sum(axis=1)
        dl = np.where(U != 0, -U, np.tanh(eta)[None, :])
    lse = logsumexp(lt)
    return float(lse - math.log(U.shape[0])), np.exp(lt - lse) @ dl


def minimum(U: np.ndarray, which: str) -> dict:
    """The minimum of ``ln F1`` or ``ln F2`` over ``eta`` in R^N by BFGS (both are convex and smooth):
    ``{"log_min", "eta", "grad_max"}`` (the largest |gradient| at the solution says how exact it is)."""
    from scipy.optimize import minimize as sp_minimize

    res = sp_minimize(lambda e: log_loss(U, e, which), np.zeros(U.shape[1]), jac=True, method="BFGS",
                      options={"gtol": 1e-12, "maxiter": 20_000})
    return {"log_min": float(res.fun), "eta": res.x, "grad_max": float(np.max(np.abs(res.jac)))}


def f1_bounded(U: np.ndarray, tol: float = 1e-9) -> bool:
    """True when F1 (Eq. 6) has a finite minimiser over span(U): no weights ``eta`` make every pair's margin
    ``(U eta)_i >= 0`` with some margin positive (otherwise F1 keeps falling along ``eta``, its infimum is at
    infinity and Rb-d either halts with eps- = 0 or creeps towards it). Decided by a linear programme
    (``scipy.optimize.linprog``): maximise ``sum_i (U eta)_i`` subject to ``U eta >= 0``, ``|eta_s| <= 1``."""
    from scipy.optimize import linprog

    res = linprog(-U.sum(axis=0), A_ub=-U, b_ub=np.zeros(U.shape[0]), bounds=[(-1.0, 1.0)] * U.shape[1],
                  method="highs")
    return bool(res.status == 0 and -res.fun <= tol)


def model_eta(model: RankBoostPlus, keys: Sequence[tuple[int, float]]) -> np.ndarray:
    """The cumulative weight of each stump of ``keys`` in a fitted model (Eq. 24's ``eta'``)."""
    pos = {(int(f), float(t)): i for i, (f, t) in enumerate(keys)}
    eta = np.zeros(len(keys))
    for stumps, weights in zip(model.round_stumps_, model.round_weights_):
        for j, a in zip(stumps, weights):
            eta[pos[(int(model.stump_features_[j]), float(model.stump_thresholds_[j]))]] += a
    return eta


def random_loss_checks(seed: int, n_trials: int = 300) -> dict[str, float]:
    """Sec. 3.1-3.2 and Prop. 2 on random one-query instances (random graded labels, random binary rankers,
    random weights): the largest ``F2(midpoint) - mean of F2 at the ends`` (convexity: never above 0), the
    smallest ``F2 - F1`` (never below 0) and the smallest ``E2 - R2`` (Prop. 2: never below 0). F2 comes from
    `f2`, F1 from `log_loss` and R2 from `pair_losses` on the scores: three computations that share no
    code."""
    rng = np.random.default_rng(seed)
    worst = {"convex": -np.inf, "F2 - F1": np.inf, "E2 - R2": np.inf}
    for _ in range(n_trials):
        n, k = int(rng.integers(4, 12)), int(rng.integers(1, 5))
        H = rng.integers(0, 2, size=(n, k)).astype(np.float64)
        y = rng.integers(0, 3, size=n)
        hi, lo = np.nonzero(y[:, None] > y[None, :])
        if hi.size == 0:
            continue
        U = np.sign(H[hi] - H[lo])
        w = np.full(hi.size, 1.0 / hi.size)
        x, z = rng.normal(scale=2.0, size=(2, k))
        fx = f2(U, x, w)
        worst["convex"] = max(worst["convex"], f2(U, (x + z) / 2, w) - (fx + f2(U, z, w)) / 2)
        worst["F2 - F1"] = min(worst["F2 - F1"], fx - math.exp(log_loss(U, x, "F1")[0]))
        worst["E2 - R2"] = min(worst["E2 - R2"], fx - pair_losses(H @ x, hi, lo)["R2"])
    return worst


def convergence_check(seeds: Sequence[int], rounds: Sequence[int]) -> pd.DataFrame:
    """Obs. 1 and Theorem 3 on `small_task` s: how far each variant's training loss is above the minimum.

    One row per task and number of rounds: ``rank`` of the stump patterns (equal to their number: F2 is
    then defined on H' itself), ``f1_bounded`` (`f1_bounded`: F1 has a finite minimiser), ``plus_F2`` = ln
    F2(RankBoost+) - min ln F2 (Theorem 3), ``d_F1`` = ln E1(Rb-d)
    - min ln F1 (Obs. 1; ``d_stop`` says why Rb-d stopped), ``c_F1`` / ``c_F2`` the same two gaps of Rb-c,
    and the solver's largest |gradient| at each minimum (``grad_F1``, ``grad_F2``).
    """
    rows = []
    for seed in seeds:
        d = small_task(seed, **SMALL_TASK)
        U, keys, _ = stump_patterns(d)
        m1, m2 = minimum(U, "F1"), minimum(U, "F2")
        bounded = f1_bounded(U)
        for T in rounds:
            fits = {v: RankBoostPlus(variant=v, n_estimators=int(T), random_state=0).fit(d)
                    for v in ("plus", "d", "c")}
            gap = {f"{v}_{w}": log_loss(U, model_eta(fits[v], keys), w)[0] - m["log_min"]
                   for v in ("plus", "d", "c") for w, m in (("F1", m1), ("F2", m2))}
            rows.append({"task": seed, "rounds": int(T), "stumps": U.shape[1],
                         "rank": int(np.linalg.matrix_rank(U)),
                         "f1_bounded": bounded,
                         "plus_F2": gap["plus_F2"], "d_F1": gap["d_F1"], "d_stop": fits["d"].stop_reason_,
                         "c_F1": gap["c_F1"], "c_F2": gap["c_F2"], "grad_F1": m1["grad_max"],
                         "grad_F2": m2["grad_max"]})
    return pd.DataFrame(rows)


def independent_subset_trials(seed: int, n_trials: int = 200, dim: int = 12, n_s: int = 4, n_r: int = 30
                              ) -> pd.DataFrame:
    """Sec. 3.5's select-independent-subset on random instances: is ``span(S + T) = span(S + R)``?

    Each trial draws ``n_s`` columns S and ``n_r`` candidate columns R in R^dim: integer combinations of a
    random subspace's basis, about 30% of them in span(S) (a stump pattern space has many dependent columns),
    some zero; it keeps T with
    `lrank.models.rankboost_plus.select_independent_subset` after a random permutation of R, and reports the
    ranks of ``[S, T]`` and ``[S, R]``, the size of T and whether T is independent
    (``rank [S, T] = |S| + |T|``).
    """
    from lrank.models.rankboost_plus import select_independent_subset

    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_trials):
        S = rng.integers(-1, 2, size=(dim, n_s)).astype(np.float64)
        base = rng.integers(-1, 2, size=(dim, int(rng.integers(1, dim))))  # R spans a random subspace
        R = base @ rng.integers(-1, 2, size=(base.shape[1], n_r))  # dependent columns, zero columns too
        in_s = rng.random(n_r) < 0.3
        R[:, in_s] = S @ rng.integers(-1, 2, size=(n_s, int(in_s.sum())))  # columns in span(S)
        Q = np.linalg.qr(S)[0]
        kept, vecs = select_independent_subset(Q, R.astype(np.float64), rng.permutation(n_r))
        st = np.column_stack([S, vecs]) if kept else S
        rows.append({"trial": k, "rank_S_R": int(np.linalg.matrix_rank(np.column_stack([S, R]))),
                     "rank_S_T": int(np.linalg.matrix_rank(st)), "size_T": len(kept), "size_S": n_s})
    out = pd.DataFrame(rows)
    out["maximal"] = out["rank_S_T"] == out["rank_S_R"]
    out["independent"] = out["rank_S_T"] == out["size_S"] + out["size_T"]
    return out


# --------------------------------------------------------------------------------------------------
# Tasks (Sec. 4: one MovieLens user or one MSLR-WEB10K query is a single-query ranking task)
# --------------------------------------------------------------------------------------------------
# --------------------------------------------------------------------------------------------------
# Profiles: budgets and data
# --------------------------------------------------------------------------------------------------
def budget(experiment: str, profile: str) -> Any:
    """This notebook's budget of ``experiment`` in ``profile`` (`lrank.papers.budgets`)."""
    return budgets.budget(NB, experiment, profile)


def try_fetch(name: str, skipped: dict[str, str]) -> Any:
    """``fetch(name)``, or None with the reason (and the fetch command) in ``skipped[name]``."""
    from lrank.data import fetch

    try:
        return fetch(name)
    except Exception as exc:  # noqa: BLE001 - any failure to find the data skips its experiments
        skipped[name] = (f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]} (get it with "
                         f"`python -m lrank fetch {name}`)")
        return None


def task_domains(profile: str, n_web: int | None, skipped: dict[str, str], n_users: int | None = None
                 ) -> tuple[dict[str, dict[str, RankingData]], dict[str, str], list[str] | None,
                            RankingData | None]:
    """Tables 1 and 3's task domains: ``(domains, sources, featureless, mq_base)``.

    MovieLens (every profile): every user of MovieLens-100K with >= 100 ratings (`movielens_task_set`;
    ``featureless``: the tasks without a feature user), the first ``n_users`` of them by user id when given
    (the rehearsal's budget). WEB10K: ``"quick"``: every query of the MSLR sample
    with a critical pair (``mq_base``: the sample's train part, the quick profile's MQ substitute);
    ``"paper"`` / ``"rehearsal"``: the ``n_web`` queries of MSLR-WEB10K Fold1 train with the most critical
    pairs below 50,000 (real or stand-in; ``mq_base`` None). A data set that cannot be had is noted in
    ``skipped``; the rehearsal refuses to skip.
    """
    domains, sources, featureless, mq_base = {}, {}, None, None
    ratings = try_fetch("movielens-100k", skipped)
    if ratings is not None:
        tasks, featureless = movielens_task_set(ratings, min_ratings=100, max_missing=0.5)
        sources["MovieLens"] = ("real MovieLens-100K ratings (943 users x 1682 movies), every user with "
                                ">= 100 ratings")
        if n_users is not None and n_users < len(tasks):
            tasks = dict(list(tasks.items())[:n_users])
            featureless = [k for k in featureless if k in tasks]
            sources["MovieLens"] += f" (the first {n_users} of them)"
        domains["MovieLens"] = tasks
    if profile == "quick":
        sample = try_fetch("mslr-sample", skipped)
        if sample is not None:
            domains["WEB10K"] = query_tasks(list(sample), max_pairs=50_000, n_tasks=n_web,
                                            prefix=["train", "test"])
            sources["WEB10K"] = ("real MSLR sample (first 5,000 lines of MSLR-WEB10K Fold1 train and test), "
                                 "every query with a critical pair and >= 5 documents")
            mq_base = sample[0]
    else:
        web = try_fetch("mslr-web10k", skipped)
        if web is not None:
            train = web.fold(1).train
            domains["WEB10K"] = query_tasks([train], max_pairs=50_000, n_tasks=n_web, prefix=["fold1"])
            n_tasks = len(domains["WEB10K"])
            sources["WEB10K"] = (f"MSLR-WEB10K Fold1 train ({budgets.data_kind(train)}), the {n_tasks} "
                                 "queries with the most critical pairs below 50,000")
    budgets.require_nothing_skipped(profile, skipped, NB)
    return domains, sources, featureless, mq_base


def mq_data(profile: str, mq_base: RankingData | None, n_queries: int | None, seed: int,
            skipped: dict[str, str]) -> tuple[dict[str, list], str]:
    """Tables 2 and 4's data: ``(folds by data set name, description)``. ``"quick"``: the first
    ``n_queries`` queries of ``mq_base`` relabelled to 3 grades in 5 random query folds; ``"paper"`` /
    ``"rehearsal"``: MQ2007 and MQ2008's five folds (real or stand-in; an absent one is noted in ``skipped``
    and printed; the rehearsal refuses to skip)."""
    mq_folds: dict[str, list] = {}
    if profile == "quick":
        if "mslr-sample" not in skipped:
            mslr = mq_base.subset(np.arange(min(n_queries, mq_base.n_queries)))
            mq = {"MQ-substitute": mslr.relabel({0: 0, 1: 1, 2: 1, 3: 2, 4: 2},
                                                "MQ-like 3 grades: 0->0, 1-2->1, 3-4->2")}
            mq_folds = {name: d.kfold(5, seed) for name, d in mq.items()}
        return mq_folds, (f"{n_queries} queries of the real MSLR sample relabelled to 3 grades (0->0, "
                          "1-2->1, 3-4->2), 5 random query folds")
    kinds = set()
    for name in ("mq2007", "mq2008"):
        d = try_fetch(name, skipped)
        if d is not None:
            mq_folds[name] = [d.fold(k) for k in range(1, 6)]
            kinds.add(budgets.data_kind(mq_folds[name][0].train))
        else:
            print(f"SKIPPED {name}: {skipped[name]}")
    budgets.require_nothing_skipped(profile, {k: v for k, v in skipped.items() if k.startswith("mq")}, NB)
    kind = "" if kinds <= {"real"} else " (stand-in)"
    return mq_folds, f"MQ2007 and MQ2008 QueryLevelNorm{kind}, the five specified folds"


def movielens_task_set(ratings: np.ndarray, min_ratings: int = 100, max_missing: float = 0.5,
                       provenance: dict | None = None) -> tuple[dict[str, RankingData], list[str]]:
    """The paper's MovieLens tasks: every user with ``>= min_ratings`` ratings (Sec. 4).

    Returns ``(tasks, featureless)``: every task by name ``u<id>``, and the names of the tasks whose
    50% rule left no feature user (they stay in ``tasks``; their models are the constant model).
    """
    from lrank.data import movielens_tasks

    R = np.asarray(ratings, dtype=np.float64)
    built = movielens_tasks(R, min_ratings, max_missing, provenance)
    tasks = {int(t.qid[0]): t for t in built}
    for u in getattr(built, "without_features", []):  # kept as featureless tasks (the constant model)
        movies = np.flatnonzero(~np.isnan(R[u - 1]))
        tasks[int(u)] = RankingData(
            np.zeros((movies.size, 0), np.float32), R[u - 1, movies], np.array([0, movies.size]),
            qid=np.array([u]), feature_names=[],
            provenance=dict(provenance or {}, user=int(u), min_ratings=min_ratings, max_missing=max_missing,
                            n_features_kept=0))
    tasks = {f"u{u}": tasks[u] for u in sorted(tasks)}
    return tasks, [k for k, t in tasks.items() if t.n_features == 0]


def movielens_counts(ratings: np.ndarray, min_ratings: int = 100,
                     near: Sequence[int] = range(95, 102)) -> dict:
    """What the MovieLens part of Sec. 4 counts, on the ratings matrix (users x movies, NaN unrated):
    ``users``, ``movies``, ``ratings``, ``tasks`` (users with ``>= min_ratings`` ratings) and
    ``at_least`` (``k -> users with >= k ratings`` for ``k`` in ``near``), to say which rule could give
    another count."""
    R = np.asarray(ratings, dtype=np.float64)
    per_user = np.isfinite(R).sum(axis=1)
    return {"users": int(R.shape[0]), "movies": int(R.shape[1]), "ratings": int(np.isfinite(R).sum()),
            "tasks": int((per_user >= min_ratings).sum()),
            "at_least": {int(k): int((per_user >= k).sum()) for k in near}}


def query_tasks(parts: Sequence[RankingData], max_pairs: int = 50_000, n_tasks: int | None = None,
                min_docs: int = 5, prefix: Sequence[str] | None = None) -> dict[str, RankingData]:
    """MSLR-WEB10K tasks by the paper's rule: the queries with the most critical pairs, each fewer than
    ``max_pairs`` (Sec. 4: the 300 such queries); ``n_tasks=None`` keeps every query that qualifies.

    ``parts`` are data sets (e.g. a fold's train and test); a query needs at least one critical pair and
    ``min_docs`` documents (one per fold). Ties in the pair count keep the data order.
    """
    prefix = list(prefix) if prefix is not None else [f"p{i}" for i in range(len(parts))]
    cand = []
    for pi, data in enumerate(parts):
        npairs = data.n_critical_pairs()
        sizes = np.diff(data.qptr)
        for q in range(data.n_queries):
            if 0 < npairs[q] < max_pairs and sizes[q] >= min_docs:
                cand.append((-int(npairs[q]), pi, q))
    cand.sort()
    if n_tasks is not None:
        cand = cand[:n_tasks]
    return {f"{prefix[pi]}:q{parts[pi].qid[q]}": parts[pi].subset([q]) for _, pi, q in cand}


# --------------------------------------------------------------------------------------------------
# The protocol (Sec. 4): 5 folds 3/1/1 rotating per task, round chosen per metric on validation
# --------------------------------------------------------------------------------------------------
def _fold_run(variant: str | Mapping[str, Any], params: dict, fold: Any, n_rounds: int,
              metrics: Sequence[str], metric_options: dict) -> dict:
    """One model on one fold: validation and test curves over rounds 1..n_rounds, train E1 / ln E2, and
    the checks of the paper's identities and bounds on this fit (`fit_checks`).

    ``variant`` is RankBoostPlus's ``variant`` or a dict of its parameters (e.g. ``{"variant": "plus",
    "implementation": "optimal"}``). A model that stopped early keeps its last ensemble for the remaining
    rounds (it is the model the algorithm returns); a model with 0 rounds (Rb-d halting at round 1, a task
    without features or without a critical pair in the training part) is the constant model at every
    round, never dropped.
    """
    from lrank.metrics import evaluate

    kw = {"variant": variant} if isinstance(variant, str) else dict(variant)
    est = RankBoostPlus(n_estimators=n_rounds, **kw, **params)
    n_iter, stop, overflow = 0, "", False
    if fold.train.n_features == 0:
        stop = "no feature"
    elif fold.train.n_critical_pairs().sum() == 0:
        stop = "no critical pair in the training part"
    else:
        with warnings.catch_warnings(record=True) as caught:  # E2 overflow: counted, not printed
            warnings.simplefilter("always", RuntimeWarning)
            est.fit(fold.train)
        overflow = any("train_log_E2" in str(w.message) for w in caught)
        n_iter, stop = est.n_iter_, est.stop_reason_
    ev = [d for d in (fold.valid, fold.test)]
    X = np.vstack([d.X for d in ev])
    y = np.concatenate([d.y for d in ev])
    qptr = np.array([0, ev[0].n_docs, ev[0].n_docs + ev[1].n_docs])
    stages = list(est.staged_predict(X)) if n_iter else [np.zeros(X.shape[0])]
    # every round's (valid, test) pair as two queries of one evaluate call
    n_st = len(stages)
    sizes = np.tile(np.diff(qptr), n_st)
    res = evaluate(np.tile(y, n_st), np.concatenate(stages), np.r_[0, np.cumsum(sizes)], list(metrics),
                   per_query=True, **metric_options)
    vals = np.stack([np.asarray(res[m]).reshape(n_st, 2) for m in metrics], axis=1)
    curve = np.empty((n_rounds, len(metrics), 2))
    curve[: len(stages)] = vals
    curve[len(stages):] = vals[-1]
    if n_iter:
        h = est.history_
        e1 = np.r_[h["train_E1"].to_numpy(), np.full(n_rounds - n_iter, h["train_E1"].iloc[-1])]
        le2 = np.r_[h["train_log_E2"].to_numpy(), np.full(n_rounds - n_iter, h["train_log_E2"].iloc[-1])]
        checks = fit_checks(est, fold.train)
    else:  # F1 = F2 = 1 at eta = 0
        e1, le2 = np.ones(n_rounds), np.zeros(n_rounds)
        checks = dict.fromkeys(FIT_CHECKS, math.nan)
    return {"valid": curve[:, :, 0], "test": curve[:, :, 1], "train_E1": e1, "train_log_E2": le2,
            "n_iter": n_iter, "stop": stop, "E2_overflow": overflow, **checks}


#: The per-fit checks `fit_checks` returns (columns of ``run_tasks(...)["folds"]``).
FIT_CHECKS = ("eq_gap", "bound_excess", "prop2_excess")


def fit_checks(est: RankBoostPlus, train: RankingData) -> dict[str, float]:
    """The paper's identities and bounds on one fitted model, measured on its training data.

    ``eq_gap``: Eq. 12 (Rb-d, and Rb-c, which shares its update Eq. 10) ``|ln E1(g) - sum_t ln Z_t|`` with
    E1 computed afresh from the returned model's scores on the training pairs; Eq. 29 (RankBoost+) the
    largest ``|ln E2 - sum_t ln Z_t|`` over the rounds, E2 being F2 over the model's independent set.
    ``bound_excess``: the largest ``R - bound`` over the rounds, R = R1 against Theorem 1's bound for Rb-d
    (Eq. 16) and R2 against Theorem 2's for RankBoost+ (Eq. 35); NaN for Rb-c (no theorem). ``prop2_excess``:
    the largest ``R2 - E2`` over the rounds (Proposition 2: never positive). A check holds when its value
    is at most a rounding error (the notebook says which).
    """
    h = est.history_
    log_z = h["log_prod_Z"].to_numpy(dtype=np.float64)
    if est.variant == "plus":
        eq_gap = float(np.max(np.abs(h["train_log_E2"].to_numpy(dtype=np.float64) - log_z)))
        risk = h["train_R2"].to_numpy(dtype=np.float64)
    else:
        cp = train.pairs()
        s = est.predict(train.X)
        with np.errstate(over="ignore"):
            margin = np.asarray(s[cp.hi] - s[cp.lo], dtype=np.float64)
        log_e1 = float(np.logaddexp.reduce(-margin) - math.log(margin.size))
        eq_gap = abs(log_e1 - float(log_z[-1]))
        risk = h["train_R1"].to_numpy(dtype=np.float64)
    bound = h["bound"].to_numpy(dtype=np.float64)
    bound_excess = float(np.max(risk - bound)) if est.variant != "c" else math.nan
    r2 = h["train_R2"].to_numpy(dtype=np.float64)
    prop2 = float(np.max(r2 - np.exp(np.minimum(h["train_log_E2"].to_numpy(dtype=np.float64), 700.0))))
    return {"eq_gap": eq_gap, "bound_excess": bound_excess, "prop2_excess": prop2}


def _task_run(tname: str, task: RankingData, algorithms: Mapping[str, Any], params: dict, n_folds: int,
              n_rounds: int, metrics: Sequence[str], seed: int | None, metric_options: dict) -> dict:
    folds = task.task_folds(n_folds, seed)
    out = {}
    for aname, variant in algorithms.items():
        runs = [_fold_run(variant, params, f, n_rounds, metrics, metric_options) for f in folds]
        out[aname] = runs
    return {"task": tname, "runs": out}


def run_tasks(tasks: Mapping[str, RankingData], n_rounds: int, *, algorithms: Mapping[str, Any] = ALGORITHMS,
              metrics: Sequence[str] = METRICS, n_folds: int = 5, seed: int | None = 0,
              max_thresholds: int = 255, n_jobs: int = 1, metric_options: dict | None = None,
              scheduler: Any = None, verbose: bool | None = None, checkpoint: Any = None) -> dict:
    """Run the RankBoost+ protocol (Sec. 4) on every task: ``n_folds`` folds 3/1/1 rotating, every
    algorithm on the same folds, each metric's round chosen on validation (ties: the earliest round).

    Tasks run in parallel through joblib (one job per task), on a Dask cluster when ``scheduler`` (or
    ``$LRANK_DASK_SCHEDULER``) names one, exactly as `lrank.experiments.run_grid` does (same
    `lrank.experiments.grid.dask_backend`); ``verbose`` shows a tqdm bar over the tasks (default: on for
    the paper profile only). Each model is
    fitted once: its validation / test curves and its training E1 / ln E2 come from the same fit (which
    `run_grid`, scoring curves only, would need a second fit for). ``checkpoint`` keeps each finished
    task, so that the same call after an interruption runs only the rest, with identical results
    (default: on for the paper profile only; see `lrank.experiments.jobs`).

    Returns
    -------
    dict with
        ``selected``: DataFrame ``task, algorithm, fold, metric, round, value`` (test value at the round
        chosen on validation); ``curves``: dict ``algorithm -> DataFrame`` (rounds x CURVE_METRICS, test,
        mean over tasks of the fold means) ; ``train``: dict ``algorithm -> DataFrame`` (rounds x
        ``E1_mean``, ``log_E2_mean``, ``E2_median``); ``per_task_curves``: dict ``algorithm -> ndarray``
        (tasks x rounds x CURVE_METRICS, test); ``per_task_log_E2`` / ``per_task_E1``: dict ``algorithm ->
        ndarray`` (tasks x rounds, train ln E2 / E1, mean over the folds); ``folds``: DataFrame ``task,
        algorithm, fold, n_iter, stop, E2_overflow`` (train E2 passed float64's range; its curve uses
        ln E2), ``E1_last`` / ``E1_min`` (train E1 of the returned model / its lowest over the rounds),
        ``log_E2_last`` and the checks of `fit_checks` (`FIT_CHECKS`). ``algorithms`` maps a name to
        RankBoostPlus's ``variant`` or to a dict of its parameters.
    """
    from lrank.experiments.jobs import Job, run_jobs

    metrics = list(metrics)
    params = dict(max_thresholds=max_thresholds, random_state=seed)
    todo = [Job({"task": name, "seed": seed}, (name, t, dict(algorithms), params, n_folds, n_rounds, metrics,
                                               seed, metric_options or {})) for name, t in tasks.items()]
    jobs = run_jobs(_task_run, todo, label="rankboost_plus_tasks", checkpoint=checkpoint, n_jobs=n_jobs,
                    scheduler=scheduler, verbose=verbose, desc="RankBoost+ tasks")
    sel_rows, fold_rows = [], []
    ci = [metrics.index(m) for m in CURVE_METRICS if m in metrics]
    curves = {a: [] for a in algorithms}
    log_e2 = {a: [] for a in algorithms}
    e1 = {a: [] for a in algorithms}
    for job in jobs:
        for aname, runs in job["runs"].items():
            for k, run in enumerate(runs):
                fold_rows.append((job["task"], aname, k, run["n_iter"], run["stop"], run["E2_overflow"],
                                  float(run["train_E1"][-1]), float(np.min(run["train_E1"])),
                                  float(run["train_log_E2"][-1]), *(run[c] for c in FIT_CHECKS)))
                for j, m in enumerate(metrics):
                    v = run["valid"][:, j]
                    r = int(np.argmin(v) if m in LOWER_IS_BETTER else np.argmax(v))
                    sel_rows.append((job["task"], aname, k, m, r + 1, float(run["test"][r, j])))
            curves[aname].append(np.mean([run["test"][:, ci] for run in runs], axis=0))
            log_e2[aname].append(np.mean([run["train_log_E2"] for run in runs], axis=0))
            e1[aname].append(np.mean([run["train_E1"] for run in runs], axis=0))
    rounds = pd.RangeIndex(1, n_rounds + 1, name="round")
    cm = [metrics[i] for i in ci]
    return {
        "selected": pd.DataFrame(sel_rows, columns=["task", "algorithm", "fold", "metric", "round", "value"]),
        "folds": pd.DataFrame(fold_rows, columns=["task", "algorithm", "fold", "n_iter", "stop",
                                                  "E2_overflow", "E1_last", "E1_min", "log_E2_last",
                                                  *FIT_CHECKS]),
        "curves": {a: pd.DataFrame(np.mean(c, axis=0), index=rounds, columns=cm) for a, c in curves.items()},
        "train": {a: pd.DataFrame({"E1_mean": np.mean(e1[a], axis=0),
                                   "log_E2_mean": np.mean(log_e2[a], axis=0),
                                   "E2_median": np.exp(np.median(log_e2[a], axis=0))}, index=rounds)
                  for a in algorithms},
        "per_task_curves": {a: np.asarray(c) for a, c in curves.items()},
        "per_task_log_E2": {a: np.asarray(v) for a, v in log_e2.items()},
        "per_task_E1": {a: np.asarray(v) for a, v in e1.items()},
        "tasks": list(tasks),
    }


#: Tables 2 and 4's metrics, and the metric that chooses each one's round on validation (Qin and Liu 2013:
#: NDCG's round by MAP; R1 and R2 by themselves)
MQ_METRICS = ("r1", "r2", "ndcg@3", "ndcg@5", "ndcg@7", "map")
MQ_SELECT_BY = {"r1": "r1", "r2": "r2", "ndcg@3": "map", "ndcg@5": "map", "ndcg@7": "map", "map": "map"}


def _mq_fit(dname: str, k: int, aname: str, variant: str, fold: Any, n_rounds: int,
            params: dict) -> pd.DataFrame:
    from lrank.metrics import evaluate

    est = RankBoostPlus(variant=variant, n_estimators=n_rounds, **params).fit(fold.train)
    parts = {"valid": fold.valid, "test": fold.test}
    vals = {}
    for split, d in parts.items():
        stages = list(est.staged_predict(d.X)) or [np.zeros(d.n_docs)]
        res = evaluate(np.tile(d.y, len(stages)), np.concatenate(stages),
                       np.r_[0, np.cumsum(np.tile(np.diff(d.qptr), len(stages)))], list(MQ_METRICS),
                       per_query=True)
        vals[split] = {m: np.asarray(res[m]).reshape(len(stages), d.n_queries) for m in MQ_METRICS}
    rows = []
    for m in MQ_METRICS:
        sel = np.nanmean(vals["valid"][MQ_SELECT_BY[m]], axis=1)
        r = int(np.nanargmin(sel) if MQ_SELECT_BY[m] in LOWER_IS_BETTER else np.nanargmax(sel))
        for q, v in zip(fold.test.qid, vals["test"][m][r]):
            rows.append((dname, aname, k, int(q), m, r + 1, float(v)))
    return pd.DataFrame(rows, columns=["data", "algorithm", "fold", "qid", "metric", "round", "value"])


def mq_per_query(mq_folds: Mapping[str, Sequence[Any]], n_rounds: int, *, seed: int | None = 0,
                 max_thresholds: int = 255, algorithms: Mapping[str, str] = ALGORITHMS,
                 n_jobs: int = 1) -> pd.DataFrame:
    """Tables 2 and 4's protocol, keeping every test query: on each fold of each data set, each algorithm is
    fitted on the training part, each metric's round is chosen on the validation part's mean (`MQ_SELECT_BY`;
    ties: the earliest round; a model with 0 rounds is the constant model) and the test queries' values at
    that round are returned: ``data, algorithm, fold, qid, metric, round, value`` (NaN where a query has no
    critical pair for R1 / R2). Fits run in parallel through joblib."""
    from joblib import Parallel, delayed

    params = dict(max_thresholds=max_thresholds, random_state=seed)
    jobs = [(dname, k, aname, v, f) for dname, folds in mq_folds.items() for k, f in enumerate(folds)
            for aname, v in algorithms.items()]
    parts = Parallel(n_jobs=n_jobs)(delayed(_mq_fit)(*j, n_rounds, params) for j in jobs)
    cols = ["data", "algorithm", "fold", "qid", "metric", "round", "value"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def mq_tables(per_query: pd.DataFrame, algorithms: Sequence[str] = tuple(ALGORITHMS)
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (average rank over the folds of each data set's per-fold means; 1 = best) and Table 4 (test R1,
    R2 and NDCG@5 by fold) from `mq_per_query`'s output."""
    from lrank import stats

    means = per_query.groupby(["data", "fold", "metric", "algorithm"],
                              sort=False)["value"].mean().unstack("algorithm")
    means = means[list(algorithms)].apply(round_significant)  # near-ties tie (see `per_task_scores`)
    rank2 = {}
    for (dname, met), sub in means.groupby(level=["data", "metric"], sort=False):
        if met == "map":
            continue
        rank2[(dname, met)] = stats.average_ranks(sub.droplevel(["data", "metric"]),
                                                  lower_is_better=met in LOWER_IS_BETTER)
    table2 = pd.DataFrame(rank2).T
    table2.index.names = ["data", "metric"]
    t4 = means.reset_index()
    t4 = t4[t4["metric"].isin(["r1", "r2", "ndcg@5"])].pivot_table(index=["data", "fold"], columns="metric",
                                                                   values=list(algorithms))
    table4 = t4.swaplevel(axis=1)[[(m, a) for m in ("r1", "r2", "ndcg@5") for a in algorithms]]
    return table2, table4


def fold_table(runs: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Per domain: the folds run (3 algorithms each), the constant models, Rb-d's halts (eps- = 0) and the
    fits whose train E2 passed float64's range (their curves use ln E2)."""
    rows = {}
    for dom, run in runs.items():
        f = run["folds"]
        halt = (f["algorithm"] == "Rb-d") & (f["stop"] == "eps- = 0 (halt)")
        rows[dom] = {"folds": len(f), "constant model (0 rounds)": int((f["n_iter"] == 0).sum()),
                     "Rb-d halted (eps- = 0)": int(halt.sum()),
                     "Rb-d halted at round 1": int((halt & (f["n_iter"] == 0)).sum()),
                     "train E2 overflowed (ln E2 used)": int(f["E2_overflow"].sum())}
    return pd.DataFrame(rows).T


def protocol_caption(profile: str, n_rounds: int, sources: Mapping[str, str],
                     counts: Mapping[str, int]) -> str:
    """The caption line every artifact of the task experiments carries: profile, rounds, protocol, data."""
    return (f"Profile {profile}; {n_rounds} rounds (paper: 300); 5-fold 3/1/1 within each task, round chosen "
            "per metric on validation; halted models keep their last ensemble, 0-round models are the "
            "constant model (kept). "
            + " ".join(f"{dom}: {counts[dom]} tasks, {sources[dom]}." for dom in sources)
            + " NDCG: exp gain, log2 discount, ties in stable order.")


def fig4_fits(train: RankingData, n_rounds: int, max_thresholds: int, seed: int | None,
              weights: Sequence[float] = (1.0, 3.0, 10.0)) -> dict:
    """Fig. 4 on one training part: Rb-d that halts (eps- = 0), Rb-c, and the E1 of Rb-d's returned ensemble
    with the halting ranker added at each of ``weights`` (``completed``: weight -> E1). The halting ranker is
    the last of the same fit with ``eps_minus_zero="infinite"`` (every earlier round identical)."""
    kw = dict(n_estimators=n_rounds, max_thresholds=max_thresholds, random_state=seed)
    rbd = RankBoostPlus(variant="d", **kw).fit(train)
    rbc = RankBoostPlus(variant="c", **kw).fit(train)
    inf = RankBoostPlus(variant="d", eps_minus_zero="infinite", **kw).fit(train)
    if rbd.stop_reason_ != "eps- = 0 (halt)" or inf.n_iter_ != rbd.n_iter_ + 1:
        raise RuntimeError(f"Rb-d did not halt on this training part ({rbd.stop_reason_!r})")
    j = int(inf.round_stumps_[-1][0])
    X = np.asarray(train.X, dtype=np.float64)
    h = (X[:, inf.stump_features_[j]] > inf.stump_thresholds_[j]).astype(np.float64)
    g, cp = rbd.predict(train.X), train.pairs()
    completed = {float(w): pair_losses(g + w * h, cp.hi, cp.lo, cp.weight)["E1"] for w in weights}
    return {"rbd": rbd, "rbc": rbc, "completed": completed}


def mq_data_kind(profile: str, source: str) -> tuple[str, str, str | None]:
    """``(data_kind, data, not_comparable)`` of Tables 2 and 4's claims: the quick profile's relabelled MSLR
    sample and the rehearsal's stand-ins cannot decide claims about MQ2007 / MQ2008."""
    if profile == "quick":
        return "substitute", source, ("substitute for MQ2007 / MQ2008 (LETOR 4.0, not on this machine): a "
                                      "few MSLR-sample queries relabelled to 3 grades")
    if "stand-in" in source:
        return "substitute", source, "stand-in files of the rehearsal profile, not MQ2007 / MQ2008"
    return "paper", source, None


def per_task_scores(selected: pd.DataFrame, metric: str, algorithms: Sequence[str] = tuple(ALGORITHMS)
                    ) -> pd.DataFrame:
    """Test ``metric`` per task (rows) and algorithm (columns): the mean over folds of the values at the
    rounds chosen on validation (the numbers Table 1 ranks), rounded to `RANK_DIGITS` significant digits.

    The rounding makes the ranks tie-tolerant: two algorithms whose fold means differ only in the last bits
    (the same rankings, summed in a different order, or a CPU whose floating point rounds differently) tie
    on the task instead of being ordered by rounding noise. Unrounded, one MovieLens NDCG@3 near-tie moved
    Table 1's average ranks by 1.4e-3 under an emulated foreign CPU.
    """
    s = selected[selected["metric"] == metric]
    means = s.groupby(["task", "algorithm"])["value"].mean().unstack("algorithm")[list(algorithms)]
    return means.apply(round_significant)


#: significant digits kept before ranking (`per_task_scores`): far above any real difference of two
#: algorithms' test values, far below the last bits a different CPU or summation order moves
RANK_DIGITS = 12


def round_significant(x: Any, digits: int = RANK_DIGITS) -> Any:
    """``x`` (array-like of floats) rounded to ``digits`` significant digits; zeros, NaN and inf unchanged."""
    a = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(a) & (a != 0), np.floor(np.log10(np.abs(a))), 0.0)
    scale = 10.0 ** (digits - 1 - mag)
    out = np.where(np.isfinite(a), np.round(a * scale) / scale, a)
    return type(x)(out, index=x.index, name=x.name) if isinstance(x, pd.Series) else out


# --------------------------------------------------------------------------------------------------
# Fig. 1: time per round on one synthetic task (notebook 05 and `lrank.benchmarks.rankboost_plus_fig1`)
# --------------------------------------------------------------------------------------------------
#: Fig. 1's task: one ``make_letor_like`` query (the seed is the notebook's / benchmark's).
FIG1_TASK = {"n_queries": 1, "docs_per_query": 80, "n_features": 30, "n_grades": 3, "noise": 3.0}
FIG1_ROUNDS = 100
#: The seed of Fig. 1's task: the benchmark's, fixed. Fig. 1's speed claims are read from the stored
#: benchmark times, which a rerun with another ``SEED`` cannot re-measure: the notebook draws the same task
#: at any seed.
FIG1_SEED = 0
#: Fig. 1's four fits, in the order they are drawn (and alternated when timed).
FIG1_VARIANTS = {"Optimal Rb+": {"variant": "plus", "implementation": "optimal"},
                 "Efficient Rb+": {"variant": "plus", "implementation": "efficient"},
                 "Rb-d": {"variant": "d"}, "Rb-c": {"variant": "c"}}
#: ``figures/<FIG1_TIMES>.csv``: the per-round times ``python -m lrank bench`` stores for Fig. 1.
FIG1_TIMES = "rankboost_plus_fig1_times"
#: Rounds left out of the medians per round: the first ones include the fit's set-up.
FIG1_SKIP = 5


def fig1_task(seed: int = 0) -> RankingData:
    """Fig. 1's synthetic task (`FIG1_TASK` with ``random_state=seed``)."""
    from lrank.data.generators import make_letor_like

    return make_letor_like(**FIG1_TASK, random_state=seed)


def fig1_task_text(seed: int = 0) -> str:
    """Fig. 1's task in words, for captions and for the stored times' ``task`` column."""
    t = FIG1_TASK
    return (f"make_letor_like: {t['n_queries']} query, {t['docs_per_query']} documents, {t['n_features']} "
            f"features, {t['n_grades']} grades, noise {t['noise']:g}, seed {seed}; {FIG1_ROUNDS} rounds")


def fig1_models(seed: int = 0) -> dict[str, RankBoostPlus]:
    """Fig. 1's four estimators, unfitted: optimal and efficient Rb+, Rb-d, Rb-c (`FIG1_VARIANTS`)."""
    return {label: RankBoostPlus(n_estimators=FIG1_ROUNDS, random_state=seed, **kw)
            for label, kw in FIG1_VARIANTS.items()}


def fig1_column(label: str) -> str:
    """The column of the stored times holding ``label``'s seconds per round."""
    return f"{label} (s)"


def fig1_stored_times(seed: int = 0, path: str | Path | None = None) -> tuple[pd.DataFrame | None, str]:
    """The per-round times of Fig. 1 as ``python -m lrank bench`` stored them, and the file's name.

    Reads ``figures/rankboost_plus_fig1_times.csv`` of this checkout (the stored run, wherever
    ``LRANK_OUTPUT_DIR`` sends a notebook's own outputs): one row per round, ``round``, the median wall
    seconds of each variant (`fig1_column`), ``task``, ``repeats``, ``threads``, ``load``, ``profile``
    and ``commit``. Returns ``(None, why)`` when the file is absent, lacks a column or times another
    task than `fig1_task_text` ``(seed)``.
    """
    from lrank.paths import repo_dir

    path = Path(path) if path is not None else repo_dir() / "figures" / f"{FIG1_TIMES}.csv"
    shown = f"figures/{path.name}"
    if not path.is_file():
        return None, f"{shown} is absent"
    from lrank.plots import read_table

    times = read_table(path)
    need = ["round", *(fig1_column(v) for v in FIG1_VARIANTS), "task", "repeats", "threads", "commit"]
    missing = [c for c in need if c not in times.columns]
    if missing:
        return None, f"{shown} lacks the column(s) {', '.join(missing)}"
    if not len(times) or set(times["task"]) != {fig1_task_text(seed)}:
        got = times["task"].iloc[0] if len(times) else "no rows"
        return None, f"{shown} times another task ({got}), not {fig1_task_text(seed)}"
    return times, shown


def fig1_summary(times: pd.DataFrame, pruning_round: int | None) -> dict:
    """What Fig. 1's left panel shows, from per-round times laid out as `fig1_stored_times` returns them.

    ``slowest_round`` / ``slowest_s``: efficient Rb+'s slowest round after the first (the first includes
    the fit's set-up); ``pruning_round``: Algorithm 2's pruning step (line 14, ``prune_iteration_``);
    ``median_s``: each variant's median seconds per round from round ``FIG1_SKIP + 1`` on;
    ``after_pruning_s``: the same over the rounds after the pruning round (from ``FIG1_SKIP + 1`` on
    when there was none), ``rounds_after_pruning`` of them; ``before_pruning_s``: the medians from round
    ``FIG1_SKIP + 1`` to the round before the pruning (None without a pruning round).
    """
    r = times["round"].to_numpy()
    eff = times[fig1_column("Efficient Rb+")].to_numpy(dtype=float)
    later = np.where(r >= 2, eff, -np.inf)
    k = int(np.nanargmax(later))
    steady = r > FIG1_SKIP
    after = r > pruning_round if pruning_round is not None else steady

    def med(mask):
        return {v: float(np.nanmedian(times[fig1_column(v)].to_numpy(dtype=float)[mask]))
                for v in FIG1_VARIANTS}

    before = steady & (r < pruning_round) if pruning_round is not None else None
    return {"slowest_round": int(r[k]), "slowest_s": float(eff[k]),
            "before_pruning_s": med(before) if before is not None and before.any() else None,
            "pruning_round": None if pruning_round is None else int(pruning_round),
            "median_s": med(steady), "after_pruning_s": med(after), "rounds_after_pruning": int(after.sum())}



def fig1_span_summary(history: pd.DataFrame, times: pd.DataFrame | None = None) -> dict:
    """Where optimal Rb+'s independent set S stops growing, from its ``history_`` (indexed by round, with
    ``kind`` in {new, member, dependent} and ``n_independent``), and its stored times around that round.

    ``max_independent``: the largest ``n_independent``; ``full_rank_round``: the first round that reaches
    it; ``first_dependent_round``: the first round with ``kind == "dependent"`` (a line search along a
    direction in span(S); None without one); ``n_dependent``: those rounds. With ``times`` (laid out as
    `fig1_stored_times` returns them) also optimal Rb+'s median seconds per round ``median_s`` over
    ``rounds``: ``"before"`` (rounds ``FIG1_SKIP + 1`` to ``full_rank_round``), ``"after"`` (the later
    rounds) and, when there is a dependent round after ``full_rank_round``, ``"member"`` (the later
    rounds before the first dependent one) and ``"dependent"`` (from it on); each ``rounds`` entry is
    ``(first, last, count)`` of the stored rounds it covers.
    """
    rounds = history.index.to_numpy()
    n_ind = history["n_independent"].to_numpy()
    top = int(n_ind.max())
    full = int(rounds[int(np.argmax(n_ind == top))])
    dep = rounds[(history["kind"] == "dependent").to_numpy()]
    first_dep = int(dep[0]) if dep.size else None
    out = {"max_independent": top, "full_rank_round": full, "first_dependent_round": first_dep,
           "n_dependent": int(dep.size), "median_s": None, "rounds": None}
    if times is None:
        return out
    r = times["round"].to_numpy()
    sec = times[fig1_column("Optimal Rb+")].to_numpy(dtype=float)
    masks = {"before": (r > FIG1_SKIP) & (r <= full), "after": r > full}
    if first_dep is not None and first_dep > full:
        masks.update(member=(r > full) & (r < first_dep), dependent=r >= first_dep)
    masks = {k: m for k, m in masks.items() if m.any()}
    out["median_s"] = {k: float(np.median(sec[m])) for k, m in masks.items()}
    out["rounds"] = {k: (int(r[m].min()), int(r[m].max()), int(m.sum())) for k, m in masks.items()}
    return out
