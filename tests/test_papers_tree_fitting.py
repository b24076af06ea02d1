"""lrank.papers.tree_fitting: the printed tables' counts, the verdict helpers and the protocol runner."""

import numpy as np
import pytest

from lrank.data.generators import make_letor_like
from lrank.papers import tree_fitting as tf


def test_paper_table_wins():
    assert tf.paper_table_wins(0.1) == {"McRank": 46, "LambdaMART": 40}
    assert tf.paper_table_wins(0.0) == {"McRank": 47, "LambdaMART": 45}  # 1 and 3 printed losses


@pytest.mark.parametrize("wins,n,expected", [(40, 48, "HELD"), (8, 48, "NOT HELD"), (27, 48, "UNDECIDED"),
                                             (5, 6, "UNDECIDED")])
def test_claim_most_comparisons(wins, n, expected):
    c = tf.claim_most_comparisons(wins, n)
    assert c["verdict"] == expected and c["n"] == n and 0 < c["p_value"] <= 1


def test_protocol_runner_tables_and_query_level_verdict():
    data = make_letor_like(n_queries=15, docs_per_query=(8, 12), n_features=5, n_grades=3, random_state=0)
    folds = data.kfold(3, random_state=0, validation=False)
    curves, queries = tf.run_protocol({"toy": folds}, {"LambdaMART": 2, "McRank": 2}, leaves=(4,),
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
    q = tf.query_level_comparison(queries, "toy", "LambdaMART")
    assert q["n"] == data.n_queries and q["verdict"] in ("HELD", "NOT HELD", "UNDECIDED")
    t = tf.table_2_3(last, "toy", "MSLR-WEB10K")
    assert list(t.columns[:4]) == list(tf.METRICS) and len(t) == 2
