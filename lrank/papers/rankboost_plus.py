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
def _fold_run(variant: str, params: dict, fold: Any, n_rounds: int, metrics: Sequence[str],
              metric_options: dict) -> dict:
    """One model on one fold: validation and test curves over rounds 1..n_rounds, and train E1 / ln E2.

    A model that stopped early keeps its last ensemble for the remaining rounds (it is the model the
    algorithm returns); a model with 0 rounds (Rb-d halting at round 1, a task without features or
    without a critical pair in the training part) is the constant model at every round, never dropped.
    """
    from lrank.metrics import evaluate

    est = RankBoostPlus(variant=variant, n_estimators=n_rounds, **params)
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
    else:  # F1 = F2 = 1 at eta = 0
        e1, le2 = np.ones(n_rounds), np.zeros(n_rounds)
    return {"valid": curve[:, :, 0], "test": curve[:, :, 1], "train_E1": e1, "train_log_E2": le2,
            "n_iter": n_iter, "stop": stop, "E2_overflow": overflow}


def _task_run(tname: str, task: RankingData, algorithms: Mapping[str, str], params: dict, n_folds: int,
              n_rounds: int, metrics: Sequence[str], seed: int | None, metric_options: dict) -> dict:
    folds = task.task_folds(n_folds, seed)
    out = {}
    for aname, variant in algorithms.items():
        runs = [_fold_run(variant, params, f, n_rounds, metrics, metric_options) for f in folds]
        out[aname] = runs
    return {"task": tname, "runs": out}


def run_tasks(tasks: Mapping[str, RankingData], n_rounds: int, *, algorithms: Mapping[str, str] = ALGORITHMS,
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
        (tasks x rounds x CURVE_METRICS, test); ``per_task_log_E2``: dict ``algorithm -> ndarray`` (tasks x
        rounds); ``folds``: DataFrame ``task, algorithm, fold, n_iter, stop, E2_overflow`` (train E2
        passed float64's range; its curve uses ln E2).
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
                fold_rows.append((job["task"], aname, k, run["n_iter"], run["stop"], run["E2_overflow"]))
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
        "folds": pd.DataFrame(fold_rows,
                              columns=["task", "algorithm", "fold", "n_iter", "stop", "E2_overflow"]),
        "curves": {a: pd.DataFrame(np.mean(c, axis=0), index=rounds, columns=cm) for a, c in curves.items()},
        "train": {a: pd.DataFrame({"E1_mean": np.mean(e1[a], axis=0),
                                   "log_E2_mean": np.mean(log_e2[a], axis=0),
                                   "E2_median": np.exp(np.median(log_e2[a], axis=0))}, index=rounds)
                  for a in algorithms},
        "per_task_curves": {a: np.asarray(c) for a, c in curves.items()},
        "per_task_log_E2": {a: np.asarray(v) for a, v in log_e2.items()},
        "tasks": list(tasks),
    }


def per_task_scores(selected: pd.DataFrame, metric: str, algorithms: Sequence[str] = tuple(ALGORITHMS)
                    ) -> pd.DataFrame:
    """Test ``metric`` per task (rows) and algorithm (columns): the mean over folds of the values at the
    rounds chosen on validation (the numbers Table 1 ranks)."""
    s = selected[selected["metric"] == metric]
    return s.groupby(["task", "algorithm"])["value"].mean().unstack("algorithm")[list(algorithms)]


# --------------------------------------------------------------------------------------------------
# Fig. 1: time per round on one synthetic task (notebook 05 and `lrank.benchmarks.rankboost_plus_fig1`)
# --------------------------------------------------------------------------------------------------
#: Fig. 1's task: one ``make_letor_like`` query (the seed is the notebook's / benchmark's).
FIG1_TASK = {"n_queries": 1, "docs_per_query": 80, "n_features": 30, "n_grades": 3, "noise": 3.0}
FIG1_ROUNDS = 100
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
    from lrank.benchmarks import read_table

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
    when there was none), ``rounds_after_pruning`` of them.
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

    return {"slowest_round": int(r[k]), "slowest_s": float(eff[k]),
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

# --------------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------------
def rank_order_verdict(scores: pd.DataFrame, order: Sequence[str], lower_is_better: bool,
                       alpha: float = 0.05) -> dict:
    """Is the average rank ordered as ``order`` (best first), significantly at every step?

    Friedman test over the tasks, then Nemenyi's post-hoc p for each neighbouring pair of ``order``.
    HELD: Friedman p < alpha and every neighbouring pair differs significantly in the claimed
    direction. NOT HELD: some pair of ``order`` differs significantly in the opposite direction.
    UNDECIDED otherwise.
    """
    from lrank import stats

    ranks = stats.average_ranks(scores[list(order)], lower_is_better=lower_is_better)
    _, p_f = stats.friedman(scores[list(order)]) if scores.shape[0] > 1 else (math.nan, 1.0)
    nem = stats.nemenyi(scores[list(order)]) if scores.shape[0] > 1 else None
    steps, wrong = [], False
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            p = float(nem.loc[a, b]) if nem is not None else 1.0
            right = ranks[a] < ranks[b]
            if p < alpha and not right:
                wrong = True
            if order.index(b) == i + 1:
                steps.append(p < alpha and right)
    if wrong:
        v = "NOT HELD"
    elif p_f < alpha and all(steps):
        v = "HELD"
    else:
        v = "UNDECIDED"
    return {"verdict": v, "n": int(scores.shape[0]), "friedman_p": float(p_f),
            "ranks": {k: float(x) for k, x in ranks.items()},
            "nemenyi_p": {f"{a} vs {b}": float(nem.loc[a, b]) if nem is not None else 1.0
                          for i, a in enumerate(order) for b in order[i + 1:]}}


def best_verdict(scores: pd.DataFrame, best: str, lower_is_better: bool, alpha: float = 0.05) -> dict:
    """Fig. 3's claim: ``best`` has the best average rank and differs significantly (Nemenyi) from each
    other algorithm. HELD / NOT HELD (another one is significantly better) / UNDECIDED."""
    from lrank import stats

    ranks = stats.average_ranks(scores, lower_is_better=lower_is_better)
    _, p_f = stats.friedman(scores)
    nem = stats.nemenyi(scores)
    others = [c for c in scores.columns if c != best]
    ps = {o: float(nem.loc[best, o]) for o in others}
    if any(ps[o] < alpha and ranks[o] < ranks[best] for o in others):
        v = "NOT HELD"
    elif p_f < alpha and all(ps[o] < alpha and ranks[best] < ranks[o] for o in others):
        v = "HELD"
    else:
        v = "UNDECIDED"
    return {"verdict": v, "n": int(scores.shape[0]), "friedman_p": float(p_f),
            "ranks": {k: float(x) for k, x in ranks.items()}, "nemenyi_p": ps}
