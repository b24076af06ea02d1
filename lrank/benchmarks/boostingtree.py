"""Benchmark: BoostingTree and EXP3.P time per iteration against the standard variant, and the hull.

Issue 7's targets, as ratios measured in one process on the MSLR sample relabelled to three grades
(the quick substitute for MQ2007; a ``make_letor_like`` set of the same shape when the sample is
absent), stumps as weak learners, no validation set:

* time per iteration of the standard variant (unconstrained steps) over that of BoostingTree and of
  EXP3.P (constrained steps), for NDCGBoost and LambdaMART. The paper reports "approximately five to
  ten times faster per iteration" on MQ2007 with stumps (46 features); the ratio grows with the
  number of features, since a constrained step searches one feature instead of all;
* node selection (the hull, step (a)) per round against one boosting step: the paper (footnote 4)
  says selection takes "considerably less time" than the reweighting;
* the tree part alone: an unconstrained stump over a constrained one (histograms of one feature, plus
  feature 0 for the node totals), on the same lambdas. A LambdaMART step also computes the lambdas of
  the whole list (``ndcg_at=0``: O(n_q^2) pairs per query), the same work for both variants, which
  bounds the per-iteration ratio of the LambdaMART base.
"""

from __future__ import annotations

import time

import numpy as np


def _data():
    from lrank.papers.boostingtree import mslr_sample_pooled, three_grades

    try:
        d = mslr_sample_pooled()
        what = "real MSLR sample (86 queries, 136 features) relabelled to 3 grades"
    except Exception:  # noqa: BLE001 - no data: a generated set of the same shape
        from lrank.data.generators import make_letor_like

        d = make_letor_like(n_queries=86, docs_per_query=116, n_features=136, n_grades=5, random_state=0)
        what = "substitute: make_letor_like(86 x 116 docs, 136 features)"
    return three_grades(d), what


def run(profile: str = "quick") -> list[dict]:
    """Rows: standard / BoostingTree and standard / EXP3.P per-iteration ratios (two bases), and
    step / selection time per round."""
    from lrank.models.boostingtree import BoostingTree, Exp3P, LambdaMARTBase, Standard
    from lrank.models.ndcgboost import NDCGBoost

    data, what = _data()
    n_std, n_bt = (20, 100) if profile == "quick" else (200, 1000)
    rows = []
    for bname, base in (("NDCGBoost", NDCGBoost()), ("LambdaMART", LambdaMARTBase())):
        Standard(base, n_estimators=2).fit(data)  # compile / warm caches
        t0 = time.perf_counter()
        Standard(base, n_estimators=n_std).fit(data)
        std = (time.perf_counter() - t0) / n_std
        t0 = time.perf_counter()
        bt = BoostingTree(base, n_estimators=n_bt, random_state=0).fit(data)
        bts = (time.perf_counter() - t0) / n_bt
        t0 = time.perf_counter()
        Exp3P(base, n_estimators=n_bt, random_state=0).fit(data)
        exs = (time.perf_counter() - t0) / n_bt
        for name, ours in (("BoostingTree", bts), ("EXP3.P", exs)):
            r = std / ours
            rows.append({"benchmark": f"{name}({bname}) time per iteration, stumps", "ours_s": ours,
                         "reference": f"standard {bname} (unconstrained stump steps)", "reference_s": std,
                         "ratio": r, "target": "5-10x faster per iteration (paper, MQ2007, 46 features)",
                         "met": bool(r >= 5.0),
                         "notes": f"{what}; {n_std} standard / {n_bt} {name} iterations; per-iteration "
                                  "time includes the training-measure evaluation; machine shared"})
        h = bt.rounds_
        sel = float(h["select_s"].sum() / len(h))
        step = float(h["step_s"].sum() / max(int(h["round_length"].sum()), 1))
        rows.append({"benchmark": f"BoostingTree({bname}) node selection per round vs one step",
                     "ours_s": sel, "reference": "one constrained boosting step (incl. model recompute)",
                     "reference_s": step, "ratio": step / sel if sel > 0 else float("inf"),
                     "ratio_kind": "step_s / select_s",
                     "target": "selection considerably cheaper than a boosting step (paper, footnote 4)",
                     "met": bool(sel < step), "notes": f"{what}; {n_bt} sequences, {len(h)} rounds"})
    rows.append(_tree_rows(data, what, n_bt))
    return rows


def _tree_rows(data, what: str, n: int) -> dict:
    """Unconstrained stump fit over a constrained one (tree only), on one set of whole-list lambdas."""
    from lrank._kernels.lambdas import lambdamart_gradients
    from lrank.data.binning import bin_features
    from lrank.weak.tree import RegressionTree

    bins = bin_features(data.X, strategy="quantile")
    codes, nb, th = bins.codes, bins.n_bins, bins.thresholds
    rng = np.random.default_rng(0)
    s = rng.normal(size=data.n_docs)
    lambdamart_gradients(data.y, data.qptr, s, k=0)  # compile / load
    t0 = time.perf_counter()
    lam, w, _ = lambdamart_gradients(data.y, data.qptr, s, k=0)
    lam_s = time.perf_counter() - t0
    ws = None

    def per_fit(constrained: bool) -> float:
        nonlocal ws
        t0 = time.perf_counter()
        for _ in range(n):
            cons = int(rng.integers(data.n_features)) if constrained else None
            t = RegressionTree(num_leaves=2, min_child_samples=1, feature_constraint=cons).fit_gradients(
                codes, -lam, w, n_bins=nb, thresholds=th, workspace=ws)
            ws = t.workspace_
        return (time.perf_counter() - t0) / n

    per_fit(True), per_fit(False)  # compile / warm
    con, unc = per_fit(True), per_fit(False)
    return {"benchmark": "constrained stump tree vs unconstrained (tree only, LambdaMART lambdas given)",
            "ours_s": con, "reference": "unconstrained stump tree (all features' histograms)",
            "reference_s": unc, "ratio": unc / con, "target": "5-10x (paper, per iteration, MQ2007)",
            "met": bool(unc / con >= 5.0),
            "notes": f"{what}; {n} fits each, workspace reused; whole-list lambdas of one step take "
                     f"{lam_s * 1e3:.1f} ms (not included); machine shared"}
