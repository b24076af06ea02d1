"""lrank.metrics against independent tools: ir-measures (trec_eval, gdeval) and sklearn.ndcg_score."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lrank.metrics as M
from tests.reference import metrics as ref

ir_measures = pytest.importorskip("ir_measures")
EXP_GAINS = {g: 2**g - 1 for g in range(5)}


def tie_free(seed, n_queries=25, min_size=2, max_size=30):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_size, max_size + 1, size=n_queries)
    y = rng.choice(5, p=[0.5, 0.2, 0.15, 0.1, 0.05], size=int(sizes.sum()))
    y[: sizes[0]] = 0  # one query without a relevant document
    s = rng.normal(size=y.size)  # continuous: no ties
    qp = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return y, s, qp


def to_trec(y, s, qp):
    qrels, run = [], []
    for q in range(qp.size - 1):
        for i in range(qp[q], qp[q + 1]):
            qrels.append(ir_measures.Qrel(str(q + 1), f"d{i}", int(y[i])))
            run.append(ir_measures.ScoredDoc(str(q + 1), f"d{i}", float(s[i])))
    return qrels, run


def per_query_values(provider, measure, qrels, run, nq):
    out = np.full(nq, np.nan)
    for m in provider.iter_calc([measure], qrels, run):
        out[int(m.query_id) - 1] = m.value
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_against_trec_eval(seed):
    y, s, qp = tie_free(seed)
    nq = qp.size - 1
    qrels, run = to_trec(y, s, qp)
    ours = M.evaluate(y, s, qp, ["ndcg@5", "ndcg@10", "ndcg", "map", "p@5", "p@10", "mrr"], per_query=True)
    pte = ir_measures.pytrec_eval
    checks = [
        ("ndcg@5", ir_measures.nDCG(gains=EXP_GAINS) @ 5),
        ("ndcg@10", ir_measures.nDCG(gains=EXP_GAINS) @ 10),
        ("ndcg", ir_measures.nDCG(gains=EXP_GAINS)),
        ("map", ir_measures.AP),
        ("p@5", ir_measures.P @ 5),
        ("p@10", ir_measures.P @ 10),
        ("mrr", ir_measures.RR),
    ]
    for name, measure in checks:
        theirs = per_query_values(pte, measure, qrels, run, nq)
        # trec_eval reports every query, and scores one without a relevant document 0 (our default empty)
        assert not np.isnan(theirs).any() and theirs[0] == 0.0
        np.testing.assert_allclose(ours[name], theirs, rtol=0, atol=1e-9, err_msg=name)


def test_ap_rel_threshold_against_trec_eval():
    y, s, qp = tie_free(3)
    qrels, run = to_trec(y, s, qp)
    ours = M.evaluate(y, s, qp, ["map"], per_query=True, rel_threshold=2)["map"]
    theirs = per_query_values(ir_measures.pytrec_eval, ir_measures.AP(rel=2), qrels, run, qp.size - 1)
    assert not np.isnan(theirs).any()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_err_and_ndcg_against_gdeval():
    y, s, qp = tie_free(4)
    qrels, run = to_trec(y, s, qp)
    nq = qp.size - 1
    ours = M.evaluate(y, s, qp, ["err@10", "ndcg@10"], per_query=True, empty="skip")
    g = ir_measures.gdeval
    err = per_query_values(g, ir_measures.ERR @ 10, qrels, run, nq)
    ndcg = per_query_values(g, ir_measures.nDCG @ 10, qrels, run, nq)
    has_rel = ~np.isnan(ours["ndcg@10"])
    assert has_rel.sum() >= 10
    # gdeval prints 5 decimals: agreement to its printed precision
    np.testing.assert_allclose(ours["err@10"][has_rel], err[has_rel], rtol=0, atol=5.01e-6)
    np.testing.assert_allclose(ours["ndcg@10"][has_rel], ndcg[has_rel], rtol=0, atol=5.01e-6)
    # and to 1e-12 against our plain reference of gdeval's formula
    want = ref.per_query(ref.err, y, s, qp, k=10)
    np.testing.assert_allclose(ours["err@10"][has_rel], want[has_rel], rtol=0, atol=1e-12)


def test_against_lightgbm_ndcg_with_ties():
    """LightGBM's ndcg@k: same gain and discount, an all-irrelevant query scores 1 (empty=1.0), and ties
    are broken by document order (its stable sort), exactly lrank's ties="stable"."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(8)
    sizes = rng.integers(2, 25, size=30)
    n = int(sizes.sum())
    y = rng.choice(5, p=[0.5, 0.2, 0.15, 0.1, 0.05], size=n)
    y[: sizes[0]] = 0
    s = rng.integers(0, 3, size=n).astype(float)  # many ties
    # a model that cannot split a constant feature and barely moves: its scores are init_score + c
    ds = lgb.Dataset(np.zeros((n, 1)), y, group=sizes, init_score=s)
    res: dict = {}
    lgb.train(dict(objective="lambdarank", metric="ndcg", eval_at=[1, 5, 10], learning_rate=1e-12, verbose=-1,
                   num_threads=1), ds, num_boost_round=1, valid_sets=[ds], valid_names=["t"],
              callbacks=[lgb.record_evaluation(res)])
    qp = np.r_[0, np.cumsum(sizes)]
    for k in (1, 5, 10):
        ours = M.evaluate(y, s, qp, [f"ndcg@{k}"], empty=1.0)[f"ndcg@{k}"]
        assert ours == pytest.approx(res["t"][f"ndcg@{k}"][0], abs=1e-12)
        pess = M.evaluate(y, s, qp, [f"ndcg@{k}"], empty=1.0, ties="pessimistic")[f"ndcg@{k}"]
        assert pess < ours  # the ties matter on this input


@pytest.mark.parametrize("k", [1, 3, 10, None])
def test_against_sklearn_ndcg_tie_free(k):
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(5)
    nq, m = 30, 12
    y = rng.integers(0, 5, size=(nq, m))
    s = rng.normal(size=(nq, m))
    y[0] = 0  # sklearn scores an all-irrelevant query 0, as our default empty=0.0
    qp = np.arange(0, nq * m + 1, m)
    ours = M.ndcg(y.ravel(), s.ravel(), qp, k=k, gain="linear")
    theirs = np.array([ndcg_score(y[i:i + 1], s[i:i + 1], k=k) for i in range(nq)])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert M.evaluate(y.ravel(), s.ravel(), qp, [f"ndcg@{k}" if k else "ndcg"], gain="linear")[
        f"ndcg@{k}" if k else "ndcg"
    ] == pytest.approx(ndcg_score(y, s, k=k), abs=1e-12)


def test_sklearn_tie_handling_is_the_average_over_tie_orders():
    """sklearn averages gains inside tie groups; lrank breaks ties deterministically (documented).

    sklearn's value is the mean NDCG over every tie order, and lies between lrank's pessimistic and
    optimistic values.
    """
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(6)
    for _ in range(20):
        m = 6
        y = rng.integers(0, 4, size=m)
        if y.max() == 0:
            y[0] = 1
        s = rng.integers(0, 3, size=m).astype(float)
        qp = np.array([0, m])
        for k in (2, 4, None):
            sk = ndcg_score(y[None], s[None], k=k)
            kk = m if k is None else k
            ideal = ref.dcg_at(np.sort(y)[::-1], kk, "linear")
            dcgs = [ref.dcg_at(lab, kk, "linear") for lab in ref.tie_orders(y, s)]
            mean_over_orders = np.mean(dcgs) / ideal
            assert sk == pytest.approx(mean_over_orders, abs=1e-12)
            lo = M.ndcg(y, s, qp, k=k, gain="linear", ties="pessimistic")[0]
            hi = M.ndcg(y, s, qp, k=k, gain="linear", ties="optimistic")[0]
            assert lo - 1e-12 <= sk <= hi + 1e-12


@st.composite
def queries(draw):
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=6))
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 1.0, 2.0, 1e300]),
                               min_size=n, max_size=n)))
    qp = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return y, s, qp


@settings(max_examples=60, deadline=None)
@given(queries())
def test_properties(data):
    y, s, qp = data
    names = ["ndcg@3", "ndcg", "mean_ndcg", "map", "err@5", "mrr", "p@2"]
    res = {t: M.evaluate(y, s, qp, names, per_query=True, ties=t, empty="skip")
           for t in ("pessimistic", "stable", "optimistic")}
    for name in names:
        lo, mid, hi = res["pessimistic"][name], res["stable"][name], res["optimistic"][name]
        ok = ~np.isnan(mid)
        assert np.all((lo[ok] <= mid[ok] + 1e-12) & (mid[ok] <= hi[ok] + 1e-12)), name
        assert np.all((mid[ok] >= -1e-12) & (mid[ok] <= 1 + 1e-12)), name
    pairs = M.evaluate(y, s, qp, ["r1", "r2", "expected_disagreement"], per_query=True)
    ok = ~np.isnan(pairs["r1"])
    assert np.all(pairs["r1"][ok] >= pairs["r2"][ok] - 1e-15)
    np.testing.assert_allclose(pairs["r2"], pairs["expected_disagreement"], atol=1e-12)
    exp = M.evaluate(y, s, qp, ["expected_ap", "expected_prot", "expected_coverage"], per_query=True)
    for name, v in exp.items():
        assert np.all((v >= -1e-12) & (v <= 1 + 1e-12)), name
    # with ties broken at random, AP is at most the optimistic AP and at least the pessimistic one
    e_ap = M.evaluate(y, s, qp, ["expected_ap"], per_query=True, good=1, empty="skip")["expected_ap"]
    ok = ~np.isnan(e_ap)
    assert np.all(res["pessimistic"]["map"][ok] <= e_ap[ok] + 1e-12)
    assert np.all(e_ap[ok] <= res["optimistic"]["map"][ok] + 1e-12)
