"""WeakLearn (RankBoost Fig. 3, Eq. 10-14) and WeakLearn.2 kernels against plain-NumPy references."""

import math

import numba
import numpy as np
import pytest

from lrank._kernels import stumps as K
from lrank.data.container import RankingData
from lrank.weak.stumps import BinnedStumps
from tests.reference import rankboost as ref

pytestmark = pytest.mark.kernel


def _problem(seed, n_queries=4, docs=(1, 9), n_features=5, nan_frac=0.2, ties=True, labels=3):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, size=n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_features))
    if ties:
        X = np.round(X, 1)
    X[rng.random(X.shape) < nan_frac] = np.nan
    y = rng.integers(0, labels, size=n)
    y[: sizes[0]] = 1  # first query: all-equal labels (no pairs)
    data = RankingData.from_group(X.astype(np.float32), y, sizes)
    p = data.pairs("uniform")
    rng2 = np.random.default_rng(seed + 1)
    D = p.weight * rng2.uniform(0.2, 2.0, size=p.weight.size)
    D /= D.sum()
    return data, p.hi, p.lo, D


def _thresholds(bins):
    return [np.asarray(t) for t in bins.bins.thresholds]


@pytest.mark.parametrize("seed", range(6))
def test_potentials_match_reference(seed):
    data, hi, lo, D = _problem(seed)
    np.testing.assert_allclose(K.potentials_from_pairs(hi, lo, D, data.n_docs),
                               ref.potentials(hi, lo, D, data.n_docs), atol=1e-15)
    assert abs(K.potentials_from_pairs(hi, lo, D, data.n_docs).sum()) < 1e-12  # sum pi = 0 (Eq. 13)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("q_def", [None, 0, 1])
def test_weaklearn3_equals_fig3_and_brute_force(seed, q_def):
    data, hi, lo, D = _problem(seed)
    X = data.X.astype(np.float64)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    st = bs.search(pi, q_def=q_def)
    f, theta, q, r = ref.weaklearn_fig3(X, _thresholds(bs), pi, q_def)
    brute = ref.all_stumps(X, _thresholds(bs), hi, lo, D, (0, 1) if q_def is None else (q_def,))
    best = max(abs(row[3]) for row in brute)
    assert st is not None
    assert abs(abs(st.r) - best) < 1e-12
    assert abs(abs(r) - best) < 1e-12
    # the chosen stump really has that r (Eq. 10 evaluated pair by pair)
    h = ref.stump(X[:, st.feature], st.threshold, st.q_def)
    assert abs((D * (h[hi] - h[lo])).sum() - st.r) < 1e-12
    np.testing.assert_array_equal(bs.values(st.feature, st.bin, st.q_def), h)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("q_def", [None, 0, 1])
def test_weaklearn2_minimises_z(seed, q_def):
    data, hi, lo, D = _problem(seed)
    X = data.X.astype(np.float64)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    st = bs.search(pi, q_def=q_def, pairs=(hi, lo, D))
    brute = ref.all_stumps(X, _thresholds(bs), hi, lo, D, (0, 1) if q_def is None else (q_def,))
    zs = [w0 + 2 * np.sqrt(wm * wp) for (_, _, _, r, wm, w0, wp) in brute if r != 0]
    z = st.w_zero + 2 * np.sqrt(st.w_minus * st.w_plus)
    assert abs(z - min(zs)) < 1e-12
    h = ref.stump(X[:, st.feature], st.threshold, st.q_def)
    d = h[lo] - h[hi]
    assert abs(D[d < 0].sum() - st.w_minus) < 1e-12
    assert abs(D[d > 0].sum() - st.w_plus) < 1e-12
    assert abs(D[d == 0].sum() - st.w_zero) < 1e-12


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("second", [False, True])
def test_cumulative_positive_constraint(seed, second):
    data, hi, lo, D = _problem(seed)
    X = data.X.astype(np.float64)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    rng = np.random.default_rng(seed)
    cum = rng.normal(scale=0.05, size=(bs.n_features, bs.n_bins, 2))
    eps = 0.01
    st = bs.search(pi, cum=cum, pairs=(hi, lo, D) if second else None, eps=eps)
    th = _thresholds(bs)
    best = None
    for f, theta, q, r, wm, w0, wp in ref.all_stumps(X, th, hi, lo, D):
        j = bs.bins.n_thresholds[f] + 1 if theta == np.inf else (0 if theta == -np.inf
                                                                  else 1 + int(np.searchsorted(th[f], theta)))
        if r == 0:
            continue
        if second:
            a = 0.5 * np.log((wm + eps) / (wp + eps)) if min(wm, wp) == 0 else 0.5 * np.log(wm / wp)
            score = -(w0 + 2 * np.sqrt(wm * wp))
        else:
            with np.errstate(divide="ignore"):
                a = 0.5 * np.log((1 + r) / (1 - r))
            score = abs(r)
        if cum[f, j, q] + a > 0 and (best is None or score > best):
            best = score
    if best is None:
        assert st is None
    else:
        got = -(st.w_zero + 2 * np.sqrt(st.w_minus * st.w_plus)) if second else abs(st.r)
        assert abs(got - best) < 1e-12


def test_histogram_sparse_rows_equals_dense():
    data, hi, lo, D = _problem(3)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=0)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    rows = np.unique(np.r_[hi, lo])
    np.testing.assert_allclose(bs.histogram(pi, rows), bs.histogram(pi), atol=1e-15)


def test_uint16_codes_255_thresholds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3)).astype(np.float32)
    bs = BinnedStumps(X, max_thresholds=255, random_state=0)
    assert bs.codes_t.dtype == np.uint16 and bs.n_thresholds.max() == 255
    y = (X[:, 0] > 0).astype(int)
    data = RankingData(X, y, np.array([0, 600]))
    p = data.pairs()
    pi = K.potentials_from_pairs(p.hi, p.lo, p.weight, 600)
    st = bs.search(pi)
    assert st.feature == 0 and st.r > 0.99


def test_all_zero_potentials_give_none():
    X = np.arange(6, dtype=np.float32).reshape(3, 2)
    bs = BinnedStumps(X, max_thresholds=4)
    assert bs.search(np.zeros(3)) is None
    with pytest.raises(ValueError):
        bs.search(np.zeros(3), q_def=2)


def _histogram_model(codes_t, rows, pi, n_bins):
    """NumPy model of the kernels' fixed arithmetic: the t-th listed row goes into partial histogram
    t mod 4, except the last len(rows) mod 4 rows, which go into partial 0 (rows in order; np.add.at
    adds sequentially), hist = (p0 + p1) + (p2 + p3)."""
    F = codes_t.shape[0]
    part = np.zeros((4, F, n_bins))
    n4 = rows.size - rows.size % 4
    for k in range(4):
        r = np.r_[rows[k:n4:4], rows[n4:]] if k == 0 else rows[k:n4:4]
        for f in range(F):
            np.add.at(part[k, f], codes_t[f, r], pi[r])
    return (part[0] + part[1]) + (part[2] + part[3])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_features", [1, 3, 4, 5, 8, 11])
def test_histogram_bit_exact_arithmetic(seed, n_features):
    # features in groups of four plus a remainder; ties, NaN (bin 0), one-document and all-equal queries
    data, hi, lo, D = _problem(seed, n_queries=6, n_features=n_features)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    dense = K.potential_histogram_dense(bs.codes_t, pi, bs.n_bins)
    np.testing.assert_array_equal(dense, _histogram_model(bs.codes_t, np.arange(data.n_docs), pi, bs.n_bins))
    rows = np.unique(np.r_[hi, lo])
    sparse = K.potential_histogram(bs.codes_t, rows, pi, bs.n_bins)
    np.testing.assert_array_equal(sparse, _histogram_model(bs.codes_t, rows, pi, bs.n_bins))
    np.testing.assert_allclose(sparse, ref_histogram(bs.codes_t, rows, pi, bs.n_bins), atol=1e-15)


def ref_histogram(codes_t, rows, pi, n_bins):
    """The histogram by definition (one sequential sum per cell)."""
    F = codes_t.shape[0]
    out = np.zeros((F, n_bins))
    for f in range(F):
        np.add.at(out[f], codes_t[f, rows], pi[rows])
    return out


@pytest.mark.parametrize("n_docs", [1, 2, 3, 4, 5, 7, 9])
def test_histogram_tiny_inputs(n_docs):
    rng = np.random.default_rng(n_docs)
    codes_t = rng.integers(0, 4, size=(6, n_docs)).astype(np.uint16)
    pi = rng.normal(size=n_docs)
    np.testing.assert_array_equal(K.potential_histogram_dense(codes_t, pi, 4),
                                  _histogram_model(codes_t, np.arange(n_docs), pi, 4))
    rows = np.arange(0, n_docs, 2)
    np.testing.assert_array_equal(K.potential_histogram(codes_t, rows, pi, 4),
                                  _histogram_model(codes_t, rows, pi, 4))


@pytest.mark.parametrize("seed", range(4))
def test_histogram_rows_cache_same_bits(seed):
    # BinnedStumps.histogram with rows copies the rows' codes once; same bits as the rows kernel, and a
    # new rows set (or a changed one) is not served from the cache
    data, hi, lo, D = _problem(seed, n_queries=6, n_features=6)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    rows = np.unique(np.r_[hi, lo])
    for r in (rows, rows, rows[::2], rows):
        want = K.potential_histogram(bs.codes_t, r, pi, bs.n_bins)
        np.testing.assert_array_equal(bs.histogram(pi, r), want)
    # pi is 0 off the feedback rows, so the dense search finds the same best |r| (to rounding)
    assert abs(abs(bs.search(pi, rows=rows).r) - abs(bs.search(pi).r)) < 1e-12


def _losses_model(hi, lo, D, H):
    """Eq. (21) and Eq. (1) as the branching loop the kernels had (sequential sums, pairs skipped)."""
    half = strict = 0.0
    for a, b, v in zip(H[hi], H[lo], D):
        if a < b:
            half += v
            strict += v
        elif a == b:
            half += 0.5 * v
            strict += v
    return half, strict


def _round_pairs_model(hi, lo, D, h, alpha, D1, H):
    """The round's O(m) work as the three kernels it fuses, one after another (the old code path)."""
    D = D.copy()
    Z, wm, w0, wp = K._update_pairs(hi, lo, D, h, alpha)
    half, strict = _losses_model(hi, lo, D1, H)
    return (Z, wm, w0, wp, half, strict), D, K.potentials_from_pairs(hi, lo, D, H.size)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("shuffle", [False, True])
def test_round_pairs_same_bits_as_separate_kernels(seed, binary, shuffle):
    # ties, NaN (q_def on missing values), one-document and all-equal-label queries; binary stumps and
    # [0, 1]-valued rankings (the per-pair exp path); alpha of both signs and 0; pairs grouped by x_1
    # (as `pairs()` gives them) or in any order (general feedback)
    data, hi, lo, D = _problem(seed, n_queries=7, n_features=4)
    rng = np.random.default_rng(seed)
    if shuffle:
        perm = rng.permutation(hi.size)
        hi, lo, D = hi[perm], lo[perm], D[perm]
    bs = BinnedStumps(data.X, max_thresholds=5, random_state=seed)
    for alpha in (0.37, -1.25, 0.0, 3.0):
        if binary:
            h = bs.values(int(rng.integers(4)), int(rng.integers(bs.n_bins)), float(rng.integers(2)))
        else:
            h = np.round(rng.random(data.n_docs), 1)  # ties, and d = +-1, 0 among other differences
        D1 = np.full(hi.size, 1.0 / max(hi.size, 1))
        H = np.round(rng.normal(size=data.n_docs), 1) + alpha * h
        want, D_want, pi_want = _round_pairs_model(hi, lo, D, h, alpha, D1, H)
        D_got = D.copy()
        pi = np.full(data.n_docs, np.nan)  # overwritten
        got = K._round_pairs(hi, lo, D_got, h, alpha, D1, H, pi)
        assert got == want
        np.testing.assert_array_equal(D_got, D_want)
        np.testing.assert_array_equal(pi, pi_want)
        # and against the paper, Fig. 1 and Eq. (10)
        D_ref = D * np.exp(alpha * (h[lo] - h[hi]))
        np.testing.assert_allclose(D_got, D_ref / D_ref.sum(), rtol=1e-12)
        np.testing.assert_allclose(pi, ref.potentials(hi, lo, D_ref / D_ref.sum(), data.n_docs), atol=1e-15)
        np.testing.assert_allclose(got[4], ref.rloss(hi, lo, D1, H), rtol=1e-12)


def test_round_pairs_no_pairs_and_one_pair():
    h = np.array([1.0, 0.0, 0.0])
    H = np.array([0.5, 0.0, 0.5])
    for hi, lo in ((np.zeros(0, np.int64), np.zeros(0, np.int64)), (np.array([1]), np.array([0]))):
        D = np.full(hi.size, 1.0)
        want, D_want, pi_want = _round_pairs_model(hi, lo, D, h, 0.5, D.copy(), H)
        pi = np.zeros(3)
        got = K._round_pairs(hi, lo, D, h, 0.5, D.copy(), H, pi)
        np.testing.assert_array_equal(np.array(got), np.array(want))  # NaN D when Z = 0, as before
        np.testing.assert_array_equal(pi, pi_want)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_features", [1, 4, 5, 9])
def test_weighted_bin_pass_is_a_histogram(seed, n_features):
    # the benchmark's reference pass: every code read once, its document's weight added to its bin
    data, hi, lo, D = _problem(seed, n_queries=6, n_features=n_features)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    w = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    got = K.weighted_bin_pass(bs.codes_t, w, bs.n_bins)
    np.testing.assert_array_equal(got, ref_histogram(bs.codes_t, np.arange(data.n_docs), w, bs.n_bins))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n_features", [1, 7, 8, 13])
@pytest.mark.parametrize("q_def", [None, 0, 1])
def test_search_sorted_order_is_fig3(seed, n_features, q_def):
    # Fig. 3 in the paper's summation order (running sums over sorted instances): the same best |r| as
    # the histogram search and as Fig. 3 in NumPy, to rounding; ties, NaN, one-document queries, all-equal
    # labels, groups of eight features plus a remainder
    data, hi, lo, D = _problem(seed, n_queries=6, n_features=n_features)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    qmode = -1 if q_def is None else q_def
    order, n_above, buf = K.sorted_order_inputs(bs.codes_t, bs.n_bins)
    f, j, q, r = K._search_sorted_order(order, n_above, pi, bs.n_thresholds, qmode, buf)
    f2, j2, q2, r2 = K._scan_third(K.potential_histogram_dense(bs.codes_t, pi, bs.n_bins), bs.n_thresholds,
                                   qmode)
    want = ref.weaklearn_fig3(data.X.astype(np.float64), _thresholds(bs), pi, q_def)
    assert abs(abs(r) - abs(r2)) < 1e-12 and abs(abs(r) - abs(want[3])) < 1e-12
    if f >= 0:  # the chosen stump's own r recomputed from its definition (Eq. 14)
        h = K.stump_on_codes(bs.codes_t[f], j, float(q))
        assert abs(float(h @ pi) - r) < 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_ranking_losses_same_bits_as_branching_loop(seed):
    # ties in H (counted 1/2 and 1), NaN scores (neither), one-document and all-equal-label queries
    data, hi, lo, D = _problem(seed, n_queries=7)
    rng = np.random.default_rng(seed)
    H = np.round(rng.normal(size=data.n_docs), 1)
    H[rng.random(data.n_docs) < 0.1] = np.nan
    assert K._ranking_losses(hi, lo, D, H) == _losses_model(hi, lo, D, H)


def _update_bipartite_model(v, side, c, doc_query, h, alpha, n_queries):
    """The per-document loop of `_update_bipartite` with one exp per document (the previous kernel)."""
    z1, z0, a1, b1 = (np.zeros(n_queries) for _ in range(4))
    for i in range(v.size):
        q = doc_query[i]
        if side[i] > 0:
            a1[q] += v[i] * h[i]
            v[i] = v[i] * math.exp(-alpha * h[i])  # libm's exp, as the kernels (NumPy's may differ)
            z1[q] += v[i]
        elif side[i] < 0:
            b1[q] += v[i] * h[i]
            v[i] = v[i] * math.exp(alpha * h[i])
            z0[q] += v[i]
    return z1, z0, a1, b1


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("binary", [True, False])
def test_update_bipartite_same_bits_as_exp_per_document(seed, binary):
    # X_1 / X_0 / outside the feedback, several queries (one with a single document), alpha of both signs
    rng = np.random.default_rng(seed)
    n, nq = 40, 5
    doc_query = np.sort(rng.integers(0, nq, size=n)).astype(np.int64)
    side = rng.choice([-1, 0, 1], size=n).astype(np.int64)
    v0 = rng.uniform(0.1, 1.0, size=n)
    h = rng.integers(0, 2, size=n).astype(float) if binary else np.round(rng.random(n), 1)
    for alpha in (0.4, -1.1, 0.0):
        c = np.full(nq, 1.0 / nq)
        v = v0.copy()
        K.update_bipartite(v, side, c, doc_query, h, alpha, nq)
        vm = v0.copy()
        z1, z0, _, _ = _update_bipartite_model(vm, side, c, doc_query, h, alpha, nq)
        for i in range(n):  # the kernel's renormalisation of each side, as it does it
            if side[i] > 0:
                vm[i] /= z1[doc_query[i]]
            elif side[i] < 0:
                vm[i] /= z0[doc_query[i]]
        if numba.config.DISABLE_JIT:  # the kernel then runs NumPy's scalar exp, not libm's: ulps may differ
            np.testing.assert_allclose(v, vm, rtol=1e-15, atol=0)
        else:
            np.testing.assert_array_equal(v, vm)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_streaming_pass_sums_every_code(dtype):
    # the benchmark's memory-bound reference: the integer sum of every code (one feature, one document)
    rng = np.random.default_rng(0)
    for shape in ((1, 1), (3, 7), (9, 130)):
        codes_t = rng.integers(0, np.iinfo(dtype).max + 1, size=shape).astype(dtype)
        assert K._streaming_pass(codes_t) == int(codes_t.astype(np.int64).sum())


def test_workspaces_are_written_before_read():
    # the kernels' workspaces and fully written outputs come from np.empty: NaN in them changes nothing
    data, hi, lo, D = _problem(2, n_queries=6, n_features=6)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=0)
    nb = bs.n_bins
    pi = K.potentials_from_pairs(hi, lo, D, data.n_docs)
    rows = np.unique(np.r_[hi, lo])
    hist, tmp = np.full((6, nb), np.nan), np.full((4, 4, nb), np.nan)
    for got, want in (
            (K._potential_histogram_dense(bs.codes_t, pi, hist.copy(), tmp, K._NO_ROWS),
             K.potential_histogram_dense(bs.codes_t, pi, nb)),
            (K._potential_histogram(bs.codes_t, rows, pi, hist.copy(), tmp),
             K.potential_histogram(bs.codes_t, rows, pi, nb)),
            (K._stump_on_codes(bs.codes_t[1], 2, 1.0, np.full(data.n_docs, np.nan)),
             K.stump_on_codes(bs.codes_t[1], 2, 1.0))):
        np.testing.assert_array_equal(got, want)
    mass, count = K.pair_split_histograms(bs.codes_t, hi, lo, D, nb)
    cum = np.zeros((1, 1, 1))
    want = K.scan_second(mass, count, bs.n_thresholds, -1, cum, False, float(D.sum()), 0.0)
    assert want[0] >= 0
    assert K._scan_second(mass, count, bs.n_thresholds, -1, cum, False, float(D.sum()), 0.0,
                          np.full((6, nb), np.nan)) == want


def test_python_functions_check_their_arrays():
    codes_t = np.zeros((2, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="one length"):
        K.potentials_from_pairs(np.zeros(2, np.int64), np.zeros(3, np.int64), np.ones(2), 3)
    with pytest.raises(ValueError, match="uint8 or uint16"):
        K.potential_histogram_dense(codes_t.astype(np.int32), np.zeros(3), 4)
    with pytest.raises(ValueError, match="one entry per document"):
        K.potential_histogram_dense(codes_t, np.zeros(4), 4)
    with pytest.raises(ValueError, match="n_bins"):
        K.potential_histogram(codes_t, np.arange(3), np.zeros(3), 0)
    with pytest.raises(ValueError, match="mass and count"):
        K.scan_second(np.zeros((6, 2, 4)), np.zeros((6, 2, 3), np.int64), np.ones(2), -1, np.zeros((1, 1, 1)),
                      False, 1.0, 0.0)
    side = np.array([1, -1, 0])
    dq = np.zeros(3, np.int64)
    with pytest.raises(ValueError, match="in place"):  # a converted copy would lose the update
        K.update_bipartite(np.ones(3, np.float32), side, np.ones(1), dq, np.ones(3), 0.5, 1)
    with pytest.raises(ValueError, match="in place"):
        K.update_bipartite(np.ones(3), side, np.ones(4)[::2], dq, np.ones(3), 0.5, 2)
    with pytest.raises(ValueError, match="one length"):
        K.update_bipartite(np.ones(3), side, np.ones(1), dq, np.ones(2), 0.5, 1)


# ------------------------------------------------ choices that do not depend on the CPU's last bits
EPS = np.finfo(np.float64).eps


def _hist_pair(seed, k=6, scale=1.0 + 4 * EPS):
    """Two features whose histograms are alike up to a relative ``scale - 1``: feature 1's |r| is the
    larger by a few units in the last place when ``scale > 1`` (another CPU's rounding of the same sums)."""
    rng = np.random.default_rng(seed)
    h0 = rng.uniform(0.01, 0.1, k + 2)
    h0[0] = 0.0  # code 0: no missing value
    return np.vstack([h0, h0 * scale]), np.array([k, k], dtype=np.int64)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("qmode", [-1, 0])
@pytest.mark.parametrize("scale", [1.0 + 4 * EPS, 1.0 - 4 * EPS, 1.0 + 1e-12])
def test_weaklearn3_near_tie_keeps_the_first_stump(seed, qmode, scale):
    # a stump better by a few ulps (or 1e-12) is not better: the first in scan order is kept on every CPU
    hist, nt = _hist_pair(seed, scale=scale)
    f, j, q, r = K._scan_third(hist, nt, qmode)
    assert f == 0
    f2, j2, q2, r2 = K._scan_third_cum(hist, nt, qmode, np.zeros((2, hist.shape[1], 2)))
    assert f2 == 0
    # a stump better by more than TIE_TOL wins
    hist[1] *= 1.0 + 1e-8
    assert K._scan_third(hist, nt, qmode)[0] == 1


def test_r_within_tie_tol_of_zero_is_no_stump():
    hist = np.zeros((1, 4))
    hist[0, 2] = 1e-17  # rounding left over from sums that are 0 in exact arithmetic
    assert K._scan_third(hist, np.array([2], dtype=np.int64), -1)[0] == -1


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scale", [1.0 + 4 * EPS, 1.0 - 4 * EPS])
def test_weaklearn2_near_tie_keeps_the_first_stump(seed, scale):
    data, hi, lo, D = _problem(seed)
    bs = BinnedStumps(data.X, max_thresholds=6, random_state=seed)
    mass, count = K.pair_split_histograms(bs.codes_t, hi, lo, D, bs.n_bins)
    cum = np.zeros((1, 1, 1))
    fb = K.scan_second(mass, count, bs.n_thresholds, -1, cum, False, float(D.sum()), 0.0)[0]
    # the best feature and a copy with every pair weight scaled by (1 +- 4 eps): Z differs in the last bits
    m2 = np.ascontiguousarray(np.stack([mass[:, fb], mass[:, fb] * scale], axis=1))
    c2 = np.ascontiguousarray(np.stack([count[:, fb], count[:, fb]], axis=1))
    nt = np.array([bs.n_thresholds[fb]] * 2, dtype=np.int64)
    assert K.scan_second(m2, c2, nt, -1, cum, False, float(D.sum()), 0.0)[0] == 0


def test_scaled_features_near_tie_keeps_the_first():
    from lrank.weak.stumps import ScaledFeatures

    rng = np.random.default_rng(0)
    x = rng.uniform(size=40)
    X = np.c_[x, x * (1.0 + 4 * EPS)]  # the same ranking; BLAS's sums may round the two alike or not
    sf = ScaledFeatures(X)
    sf.scaled[:, 1] = sf.scaled[:, 0] * (1.0 + 4 * EPS)  # feature 1 better by a few ulps
    pi = rng.normal(size=40)
    pi -= pi.mean()
    assert sf.search(pi, q_def=0).feature == 0
