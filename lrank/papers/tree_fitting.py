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
  `table_2_3`), the comparisons won (`win_counts`) and the training objective the trees minimise
  (`training_objective`, `lambdamart_objective`); the registry rows are in
  `lrank.papers.tree_fitting_claims`;
* `root_split`, the first split a criterion picks (the theorems on random data), and
  `criterion_source`, the kernel lines that carry Eq. 3, 7 and 9/13.
"""

from __future__ import annotations

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
#: How many 5-fold splits (fold seeds) a profile pools: each query is a test query once per split (and a
#: training query in 4 folds of each); its values are averaged over the splits before a test, so it still
#: counts once, and one reshuffle of the folds no longer decides a verdict (seed stability). The paper
#: profile runs MSLR-WEB10K's official folds.
FOLD_REPEATS = {"quick": 3, "paper": 1, "rehearsal": 1}
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


#: The one draw of the synthetic Yahoo!-shaped stand-in every notebook seed uses: like the real set it
#: stands for, it is one fixed data set, and the notebook's ``SEED`` reshuffles its folds, not its documents
#: (a verdict's seed stability then measures what a reshuffle of the folds does, as on the MSLR sample).
YAHOO_STANDIN_SEED = 0


def yahoo_like_folds(k: int = 5, random_state: int = 0, n_queries: int = 150,
                     fold_state: int | None = None) -> list[Fold]:
    """The synthetic Yahoo!-shaped stand-in (``make_letor_like``: about 23 documents per query,
    5 grades, 60 features, 30% missing values, drawn with ``random_state``) in ``k`` query-level folds
    without validation (split with ``fold_state``, default ``random_state``)."""
    from lrank.data.generators import make_letor_like

    data = make_letor_like(n_queries=n_queries, docs_per_query=(10, 36), n_features=60, n_grades=5,
                           missing_rate=0.3, random_state=random_state)
    return data.kfold(k, random_state=random_state if fold_state is None else fold_state, validation=False)


def fold_seeds(profile: str, seed: int) -> list[int]:
    """The fold seeds of ``profile`` for the notebook's ``SEED`` (`lrank.papers.budgets.fold_seeds` with
    `FOLD_REPEATS`)."""
    return budgets.fold_seeds(FOLD_REPEATS, profile, seed)


def splits_note(profile: str, seed: int) -> str:
    """How the profile's folds were drawn, for captions: ``"5 folds"`` or ``"5 folds under 3 fold seeds
    (0, 1, 2), each query's values averaged over the splits"``."""
    seeds = fold_seeds(profile, seed)
    if profile != "quick" or len(seeds) == 1:
        return "5 folds"
    return (f"5 folds under {len(seeds)} fold seeds ({', '.join(map(str, seeds))}), each query's values "
            "averaged over the splits")


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
        seeds = fold_seeds(profile, seed)
        datasets = {"MSLR": [f for s in seeds for f in mslr_sample_folds(5, random_state=s)],
                    "Yahoo": [f for s in seeds
                              for f in yahoo_like_folds(5, YAHOO_STANDIN_SEED, fold_state=s)]}
        folds = splits_note(profile, seed).split(", each")[0]
        what = {"MSLR": "MSLR sample (real: all 86 queries of the first 5,000 lines of WEB10K Fold1 train + "
                        f"test), {folds.replace('5 folds', '5 query-level folds')}",
                "Yahoo": "synthetic Yahoo!-shaped set (make_letor_like, 150 queries, 60 features, drawn "
                         f"once with random_state {YAHOO_STANDIN_SEED}), {folds}"}
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
    """Table 1's columns for the documents of the folds' test sets, each query counted once (under
    several splits a query is tested once per split); folds left on disk are loaded one at a time."""
    from lrank.data.fetch import as_fold

    per_query: dict = {}
    n_features = 0
    for f in folds:
        test = as_fold(f).test
        per_query.update(zip(np.asarray(test.qid).tolist(), np.diff(test.qptr).tolist()))
        n_features = test.n_features
    qs, docs = len(per_query), int(sum(per_query.values()))
    return {"data": name, "#Query": int(qs), "#Doc.": docs, "#D./#Q.": docs / qs, "#Feat.": int(n_features)}


# --------------------------------------------------------------------------------- theorems
def root_split(codes: np.ndarray, grad: np.ndarray, hess: np.ndarray, criterion: str,
               pairs: tuple | None = None, min_child_samples: int = 5) -> tuple[int, int]:
    """The ``(feature, bin)`` of the first split a two-leaf `RegressionTree` picks under ``criterion``."""
    from lrank.trees import RegressionTree

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
    """The kernel lines that carry Eq. 3 (SE), 7 (WSE), 9 (RWSE) and 13 (OLE with its exact pairwise
    second derivative, Example 3-4): the score functions every tree of lrank runs
    (``lrank._kernels.splitting.criterion_source``)."""
    from lrank._kernels.splitting import criterion_source as source

    return source()


# ------------------------------------------------------------------------------- the protocol
def _fit_one(key: tuple, fold: Fold, n_estimators: int, metrics: Sequence[str],
             tree_kw: Mapping[str, Any] = TREE_KW, staged: bool = True) -> tuple[list, list, list]:
    from lrank.data.fetch import as_fold
    from lrank.metrics import evaluate
    from lrank.models.gbrt import LambdaMART, McRank

    dname, system, leaves, lr, crit, k = key
    fold = as_fold(fold)  # a fold left on disk is loaded here, in the worker, and let go afterwards
    cls = {"McRank": McRank, "LambdaMART": LambdaMART}[system]
    est = cls(n_estimators=n_estimators, learning_rate=lr, num_leaves=leaves, criterion=crit, **tree_kw,
              **(PAPER_LAMBDAS if system == "LambdaMART" else {}))
    est.fit(fold.train)
    te = fold.test
    curve: list = []
    for r, s in enumerate(est.staged_predict(te.X) if staged else (), start=1):
        vals = evaluate(te.y, s, te.qptr, list(metrics))
        curve.extend((*key, r, m, 100.0 * float(vals[m])) for m in metrics)
    per_q = evaluate(te.y, est.predict(te.X), te.qptr, list(metrics), per_query=True)
    qids = np.asarray(te.qid)
    queries = [(*key, f"{dname}:{qids[q]}", m, 100.0 * float(per_q[m][q])) for m in metrics
               for q in range(te.n_queries)]
    if not staged:
        return curve, queries, []
    loss = training_objective(est, fold.train)
    tr_qids = np.asarray(fold.train.qid)
    objective = [(*key, f"{dname}:{tr_qids[q]}", float(loss[q])) for q in range(fold.train.n_queries)]
    return curve, queries, objective


def run_protocol(datasets: Mapping[str, Sequence[Fold]], n_estimators: Mapping[str, int],
                 leaves: Sequence[int] = LEAVES, rates: Sequence[float] = RATES,
                 criteria: Sequence[str] = CRITERIA, systems: Sequence[str] = SYSTEMS,
                 metrics: Sequence[str] = METRICS, n_jobs: int = 1, checkpoint: bool | str | None = None,
                 verbose: bool | None = None, tree_kw: Mapping[str, Any] = TREE_KW,
                 label: str = "tree_fitting_objective",
                 staged: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 2-3 and Fig. 2: every (data, system, leaves, learning rate, criterion, fold) fitted once.

    Returns ``curves`` (test metric in % after each iteration, mean over the fold's queries; columns
    ``data, system, leaves, lr, criterion, fold, round, metric, value``) and ``queries`` (test metric in %
    of every query at the last iteration, the paper's "converged" model; ``query`` instead of
    ``round``: ``"<data>:<qid>"``, the same for a query under every split of `fold_seeds`), and
    ``objective``: the training objective of every training query at the last iteration
    (`training_objective`; ``query`` is ``"<data>:<qid>"``, the same for a query in every fold it trains
    in; column ``loss``). Jobs run through joblib (``n_jobs``); results do not depend on it.
    ``checkpoint`` keeps each finished fit, so that the same call after an interruption runs only the
    rest, with identical results (default: on for the paper profile only; see
    `lrank.experiments.jobs`, under ``label``); ``verbose``: a bar (the same default). ``tree_kw``: the
    trees' growth and leaf minimum (the paper's width-first trees by default). ``staged=False`` computes
    neither the curves nor the objective (both frames empty): only the last iteration's ``queries``.
    """
    from lrank.experiments.jobs import Job, run_jobs

    keys = ["data", "system", "leaves", "lr", "criterion", "fold"]
    jobs = []
    for d, folds in datasets.items():
        for key in itertools.product([d], systems, leaves, rates, criteria, range(len(folds))):
            jobs.append(Job(dict(zip(keys, key)), (key, folds[key[-1]], int(n_estimators[key[1]]), metrics,
                                                   dict(tree_kw), staged)))
    out = run_jobs(_fit_one, jobs, label=label, checkpoint=checkpoint, n_jobs=n_jobs,
                   verbose=verbose, desc="tree fitting")
    curves = pd.DataFrame([row for c, _, _ in out for row in c], columns=[*keys, "round", "metric", "value"])
    queries = pd.DataFrame([row for _, q, _ in out for row in q], columns=[*keys, "query", "metric", "value"])
    objective = pd.DataFrame([row for _, _, o in out for row in o], columns=[*keys, "query", "loss"])
    return curves, queries, objective


#: the learning rate of the depth-first comparison (one of the protocol's three: a third of its cost)
DEPTH_FIRST_RATE = 0.10


def depth_first_protocol(datasets: Mapping[str, Sequence[Fold]], n_estimators: Mapping[str, int],
                         n_jobs: int = 1, checkpoint: bool | str | None = None,
                         verbose: bool | None = None) -> pd.DataFrame:
    """Sec. 4.2's remark "depth-first search runs poorly for both baselines and our method": the fits of
    `run_protocol` at learning rate `DEPTH_FIRST_RATE` (both systems, leaf counts and criteria, every
    fold) with depth-first trees (`RegressionTree` ``growth="depth_first"``: pre-order, a node's left
    subtree before its right one, up to the same number of leaves). Returns their ``queries`` frame;
    the width-first fits of the same configurations are `run_protocol`'s."""
    _, queries, _ = run_protocol(datasets, n_estimators, rates=(DEPTH_FIRST_RATE,), n_jobs=n_jobs,
                                 checkpoint=checkpoint, verbose=verbose,
                                 tree_kw={**TREE_KW, "growth": "depth_first"},
                                 label="tree_fitting_depth_first", staged=False)
    return queries


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


def win_counts(last: pd.DataFrame, threshold: float = 0.1, by: str | list[str] = "system") -> pd.DataFrame:
    """Per system (``by``: index levels of ``last``; ``["data", "system"]`` per data set): comparisons,
    OLE ahead by ``>= threshold``, OLE ahead, OLE behind."""
    d = last["OLE - SE"]
    g = d.groupby(level=by)
    return pd.DataFrame({"comparisons": g.size(), f"OLE >= SE + {threshold}": (d >= threshold).groupby(
        level=by).sum(), "OLE > SE": (d > 0).groupby(level=by).sum(),
        "OLE < SE": (d < 0).groupby(level=by).sum()}).astype(int)


def lambdamart_objective(y: np.ndarray, qptr: np.ndarray, scores: np.ndarray, ndcg_at: int = 10,
                         sigma: float = 1.0, return_grad: bool = False) -> Any:
    """LambdaMART's implicit training loss per query (Burges 2010, Sec. 7): the pairwise logistic loss
    weighted by each pair's ``|Delta NDCG@k|`` at the current ranking,

        C_q = sum_{y_i > y_j} dZ_ij log(1 + exp(-sigma (s_i - s_j))),

    with ``dZ`` exactly as `lrank._kernels.lambdas` computes it (gains ``2^y - 1``, discount
    ``1 / log2(r + 2)`` for 0-based ranks ``r < k``, ranks from a stable sort of the scores, the ideal
    DCG@k; queries without a relevant document or with all labels equal: 0). Holding ``dZ`` fixed, its
    gradient is minus the lambdas the trees are fitted to (``return_grad=True`` returns it too, per
    document): this is the loss LambdaMART's trees minimise. Plain NumPy, one query at a time.
    """
    y = np.asarray(y)
    s = np.asarray(scores, dtype=np.float64)
    qptr = np.asarray(qptr, dtype=np.int64)
    if y.shape != s.shape or qptr[-1] != y.size:
        raise ValueError(f"y ({y.shape}), scores ({s.shape}) and qptr (ends at {qptr[-1]}) disagree")
    loss = np.zeros(qptr.size - 1)
    grad = np.zeros(y.size)
    for q in range(qptr.size - 1):
        lo, hi = qptr[q], qptr[q + 1]
        yq, sq = y[lo:hi].astype(np.float64), s[lo:hi]
        n = hi - lo
        k = n if ndcg_at <= 0 else min(ndcg_at, n)
        gain = 2.0 ** yq - 1.0
        ideal = float(np.sum(np.sort(gain)[::-1][:k] / np.log2(np.arange(k) + 2.0)))
        if ideal == 0.0 or np.ptp(yq) == 0:
            continue
        rank = np.empty(n, dtype=np.int64)
        rank[np.argsort(-sq, kind="stable")] = np.arange(n)
        disc = np.where(rank < k, 1.0 / np.log2(rank + 2.0), 0.0)
        i, j = np.nonzero(yq[:, None] > yq[None, :])
        dz = np.abs(disc[i] - disc[j]) * (gain[i] - gain[j]) / ideal
        diff = sq[i] - sq[j]
        loss[q] = float(np.sum(dz * np.logaddexp(0.0, -sigma * diff)))
        if return_grad:
            c = sigma * dz / (1.0 + np.exp(sigma * diff))  # sigma dZ rho
            np.add.at(grad, lo + i, -c)
            np.add.at(grad, lo + j, c)
    return (loss, grad) if return_grad else loss


def training_objective(est: Any, train: RankingData) -> np.ndarray:
    """The training loss each query contributes at the model's last iteration, the loss its trees
    minimise: McRank's negative log-likelihood (Eq. 5: minus the log-probability of each document's
    grade, summed over the query's documents) or LambdaMART's `lambdamart_objective`."""
    from lrank.models.gbrt import LambdaMART, McRank

    if isinstance(est, McRank):
        prob = est.predict_proba(train.X)
        nll = -np.log(prob[np.arange(train.n_docs), train.y])
        return np.bincount(np.repeat(np.arange(train.n_queries), np.diff(train.qptr)), nll,
                           minlength=train.n_queries)
    if isinstance(est, LambdaMART):
        if est.lambdarank_truncation_level is not None or est.lambdarank_norm:
            raise ValueError("training_objective: LambdaMART with NDCG@k lambdas only (lambdarank_truncation_"
                             "level=None, lambdarank_norm=False), the paper's; got "
                             f"{est.lambdarank_truncation_level!r}, {est.lambdarank_norm!r}")
        return lambdamart_objective(train.y, train.qptr, est.predict(train.X), ndcg_at=est.ndcg_at or 0,
                                    sigma=est.sigma)
    raise TypeError(f"training_objective: McRank or LambdaMART, got {type(est).__name__}")


# --------------------------------------------------------------------------- theorems on random data
def split_agreement(trials: int, rng: np.random.Generator, n: int = 120, n_features: int = 6,
                    n_bins: int = 12) -> dict[str, int]:
    """In how many of ``trials`` random draws two-leaf trees under different criteria pick the same
    first split: MART gradients (all four criteria: Theorem 2), logistic / McRank gradients (OLE vs
    RWSE: Theorem 1; vs WSE; vs SE), LambdaMART lambdas with the pair list (OLE vs SE and RWSE: not
    derivative additive), and Eq. 14 read literally (the square inside the sum, brute force over every
    split) against SE."""
    crits = ("se", "wse", "rwse", "ole")
    same = dict.fromkeys(("mart_all_four", "mcrank_ole_rwse", "mcrank_ole_wse", "mcrank_se_ole",
                          "lambdamart_se_ole", "lambdamart_rwse_ole", "eq14_literal_se"), 0)
    for _ in range(trials):
        codes = rng.integers(0, n_bins, size=(n, n_features)).astype(np.uint8)
        f_cur, y_reg = rng.normal(size=n), rng.normal(size=n)
        splits = {c: root_split(codes, f_cur - y_reg, np.ones(n), c) for c in crits}
        same["mart_all_four"] += len(set(splits.values())) == 1
        p1 = 1 / (1 + np.exp(-3 * f_cur))
        lab = (y_reg > 0).astype(float)
        sm = {c: root_split(codes, p1 - lab, p1 * (1 - p1), c) for c in crits}
        same["mcrank_ole_rwse"] += sm["ole"] == sm["rwse"]
        same["mcrank_ole_wse"] += sm["ole"] == sm["wse"]
        same["mcrank_se_ole"] += sm["se"] == sm["ole"]
        qptr = np.arange(0, n + 1, 20, dtype=np.int64)
        g_l, h_l, pairs = lambdamart_derivatives(rng.integers(0, 5, n).astype(np.int32), qptr, f_cur)
        sl = {c: root_split(codes, g_l, h_l, c, pairs) for c in ("se", "rwse", "ole")}
        same["lambdamart_se_ole"] += sl["se"] == sl["ole"]
        same["lambdamart_rwse_ole"] += sl["rwse"] == sl["ole"]
        r = y_reg - f_cur  # Eq. 14 as printed: -[sum_l r^2 / |D_l| + sum_r r^2 / |D_r|]
        best, arg = np.inf, None
        for fe in range(n_features):
            for j in range(n_bins):
                m = codes[:, fe] <= j
                if 5 <= m.sum() <= n - 5:
                    v = -((r[m] ** 2).sum() / m.sum() + (r[~m] ** 2).sum() / (~m).sum())
                    if v < best - 1e-12:
                        best, arg = v, (fe, j)
        same["eq14_literal_se"] += arg == splits["se"]
    return {k: int(v) for k, v in same.items()}


# ----------------------------------------------------------------------------------------- Fig. 2
#: Fig. 2's line per metric, as the paper draws them (NDCG@1 solid red, ERR dotted blue)
FIG2_LINES = {"ndcg@1": ("tab:red", "-"), "ndcg@3": ("tab:green", "--"), "ndcg@10": ("black", "-."),
              "err": ("tab:blue", ":")}


def fig2_figure(curves: pd.DataFrame, system: str) -> Any:
    """Fig. 2 for ``system``: test NDCG@1/@3/@10 and ERR of OLE minus SE (points) after each tree, one
    panel per (data, leaves, learning rate), averaged over the folds; the system named in the title
    and every panel, one legend outside the panels."""
    import matplotlib.pyplot as plt

    piv = (curves[curves["system"] == system]
           .groupby(["data", "leaves", "lr", "metric", "round", "criterion"])["value"].mean()
           .unstack("criterion"))
    diff = (piv["ole"] - piv["se"]).rename("diff").reset_index()
    keys = sorted(diff.groupby(["data", "leaves", "lr"]).groups)
    ncol = len(LEAVES) * len(RATES)
    nrow = int(np.ceil(len(keys) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(2.5 * ncol + 1.6, 2.4 * nrow + 0.6), sharex=True,
                             squeeze=False, constrained_layout=True)
    for ax, key in zip(axes.flat, keys):
        part = diff[(diff["data"] == key[0]) & (diff["leaves"] == key[1]) & (diff["lr"] == key[2])]
        for m in METRICS:
            colour, ls = FIG2_LINES[m]
            q = part[part["metric"] == m]
            ax.plot(q["round"], q["diff"], color=colour, ls=ls, lw=1, label=m.upper())
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_title(f"{system}, {key[0]}\n{key[1]} leaves, rate {key[2]:g}", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.flat[len(keys):]:
        ax.axis("off")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=8, title="OLE - SE", title_fontsize=8)
    fig.suptitle(f"Fig. 2 ({system}): test metric of OLE minus SE (points) after each tree", fontsize=10)
    extra = " (McRank: iterations, one tree per class each)" if system == "McRank" else ""
    fig.supxlabel("number of trees" + extra, fontsize=9)
    fig.supylabel("OLE - SE (points)", fontsize=9)
    return fig
