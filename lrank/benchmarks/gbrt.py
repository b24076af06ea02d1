"""Benchmark: lrank's MART and LambdaMART against LightGBM (and XGBoost), issue 6's targets.

Same settings on both sides: 10 leaves, leaf-wise growth, 254 thresholds (LightGBM ``max_bin=255``),
learning rate 0.1, ``min_data_in_leaf=20``, ``min_sum_hessian_in_leaf=1e-3``, NDCG@10 lambdas
(LightGBM ``lambdarank_truncation_level=10``), the same number of threads. Time per tree is
``(T(n) - T(1)) / (n - 1)`` (binning / Dataset construction excluded from both), best of a few repeats,
all in this process, ours and the reference interleaved repeat by repeat (so that both see the same
load on a shared machine). Rows:

* MART vs LightGBM ``regression`` and LambdaMART (SE) vs LightGBM ``lambdarank``, time per tree, 1 and 2
  threads, on the real MSLR sample (5,000 documents) and a 200,000-document ``make_letor_like`` set
  (136 features, 5 grades; quick profile: 1 thread and few trees there);
* XGBoost ``rank:ndcg`` (``tree_method="hist"``, lossguide, 10 leaves) as a second reference;
* test NDCG@10 after 100 and 500 trees, ours vs LightGBM's (target: within 0.01);
* OLE's time per tree over SE's for LambdaMART (the paper's reference: about 30%).

The machine these numbers come from may be shared; the ratios are what to read.
"""

from __future__ import annotations

import os
import time

import numpy as np

PARAMS = dict(max_leaves=10, learning_rate=0.1, min_data_in_leaf=20, min_sum_hessian_in_leaf=1e-3)


def _best(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _per_tree(make_fit, n, repeats):
    """Seconds per tree: (T(n) - T(1)) / (n - 1)."""
    t1 = _best(lambda: make_fit(1), repeats)
    tn = _best(lambda: make_fit(n), repeats)
    return max(tn - t1, 1e-9) / (n - 1)


def _per_tree_pair(fit_a, fit_b, n, repeats):
    """Seconds per tree of two fitters, ``(T(n) - T(1)) / (n - 1)`` each with the best T over repeats,
    the two measured alternately."""
    best = np.full((2, 2), np.inf)
    for _ in range(repeats):
        for s, fit in enumerate((fit_a, fit_b)):
            for c, m in enumerate((1, n)):
                t0 = time.perf_counter()
                fit(m)
                best[s, c] = min(best[s, c], time.perf_counter() - t0)
    return tuple(max(best[s, 1] - best[s, 0], 1e-9) / (n - 1) for s in range(2))


def _ours(kind, data, n_trees, threads, criterion="se"):
    from lrank.data.binning import bin_features
    from lrank.models.gbrt import MART, LambdaMART

    cls = LambdaMART if kind == "lambdarank" else MART
    bins = bin_features(data.X, max_thresholds=254, strategy="quantile")

    def fit(n):
        m = cls(n_trees=n, criterion=criterion, n_jobs=threads, **PARAMS)
        m._fit_binned(data, bins)
        return m

    return fit


def _lgb(kind, data, threads):
    import lightgbm as lgb

    params = dict(objective=kind, num_leaves=PARAMS["max_leaves"], learning_rate=PARAMS["learning_rate"],
                  min_data_in_leaf=PARAMS["min_data_in_leaf"],
                  min_sum_hessian_in_leaf=PARAMS["min_sum_hessian_in_leaf"], max_bin=255, num_threads=threads,
                  verbose=-1, lambdarank_truncation_level=10, deterministic=True, force_row_wise=True)
    ds = lgb.Dataset(data.X, data.y, group=data.group, params=dict(max_bin=255, verbose=-1),
                     free_raw_data=False).construct()

    def fit(n):
        return lgb.train(params, ds, num_boost_round=n)

    return fit


def _xgb(data, threads):
    import xgboost as xgb

    dm = xgb.DMatrix(data.X, data.y, qid=data.doc_qid(), nthread=threads)
    params = dict(objective="rank:ndcg", tree_method="hist", grow_policy="lossguide", max_leaves=10,
                  max_depth=0, eta=0.1, max_bin=255, nthread=threads, min_child_weight=1e-3)

    def fit(n):
        return xgb.train(params, dm, num_boost_round=n)

    return fit


def _ndcg10(y, s, qptr):
    from lrank.metrics import evaluate

    return float(evaluate(y, s, qptr, ["ndcg@10"])["ndcg@10"])


def run(profile: str = "quick") -> list[dict]:
    import numba

    from lrank.data import fetch
    from lrank.data.generators import make_letor_like

    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    quick = profile == "quick"
    train, test = fetch("mslr-sample")
    big = make_letor_like(n_queries=1724, docs_per_query=(80, 152), n_features=136, n_grades=5,
                          random_state=0)
    can2 = numba.config.NUMBA_NUM_THREADS >= 2
    rows = []
    sets = [("MSLR sample (real, 5,000 docs)", train, 41 if quick else 101, 3, (1, 2) if can2 else (1,)),
            (f"make_letor_like ({big.n_docs:,} docs, 136 features)", big, 4 if quick else 21,
             1 if quick else 2, (1,) if quick or not can2 else (1, 2))]
    for what, data, n, reps, threads in sets:
        for kind, ours_name in (("regression", "MART"), ("lambdarank", "LambdaMART (SE)")):
            for th in threads:
                fo = _ours(kind, data, n, th)
                fl = _lgb(kind, data, th)
                fo(2), fl(2)  # compile / warm
                t_o, t_l = _per_tree_pair(fo, fl, n, reps)
                rows.append(dict(benchmark=f"{ours_name} time per tree, {th} thread(s), {what}", ours_s=t_o,
                                 reference=f"LightGBM {kind}", reference_s=t_l, ratio=t_l / t_o,
                                 target=">= 0.667 (within 1.5x of LightGBM)", met=bool(t_o <= 1.5 * t_l),
                                 notes=f"10 leaves, lr 0.1, min_data 20, 254 thresholds; ({n} trees - 1 tree)"
                                       f" / {n - 1}, best of {reps}"))
            if kind == "lambdarank":
                fx = _xgb(data, 1)
                fx(2)
                t_x = _per_tree(fx, n, reps)
                t_o = rows[-len(threads)]["ours_s"]
                rows.append(dict(benchmark=f"LambdaMART (SE) time per tree, 1 thread, {what}", ours_s=t_o,
                                 reference="XGBoost rank:ndcg (hist, lossguide)", reference_s=t_x,
                                 ratio=t_x / t_o, target="(reported)", met=True,
                                 notes="XGBoost's own pair sampling and NDCG settings"))
    # OLE overhead over SE (LambdaMART, MSLR sample)
    n = 21 if quick else 51
    fse = _ours("lambdarank", train, n, 1, "se")
    fole = _ours("lambdarank", train, n, 1, "ole")
    fse(2), fole(2)
    t_se, t_ole = _per_tree_pair(fse, fole, n, 2)
    rows.append(dict(benchmark="LambdaMART OLE vs SE time per tree, 1 thread, MSLR sample", ours_s=t_ole,
                     reference="lrank LambdaMART (SE)", reference_s=t_se, ratio=t_ole / t_se,
                     ratio_kind="ours_s / reference_s (OLE slowdown)", target="(reported; paper: ~1.3)",
                     met=True, notes="exact pairwise second derivatives: pair histograms per node, "
                                     "O(pairs x features) per node"))
    # NDCG@10 after 100 and 500 trees: the MSLR sample (train / test files); in the paper profile also the
    # 200,000-document set (its first 5-fold split)
    evals = [("MSLR sample", train, test, "43 test queries: differences of a few points are within noise")]
    if not quick:
        fold = big.kfold(5, random_state=0, validation=False)[0]
        evals.append(("make_letor_like 200K", fold.train, fold.test, "first of 5 folds"))
    for what, tr, te, note in evals:
        fit_ours = _ours("lambdarank", tr, 0, 1)
        for n in (100, 500):
            ours = _ndcg10(te.y, fit_ours(n).predict(te.X), te.qptr)
            ref = _ndcg10(te.y, _lgb("lambdarank", tr, 1)(n).predict(te.X), te.qptr)
            rows.append(dict(benchmark=f"LambdaMART test NDCG@10 after {n} trees, {what}", ours_s=ours,
                             reference="LightGBM lambdarank", reference_s=ref, ratio=ours - ref,
                             ratio_kind="ours - reference (NDCG@10 difference; columns *_s hold NDCG@10)",
                             target="|difference| <= 0.01", met=bool(abs(ours - ref) <= 0.01), notes=note))
    return rows


if __name__ == "__main__":  # pragma: no cover
    for row in run():
        print(row)
