"""Xu & Li (2007), *AdaRank: A Boosting Algorithm for Information Retrieval*: the paper's protocol.

What only this paper needs, built on the library (`lrank.models.adarank.AdaRank`,
`lrank.baselines.ranksvm.RankSVM`, `lrank.models.rankboost.RankBoost`, `lrank.experiments.select_rounds`,
`RankingData.concat` / `relabel` / `kfold`, `lrank.stats.paired_comparison`):

* the data sets of the experiments (`experiments`): the real MSLR sample (train + test of
  ``fetch("mslr-sample")``, 86 queries) relabelled to the paper's three grades d / p / n, and LETOR 3.0
  OHSUMED and TD2003 when present; the BM25 column of each (`lrank.baselines.ranksvm.BM25_FEATURE`);
* the protocol (`run_protocol`): query-level k-fold cross-validation (5 folds, 3 train / 1 validation /
  1 test rotating), BM25, Ranking SVM (C on validation), RankBoost (rounds on validation MAP),
  AdaRank.MAP and AdaRank.NDCG (T by the training measure, Sec. 4.1), AdaRank under other feature scalings;
  per-query test measures of every method, per-query error counts on d-n / d-p / p-n pairs (Fig. 6),
  per-query training measures of AdaRank (Fig. 9-10);
* the figures' tables (`fig2_table`, `fig6_table`, `fig7_counts`, `fig8_table`, `fig910_table`);
* the claims, each tested as the paper writes it with a paired Wilcoxon test over queries
  (`claims_fig2`, `claims_fig6`, `claims_fig8`, `claims_fig910`, `claim_fig11`, `scaling_result`), and
  Theorem 1's bound per round with its informative rounds counted (`theorem1_report`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lrank.baselines.ranksvm import BM25_FEATURE, RankSVM
from lrank.data.container import RankingData
from lrank.experiments import select_rounds
from lrank.metrics import evaluate
from lrank.models.adarank import AdaRank
from lrank.papers import budgets
from lrank.stats import paired_comparison

NB = "02_adarank"
METRICS = ["map"] + [f"ndcg@{k}" for k in range(1, 11)]
BASELINES = ["BM25", "Ranking SVM", "RankBoost"]
ADARANKS = {"AdaRank.MAP": "map", "AdaRank.NDCG": "ndcg@5"}
METHODS = [*BASELINES, *ADARANKS]
#: MSLR grades 0..4 to the paper's n / p / d (grades 3 and 4 alone are too rare in the sample to be d)
DPN = {0: 0, 1: 1, 2: 2, 3: 2, 4: 2}
PAIR_KINDS = {"d-n": (2, 0), "d-p": (2, 1), "p-n": (1, 0)}
#: Fig. 7-8's query groups by number of document pairs ("0-1k": 0 to 999 pairs)
GROUP_EDGES = [0, 1000, 2000, 3000, 4000, 5000, np.inf]
GROUP_NAMES = ["0-1k", "1k-2k", "2k-3k", "3k-4k", "4k-5k", "5k+"]
#: Fig. 8's sentence: "AdaRank.MAP performs particularly better than RankBoost for queries with small
#: numbers of document pairs (e.g., '0-1k', '1k-2k', and '2k-3k')": fewer than this many pairs
FEW_PAIRS = 3000
SCALING_LABEL = {"minmax": "min-max", "standard": "standardised", "none": "raw"}
#: The orders of tied scores besides the file order every measure uses: the worst (lowest label first among
#: equal scores, ``lrank.metrics.evaluate(..., ties="pessimistic")``), the best (``"optimistic"``) and a
#: uniformly random order (the mean over `TIE_DRAWS` shuffles of each query's documents, the same shuffles
#: for every method of a fold); the protocol stores each test measure under them as the splits
#: ``"test-pessimistic"``, ``"test-optimistic"`` and ``"test-random"``
TIE_ORDERS = ("pessimistic", "optimistic", "random")
TIE_DRAWS = 20
#: The continuing variant (a labelled deviation, not the paper's Fig. 1): a feature chosen in one round may
#: not be chosen in the next (RankLib's rule, ``max_consecutive=1``), and training stops only after 10 rounds
#: without an improvement of the training measure (``early_stopping_rounds=10``; the paper stops at the first
#: such round), keeping the best training round. The printed rule can pick the same feature again, which
#: leaves the ranking of ``f_t`` and so ``P_{t+1}`` unchanged and ends training after one or two rounds.
CONTINUING = {"max_consecutive": 1, "early_stopping_rounds": 10, "n_estimators": 300}
#: ``variant`` -> suffix of the method names (``"AdaRank.MAP"``, ``"AdaRank.MAP (continuing)"``)
VARIANTS = {"printed": "", "continuing": " (continuing)"}


@dataclass
class Experiment:
    """One data set of the paper's experiments, ready for `run_protocol`."""

    name: str
    data: RankingData
    bm25: int
    rel_threshold: int
    artifact: str
    note: str  # data used, for captions (real / substitute)


def _reindexed(d: RankingData) -> RankingData:
    """The same queries with ``qid = 0..n-1`` (a test query's qid is then its position in the data)."""
    return RankingData(d.X, d.y, d.qptr, qid=np.arange(d.n_queries), feature_names=d.feature_names,
                       provenance=d.provenance)


def mslr_sample_dpn() -> Experiment:
    """All 86 queries of the MSLR sample (train + test of ``fetch("mslr-sample")``), grades 0/1/2-4 -> n/p/d.

    MAP counts only d as relevant (``rel_threshold=2``, as OHSUMED in the paper).
    """
    from lrank.data import fetch

    train, test = fetch("mslr-sample")
    d = RankingData.concat([train, test]).relabel(DPN, "AdaRank d/p/n: 0 -> n, 1 -> p, 2-4 -> d")
    return Experiment("MSLR sample", _reindexed(d), BM25_FEATURE["mslr"], 2, "adarank_fig2",
                      "real MSLR sample (train + test of the rankeval sample, grades 0/1/2-4 -> n/p/d) "
                      "as a substitute for OHSUMED")


def letor3(key: str) -> Experiment:
    """LETOR 3.0 OHSUMED or TD2003 (QueryLevelNorm): every query of fold 1's three files."""
    from lrank.data import fetch

    ds = fetch(key)
    parts = [ds.load(1, s) for s in ("train", "valid", "test")]
    d = _reindexed(RankingData.concat(parts))
    kind = budgets.data_kind(parts[0])
    if key == "ohsumed":
        return Experiment("OHSUMED", d, BM25_FEATURE["letor3-ohsumed"], 2, "adarank_fig2",
                          f"{kind} LETOR 3.0 OHSUMED (QueryLevelNorm), all queries")
    return Experiment("TD2003", d, BM25_FEATURE["letor3-gov"], 1, "adarank_fig5",
                      f"{kind} LETOR 3.0 TD2003 (QueryLevelNorm), all queries")


def budget(experiment: str, profile: str) -> Any:
    """This notebook's budget of ``experiment`` in ``profile`` (`lrank.papers.budgets`)."""
    return budgets.budget(NB, experiment, profile)


def experiments(profile: str) -> tuple[list[Experiment], list[dict]]:
    """The experiments a profile runs, and the ones skipped for missing data (with the fetch command).

    ``"quick"``: the MSLR sample. ``"paper"`` and ``"rehearsal"``: OHSUMED (Fig. 2, 6-11) and TD2003
    (Fig. 5) where present; without OHSUMED the MSLR sample stands in for it (the rehearsal refuses to
    skip: `lrank.papers.budgets.require_nothing_skipped`). Nothing is downloaded here.
    """
    from lrank.data.fetch import status

    if profile == "quick":
        return [mslr_sample_dpn()], []
    present = dict(zip(status()["dataset"], status()["status"]))
    out, skipped = [], []
    for key, fig in [("ohsumed", "Fig. 2, 6-11"), ("td2003", "Fig. 5")]:
        if present.get(key) == "present":
            out.append(letor3(key))
        else:
            skipped.append({"experiment": f"{key} ({fig})", "reason": "data absent",
                            "fetch command": f"python -m lrank fetch {key}"})
    budgets.require_nothing_skipped(profile, skipped, NB)
    if not any(e.name == "OHSUMED" for e in out):
        out.insert(0, mslr_sample_dpn())
    return out, skipped


# ----------------------------------------------------------------------------------------- protocol
def rankboost(n_estimators: int, random_state: int) -> Any:
    """The RankBoost baseline (`lrank.models.rankboost.RankBoost`, binary stumps)."""
    from lrank.models.rankboost import RankBoost

    params = RankBoost().get_params()
    kw = {("n_estimators" if "n_estimators" in params else "n_rounds"): n_estimators}
    if "random_state" in params:
        kw["random_state"] = random_state
    return RankBoost(**kw)


def _select_round(model: Any, valid: RankingData, opts: dict) -> int:
    """The round with the best validation MAP (`lrank.experiments.select_rounds`; ties: earliest)."""
    rows = [("valid", r, "map", float(evaluate(valid.y, s, valid.qptr, ["map"], **opts)["map"]))
            for r, s in enumerate(model.staged_predict(valid.X), start=1)]
    if not rows:
        return 0
    curves = select_rounds(pd.DataFrame(rows, columns=["split", "round", "metric", "value"]), "map")
    return int(curves.loc[curves["selected"], "round"].iloc[0])


def _scores_at(model: Any, X: np.ndarray, rounds: int) -> np.ndarray:
    if rounds == 0:
        return np.zeros(X.shape[0])
    for r, s in enumerate(model.staged_predict(X), start=1):
        if r == rounds:
            return np.asarray(s, dtype=np.float64)
    raise ValueError(f"model has fewer than {rounds} rounds")


def _pair_errors(te: RankingData, scores: np.ndarray) -> list[tuple]:
    """Per test query and pair kind: (query, kind, wrong, total); a tie counts as an error (Fig. 6)."""
    hi, lo, _ = te.pairs("none")
    q_of = te.query_index()[hi]
    out = []
    for kind, (a, b) in PAIR_KINDS.items():
        sel = (te.y[hi] == a) & (te.y[lo] == b)
        wrong = np.bincount(q_of[sel], weights=(scores[hi[sel]] <= scores[lo[sel]]), minlength=te.n_queries)
        total = np.bincount(q_of[sel], minlength=te.n_queries)
        out.extend((int(te.qid[q]), kind, int(wrong[q]), int(total[q])) for q in range(te.n_queries))
    return out


@dataclass
class ProtocolResult:
    """Per-query outcomes of `run_protocol` (every query is tested once, in one fold)."""

    experiment: Experiment
    per_query: pd.DataFrame  # fold, query, split, method, metric, value
    pair_errors: pd.DataFrame  # fold, query, method, kind, wrong, total
    rounds: pd.DataFrame  # fold, method, T (rounds used for the test scores)
    n_pairs: np.ndarray  # critical pairs of every query (position = qid)
    folds: list = field(default_factory=list)  # the folds of the first repetition (Fig. 7, Fig. 11)
    models: list = field(default_factory=list)  # (fold, method, fitted AdaRank)
    curves: pd.DataFrame | None = None  # fold, variant, query, peak_round, map_round1, map_peak (Fig. 11)
    lc_models: list = field(default_factory=list)  # (fold, variant, AdaRank with every round)
    repeats: int = 1

    def values(self, method: str, metric: str, split: str = "test") -> pd.Series:
        """Per-query values (indexed by query; training values averaged over the folds that train on it)."""
        pq = self.per_query
        sel = pq[(pq["method"] == method) & (pq["metric"] == metric) & (pq["split"] == split)]
        return sel.groupby("query")["value"].mean()


def ada_name(label: str, variant: str = "printed", scaling: str = "minmax") -> str:
    """Method name of an AdaRank run: ``"AdaRank.MAP"``, ``"AdaRank.MAP (continuing)"``,
    ``"AdaRank.MAP [raw]"``."""
    return label + VARIANTS[variant] + ("" if scaling == "minmax" else f" [{SCALING_LABEL[scaling]}]")


def _protocol_fold(i: int, fold: Any, bm25: int, opts: dict, seed: int, rankboost_rounds: int,
                   ranksvm_max_pairs: int | None, scalings: tuple[str, ...], metrics: list[str],
                   lc_rounds: int | None) -> tuple:
    """One fold of `run_protocol`: its per-query, pair-error, rounds rows, fitted AdaRanks, Fig. 11 rows
    and learning-curve models."""
    tr, va, te = fold
    pq: list[tuple] = []
    pe: list[tuple] = []
    rounds: list[tuple] = []
    models: list[tuple] = []
    lc: list[tuple] = []
    lc_models: list[tuple] = []

    # within-query shuffles of the test documents (queries stay in order): random tie-breaking, TIE_DRAWS
    # times
    rng = np.random.default_rng([seed, i])
    shuffles = [np.lexsort((rng.random(te.n_docs), te.query_index())) for _ in range(TIE_DRAWS)]

    def add_test(method: str, s: np.ndarray) -> None:
        for split, ties in (("test", "stable"), *((f"test-{t}", t) for t in TIE_ORDERS)):
            if ties == "random":
                draws = [evaluate(te.y[o], s[o], te.qptr, metrics, per_query=True, **opts) for o in shuffles]
                vals = {m: np.mean([d[m] for d in draws], axis=0) for m in metrics}
            else:
                vals = evaluate(te.y, s, te.qptr, metrics, per_query=True, ties=ties, **opts)
            for m in metrics:
                pq.extend((i, int(q), split, method, m, float(v)) for q, v in zip(te.qid, vals[m]))
        pe.extend((i, q, method, k, w, t) for q, k, w, t in _pair_errors(te, s))

    def add_ada(name: str, model: AdaRank) -> None:
        models.append((i, name, model))
        rounds.append((i, name, model.n_iter_))
        add_test(name, model.predict(te.X))
        tv = evaluate(tr.y, model.predict(tr.X), tr.qptr, ["map", "ndcg@5"], per_query=True, **opts)
        for m in ("map", "ndcg@5"):
            pq.extend((i, int(q), "train", name, m, float(v)) for q, v in zip(tr.qid, tv[m]))

    add_test("BM25", te.X[:, bm25].astype(np.float64))
    svm = RankSVM(max_pairs_per_query=ranksvm_max_pairs, random_state=seed, metric_options=opts)
    svm.fit(tr, eval_set=va)
    add_test("Ranking SVM", svm.predict(te.X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rb = rankboost(rankboost_rounds, seed).fit(tr)
    t_rb = _select_round(rb, va, opts)
    rounds.append((i, "RankBoost", t_rb))
    add_test("RankBoost", _scores_at(rb, te.X, t_rb))
    for label, metric in ADARANKS.items():
        for scaling in scalings:
            add_ada(ada_name(label, "printed", scaling),
                    AdaRank(metric=metric, scaling=scaling, metric_options=opts).fit(tr))
        add_ada(ada_name(label, "continuing"),
                AdaRank(metric=metric, metric_options=opts, **CONTINUING).fit(tr))
    for variant in VARIANTS if lc_rounds else ():
        kw = {"max_consecutive": CONTINUING["max_consecutive"]} if variant == "continuing" else {}
        model = AdaRank(metric="map", n_estimators=lc_rounds, early_stopping_rounds=None,
                        metric_options=opts, **kw).fit(tr, eval_set=va)
        lc_models.append((i, variant, model))
        peak = int(np.argmax(model.history_["valid_map"].to_numpy())) + 1  # earliest best round
        at = {t: evaluate(te.y, model.predict(te.X, num_iteration=t), te.qptr, ["map"], per_query=True,
                          **opts)["map"] for t in (1, peak)}
        lc.extend((i, variant, int(q), peak, float(a), float(b)) for q, a, b in zip(te.qid, at[1], at[peak]))
    return pq, pe, rounds, models, lc, lc_models


def run_protocol(exp: Experiment, *, n_folds: int = 5, seed: int = 0, rankboost_rounds: int = 100,
                 ranksvm_max_pairs: int | None = 300,
                 scalings: tuple[str, ...] = ("minmax", "standard", "none"),
                 metrics: list[str] | None = None, lc_rounds: int | None = None,
                 fold_offset: int = 0, checkpoint: bool | str | None = None,
                 verbose: bool | None = None) -> ProtocolResult:
    """Query-level ``n_folds``-fold CV (3 train / 1 validation / 1 test rotating for 5) of every method.

    BM25 is the data's BM25 column; Ranking SVM chooses C on the validation queries; RankBoost's round is
    chosen on validation MAP; AdaRank.MAP / AdaRank.NDCG use the paper's T (stop when the training measure
    stops improving, Sec. 4.1; the validation queries are not used) with min-max scaled weak rankers, again
    as the `CONTINUING` variant (a labelled deviation), and with every other scaling in ``scalings``
    (methods ``"AdaRank.MAP [raw]"`` ...). With ``lc_rounds``, Fig. 11's learning curve of AdaRank.MAP
    (printed and continuing) runs ``lc_rounds`` rounds on each fold's training queries; its peak round is
    chosen on the validation queries and the test MAP at that round and at round 1 is stored in
    ``curves``. ``fold_offset`` numbers the folds (repetitions of `run_repeated` use distinct numbers).
    Each fold is one job; ``checkpoint`` keeps each finished one (with its fitted models), so that the
    same call after an interruption runs only the rest, with identical results (default: on for the paper
    profile only; see `lrank.experiments.jobs`); ``verbose``: a bar (the same default).
    """
    from lrank.experiments.jobs import Job, run_jobs

    metrics = list(metrics or METRICS)
    d, thr = exp.data, exp.rel_threshold
    opts = {"rel_threshold": thr}
    folds = d.kfold(n_folds, random_state=seed, validation=True)
    args = (exp.bm25, opts, seed, rankboost_rounds, ranksvm_max_pairs, tuple(scalings), metrics, lc_rounds)
    jobs = [Job({"experiment": exp.name, "fold": fold_offset + j, "seed": seed},
                (fold_offset + j, fold, *args)) for j, fold in enumerate(folds)]
    outs = run_jobs(_protocol_fold, jobs, label="adarank_protocol", checkpoint=checkpoint, verbose=verbose,
                    desc=f"AdaRank protocol ({exp.name})")
    pq, pe, rounds, models, lc, lc_models = ([row for out in outs for row in out[j]] for j in range(6))
    return ProtocolResult(
        exp,
        pd.DataFrame(pq, columns=["fold", "query", "split", "method", "metric", "value"]),
        pd.DataFrame(pe, columns=["fold", "query", "method", "kind", "wrong", "total"]),
        pd.DataFrame(rounds, columns=["fold", "method", "T"]),
        d.n_critical_pairs(), folds, models,
        pd.DataFrame(lc, columns=["fold", "variant", "query", "peak_round", "map_round1", "map_peak"]),
        lc_models)


def file_order(data: RankingData, metric: str = "ndcg@10", draws: int = 200, seed: int = 0,
               rel_threshold: int = 1) -> pd.DataFrame:
    """Does the order of the documents within each query carry label information? Per query: ``metric`` of
    the ranking by position in the file (the order that breaks ties everywhere in this notebook, as LETOR's
    evaluation script does) and its mean over ``draws`` uniformly random orders.

    Parameters
    ----------
    data : RankingData
        The documents, in their file order within each query.
    metric : str, default "ndcg@10"
        An `lrank.metrics` name.
    draws : int, default 200
        Random orders per query; their mean is the ``"random order"`` column.
    seed : int, default 0
        Seeds the random orders.
    rel_threshold : int, default 1
        The lowest relevant label (binary measures such as MAP).

    Returns
    -------
    DataFrame
        Indexed by query id, columns ``"file order"`` and ``"random order"``.
    """
    position = -(np.arange(data.n_docs) - np.repeat(data.qptr[:-1], data.group)).astype(np.float64)
    opts = {"rel_threshold": rel_threshold}
    file_v = evaluate(data.y, position, data.qptr, [metric], per_query=True, **opts)[metric]
    rng = np.random.default_rng(seed)
    rand_v = np.mean([evaluate(data.y, rng.random(data.n_docs), data.qptr, [metric], per_query=True,
                               **opts)[metric] for _ in range(draws)], axis=0)
    out = pd.DataFrame({"file order": file_v, "random order": rand_v}, index=pd.Index(data.qid, name="query"))
    out.attrs["metric"] = metric
    return out


def run_repeated(exp: Experiment, *, seed: int = 0, repeats: int = 1, n_folds: int = 5,
                 **kw: Any) -> ProtocolResult:
    """`run_protocol` ``repeats`` times with fold seeds ``seed * repeats + r`` (r = 0 .. repeats-1), pooled.

    Repeated cross-validation: every query is a test query once per repetition; a query's test value is
    then its mean over the repetitions (`ProtocolResult.values`), so each claim is still tested once over
    the queries (n = queries, not queries x repetitions). The seeds of two values of ``seed`` never
    overlap. Folds are numbered ``r * n_folds + j``; ``folds`` holds the first repetition's.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats!r}")
    parts = [run_protocol(exp, n_folds=n_folds, seed=seed * repeats + r, fold_offset=r * n_folds, **kw)
             for r in range(repeats)]
    first = parts[0]
    cat = lambda attr: pd.concat([getattr(p, attr) for p in parts], ignore_index=True)  # noqa: E731
    return ProtocolResult(exp, cat("per_query"), cat("pair_errors"), cat("rounds"), first.n_pairs,
                          first.folds,
                          [m for p in parts for m in p.models], cat("curves"),
                          [m for p in parts for m in p.lc_models], repeats)


# ------------------------------------------------------------------------------------------ tables
def fig2_table(res: ProtocolResult, methods: list[str] | None = None) -> pd.DataFrame:
    """Fig. 2-5: mean over the test folds of each fold's mean test measure (methods x MAP, NDCG@1..10)."""
    t = res.per_query[res.per_query["split"] == "test"]
    fold_means = t.groupby(["method", "metric", "fold"])["value"].mean()
    tab = fold_means.groupby(["method", "metric"]).mean().unstack("metric")
    return tab.loc[methods or METHODS, [m for m in METRICS if m in tab.columns]]


def fig6_table(res: ProtocolResult, methods: list[str] | None = None) -> pd.DataFrame:
    """Fig. 6: share of the test pairs of each kind ordered wrongly (pooled over folds; ties are errors)."""
    g = res.pair_errors.groupby(["method", "kind"])[["wrong", "total"]].sum()
    tab = (g["wrong"] / g["total"].where(g["total"] > 0)).unstack("kind")
    return tab.loc[methods or ["Ranking SVM", "RankBoost", *ADARANKS], list(PAIR_KINDS)]


def fig7_counts(res: ProtocolResult, fold: int = 0) -> pd.Series:
    """Fig. 7: training queries of trial ``fold + 1`` by number of document pairs."""
    q = res.folds[fold].train.qid
    return pd.Series(np.histogram(res.n_pairs[q], bins=GROUP_EDGES)[0], index=GROUP_NAMES, name="queries")


def pair_group(n_pairs: np.ndarray) -> pd.Categorical:
    """Fig. 7-8's group of each query ("0-1k" = 0..999 pairs, ...)."""
    return pd.cut(np.asarray(n_pairs), bins=GROUP_EDGES, labels=GROUP_NAMES, right=False)


def fig8_table(res: ProtocolResult, ada: str = "AdaRank.MAP", base: str = "RankBoost") -> pd.DataFrame:
    """Fig. 8: mean test MAP difference ``ada - base`` per query group, and the number of test queries."""
    diff = res.values(ada, "map") - res.values(base, "map")
    grp = pair_group(res.n_pairs[diff.index.to_numpy()])
    by = diff.groupby(grp, observed=False)
    return pd.DataFrame({"MAP difference": by.mean(), "test queries": by.size()})


def fig910_table(res: ProtocolResult) -> pd.DataFrame:
    """Fig. 9-10: training MAP and NDCG@5 per trial (the first repetition's folds) of AdaRank.MAP and
    AdaRank.NDCG."""
    pq = res.per_query
    t = pq[(pq["split"] == "train") & pq["method"].isin(list(ADARANKS)) & (pq["fold"] < len(res.folds))]
    tab = t.groupby(["fold", "method", "metric"])["value"].mean().unstack(["metric", "method"])
    tab.index = pd.Index(tab.index + 1, name="trial")
    return tab.sort_index(axis=1)


# ------------------------------------------------------------------------------------------ claims
def _row(claim: str, a: pd.Series, b: pd.Series, what: str, **extra: Any) -> dict:
    a, b = a.align(b, join="inner")
    r = paired_comparison(a.to_numpy(), b.to_numpy())
    keys = ("n", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "p_value", "verdict")
    return {"claim": claim, "comparison": what, **extra, **{k: r[k] for k in keys}}


def claims_fig2(res: ProtocolResult, adas: list[str] | None = None,
                metrics: tuple[str, ...] = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")) -> pd.DataFrame:
    """Fig. 2-5: "AdaRank significantly outperforms BM25, Ranking SVM and RankBoost": per-query test
    measure of each AdaRank against each baseline, paired over the test queries (a - b > 0)."""
    rows = [_row("Fig. 2-5: AdaRank > baseline", res.values(a, m), res.values(b, m), f"{a} vs {b}", metric=m)
            for a in (adas or list(ADARANKS)) for b in BASELINES for m in metrics]
    return pd.DataFrame(rows)


def claims_fig6(res: ProtocolResult) -> pd.DataFrame:
    """Fig. 6: "AdaRank.MAP and AdaRank.NDCG make fewer errors for d-n and d-p": per-query error rate of
    the baseline minus AdaRank's, over the test queries that have pairs of that kind."""
    pe = res.pair_errors[res.pair_errors["total"] > 0]
    rate = pe.groupby(["method", "kind", "query"])[["wrong", "total"]].sum()  # pooled over repetitions
    rate = (rate["wrong"] / rate["total"]).sort_index()
    rows = []
    for a in ADARANKS:
        for b in ("Ranking SVM", "RankBoost"):
            for kind in ("d-n", "d-p"):
                rows.append(_row("Fig. 6: fewer errors than baseline", rate.loc[b, kind], rate.loc[a, kind],
                                 f"error({b}) - error({a})", metric=f"{kind} error rate"))
    return pd.DataFrame(rows)


def claims_fig8(res: ProtocolResult) -> pd.DataFrame:
    """Fig. 8: "AdaRank.MAP performs particularly better than RankBoost for queries with small numbers of
    document pairs (e.g. '0-1k', '1k-2k', '2k-3k')" (and "for AdaRank.NDCG, similar results"): test MAP,
    paired over the test queries with fewer than `FEW_PAIRS` pairs."""
    rows = []
    for a in ADARANKS:
        va, vb = res.values(a, "map"), res.values("RankBoost", "map")
        few = va.index[res.n_pairs[va.index.to_numpy()] < FEW_PAIRS]
        rows.append(_row(f"Fig. 8: AdaRank > RankBoost on queries with < {FEW_PAIRS} pairs", va.loc[few],
                         vb.loc[few], f"{a} vs RankBoost", metric="map"))
    return pd.DataFrame(rows)


def claims_fig910(res: ProtocolResult) -> pd.DataFrame:
    """Fig. 9-10: "AdaRank.MAP trained with MAP performs better in terms of MAP while AdaRank.NDCG trained
    with NDCG@5 performs better in terms of NDCG@5" on the training set: per query, the training measure
    averaged over the folds that train on it, paired."""
    return pd.DataFrame([
        _row("Fig. 9: training MAP higher when trained on MAP", res.values("AdaRank.MAP", "map", "train"),
             res.values("AdaRank.NDCG", "map", "train"), "AdaRank.MAP vs AdaRank.NDCG", metric="train map"),
        _row("Fig. 10: training NDCG@5 higher when trained on NDCG@5",
             res.values("AdaRank.NDCG", "ndcg@5", "train"), res.values("AdaRank.MAP", "ndcg@5", "train"),
             "AdaRank.NDCG vs AdaRank.MAP", metric="train ndcg@5"),
    ])


def learning_curve(res: ProtocolResult, n_estimators: int, fold: int = 0, **kw: Any) -> AdaRank:
    """Fig. 11: AdaRank.MAP on trial ``fold + 1``'s training queries, all ``n_estimators`` rounds."""
    opts = {"rel_threshold": res.experiment.rel_threshold}
    return AdaRank(metric="map", n_estimators=n_estimators, early_stopping_rounds=None, metric_options=opts,
                   **kw).fit(res.folds[fold].train)


def claim_fig11(res: ProtocolResult, model: AdaRank, fold: int = 0) -> pd.DataFrame:
    """Fig. 11: "the ranking accuracy of AdaRank.MAP steadily improves, as the training goes on, until it
    reaches the peak": per training query, MAP at the peak round against MAP after round 1."""
    tr = res.folds[fold].train
    opts = {"rel_threshold": res.experiment.rel_threshold}
    col = "train_map"
    peak = int(model.history_[col].idxmax())
    staged = list(model.staged_predict(tr.X))
    at = {t: pd.Series(evaluate(tr.y, staged[t - 1], tr.qptr, ["map"], per_query=True, **opts)["map"],
                       index=tr.qid) for t in (1, peak)}
    return pd.DataFrame([_row("Fig. 11: training MAP rises to a peak", at[peak], at[1],
                              "peak round vs round 1", metric="train map", peak_round=peak)])


def scaling_result(res: ProtocolResult) -> pd.DataFrame:
    """AdaRank's dependence on the scaling of the weak rankers' values (not in the paper): per-query test
    measure under each scaling against min-max, paired over the test queries."""
    rows = []
    for label, metric in ADARANKS.items():
        for sc in ("standardised", "raw"):
            other = f"{label} [{sc}]"
            if other in set(res.per_query["method"]):
                rows.append(_row("scaling", res.values(other, metric), res.values(label, metric),
                                 f"{other} vs {label} (min-max)", metric=metric))
    return pd.DataFrame(rows)


def verdict_summary(claims: pd.DataFrame) -> pd.DataFrame:
    """Per claim: how many comparisons are HELD / NOT HELD / UNDECIDED, and the smallest n."""
    c = claims.groupby(["claim", "verdict"]).size().unstack("verdict", fill_value=0)
    for v in ("HELD", "NOT HELD", "UNDECIDED"):
        if v not in c.columns:
            c[v] = 0
    c["n (queries)"] = claims.groupby("claim")["n"].min()
    return c[["HELD", "NOT HELD", "UNDECIDED", "n (queries)"]]


# ---------------------------------------------------------------------------------------- Theorem 1
def theorem1_report(models: list[AdaRank], tol: float = 1e-12) -> dict:
    """Theorem 1 over every fitted AdaRank: rounds, the rounds where the bound says something, violations.

    The bound ``1 - prod_t e^{-delta_min^t} sqrt(1 - varphi(t)^2)`` is *informative* in a round when it
    is above the smallest value the measure can take (0 for MAP and NDCG); ``delta_min < 0`` makes the
    factor exceed 1 and the bound can fall below 0, where "never violated" holds trivially. Also
    checked: the proof's step ``Z_t <= e^{-delta_min^t} sqrt(1 - varphi(t)^2) Z_{t-1}`` (``Z_0 = m``).
    """
    rounds = informative = factor_below_1 = delta_neg = violations = z_violations = 0
    min_slack = np.inf
    for model in models:
        h = model.history_
        E = h[[c for c in h.columns if c.startswith("train_")][0]].to_numpy()
        b = h["bound"].to_numpy()
        rounds += len(h)
        informative += int((b > 0).sum())
        factor_below_1 += int((h["bound_factor"] < 1).sum())
        delta_neg += int((h["delta_min"] < 0).sum())
        violations += int((E < b - tol).sum())
        if len(h):
            min_slack = min(min_slack, float((E - b).min()))
        Z = h["Z"].to_numpy()
        Z_prev = np.r_[len(model.train_queries_), Z[:-1]]  # Z_0 = m
        z_violations += int((Z > h["bound_factor"].to_numpy() * Z_prev * (1 + 1e-12)).sum())
    return {"runs": len(models), "rounds": rounds, "rounds_informative": informative,
            "rounds_factor_below_1": factor_below_1, "rounds_delta_min_negative": delta_neg,
            "violations": violations, "min_slack": float(min_slack), "z_step_violations": z_violations}


__all__ = [
    "ADARANKS", "BASELINES", "DPN", "FEW_PAIRS", "GROUP_EDGES", "GROUP_NAMES", "METHODS", "METRICS", "NB",
    "Experiment", "ProtocolResult", "claim_fig11", "claims_fig2", "claims_fig6", "claims_fig8",
    "claims_fig910", "experiments", "fig2_table", "fig6_table", "fig7_counts", "fig8_table", "fig910_table",
    "learning_curve", "letor3", "mslr_sample_dpn", "pair_group", "rankboost", "run_protocol",
    "scaling_result",
    "theorem1_report", "verdict_summary",
]
