"""Benchmark: LambdaMART's gradient call at scale against LightGBM's lambdarank objective (issue 15.1).

What a LambdaMART tree costs beyond a MART tree is mostly its gradients: per query a sort of the current
scores and the NDCG@k pairs. This module times that part alone on both sides, on the ``make_letor_like``
sets of :mod:`lrank.benchmarks.scale` (136 features, 5 grades, 80-152 documents per query, seed 0; 200k
documents in the quick profile, 1M in the paper profile), 1 and 2 threads:

* lrank: one call of ``lambdamart_gradients(y, qptr, scores, k=10, n_jobs=threads)`` (what
  ``LambdaMART`` calls once per tree; its parallel twin from 50,000 documents), on the scores of a
  5-tree lrank LambdaMART model (ties and spread as in a fit);
* LightGBM: its objective's cost per tree, which its API does not expose alone: the time per tree of
  ``objective="lambdarank"`` (``lambdarank_truncation_level=10``, ``lambdarank_norm=False``: lrank's
  objective) minus the time per tree of the same training with a Python objective returning fixed
  gradients and hessians, both on the set's first feature only (same labels and queries: the objective
  does not depend on the features, and a one-feature tree costs little, so the difference is the
  objective and not two trees grown differently; with all 136 features the tree noise at 1M documents
  swamped it). The Python objective's own cost (a call and LightGBM copying two arrays) stays in the
  subtracted figure, so LightGBM's objective comes out slightly *cheaper* than it is (in its favour).
  Per tree is ``(T(n) - T(1)) / (n - 1)``, alternated with lrank's call, medians over repeats.

The notes also give LightGBM's lambdarank minus regression per tree on the same one-feature set.
"""

from __future__ import annotations

import time

import numpy as np

from lrank.benchmarks import _timing as T


def _letor_like(profile: str):
    from lrank.benchmarks.scale import _letor_like as make

    return make(1724 if profile == "quick" else 8620)


def _scores(d) -> np.ndarray:
    """Training scores of a 5-tree lrank LambdaMART model on ``d`` (10 leaves, lr 0.1)."""
    from lrank.data.binning import bin_features
    from lrank.models.gbrt import LambdaMART

    bins = bin_features(d.X, max_thresholds=254, threshold_strategy="quantile")
    m = LambdaMART(**T.kwargs_for(LambdaMART, n_estimators=5, num_leaves=10, learning_rate=0.1,
                                  min_child_samples=20), criterion="se", ndcg_at=10,
                   lambdarank_truncation_level=None, lambdarank_norm=False)  # the NDCG@10 lambdas timed here
    m._fit_binned(d, bins)
    return np.ascontiguousarray(m.predict(d.X), dtype=np.float64)


def _lgb_fitters(d, threads: int, grad: np.ndarray, hess: np.ndarray):
    import lightgbm as lgb

    base = dict(num_leaves=10, learning_rate=0.1, min_data_in_leaf=20, min_sum_hessian_in_leaf=1e-3,
                max_bin=255, num_threads=threads, verbose=-1, deterministic=True, force_row_wise=True)
    x1 = np.ascontiguousarray(d.X[:, :1])  # the objective does not depend on the features (module doc)
    ds = lgb.Dataset(x1, d.y, group=d.group, params=dict(max_bin=255, verbose=-1),
                     free_raw_data=False).construct()

    def fixed(preds, data):  # the same trees' work without an objective: fixed gradients and hessians
        return grad, hess

    rank = dict(objective="lambdarank", lambdarank_truncation_level=10, lambdarank_norm=False)
    kinds = {"lambdarank": rank, "fixed": dict(objective=fixed), "regression": dict(objective="regression")}
    return {k: (lambda n, p={**base, **v}: lgb.train(p, ds, num_boost_round=n)) for k, v in kinds.items()}


def _fit_seconds(fit, n: int) -> float:
    t0 = time.perf_counter()
    fit(1)
    t1 = time.perf_counter()
    fit(n)
    t2 = time.perf_counter()
    return max((t2 - t1) - (t1 - t0), 1e-9) / (n - 1)


def run(profile: str = "quick") -> list[dict]:
    """Rows: lrank's gradient call vs LightGBM's lambdarank objective per tree, 1 and 2 threads."""
    from lrank._kernels.lambdas import lambdamart_gradients
    from lrank.models.gbrt import _lambda_jobs

    d = _letor_like(profile)
    scores = _scores(d)
    lam, w, _ = lambdamart_gradients(d.y, d.qptr, scores, k=10)
    grad, hess = -lam, w
    n, reps = 11, 3
    what = f"make_letor_like ({d.n_docs:,} docs x 136 features)"
    threads = T.thread_counts()
    rows = []
    for th in threads:
        with T.threads(th) as th:
            ld = T.settle()
            fits = _lgb_fitters(d, th, grad, hess)
            jobs = _lambda_jobs(th, d.n_docs)
            call = lambda jobs=jobs: lambdamart_gradients(d.y, d.qptr, scores, k=10, n_jobs=jobs)  # noqa: E731
            call(), fits["lambdarank"](2), fits["fixed"](2), fits["regression"](2)
            ours, lr, fx, rg = [], [], [], []
            for _ in range(reps):
                ours.append(T.median_seconds(call))
                lr.append(_fit_seconds(fits["lambdarank"], n))
                fx.append(_fit_seconds(fits["fixed"], n))
                rg.append(_fit_seconds(fits["regression"], n))
                ours.append(T.median_seconds(call))
            o = float(np.median(ours))
            obj = float(np.median(np.array(lr) - np.array(fx)))
            vs_reg = float(np.median(np.array(lr) - np.array(rg)))
        rows.append(T.row(
            f"LambdaMART gradients per tree (lambdas + weights, NDCG@10), {what}", o,
            "LightGBM lambdarank objective per tree (lambdarank minus fixed-gradient training, one feature)",
            obj,
            target=">= 1.0 (issue 15.1: lambdas as cheap as LightGBM's)", ok=obj / o >= 1.0, threads=th,
            repeats=reps, timing="wall, alternated (lrank call, LightGBM fits), median", load=ld,
            notes=f"lrank: one lambdamart_gradients call (n_jobs={jobs}) on a 5-tree model's scores, median "
                  f"of 5 calls per repeat; LightGBM: ({n} trees - 1 tree) / {n - 1} of lambdarank "
                  f"(truncation 10, lambdarank_norm=False) minus the same with a Python objective returning "
                  f"fixed gradients, on the first feature only (its call and copies favour LightGBM); "
                  f"LightGBM lambdarank minus regression per tree on that set: {vs_reg * 1e3:.1f} ms"))
    return rows


if __name__ == "__main__":  # pragma: no cover
    for row in run():
        print(row)
