"""BoostingTree (Kocsis, György, Bán 2013): the paper's data, tables, replays, protocol and verdicts.

Built on the library: the estimators are `lrank.models.boostingtree` (``BoostingTree``, ``Exp3P``,
``Standard``, ``LambdaMARTBase``), `lrank.models.adaboost.AdaBoostStumps` and
`lrank.models.ndcgboost.NDCGBoost`; folds come from `RankingData.kfold`, the relabelling from
`RankingData.relabel`, the verdicts from `lrank.stats.paired_comparison`. Notebook
``03_boostingtree`` imports from here.

Contents
--------
* Sec. 3.2: `illustrative_example` (the Fig. 4 problem), the printed Table 1 and Table 2
  (`PAPER_TABLE1`, `PAPER_TABLE2_TOP`, `PAPER_TABLE2_BOTTOM`), the two replay orders
  (`table2_worst_case`, `table2_best_case`) and `table2_frame` (a fitted run laid out as Table 2).
* Theorem 2: `theorem2_check` on a fitted run's ``rounds_``.
* Sec. 4 data: `MQ2007_GRADES` / `three_grades` (the quick profile's MSLR-sample substitute for
  MQ2007), `mslr_sample_pooled` (all 86 sample queries), `quick_table3_folds` and
  `QUICK_TABLE3_ITERATIONS` (the quick profile's Table 3 runs, shared with `lrank.benchmarks.boostingtree`,
  whose `SELECTION_SHARE_ROW` the notebook reads), `PAPER_TABLE3_AVG`.
* Protocol: `run_protocol` (every algorithm on every fold, the model picked on validation, per-query
  test measures for each maximum model length) and the claim checks `claim_better`,
  `claim_not_worse`, `claim_worst`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from lrank.data.container import Fold, RankingData
from lrank.papers import budgets
from lrank.stats import HELD, NOT_HELD, UNDECIDED, paired_comparison

NB = "03_boostingtree"

__all__ = ["illustrative_example", "PAPER_TABLE1", "PAPER_TABLE2_TOP", "PAPER_TABLE2_BOTTOM",
           "PAPER_TABLE3_AVG", "table2_worst_case", "table2_best_case", "table2_frame", "theorem2_check",
           "MQ2007_GRADES", "three_grades", "mslr_sample_pooled", "quick_table3_folds",
           "QUICK_TABLE3_ITERATIONS", "SELECTION_SHARE_ROW", "rankboost_baseline", "run_protocol",
           "select_model", "claim_better",
           "claim_not_worse", "claim_worst", "NON_INFERIORITY_MARGIN", "budget", "available", "table3_data",
           "yahoo_data", "chess_data", "FOLD_REPEATS", "fold_seeds", "repeated_kfold", "theorem1_simulation"]


# ----------------------------------------------------------------------------- Sec. 3.2, Fig. 4
def illustrative_example() -> tuple[np.ndarray, np.ndarray]:
    """The 8-point, 2-feature problem of the paper's Fig. 4, reconstructed (notebook 03, Sec. 5a).

    Bands (0,.2], (.2,.4], (.4,.6], (.6,.8] on both axes with labels -, +, -, +; points at the cell
    centres (the two doubled points kept on the same centre: moving them inside their band changes no
    stump choice).  Returns ``X`` (8, 2) float64 and ``y`` in {-1, +1}.
    """
    pts = [((0.1, 0.5), -1), ((0.3, 0.3), 1), ((0.3, 0.7), 1), ((0.3, 0.7), 1),
           ((0.5, 0.1), -1), ((0.5, 0.5), -1), ((0.5, 0.5), -1), ((0.7, 0.3), 1)]
    X = np.array([p for p, _ in pts], dtype=np.float64)
    y = np.array([c for _, c in pts], dtype=np.int64)
    return X, y


#: Table 1 as printed: AdaBoost weights unconstrained and with feature 1 only, and the splits.
PAPER_TABLE1 = {
    "alphas": [0.55, 0.55, 0.62, 0.76, 0.67],
    "alphas_feature1": [0.55, 0.55, 0.80],
    "splits": ["f1 <= 0.4", "f2 <= 0.4", "f2 > 0.6", "f1 > 0.2", "f1 > 0.6"],
}

#: Table 2 (top, worst case) as printed; bold written ``**n**``.
PAPER_TABLE2_TOP = [
    ["-", "0.5", "**0**", "1", "**1**", "", "", "", ""],
    ["2", "0.25", "e", "**1**", "**2**", "", "", "", ""],
    ["2,1", "0.375 (0.25)", "", "e", "2", "2", "2", "2", "2 (t)"],
    ["1", "0.25", "", "", "e", "**1**", "**2**", "", ""],
    ["2,2", "0.375 (0.25)", "", "", "e", "2", "2", "2", "2 (t)"],
    ["1,2", "0.25", "", "", "", "e", "2", "2", "**2** (t)"],
    ["1,1", "0.125", "", "", "", "", "e", "**2** (c)", "**3**"],
    ["1,1,2", "0.125", "", "", "", "", "", "e", "3"],
    ["1,2,1", "0.125", "", "", "", "", "", "", "e"],
    ["1,1,1", "0", "", "", "", "", "", "", "e"],
]
#: Table 2 (bottom, best case) as printed (the fourth row's "1,2" is a probable typo for "2").
PAPER_TABLE2_BOTTOM = [
    ["-", "0.5", "**0**", "1", "**1**"],
    ["1", "0.25", "e", "**1**", "2"],
    ["1,1", "0.125", "", "e", "**2**"],
    ["1,2", "0.25", "", "", "e"],
    ["1,1,1", "0", "", "", "e"],
]


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


def table2_frame(bt: Any) -> pd.DataFrame:
    """A fitted `BoostingTree` run laid out as the paper's Table 2 (cumulative length ``n`` per round).

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


def theorem2_check(rounds: pd.DataFrame) -> pd.DataFrame:
    """Theorem 2 per round: ``r <= l_{I_r} < 2r`` (Eq. 2), ``l_{I_r} >= (sqrt(2 t_r + 7) - 1)/2`` (Eq. 3).

    ``rounds`` is a fitted run's ``rounds_``; rounds cut short by ``n_estimators`` or ``stop_at``
    (``complete`` False) are left out.
    """
    rounds = rounds[rounds["complete"]] if "complete" in rounds else rounds
    r = rounds["round"].to_numpy()
    lI = rounds["best_length"].to_numpy()
    t = rounds["t"].to_numpy()
    bound3 = (np.sqrt(2.0 * t + 7.0) - 1.0) / 2.0                                  # Eq. (3)
    return pd.DataFrame({"round": r, "t_r": t, "l_I": lI, "eq2_lower (r <= l)": r <= lI,
                         "eq2_upper (l < 2r)": lI < 2 * r, "eq3 bound": bound3,
                         "eq3 (l >= bound)": lI >= bound3 - 1e-12})


def theorem1_simulation(base: Any, rounds: int = 5, n_models: int = 1500, seed: int = 0) -> dict:
    """Theorem 1 where its limit is known: a small random ranking problem with two continuous features
    (no ties, so a stump constrained to the feature the unconstrained step picks is that step: Assumption
    1), the standard variant run for ``rounds`` steps and BoostingTree for ``n_models`` models.

    Returns ``rounds``, ``models``, ``found`` (how many of the standard variant's models ``M_1..M_rounds``
    are nodes of the tree with the same training scores, to 1e-9), ``first_t`` (the generated-model
    number at which each was found, or -1) and ``f_bt_minus_f_ada`` (the tree's best training measure
    minus the standard variant's after ``rounds`` steps: Theorem 1's consequence needs it >= 0).
    """
    from sklearn.base import clone

    from lrank.models.boostingtree import BoostingTree, Standard

    rng = np.random.default_rng(seed)
    nq, nd = 12, 8
    X = rng.normal(size=(nq * nd, 2)).astype(np.float32)
    data = RankingData.from_group(X, rng.integers(0, 3, size=nq * nd), [nd] * nq)
    std = Standard(clone(base), n_estimators=rounds).fit(data)
    bt = BoostingTree(clone(base), n_estimators=n_models, random_state=seed).fit(data)
    t = bt.tree_
    first = []
    for r in range(1, rounds + 1):
        s = std.predict(X, num_iteration=r)
        hit = [j for j in range(len(t)) if t.depth[j] == r
               and np.allclose(bt.predict_node(X, j), s, rtol=0.0, atol=1e-9)]
        first.append(min(hit) if hit else -1)
    f_std = float(std.history_.filter(like="train_").iloc[rounds - 1].iloc[0])
    return {"rounds": rounds, "models": int(bt.n_iter_), "found": sum(j >= 0 for j in first),
            "first_t": first,
            "f_bt_minus_f_ada": float(max(t.fhat)) - f_std}


# ----------------------------------------------------------------------------- Sec. 4 data
#: MQ2007's three grades from MSLR's five: 0 -> 0, 1 -> 1, 2..4 -> 2 (this paper's substitute rule).
MQ2007_GRADES = {0: 0, 1: 1, 2: 2, 3: 2, 4: 2}

#: Table 3's averages as printed (MQ2007, MeanNDCG).
PAPER_TABLE3_AVG = {"RankBoost": 0.5003, "LambdaMART": 0.5060, "NDCGBoost": 0.5052,
                    "EXP3.P(LambdaMART)": 0.4977, "EXP3.P(NDCGBoost)": 0.5033,
                    "BoostingTree(LambdaMART)": 0.5065, "BoostingTree(NDCGBoost)": 0.5071}


def three_grades(data: RankingData) -> RankingData:
    """Relabel a 0-4 graded set to MQ2007's three grades (`MQ2007_GRADES`); a quick-profile substitute
    for MQ2007, stated in every caption that uses it."""
    return data.relabel(MQ2007_GRADES, name="MQ2007-like 3 grades: 0->0, 1->1, 2..4->2")


def mslr_sample_pooled() -> RankingData:
    """All 86 queries of the MSLR-WEB10K sample (its 43 train and 43 test queries, in that order)."""
    from lrank.data import fetch

    tr, te = fetch("mslr-sample")
    return RankingData.concat([tr, te])


#: The quick profile's Table 3 runs: iterations of the standard variants, sequences of EXP3.P / BoostingTree
#: (`lrank.papers.budgets`, ``03_boostingtree/table3``).
QUICK_TABLE3_ITERATIONS = tuple(budgets.budget(NB, "table3", "quick"))

#: The row of ``figures/benchmarks.csv`` (``python -m lrank bench``, `lrank.benchmarks.boostingtree`) that
#: holds the share of node selection in BoostingTree's time over the quick Table 3 fits; notebook 03 prints
#: it and times nothing itself.
SELECTION_SHARE_ROW = ("BoostingTree node selection / boosting steps, total time over notebook 03's Table 3 "
                       "fits (quick profile)")


def quick_table3_folds(seed: int = 0) -> list[Fold]:
    """The quick profile's Table 3 data: all 86 MSLR-sample queries relabelled to three grades
    (`three_grades`), 5 query folds (3 train / 1 validation / 1 test, rotating) seeded by ``seed``."""
    return three_grades(mslr_sample_pooled()).kfold(5, random_state=seed)


# ------------------------------------------------------------------------ profiles: budgets and data
def budget(experiment: str, profile: str) -> Any:
    """This notebook's budget of ``experiment`` in ``profile`` (`lrank.papers.budgets`)."""
    return budgets.budget(NB, experiment, profile)


def available(name: str, skipped: list[dict]) -> Any:
    """``fetch(name)`` if the data set is present, else None with a row (its fetch command) in ``skipped``."""
    from lrank.data import FetchError, fetch

    try:
        return fetch(name)
    except (FetchError, OSError) as exc:
        skipped.append({"experiment data": name, "fetch with": f"python -m lrank fetch {name}",
                        "why": str(exc).splitlines()[0][:120]})
        return None


#: How many 5-fold splits (fold seeds) the quick profile pools: each query is a test query once per split
#: and its values are averaged over the splits before a test, so it still counts once (seed stability:
#: one reshuffle of the folds no longer decides a verdict). The paper profile runs MQ2007's official folds.
FOLD_REPEATS = {"quick": 5, "paper": 1, "rehearsal": 1}


def fold_seeds(profile: str, seed: int) -> list[int]:
    """The fold seeds of ``profile`` for the notebook's ``SEED`` (`lrank.papers.budgets.fold_seeds` with
    `FOLD_REPEATS`)."""
    return budgets.fold_seeds(FOLD_REPEATS, profile, seed)


def repeated_kfold(data: RankingData, profile: str, seed: int, k: int = 5) -> list[Fold]:
    """``data.kfold(k)`` for every fold seed of `fold_seeds`, concatenated (fold ``i`` of split ``j`` is
    number ``j * k + i + 1`` in `run_protocol`'s output)."""
    return [f for s in fold_seeds(profile, seed) for f in data.kfold(k, random_state=s)]


def table3_data(profile: str, seed: int, skipped: list[dict]) -> tuple[list[Fold], str]:
    """Table 3's folds and their description. ``"quick"`` (or MQ2007 absent in ``"paper"``, noted in
    ``skipped``): `quick_table3_folds` for each of the profile's fold seeds (`fold_seeds`);
    ``"paper"`` / ``"rehearsal"``: MQ2007's five official folds (real or stand-in); the rehearsal refuses
    to skip."""
    mq = available("mq2007", skipped) if profile != "quick" else None
    budgets.require_nothing_skipped(profile, skipped, NB)
    if mq is not None:
        folds = [mq.fold(k) for k in mq.folds]  # (train, valid, test) per official fold
        return folds, f"MQ2007 (LETOR 4.0, {budgets.data_kind(folds[0].train)}), 5 official folds"
    seeds = fold_seeds(profile, seed)
    folds = [f for s in seeds for f in quick_table3_folds(s)]  # 3 grades, 5 query folds per seed
    n_test = sum(f.test.n_queries for f in folds) // len(seeds)
    return folds, (f"real MSLR-WEB10K sample, all {n_test} queries, relabelled to 3 grades (substitute for "
                   f"MQ2007), 5 query folds 3/1/1 under {len(seeds)} fold seed(s) {seeds}"
                   + ("; MQ2007 absent" if profile == "paper" else ""))


#: Fig. 10's data when the licensed Yahoo! LTR set 1 itself ran (its description in `yahoo_data`)
YAHOO = "Yahoo! LTR set 1"


def yahoo_data(profile: str, seed: int, skipped: list[dict]) -> tuple[list[Fold], str]:
    """Fig. 10's split and its description: Yahoo! LTR set 1 (train / valid / test) in ``"paper"`` /
    ``"rehearsal"``; otherwise (or Yahoo! absent in ``"paper"``) one 3/1/1 split of the MSLR sample."""
    ya = available("yahoo-ltr", skipped) if profile != "quick" else None
    budgets.require_nothing_skipped(profile, skipped, NB)
    if ya is not None:
        fold = ya.fold(ya.folds[0])  # set 1: train / valid / test
        kind = budgets.data_kind(fold.train)
        return [fold], YAHOO + ("" if kind == "real" else f" ({kind})")
    return (mslr_sample_pooled().kfold(5, random_state=seed)[:1],  # 5 grades
            "real MSLR-WEB10K sample, 5 grades (substitute for Yahoo! LTR), one 3/1/1 split")


#: The seeds of the regenerated chess sets (the paper profile's and the rehearsal's)
CHESS_SEEDS = {"b84": 84, "e97": 97}


def chess_data(profile: str, skipped: list[dict]) -> dict[str, RankingData]:
    """Fig. 11's B84 / E97 sets. The budget's ``positions`` (``"paper"``: 2,000 / 3,000; ``"rehearsal"``: a
    few) are regenerated with `lrank.data.chess.generate` (python-chess and Stockfish, Debian package
    ``stockfish``); ``"quick"`` (or no engine in ``"paper"``, noted in ``skipped``) loads the committed sets
    of ``data/chess``. The rehearsal refuses to fall back."""
    from lrank.data.chess import generate, load_chess

    positions = budget("fig11", profile).positions
    cdata = None
    if positions:
        try:
            cdata = {k: generate(k, n_positions=n, random_state=CHESS_SEEDS[k]) for k, n in positions.items()}
        except (ImportError, OSError, RuntimeError) as exc:
            skipped.append({"experiment data": "chess B84/E97 at the paper's size",
                            "fetch with": "pip install chess; apt-get install stockfish (then rerun: "
                                          "lrank.data.chess.generate)",
                            "why": str(exc).splitlines()[0][:120]})
    budgets.require_nothing_skipped(profile, skipped, NB)
    if cdata is None:
        cdata = {k: load_chess(k) for k in ("b84", "e97")}
    return cdata


def rankboost_baseline(n_estimators: int, random_state: int | None = None) -> Any:
    """Table 3's RankBoost row: `lrank.models.rankboost.RankBoost` with ``n_estimators`` rounds (run by
    us; the paper copies LETOR's baseline)."""
    from lrank.models.rankboost import RankBoost

    rounds = "n_estimators" if "n_estimators" in RankBoost().get_params() else "n_rounds"  # pre-contract name
    return RankBoost(**{rounds: int(n_estimators)}, random_state=random_state)


# ----------------------------------------------------------------------------- protocol
def select_model(est: Any, valid: RankingData, metric: str, max_length: int | None,
                 metric_kwargs: Mapping | None = None) -> tuple[Any, int]:
    """The model of at most ``max_length`` hypotheses with the best ``metric`` on ``valid``.

    Returns ``(how, length)``: for a `BoostingTree` ``how`` is a node (``est.select_node("valid")``),
    otherwise the number of iterations for ``predict(X, num_iteration=)`` (the first best one, taken
    from ``history_["valid_<metric>"]`` or, without that column, from ``staged_predict`` on ``valid``).
    """
    from lrank.metrics import evaluate
    from lrank.models.boostingtree import BoostingTree

    if isinstance(est, BoostingTree):
        node = est.select_node("valid", max_length=max_length)
        return node, int(est.tree_.depth[node])
    col = f"valid_{metric}"
    h = getattr(est, "history_", None)
    if h is not None and col in h:
        vals = h[col].to_numpy(dtype=np.float64)
    else:
        vals = np.array([evaluate(valid.y, s, valid.qptr, [metric], **dict(metric_kwargs or {}))[metric]
                         for s in est.staged_predict(valid.X)])
    if max_length is not None:
        vals = vals[:max_length]
    if vals.size == 0 or np.all(np.isnan(vals)):
        return 0, 0
    t = int(np.nanargmax(vals)) + 1
    return t, t


def _scores(est: Any, X: np.ndarray, how: Any) -> np.ndarray:
    from lrank.models.boostingtree import BoostingTree

    if isinstance(est, BoostingTree):
        return est.predict_node(X, how)
    if int(how) == 0:
        return np.zeros(np.asarray(X).shape[0])
    if "num_iteration" in inspect.signature(est.predict).parameters:
        return est.predict(X, num_iteration=int(how))
    for t, s in enumerate(est.staged_predict(X), start=1):   # a ranker not (yet) on the estimator contract
        if t == int(how):
            return s
    raise ValueError(f"{type(est).__name__} has fewer than {how} rounds")


def _protocol_job(fi: int, name: str, est0: Any, fold: Fold, metric: str, test_metrics: Sequence[str],
                  lengths: Sequence[int | None], kw: dict, keep: bool,
                  split_size: int = 0) -> tuple[list, dict, Any]:
    """One (fold, algorithm) of `run_protocol`: its per-query frames, its fit row and (``keep``) the
    fitted estimator."""
    from sklearn.base import clone

    from lrank.metrics import evaluate

    est = clone(est0)
    rs = est.get_params().get("random_state")
    if split_size and isinstance(rs, (int, np.integer)):
        est.set_params(random_state=int(rs) * 1000 + (fi - 1) // split_size)  # one model seed per split
    own = "eval_metric" in est.get_params()
    t0 = time.perf_counter()
    if own:
        est.set_params(eval_metric=metric).fit(fold.train, eval_set=fold.valid)
    else:
        est.fit(fold.train)
    fit_s = time.perf_counter() - t0
    parts = []
    for L in lengths:
        how, used = select_model(est, fold.valid, metric, L, kw)
        s = _scores(est, fold.test.X, how)
        vals = evaluate(fold.test.y, s, fold.test.qptr, list(test_metrics), per_query=True, **kw)
        df = pd.DataFrame({m: np.asarray(vals[m], dtype=np.float64) for m in test_metrics})
        df.insert(0, "length", used)
        df.insert(0, "qid", np.asarray(fold.test.qid))
        df.insert(0, "query", np.arange(fold.test.n_queries))
        df.insert(0, "max_length", np.nan if L is None else float(L))
        df.insert(0, "algorithm", name)
        df.insert(0, "fold", fi)
        parts.append(df)
    return parts, {"fold": fi, "algorithm": name, "fit_s": fit_s, "iterations": int(est.n_iter_)}, \
        (est if keep else None)


def run_protocol(estimators: Mapping[str, Any], folds: Sequence[Fold], metric: str = "mean_ndcg",
                 test_metrics: Sequence[str] = ("mean_ndcg",), lengths: Sequence[int | None] = (None,),
                 metric_kwargs: Mapping | None = None, keep: list | None = None,
                 verbose: bool | None = None, checkpoint: bool | str | None = None,
                 split_size: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 3 / Fig. 8-11 protocol: fit on each fold's train part, pick the model on its validation part.

    Parameters
    ----------
    estimators : mapping name -> estimator
        Cloned per fold. Those with ``eval_metric`` (``Standard``, ``Exp3P``, ``BoostingTree``,
        ``NDCGBoost``) are fitted with ``eval_set=fold.valid`` and ``eval_metric=metric``; others
        (RankBoost) are scored on ``fold.valid`` through ``staged_predict``.
    folds : sequence of Fold
        ``(train, valid, test)`` triples, e.g. ``data.kfold(5)`` (3 / 1 / 1 rotating).
    metric : str
        The validation measure that picks the model (Table 3: MeanNDCG; Figs. 10-11: NDCG@10).
    test_metrics : sequence of str
        Measures of the picked model on the test queries.
    lengths : sequence of int or None
        Largest allowed number of hypotheses (Fig. 9-11's x axis); ``None`` = no limit (Table 3).
    metric_kwargs : mapping
        Conventions for `lrank.metrics.evaluate` (e.g. ``{"discount": "jk"}``).
    keep : list or None
        If given, ``(fold number, name, fitted estimator)`` is appended for every fit.
    split_size : int
        With ``folds`` the concatenation of several ``split_size``-fold splits (`repeated_kfold`, several
        fold seeds), an estimator with an integer ``random_state`` is refitted with ``random_state * 1000
        + split`` in each split, so that the pooled splits also pool the algorithms' own randomness
        (EXP3.P's and BoostingTree's constraint draws); 0 (default) keeps ``random_state`` as given.

    Returns
    -------
    per_query : pandas.DataFrame
        One row per fold x algorithm x length x test query: ``fold`` (1-based), ``algorithm``,
        ``max_length`` (NaN = no limit), ``query`` (position in the fold's test part), ``qid``,
        ``length`` (of the picked model) and one column per test measure.
    fits : pandas.DataFrame
        One row per fold x algorithm: ``fit_s``, ``iterations`` (``n_iter_``).

    Each (fold, algorithm) is one job; ``verbose`` shows a bar over them (default: on for the paper
    profile only). ``checkpoint`` keeps each
    finished job (with its fitted estimator when ``keep`` is given), so that the same call after an
    interruption runs only the rest, with identical results (default: on for the paper profile only;
    see `lrank.experiments.jobs`).
    """
    from lrank.experiments.jobs import Job, run_jobs

    kw = dict(metric_kwargs or {})
    jobs = [Job({"fold": fi, "algorithm": name}, (fi, name, est0, fold, metric, tuple(test_metrics),
                                                  tuple(lengths), kw, keep is not None, int(split_size)))
            for fi, fold in enumerate(folds, start=1) for name, est0 in estimators.items()]
    outs = run_jobs(_protocol_job, jobs, label="boostingtree_protocol", checkpoint=checkpoint,
                    verbose=verbose, desc="BoostingTree protocol")
    parts, fits = [], []
    for frames, fit, est in outs:
        parts.extend(frames)
        fits.append(fit)
        if keep is not None:
            keep.append((fit["fold"], fit["algorithm"], est))
    return pd.concat(parts, ignore_index=True), pd.DataFrame(fits)


# ----------------------------------------------------------------------------- verdicts
#: "at least as good": the mean per-query difference's 95% interval lies above -0.01 (one NDCG point).
NON_INFERIORITY_MARGIN = 0.01


def _paired(per_query: pd.DataFrame, a: str, b: str, metric: str, max_length: float | None = None,
            lengths: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per (fold, query) values of ``a`` and ``b`` at one ``max_length`` (NaN: no limit), or averaged
    over several ``lengths`` (the short-model part of a Fig. 9 curve)."""
    d = per_query
    if lengths is not None:
        d = d[d["max_length"].isin(list(lengths))]
    elif max_length is None:
        d = d[d["max_length"].isna()]
    else:
        d = d[d["max_length"] == max_length]
    v = d.groupby(["algorithm", "fold", "query"])[metric].mean()
    if a not in v.index.get_level_values(0) or b not in v.index.get_level_values(0):
        raise KeyError(f"algorithms {a!r} and {b!r} must both be in the results")
    va, vb = v.loc[a], v.loc[b]
    va, vb = va.align(vb, join="inner")
    return va.to_numpy(), vb.to_numpy()


def claim_better(per_query: pd.DataFrame, a: str, b: str, metric: str, **where: Any) -> dict:
    """The claim "``a`` is better than ``b``": paired Wilcoxon over (fold, query) pairs
    (`lrank.stats.paired_comparison`); HELD / NOT HELD / UNDECIDED (not significant at 0.05)."""
    va, vb = _paired(per_query, a, b, metric, **where)
    return {"claim": f"{a} > {b}", **paired_comparison(va, vb)}


def claim_not_worse(per_query: pd.DataFrame, a: str, b: str, metric: str,
                    margin: float = NON_INFERIORITY_MARGIN, **where: Any) -> dict:
    """The claim "``a`` is at least as good as ``b``" (non-inferiority by ``margin``).

    NOT HELD when ``a`` is significantly worse (paired Wilcoxon p < 0.05, mean difference < 0);
    otherwise HELD when the 95% bootstrap interval of the mean difference ``a - b`` lies above
    ``-margin``, UNDECIDED when it does not (too few queries to tell).
    """
    va, vb = _paired(per_query, a, b, metric, **where)
    out = {"claim": f"{a} >= {b} (margin {margin})", **paired_comparison(va, vb)}
    if out["p_value"] < 0.05 and out["mean_diff"] < 0:
        out["verdict"] = NOT_HELD
    elif np.isfinite(out["ci_low"]) and out["ci_low"] > -margin:
        out["verdict"] = HELD
    else:
        out["verdict"] = UNDECIDED
    return out


def claim_worst(per_query: pd.DataFrame, a: str, others: Sequence[str], metric: str, **where: Any) -> dict:
    """The claim "``a`` is the worst": ``a`` below each of ``others`` (paired Wilcoxon, Holm-adjusted).

    HELD when every other algorithm is significantly better than ``a`` after Holm's correction;
    NOT HELD when some other algorithm is significantly *worse* than ``a``; UNDECIDED otherwise. The
    reported p-value is the one behind the verdict: for NOT HELD the smallest Holm-adjusted p of a
    "worse" comparison, otherwise the largest Holm-adjusted p.
    """
    comps = {o: paired_comparison(*_paired(per_query, o, a, metric, **where)) for o in others}
    ps = np.array([comps[o]["p_value"] for o in others])
    order = np.argsort(ps)
    adj = np.empty_like(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        adj[i] = running
    better = [comps[o]["mean_diff"] > 0 and adj[k] < 0.05 for k, o in enumerate(others)]
    worse = [comps[o]["mean_diff"] < 0 and adj[k] < 0.05 for k, o in enumerate(others)]
    verdict = NOT_HELD if any(worse) else HELD if all(better) else UNDECIDED
    # the p-value behind the verdict: the smallest "worse" one for NOT HELD, else the largest "better" one
    p = float(adj[np.array(worse)].min()) if verdict == NOT_HELD else float(adj.max())
    n = comps[others[0]]["n"]
    return {"claim": f"{a} is the worst", "n": n, "p_value": p, "verdict": verdict,
            "comparisons": {o: {"mean_diff": -comps[o]["mean_diff"], "p_holm": float(adj[k])}
                            for k, o in enumerate(others)}}
