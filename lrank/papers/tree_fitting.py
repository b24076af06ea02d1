"""Xia, Zhai & Wang, *Analysis of Regression Tree Fitting Algorithms in Learning to Rank* (notebook 04).

What only this paper needs, built on the library (`lrank.models.gbrt`, `lrank.data`, `lrank.metrics`,
`lrank.stats`):

* the paper's printed tables (`PAPER_TABLE1`, `PAPER_TABLES` for Tables 2-3) and their win counts
  (`paper_table_wins`);
* the data of the quick profile: all 86 queries of the real MSLR sample (train + test of
  ``fetch("mslr-sample")``) in query-level folds (`mslr_sample_folds`), the synthetic Yahoo!-shaped set
  (`yahoo_like_folds`) and the paper profile's MSLR-WEB10K / Yahoo! folds (`paper_folds`);
* the protocol runner of Tables 2-3 and Fig. 2 (`run_protocol`: SE / OLE x McRank / LambdaMART x
  leaves x learning rates x folds, in parallel through joblib), the tables (`results_table`,
  `table_2_3`), and the verdict helpers (`win_counts`, `claim_most_comparisons`,
  `query_level_comparison`);
* `root_split`, the first split a criterion picks (the theorems on random data), and
  `criterion_source`, the kernel lines that carry Eq. 3, 7 and 9/13.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from lrank.data.container import Fold, RankingData
from lrank.papers import budgets

NB = "04_tree_fitting"

METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "err")
LEAVES = (10, 20)
RATES = (0.06, 0.10, 0.12)
SYSTEMS = ("McRank", "LambdaMART")
CRITERIA = ("se", "ole")
#: the paper's tree settings (Sec. 4.2 / 5): width-first trees; what it does not state is ours
TREE_KW = {"growth": "breadth_first", "min_child_samples": 20}
#: the paper's LambdaMART lambdas (Burges' NDCG@10 lambdas, as its Example 3-4), said explicitly: the
#: library's own defaults are LightGBM's lambdarank (whole-list discount, pairs truncated at 30, normalised)
PAPER_LAMBDAS = {"ndcg_at": 10, "lambdarank_truncation_level": None, "lambdarank_norm": False}

#: rows of Tables 2-3, in the printed order
PAPER_ROWS = [(s, lv, lr) for s in SYSTEMS for lv in LEAVES for lr in RATES]
#: the paper's printed Tables 2 (Yahoo) and 3 (MSLR-WEB10K): per row [SE, OLE] for NDCG@1, 3, 10, ERR (%)
PAPER_TABLES: dict[str, list] = {
    "Yahoo": [[[71.32, 71.76], [71.47, 72.22], [77.97, 78.52], [45.44, 45.71]],
              [[71.38, 71.73], [71.82, 72.37], [78.25, 78.67], [45.52, 45.77]],
              [[71.67, 71.87], [71.96, 72.52], [78.33, 78.77], [45.59, 45.79]],
              [[71.52, 71.9], [71.8, 72.6], [78.26, 78.84], [45.54, 45.83]],
              [[71.65, 72.03], [72.14, 72.77], [78.5, 79.0], [45.64, 45.88]],
              [[71.8, 72.1], [72.23, 72.79], [78.58, 78.99], [45.66, 45.89]],
              [[71.15, 71.62], [71.6, 71.94], [77.82, 78.15], [45.66, 45.8]],
              [[71.29, 71.81], [71.76, 72.11], [77.96, 78.29], [45.72, 45.9]],
              [[71.3, 71.76], [71.76, 72.19], [77.93, 78.34], [45.67, 45.87]],
              [[71.51, 71.75], [72.02, 72.25], [78.13, 78.4], [45.77, 45.92]],
              [[71.37, 72.1], [71.92, 72.56], [78.04, 78.58], [45.72, 46.02]],
              [[71.44, 71.76], [71.91, 72.39], [78.06, 78.57], [45.71, 45.96]]],
    "MSLR-WEB10K": [[[47.43, 47.14], [46.14, 46.46], [48.6, 49.17], [35.9, 36.13]],
                    [[47.49, 47.69], [46.41, 46.79], [49.0, 49.47], [36.13, 36.32]],
                    [[47.42, 47.67], [46.5, 46.78], [49.02, 49.51], [36.13, 36.3]],
                    [[47.69, 47.94], [46.44, 47.06], [49.07, 49.67], [36.09, 36.45]],
                    [[47.52, 48.04], [46.76, 47.24], [49.36, 49.8], [36.26, 36.54]],
                    [[47.87, 47.89], [46.86, 47.12], [49.51, 49.68], [36.34, 36.45]],
                    [[47.42, 47.98], [46.21, 46.54], [48.22, 48.7], [36.44, 36.68]],
                    [[47.79, 47.64], [46.55, 46.57], [48.57, 48.85], [36.54, 36.71]],
                    [[47.45, 47.79], [46.32, 46.62], [48.54, 48.94], [36.42, 36.67]],
                    [[48.01, 48.19], [46.52, 46.87], [48.78, 49.13], [36.74, 36.88]],
                    [[47.99, 48.07], [46.66, 46.79], [48.95, 49.1], [36.72, 36.81]],
                    [[47.63, 47.67], [46.69, 46.51], [49.02, 49.03], [36.7, 36.61]]],
}
#: the text's claim: OLE ahead by at least 0.1 point in 68 (McRank) and 56 (LambdaMART) of 72 comparisons
PAPER_TEXT_WINS = {"McRank": 68, "LambdaMART": 56}
PAPER_TEXT_COMPARISONS = 72
#: the paper's Table 1, as printed
PAPER_TABLE1 = pd.DataFrame([
    ("paper: Yahoo", "20K", "473K", 23, 519), ("paper: Micro-10K", "6K", "723K", 120, 136),
    ("paper: McRank [15]", "10-26K", "474-1741K", "18-88", "367-619"),
    ("paper: lambda-MART [24]", "31K", "4154K", 134, 416), ("paper: Ohsumed", 106, "16K", 150, 45),
    ("paper: letor 4.0", "2.4K", "85K", 34, 46)], columns=["data", "#Query", "#Doc.", "#D./#Q.", "#Feat."])
#: the paper's reported objective-loss reduction of OLE at the last iteration (Sec. 5), in %
PAPER_OBJECTIVE_REDUCTION = (0.32, 1.0)


# ------------------------------------------------------------------------------------------ data
def mslr_sample_folds(k: int = 5, random_state: int | None = 0, validation: bool = False) -> list[Fold]:
    """All queries of the real MSLR sample (train + test of ``fetch("mslr-sample")``) in ``k``
    query-level folds; ``validation=False`` trains on ``k - 1`` groups (the paper reports the last
    iteration, no validation set is needed), ``True`` gives 3/1/1 for ``k = 5``."""
    from lrank.data import fetch

    train, test = fetch("mslr-sample")
    return RankingData.concat([train, test]).kfold(k, random_state=random_state, validation=validation)


def yahoo_like_folds(k: int = 5, random_state: int = 0, n_queries: int = 150) -> list[Fold]:
    """The synthetic Yahoo!-shaped stand-in (``make_letor_like``: about 23 documents per query,
    5 grades, 60 features, 30% missing values) in ``k`` query-level folds without validation."""
    from lrank.data.generators import make_letor_like

    data = make_letor_like(n_queries=n_queries, docs_per_query=(10, 36), n_features=60, n_grades=5,
                           missing_rate=0.3, random_state=random_state)
    return data.kfold(k, random_state=random_state, validation=False)


def paper_folds(name: str, random_state: int = 0) -> list:
    """The paper profile's folds, validation dropped (the paper reports the last iteration). Raises when
    the data is not present.

    ``"mslr-web10k"``: the five official folds, left on disk until a job loads one
    (`lrank.data.fetch.FoldFiles`: one MSLR-WEB10K fold per worker in memory, not five).
    ``"yahoo-ltr"``: set 1 only ("here we use the bigger one (set 1)"), in three splits ("released with
    only one split of training, validating, and testing set, and we add an extra two splits"): the
    official train / test, then two splits of all set-1 queries drawn with ``random_state`` with the
    official numbers of training and test queries (the paper does not say how it drew them; this is our
    reading). Set 2 is never used.
    """
    from lrank.data import fetch

    data = fetch(name)
    if name != "yahoo-ltr":
        return [data.fold_files(k, ("train", "test")) for k in data.folds]
    tr, va, te = data.fold(1)
    pooled = RankingData.concat([tr, va, te])
    pooled.provenance.update(tr.provenance)
    folds = [Fold(tr, None, te)]
    rng = np.random.default_rng(random_state)
    for _ in range(2):
        order = rng.permutation(pooled.n_queries)
        folds.append(Fold(pooled.subset(np.sort(order[:tr.n_queries])), None,
                          pooled.subset(np.sort(order[tr.n_queries:tr.n_queries + te.n_queries]))))
    return folds


def _kind(fold: Any) -> str:
    """"stand-in" or "real" for a fold, without loading one left on disk."""
    from lrank.data.fetch import FoldFiles, _spec, is_standin

    if isinstance(fold, FoldFiles):
        return "stand-in" if is_standin(_spec(fold.dataset)) else "real"
    return budgets.data_kind(fold.train)


def budget(experiment: str, profile: str) -> Any:
    """This notebook's budget of ``experiment`` in ``profile`` (`lrank.papers.budgets`)."""
    return budgets.budget(NB, experiment, profile)


def profile_data(profile: str, seed: int = 0) -> tuple[dict, dict, dict, list]:
    """The data of Tables 1-3 and Fig. 2 in ``profile``: ``(datasets, what, label, skipped)``.

    ``datasets``: name -> folds; ``what``: name -> description for the captions; ``label``: name ->
    ``"MSLR (real)"``-style short label; ``skipped``: ``(name, fetch command, why)`` of the paper profile's
    absent downloads (the rehearsal refuses to skip). ``"quick"``: all 86 MSLR-sample queries and the
    synthetic Yahoo!-shaped set, 5 folds each; ``"paper"`` / ``"rehearsal"``: MSLR-WEB10K's five folds and
    Yahoo! set 1's three splits (`paper_folds`), real or stand-in.
    """
    if profile == "quick":
        datasets = {"MSLR": mslr_sample_folds(5, random_state=seed), "Yahoo": yahoo_like_folds(5, seed)}
        what = {"MSLR": "MSLR sample (real: all 86 queries of the first 5,000 lines of WEB10K Fold1 train + "
                        "test), 5 query-level folds",
                "Yahoo": "synthetic Yahoo!-shaped set (make_letor_like, 150 queries, 60 features), 5 folds"}
        return datasets, what, {"MSLR": "MSLR (real)", "Yahoo": "Yahoo (synthetic)"}, []
    datasets, what, label, skipped = {}, {}, {}, []
    sets = (("MSLR", "mslr-web10k", "MSLR-WEB10K, 5 folds"),
            ("Yahoo", "yahoo-ltr", "Yahoo! LTR set 1, the official split and two more"))
    for dname, fetch_name, text in sets:
        try:
            datasets[dname] = paper_folds(fetch_name, seed)
        except Exception as err:  # noqa: BLE001 - a missing download: skip it and say how to get it
            skipped.append((dname, f"python -m lrank fetch {fetch_name}", str(err).splitlines()[0][:120]))
            continue
        kind = _kind(datasets[dname][0])
        what[dname], label[dname] = f"{text} ({kind})", f"{dname} ({kind})"
    budgets.require_nothing_skipped(profile, {d: f"`{cmd}` ({why})" for d, cmd, why in skipped}, NB)
    return datasets, what, label, skipped


def dataset_stats(folds: Sequence[Fold], name: str) -> dict:
    """Table 1's columns for the documents of the folds' test sets (each query is tested once); folds
    left on disk are loaded one at a time."""
    from lrank.data.fetch import as_fold

    docs = qs = n_features = 0
    for f in folds:
        test = as_fold(f).test
        docs, qs, n_features = docs + test.n_docs, qs + test.n_queries, test.n_features
    return {"data": name, "#Query": int(qs), "#Doc.": int(docs), "#D./#Q.": docs / qs,
            "#Feat.": int(n_features)}


# --------------------------------------------------------------------------------- theorems
def root_split(codes: np.ndarray, grad: np.ndarray, hess: np.ndarray, criterion: str,
               pairs: tuple | None = None, min_child_samples: int = 5) -> tuple[int, int]:
    """The ``(feature, bin)`` of the first split a two-leaf `RegressionTree` picks under ``criterion``."""
    from lrank.weak.tree import RegressionTree

    t = RegressionTree(num_leaves=2, min_child_samples=min_child_samples, min_child_weight=1e-9,
                       criterion=criterion).fit_gradients(codes, grad, hess, pairs=pairs)
    return int(t.feature_[0]), int(t.bin_[0])


def lambdamart_derivatives(y: np.ndarray, qptr: np.ndarray, scores: np.ndarray, ndcg_at: int = 10
                           ) -> tuple[np.ndarray, np.ndarray, tuple]:
    """LambdaMART's ``(L', L'', pairs)`` at ``scores``: ``-lambda``, the per-document ``w`` and the pair
    list with the pairwise second derivatives (what ``LambdaMART(criterion="ole")`` fits a tree to)."""
    from lrank._kernels.lambdas import lambdamart_gradients

    lam, w, pairs = lambdamart_gradients(np.asarray(y, dtype=np.int32), np.asarray(qptr, dtype=np.int64),
                                         np.ascontiguousarray(scores, dtype=np.float64), k=ndcg_at,
                                         with_pairs=True)
    return -lam, w, pairs


def criterion_source() -> str:
    """The kernel lines that carry Eq. 3 (SE), 7 (WSE) and 9/13 (RWSE/OLE), and OLE's exact pairwise
    second derivative (the pairs inside a node cancel, Example 3-4)."""
    from lrank._kernels import trees

    score = inspect.getsource(trees._score.py_func)
    src = inspect.getsource(trees._feature_best.py_func).splitlines()
    lines = [ln for ln in src if "use_pairs" in ln or "2.0 *" in ln or "_score(crit" in ln]
    return score + "\n".join(lines)


# ------------------------------------------------------------------------------- the protocol
def _fit_one(key: tuple, fold: Fold, n_estimators: int, metrics: Sequence[str]) -> tuple[list, list]:
    from lrank.data.fetch import as_fold
    from lrank.metrics import evaluate
    from lrank.models.gbrt import LambdaMART, McRank

    dname, system, leaves, lr, crit, k = key
    fold = as_fold(fold)  # a fold left on disk is loaded here, in the worker, and let go afterwards
    cls = {"McRank": McRank, "LambdaMART": LambdaMART}[system]
    est = cls(n_estimators=n_estimators, learning_rate=lr, num_leaves=leaves, criterion=crit, **TREE_KW,
              **(PAPER_LAMBDAS if system == "LambdaMART" else {}))
    est.fit(fold.train)
    te = fold.test
    curve = []
    for r, s in enumerate(est.staged_predict(te.X), start=1):
        vals = evaluate(te.y, s, te.qptr, list(metrics))
        curve.extend((*key, r, m, 100.0 * float(vals[m])) for m in metrics)
    per_q = evaluate(te.y, est.predict(te.X), te.qptr, list(metrics), per_query=True)
    qids = np.asarray(te.qid)
    queries = [(*key, f"{k}:{qids[q]}", m, 100.0 * float(per_q[m][q])) for m in metrics
               for q in range(te.n_queries)]
    return curve, queries


def run_protocol(datasets: Mapping[str, Sequence[Fold]], n_estimators: Mapping[str, int],
                 leaves: Sequence[int] = LEAVES, rates: Sequence[float] = RATES,
                 criteria: Sequence[str] = CRITERIA, systems: Sequence[str] = SYSTEMS,
                 metrics: Sequence[str] = METRICS, n_jobs: int = 1, checkpoint: bool | str | None = None,
                 verbose: bool | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables 2-3 and Fig. 2: every (data, system, leaves, learning rate, criterion, fold) fitted once.

    Returns ``curves`` (test metric in % after each iteration, mean over the fold's queries; columns
    ``data, system, leaves, lr, criterion, fold, round, metric, value``) and ``queries`` (test metric in %
    of every query at the last iteration, the paper's "converged" model; ``query`` instead of
    ``round``). Jobs run through joblib (``n_jobs``); results do not depend on it. ``checkpoint`` keeps
    each finished fit, so that the same call after an interruption runs only the rest, with identical
    results (default: on for the paper profile only; see `lrank.experiments.jobs`); ``verbose``: a bar
    (the same default).
    """
    from lrank.experiments.jobs import Job, run_jobs

    keys = ["data", "system", "leaves", "lr", "criterion", "fold"]
    jobs = []
    for d, folds in datasets.items():
        for key in itertools.product([d], systems, leaves, rates, criteria, range(len(folds))):
            jobs.append(Job(dict(zip(keys, key)), (key, folds[key[-1]], int(n_estimators[key[1]]), metrics)))
    out = run_jobs(_fit_one, jobs, label="tree_fitting", checkpoint=checkpoint, n_jobs=n_jobs,
                   verbose=verbose, desc="tree fitting")
    curves = pd.DataFrame([row for c, _ in out for row in c], columns=[*keys, "round", "metric", "value"])
    queries = pd.DataFrame([row for _, q in out for row in q], columns=[*keys, "query", "metric", "value"])
    return curves, queries


def results_table(queries: pd.DataFrame) -> pd.DataFrame:
    """Per (data, system, leaves, lr, metric): the mean over all test queries of every fold (%) for SE
    and OLE and ``OLE - SE``."""
    t = (queries.groupby(["data", "system", "leaves", "lr", "metric", "criterion"])["value"].mean()
         .unstack("criterion"))
    t["OLE - SE"] = t["ole"] - t["se"]
    return t


def table_2_3(last: pd.DataFrame, dname: str, paper_key: str | None) -> pd.DataFrame:
    """One of Tables 2-3: ``SE/OLE`` per configuration and metric, beside the paper's printed values."""
    part = last.loc[dname].reset_index()
    part["SE / OLE"] = [f"{a:.2f}/{b:.2f}" for a, b in zip(part["se"], part["ole"])]
    t = part.pivot_table(index=["system", "leaves", "lr"], columns="metric", values="SE / OLE",
                         aggfunc="first")[list(METRICS)]
    t.columns.name = None
    if paper_key is not None:
        p = pd.DataFrame([[f"{a:.2f}/{b:.2f}" for a, b in row] for row in PAPER_TABLES[paper_key]],
                         index=pd.MultiIndex.from_tuples(PAPER_ROWS, names=["system", "leaves", "lr"]),
                         columns=[f"paper {m}" for m in METRICS])
        t = t.join(p)
    return t


# -------------------------------------------------------------------------------- verdicts
def paper_table_wins(threshold: float = 0.1) -> dict[str, int]:
    """Comparisons in the printed Tables 2-3 where OLE beats SE by at least ``threshold`` points."""
    half = len(PAPER_ROWS) // 2
    out = {}
    for i, s in enumerate(SYSTEMS):
        rows = slice(i * half, (i + 1) * half)
        out[s] = sum(1 for key in PAPER_TABLES for row in PAPER_TABLES[key][rows] for a, b in row
                     if round(b - a, 2) >= threshold)
    return out


def win_counts(last: pd.DataFrame, threshold: float = 0.1) -> pd.DataFrame:
    """Per system (over the data sets present): comparisons, OLE ahead by ``>= threshold``, OLE ahead,
    OLE behind."""
    d = last["OLE - SE"]
    g = d.groupby(level="system")
    return pd.DataFrame({"comparisons": g.size(), f"OLE >= SE + {threshold}": (d >= threshold).groupby(
        level="system").sum(), "OLE > SE": (d > 0).groupby(level="system").sum(),
        "OLE < SE": (d < 0).groupby(level="system").sum()}).astype(int)


def claim_most_comparisons(wins: int, comparisons: int, alpha: float = 0.05) -> dict:
    """The text's claim as written, "OLE is better than SE by at least 0.1 point in most comparisons":
    an exact two-sided binomial (sign) test of ``wins`` of ``comparisons`` against one half. HELD when
    significantly more than half, NOT HELD when significantly fewer, else UNDECIDED. The comparisons
    share queries, so they are not independent: the test is optimistic (see `query_level_comparison`)."""
    from scipy.stats import binomtest

    from lrank.stats import verdict

    p = float(binomtest(int(wins), int(comparisons), 0.5).pvalue) if comparisons else 1.0
    return {"n": int(comparisons), "wins": int(wins), "share": wins / comparisons if comparisons else np.nan,
            "p_value": p, "verdict": verdict(p, 2 * wins > comparisons, alpha)}


def query_level_comparison(queries: pd.DataFrame, dname: str, system: str, alpha: float = 0.05) -> dict:
    """Is OLE better than SE per query? Each test query's score is its mean over the configurations
    (leaves x learning rates) and metrics; paired Wilcoxon + bootstrap interval over the queries
    (`lrank.stats.paired_comparison`)."""
    from lrank.stats import paired_comparison

    part = queries[(queries["data"] == dname) & (queries["system"] == system)]
    per_q = part.groupby(["query", "criterion"])["value"].mean().unstack("criterion")
    out = paired_comparison(per_q["ole"].to_numpy(), per_q["se"].to_numpy(), alpha=alpha)
    return {"data": dname, "system": system, **out}


def objective_comparison(train: Any, n_estimators: Mapping[str, int], learning_rate: float = 0.10,
                         num_leaves: int = 10) -> pd.DataFrame:
    """The objective at the last iteration, per training query, SE against OLE (Sec. 5's "OLE leads to
    smaller objective losses ... about 0.32% - 1%"): McRank's log-loss (Eq. 5, mean over the query's
    documents) and, for LambdaMART, which has no explicit objective, its training NDCG@10 as a stand-in.
    ``train`` is a `RankingData`, or a fold (`Fold` or `lrank.data.fetch.FoldFiles`) whose training
    split is used. Returns one row per (objective, query) with columns ``se`` and ``ole``."""
    from lrank.data.fetch import as_fold
    from lrank.metrics import evaluate
    from lrank.models.gbrt import LambdaMART, McRank

    if not isinstance(train, RankingData):
        train = as_fold(train).train

    q_of_doc = np.repeat(np.arange(train.n_queries), np.diff(train.qptr))
    rows = {}
    for crit in CRITERIA:
        kw = dict(learning_rate=learning_rate, num_leaves=num_leaves, criterion=crit, **TREE_KW)
        mc = McRank(n_estimators=n_estimators["McRank"], **kw).fit(train)
        prob = mc.predict_proba(train.X)
        nll = -np.log(prob[np.arange(train.n_docs), train.y])
        rows[("McRank train log-loss", crit)] = np.bincount(q_of_doc, nll) / np.diff(train.qptr)
        lm = LambdaMART(n_estimators=n_estimators["LambdaMART"], **kw, **PAPER_LAMBDAS).fit(train)
        rows[("LambdaMART train NDCG@10", crit)] = evaluate(train.y, lm.predict(train.X), train.qptr,
                                                            ["ndcg@10"], per_query=True)["ndcg@10"]
    out = []
    for obj in ("McRank train log-loss", "LambdaMART train NDCG@10"):
        for q in range(train.n_queries):
            out.append({"objective": obj, "query": q, "se": float(rows[(obj, "se")][q]),
                        "ole": float(rows[(obj, "ole")][q])})
    return pd.DataFrame(out)
