"""The validating functions of lrank._kernels.metrics: bad input names the parameter; good input gives
exactly the kernel's result."""

import numpy as np
import pytest

from lrank._kernels import metrics as K


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    qptr = np.array([0, 5, 9, 9, 16, 20], dtype=np.int64)
    y = rng.integers(0, 4, qptr[-1]).astype(np.float64)
    s = rng.integers(0, 4, qptr[-1]) / 2.0  # ties
    return qptr, y, s


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def _fixed(y, qptr, mmax):
    ideal = K.ideal_labels(y, qptr)
    icum, gdoc, dtab = K.fixed_gains(y, ideal, qptr, 0, 0)
    rel = np.flatnonzero(y != 0.0).astype(np.int64)
    tables = (ideal, icum, gdoc, np.zeros(y.size), rel, np.searchsorted(rel, qptr).astype(np.int64), dtab)
    i64 = np.int64
    scratch = (np.empty(y.size), np.empty(y.size), np.empty(mmax), np.empty(mmax, dtype=i64), np.empty(mmax),
               np.empty(mmax, dtype=i64), np.empty(max(2 * mmax + 1, 256), dtype=i64),
               np.empty(mmax, dtype=i64), np.empty(qptr.size - 1, dtype=i64))
    return tables, scratch


def test_wrappers_return_the_kernels_results():
    qptr, y, s = _problem()
    yi = y.astype(np.int32)
    ok, yf = K.labels_scores_ok(yi, s, 31.0)
    yf2 = np.empty(y.size)
    assert ok == K._labels_scores_ok(yi, s, yf2, 31.0) and _same(yf, yf2)
    assert K.int_labels_scores_ok(yi, s, 31) == tuple(K._int_labels_scores_ok(yi, s, 31))
    for ties in (0, 1, 2):
        assert _same(K.rank_order(s, y, qptr, ties), K._rank_order(s, y, qptr, ties))
        assert _same(K.rank_order(s, y, qptr, ties, parallel=True), K._rank_order(s, y, qptr, ties))
    order = K.rank_order(s, y, qptr, 0)
    ys, ss = y[order], s[order]
    ideal = K.ideal_labels(y, qptr)
    assert _same(ideal, K._ideal_labels(y, qptr))
    for code in range(8):
        assert _same(K.query_metric(ys, ideal, qptr, code, 3, 0, 1, np.nan, 1.0, 4.0),
                     K._query_metric(ys, ideal, qptr, code, 3, 0, 1, np.nan, 1.0, 4.0))
    codes = np.arange(8, dtype=np.int64)
    ks = np.full(8, 3, dtype=np.int64)
    args = (qptr, 1, codes, ks, 0, 0, np.nan, 1.0, 4.0, 31)
    assert _same(K.evaluate_sorted(s, yi, *args), K._evaluate_sorted(s, yi, *args))
    assert _same(K.evaluate_sorted(s, yi, *args, parallel=True), K._evaluate_sorted(s, yi, *args))
    assert _same(K.pair_losses(ss, ys, qptr), K._pair_losses(ss, ys, qptr))
    assert _same(K.expected_disagreement(ss, ys, ideal, qptr), K._expected_disagreement(ss, ys, ideal, qptr))
    good = (ys >= 2).astype(np.uint8)
    assert _same(K.expected_precisions(ss, good, qptr, 0.0), K._expected_precisions(ss, good, qptr, 0.0))
    icum, gdoc, dtab = np.empty(y.size), np.empty(y.size), np.empty(7)
    K._fixed_gains(y, ideal, qptr, 1, 1, icum, gdoc, dtab)
    assert _same(K.fixed_gains(y, ideal, qptr, 1, 1), (icum, gdoc, dtab))
    tables, scratch = _fixed(y, qptr, 7)
    out_a, out_b = np.empty((8, 5)), np.empty((8, 5))
    for out, fn in ((out_a, K.evaluate_fixed), (out_b, K._evaluate_fixed)):
        sc = tuple(a.copy() for a in scratch)
        scr = (sc,) if fn is K.evaluate_fixed else sc
        r = fn(s, y, qptr, 1, codes, ks, 0, np.nan, 1.0, 4.0, tables, *scr, out, True)
        assert r >= 0
        if r > 0:  # the queries the sort places, then the metrics
            ys_, gs_, key, idx, tk, tidx, cnt, pos, todo = sc
            merged = K.place_merged if fn is K.evaluate_fixed else K._place_merged
            merged(s, y, qptr, 1, tables[2], ys_, gs_, key, idx, tk, tidx, pos, np.empty_like(pos), cnt, todo)
            assert fn(s, y, qptr, 1, codes, ks, 0, np.nan, 1.0, 4.0, tables, *scr, out, False) == 0
    assert _same(out_a, out_b)
    out_a, out_b = np.empty((1, 5)), np.empty((1, 5))
    s2 = s + np.arange(s.size) * 1e-3  # no ties: placed without a sort
    assert K.evaluate_fixed_mean(s2, y, qptr, 0, np.nan, tables, scratch, out_a, True) == 0
    assert K._evaluate_fixed_mean(s2, y, qptr, 0, np.nan, tables, *scratch, out_b, True) == 0
    assert _same(out_a, out_b)


def test_wrappers_name_the_bad_parameter():
    qptr, y, s = _problem()
    n = y.size
    f32, i32 = s.astype(np.float32), y.astype(np.int32)
    ideal = K.ideal_labels(y, qptr)
    codes, ks = np.zeros(2, dtype=np.int64), np.zeros(3, dtype=np.int64)
    tables, scratch = _fixed(y, qptr, 7)
    bad_scratch = scratch[:3] + (scratch[3].astype(np.int32),) + scratch[4:]
    z, zi = np.zeros(7), np.zeros(7, dtype=np.int64)

    def fixed(tb, sc, out):
        return K.evaluate_fixed(s, y, qptr, 0, codes, codes, 0, 0.0, 1.0, 4.0, tb, sc, out, True)

    cases = [
        ("y", lambda: K.labels_scores_ok(y.astype(np.int8), s, 31.0)),
        ("scores", lambda: K.labels_scores_ok(y, s[:-1], 31.0)),
        ("y", lambda: K.int_labels_scores_ok(y, s, 31)),
        ("scores", lambda: K.int_labels_scores_ok(i32, f32, 31)),
        ("labels", lambda: K.rank_order(s, y[:-1], qptr, 0)),
        ("qptr", lambda: K.rank_order(s, y, qptr.astype(np.int32), 0)),
        ("qptr", lambda: K.rank_order(s, y, qptr[:-1], 0)),
        ("ties", lambda: K.rank_order(s, y, qptr, 3)),
        ("labels", lambda: K.ideal_labels(i32, qptr)),
        ("ideal_sorted", lambda: K.query_metric(y, ideal[:-1], qptr, 0, 3, 0, 0, 0.0, 1.0, 4.0)),
        ("code", lambda: K.query_metric(y, ideal, qptr, 8, 3, 0, 0, 0.0, 1.0, 4.0)),
        ("gain", lambda: K.query_metric(y, ideal, qptr, 0, 3, 2, 0, 0.0, 1.0, 4.0)),
        ("ks", lambda: K.evaluate_sorted(s, y, qptr, 0, codes, ks, 0, 0, 0.0, 1.0, 4.0, 31)),
        ("scores", lambda: K.evaluate_sorted(f32, y, qptr, 0, codes, ks[:2], 0, 0, 0.0, 1.0, 4.0, 31)),
        ("ideal", lambda: K.fixed_gains(y, ideal[:-1], qptr, 0, 0)),
        ("disc", lambda: K.fixed_gains(y, ideal, qptr, 0, 5)),
        ("scratch", lambda: fixed(tables, bad_scratch, np.empty((2, 5)))),
        ("tables", lambda: fixed(tables[:6], scratch, np.empty((2, 5)))),
        ("out", lambda: fixed(tables, scratch, np.empty((3, 5)))),
        ("scores", lambda: K.evaluate_fixed_mean(f32, y, qptr, 0, 0.0, tables, scratch, np.empty((1, 5)),
                                                 True)),
        ("out", lambda: K.evaluate_fixed_mean(s, y, qptr, 0, 0.0, tables, scratch, np.empty(5), True)),
        ("key2", lambda: K.place_merged(s, y, qptr, 0, y, y.copy(), y.copy(), z, zi, z[:6], zi, zi, zi,
                                        np.zeros(256, dtype=np.int64), np.zeros(5, dtype=np.int64))),
        ("cnt", lambda: K.place_merged(s, y, qptr, 0, y, y.copy(), y.copy(), z, zi, z, zi, zi, zi,
                                       np.zeros(15, dtype=np.int64), np.zeros(5, dtype=np.int64))),
        ("y_sorted", lambda: K.pair_losses(s, i32, qptr)),
        ("ideal_sorted", lambda: K.expected_disagreement(s, y, ideal[1:], qptr)),
        ("good_sorted", lambda: K.expected_precisions(s, (y > 1).astype(np.int64), qptr, 0.0)),
    ]
    for name, call in cases:
        with pytest.raises(ValueError, match=name):
            call()
    assert n == 20
