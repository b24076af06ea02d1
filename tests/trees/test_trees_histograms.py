"""The tree engine's histograms (``lrank._kernels.histograms``) against plain NumPy, bit for bit: every
layout (row-major with offsets, a feature subset, global bin indices, column groups, the parallel twins),
the subtraction, the root's count cache, and OLE's pair histograms."""

import itertools

import numba
import numpy as np
import pytest

from lrank._kernels import grower as gk
from lrank._kernels import histograms as hk
from lrank._kernels.lambdas import lambdamart_gradients
from tests.reference import pair_histograms as ref_ph


def _matrix(seed, n=70, F=5, max_bins=9, dtype=np.uint8):
    """Few codes per feature (ties), bin 0 (missing) included."""
    rng = np.random.default_rng(seed)
    nb = rng.integers(2, max_bins, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(dtype)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    return rng, codes, off


def _reference(codes, vals, rows, off, feats=None):
    """Each histogram feature's bins summed over ``rows`` in order (``np.add.at`` adds repeated indices one
    after another): the summation order the kernels promise for every bin."""
    feats = np.arange(codes.shape[1]) if feats is None else feats
    out = np.zeros((off[-1], vals.shape[1]))
    for t, f in enumerate(feats):
        for c in range(vals.shape[1]):
            np.add.at(out[:, c], off[t] + codes[rows, f].astype(np.int64), vals[rows, c])
    return out


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_row_layouts_match_numpy(C):
    """Row-major codes with offsets, global bin indices, the parallel twin on any blocking and a feature
    subset: the reference's bits on a sorted subset, a shuffled subset, one row and no row."""
    rng, codes, off = _matrix(C, n=90, F=6)
    gbin = hk.global_bins(codes, np.diff(off))
    np.testing.assert_array_equal(gbin, codes + off[:-1])
    vals = np.round(rng.normal(size=(90, C)), 1)  # equal values: ties in the sums
    feats = np.array([0, 2, 5], dtype=np.int64)
    soff = np.r_[0, np.cumsum(np.diff(off)[feats])].astype(np.int64)
    for rows in (np.sort(rng.choice(90, 60, replace=False)), rng.permutation(90)[:45], np.array([7]),
                 np.array([], dtype=np.int64)):
        rows = rows.astype(np.int64)
        want = _reference(codes, vals, rows, off)
        builders = [lambda out, r=rows: hk._histogram(codes, vals, r, 0, r.size, off, out),
                    lambda out, r=rows: hk._histogram_global(gbin, vals, r, 0, r.size, out),
                    lambda out, r=rows: hk._histogram_parallel(gbin, vals, r, 0, r.size, off * 0, out, 2)]
        builders += [lambda out, r=rows, b=b: hk._histogram_parallel(codes, vals, r, 0, r.size, off, out, b)
                     for b in (1, 2, 3, 1000)]
        for build in builders:
            got = np.zeros_like(want)
            build(got)
            assert got.tobytes() == want.tobytes()
        sub = np.zeros((soff[-1], C))
        hk._histogram_features(codes, vals, rows, 0, rows.size, feats, soff, sub)
        assert sub.tobytes() == _reference(codes, vals, rows, soff, feats).tobytes()


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 4])
def test_column_histograms_match_numpy(C):
    """Column groups of four (and the rest one by one) over every feature, the first feature, a subset in
    another order; blocks of feature groups on one and two threads; two chunks of rows; every row in order
    given as a row list and as None (the root's specialisation, `_row`)."""
    for seed, (n, F) in enumerate(((70, 5), (61, 9), (hk.CHUNK_ROWS + 4_001, 6))):
        rng, codes, off = _matrix(seed, n, F)
        codes_t = np.ascontiguousarray(codes.T)
        grad = np.round(rng.normal(size=n), 1)
        grad[::9] = -0.0
        hess = np.round(rng.uniform(0.1, 2.0, size=n), 1)
        h_unit = 0.5 if C == 2 else 0.0
        vals = np.column_stack([grad, np.full(n, h_unit) if C == 2 else hess] + ([np.ones(n), np.zeros(n)]
                                                                                 if C == 4 else []))
        og = np.empty((3, hk.CHUNK_ROWS, C))
        feats = np.array([3, 0, 1, 4, 2], dtype=np.int64)[:min(F, 5)]
        soff = np.r_[0, np.cumsum(np.diff(off)[feats])].astype(np.int64)
        for rows in (np.arange(n), np.sort(rng.choice(n, n // 3, replace=False)), rng.permutation(n)[:n // 2],
                     np.array([n - 1]), np.zeros(0, dtype=np.int64)):
            rows = rows.astype(np.int64)
            every = np.arange(F, dtype=np.int64)
            for fmap, o, nf in ((every, off, F), (every, off, 1), (feats, soff, feats.size)):
                want = _reference(codes, vals, rows, o[:nf + 1], fmap[:nf])
                lists = (rows, None) if np.array_equal(rows, np.arange(n)) else (rows,)  # None: 0..n-1
                blocking = ((1, 1), (2, 2), (2, 3), (1, 3), (1, 0))
                for (threads, blocks), rl in itertools.product(blocking, lists):
                    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
                    got = np.zeros((o[-1], C))
                    args = (codes_t, fmap, grad, hess, h_unit, rl, 0, rows.size, o, got)
                    if blocks:
                        hk._histogram_columns(*args, og[:blocks], nf)
                    else:  # the serial twin, one block on this thread
                        hk._histogram_columns_serial(*args, og, nf)
                    assert got[:o[nf]].tobytes() == want.tobytes(), (n, F, nf, rows.size, threads, blocks,
                                                                      rl is None)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.kernel
def test_root_count_cache_gives_the_same_bits():
    """The first four-channel root keeps its counts; a later root adds two lanes and takes them: the same
    histogram, bit for bit, as adding all four channels (serial and on the threads)."""
    rng, codes, off = _matrix(4, n=300, F=7)
    codes_t = np.ascontiguousarray(codes.T)
    fmap = np.arange(7, dtype=np.int64)
    rows = np.arange(300, dtype=np.int64)
    counts = (np.zeros(off[-1] + 1), np.empty((2, hk.CHUNK_ROWS, 2)), np.zeros((off[-1], 2)))
    og = np.empty((2, hk.CHUNK_ROWS, 4))
    for t in range(4):
        grad, hess = rng.normal(size=300), rng.uniform(0.1, 1.0, 300)
        vals = np.column_stack([grad, hess, np.ones(300), np.zeros(300)])
        got = np.full((off[-1], 4), np.nan)
        par = (1,) if t % 2 else None  # any tuple: the parallel kernels
        rl = rows if t < 2 else None  # None: every row in order, no row list read
        hk._root_histogram_columns(codes_t, fmap, grad, hess, 0.0, rl, off, got, og, counts, par, None)
        assert got.tobytes() == _reference(codes, vals, rows, off).tobytes()
        assert counts[0][-1] == 1.0
    assert np.any(counts[2] != 0.0)  # the later roots took the two-lane path


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 4])
def test_root_cache_of_one_set_of_derivatives(C):
    """A constrained tree's root rows from the derivatives' cache: each feature made once (by the first
    tree that needs it), then copied; every root the bits of making it directly (feature subsets in any
    order, feature 0 in each)."""
    rng, codes, off = _matrix(6, n=400, F=9)
    codes_t = np.ascontiguousarray(codes.T)
    rows = np.arange(400, dtype=np.int64)
    grad = rng.normal(size=400)
    hess = np.full(400, 0.5) if C == 2 else rng.uniform(0.1, 1.0, 400)
    h_unit = 0.5 if C == 2 else 0.0
    vals = np.column_stack([grad, hess] + ([np.ones(400), np.zeros(400)] if C == 4 else []))
    cache = (np.full((off[-1], C), np.nan), np.zeros(9, dtype=np.int64), off)
    og = np.empty((1, hk.CHUNK_ROWS, C))
    for k, feats in enumerate(([0, 3], [0, 5], [0, 3], [0, 2, 8], [0, 1, 3, 4, 6])):
        feats = np.array(feats, dtype=np.int64)
        soff = np.r_[0, np.cumsum(np.diff(off)[feats])].astype(np.int64)
        got = np.full((soff[-1], C), np.nan)
        rl = rows if k % 2 else None  # None: every row in order
        hk._root_histogram_columns(codes_t, feats, grad, hess, h_unit, rl, soff, got, og, None, None, cache)
        assert got.tobytes() == _reference(codes, vals, rows, soff, feats).tobytes()
        assert (cache[1][feats] == 1).all()
    assert cache[1][7] == 0 and np.isnan(cache[0][off[7]:off[8]]).all()  # never asked for: never made


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_subtraction_and_feature_zero_child(C):
    """``parent -= out`` over the flat arrays (the first ``nb`` rows only), and the last split's children:
    feature 0's bins of the smaller child, the larger by subtraction, the rest untouched."""
    rng, codes, off = _matrix(10 + C, n=60, F=5)
    vals = rng.normal(size=(60, C))
    rows = rng.permutation(60).astype(np.int64)
    parent = rng.normal(size=(off[-1], C))
    out = _reference(codes, vals, rows[:25], off)
    p = parent.copy()
    gk._subtract(p, out, int(off[2]))
    assert p[:off[2]].tobytes() == (parent[:off[2]] - out[:off[2]]).tobytes()
    assert p[off[2]:].tobytes() == parent[off[2]:].tobytes()
    got, p = np.full_like(parent, np.nan), parent.copy()
    hk._feature0_child(codes, vals, rows, 0, 25, off, got, p, 0)
    assert got[:off[1]].tobytes() == out[:off[1]].tobytes()
    assert p[:off[1]].tobytes() == (parent[:off[1]] - out[:off[1]]).tobytes()
    assert p[off[1]:].tobytes() == parent[off[1]:].tobytes()
    # a feature subset's first feature (here 3) at histogram position 0
    sub = np.array([3, 4], dtype=np.int64)
    soff = np.r_[0, np.cumsum(np.diff(off)[sub])].astype(np.int64)
    want = _reference(codes, vals, rows[:25], soff, sub)
    got, p = np.full_like(parent, np.nan), parent.copy()
    hk._feature0_child(codes, vals, rows, 0, 25, soff, got, p, 3)
    assert got[:soff[1]].tobytes() == want[:soff[1]].tobytes()
    assert p[:soff[1]].tobytes() == (parent[:soff[1]] - want[:soff[1]]).tobytes()


@pytest.mark.kernel
def test_transpose_and_global_bins():
    rng = np.random.default_rng(2)
    for n, F, dtype in ((0, 3, np.uint8), (1, 4, np.uint8), (hk.TRANSPOSE_ROWS * 3 + 7, 5, np.uint8),
                        (300, 2, np.uint16)):
        codes = rng.integers(0, 200, size=(n, F)).astype(dtype)
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            np.testing.assert_array_equal(hk.transpose(codes), codes.T)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    codes = rng.integers(0, 256, size=(20, 300)).astype(np.uint8)
    big = hk.global_bins(codes, np.full(300, 256))  # 76,800 histogram rows: uint32
    assert big.dtype == np.uint32 and (big == codes + np.arange(300) * 256).all()
    with pytest.raises(ValueError, match="below its feature's n_bins"):
        hk.global_bins(codes, np.full(300, 3))
    with pytest.raises(ValueError, match="C-contiguous 2-d uint8/uint16"):
        hk.transpose(codes.astype(np.int64))


# ----------------------------------------------------------------------------------- pair histograms
def _pairs(seed, n_max_code=6, dtype=np.uint8, F=5):
    """Codes with ties and missing values (code 0), and LambdaMART's pair list on queries that include a
    one-document query and a query whose labels are all equal (neither has a pair)."""
    rng = np.random.default_rng(seed)
    sizes = (1, 14, 9, 30, 22)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    y[qptr[1]:qptr[2]] = 2  # all-equal labels
    s = np.round(rng.normal(size=n), 1)  # tied scores
    lam, w, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=6, with_pairs=True)
    nb = rng.integers(2, n_max_code + 1, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(dtype)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    return codes, off, pa, pb, pw


@pytest.mark.kernel
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_histograms_bits_match_numpy(seed, dtype):
    """Every pair layout against ``numpy.add.at`` in pair order: codes with offsets, global bins, the
    parallel twin on any blocking, a feature subset, ``pmax`` alone, removal (sign -1) from non-zero
    buffers; bin scratch holding garbage."""
    codes, off, pa, pb, pw = _pairs(seed, dtype=dtype)
    m, F = pa.size, codes.shape[1]
    gbin = hk.global_bins(codes, np.diff(off))
    start = np.random.default_rng(seed).normal(size=(2, off[-1]))
    for lo, hi, sign in ((0, m, 1.0), (3, m - 5, -1.0), (4, 4, 1.0)):
        want = ref_ph.pair_histograms(codes, pa, pb, pw, lo, hi, off, sign=sign, pmax=start[0].copy(),
                                      pmin=start[1].copy())
        got = start[0].copy(), start[1].copy()
        hk.pair_histograms(codes, pa, pb, pw, lo, hi, *got, n_bins=np.diff(off), sign=sign)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
        got = start[0].copy(), start[1].copy()
        hk.pair_histograms(codes, pa, pb, pw, lo, hi, *got, gbin=gbin, sign=sign)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
        got = start[0].copy()
        hk.pair_histograms(codes, pa, pb, pw, lo, hi, got, gbin=gbin, sign=sign)
        assert got.tobytes() == want[0].tobytes()
        if sign == 1.0:
            for nblk in (1, 2, 3, 1000):
                par = start[0].copy(), start[1].copy()
                bins = np.full((max(1, min(F, nblk)), 3, F + 2), 2**32 - 1, dtype=np.uint32)
                hk._pair_histograms_parallel(codes, pa, pb, pw, lo, hi, off, *par, nblk, bins)
                assert par[0].tobytes() == want[0].tobytes() and par[1].tobytes() == want[1].tobytes()
    feats = np.array([4, 1, 1, 3], dtype=np.int64)
    soff = np.r_[0, np.cumsum(np.diff(off)[feats])].astype(np.int64)
    start = start[:, :soff[-1]]
    want = ref_ph.pair_histograms(codes, pa, pb, pw, 2, m, soff, feats, -1.0, start[0].copy(),
                                  start[1].copy())
    got = start[0].copy(), start[1].copy()
    garbage = np.full((3, 4), 2**32 - 1, np.uint32)
    hk._pair_histograms(codes, pa, pb, pw, 2, m, feats, soff, *got, -1.0, garbage)
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


@pytest.mark.kernel
def test_pair_histograms_by_max_and_min_code():
    """The definition, on a hand-checked pair: weight 2 at codes (3, 1) goes to pmax bin 3 and pmin bin 1;
    a tied pair (2, 2) goes to bin 2 of both."""
    codes = np.array([[3], [1], [2], [2]], dtype=np.uint8)
    pmax, pmin = np.zeros(4), np.zeros(4)
    hk.pair_histograms(codes, np.array([0, 2]), np.array([1, 3]), np.array([2.0, 0.5]), 0, 2, pmax, pmin,
                       n_bins=np.array([4]))
    np.testing.assert_array_equal(pmax, [0, 0, 0.5, 2])
    np.testing.assert_array_equal(pmin, [0, 2, 0.5, 0])


def _pmin_reference(codes, u, rows, off, pmax, feats=None):
    """``U - pmax`` in plain NumPy: ``U`` by ``numpy.add.at`` in row order (the kernel's bits)."""
    feats = np.arange(codes.shape[1]) if feats is None else feats
    U = np.zeros(off[-1])
    idx = (off[:-1][None, :] + codes[rows][:, feats].astype(np.int64)).ravel()
    np.add.at(U, idx, np.repeat(u[rows], feats.size))
    return U - pmax[:off[-1]]


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pmin_from_weights(seed):
    """``pmin = U - pmax`` against plain NumPy, bit for bit (codes, global bins, a feature subset), and
    against the pairs' own ``pmin`` within rounding, for a node's documents after a split (crossing pairs
    removed from ``u``); one-document and all-equal-label queries included."""
    codes, off, pa, pb, pw = _pairs(seed)
    n, m = codes.shape[0], pa.size
    nb = np.diff(off)
    gbin = hk.global_bins(codes, nb)
    leaf_of = np.where(codes[:, 1] <= 2, 1, 2).astype(np.int64)
    qa, qb, qw = pa.copy(), pb.copy(), pw.copy()
    mid, end = gk._partition_pairs(qa, qb, qw, 0, m, leaf_of, 1, 2, *(np.empty(m, dtype=a.dtype)
                                                                    for a in (qa, qb, qw)))
    u = np.zeros(n)
    np.add.at(u, qa, qw)
    np.add.at(u, qb, qw)
    np.subtract.at(u, qa[end:], qw[end:])
    np.subtract.at(u, qb[end:], qw[end:])
    rows = np.r_[np.flatnonzero(leaf_of == 1), np.flatnonzero(leaf_of == 2)].astype(np.int64)
    n1 = int((leaf_of == 1).sum())
    for (r0, r1), (p0, p1) in (((0, n1), (0, mid)), ((n1, n), (mid, end))):
        pmax, pmin = ref_ph.pair_histograms(codes, qa, qb, qw, p0, p1, off)
        want = _pmin_reference(codes, u, rows[r0:r1], off, pmax)
        for g in (None, gbin):
            got = np.full(off[-1], np.nan)
            hk.pmin_from_weights(codes, u, rows, r0, r1, pmax, got, n_bins=nb, gbin=g)
            assert got.tobytes() == want.tobytes()
        np.testing.assert_allclose(got, pmin, atol=1e-12)
        feats = np.array([3, 0, 3], dtype=np.int64)
        soff = np.r_[0, np.cumsum(nb[feats])].astype(np.int64)
        sel = np.concatenate([np.arange(off[f], off[f + 1]) for f in feats])
        got = np.full(soff[-1], np.nan)
        hk._pmin_from_weights(codes, None, feats, None, soff, u, rows, r0, r1, pmax[sel], got)
        assert got.tobytes() == _pmin_reference(codes, u, rows[r0:r1], soff, pmax[sel], feats).tobytes()
    with pytest.raises(ValueError, match="one weight per document"):
        hk.pmin_from_weights(codes, u[:-1], rows, 0, n, pmax, pmin, n_bins=nb)


def test_checked_entry_points_reject_bad_input():
    codes, off, pa, pb, pw = _pairs(0)
    nb = np.diff(off)
    buf = np.zeros(off[-1]), np.zeros(off[-1])
    with pytest.raises(ValueError, match="sign"):
        hk.pair_histograms(codes, pa, pb, pw, 0, 2, *buf, n_bins=nb, sign=2.0)
    with pytest.raises(ValueError, match="outside"):
        hk.pair_histograms(codes, pa, pb, pw, 0, pa.size + 1, *buf, n_bins=nb)
    with pytest.raises(ValueError, match="rows of codes"):
        hk.pair_histograms(codes, pa + codes.shape[0], pb, pw, 0, 2, *buf, n_bins=nb)
    with pytest.raises(ValueError, match="float64"):
        hk.pair_histograms(codes, pa, pb, pw, 0, 2, np.zeros(3), buf[1], n_bins=nb)
    with pytest.raises(ValueError, match="int64"):
        hk.pair_histograms(codes, pa.astype(np.int32), pb, pw, 0, 2, *buf, n_bins=nb)
    with pytest.raises(ValueError, match="needs n_bins"):
        hk.pair_histograms(codes, pa, pb, pw, 0, 2, *buf)
