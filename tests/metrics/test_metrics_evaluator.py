"""lrank.metrics.Evaluator: the same bits as evaluate on every path of its kernel, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import lrank.metrics as M

METRICS = ["mean_ndcg", "ndcg@1", "ndcg@5", "ndcg", "dcg@3", "dcg", "map", "err@5", "err", "p@3", "mrr",
           "wta"]


def bits(a):
    """float64 values as integers: equality is bit equality (NaN payloads included, -0.0 != 0.0)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def same(a, b):
    """Two floats (or dicts of floats) equal bit for bit."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bits(np.float64(a)) == bits(np.float64(b))


def queries(seed, n_queries=60, max_size=150):
    """Flat (y, qptr) with empty and one-document queries, all-equal labels, no relevant document, all
    documents relevant, and queries large enough for the bucket path."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, max_size + 1, size=n_queries)
    sizes[:5] = [0, 1, 2, 300, 50]
    if n_queries > 8:
        sizes[8] = 40
    ys = []
    for q, m in enumerate(sizes):
        y = rng.choice(5, size=m, p=[0.5, 0.25, 0.12, 0.08, 0.05])
        if q % 7 == 3:
            y[:] = y[0] if m else y
        if q % 11 == 5:
            y[:] = 0
        if q % 13 == 6:
            y[:] = rng.integers(1, 5, size=m)
        ys.append(y)
    return np.concatenate(ys).astype(np.int64), np.r_[0, np.cumsum(sizes)].astype(np.int64)


def scores_like(rng, qptr, kind):
    """Scores of one kind per call: normal, uniform, rounded (ties), a few values (buckets past the
    insertion limit), a query all tied, infinities, signed zeros, a range too wide for a finite bucket
    width, values a few ulps apart."""
    n = int(qptr[-1])
    s = rng.normal(scale=0.3, size=n)
    if kind == "round":
        s = np.round(s, 1)
    elif kind == "few":
        s = rng.integers(0, 3, n).astype(float) + (rng.random(n) < 0.01) * 100.0
    elif kind == "mixed":
        s[rng.random(n) < 0.1] = -np.inf
        s[rng.random(n) < 0.05] = np.inf
        s[rng.random(n) < 0.1] = 0.0
        s[rng.random(n) < 0.1] = -0.0
        for q in (3, 4):  # queries all tied (3: all-equal labels, 4: mixed labels)
            s[qptr[q]:qptr[q + 1]] = 0.5
        a, b = qptr[8], qptr[9]
        s[a:b] = rng.choice([-1.5e308, 1.5e308, 0.0], size=b - a)  # hi - lo overflows
    elif kind == "uniform":  # dense near the top too: the buckets just below the maximum are used
        s = rng.random(n)
    elif kind == "tiny":
        s = 1.0 + rng.integers(0, 50, n) * 1e-16  # scores a few ulps apart
    return s


def check(y, qptr, s, metrics, **kw):
    ev = M.Evaluator(y, qptr, metrics, **kw)
    want = M.evaluate(y, s, qptr, metrics, per_query=True, **kw)
    table = ev.per_query(s)
    for j, name in enumerate(metrics):
        assert np.array_equal(bits(table[j]), bits(want[name])), (name, kw)
    assert same(ev(s), M.evaluate(y, s, qptr, metrics, **kw))
    assert same(ev.score(s), M.evaluate(y, s, qptr, metrics[:1], **kw)[metrics[0]])


@pytest.mark.parametrize("kind", ["normal", "uniform", "round", "few", "mixed", "tiny"])
@pytest.mark.parametrize("ties", ["stable", "pessimistic", "optimistic"])
def test_same_bits_as_evaluate(kind, ties):
    """Every label-order metric, cut-off and convention: per query, the means and ``score``, bit for bit."""
    rng = np.random.default_rng(abs(hash((kind, ties))) % 2**32)
    y, qptr = queries(11)
    s = scores_like(rng, qptr, kind)
    for gain, discount, empty in (("exp", "jk", 0.0), ("linear", "log2", 1.0), ("exp", "log2", "skip")):
        check(y, qptr, s, METRICS, gain=gain, discount=discount, empty=empty, ties=ties)
    check(y, qptr, s, ["map", "p@5", "mrr", "wta"], rel_threshold=2, ties=ties)


def test_one_evaluator_many_scores():
    """Scratch memory reused over calls leaves no trace: each call equals a fresh evaluate."""
    rng = np.random.default_rng(3)
    y, qptr = queries(4)
    ev = M.Evaluator(y, qptr, ["mean_ndcg", "ndcg@10"], discount="jk")
    for kind in ["normal", "few", "mixed", "uniform", "round", "tiny"] * 2:
        s = scores_like(rng, qptr, kind)
        assert same(ev(s), M.evaluate(y, s, qptr, ["mean_ndcg", "ndcg@10"], discount="jk"))


def test_mslr_like_training_set():
    """The BoostingTree case: ~116 documents a query, three grades, MeanNDCG with JK's discount."""
    rng = np.random.default_rng(5)
    qptr = np.r_[0, np.cumsum(rng.integers(18, 300, 86))].astype(np.int64)
    y = rng.choice(3, size=int(qptr[-1]), p=[0.56, 0.29, 0.15])
    ev = M.Evaluator(y, qptr, ["mean_ndcg"], discount="jk")
    model = np.zeros(y.size)
    for _ in range(20):  # a boosting-like walk: stump steps leave many ties, then fewer
        model = model + rng.normal() * (rng.random(y.size) < 0.5)
        assert same(ev.score(model), M.evaluate(y, model, qptr, ["mean_ndcg"], discount="jk")["mean_ndcg"])


def test_input_dtypes_and_layouts():
    """Integer, float32, bool and strided scores are converted as evaluate converts them."""
    y, qptr = queries(8, n_queries=10, max_size=30)
    rng = np.random.default_rng(8)
    ev = M.Evaluator(y.astype(np.int32), qptr, ["ndcg@5", "mean_ndcg"])
    for s in (rng.integers(0, 4, y.size), rng.normal(size=y.size).astype(np.float32),
              rng.random(y.size) < 0.5, rng.normal(size=2 * y.size)[::2], list(rng.normal(size=y.size))):
        assert same(ev(s), M.evaluate(y, s, qptr, ["ndcg@5", "mean_ndcg"]))


def test_nan_scores_same_error_as_evaluate():
    y, qptr = queries(9, n_queries=8, max_size=20)
    s = np.random.default_rng(9).normal(size=y.size)
    s[[5, 9]] = np.nan
    with pytest.raises(ValueError) as want:
        M.evaluate(y, s, qptr, ["ndcg@5"])
    ev = M.Evaluator(y, qptr, ["ndcg@5"])
    with pytest.raises(ValueError) as got:
        ev(s)
    assert str(got.value) == str(want.value)
    assert "document 5" in str(got.value)
    s[[5, 9]] = 0.0
    assert same(ev(s), M.evaluate(y, s, qptr, ["ndcg@5"]))  # usable after the error


def test_bad_input_names_the_parameter():
    y, qptr = np.array([1, 0, 2, 0]), np.array([0, 2, 4])
    ev = M.Evaluator(y, qptr, "ndcg@2")
    with pytest.raises(ValueError, match=r"scores must have shape \(4,\)"):
        ev(np.zeros(5))
    with pytest.raises(ValueError, match=r"scores must have shape"):
        ev(np.zeros((4, 1)))
    with pytest.raises(ValueError, match="scores must be numeric"):
        ev(np.array(["a", "b", "c", "d"]))
    with pytest.raises(ValueError, match="scores must be numeric"):
        ev(np.array([None] * 4))
    with pytest.raises(ValueError, match="metrics: unknown metric 'ndgc@2'"):
        M.Evaluator(y, qptr, ["ndgc@2"])
    with pytest.raises(ValueError, match="metrics: .*'r1'"):
        M.Evaluator(y, qptr, ["ndcg", "r1"])
    with pytest.raises(ValueError, match="metrics is empty"):
        M.Evaluator(y, qptr, [])
    with pytest.raises(ValueError, match="qptr must"):
        M.Evaluator(y, [0, 3], "ndcg")
    with pytest.raises(ValueError, match="label of document 1"):
        M.Evaluator(np.array([1, -1, 0, 0]), qptr, "ndcg")
    with pytest.raises(ValueError, match="y must be 1-d"):
        M.Evaluator(y.reshape(2, 2), qptr, "ndcg")
    with pytest.raises(ValueError, match="discount must be"):
        M.Evaluator(y, qptr, "ndcg", discount="ln")
    with pytest.raises(ValueError, match="max_grade"):
        M.Evaluator(np.array([5, 0, 0, 0]), qptr, "err@2")


@pytest.mark.parametrize("metrics", [["err@2"], ["ndcg", "err"]])
def test_max_grade_same_error_as_evaluate(metrics):
    """A label above ``max_grade`` with an ``err`` metric: the Evaluator refuses it with `evaluate`'s
    message; without an ``err`` metric both accept it."""
    y, qptr = np.array([0, 6, 1, 0]), np.array([0, 2, 4])
    s = np.array([0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError) as want:
        M.evaluate(y, s, qptr, metrics, max_grade=5)
    with pytest.raises(ValueError) as got:
        M.Evaluator(y, qptr, metrics, max_grade=5)
    assert str(got.value) == str(want.value) == "err@k: label 6 exceeds max_grade=5; raise max_grade"
    assert same(M.Evaluator(y, qptr, ["ndcg"], max_grade=5)(s), M.evaluate(y, s, qptr, ["ndcg"], max_grade=5))


@pytest.mark.parametrize("base", ["ndcgboost", "lambdamart"])
def test_ranking_step_score_is_evaluate(base):
    """The ranking bases' step objects (NDCGBoostStep, LambdaMARTStep: `MeasuredStep.score`) score through
    an Evaluator: the same float as evaluate, for any metric."""
    from lrank import RankingData
    from lrank.models.boostingtree import LambdaMARTBase
    from lrank.models.ndcgboost import NDCGBoostStep

    rng = np.random.default_rng(12)
    qptr = np.r_[0, np.cumsum(rng.integers(1, 40, 12))].astype(np.int64)  # no empty query: RankingData's
    y = rng.integers(0, 3, int(qptr[-1]))
    data = RankingData(X=rng.normal(size=(y.size, 3)), y=y, qptr=qptr)
    for metric in ("mean_ndcg", "ndcg@10", "r2"):
        step = (NDCGBoostStep(data, metric=metric, discount="jk") if base == "ndcgboost"
                else LambdaMARTBase(metric=metric, discount="jk").boosting_step(data))
        for s in (rng.normal(size=y.size), np.round(rng.normal(size=y.size), 1)):
            want = M.evaluate(y, s, qptr, [metric], discount="jk")[metric]
            assert same(step.score(s), want)


@pytest.mark.parametrize("metric, opts", [("mean_ndcg", {"discount": "jk"}), ("ndcg@3", {}), ("r2", {}),
                                          ("expected_ap", {})])
def test_training_measure_is_evaluate_bit_for_bit_and_pickles(metric, opts):
    """`training_measure`: an Evaluator where it applies, `evaluate` otherwise; the same float either way,
    also after a pickle round trip (a step object holding it may be pickled)."""
    import pickle

    from lrank.metrics import Evaluator, evaluate, training_measure

    rng = np.random.default_rng(3)
    qptr = np.array([0, 1, 9, 30, 31, 60])
    y = rng.integers(0, 3, qptr[-1])
    f = training_measure(y, qptr, metric, **opts)
    assert isinstance(getattr(f, "__self__", None), Evaluator) == (metric in ("mean_ndcg", "ndcg@3"))
    g = pickle.loads(pickle.dumps(f))
    for s in (rng.normal(size=y.size), np.round(rng.normal(size=y.size)), np.zeros(y.size)):
        want = float(evaluate(y, s, qptr, [metric], **opts)[metric])
        assert np.array_equal(f(s), want, equal_nan=True) and np.array_equal(g(s), want, equal_nan=True)


@pytest.mark.parametrize("metric, opts", [("map", {"empty": "skip"}),
                                          ("ndcg@3", {"good": 2, "ties": "pessimistic"}),
                                          ("mean_ndcg", {"discount": "jk", "gain": "linear"}), ("r2", {}),
                                          ("expected_ap", {"good": 1})])
def test_per_query_measure_is_evaluate_bit_for_bit_and_pickles(metric, opts):
    """`per_query_measure` (AdaRank's E): an Evaluator's row where it applies (``good``, read only by the
    expected_* metrics, left out), `evaluate` otherwise; the same per-query bits (NaN where skipped) and a
    fresh float64 array either way, also after a pickle round trip."""
    import pickle

    from lrank.metrics import Evaluator, evaluate, per_query_measure

    rng = np.random.default_rng(4)
    qptr = np.array([0, 1, 9, 30, 31, 60, 60, 75])
    y = rng.integers(0, 3, qptr[-1])
    y[31:60] = 0  # a query without a relevant document
    f = per_query_measure(y, qptr, metric, **opts)
    assert isinstance(f.args[0] if f.args else None, Evaluator) == (metric not in ("r2", "expected_ap"))
    g = pickle.loads(pickle.dumps(f))
    for s in (rng.normal(size=y.size), np.round(rng.normal(size=y.size)), np.zeros(y.size)):
        want = np.asarray(evaluate(y, s, qptr, [metric], per_query=True, **opts)[metric], dtype=np.float64)
        for h in (f, g):
            got = h(s)
            assert got.dtype == np.float64 and got.shape == (qptr.size - 1,)
            assert bits(got).tolist() == bits(want).tolist()
    assert f(np.zeros(y.size)) is not f(np.zeros(y.size))


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(8))
def test_evaluator_against_the_plain_reference(seed):
    """The Evaluator's kernel (bucket placing, one-value buckets ranked by position, the merge-sort
    fallback) against the plain reference of `tests/reference/metrics.py`, per query: scores that are sums
    of a few stumps (heavy ties), rounded, continuous; one-document queries, all-equal labels and queries
    without a relevant document (the reference's NaN is the Evaluator's ``empty``)."""
    from lrank.metrics import Evaluator
    from tests.reference import metrics as ref

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 70, size=12)
    sizes[:2] = 1
    qptr = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 3, qptr[-1])
    y[qptr[2]:qptr[3]] = 1                                             # all labels equal
    y[qptr[3]:qptr[4]] = 0                                             # no relevant document
    X = rng.normal(size=(y.size, 4))
    stumps = sum(np.where(X[:, f] > 0, 0.2, -0.1) * (f + 1) for f in range(seed % 4 + 1))
    for s in (stumps, np.round(rng.normal(size=y.size), 1), rng.normal(size=y.size)):
        for name, d, k in (("mean_ndcg", "jk", None), ("ndcg@3", "log2", 3), ("ndcg", "log2", None)):
            got = Evaluator(y, qptr, [name], discount=d).per_query(s)[0]
            for q in range(sizes.size):
                a, b = qptr[q], qptr[q + 1]
                want = (ref.mean_ndcg(y[a:b], s[a:b], d=d) if name == "mean_ndcg"
                        else ref.ndcg(y[a:b], s[a:b], k, d=d))
                want = 0.0 if np.isnan(want) else want
                assert got[q] == pytest.approx(want, rel=1e-12, abs=1e-15), (name, q)


_FIRST_EVALUATION = """
import sys
import numpy as np
import lrank.metrics as M
from lrank._kernels import metrics as K
metric, own, others = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
rng = np.random.default_rng(0)
qptr = np.array([0, 40, 90, 91, 150])
y = rng.integers(0, 4, 150)
s = rng.normal(size=150)
compiled = lambda *names: [n for n in names if getattr(K, n).signatures]
got = [M.Evaluator(y, qptr, [metric]).score(s)]
assert compiled(own) == [own], own
unused = compiled(*others, "_place_merged", "_sort_bucketed")
assert unused == [], unused
s2 = s.copy()
s2[45] = np.inf
got.append(M.Evaluator(y, qptr, [metric]).score(s2))
assert compiled("_place_merged", "_sort_bucketed") == ["_place_merged", "_sort_bucketed"], "an infinite score"
# evaluate (its own kernels) last: it compiles the general paths too
want = [M.evaluate(y, v, qptr, [metric])[metric] for v in (s, s2)]
assert np.array_equal(np.array(got).view(np.int64), np.array(want).view(np.int64)), (got, want)
print("ok")
"""


@pytest.mark.parametrize("metric, own, others", [
    ("mean_ndcg", "_evaluate_fixed_mean", "_evaluate_fixed,_metric_query"),
    ("ndcg@10", "_evaluate_fixed", "_evaluate_fixed_mean,_mean_ndcg_two"),
])
def test_a_first_evaluation_compiles_only_the_paths_it_needs(metric, own, others, tmp_path):
    """Issue 15.5: in a fresh process with an empty numba cache, a MeanNDCG Evaluator compiles its own kernel
    (not `_metric_query`), an NDCG@10 one not MeanNDCG's pair loop, and neither compiles the sort of the
    queries it cannot place (`_place_merged`, `_sort_bucketed`) while no query needs it; scores with an
    infinity make a query need it; the values are `evaluate`'s, bit for bit."""
    import os
    import subprocess
    import sys

    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("NUMBA_DISABLE_JIT")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _FIRST_EVALUATION, metric, own, others], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0 and out.stdout.split()[-1] == "ok", out.stderr[-2000:]


_FIRST_EVALUATE = """
import numpy as np
import lrank.metrics as M
from lrank._kernels import metrics as K
rng = np.random.default_rng(0)
qptr = np.array([0, 40, 90, 91, 150, 400])
y = rng.integers(0, 4, 400)
s = rng.normal(size=400)
wild = s.copy()
wild[[3, 100]] = np.inf  # an infinite score range: the radix sort
wild[200] = 1e300
for scores in (s, np.round(s), wild):
    for ties in ("stable", "pessimistic", "optimistic"):
        M.evaluate(y, scores, qptr, ["ndcg@10", "map", "err@10", "mean_ndcg"], ties=ties)
sorts = ("_sort_bucketed", "_sort_stable", "_sort_block", "_ideal_query")
print(" ".join(n for n in sorts if hasattr(K, n) and getattr(K, n).signatures))
"""


def test_a_first_evaluate_compiles_one_sort(tmp_path):
    """Issue 15.5: `evaluate` of sorted metrics ranks every query with the kernels' one stable sort
    (`_sort_bucketed`: spread, tied and infinite scores, all three tie conventions), so a fresh process
    compiles no merge sort (`_sort_stable`) and no separate ideal-order kernel (`_ideal_query`): 4.8 s
    -> 3.3 s for a first ``evaluate(..., ["ndcg@10", "map", "err@10"])`` (measured, session 16)."""
    import os
    import subprocess
    import sys

    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("NUMBA_DISABLE_JIT")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _FIRST_EVALUATE], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["_sort_bucketed"], out.stdout
