"""What a paper run will cost, said before it starts: ``python -m lrank reproduce --profile paper --plan``.

For each budgeted experiment (`lrank.papers.budgets`) the plan lists the data it reads (present, or the
command that fetches it), the work of the paper's budget (tasks x folds x rounds) and an estimate of its
CPU time and wall time. The estimates come from **probes**: the experiment's own code (the same
`lrank.papers` functions the notebooks call) run on the stand-in files (`lrank.data.standins`) or on the real
MSLR sample / MovieLens-100K, at two small budgets, timed in CPU seconds of this process; the difference
gives the cost per round, the rest the fixed cost per fit. Both are scaled to the paper's rounds and tasks
and by the real data's size:

* **the assumption**: the cost of a fit grows linearly with the number of documents it trains on (stumps,
  histograms and lambdas are linear per round at a fixed number of documents per query). The real sizes are
  the releases' own counts (`REAL_DOCS`: MSLR-WEB10K 1,200,192 documents in 10,000 queries, ...). Pair-based
  parts (Ranking SVM on all pairs, RankBoost+ on a query's critical pairs) grow faster than linearly where
  queries are longer than the stand-ins': those rows are lower bounds, and RankBoost+'s WEB10K tasks are
  scaled by critical pairs instead (at most 50,000 per task, the paper's rule: an upper bound).
* **wall time**: the experiments whose notebook runs its fits in a parallel grid (joblib ``n_jobs`` or a
  Dask scheduler) divide their CPU time over ``min(cores, fits)``; the others run their fits one after
  another and take their CPU time whatever the cores. A Dask cluster's floor is the longest single fit.

The probes take about a minute; nothing is written outside a temporary folder.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lrank.papers import budgets

#: Documents of the real releases (their documentation's counts), for scaling the probes. Yahoo! set 1:
#: train + valid + test (19,944 + 2,994 + 6,983 queries); chess: positions x the ~38 legal moves of a
#: middle-game position (the paper's B84 / E97 sizes).
REAL_DOCS: dict[str, int] = {
    "mslr-web10k": 1_200_192,
    "mq2007": 69_623,
    "mq2008": 15_211,
    "ohsumed": 16_140,
    "td2003": 49_058,
    "hp2003": 147_606,
    "yahoo-ltr": 709_877,
    "chess-b84": 2000 * 38,
    "chess-e97": 3000 * 38,
}
#: Queries of the real releases (for the per-query rows)
REAL_QUERIES: dict[str, int] = {
    "mslr-web10k": 10_000,
    "mq2007": 1_692,
    "mq2008": 784,
    "ohsumed": 106,
    "td2003": 50,
    "hp2003": 150,
    "yahoo-ltr": 29_921,
}


@dataclass
class Estimate:
    """One experiment's plan row."""

    notebook: str
    experiment: str
    title: str
    data: list[tuple[str, str]]  # (name, "present" / "missing: <fetch command>")
    work: str  # the budget's work, tasks x folds x rounds
    cpu_s: float  # estimated CPU seconds at the budget and the real data's size
    fits: int  # independent fits (the grid's jobs)
    parallel: bool  # does the notebook run them in a parallel grid?
    basis: str  # what was probed and how it was scaled
    probe_s: float = 0.0  # CPU seconds the probe took

    def wall_s(self, cores: int) -> float:
        """Wall seconds on ``cores`` cores: the CPU time over min(cores, fits) for a parallel grid."""
        return self.cpu_s / max(1, min(cores, self.fits)) if self.parallel else self.cpu_s

    def floor_s(self) -> float:
        """The longest single fit (a cluster's floor for a parallel grid; the whole time otherwise)."""
        return self.cpu_s / max(1, self.fits) if self.parallel else self.cpu_s


@contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _cpu(fn: Callable[[], Any]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _replicate(folds: Sequence[Any], m: int) -> list:
    """Each split of each fold ``m`` times over (the same queries again): ``m`` times the documents."""
    from lrank.data.container import Fold, RankingData
    from lrank.data.fetch import as_fold

    def rep(d: Any) -> Any:
        return None if d is None else RankingData.concat([d] * m)

    return [Fold(rep(f.train), rep(f.valid), rep(f.test)) for f in map(as_fold, folds)]


def _docs(folds: Sequence[Any]) -> int:
    """Training documents of one fold (the mean over ``folds``; a fold left on disk is loaded)."""
    from lrank.data.fetch import as_fold

    return int(round(sum(as_fold(f).train.n_docs for f in folds) / len(folds)))


@dataclass
class _Cost:
    """CPU seconds of a probe's run of ``k`` rounds when each fold trains on ``d`` documents:
    ``fixed * d / d0 + k * (per_round + per_doc_round * d)``."""

    d0: float
    fixed: float
    per_round: float
    per_doc_round: float
    took: float

    def __call__(self, k: float, d: float) -> float:
        return self.fixed * d / self.d0 + k * (self.per_round + self.per_doc_round * d)


def _cost(run: Callable[[list, int], Any], folds: list, k1: int, k2: int, m: int = 4) -> _Cost:
    """Probe ``run(folds, k)`` at ``k1`` and ``k2`` rounds, and at ``k2`` rounds on the folds with ``m`` times
    the documents (`_replicate`): the cost of a round is a constant plus a cost per document; the fixed cost
    (binning, evaluation) is taken as linear in the documents."""
    big = _replicate(folds, m)
    run(folds, 1)  # compile / load the kernels once (numba's cache), so that no point pays for it
    t1, t2, t3 = _cpu(lambda: run(folds, k1)), _cpu(lambda: run(folds, k2)), _cpu(lambda: run(big, k2))
    d1 = _docs(folds)
    p1 = max(0.0, (t2 - t1) / (k2 - k1))
    fixed = max(0.0, t1 - k1 * p1)
    p2 = max(0.0, (t3 - fixed * m) / k2)
    b = max(0.0, (p2 - p1) / ((m - 1) * d1))
    return _Cost(d1, fixed, max(0.0, p1 - b * d1), b, t1 + t2 + t3)


def _human(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 3 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


# ------------------------------------------------------------------------------------------- probes
# Each returns (estimated CPU seconds at the budget p and the real size, how, CPU seconds of the probe).
def _probe_fig4(p: dict) -> tuple[float, str, float]:
    from lrank.data import RankingData, fetch
    from lrank.papers import rankboost as rb

    hp = fetch("hp2003").fold(1)
    meta = rb.as_homepage_finding(RankingData.concat([hp.train, hp.valid, hp.test]))
    folds = meta.kfold(4, random_state=0, validation=False)
    c = _cost(lambda f, k: rb.fig4_runs(f, k, at=(1, k)), folds, 5, 25)
    real = REAL_DOCS["hp2003"] * 3 / 4
    return (
        c(p["rounds"], real) * p["repeats"],
        f"fig4_runs on the HP2003 stand-in's 4 folds x {p['repeats']} repeats, scaled to {real:,.0f} docs",
        c.took,
    )


def _probe_sign(p: dict) -> tuple[float, str, float]:
    from lrank.data import fetch
    from lrank.models.rankboost import RankBoost

    train, _ = fetch("mslr-sample")

    def run(f: list, k: int) -> None:
        RankBoost(n_estimators=k, random_state=0).fit(f[0].train)
        RankBoost(n_estimators=k, random_state=0, positive_alpha=True).fit(f[0].train)

    from lrank.data import Fold

    folds = [Fold(train, None, None)]
    c = _cost(run, folds, 10, 40, m=2)
    return (
        c(p["rounds"], train.n_docs),
        "the two RankBoost fits on the real MSLR sample (its real size)",
        c.took,
    )


def _probe_movielens(p: dict) -> tuple[float, str, float]:
    from lrank.data import fetch
    from lrank.papers import rankboost as rb

    ratings = fetch("movielens-100k")
    t0 = time.process_time()
    rb.feature_size_experiment(ratings, p["sizes"][:1], 1, 1)  # warm-up
    t0 = time.process_time()
    t5 = _cpu(lambda: rb.feature_size_experiment(ratings, p["sizes"], 2, 1))
    t6 = _cpu(lambda: rb.feature_density_experiment(ratings, p["n_per_bin"], 2, 1))
    t7 = _cpu(lambda: rb.feedback_density_experiment(ratings, p["n_fixed"], 5, 1))
    est = (t5 * p["n_targets"] / 2 + t6 * p["n_targets"] / 2 + t7 * p["n_feedback"] / 5) * p["n_splits"]
    return (
        est,
        (
            "Fig. 5-7 on the real MovieLens-100K with 2 targets (5 per bin in Fig. 7) and one split, x the "
            "targets and splits"
        ),
        time.process_time() - t0,
    )


def _probe_adarank(p: dict) -> tuple[float, str, float]:
    from lrank.data import Fold
    from lrank.papers import adarank as ada

    est, took, said = 0.0, 0.0, []
    for key in ("ohsumed", "td2003"):
        e = ada.letor3(key)

        def run(f: list, k: int, e: Any = e) -> None:
            ada.run_protocol(
                ada.Experiment(e.name, f[0].train, e.bm25, e.rel_threshold, e.artifact, e.note),
                rankboost_rounds=k,
                ranksvm_max_pairs=p["ranksvm_pairs"],
            )

        c = _cost(run, [Fold(e.data, None, None)], 5, 20)
        est += c(p["rankboost_rounds"], REAL_DOCS[key]) * p.get("repeats", 1)  # once per CV repetition
        took += c.took
        said.append(f"{key.upper()} ({REAL_DOCS[key]:,})")
    return (
        est,
        (
            f"run_protocol (5 folds, every method, x {p.get('repeats', 1)} repetitions) on the stand-ins, "
            "scaled to "
            + ", ".join(said)
            + " documents (Ranking SVM on all pairs grows faster: a lower bound)"
        ),
        took,
    )


def _bt_algos(n_std: int, n_bt: int, leaves: int | None = None) -> dict:
    from lrank.models.boostingtree import BoostingTree, Exp3P, LambdaMARTBase, Standard
    from lrank.models.ndcgboost import NDCGBoost
    from lrank.papers import boostingtree as bt

    if leaves is None:  # Table 3: stumps
        return {
            "RankBoost": bt.rankboost_baseline(n_std, random_state=0),
            "LambdaMART": Standard(LambdaMARTBase(), n_estimators=n_std),
            "NDCGBoost": Standard(NDCGBoost(), n_estimators=n_std),
            "EXP3.P(LambdaMART)": Exp3P(LambdaMARTBase(), n_estimators=n_bt, random_state=0),
            "EXP3.P(NDCGBoost)": Exp3P(NDCGBoost(), n_estimators=n_bt, random_state=0),
            "BoostingTree(LambdaMART)": BoostingTree(LambdaMARTBase(), n_estimators=n_bt, random_state=0),
            "BoostingTree(NDCGBoost)": BoostingTree(NDCGBoost(), n_estimators=n_bt, random_state=0),
        }
    out = {}
    for name, mk in (
        (
            "LambdaMART",
            lambda: LambdaMARTBase(num_leaves=leaves, ndcg_at=10, metric="ndcg@10", discount="log2"),
        ),
        ("NDCGBoost", lambda: NDCGBoost(num_leaves=leaves, metric="ndcg@10", discount="log2")),
    ):
        out[name] = Standard(mk(), n_estimators=n_std)
        out[f"EXP3.P({name})"] = Exp3P(mk(), n_estimators=n_bt, random_state=0)
        out[f"BoostingTree({name})"] = BoostingTree(mk(), n_estimators=n_bt, random_state=0)
    return out


def _probe_table3(p: dict) -> tuple[float, str, float]:
    from lrank.data import fetch
    from lrank.papers import boostingtree as bt

    mq = fetch("mq2007")
    folds = [mq.fold(k) for k in mq.folds]
    ratio = p["n_bt"] / p["n_std"]
    c = _cost(
        lambda f, k: bt.run_protocol(
            _bt_algos(k, int(k * ratio)),
            f,
            metric="mean_ndcg",
            test_metrics=("mean_ndcg",),
            lengths=(None, 1, 10),
            metric_kwargs={"discount": "jk"},
        ),
        folds,
        2,
        6,
    )
    real = REAL_DOCS["mq2007"] * 3 / 5
    return (
        c(p["n_std"], real),
        f"the seven algorithms on the MQ2007 stand-in's 5 folds, scaled to {real:,.0f} "
        "training documents per fold",
        c.took,
    )


def _probe_fig10(p: dict) -> tuple[float, str, float]:
    from lrank.data import fetch
    from lrank.papers import boostingtree as bt

    ratio = p["n_bt"] / p["n_std"]

    def run(f: list, k: int) -> None:
        for leaves in p["leaves"]:
            algos = _bt_algos(k, int(k * ratio), leaves)
            if leaves != p["leaves"][0]:  # LambdaMART with 16 leaves only
                algos = {a: e for a, e in algos.items() if "NDCGBoost" in a}
            bt.run_protocol(
                algos,
                f,
                metric="ndcg@10",
                test_metrics=("ndcg@10",),
                lengths=(None, 1),
                metric_kwargs={"discount": "log2"},
            )

    c = _cost(run, [fetch("yahoo-ltr").fold(1)], 1, 3)
    return (
        c(p["n_std"], 473_134),
        "Fig. 10's algorithms on the Yahoo! set 1 stand-in, scaled to 473,134 training documents",
        c.took,
    )


def _probe_fig11(p: dict) -> tuple[float, str, float]:
    from lrank.data.chess import generate, load_chess
    from lrank.papers import boostingtree as bt

    took, note = 0.0, ""
    if shutil.which("stockfish") or os.path.exists("/usr/games/stockfish"):
        t0 = time.perf_counter()  # the engine runs in its own process: wall time
        generate("b84", n_positions=3, random_state=84)
        gen_s = (time.perf_counter() - t0) / 3 * sum(p["positions"].values())
        took += time.perf_counter() - t0
        note = "; Stockfish time from 3 positions"
    else:
        gen_s = float("nan")
        note = "; Stockfish missing (apt-get install stockfish): its time is not estimated"
    est = 0.0
    for name in ("b84", "e97"):
        folds = load_chess(name).kfold(5, random_state=0)
        c = _cost(
            lambda f, k: bt.run_protocol(
                _bt_algos(k, k * p["n_bt"] // p["n_std"], p["leaves"]),
                f,
                metric="ndcg@10",
                test_metrics=("ndcg@10",),
                lengths=(None, 1),
                metric_kwargs={"discount": "log2"},
            ),
            folds,
            1,
            2,
            m=2,
        )
        est += c(p["n_std"], REAL_DOCS[f"chess-{name}"] * 3 / 5)
        took += c.took
    return (
        est + gen_s,
        "Fig. 11's six algorithms on the committed chess sets' 5 folds, scaled to the paper's "
        "positions" + note,
        took,
    )


def _probe_tables23(p: dict) -> tuple[float, str, float]:
    from lrank.papers import tree_fitting as tf

    n = p["n_trees"]
    est, took = 0.0, 0.0
    for dname, name, real in (
        ("MSLR", "mslr-web10k", REAL_DOCS["mslr-web10k"] * 3 / 5),
        ("Yahoo", "yahoo-ltr", 473_134),
    ):
        folds = tf.paper_folds(name)

        def run(f: list, k: int, dname: str = dname) -> None:
            tf.run_protocol({dname: f}, {s: max(1, round(k * n[s] / n["LambdaMART"])) for s in n})

        c = _cost(run, folds[:1], 2, 6)
        est += c(n["LambdaMART"], real) * len(folds)
        took += c.took
    # Sec. 6.5 refits one learning rate's 8 configurations with depth-first trees (`depth_first_protocol`):
    # 8 more fits of the same size per fold, a third of the 24 timed here
    return (
        est * (24 + 8) / 24,
        "the 24 fits of one fold of each stand-in, scaled to 720,115 (MSLR) and 473,134 (Yahoo!) training "
        "documents, x the folds, plus the 8 depth-first fits per fold (scaled as a third of the 24)",
        took,
    )


def _probe_tasks(p: dict) -> tuple[float, str, float]:
    from lrank.data import fetch
    from lrank.papers import rankboost_plus as rbp

    ml, _ = rbp.movielens_task_set(fetch("movielens-100k"))
    few = dict(list(ml.items())[:4])
    fixed, per, t1 = _two_point(lambda k: rbp.run_tasks(few, k, max_thresholds=p["max_thresholds"]), 5, 20)
    n_users = len(ml) if p["n_users"] is None else min(p["n_users"], len(ml))
    est = (fixed + per * p["n_rounds"]) * n_users / len(few)
    web = rbp.query_tasks(list(fetch("mslr-sample")), max_pairs=50_000, n_tasks=4, prefix=["train", "test"])
    pairs = sum(int(t.n_critical_pairs().sum()) for t in web.values())
    wf, wp, t2 = _two_point(lambda k: rbp.run_tasks(web, k, max_thresholds=p["max_thresholds"]), 5, 20)
    n_web = p["n_web"] or 86
    est += (wf + wp * p["n_rounds"]) * 50_000 * n_web / pairs
    return (
        est,
        (
            f"run_tasks on {len(few)} real MovieLens users (x {n_users}) and the 4 largest MSLR-sample "
            f"queries ({pairs:,} critical pairs; x {n_web} tasks of 50,000 pairs: an upper bound)"
        ),
        t1 + t2,
    )


def _two_point(run: Callable[[int], Any], k1: int, k2: int) -> tuple[float, float, float]:
    """CPU seconds of ``run(k1)`` and ``run(k2)`` after a warm-up: ``(fixed, per_unit_of_k, total)``."""
    run(1)
    t1, t2 = _cpu(lambda: run(k1)), _cpu(lambda: run(k2))
    per = max(0.0, (t2 - t1) / (k2 - k1))
    return max(0.0, t1 - per * k1), per, t1 + t2


def _probe_mq(p: dict) -> tuple[float, str, float]:
    from lrank.data import fetch
    from lrank.experiments import cross_validate
    from lrank.models import RankBoostPlus
    from lrank.papers import rankboost_plus as rbp

    est, took = 0.0, 0.0
    for name in ("mq2007", "mq2008"):
        d = fetch(name)

        def run(f: list, k: int) -> None:
            for v in rbp.ALGORITHMS.values():
                cross_validate(
                    lambda v=v: RankBoostPlus(
                        variant=v, n_estimators=k, max_thresholds=p["max_thresholds"], random_state=0
                    ),
                    folds=f,
                    metrics=["r1", "ndcg@5", "map"],
                    select_by={"ndcg@5": "map"},
                )

        c = _cost(run, [d.fold(k) for k in range(1, 6)], 5, 20)
        est += c(p["n_rounds"], REAL_DOCS[name] * 3 / 5)
        took += c.took
    return (
        est,
        "the three variants' 5-fold CV on the MQ2007 / MQ2008 stand-ins, scaled to the real documents",
        took,
    )


#: experiment -> (probe, data the paper profile reads, its work, its independent fits, a parallel grid?)
PROBES: dict[
    tuple[str, str],
    tuple[Callable | None, tuple[str, ...], Callable[[dict], str], Callable[[dict], int], bool],
] = {
    ("01_rankboost", "fig8_simulation"): (
        None,
        (),
        lambda p: f"{p['n_sim']:,} simulations x 12 cases",
        lambda p: 1,
        False,
    ),
    ("01_rankboost", "fig4"): (
        _probe_fig4,
        ("hp2003",),
        lambda p: f"4 learners x 4 folds x {p['repeats']} repeats x {p['rounds']} rounds",
        lambda p: 16 * p["repeats"],
        False,
    ),
    ("01_rankboost", "sign_of_alpha"): (
        _probe_sign,
        ("mslr-sample",),
        lambda p: f"2 fits x {p['rounds']} rounds",
        lambda p: 2,
        False,
    ),
    ("01_rankboost", "movielens"): (
        _probe_movielens,
        ("movielens-100k",),
        lambda p: (
            f"({p['n_targets']} targets x ({len(p['sizes'])} sizes + 5 bins) + {p['n_feedback']} targets x 5 "
            f"bins) x {p['n_splits']} splits x 4 algorithms"
        ),
        lambda p: p["n_splits"] * (p["n_targets"] * (len(p["sizes"]) + 5) + 5 * p["n_feedback"]),
        False,
    ),
    ("02_adarank", "protocol"): (
        _probe_adarank,
        ("ohsumed", "td2003"),
        lambda p: (
            f"2 data sets x 5 folds x (RankBoost {p['rankboost_rounds']} rounds, Ranking SVM on "
            f"{'all' if p['ranksvm_pairs'] is None else p['ranksvm_pairs']} pairs, 6 AdaRanks)"
        ),
        lambda p: 10,
        False,
    ),
    ("03_boostingtree", "table3"): (
        _probe_table3,
        ("mq2007",),
        lambda p: f"7 algorithms x 5 folds x {p['n_std']} / {p['n_bt']} iterations",
        lambda p: 35,
        False,
    ),
    ("03_boostingtree", "fig10"): (
        _probe_fig10,
        ("yahoo-ltr",),
        lambda p: f"{3 + 3 * len(p['leaves'])} algorithms x 1 split x {p['n_std']} / {p['n_bt']} iterations",
        lambda p: 3 + 3 * len(p["leaves"]),
        False,
    ),
    ("03_boostingtree", "fig11"): (
        _probe_fig11,
        ("stockfish",),
        lambda p: (
            f"{sum((p['positions'] or {}).values()):,} positions (Stockfish) + 6 algorithms x 2 sets x 5 "
            f"folds x {p['n_std']} / {p['n_bt']} iterations"
        ),
        lambda p: 60,
        False,
    ),
    ("04_tree_fitting", "tables23"): (
        _probe_tables23,
        ("mslr-web10k", "yahoo-ltr"),
        lambda p: f"(24 + 8 depth-first) fits x (5 + 3) folds x {p['n_trees']['LambdaMART']} / "
        f"{p['n_trees']['McRank']} trees",
        lambda p: 32 * 8,
        True,
    ),
    ("05_rankboost_plus", "tasks"): (
        _probe_tasks,
        ("movielens-100k", "mslr-web10k"),
        lambda p: (
            f"(MovieLens users + {p['n_web']} WEB10K queries) x 3 algorithms x 5 folds x {p['n_rounds']} "
            "rounds"
        ),
        lambda p: 364 + (p["n_web"] or 86),
        True,
    ),
    ("05_rankboost_plus", "mq"): (
        _probe_mq,
        ("mq2007", "mq2008"),
        lambda p: f"2 data sets x 3 algorithms x 5 folds x {p['n_rounds']} rounds",
        lambda p: 30,
        True,
    ),
}


#: the real data sets a probe reads (linked into the probes' stand-in root)
PROBE_REAL: dict[tuple[str, str], tuple[str, ...]] = {
    ("01_rankboost", "sign_of_alpha"): ("mslr-sample",),
    ("01_rankboost", "movielens"): ("movielens-100k",),
    ("05_rankboost_plus", "tasks"): ("movielens-100k", "mslr-sample"),
}


def _data_status(names: Sequence[str]) -> list[tuple[str, str]]:
    from lrank.data.fetch import REGISTRY, _files_present, is_standin

    out = []
    for name in names:
        if name == "stockfish":
            ok = shutil.which("stockfish") or os.path.exists("/usr/games/stockfish")
            out.append((name, "present" if ok else "missing: apt-get install stockfish"))
            continue
        ds = REGISTRY[name]
        if _files_present(ds, any_source=True):
            out.append(
                (name, "STAND-IN (not the real data)" if ds.kind == "letor" and is_standin(ds) else "present")
            )
        elif ds.method == "manual":
            out.append((name, f"missing: by hand (licence), see python -m lrank fetch {name}"))
        else:
            out.append((name, f"missing: python -m lrank fetch {name}"))
    return out


def estimate(
    profile: str = "paper",
    only: Sequence[str] | None = None,
    probe_root: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Estimate]:
    """One `Estimate` per budgeted experiment (of the notebooks matching ``only``) for ``profile``'s budget.

    The data status is read from the current data root (``$LRANK_DATA``); the probes run on stand-ins written
    to ``probe_root`` (default: a temporary folder, removed afterwards) with the real MSLR sample and
    MovieLens-100K linked in.
    """
    from lrank.data import standins
    from lrank.paths import data_dir

    rows = [k for k in budgets.BUDGETS if not only or any(o in k[0] for o in only)]
    status = {k: _data_status(PROBES[k][1]) for k in rows}
    tmp = None if probe_root else tempfile.mkdtemp(prefix="lrank-plan-")
    root = standins.prepare(probe_root or tmp, real=False)
    real = sorted({n for k in rows for n in PROBE_REAL.get(k, ())})
    if real:  # the probes on real data (fetched into the data root if needed, as the paper run would)
        standins.link_real(root, real, source=data_dir())
    out = []
    try:
        # no checkpoints: a probe timed twice with the same job key must run twice, and a probe must not
        # leave checkpoints for the rehearsal to read
        with _env(LRANK_DATA=str(root), LRANK_PROFILE="rehearsal", LRANK_CHECKPOINTS="0"):
            for key in rows:
                b = budgets.BUDGETS[key]
                p = dict(b.values(profile))
                if key == ("05_rankboost_plus", "mq"):  # Tables 2 and 4 run the tasks' rounds
                    p["n_rounds"] = budgets.budget("05_rankboost_plus", "tasks", profile).n_rounds
                probe, _, work, fits, parallel = PROBES[key]
                if progress:
                    progress(f"probing {key[0]} / {key[1]}")
                if probe is None:
                    cpu, basis, took = float("nan"), "not probed (a NumPy simulation of seconds)", 0.0
                else:
                    cpu, basis, took = probe(p)
                out.append(
                    Estimate(
                        key[0], key[1], b.title, status[key], work(p), cpu, fits(p), parallel, basis, took
                    )
                )
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def table(rows: Sequence[Estimate], cores: Sequence[int] = (2, 16)) -> pd.DataFrame:
    """The plan as a table: data, work, CPU and wall estimates (``cores``), a cluster's floor."""
    recs = []
    for r in rows:
        rec = {
            "notebook": r.notebook,
            "experiment": r.experiment,
            "data": "; ".join(f"{n} {s}" for n, s in r.data) or "-",
            "work": r.work,
            "CPU": _human(r.cpu_s),
        }
        for c in cores:
            rec[f"wall, {c} cores"] = _human(r.wall_s(c))
        rec["wall, Dask cluster (floor)"] = _human(r.floor_s())
        rec["parallel grid"] = "yes" if r.parallel else "no (serial)"
        recs.append(rec)
    df = pd.DataFrame(recs)
    tot = {
        "notebook": "total",
        "experiment": "",
        "data": "",
        "work": "",
        "CPU": _human(np.nansum([r.cpu_s for r in rows])),
    }
    for c in cores:
        tot[f"wall, {c} cores"] = _human(np.nansum([r.wall_s(c) for r in rows]))
    tot["wall, Dask cluster (floor)"] = _human(np.nansum([r.floor_s() for r in rows]))
    tot["parallel grid"] = ""
    return pd.concat([df, pd.DataFrame([tot])], ignore_index=True)


def print_plan(
    profile: str = "paper", only: Sequence[str] | None = None, data_root: str | None = None
) -> int:
    """``reproduce --plan``: print the plan of ``profile`` (the data status of ``data_root`` or
    ``$LRANK_DATA``); returns the exit code (0)."""
    cores = os.cpu_count() or 1
    if data_root:
        os.environ["LRANK_DATA"] = str(data_root)
    if profile == "quick":
        print("--plan estimates the paper (or rehearsal) profile; the quick profile runs in minutes")
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"plan of the {profile} profile on this machine ({cores} cores, load average {load:.1f}); probing "
        "on stand-ins and the real sample ...",
        flush=True,
    )
    rows = estimate(profile, only, progress=lambda s: print("  " + s, flush=True))
    df = table(rows, cores=sorted({cores, 2, 16}))
    with pd.option_context("display.max_colwidth", 70, "display.width", 250):
        print(df.to_string(index=False))
    print("\nHow each row was estimated (CPU seconds measured here, in this process):")
    for r in rows:
        print(f"- {r.notebook}/{r.experiment}: {r.basis} (probe {r.probe_s:.1f} s CPU)")
    missing = [f"{n} ({s.split(': ', 1)[1]})" for r in rows for n, s in r.data if s.startswith("missing")]
    if missing:
        print("\nmissing data: " + "; ".join(dict.fromkeys(missing)))
    print(
        "\nAssumption: a fit's cost grows linearly with its documents (the real sizes: "
        + ", ".join(f"{k} {v:,}" for k, v in REAL_DOCS.items())
        + "). Serial rows take their CPU time whatever "
        "the cores; parallel grids (joblib n_jobs / a Dask scheduler) divide it over min(cores, fits)."
    )
    return 0
