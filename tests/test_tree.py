"""Histogram regression trees: kernels against the brute-force reference, criteria and theorems."""

import numpy as np
import pytest

from lrank._kernels.lambdas import lambdamart_gradients
from lrank.weak.tree import RegressionTree
from tests.reference import trees as ref


def _data(seed, n=60, F=4, max_code=6):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, max_code, size=(n, F)).astype(np.uint8)
    grad = rng.normal(size=n)
    hess = rng.uniform(0.1, 1.0, size=n)
    return codes, grad, hess


def _leaf_masks(tree, n):
    return sorted(tuple(np.flatnonzero(tree.leaf_of_ == nd)) for nd in np.unique(tree.leaf_of_))


def _ranking(seed, sizes=(12, 9, 1, 15)):
    rng = np.random.default_rng(seed)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    s = rng.normal(size=n)
    codes = rng.integers(0, 5, size=(n, 3)).astype(np.uint8)
    return codes, y, qptr, s


@pytest.mark.kernel
@pytest.mark.parametrize("crit", ["se", "wse", "rwse", "ole"])
@pytest.mark.parametrize("growth", ["breadth_first", "best_first", "depth_first"])
def test_tree_matches_reference(crit, growth):
    codes, grad, hess = _data(hash((crit, growth)) % 1000)
    tree = RegressionTree(num_leaves=5, min_child_samples=3, min_child_weight=0.0, growth=growth,
                          criterion=crit).fit_gradients(codes, grad, hess)
    leaves, values = ref.fit_tree(codes, grad, hess, 5, crit, min_data=3, growth=growth)
    assert _leaf_masks(tree, len(grad)) == sorted(tuple(np.flatnonzero(M)) for M in leaves)
    got = {tuple(np.flatnonzero(tree.leaf_of_ == nd)): tree.value_[nd] for nd in np.unique(tree.leaf_of_)}
    for M, v in zip(leaves, values):
        assert got[tuple(np.flatnonzero(M))] == pytest.approx(v, rel=1e-10, abs=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["breadth_first", "best_first", "depth_first"])
def test_ole_pairwise_matches_reference(growth):
    codes, y, qptr, s = _ranking(3)
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=5, with_pairs=True)
    plist = list(zip(pairs[0], pairs[1], pairs[2]))
    tree = RegressionTree(num_leaves=4, min_child_samples=2, min_child_weight=1e-9, growth=growth,
                          criterion="ole").fit_gradients(codes, -lam, w, pairs=pairs)
    leaves, _ = ref.fit_tree(codes, -lam, w, 4, "ole", min_data=2, min_hess=1e-9, pairs=plist, growth=growth)
    assert _leaf_masks(tree, len(y)) == sorted(tuple(np.flatnonzero(M)) for M in leaves)


def test_ole_pairwise_differs_from_additive():
    """Example 3-4: with the pair cancellation the root split criterion is not RWSE's."""
    codes, y, qptr, s = _ranking(5, sizes=(20, 20, 20))
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=0, with_pairs=True)
    plist = list(zip(pairs[0], pairs[1], pairs[2]))
    left = codes[:, 0] <= 1
    node = np.ones(len(y), bool)
    e_pair = ref.criterion("ole", -lam, w, left, node, plist)
    e_add = ref.criterion("ole", -lam, w, left, node, None)
    assert e_pair < e_add  # exact second derivatives are smaller: the inner pairs cancel


def test_theorem1_and_theorem2_same_splits():
    """MART: SE, WSE, RWSE and OLE grow the same tree (Theorem 2); a logistic (derivative-additive) loss:
    OLE and RWSE grow the same tree (Theorem 1)."""
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 20, size=(300, 6)).astype(np.uint8)
    f = rng.normal(size=300)
    y = rng.normal(size=300)
    trees = [RegressionTree(num_leaves=8, criterion=c, min_child_samples=5).fit_gradients(codes, f - y,
                                                                                       np.ones(300))
             for c in ("se", "wse", "rwse", "ole")]
    for t in trees[1:]:
        np.testing.assert_array_equal(t.leaf_of_, trees[0].leaf_of_)
        np.testing.assert_allclose(t.value_, trees[0].value_, rtol=1e-12)
    p = 1 / (1 + np.exp(-f))
    lab = (y > 0).astype(float)
    a = RegressionTree(num_leaves=8, criterion="ole").fit_gradients(codes, p - lab, p * (1 - p))
    b = RegressionTree(num_leaves=8, criterion="rwse").fit_gradients(codes, p - lab, p * (1 - p))
    np.testing.assert_array_equal(a.leaf_of_, b.leaf_of_)


def test_feature_constraint():
    codes, grad, hess = _data(11, n=200, F=5)
    stump = RegressionTree(num_leaves=2, min_child_samples=1, feature_constraint=3).fit_gradients(codes, grad,
                                                                                                 hess)
    assert stump.feature_[0] == 3 and stump.n_leaves_ == 2
    cons = [4, 0, 2]
    for growth in ("breadth_first", "best_first"):
        t = RegressionTree(num_leaves=4, min_child_samples=1, feature_constraint=cons,
                           growth=growth).fit_gradients(codes, grad, hess)
        internal = np.flatnonzero(t.children_left_ >= 0)
        assert list(t.feature_[internal]) == cons[: internal.size]  # node ids follow split order
    with pytest.raises(ValueError):
        RegressionTree(num_leaves=4, feature_constraint=[1]).fit_gradients(codes, grad, hess)
    with pytest.raises(ValueError):
        RegressionTree(num_leaves=2, feature_constraint=[9]).fit_gradients(codes, grad, hess)


def test_raw_features_nan_and_predict():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    X[:, 2] = np.round(X[:, 2])  # ties
    y = np.nan_to_num(X[:, 0]) * 2 + np.isnan(X[:, 1]) + rng.normal(scale=0.1, size=300)
    t = RegressionTree(num_leaves=6, min_child_samples=5).fit(X, y)
    np.testing.assert_array_equal(t.predict(X), t.value_[t.leaf_of_])
    assert np.mean((t.predict(X) - y) ** 2) < np.var(y)


def test_one_row_and_constant_gradients():
    codes = np.zeros((1, 2), dtype=np.uint8)
    one = np.array([1.0])
    t = RegressionTree(num_leaves=4, min_child_samples=1).fit_gradients(codes, one, one)
    assert t.n_leaves_ == 1 and t.value_[0] == -1.0
    codes, _, hess = _data(2)
    t = RegressionTree(num_leaves=4).fit_gradients(codes, np.full(60, 0.5), hess)
    assert t.n_leaves_ == 1  # SE: nothing to gain


def test_bad_input():
    codes, grad, hess = _data(0)
    with pytest.raises(ValueError):
        RegressionTree(criterion="gini").fit_gradients(codes, grad, hess)
    with pytest.raises(ValueError):
        RegressionTree(growth="depth").fit_gradients(codes, grad, hess)
    with pytest.raises(ValueError):
        RegressionTree().fit_gradients(codes, grad[:-1], hess)
    with pytest.raises(ValueError):
        RegressionTree().fit_gradients(codes.astype(np.int64), grad, hess)
    g = grad.copy()
    g[0] = np.nan
    with pytest.raises(ValueError):
        RegressionTree().fit_gradients(codes, g, hess)


def test_parallel_twin_bit_identical(monkeypatch):
    monkeypatch.setattr(RegressionTree, "_parallel_min_work", 0)  # use the parallel kernels on tiny data
    monkeypatch.setattr(RegressionTree, "_parallel_min_bins", 0)
    monkeypatch.setattr(RegressionTree, "_parallel_min_tree_work", 0)  # not the serial whole-tree kernel
    codes, y, qptr, s = _ranking(9, sizes=(40, 30, 50))
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=10, with_pairs=True)
    for crit in ("se", "ole"):
        a = RegressionTree(num_leaves=6, min_child_samples=3, criterion=crit).fit_gradients(codes, -lam, w,
                                                                                           pairs=pairs)
        b = RegressionTree(num_leaves=6, min_child_samples=3, criterion=crit, n_jobs=2).fit_gradients(
            codes, -lam, w, pairs=pairs)
        np.testing.assert_array_equal(a.leaf_of_, b.leaf_of_)
        assert a.value_.tobytes() == b.value_.tobytes()


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_histogram_kernels_match_numpy(C):
    from lrank._kernels import histograms as hk

    rng = np.random.default_rng(C)
    n, F = 80, 5
    nb = rng.integers(2, 9, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)  # 0 = missing bin
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    vals = rng.normal(size=(n, C))
    rows = np.sort(rng.choice(n, 50, replace=False)).astype(np.int64)
    want = np.zeros((off[-1], C))
    for f in range(F):
        np.add.at(want, off[f] + codes[rows, f], vals[rows])
    got = np.zeros_like(want)
    hk._histogram(codes, vals, rows, 0, rows.size, off, got)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for nblk in (1, 2, 3, 1000):  # any blocking of the features: the same bits
        par = np.zeros_like(want)
        hk._histogram_parallel(codes, vals, rows, 0, rows.size, off, par, nblk)
        assert par.tobytes() == got.tobytes()


def _tree_bits(t):
    return [a.tobytes() for a in (t.feature_, t.bin_, t.children_left_, t.value_, t.gain_, t.sum_grad_,
                                  t.sum_hess_, t.leaf_of_)]


@pytest.mark.parametrize("crit", ["se", "wse", "rwse", "ole"])
@pytest.mark.parametrize("growth", ["breadth_first", "best_first"])
def test_constrained_subset_histograms_same_bits(monkeypatch, crit, growth):
    """A constrained tree builds histograms only for its constraint's features: the same bits as the
    all-features histograms it replaced (ties, missing codes, a one-document query, pairs for OLE)."""
    rng = np.random.default_rng(5)
    sizes = (30, 1, 25, 40)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n, F = int(qptr[-1]), 7
    codes = rng.integers(0, 5, size=(n, F)).astype(np.uint8)  # many ties; code 0 = missing
    y = rng.integers(0, 3, n).astype(np.int32)
    lam, w, pairs = lambdamart_gradients(y, qptr, rng.normal(size=n), k=10, with_pairs=True)
    ws = None
    for cons in (3, 0, [5, 2, 2, 6, 1], [6, 6, 6, 6, 6], [1, 4, 0, 3, 2]):
        kw = dict(num_leaves=5, min_child_samples=2, criterion=crit, growth=growth, feature_constraint=cons)
        a = RegressionTree(**kw).fit_gradients(codes, -lam, w, pairs=pairs, workspace=ws)
        ws = a.workspace_  # the subset path reuses (and dirties) the full-size buffers
        monkeypatch.setattr(RegressionTree, "_subset_histograms", False)
        b = RegressionTree(**kw).fit_gradients(codes, -lam, w, pairs=pairs, workspace=ws)
        monkeypatch.setattr(RegressionTree, "_subset_histograms", True)
        assert _tree_bits(a) == _tree_bits(b)
    # constant hessian (MART's two-channel histograms)
    for cons in (4, [2, 0, 2]):
        kw = dict(num_leaves=4, min_child_samples=1, criterion=crit, growth=growth, feature_constraint=cons)
        a = RegressionTree(**kw).fit_gradients(codes, lam, np.ones(n))
        monkeypatch.setattr(RegressionTree, "_subset_histograms", False)
        b = RegressionTree(**kw).fit_gradients(codes, lam, np.ones(n))
        monkeypatch.setattr(RegressionTree, "_subset_histograms", True)
        assert _tree_bits(a) == _tree_bits(b)


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_feature_subset_histogram_kernels(C):
    """The feature-subset kernels give each feature's rows of the all-features kernels, bit for bit."""
    from lrank._kernels import histograms as hk

    rng = np.random.default_rng(10 + C)
    n, F = 90, 6
    nb = rng.integers(2, 9, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    vals = rng.normal(size=(n, C))
    rows = rng.permutation(n).astype(np.int64)
    full = np.zeros((off[-1], C))
    hk._histogram(codes, vals, rows, 5, 70, off, full)
    feats = np.array([0, 2, 5], dtype=np.int64)
    soff = np.r_[0, np.cumsum(nb[feats])].astype(np.int64)
    sub = np.zeros((soff[-1], C))
    hk._histogram_features(codes, vals, rows, 5, 70, feats, soff, sub)
    want = np.concatenate([full[off[f]:off[f + 1]] for f in feats])
    assert sub.tobytes() == want.tobytes()
    parent, small = want + 1.0, np.full_like(want, np.nan)
    hk._child_histogram_features(codes, vals, rows, 5, 30, feats, soff, small, parent)
    s_full = np.zeros((off[-1], C))
    hk._histogram(codes, vals, rows, 5, 30, off, s_full)
    s_want = np.concatenate([s_full[off[f]:off[f + 1]] for f in feats])
    assert small.tobytes() == s_want.tobytes()
    np.testing.assert_array_equal(parent, (want + 1.0) - s_want)


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3])
@pytest.mark.parametrize("crit", [0, 2])
def test_fast_split_scan_same_bits_as_general(C, crit):
    """best_split's fast scan (SE, RWSE without pairs) gives the bits of the general scan (pairs path with
    zero pair weights), on random histograms with empty bins, ties and tight min_data."""
    from lrank._kernels import histograms as hk
    from lrank._kernels import trees as tk

    rng = np.random.default_rng(20 + C + crit)
    n, F = 120, 6
    nb = rng.integers(2, 12, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    codes[:, 1] = codes[:, 0]  # tied features: the first one wins
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    vals = np.ones((n, C))
    vals[:, 0] = np.round(rng.normal(size=n), 1)
    if C == 3:
        vals[:, 1] = rng.uniform(0.1, 1.0, n)
    rows = np.arange(n, dtype=np.int64)
    hist = np.zeros((off[-1], C))
    hk._histogram(codes, vals, rows, 0, n, off, hist)
    tot = np.zeros(4)
    tk._node_totals(hist, off, 0, tot)
    if C == 2:
        tot[2] = n
    h_unit = 1.0 if C == 2 else 0.0
    feats = np.arange(F, dtype=np.int64)
    zero = np.zeros(off[-1])
    for min_data in (1.0, 7.0, 40.0, 70.0):
        for ps in (0.0, 1.7):
            args = (crit, min_data, 1e-3)
            rest = (zero, zero, 0.0, tot, ps, h_unit)
            buf = np.empty((4, int(np.diff(off).max())))  # the serial search's scan buffer
            fast = tk._best_split(hist, off, feats, *args, False, *rest, buf)
            gen = tk._best_split(hist, off, feats, *args, True, *rest, buf)
            junk = np.random.default_rng(0).normal(size=(F, 4, buf.shape[1]))  # contents must not matter
            par = tk._best_split_parallel(hist, off, feats, *args, False, *rest, np.empty(F),
                                          np.empty(F, dtype=np.int64), junk)
            assert np.float64(fast[0]).tobytes() == np.float64(gen[0]).tobytes() and fast[1:] == gen[1:]
            assert fast == par


@pytest.mark.parametrize("param,bad", [("num_leaves", 1), ("num_leaves", 2.5), ("num_leaves", True),
                                       ("min_child_samples", 0), ("min_child_weight", -1.0),
                                       ("n_jobs", 0), ("criterion", "xx"), ("growth", "depth")])
def test_bad_parameters_named(param, bad):
    codes = np.zeros((4, 1), dtype=np.uint8)
    with pytest.raises(ValueError, match=param if param not in ("criterion", "growth") else param):
        RegressionTree(**{param: bad}).fit_gradients(codes, np.ones(4), np.ones(4))


@pytest.mark.kernel
def test_sibling_pair_histograms_by_subtraction():
    """partition_pairs orders left / right / crossing pairs; the parent's pair histograms minus the
    crossing pairs minus one child's equal the other child's, built directly."""
    from lrank._kernels import pair_histograms as ph

    codes, y, qptr, s = _ranking(4, sizes=(30, 1, 25))
    _, _, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=5, with_pairs=True)
    n, F = codes.shape
    m = pa.size
    off = np.r_[0, np.cumsum(np.full(F, int(codes.max()) + 1))].astype(np.int64)
    leaf_of = np.where(codes[:, 2] > 1, 1, 2).astype(np.int64)
    before = sorted(zip(pa.tolist(), pb.tolist(), pw.tolist()))
    mid, end = ph.partition_pairs(pa, pb, pw, 0, m, leaf_of, 1, 2)
    assert sorted(zip(pa.tolist(), pb.tolist(), pw.tolist())) == before
    assert (leaf_of[pa[:mid]] == 1).all() and (leaf_of[pb[:mid]] == 1).all()
    assert (leaf_of[pa[mid:end]] == 2).all() and (leaf_of[pb[mid:end]] == 2).all()
    assert (leaf_of[pa[end:]] != leaf_of[pb[end:]]).all() and end < m
    T = int(off[-1])

    def direct(lo, hi):
        mx, mn = np.zeros(T), np.zeros(T)
        ph.pair_histograms(codes, pa, pb, pw, lo, hi, off, mx, mn)
        return mx, mn

    pmax_p, pmin_p = direct(0, m)
    pmax_s, pmin_s = np.zeros(T), np.zeros(T)
    ph.sibling_pair_histograms(codes, pa, pb, pw, (0, mid), (end, m), off, pmax_s, pmin_s, pmax_p, pmin_p)
    for got, want in zip((pmax_s, pmin_s, pmax_p, pmin_p), (*direct(0, mid), *direct(mid, end))):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_global_bin_histograms_same_bits(C):
    """Histograms over global bin indices (offsets added once) against the NumPy sums and, bit for bit,
    the per-entry-offset kernel; the child kernel's subtraction likewise. Ties (few codes), the missing
    bin 0, a one-row node and an empty node."""
    from lrank._kernels import histograms as hk

    rng = np.random.default_rng(40 + C)
    n, F = 90, 6
    nb = rng.integers(2, 9, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    gbin = hk._global_bins(codes, off, np.empty(codes.shape, dtype=np.uint16))
    np.testing.assert_array_equal(gbin, codes + off[:-1])
    vals = np.round(rng.normal(size=(n, C)), 1)  # equal values: ties in the sums
    for rows in (np.sort(rng.choice(n, 60, replace=False)), np.array([7]), np.array([], dtype=np.int64)):
        rows = rows.astype(np.int64)
        want = np.zeros((off[-1], C))
        for f in range(F):
            np.add.at(want, off[f] + codes[rows, f], vals[rows])
        a, b = np.zeros_like(want), np.zeros_like(want)
        hk._histogram(codes, vals, rows, 0, rows.size, off, a)
        hk._histogram_global(gbin, vals, rows, 0, rows.size, b)
        np.testing.assert_allclose(b, want, rtol=1e-12, atol=1e-12)
        assert a.tobytes() == b.tobytes()
        for nblk in (1, 2, 3):
            c = np.zeros_like(want)
            hk._histogram_parallel(gbin, vals, rows, 0, rows.size, np.zeros_like(off), c, nblk)
            assert c.tobytes() == a.tobytes()
        pa, pb = np.ones_like(want), np.ones_like(want)
        hk._child_histogram(codes, vals, rows, 0, rows.size, off, a, pa)
        hk._child_histogram_global(gbin, vals, rows, 0, rows.size, b, pb)
        assert a.tobytes() == b.tobytes() and pa.tobytes() == pb.tobytes()


@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
@pytest.mark.parametrize("crit", ["se", "wse", "rwse"])
def test_whole_tree_global_bins_same_bits(monkeypatch, crit, growth):
    """The whole-tree kernel with and without global bin indices, and the node-by-node path: one tree."""
    codes, grad, hess = _data(7, n=200, F=5, max_code=9)
    grad[::3] = grad[1::3][: grad[::3].size]  # tied gradients
    out = []
    for whole, gb in ((True, True), (True, False), (False, False)):
        monkeypatch.setattr(RegressionTree, "_whole_tree_kernel", whole)
        monkeypatch.setattr(RegressionTree, "_use_global_bins", gb)
        for h in (hess, np.ones_like(hess)):  # three channels, and a constant hessian (two)
            t = RegressionTree(num_leaves=8, min_child_samples=4, growth=growth, criterion=crit)
            out.append(_tree_bits(t.fit_gradients(codes, grad, h)))
    assert out[0] == out[2] == out[4] and out[1] == out[3] == out[5]


@pytest.mark.parametrize("cap", ["bytes", "rows"])
def test_whole_tree_bins_past_global_bins_limits(monkeypatch, cap):
    """Past `TreeWorkspace.global_bins`'s limits (matrix bytes; more than 65,536 histogram rows, uint32)
    the whole-tree kernel still reads global bin indices (`whole_tree_bins`): the same tree, bit for bit,
    as the node-by-node path, which then reads ``codes`` with offsets."""
    from lrank.weak.tree import TreeWorkspace

    F = 5 if cap == "bytes" else 300
    codes, grad, hess = _data(17, n=240, F=F, max_code=255 if cap == "rows" else 9)
    codes[:, 0] = np.arange(240) % 256  # feature 0 of the "rows" set has 256 codes: 300 x 256 > 65,536 rows
    if cap == "bytes":
        monkeypatch.setattr(TreeWorkspace, "global_bins_max_bytes", 0)
    n_bins = codes.max(axis=0).astype(np.int64) + 1
    ws = TreeWorkspace(codes, n_bins, 8, 3, 0, 1)
    assert ws.global_bins() is None
    assert ws.whole_tree_bins().dtype == (np.uint16 if cap == "bytes" else np.uint32)
    out = []
    for whole in (True, False):
        monkeypatch.setattr(RegressionTree, "_whole_tree_kernel", whole)
        for h in (hess, np.ones_like(hess)):
            t = RegressionTree(num_leaves=8, min_child_samples=4, criterion="rwse")
            out.append(_tree_bits(t.fit_gradients(codes, grad, h)))
    assert out[0] == out[2] and out[1] == out[3]
    assert np.frombuffer(out[0][0], dtype=np.int64).max() >= 0  # the tree split


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3])
@pytest.mark.parametrize("crit", [0, 2])
def test_fast_split_scan_empty_bins_with_residue(C, crit):
    """Empty bins (zero count / hessian) holding a gradient residue, as a histogram made by subtraction
    may: the fast scan masks them and agrees bit for bit with the general scan, which skips them."""
    from lrank._kernels import trees as tk

    rng = np.random.default_rng(60 + C + crit)
    F, nb = 5, 12
    off = np.arange(F + 1, dtype=np.int64) * nb
    hist = np.zeros((F * nb, C))
    cnt = rng.integers(0, 4, F * nb).astype(float)
    cnt[rng.random(F * nb) < 0.4] = 0.0  # scattered empty bins
    residue = rng.choice([0.0, 1e-17, -2e-17], F * nb)
    hist[:, 0] = np.where(cnt > 0, np.round(rng.normal(size=F * nb), 1), residue)
    hist[:, 1] = cnt if C == 2 else cnt * rng.uniform(0.2, 1.0, F * nb)
    if C == 3:
        hist[:, 2] = cnt
    tot = np.zeros(4)
    tk._node_totals(hist, off, 0, tot)
    if C == 2:
        tot[2] = tot[1]
    feats = np.arange(F, dtype=np.int64)
    zero = np.zeros(F * nb)
    for min_data in (1.0, 3.0, 8.0):
        rest = (zero, zero, 0.0, tot, 0.3, 1.0 if C == 2 else 0.0, np.empty((4, int(np.diff(off).max()))))
        fast = tk._best_split(hist, off, feats, crit, min_data, 1e-3, False, *rest)
        gen = tk._best_split(hist, off, feats, crit, min_data, 1e-3, True, *rest)
        assert np.float64(fast[0]).tobytes() == np.float64(gen[0]).tobytes() and fast[1:] == gen[1:]


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3])
@pytest.mark.parametrize("crit", [0, 2])
def test_fast_split_scan_bar_same_bits(C, crit):
    """The fast scan's bar (skip a threshold the products prove below the best so far) gives the bits of
    the plain scan that divides out every score, across gradient scales where products could underflow
    or overflow, duplicated features (exact ties across features), empty bins and parent scores."""
    from lrank._kernels import trees as tk

    rng = np.random.default_rng(700 + 10 * C + crit)
    for case in range(60):
        F = int(rng.integers(1, 9))
        nb = rng.integers(2, 30, F)
        off = np.r_[0, np.cumsum(nb)].astype(np.int64)
        cnt = rng.integers(0, 6, off[-1]).astype(float) * (rng.random(off[-1]) < 0.7)
        g = rng.normal(size=off[-1]) * (cnt > 0) * [1.0, 1e-120, 1e120, 3.7][case % 4]
        if case % 3 == 0:
            g = np.round(g, 1)
        h = cnt if C == 2 else cnt * rng.uniform(0.1, 1.0, off[-1])
        hist = np.column_stack([g, h] if C == 2 else [g, h, cnt])
        if F > 1:  # feature 1 repeats feature 0: equal scores, the first feature wins
            k = nb[0]
            hist = np.concatenate([hist[:k], hist[:k], hist[k:]])
            off = np.r_[0, off + k]
            F += 1
        tot = np.zeros(4)
        tk._node_totals(hist, off, 0, tot)
        h_unit = 1.0 if C == 2 else 0.0
        if C == 2:
            tot[2] = tot[1]
        feats = np.arange(F, dtype=np.int64)
        zero = np.zeros(off[-1])
        for min_data in (1.0, 3.0):
            for ps in (0.0, 1.7, float(tot[0]) ** 2):
                rest = (zero, zero, 0.0, tot, ps, h_unit, np.empty((4, int(np.diff(off).max()))))
                fast = tk._best_split(hist, off, feats, crit, min_data, 0.0, False, *rest)
                plain = ref.histogram_split_scan(hist, off, crit, min_data, 0.0, tot, ps, h_unit)
                assert np.float64(fast[0]).tobytes() == np.float64(plain[0]).tobytes()
                assert fast[1:] == plain[1:]


@pytest.mark.kernel
def test_fast_split_scan_floor():
    """A feature scan with a floor above every score returns no threshold; a floor of -inf or one at the
    best score returns the unbarred result."""
    from lrank._kernels import trees as tk

    rng = np.random.default_rng(5)
    hist = np.column_stack([rng.normal(size=40), np.ones(40), np.ones(40)])
    args = (hist, 0, 40, 0, 1.5, 0.0, float(hist[:, 0].sum()), 40.0, 40.0, 0.0)
    buf = np.empty((4, 40))
    best, j = tk._fast_feature_best(*args, -np.inf, buf)
    assert j >= 0
    assert tk._fast_feature_best(*args, best, buf) == (best, j)
    assert tk._fast_feature_best(*args, best * 1.01, buf) == (-np.inf, -1)


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
@pytest.mark.parametrize("size", [0, 1, 37])
def test_child_histogram_global_matches_numpy(C, size):
    """The smaller child's histogram and the parent's subtraction (`_subtract`, over the flat arrays)
    against NumPy (``np.add.at`` and ``-``): a node of no, one and 37 rows, tied codes, code 0 (missing)."""
    from lrank._kernels import histograms as hk

    rng = np.random.default_rng(70 + C + size)
    n, F = 60, 5
    codes = rng.integers(0, 4, size=(n, F)).astype(np.uint8)  # few codes: many ties, code 0 often
    off = np.arange(F + 1, dtype=np.int64) * 4
    gbin = hk._global_bins(codes, off, np.empty(codes.shape, dtype=np.uint16))
    vals = rng.normal(size=(n, C))
    rows = rng.permutation(n).astype(np.int64)
    parent = rng.normal(size=(off[-1], C))
    want = np.zeros_like(parent)
    for f in range(F):
        np.add.at(want, off[f] + codes[rows[:size], f], vals[rows[:size]])
    before = parent.copy()
    out = np.full_like(parent, np.nan)
    hk._child_histogram_global(gbin, vals, rows, 0, size, out, parent)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert parent.tobytes() == (before - out).tobytes()  # the subtraction, bit for bit


@pytest.mark.parametrize("bad", ["nan_grad", "inf_hess", "neg_inf_grad", "overflow_sum"])
def test_fit_gradients_rejects_non_finite(bad):
    """NaN or infinite derivatives raise a clear error; finite ones whose sum overflows do not (the
    check sums first and tests the elements only when the sum is not finite)."""
    codes, grad, hess = _data(3, n=40)
    if bad == "nan_grad":
        grad[7] = np.nan
    elif bad == "inf_hess":
        hess[39] = np.inf
    elif bad == "neg_inf_grad":
        grad[0] = -np.inf
    else:
        grad[:4] = 1.5e308  # finite values, an infinite sum
    t = RegressionTree(num_leaves=4, min_child_samples=2)
    if bad == "overflow_sum":
        t.fit_gradients(codes, grad, hess)
        assert t.n_leaves_ >= 1
    else:
        with pytest.raises(ValueError, match="grad and hess must be finite"):
            t.fit_gradients(codes, grad, hess)


def test_depth_first_grows_the_left_subtree_first():
    """Pre-order growth: with 3 leaves the second split is in the root's left child even where the right
    child's split gains more (best-first takes the right one); with room for every valid split the three
    orders give the same partition."""
    n = 40
    x0 = np.repeat([0, 1], n // 2).astype(np.uint8)          # the root split: left half | right half
    x1 = np.tile([0, 1], n // 2).astype(np.uint8)            # splits both halves
    codes = np.column_stack([x0, x1])
    r = np.where(x0 == 0, 10.0, -10.0) + np.where(x1 == 1, 1.0, -1.0) * np.where(x0 == 0, 0.5, 3.0)
    grad, hess = -r, np.ones(n)
    kw = dict(min_child_samples=2, min_child_weight=0.0)
    trees = {g: RegressionTree(num_leaves=3, growth=g, **kw).fit_gradients(codes, grad, hess)
             for g in ("depth_first", "best_first", "breadth_first")}
    left_half = tuple(np.flatnonzero(x0 == 0))
    assert left_half in _leaf_masks(trees["best_first"], n)       # best-first split the right half
    assert left_half not in _leaf_masks(trees["depth_first"], n)  # depth-first split the left half
    assert tuple(np.flatnonzero(x0 == 1)) in _leaf_masks(trees["depth_first"], n)
    full = [_leaf_masks(RegressionTree(num_leaves=8, growth=g, **kw).fit_gradients(codes, grad, hess), n)
            for g in ("depth_first", "best_first", "breadth_first")]
    assert full[0] == full[1] == full[2] and len(full[0]) == 4
