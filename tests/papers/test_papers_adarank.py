"""lrank.papers.adarank: repeated CV counts a query once, the continuing variant and Fig. 11's held-out
peak run, and the sentence saying whether the printed AdaRank.MAP is BM25 follows the numbers."""

import numpy as np
import pandas as pd
import pytest

from lrank.data.generators import make_letor_like
from lrank.papers import adarank as paper
from lrank.papers import adarank_figures as pf


@pytest.fixture(scope="module")
def toy_result():
    d = make_letor_like(n_queries=15, docs_per_query=(6, 10), n_features=4, n_grades=3, random_state=0)
    exp = paper.Experiment("toy", paper._reindexed(d), 0, 2, "adarank_fig2", "synthetic")
    return paper.run_repeated(exp, seed=1, repeats=2, rankboost_rounds=3, ranksvm_max_pairs=20,
                              scalings=("minmax",), metrics=["map", "ndcg@5"], lc_rounds=4)


def test_repeated_cv_pools_each_query_into_one_unit(toy_result):
    res = toy_result
    t = res.per_query[(res.per_query["split"] == "test") & (res.per_query["method"] == "BM25")
                      & (res.per_query["metric"] == "map")]
    assert sorted(t["fold"].unique()) == list(range(10))  # 2 repetitions x 5 folds, numbered apart
    assert (t.groupby("query").size() == 2).all()  # every query tested once per repetition
    v = res.values("BM25", "map")
    assert len(v) == 15  # n counts queries, not query x repetition
    np.testing.assert_allclose(v, t.groupby("query")["value"].mean())
    methods = set(res.per_query["method"])
    assert {"AdaRank.MAP", "AdaRank.MAP (continuing)", "AdaRank.NDCG (continuing)"} <= methods
    c = res.curves
    assert set(c["variant"]) == set(paper.VARIANTS) and c["peak_round"].between(1, 4).all()
    assert (c.groupby(["variant", "query"]).size() == 2).all()


def test_repetitions_use_distinct_fold_seeds(toy_result):
    d = toy_result.experiment.data
    # seed 1 with 2 repeats uses fold seeds 2 and 3; seed 0 uses 0 and 1: the splits differ
    tests = [tuple(sorted(d.kfold(5, random_state=s, validation=True)[0].test.qid)) for s in range(4)]
    assert len(set(tests)) > 1
    first = toy_result.folds[0].test.qid
    assert sorted(first) == sorted(d.kfold(5, random_state=2, validation=True)[0].test.qid)


def _fr(first_is_bm25: list[bool], feature: int = 7) -> pd.DataFrame:
    rows = [{"fold": i, "method": "AdaRank.MAP", "rounds kept": 1, "first feature": 1 if b else feature,
             "first is BM25": b, "distinct features": 1} for i, b in enumerate(first_is_bm25)]
    return pd.DataFrame(rows)


def test_bm25_phrase_follows_the_counts(toy_result):
    assert "is BM25 here" in pf.bm25_phrase(_fr([True] * 5), toy_result)
    assert "mostly BM25" in pf.bm25_phrase(_fr([True, True, True, False, False]), toy_result)
    text = pf.bm25_phrase(_fr([True, False, False, False, False]), toy_result)
    assert "is not BM25 here" in text and "feature 7 (1-based) in 4" in text
    same, total = pf.same_as_bm25(toy_result)
    assert total == 30 and 0 <= same <= total and f"on {same} of {total}" in text


def test_the_protocol_measures_each_method_under_every_order_of_the_ties(toy_result):
    """Per query: worst first <= file order, random (a mean of shuffles) <= best first; equal for a method
    whose test scores never tie (Ranking SVM on continuous features); the ranges and the verdicts per
    order come from these splits."""
    from lrank import claims
    from lrank.papers import adarank_claims as pc

    res = toy_result
    for method in paper.METHODS:
        for m in ("map", "ndcg@5"):
            file_v = res.values(method, m)
            lo, hi, rnd = (res.values(method, m, f"test-{t}")
                           for t in ("pessimistic", "optimistic", "random"))
            assert len(lo) == len(hi) == len(rnd) == len(file_v) == 15
            assert (lo <= file_v + 1e-12).all() and (file_v <= hi + 1e-12).all()
            assert (lo <= rnd + 1e-12).all() and (rnd <= hi + 1e-12).all()
    np.testing.assert_array_equal(res.values("Ranking SVM", "map", "test-pessimistic"),
                                  res.values("Ranking SVM", "map", "test-optimistic"))
    ranges = pc.tie_ranges(res, metrics=("map", "ndcg@5"))
    assert ranges.loc["Ranking SVM", ("queries", "ties decide")] == 0
    assert ranges.loc["BM25", ("map", "worst")] <= ranges.loc["BM25", ("map", "best")]
    reg = claims.Registry("02_adarank_test", "AdaRank")
    order = paper.file_order(res.experiment.data, metric="ndcg@5", draws=20)
    verdicts, ev = pc.register_ties(reg, res, order)
    assert list(verdicts.columns) == ["file order", "pessimistic", "optimistic", "random"]
    assert len(verdicts) == 12 and ev.n == 15


def test_file_order_detects_an_informative_order():
    """A file that lists each query's best documents first is informative (a positive effect); the same
    documents in a random order are not."""
    from lrank.data.container import RankingData

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    qid = np.repeat(np.arange(40), 10)
    order = np.lexsort((-y, qid))  # within each query, best labels first
    sorted_first = RankingData.from_qid(np.zeros((400, 1), np.float32), y[order], qid)
    f = paper.file_order(sorted_first, draws=50)
    assert (f["file order"] >= f["random order"] - 1e-12).all()
    assert f["file order"].mean() == pytest.approx(1.0)
    shuffled = RankingData.from_qid(np.zeros((400, 1), np.float32), y, qid)
    g = paper.file_order(shuffled, draws=50)
    assert abs(g["file order"].mean() - g["random order"].mean()) < 0.1
