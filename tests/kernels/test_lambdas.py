"""LambdaMART lambdas and weights: kernel against the pair-by-pair reference."""

import numpy as np
import pytest

from lrank._kernels.lambdas import lambdamart_gradients
from tests.reference import trees as ref

pytestmark = pytest.mark.kernel


def _queries(rng, sizes, n_labels=5, ties=False):
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, n_labels, n).astype(np.int32)
    s = rng.normal(size=n)
    if ties:
        s = np.round(s, 0)
    return y, qptr, s


@pytest.mark.parametrize("k", [0, 1, 3, 10])
@pytest.mark.parametrize("ties", [False, True])
def test_kernel_matches_reference(k, ties):
    rng = np.random.default_rng(k + 10 * ties)
    sizes = [1, 7, 12, 2, 5, 9]
    y, qptr, s = _queries(rng, sizes, ties=ties)
    y[qptr[2]:qptr[3]] = 0  # no relevant document
    y[qptr[4]:qptr[5]] = 2  # all equal labels
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=k, with_pairs=True)
    rlam, rw, rpairs = ref.lambdas(y, qptr, s, k=k)
    np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-14)
    lam2, w2, _ = lambdamart_gradients(y, qptr, s, k=k)  # the label-grouped loop (no pair list)
    np.testing.assert_allclose(lam2, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w2, rw, rtol=1e-12, atol=1e-14)
    pa, pb, pw = pairs
    got = sorted(zip(pa.tolist(), pb.tolist(), pw.tolist()))
    want = sorted(rpairs)
    assert [(a, b) for a, b, _ in got] == [(int(a), int(b)) for a, b, _ in want]
    np.testing.assert_allclose([h for _, _, h in got], [h for _, _, h in want], rtol=1e-12)


def test_structure():
    rng = np.random.default_rng(1)
    y, qptr, s = _queries(rng, [30, 40, 1])
    lam, w, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=10, with_pairs=True)
    for q in range(3):
        assert abs(lam[qptr[q]:qptr[q + 1]].sum()) < 1e-12  # lambdas cancel within a query
    assert (w >= 0).all() and (pw > 0).all()
    assert (y[pa] > y[pb]).all()
    np.testing.assert_allclose(np.bincount(pa, pw, y.size) + np.bincount(pb, pw, y.size), w, rtol=1e-12)
    assert lam[-1] == 0 and w[-1] == 0  # one-document query


def test_sigma_and_bad_input():
    rng = np.random.default_rng(2)
    y, qptr, s = _queries(rng, [8])
    l1, _, _ = lambdamart_gradients(y, qptr, s, sigma=1.0)
    rl, _, _ = ref.lambdas(y, qptr, s, sigma=2.0)
    l2, _, _ = lambdamart_gradients(y, qptr, s, sigma=2.0)
    np.testing.assert_allclose(l2, rl, rtol=1e-12)
    assert not np.allclose(l1, l2)
    with pytest.raises(ValueError):
        lambdamart_gradients(y[:-1], qptr, s)


def test_far_apart_scores_take_the_pairs_own_exp():
    """Scores 400 apart: exp(sigma (s - s_max)) underflows for the low documents, so those pairs fall back
    to the pair's own exp; lambdas and weights still match the pair-by-pair reference (to 1e-12 of the
    largest value: the reference's ``rho (1 - rho)`` rounds ``1 - rho`` to 0 where ours keeps e^-400)."""
    y = np.array([0, 2, 1, 0, 1, 2], dtype=np.int32)
    s = np.array([0.0, -400.0, -800.0, -1200.0, 3.0, -801.0])
    qptr = np.array([0, 6], dtype=np.int64)
    for sigma in (1.0, 2.5):
        lam, w, _ = lambdamart_gradients(y, qptr, s, k=0, sigma=sigma)
        rlam, rw, _ = ref.lambdas(y, qptr, s, k=0, sigma=sigma)
        assert np.isfinite(lam).all() and np.isfinite(w).all()
        np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-12 * np.abs(rlam).max())
        np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-12 * np.abs(rw).max())


@pytest.mark.parametrize("k", [0, 3, 10])
@pytest.mark.parametrize("top", [3, 60])
def test_label_grouping_counted_or_sorted(k, top):
    """Labels are grouped (and the ideal DCG summed) by counting when their range is small and by a stable
    sort when it is wider than the largest query (labels 0, 1, 2, 60); both match the pair-by-pair
    reference, with ties in scores and labels, one-document queries and queries of all-equal labels."""
    rng = np.random.default_rng(50 + k + top)
    sizes = [1, 13, 6, 40, 3, 25]
    y, qptr, s = _queries(rng, sizes, n_labels=4, ties=True)
    y[qptr[4]:qptr[5]] = 1  # all equal labels
    y[y == 3] = top
    lam, w, _ = lambdamart_gradients(y, qptr, s, k=k)
    rlam, rw, _ = ref.lambdas(y, qptr, s, k=k)
    np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw", [dict(k=0), dict(k=10), dict(k=60), dict(k=0, norm=True),
                                dict(k=0, norm=True, label_gain="linear"), dict(k=10, norm=True)],
                         ids=["whole", "k10", "all_within_k", "whole_norm", "whole_norm_linear", "k10_norm"])
def test_parallel_over_queries_is_the_serial_result(kw):
    """``n_jobs=2`` (``prange`` over chunks of queries) gives the serial lambdas and weights bit for bit, with
    one-document queries, queries of all-equal labels and ties in scores; also where every query, or some,
    goes to `_lambdas_within` (at most ``k`` documents; every query of the whole list with LightGBM's
    normalisation), whose parallel twin runs on several such queries."""
    rng = np.random.default_rng(7 + kw["k"])
    sizes = [1, 30, 2, 57, 1, 12, 40, 3, 25, 9]
    y, qptr, s = _queries(rng, sizes, ties=True)
    y[qptr[5]:qptr[6]] = 1
    a = lambdamart_gradients(y, qptr, s, **kw)
    b = lambdamart_gradients(y, qptr, s, n_jobs=2, **kw)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.any(a[0] != 0.0)


#: sha256 (first 16 hex digits) of ``lam.tobytes() + w.tobytes()`` of the recorded cases' whole-list calls
#: without a pair list, recorded at issue 15.2 (each pair visited once, `_pair_sweep`); the fixture still
#: holds their bits from before (each pair visited twice), 1e-14 apart
_WHOLE_LIST_DIGESTS = {
    "small_ties|k=0|sigma=1|pairs=0": "f8f8e7106b602be9",
    "small|k=0|sigma=1|pairs=0": "e9c9ec309f8c68b2",
    "wide_labels|k=0|sigma=1|pairs=0": "b24827e287c77f38",
    "nan_scores|k=0|sigma=1|pairs=0": "bc33fb4686074a61",
    "letor|k=0|sigma=1|pairs=0": "938ed42580079e6e",
    "within_k|k=0|sigma=1|pairs=0": "f50ea6398d6e94e7",
    "letor_ties|k=0|sigma=1|pairs=0": "bb61cdba1133fa82",
}


def test_ndcg_at_k_lambdas_keep_their_bits():
    """LambdaMART's NDCG@k lambdas, weights and pair lists are the bits recorded from the kernel before the
    session-4 rewrite (one kernel instead of a chain of nine; `tests/reference/lambdas_cases.py`), on ties,
    one-document queries, all-equal labels, queries with no relevant document, a wide label range, NaN and
    far-apart scores and LETOR-sized queries; the whole-list lambdas (``k <= 0``) with a pair list and where
    an exponential underflowed (pair by pair) too. The other whole-list lambdas moved at issue 15.2 (each
    pair once, `_pair_sweep`): within 1e-12 of the recorded ones, and their new bits pinned by digests."""
    import hashlib

    import numba

    from tests.reference import lambdas_cases as cases

    jit_off = numba.config.DISABLE_JIT
    recorded = np.load(cases.FIXTURE)
    for name, (y, qptr, s) in cases.inputs().items():
        for k, sigma, with_pairs in cases.CALLS:
            key = cases.call_key(name, k, sigma, with_pairs)
            lam, w, pairs = lambdamart_gradients(y, qptr, s, k=k, sigma=sigma, with_pairs=with_pairs)
            if key in _WHOLE_LIST_DIGESTS:
                for part, v in (("lam", lam), ("w", w)):
                    want = recorded[f"{key}|{part}"]
                    np.testing.assert_allclose(v, want, rtol=1e-12, atol=1e-15 * np.nanmax(np.abs(want)),
                                               err_msg=f"{key} {part}")
                if not jit_off:
                    digest = hashlib.sha256(lam.tobytes() + w.tobytes()).hexdigest()[:16]
                    assert digest == _WHOLE_LIST_DIGESTS[key], (key, digest)
                continue
            got = {"lam": lam, "w": w}
            if key + "|pa" in recorded.files:
                got.update(pa=pairs[0].astype(np.int32), pb=pairs[1].astype(np.int32), pw=pairs[2])
            for part, v in got.items():
                want = recorded[f"{key}|{part}"]
                assert v.dtype == want.dtype and v.shape == want.shape, (key, part)
                if jit_off:  # plain Python: NumPy's scalar exp/log2 and no fused multiply-adds, so ulps move
                    np.testing.assert_allclose(v, want, rtol=1e-12, atol=1e-15, err_msg=f"{key} {part}")
                else:
                    assert v.tobytes() == want.tobytes(), (key, part)


@pytest.mark.kernel
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 16, 17, 33, 63, 64, 65, 70, 151])
def test_stable_sort_of_score_keys_is_numpys_mergesort(n):
    """`_score_keys` + `_sort_stable` rank documents as ``np.argsort(-scores, kind="mergesort")``: ties in
    their incoming order, NaN last (any sign), signed zeros equal, infinities, subnormals; on a prefix ``n``
    of the buffers only. On integer keys (the labels' fallback sort) it is the stable sort too."""
    from lrank._kernels.lambdas import _score_keys
    from lrank._kernels.sorting import _sort_stable

    rng = np.random.default_rng(n)
    for trial in range(6):
        s = np.round(rng.normal(size=n + 4), 0 if trial % 2 else 1) * (1e-310 if trial == 3 else 1.0)
        if n:
            s[rng.integers(0, n, max(1, n // 5))] = np.nan
            s[rng.integers(0, n, max(1, n // 7))] = -0.0
            s[rng.integers(0, n, max(1, n // 9))] = -np.nan
            s[rng.integers(0, n, 1)] = rng.choice([np.inf, -np.inf])
        if trial == 4:
            s[:] = 1.0  # all equal
        key = np.empty(n + 4)
        idx = np.full(n + 4, -7, dtype=np.int64)
        nn = _score_keys(s, 0, n, key, idx)
        assert nn == np.count_nonzero(~np.isnan(s[:n]))
        _sort_stable(key, idx, np.empty(n + 4), np.empty(n + 4, dtype=np.int64), nn)
        assert idx[:n].tolist() == np.argsort(-s[:n], kind="mergesort").tolist()
        assert idx[n:].tolist() == [-7] * 4
        labels = rng.integers(-3, 40, n + 4)
        key = labels.astype(np.float64)
        idx = np.arange(n + 4, dtype=np.int64)
        _sort_stable(key, idx, np.empty(n + 4), np.empty(n + 4, dtype=np.int64), n)
        assert idx[:n].tolist() == np.argsort(labels[:n], kind="mergesort").tolist()


def test_one_compiled_specialisation():
    """Every call, whatever the caller's dtypes and with or without the pair list, runs the one compiled
    signature of `_lambdas` (NDCG@k), `_lambdas_pairs` (pair lists) or `_lambdas_whole` (the whole list; issue
    15.5: each specialisation costs a compile)."""
    from lrank._kernels import lambdas as L

    if not hasattr(L._lambdas, "signatures"):
        pytest.skip("NUMBA_DISABLE_JIT")
    rng = np.random.default_rng(3)
    y, qptr, s = _queries(rng, [5, 1, 12])
    lambdamart_gradients(y.astype(np.int64), qptr.tolist(), s.astype(np.float32), k=3)
    lambdamart_gradients(y, qptr.astype(np.int32), s, k=0, with_pairs=True)
    lambdamart_gradients(y.astype(np.uint8), qptr, s[::-1], k=np.int32(10), sigma=2)
    lambdamart_gradients(y, qptr, s, k=-1, sigma=np.float32(1.5))
    lambdamart_gradients(y.tolist(), qptr, s.tolist(), k=0)
    for kernel in (L._lambdas, L._lambdas_pairs, L._lambdas_whole, L._lambdas_within):
        assert len(kernel.signatures) == 1, kernel
    for callee in (L._sort_bucketed, L._pair_sweep):  # none when the callers came from the cache
        assert len(callee.signatures) <= 1, callee


def test_gains_from_ldexp_are_the_integer_powers():
    """The gains ``2^y - 1`` come from ``math.ldexp(1.0, y) - 1.0`` (issue 15.5: numba's integer-power loop
    for ``2.0 ** y`` cost ~0.2 s of compilation): the same bits as ``2.0 ** y - 1.0`` compiled by numba for
    int32 label, including negative ones, the subnormal range and overflow to infinity (only ``-2^31``
    differs: numba's power loop raised OverflowError there, ``ldexp`` gives ``-1``)."""
    import math

    import numba

    def both(y, a, b):
        for i in range(y.size):
            a[i] = 2.0 ** y[i] - 1.0
            b[i] = math.ldexp(1.0, int(y[i])) - 1.0

    if numba.config.DISABLE_JIT:
        pytest.skip("about numba's compiled power (Python's float power raises on overflow)")
    both = numba.njit(both)
    y = np.r_[np.arange(-1100, 1100), [np.iinfo(np.int32).min + 1, np.iinfo(np.int32).max]].astype(np.int32)
    a, b = np.empty(y.size), np.empty(y.size)
    both(y, a, b)
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_underflowing_queries_are_finished_pair_by_pair(n_jobs):
    """`_lambdas` (`_lambdas_whole` for the whole list) only marks a query whose exponentials underflow;
    `_lambdas_pairs` then computes it pair by pair: the same lambdas as the pair-list path (which runs every
    query pair by pair), between ordinary queries, serially and over threads."""
    rng = np.random.default_rng(11)
    y, qptr, s = _queries(rng, [8, 12, 1, 15, 9], ties=True)
    far = slice(qptr[1], qptr[2])
    s[far] = np.linspace(0.0, -1500.0, qptr[2] - qptr[1])  # the second query's scores 1500 apart
    for k in (0, 3, 10):  # k = 0: `_lambdas_whole` marks it too
        lam, w, _ = lambdamart_gradients(y, qptr, s, k=k, n_jobs=n_jobs)
        plam, pw, _ = lambdamart_gradients(y, qptr, s, k=k, with_pairs=True)
        assert np.isfinite(lam).all() and np.isfinite(w).all()
        assert lam[far].tobytes() == plam[far].tobytes() and w[far].tobytes() == pw[far].tobytes()
        assert np.any(lam[far] != 0.0)


@pytest.mark.parametrize("sigma", [1.0, 1.7])
@pytest.mark.parametrize("nb", [0, 1, 5, 7, 8, 9, 13, 16, 31, 64, 101])
def test_pair_sweep_sums_in_its_fixed_order(nb, sigma):
    """`_pair_sweep` (whole list, issue 15.2) computes each pair's terms once: a swept document's sums take
    the sweeping documents in order, and a sweeping document's own sum is exactly eight lanes (lane ``j``:
    the terms of ``b = j, j + 8, ...`` in turn) added in the fixed tree of `_lanes_sum`, whatever the
    vector width; the same bits twice and at other offsets in the buffers (alignment, where the vector
    loop starts), and the terms within 1e-12 of the plain formulas."""
    from lrank._kernels.lambdas import _LANES, _pair_sweep

    rng = np.random.default_rng(nb + int(1000 * sigma))
    na = 3
    ea, da = rng.uniform(1e-3, 1.0, na), rng.uniform(0.0, 1.0, na)
    eb, db, gi = rng.uniform(1e-3, 1.0, nb), rng.uniform(0.0, 1.0, nb), sigma * rng.uniform(0.1, 1.0, nb)
    la0, wa0 = rng.normal(size=na), rng.uniform(0.0, 1.0, na)

    def sweep(a, off):
        """Documents ``a`` sweep every b, their data placed ``off`` elements into fresh buffers."""
        bufs = [np.full(off + x.size + 3, np.nan) for x in (ea[a], da[a], la0[a], wa0[a], eb, db, gi)]
        views = []
        for buf, x in zip(bufs, (ea[a], da[a], la0[a], wa0[a], eb, db, gi)):
            buf[off:off + x.size] = x
            views.append(buf[off:off + x.size])
        LAM, W = np.zeros(off + nb), np.zeros(off + nb)
        PC, PH = np.full(nb + _LANES + off, np.nan), np.full(nb + _LANES + off, np.nan)
        EA, DA, LA, WA, E, D, GI = views
        _pair_sweep(EA, DA, LA, WA, E, D, GI, LAM[off:], W[off:], sigma, PC[off:], PH[off:])
        return LA.copy(), WA.copy(), LAM[off:].copy(), W[off:].copy()

    every = np.arange(na)
    first = sweep(every, 0)
    for off in (0, 1, 3, 5):
        again = sweep(every, off)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(first, again)), off
    la, wa, lam, w = first
    lam_sum, w_sum = np.zeros(nb), np.zeros(nb)
    for a in range(na):
        la1, wa1, lam1, w1 = sweep(np.array([a]), 0)
        c, h = -lam1, w1  # one sweeping document on zeroed sums: the pair terms exactly (0 - c, 0 + h)
        for terms, start, got in ((c, la0[a], la1[0]), (h, wa0[a], wa1[0])):
            lanes = [0.0] * _LANES
            for v in range(nb):
                lanes[v % _LANES] += float(terms[v])
            q = [lanes[(nb + j) % _LANES] for j in range(_LANES)]
            want = float(start) + (((q[0] + q[1]) + (q[2] + q[3])) + ((q[4] + q[5]) + (q[6] + q[7])))
            assert got == want, (a, got, want)
        assert la1[0] == la[a] and wa1[0] == wa[a]
        lam_sum = lam_sum - c  # the swept documents take the sweeping ones in order
        w_sum = w_sum + h
        rho = eb / (ea[a] + eb)  # the sweeping document is the more relevant one
        dz = np.abs(da[a] - db) * gi / sigma
        np.testing.assert_allclose(c, sigma * dz * rho, rtol=1e-12)
        np.testing.assert_allclose(h, sigma * sigma * dz * rho * (1.0 - rho), rtol=1e-12)
    assert lam.tobytes() == lam_sum.tobytes() and w.tobytes() == w_sum.tobytes()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_whole_list_sweeps_match_the_reference(n_jobs):
    """Whole-list queries whose least relevant group is the largest (short sweeps of many documents) or the
    smallest (long sweeps), with four labels: the pair-by-pair reference's lambdas and weights, and the
    same bits twice (and over threads)."""
    rng = np.random.default_rng(21)
    sizes = [40, 33, 1, 70, 12]
    y, qptr, s = _queries(rng, sizes, n_labels=3)
    y[qptr[0]:qptr[1]] = rng.choice([0, 1, 2], 40, p=[0.6, 0.3, 0.1])
    y[qptr[1]:qptr[2]] = rng.choice([0, 1, 2], 33, p=[0.1, 0.3, 0.6])
    y[qptr[3]:qptr[4]] = rng.choice([0, 1, 2, 4], 70, p=[0.1, 0.2, 0.3, 0.4])
    lam, w, _ = lambdamart_gradients(y, qptr, s, k=0, n_jobs=n_jobs)
    rlam, rw, _ = ref.lambdas(y, qptr, s, k=0)
    np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-14)
    lam2, w2, _ = lambdamart_gradients(y, qptr, s, k=0)
    assert lam.tobytes() == lam2.tobytes() and w.tobytes() == w2.tobytes()


# -- label_gain: the gain of each label (None: 2^y - 1; "linear": y; LightGBM's table) --------------------

#: a custom table with a repeated gain (labels 2 and 3 weigh alike: their pairs weigh 0)
CUSTOM_GAINS = [0.0, 1.0, 2.5, 2.5, 9.0, 20.0]


def _table(label_gain, y):
    """The reference's table for ``label_gain`` (None stays None: the reference's own ``2^y - 1``)."""
    if isinstance(label_gain, str):
        return np.arange(int(y.max()) + 1, dtype=float)
    return label_gain


@pytest.mark.parametrize("label_gain", ["linear", CUSTOM_GAINS])
@pytest.mark.parametrize("k", [0, 1, 3, 10])
@pytest.mark.parametrize("ties", [False, True])
def test_label_gain_kernel_matches_reference(label_gain, k, ties):
    """Every path (top-k rows, queries within k, the whole list, pair lists) against the reference with the
    gain table: ties in scores, a one-document query, no relevant document, all labels equal."""
    rng = np.random.default_rng(50 + k + 10 * ties)
    y, qptr, s = _queries(rng, [1, 7, 12, 2, 5, 9, 40], n_labels=6, ties=ties)
    y[qptr[2]:qptr[3]] = 0  # no relevant document
    y[qptr[4]:qptr[5]] = 2  # all equal labels
    rlam, rw, rpairs = ref.lambdas(y, qptr, s, k=k, gains=_table(label_gain, y))
    lam, w, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=k, with_pairs=True, label_gain=label_gain)
    for n_jobs in (1, 2):
        lam2, w2, _ = lambdamart_gradients(y, qptr, s, k=k, n_jobs=n_jobs, label_gain=label_gain)
        for a, b in ((lam, rlam), (w, rw), (lam2, rlam), (w2, rw)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    got = sorted(zip(pa.tolist(), pb.tolist(), pw.tolist()))
    want = sorted(rpairs)
    assert [(a, b) for a, b, _ in got] == [(int(a), int(b)) for a, b, _ in want]
    np.testing.assert_allclose([h for _, _, h in got], [h for _, _, h in want], rtol=1e-12)
    assert lam[0] == 0 and w[0] == 0  # the one-document query


@pytest.mark.parametrize("k", [0, 3, 10])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_label_gain_none_is_the_power_table_bit_for_bit(k, n_jobs):
    """``label_gain=None`` (the kernels' ``2^y - 1``) and the explicit table ``ldexp(1, i) - 1`` give the
    same bits, pair list included."""
    rng = np.random.default_rng(7 + k)
    y, qptr, s = _queries(rng, [1, 30, 2, 57, 12, 40, 3, 25], n_labels=5, ties=True)
    table = np.ldexp(1.0, np.arange(5)) - 1.0
    for pairs in (False, True):
        a = lambdamart_gradients(y, qptr, s, k=k, n_jobs=n_jobs, with_pairs=pairs)
        b = lambdamart_gradients(y, qptr, s, k=k, n_jobs=n_jobs, with_pairs=pairs, label_gain=table.tolist())
        assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
        if pairs:
            assert all(u.tobytes() == v.tobytes() for u, v in zip(a[2], b[2]))


@pytest.mark.parametrize("k", [0, 10])
def test_linear_gain_differs_above_label_one_only(k):
    """``"linear"`` equals the default on 0/1 labels (``2^1 - 1 = 1``) and differs once a label is 2 or
    more."""
    rng = np.random.default_rng(3)
    y, qptr, s = _queries(rng, [9, 14, 30], n_labels=2)
    a = lambdamart_gradients(y, qptr, s, k=k)
    b = lambdamart_gradients(y, qptr, s, k=k, label_gain="linear")
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    y[qptr[1]] = 3
    a = lambdamart_gradients(y, qptr, s, k=k)
    b = lambdamart_gradients(y, qptr, s, k=k, label_gain="linear")
    assert not np.array_equal(a[0], b[0])


def test_label_gain_refused_by_name():
    y = np.array([0, 1, 3, 2], dtype=np.int32)
    qptr = np.array([0, 4], dtype=np.int64)
    s = np.zeros(4)
    for bad, what in (([0, -1, 2, 3], ">= 0"), ([0, np.nan, 2, 3], "finite"), ([0, np.inf, 2, 3], "finite"),
                      ([0, 3, 2, 4], "non-decreasing"), ([0, 1, 3], "label 3"), ("exp", "'linear'"),
                      ([[0, 1], [2, 3]], "1-d"), ([], "1-d"), (["a", "b"], "array of gains")):
        with pytest.raises((ValueError, TypeError), match="label_gain") as err:
            lambdamart_gradients(y, qptr, s, label_gain=bad)
        assert what in str(err.value)
    with pytest.raises(ValueError, match="label_gain.*labels >= 0"):
        lambdamart_gradients(np.array([0, -1], dtype=np.int32), np.array([0, 2]), np.zeros(2),
                             label_gain="linear")
    lam, _, _ = lambdamart_gradients(y, qptr, s, label_gain=[0, 1, 1, 1])  # equal gains: allowed
    assert np.isfinite(lam).all()
