"""OLE's pair histograms (``lrank._kernels.pair_histograms``) against plain NumPy, bit for bit, and OLE
trees against the brute-force reference (Xia, Zhai & Wang, Example 3-4 and Eq. 13)."""

import numpy as np
import pytest

from lrank._kernels import pair_histograms as ph
from lrank._kernels.lambdas import lambdamart_gradients
from lrank.weak.tree import RegressionTree
from tests.reference import pair_histograms as ref_ph
from tests.reference import trees as ref


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
    return codes, off, pa, pb, pw, lam, w, qptr, y


@pytest.mark.kernel
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_histograms_bits_match_numpy(seed, dtype):
    codes, off, pa, pb, pw, *_ = _pairs(seed, dtype=dtype)
    m = pa.size
    for lo, hi in ((0, m), (3, m - 5), (4, 4)):
        want = ref_ph.pair_histograms(codes, pa, pb, pw, lo, hi, off)
        got = np.zeros(off[-1]), np.zeros(off[-1])
        ph.pair_histograms(codes, pa, pb, pw, lo, hi, off, *got)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
        for nblk in (1, 2, 3, 1000):  # any blocking of the features: the same bits
            par = np.zeros(off[-1]), np.zeros(off[-1])
            ph.pair_histograms_parallel(codes, pa, pb, pw, lo, hi, off, *par, nblk)
            assert par[0].tobytes() == want[0].tobytes() and par[1].tobytes() == want[1].tobytes()
    # a feature subset, and removal (sign -1) from non-zero buffers
    feats = np.array([4, 1, 1, 3], dtype=np.int64)
    soff = np.r_[0, np.cumsum(np.diff(off)[feats])].astype(np.int64)
    start = np.random.default_rng(seed).normal(size=(2, soff[-1]))
    want = ref_ph.pair_histograms(codes, pa, pb, pw, 2, m, soff, feats, -1.0, start[0].copy(),
                                  start[1].copy())
    got = start[0].copy(), start[1].copy()
    ph.pair_histograms(codes, pa, pb, pw, 2, m, soff, *got, feats=feats, sign=-1.0)
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


@pytest.mark.kernel
def test_pair_histograms_by_max_and_min_code():
    """The definition, on a hand-checked pair: weight 2 at codes (3, 1) goes to pmax bin 3 and pmin bin 1;
    a tied pair (2, 2) goes to bin 2 of both."""
    codes = np.array([[3], [1], [2], [2]], dtype=np.uint8)
    off = np.array([0, 4], dtype=np.int64)
    pmax, pmin = np.zeros(4), np.zeros(4)
    ph.pair_histograms(codes, np.array([0, 2]), np.array([1, 3]), np.array([2.0, 0.5]), 0, 2, off, pmax, pmin)
    np.testing.assert_array_equal(pmax, [0, 0, 0.5, 2])
    np.testing.assert_array_equal(pmin, [0, 2, 0.5, 0])


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [3, 4])
def test_partition_and_sibling_subtraction(seed):
    """A split reorders the node's pairs (left, right, crossing; stable) and the larger child's histograms
    are the parent's - crossing - smaller child's: the reference's bits, and the direct sums' values."""
    codes, off, pa, pb, pw, *_ = _pairs(seed)
    n, m = codes.shape[0], pa.size
    rng = np.random.default_rng(seed)
    leaf_of = np.where(codes[:, 2] <= 2, 5, 6).astype(np.int64)
    leaf_of[rng.random(n) < 0.1] = 7  # documents that left the node earlier: their pairs are dropped
    want, (w_mid, w_end) = ref_ph.partition_pairs(pa, pb, pw, 2, m, leaf_of, 5, 6)
    qa, qb, qw = pa.copy(), pb.copy(), pw.copy()
    mid, end = ph.partition_pairs(qa, qb, qw, 2, m, leaf_of, 5, 6)
    assert (mid, end) == (w_mid, w_end)
    for got, exp, orig in zip((qa, qb, qw), want, (pa, pb, pw)):
        np.testing.assert_array_equal(got[2:m][:end - 2], exp[:end - 2])
        np.testing.assert_array_equal(got[:2], orig[:2])
    crossing = want[0][end - 2:], want[1][end - 2:], want[2][end - 2:]
    assert (leaf_of[crossing[0]] != leaf_of[crossing[1]]).all()
    # the parent's histograms over its pairs 2:m, in the partitioned order
    parent = ref_ph.pair_histograms(codes, qa, qb, qw, 2, m, off)
    small_ref = ref_ph.pair_histograms(codes, qa, qb, qw, 2, mid, off)
    large_ref = ref_ph.pair_histograms(codes, qa, qb, qw, end, m, off, sign=-1.0, pmax=parent[0].copy(),
                                       pmin=parent[1].copy())
    large_ref = large_ref[0] - small_ref[0], large_ref[1] - small_ref[1]
    for feats, o in ((None, off), (np.array([2, 0], dtype=np.int64), None)):
        if feats is not None:  # the same on a feature subset
            o = np.r_[0, np.cumsum(np.diff(off)[feats])].astype(np.int64)
            sel = np.concatenate([np.arange(off[f], off[f + 1]) for f in feats])
        else:
            sel = np.arange(off[-1])
        s_max, s_min = np.full(o[-1], 0.0), np.full(o[-1], 0.0)
        p_max, p_min = parent[0][sel].copy(), parent[1][sel].copy()
        ph.sibling_pair_histograms(codes, qa, qb, qw, (2, mid), (end, m), o, s_max, s_min, p_max, p_min,
                                   feats=feats)
        for got, exp in ((s_max, small_ref[0]), (s_min, small_ref[1]), (p_max, large_ref[0]),
                         (p_min, large_ref[1])):
            assert got.tobytes() == exp[sel].tobytes()
        direct = ref_ph.pair_histograms(codes, qa, qb, qw, mid, end, off)
        np.testing.assert_allclose(p_max, direct[0][sel], atol=1e-12)
        np.testing.assert_allclose(p_min, direct[1][sel], atol=1e-12)


def test_checked_entry_points_reject_bad_input():
    codes, off, pa, pb, pw, *_ = _pairs(0)
    buf = np.zeros(off[-1]), np.zeros(off[-1])
    with pytest.raises(ValueError, match="sign"):
        ph.pair_histograms(codes, pa, pb, pw, 0, 2, off, *buf, sign=2.0)
    with pytest.raises(ValueError, match="outside"):
        ph.pair_histograms(codes, pa, pb, pw, 0, pa.size + 1, off, *buf)
    with pytest.raises(ValueError, match="rows of codes"):
        ph.pair_histograms(codes, pa + codes.shape[0], pb, pw, 0, 2, off, *buf)
    with pytest.raises(ValueError, match="float64"):
        ph.pair_histograms(codes, pa, pb, pw, 0, 2, off, np.zeros(3), buf[1])
    with pytest.raises(ValueError, match="int64"):
        ph.pair_histograms(codes, pa.astype(np.int32), pb, pw, 0, 2, off, *buf)
    with pytest.raises(ValueError, match="index leaf_of"):
        ph.partition_pairs(pa.copy(), pb - codes.shape[0], pw.copy(), 0, pa.size, np.zeros(codes.shape[0],
                           dtype=np.int64), 1, 2)


# ------------------------------------------------------------------------------------------- OLE trees
def _leaf_sets(leaf_of):
    return sorted(tuple(np.flatnonzero(leaf_of == nd)) for nd in np.unique(leaf_of))


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["breadth_first", "best_first"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ole_tree_matches_brute_force(seed, growth):
    """Every leaf of an OLE tree with pairs is the brute-force reference's (Eq. 13 with the exact pairwise
    second derivative), on ties, missing codes, a one-document and an all-equal-label query."""
    codes, off, pa, pb, pw, lam, w, *_ = _pairs(seed, n_max_code=5, F=3)
    kw = dict(min_child_samples=2, min_child_weight=1e-9)
    tree = RegressionTree(num_leaves=5, growth=growth, criterion="ole", **kw).fit_gradients(
        codes, -lam, w, pairs=(pa, pb, pw))
    leaves, _ = ref.fit_tree(codes, -lam, w, 5, "ole", min_data=2, min_hess=1e-9,
                             pairs=list(zip(pa, pb, pw)), growth=growth)
    assert _leaf_sets(tree.leaf_of_) == sorted(tuple(np.flatnonzero(M)) for M in leaves)


def test_ole_tree_with_no_pair_is_rwse():
    """An empty pair list (e.g. every query's labels equal): OLE's exact second derivative is the additive
    one, so the tree is RWSE's, bit for bit (the pair buffers exist even with no pair)."""
    codes, off, pa, pb, pw, lam, w, *_ = _pairs(5)
    none = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0)
    a = RegressionTree(num_leaves=6, min_child_samples=2, criterion="ole").fit_gradients(codes, -lam, w,
                                                                                      pairs=none)
    b = RegressionTree(num_leaves=6, min_child_samples=2, criterion="rwse").fit_gradients(codes, -lam, w)
    for x, y in ((a.feature_, b.feature_), (a.bin_, b.bin_), (a.value_, b.value_), (a.gain_, b.gain_)):
        assert x.tobytes() == y.tobytes()


def test_ole_workspace_reuse_and_threads_same_bits(monkeypatch):
    """Trees of one run reuse the workspace (pair lists of other lengths); the parallel pair kernel gives
    the serial bits; unsearched children (too small, or after the last split) change nothing."""
    monkeypatch.setattr(RegressionTree, "_parallel_min_work", 0)
    ws = None
    for seed in (6, 7, 8):
        codes, off, pa, pb, pw, lam, w, *_ = _pairs(seed, F=4)
        kw = dict(num_leaves=7, min_child_samples=3, criterion="ole")
        a = RegressionTree(**kw).fit_gradients(codes, -lam, w, pairs=(pa, pb, pw), workspace=ws)
        ws = a.workspace_
        b = RegressionTree(n_jobs=2, **kw).fit_gradients(codes, -lam, w, pairs=(pa, pb, pw))
        c = RegressionTree(**kw).fit_gradients(codes, -lam, w, pairs=(pa, pb, pw))
        for t in (b, c):
            for x, y in ((a.feature_, t.feature_), (a.bin_, t.bin_), (a.value_, t.value_), (a.gain_, t.gain_),
                         (a.leaf_of_, t.leaf_of_)):
                assert x.tobytes() == y.tobytes()


@pytest.mark.kernel
def test_pair_histogram_workspaces_do_not_matter_and_are_checked():
    """The bin buffers the kernels take (issue 15.5: they allocate nothing) may hold anything; the checked
    function rejects a buffer of the wrong type or size."""
    codes, off, pa, pb, pw, *_ = _pairs(3)
    m, F = pa.size, codes.shape[1]
    want = ref_ph.pair_histograms(codes, pa, pb, pw, 0, m, off)
    for nblk in (1, 2, F + 3):
        blocks = max(1, min(F, nblk))
        bins = np.full((blocks, 3, F + 2), 2**32 - 1, dtype=np.uint32)
        got = np.zeros(off[-1]), np.zeros(off[-1])
        ph.pair_histograms_parallel(codes, pa, pb, pw, 0, m, off, *got, nblk, bins)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    got = np.zeros(off[-1]), np.zeros(off[-1])
    ph._pair_histograms(codes, pa, pb, pw, 0, m, None, off, *got, 1.0, np.full((3, F), 2**32 - 1, np.uint32))
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    for bad in (np.empty((1, 3, F), dtype=np.uint32), np.empty((2, 3, F - 1), dtype=np.uint32),
                np.empty((2, 3, F), dtype=np.int64), np.empty((2, 2, F), dtype=np.uint32)):
        with pytest.raises(ValueError):
            ph.pair_histograms_parallel(codes, pa, pb, pw, 0, m, off, *got, 2, bad)
