"""The machine operations of `lrank._kernels._simd` against plain NumPy: the two- and four-lane vector adds
give the scalar adds' bits (signed zeros, infinities, NaN, rounding ties included), a prefetch changes
nothing, and the float's bits are NumPy's ``view``."""

import numpy as np
import pytest

from lrank._kernels import histograms as hk
from lrank._kernels._jit import njit
from lrank._kernels._simd import _add_pair, _add_quad, _float_bits, _prefetch


@njit(cache=False)
def _pairs_added(flat, idx, xs, ys):
    for t in range(idx.size):
        _prefetch(flat, idx[t])
        _add_pair(flat, np.uint64(idx[t]), xs[t], ys[t])
    return flat


@pytest.mark.kernel
def test_add_pair_is_two_scalar_adds_bit_for_bit():
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 1.0, 2.0 ** 53])
    flat = np.concatenate((rng.normal(size=40), special, np.round(rng.normal(size=30), 1)))
    idx = rng.integers(0, flat.size - 1, 400)  # repeated indices: overlapping pairs, one after the other
    xs = np.where(rng.random(400) < 0.2, rng.choice(special, 400), rng.normal(size=400) * 1e3)
    ys = np.where(rng.random(400) < 0.2, rng.choice(special, 400), np.round(rng.normal(size=400), 1))
    want = flat.copy()
    with np.errstate(all="ignore"):  # inf - inf, overflow: on purpose
        for b, x, y in zip(idx, xs, ys):
            want[b] += x
            want[b + 1] += y
    got = _pairs_added(flat.copy(), idx.astype(np.int64), xs, ys)
    assert got.tobytes() == want.tobytes()


@njit(cache=False)
def _bits_of(xs, out):
    for t in range(xs.size):
        out[t] = _float_bits(xs[t])
    return out


@pytest.mark.kernel
def test_float_bits_are_numpys_view():
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e308, -1e308, 5e-324, -5e-324, 1.0])
    xs = np.concatenate((special, rng.normal(size=200) * 10.0 ** rng.integers(-300, 300, 200)))
    got = _bits_of(xs, np.zeros(xs.size, dtype=np.int64))
    assert np.array_equal(got, xs.view(np.int64))


@njit(cache=False)
def _quads_added(flat, idx, xs):
    for t in range(idx.size):
        _add_quad(flat, np.uint64(idx[t]), xs[t, 0], xs[t, 1], xs[t, 2], xs[t, 3])
    return flat


@pytest.mark.kernel
def test_add_quad_is_four_scalar_adds_bit_for_bit():
    rng = np.random.default_rng(1)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 1.0, 2.0 ** 53])
    flat = np.concatenate((rng.normal(size=40), special, np.round(rng.normal(size=30), 1)))
    idx = rng.integers(0, flat.size - 3, 400)  # overlapping quads, one after the other
    xs = np.where(rng.random((400, 4)) < 0.2, rng.choice(special, (400, 4)), rng.normal(size=(400, 4)) * 1e3)
    want = flat.copy()
    with np.errstate(all="ignore"):  # inf - inf, overflow: on purpose
        for b, x in zip(idx, xs):
            for lane in range(4):
                want[b + lane] += x[lane]
    got = _quads_added(flat.copy(), idx.astype(np.int64), xs)
    # a NaN's sign and payload are left open by IEEE 754 (LLVM may commute a vector add's operands); the
    # trees never add one (fit_gradients rejects non-finite derivatives): every other value bit for bit
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert got[~nan].tobytes() == want[~nan].tobytes()


def _histogram_reference(codes, vals, rows, off):
    """Each entry added in row order (a plain loop)."""
    out = np.zeros((off[-1], vals.shape[1]))
    for i in rows:
        for f in range(codes.shape[1]):
            out[off[f] + codes[i, f]] += vals[i]
    return out


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_vector_add_histograms_match_reference(C):
    """Rows scattered and repeated, more rows than the prefetch distance and fewer, one row, none; ties
    (few codes), missing (code 0) and signed zeros in the values."""
    rng = np.random.default_rng(C)
    n, F = 90, 5
    nb = rng.integers(1, 9, F)  # a feature with one code: every row in the same bin
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    vals = np.round(rng.normal(size=(n, C)), 1)
    vals[::7] = -0.0
    for rows in (rng.choice(n, 60), np.sort(rng.choice(n, 40, replace=False)), np.arange(n),
                 np.arange(hk.PREFETCH_ROWS + 1), np.array([3]), np.array([], dtype=np.int64)):
        rows = rows.astype(np.int64)
        want = _histogram_reference(codes, vals, rows, off).tobytes()
        got = np.zeros((off[-1], C))
        hk._histogram(codes, vals, rows, 0, rows.size, off, got)
        assert got.tobytes() == want
        gbin = hk.global_bins(codes, np.diff(off))
        got = np.zeros((off[-1], C))
        hk._histogram_global(gbin, vals, rows, 0, rows.size, got)
        assert got.tobytes() == want
