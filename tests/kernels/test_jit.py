"""What a first fit compiles (issue 15.5): lrank's dispatcher compiles one specialisation per kernel (no
literal duplicates) with the same bits as numba's own, parallel kernels are cached and their cached code
agrees with the serial twins on any thread count, and the ideal-label merge sort agrees with np.sort."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lrank._kernels import metrics as K
from lrank._kernels._jit import LrankDispatcher, njit
from lrank.paths import repo_dir


@njit(cache=False)
def _inner(x, k):
    return x + k


@njit(cache=False)
def _outer(x):
    k = 0  # Literal[int](0) first, widened to int64 by the loop
    for i in range(3):
        k += i
    return _inner(x, 0) + _inner(x, k)


def test_a_literal_argument_compiles_no_second_specialisation():
    assert isinstance(_outer, LrankDispatcher)
    assert _outer(1) == 1 + 1 + 3
    assert [str(s) for s in _inner.signatures] == ["(int64, int64)"]


@njit(cache=False)
def _gc_probe_inner(x):
    return x * 2.0


@njit(cache=False)
def _gc_probe(x):
    return _gc_probe_inner(x) + 1.0


@njit(cache=False)
def _gc_probe_bad(x):
    return x.no_such_attribute


def test_the_garbage_collector_is_paused_while_a_kernel_compiles_and_restored_after():
    """Issue 15.5: `LrankDispatcher.compile` pauses Python's cyclic collector during a compilation (its
    outermost one: the callee compiled inside its caller sees it paused too) and restores its state after,
    also when the compilation fails, and leaves it off when it was off."""
    import gc

    from numba.core import event

    seen = []

    class Listener(event.Listener):
        def on_start(self, ev):
            seen.append((ev.data["dispatcher"].py_func.__name__, gc.isenabled()))

        def on_end(self, ev):
            pass

    listener = Listener()
    event.register("numba:compile", listener)
    was = gc.isenabled()
    try:
        gc.enable()
        assert _gc_probe(1.0) == 3.0
        assert gc.isenabled()
        assert ("_gc_probe", False) in seen and ("_gc_probe_inner", False) in seen, seen
        with pytest.raises(Exception, match="no_such_attribute"):
            _gc_probe_bad(1.0)
        assert gc.isenabled(), "a failed compilation left the collector paused"
        gc.disable()
        assert _gc_probe(np.float32(1.0)) == 3.0  # a new signature, compiled with the collector off
        assert not gc.isenabled()
    finally:
        event.unregister("numba:compile", listener)
        (gc.enable if was else gc.disable)()


def test_kernels_import_and_run_with_the_jit_disabled():
    """The kernel tier runs the kernel tests under NUMBA_DISABLE_JIT=1: plain functions, no dispatcher."""
    code = ("import numpy as np; from lrank._kernels import metrics as K, _jit; "
            "assert not isinstance(K._ideal_labels, _jit.LrankDispatcher); "
            "print(K._ideal_labels(np.array([1.0, 3.0, 2.0]), np.array([0, 3])).tolist())")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(repo_dir()), os.environ.get("PYTHONPATH")]))}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[-2] == "[3.0, 2.0, 1.0]"


def test_metric_kernels_have_one_signature_each_after_an_evaluation():
    from lrank.metrics import evaluate

    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 60)
    evaluate(y, rng.normal(size=60), np.array([0, 20, 21, 60]), ["ndcg@10", "map", "err@5"])
    for kernel in (K._ideal_query, K._discounts, K._metric_query, K._gain_value, K._dcg_tab):
        sigs = [str(s) for s in kernel.signatures]
        assert not [s for s in sigs if "Literal" in s], (kernel.py_func.__name__, sigs)


def _ideal_reference(labels: np.ndarray, qptr: np.ndarray) -> np.ndarray:
    """Each query's labels in decreasing order: np.sort reversed (the kernel's former fallback)."""
    return np.concatenate([np.sort(labels[a:b])[::-1] for a, b in zip(qptr[:-1], qptr[1:])] + [np.empty(0)])


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(4))
def test_ideal_labels_merge_sort_fallback_agrees_with_np_sort(seed):
    """Labels spanning more than 256 values take the merge sort; ties, one-document queries, all-equal
    labels and empty queries included. (NaN labels never reach the kernel: `evaluate` refuses them.)"""
    rng = np.random.default_rng(seed)
    sizes = np.array([0, 1, 2, 7, 40, 333])
    qptr = np.r_[0, np.cumsum(rng.permutation(sizes))].astype(np.int64)
    n = int(qptr[-1])
    labels = rng.integers(0, 5000, n).astype(np.float64)
    labels[rng.random(n) < 0.3] = 17.0  # ties
    a = int(qptr[np.argmax(np.diff(qptr) == 40)])
    labels[a:a + 40] = 3.0  # an all-equal query
    wide = labels.copy()
    for q in range(qptr.size - 1):  # every query spans > 256 values unless constant or tiny
        if qptr[q + 1] - qptr[q] >= 2 and np.ptp(wide[qptr[q]:qptr[q + 1]]) > 0:
            wide[qptr[q]] = 10_000.0
    for lab in (labels, wide, rng.normal(scale=500, size=n)):
        got = K._ideal_labels(lab, qptr)
        np.testing.assert_array_equal(got, _ideal_reference(lab, qptr))
    for limit in (0, 1, 3):  # the top-`limit` form _evaluate_query uses
        out = np.full(333, -1.0)
        b = int(qptr[np.argmax(np.diff(qptr) == 333)])
        K._ideal_query(wide, b, b + 333, np.zeros(257, dtype=np.int64), out, 0, limit)
        np.testing.assert_array_equal(out[:limit], np.sort(wide[b:b + 333])[::-1][:limit])
        assert (out[limit:] == -1.0).all()


def test_evaluate_with_wide_labels_is_refused_or_exact():
    from lrank.metrics import evaluate

    y = np.array([0, 1, 2, 3])
    got = evaluate(y, np.array([0.4, 0.3, 0.2, 0.1]), np.array([0, 4]), ["ndcg@10"])["ndcg@10"]
    assert got < 1.0
    with pytest.raises(ValueError):
        evaluate(np.array([np.nan, 1.0]), np.zeros(2), np.array([0, 2]), ["ndcg@10"])


def _subprocess(code: str, cache: str | None, threads: int) -> dict:
    """Run ``code`` in a new process with numba's cache in ``cache`` (None: this process's cache)."""
    env = dict(os.environ)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    env.update(NUMBA_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive",
               PYTHONPATH=os.pathsep.join(filter(None, [str(repo_dir()), env.get("PYTHONPATH")])))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


PARALLEL = """
import json, numba, numpy as np
from lrank._kernels import metrics as M, histograms as H, splitting as SP
rng = np.random.default_rng(0)
n, F, B = 2000, 7, 20
qptr = np.unique(np.r_[0, np.sort(rng.choice(np.arange(1, n), 40, replace=False)), n]).astype(np.int64)
s = rng.normal(size=n).round(1)
y = rng.integers(0, 4, n).astype(np.float64)
codes = rng.integers(0, B, (n, F)).astype(np.uint8)
off = (np.arange(F + 1) * B).astype(np.int64)
out = {}
for ties in (0, 1, 2):
    par = M._rank_order_parallel(s, y, qptr, ties)
    out[f"rank_order{ties}"] = np.array_equal(par, M._rank_order(s, y, qptr, ties))
cds = np.array([0, 2, 3], dtype=np.int64)
ks = np.array([10, 0, 5], dtype=np.int64)
args = (s, y, qptr, 0, cds, ks, 0, 0, np.nan, 1.0, 4.0, 31)
par = M._evaluate_sorted_parallel(*args)
out["evaluate"] = np.array_equal(par, M._evaluate_sorted(*args), equal_nan=True)
hist = np.zeros((off[-1], 3))
H._histogram(codes, rng.normal(size=(n, 3)), np.arange(n, dtype=np.int64), 0, n, off, hist)
feats = np.arange(F, dtype=np.int64)
G, Hs, N = hist[:B].sum(0)
a = SP._scan_parallel(hist, off, feats, 0, 1.0, 0.0, G, Hs, N, 0.0, 0.0, 0.0, None, None, 0.0, np.empty(F),
                      np.empty(F, dtype=np.int64), np.empty((F, 4, int(np.diff(off).max()))), 0.0)
b = SP._scan_fast(hist, off, feats, 0, 1.0, 0.0, G, Hs, N, 0.0, 0.0, np.empty((4, int(np.diff(off).max()))),
                  0.0)
out["best_split"] = np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
pa, pb = rng.integers(0, n, 300), rng.integers(0, n, 300)
pw = rng.random(300)
p1, q1, p2, q2 = (np.zeros(off[-1]) for _ in range(4))
nblk = numba.get_num_threads()
H._pair_histograms_parallel(codes, pa, pb, pw, 0, 300, off, p1, q1, nblk,
                             np.empty((nblk, 3, F), dtype=np.uint32))
H._pair_histograms(codes, pa, pb, pw, 0, 300, None, off, p2, q2, 1.0, np.empty((3, F), dtype=np.uint32))
out["pair_histograms"] = np.array_equal(p1, p2) and np.array_equal(q1, q2)
vals, rows = rng.normal(size=(n, 3)), np.arange(n, dtype=np.int64)
h1, h2 = np.zeros((off[-1], 3)), np.zeros((off[-1], 3))
H._histogram_parallel(codes, vals, rows, 0, n, off, h1, nblk)
H._histogram(codes, vals, rows, 0, n, off, h2)
out["histogram"] = h1.tobytes() == h2.tobytes()
gbin = H._global_bins(codes, off, np.empty(codes.shape, dtype=np.uint16))
h3 = np.zeros((off[-1], 3))
H._histogram_parallel(gbin, vals, rows, 0, n, np.zeros_like(off), h3, nblk)
out["histogram_global"] = h3.tobytes() == h2.tobytes()
from lrank._kernels.lambdas import lambdamart_gradients, _lambdas_parallel
yl = rng.integers(0, 5, n).astype(np.int32)
one = lambdamart_gradients(yl, qptr, s, k=10, n_jobs=1)
two = lambdamart_gradients(yl, qptr, s, k=10, n_jobs=2)
out["lambdas"] = np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
kernels = (M._rank_order_parallel, M._evaluate_sorted_parallel, SP._scan_parallel,
           H._pair_histograms_parallel, _lambdas_parallel, H._histogram_parallel)
out = {k: bool(v) for k, v in out.items()}
out["hits"] = sum(sum(k.stats.cache_hits.values()) for k in kernels)
out["misses"] = sum(sum(k.stats.cache_misses.values()) for k in kernels)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_parallel_kernels_are_cached_and_agree_with_serial_twins_on_any_thread_count(tmp_path):
    """Compiled on 2 threads into an empty cache, then loaded from it on 1 and on 2 threads."""
    cache = str(tmp_path / "cache")
    first = _subprocess(PARALLEL, cache, 2)
    assert first.pop("hits") == 0 and first.pop("misses") == 7  # one signature each (two for the histogram)
    assert all(first.values()), first
    for threads in (1, 2):
        again = _subprocess(PARALLEL, cache, threads)
        assert again.pop("hits") == 7 and again.pop("misses") == 0
        assert all(again.values()), again


SAME_BITS = """
import hashlib, json, sys, numpy as np
if sys.argv[-1] == "literal":  # numba's own dispatch: literal specialisations as before
    from numba.core.registry import CPUDispatcher
    from lrank._kernels import _jit
    _jit.LrankDispatcher.get_call_template = CPUDispatcher.get_call_template
from lrank.data import make_letor_like
from lrank.metrics import evaluate
from lrank.models.gbrt import LambdaMART
from lrank.models.rankboost import RankBoost
d = make_letor_like(n_queries=12, docs_per_query=(1, 30), n_features=6, missing_rate=0.1, random_state=3)
rng = np.random.default_rng(0)
s = rng.normal(size=d.n_docs).round(1)
names = ["ndcg@5", "ndcg", "mean_ndcg", "map", "err@5", "p@3", "mrr", "wta", "dcg@5", "r1", "r2"]
got = evaluate(d.y, s, d.qptr, names, per_query=True, empty="skip")
out = {"evaluate": [v.tolist() for v in got.values()]}
lm = LambdaMART(n_estimators=3, num_leaves=4, min_child_samples=2)
out["lambdamart"] = lm.fit(d.X, d.y, group=d.group).predict(d.X).tolist()
out["rankboost"] = RankBoost(n_estimators=3).fit(d.X, d.y, group=d.group).predict(d.X).tolist()
print(json.dumps({k: hashlib.sha256(json.dumps(v).encode()).hexdigest() for k, v in out.items()}))
"""


@pytest.mark.slow
def test_unliteral_dispatch_gives_the_same_bits_as_numbas_literal_specialisations(tmp_path):
    ours = _subprocess(SAME_BITS, None, 1)  # lrank's dispatch, from the usual cache when it is warm
    code = SAME_BITS.replace('sys.argv[-1] == "literal"', "True")
    theirs = _subprocess(code, str(tmp_path / "literal"), 1)  # numba's, compiled afresh
    assert ours == theirs


def test_kernels_pickle_by_reference():
    """joblib / Dask workers receive kernels by pickling: the dispatcher class survives the round trip."""
    import pickle

    assert pickle.loads(pickle.dumps(K._evaluate_sorted)) is K._evaluate_sorted
    assert isinstance(K._evaluate_sorted, LrankDispatcher)
