"""lrank.papers.tree_fitting: the printed tables' counts, the verdict helpers and the protocol runner."""

import numpy as np
import pandas as pd
import pytest

from lrank.data.generators import make_letor_like
from lrank.papers import tree_fitting as tf


def test_paper_table_wins():
    assert tf.paper_table_wins(0.1) == {"McRank": 46, "LambdaMART": 40}
    assert tf.paper_table_wins(0.0) == {"McRank": 47, "LambdaMART": 45}  # 1 and 3 printed losses


def test_protocol_runner_tables_and_registry_rows():
    from lrank import claims
    from lrank.papers import tree_fitting_claims as tfc

    data = make_letor_like(n_queries=15, docs_per_query=(8, 12), n_features=5, n_grades=3, random_state=0)
    folds = data.kfold(3, random_state=0, validation=False)
    curves, queries, objective = tf.run_protocol({"toy": folds}, {"LambdaMART": 2, "McRank": 2}, leaves=(4,),
                                      rates=(0.1,))
    assert set(curves["round"]) == {1, 2}
    # every query tested once per (system, criterion, metric)
    per = queries.groupby(["system", "criterion", "metric"])["query"].nunique()
    assert (per == data.n_queries).all()
    last = tf.results_table(queries)
    assert len(last) == 2 * len(tf.METRICS)
    np.testing.assert_allclose(last["OLE - SE"], last["ole"] - last["se"])
    counts = tf.win_counts(last)
    assert (counts["comparisons"] == len(tf.METRICS)).all()
    # every query trains in 2 of the 3 folds: one loss per (system, criterion, fold it trains in)
    per = objective.groupby(["system", "criterion", "query"]).size()
    assert (per == 2).all() and per.index.get_level_values("query").nunique() == data.n_queries
    assert (objective["loss"] >= 0).all()
    reg = claims.Registry("t", "toy")
    t23 = tfc.tables23_rows(reg, queries, tf.win_counts(last, by=["data", "system"]), ["toy"], {"toy": "toy"},
                            "quick", {"LambdaMART": 2, "McRank": 2})
    assert (t23["queries"] == data.n_queries).all()  # the unit is the query, not the 4 comparisons
    gain = tfc.per_query_gain(queries, "toy", "McRank")
    assert gain.mean() == pytest.approx(t23.loc[t23.system == "McRank", "OLE - SE (points)"].item())
    obj = tfc.objective_rows(reg, objective, ["toy"], {"toy": "toy"}, "quick")
    assert (obj["training queries"] <= data.n_queries).all()
    df = reg.finalize(record=False, write=False)
    assert set(df.loc[df["id"].str.startswith("tables23."), "verdict"]) == {"NOT COMPARABLE"}  # 2 trees
    assert set(df.loc[df["id"].str.startswith("objective."), "verdict"]) <= {"HELD", "NOT HELD", "UNDECIDED"}
    t = tf.table_2_3(last, "toy", "MSLR-WEB10K")
    assert list(t.columns[:4]) == list(tf.METRICS) and len(t) == 2


def test_lambdamart_objective_gradient_is_minus_the_kernels_lambdas():
    """The loss the notebook calls LambdaMART's objective: its gradient (dZ held) is -lambda, on queries
    with ties in the scores, one-document queries, all-equal labels and no relevant document."""
    from lrank._kernels.lambdas import lambdamart_gradients

    rng = np.random.default_rng(3)
    sizes = [1, 5, 12, 30, 3, 8, 4]
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    y = rng.integers(0, 5, qptr[-1]).astype(np.int32)
    y[qptr[4]:qptr[5]] = 2  # all labels equal
    y[qptr[6]:qptr[7]] = 0  # no relevant document
    s = rng.normal(size=qptr[-1])
    s[qptr[2]:qptr[2] + 4] = 0.3  # ties
    for k, sigma in ((10, 1.0), (3, 2.0), (0, 0.5)):
        loss, grad = tf.lambdamart_objective(y, qptr, s, k, sigma, return_grad=True)
        lam = lambdamart_gradients(y, qptr, s, k=k, sigma=sigma)[0]
        np.testing.assert_allclose(grad, -lam, rtol=1e-12, atol=1e-14)
        assert loss[0] == loss[4] == loss[6] == 0 and (loss[[1, 2, 3, 5]] > 0).all()
    # a better-ordered list has the smaller loss
    order = np.argsort(-y[qptr[3]:qptr[4]], kind="stable")
    good = s.copy()
    good[qptr[3]:qptr[4]] = np.linspace(3, -3, sizes[3])[np.argsort(order)]
    assert tf.lambdamart_objective(y, qptr, good)[3] < tf.lambdamart_objective(y, qptr, s)[3]


def test_training_objective_refuses_other_lambdas():
    from lrank.models.gbrt import LambdaMART

    data = make_letor_like(n_queries=6, docs_per_query=(4, 6), n_features=3, n_grades=3, random_state=0)
    est = LambdaMART(n_estimators=1, num_leaves=2, min_child_samples=1).fit(data)
    with pytest.raises(ValueError, match="lambdarank_truncation_level"):
        tf.training_objective(est, data)
    with pytest.raises(TypeError, match="McRank or LambdaMART"):
        tf.training_objective(object(), data)


def test_repeated_splits_pool_each_query_once():
    """Fold seeds: seed k gets splits k R .. k R + R - 1; under several splits a query is tested once per
    split, its per-query values are averaged (one unit), and Table 1 counts it once."""
    assert tf.fold_seeds("quick", 0) == [0, 1, 2] and tf.fold_seeds("quick", 2) == [6, 7, 8]
    assert tf.fold_seeds("paper", 3) == [3]
    assert tf.splits_note("paper", 0) == "5 folds" and "(0, 1, 2)" in tf.splits_note("quick", 0)
    from lrank import claims
    from lrank.papers import tree_fitting_claims as tfc

    data = make_letor_like(n_queries=12, docs_per_query=(8, 12), n_features=5, n_grades=3, random_state=1)
    folds = [f for s in (0, 1) for f in data.kfold(3, random_state=s, validation=False)]
    stats = tf.dataset_stats(folds, "toy")
    assert stats["#Query"] == data.n_queries and stats["#Doc."] == data.n_docs
    _, queries, _ = tf.run_protocol({"toy": folds}, {"LambdaMART": 2, "McRank": 2}, leaves=(4,), rates=(0.1,))
    per = queries.groupby(["system", "criterion", "metric", "query"]).size()
    assert (per == 2).all()  # tested once in each of the two splits
    reg = claims.Registry("t", "toy")
    t23 = tfc.tables23_rows(reg, queries, tf.win_counts(tf.results_table(queries), by=["data", "system"]),
                            ["toy"], {"toy": "toy"}, "quick", {"LambdaMART": 2, "McRank": 2})
    assert (t23["queries"] == data.n_queries).all()  # pooled over the splits, each query one unit


def test_unstaged_protocol_gives_the_same_last_iteration_and_no_curves():
    """``staged=False`` (the depth-first comparison's runs) skips the curves and the training objective; the
    last iteration's per-query values are those of the staged run, bit for bit."""
    data = make_letor_like(n_queries=9, docs_per_query=(8, 12), n_features=5, n_grades=3, random_state=2)
    folds = data.kfold(3, random_state=0, validation=False)
    kw = dict(leaves=(4,), rates=(0.1,), tree_kw={**tf.TREE_KW, "growth": "depth_first"})
    curves, queries, objective = tf.run_protocol({"toy": folds}, {"LambdaMART": 2, "McRank": 2}, **kw)
    c0, q0, o0 = tf.run_protocol({"toy": folds}, {"LambdaMART": 2, "McRank": 2}, staged=False, **kw)
    assert len(curves) and len(objective) and c0.empty and o0.empty
    pd.testing.assert_frame_equal(q0, queries)


def test_depth_first_rows_and_table1_rows():
    """The depth-first comparison is oriented width minus depth (positive supports the paper) and needs
    both criteria; Table 1 is NOT COMPARABLE on the MSLR sample and NOT TESTABLE for Yahoo! without it."""
    import pandas as pd

    from lrank import claims
    from lrank.papers import tree_fitting_claims as tfc

    rows = [(s, lv, tf.DEPTH_FIRST_RATE, c, 0, f"toy:{q}", m, 50.0) for s in tf.SYSTEMS for lv in tf.LEAVES
            for c in tf.CRITERIA for q in range(30) for m in tf.METRICS]
    cols = ["data", "system", "leaves", "lr", "criterion", "fold", "query", "metric", "value"]
    width = pd.DataFrame([("toy", *r) for r in rows], columns=cols)
    rng = np.random.default_rng(0)
    depth = width.copy()
    depth["value"] = 50.0 - rng.uniform(1, 3, len(depth))  # depth-first clearly worse everywhere
    for worse_crit, verdict in ((None, "HELD"), ("ole", "NOT HELD")):
        d = depth.copy()
        if worse_crit:  # OLE better depth-first: the claim fails on that part
            sel = d["criterion"] == worse_crit
            d.loc[sel, "value"] = 50.0 + rng.uniform(1, 3, int(sel.sum()))
        reg = claims.Registry("t", "toy")
        out = tfc.depth_first_rows(reg, width, d, ["toy"], {"toy": "toy"}, "quick",
                                   {"LambdaMART": 2, "McRank": 2})
        assert list(out["queries"]) == [30, 30]
        df = reg.finalize(record=False, write=False)
        assert df.loc[df["id"] == "depth_first.poor", "verdict"].item() == verdict
    reg = claims.Registry("t", "toy")
    stats = [{"#Feat.": 136, "#D./#Q.": 58.1, "#Query": 86}]
    tfc.table1_rows(reg, stats, ["MSLR"], {"MSLR": "MSLR (real)"}, "quick")
    df = reg.finalize(record=False, write=False).set_index("id")
    assert df.loc["table1.mslr", "verdict"] == claims.NOT_COMPARABLE
    assert df.loc["table1.yahoo", "verdict"] == claims.NOT_TESTABLE
