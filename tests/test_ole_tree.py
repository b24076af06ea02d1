"""The OLE whole-tree kernel (``lrank._kernels.ole_tree``) against the node-by-node path (`_NodePairs`),
bit for bit, and its helpers against plain NumPy."""

import numpy as np
import pytest

from lrank._kernels import pair_histograms as ph
from lrank._kernels.lambdas import lambdamart_gradients
from lrank.models.gbrt import LambdaMART
from lrank.weak.tree import RegressionTree
from tests.reference import pair_histograms as ref_ph

FITTED = ("feature_", "bin_", "children_left_", "children_right_", "value_", "gain_", "sum_grad_",
          "sum_hess_", "n_node_samples_", "leaf_of_")


def _ole_data(seed, n_max_code=7, dtype=np.uint8, F=6, k=6):
    """Codes with ties and missing values (code 0), and LambdaMART's pair list on queries that include
    one-document queries and a query whose labels are all equal (neither has a pair)."""
    rng = np.random.default_rng(seed)
    sizes = (1, 14, 9, 60, 1, 45, 22, 80)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    y[qptr[1]:qptr[2]] = 2  # all-equal labels
    s = np.round(rng.normal(size=n), 1)  # tied scores
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=k, with_pairs=True)
    nb = rng.integers(2, n_max_code + 1, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(dtype)
    return codes, nb.astype(np.int64), lam, w, pairs


def _both(monkeypatch, codes, grad, hess, pairs, n_bins=None, gbin=True, **kw):
    """The whole-tree kernel's tree and the node-by-node path's (reading the codes when ``gbin`` is False)."""
    out, calls = [], []
    grow = RegressionTree._grow_whole_ole
    monkeypatch.setattr(RegressionTree, "_grow_whole_ole", lambda self, *a: calls.append(1) or grow(self, *a))
    for whole in (True, False):
        monkeypatch.setattr(RegressionTree, "_ole_tree_kernel", whole)
        monkeypatch.setattr(RegressionTree, "_use_global_bins", whole or gbin)
        out.append(RegressionTree(criterion="ole", **kw).fit_gradients(codes, grad, hess, n_bins=n_bins,
                                                                       pairs=pairs))
    assert calls == [1]  # the kernel grew the first tree, the node-by-node path the second
    return out


def _assert_same(a, b):
    for name in FITTED:
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_whole_ole_tree_same_bits_as_node_by_node(monkeypatch, seed, dtype, growth):
    codes, nb, lam, w, pairs = _ole_data(seed, dtype=dtype)
    for leaves, mcs in ((2, 1), (5, 3), (12, 2), (40, 1)):
        for gbin in (True, False):
            a, b = _both(monkeypatch, codes, -lam, w, pairs, n_bins=nb, gbin=gbin, num_leaves=leaves,
                         min_child_samples=mcs, min_child_weight=1e-9, growth=growth)
            _assert_same(a, b)
            assert a.n_leaves_ > 1


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
def test_whole_ole_tree_edge_cases(monkeypatch, growth):
    """No pair at all; one query of one document; all labels equal; a constant hessian (two-channel
    histograms); a min_child_weight that rejects most splits: the node-by-node bits each time."""
    codes, nb, lam, w, pairs = _ole_data(4)
    kw = dict(num_leaves=8, min_child_samples=2, growth=growth)
    none = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0)
    _assert_same(*_both(monkeypatch, codes, -lam, w, none, n_bins=nb, **kw))
    _assert_same(*_both(monkeypatch, codes, -lam, np.full(lam.size, 0.25), pairs, n_bins=nb, **kw))
    _assert_same(*_both(monkeypatch, codes, -lam, w, pairs, n_bins=nb, min_child_weight=float(w.sum()) / 8,
                        **kw))
    one = codes[:1]
    _assert_same(*_both(monkeypatch, one, np.zeros(1), np.zeros(1), none, **kw))
    y = np.ones(30, dtype=np.int32)
    lam1, w1, p1 = lambdamart_gradients(y, np.array([0, 30], dtype=np.int64), np.zeros(30), with_pairs=True)
    assert p1[0].size == 0
    _assert_same(*_both(monkeypatch, codes[:30], -lam1, w1, p1, **kw))


def test_lambdamart_ole_fit_same_bits(monkeypatch):
    """A whole LambdaMART OLE fit (workspace reused across trees, pair lists of varying length)."""
    rng = np.random.default_rng(9)
    sizes = rng.integers(1, 40, 25)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, 5)), 1).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 4, n)
    preds = []
    for whole in (True, False):
        monkeypatch.setattr(RegressionTree, "_ole_tree_kernel", whole)
        m = LambdaMART(n_estimators=8, num_leaves=7, min_child_samples=3, criterion="ole", random_state=0)
        preds.append(m.fit(X, y, group=sizes).predict(X))
    assert preds[0].tobytes() == preds[1].tobytes()


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [0, 1])
def test_pair_histograms_global_bits_match_numpy(seed):
    codes, nb, lam, w, (pa, pb, pw) = _ole_data(seed, dtype=np.uint16)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    gbin = (codes.astype(np.int64) + off[:-1]).astype(np.uint16)
    m = pa.size
    start = np.random.default_rng(seed).normal(size=(2, off[-1]))
    for lo, hi, sign in ((0, m, 1.0), (3, m - 5, -1.0), (4, 4, 1.0)):
        want = ref_ph.pair_histograms(codes, pa, pb, pw, lo, hi, off, sign=sign, pmax=start[0].copy(),
                                      pmin=start[1].copy())
        got = start[0].copy(), start[1].copy()
        ph.pair_histograms_global(gbin, pa, pb, pw, lo, hi, *got, sign=sign)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    with pytest.raises(ValueError, match="uint16"):
        ph.pair_histograms_global(codes.astype(np.uint8), pa, pb, pw, 0, m, *start)


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
    codes, nb, lam, w, (pa, pb, pw) = _ole_data(seed)
    n, m = codes.shape[0], pa.size
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    gbin = (codes.astype(np.int64) + off[:-1]).astype(np.uint16)
    leaf_of = np.where(codes[:, 1] <= 2, 1, 2).astype(np.int64)
    qa, qb, qw = pa.copy(), pb.copy(), pw.copy()
    mid, end = ph.partition_pairs(qa, qb, qw, 0, m, leaf_of, 1, 2)
    u = np.zeros(n)
    np.add.at(u, qa, qw)
    np.add.at(u, qb, qw)
    np.subtract.at(u, qa[end:], qw[end:])
    np.subtract.at(u, qb[end:], qw[end:])
    rows = np.r_[np.flatnonzero(leaf_of == 1), np.flatnonzero(leaf_of == 2)].astype(np.int64)
    n1 = int((leaf_of == 1).sum())
    for (r0, r1), (p0, p1) in (((0, n1), (0, mid)), ((n1, n), (mid, end))):
        pmax, pmin = np.zeros(off[-1]), np.zeros(off[-1])
        ph.pair_histograms(codes, qa, qb, qw, p0, p1, off, pmax, pmin)
        want = _pmin_reference(codes, u, rows[r0:r1], off, pmax)
        for g in (None, gbin):
            got = np.full(off[-1], np.nan)
            ph.pmin_from_weights(codes, u, rows, r0, r1, off, pmax, got, gbin=g)
            assert got.tobytes() == want.tobytes()
        np.testing.assert_allclose(got, pmin, atol=1e-12)
        feats = np.array([3, 0, 3], dtype=np.int64)
        soff = np.r_[0, np.cumsum(nb[feats])].astype(np.int64)
        sel = np.concatenate([np.arange(off[f], off[f + 1]) for f in feats])
        got = np.full(soff[-1], np.nan)
        ph.pmin_from_weights(codes, u, rows, r0, r1, soff, pmax[sel], got, feats=feats)
        assert got.tobytes() == _pmin_reference(codes, u, rows[r0:r1], soff, pmax[sel], feats).tobytes()
    with pytest.raises(ValueError, match="one weight per document"):
        ph.pmin_from_weights(codes, u[:-1], rows, 0, n, off, pmax, pmin)


def _ole_node(seed, two, subtract):
    """A node's histograms from `_ole_data`: the documents with an even code sum on features 1 and 3 and
    their pairs
    (gradient, hessian[, count] in plain NumPy); ``subtract``: the other child's histograms made as the
    parent's minus these (rounding residues in empty bins, as the trees' larger children)."""
    codes, nb, lam, w, (pa, pb, pw) = _ole_data(seed, n_max_code=40, F=7)
    codes[:, 6] = codes[:, 2]  # a duplicate feature: tied gains across features
    nb[6] = nb[2]
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    grad = np.round(-lam, 2)  # rounded: ties between thresholds
    inside = (codes[:, 1].astype(np.int64) + codes[:, 3]) % 2 == 0
    C = 2 if two else 3
    vals = np.stack([grad, np.full(grad.size, 0.5) if two else w, np.ones(grad.size)][:C], axis=1)

    def hist_of(mask):
        h = np.zeros((off[-1], C))
        idx = (off[:-1][None, :] + codes[mask].astype(np.int64)).ravel()
        for c in range(C):
            np.add.at(h[:, c], idx, np.repeat(vals[mask, c], codes.shape[1]))
        return h

    def pairs_of(mask):
        keep = mask[pa] & mask[pb]
        return pa[keep], pb[keep], pw[keep]

    node = ~inside if subtract else inside
    hist = hist_of(np.ones(grad.size, bool)) - hist_of(inside) if subtract else hist_of(inside)
    if subtract:  # a rounding residue in every empty bin's gradient and pair weights (never added)
        empty = (hist[:, 1] == 0.0) & (hist[:, -1] == 0.0)
        hist[empty, 0] = 1e-15
    qa, qb, qw = pairs_of(node)
    pmax, pmin = ref_ph.pair_histograms(codes, qa, qb, qw, 0, qa.size, off)
    if subtract:
        pmax[empty] = 1e-15
        pmin[empty] = -1e-15
    p_total = 0.0
    for x in qw:  # in pair order, as the kernel
        p_total += float(x)
    tot = hist[off[0]:off[1]].sum(axis=0)
    tot = np.r_[tot, [float(node.sum())] * (3 - C)] if two else tot
    he = tot[1] - 2.0 * p_total
    parent = tot[0] * tot[0] / he if he > 0.0 else 0.0
    return hist, off, pmax, pmin, p_total, tot, parent


@pytest.mark.kernel
@pytest.mark.parametrize("subtract", [False, True])
@pytest.mark.parametrize("two", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_ole_feature_best_matches_numpy_and_feature_best(seed, two, subtract):
    """The whole-tree kernel's OLE scan (`_ole_feature_best`, products before divisions) against a plain
    Python scan and `lrank._kernels.trees._feature_best`, bit for bit, with no floor; with a floor, the
    same result whenever that beats the floor, else nothing above it (what the caller discards). Nodes
    with one-document and all-equal-label queries, empty bins with rounding residues (a histogram made
    by subtraction), tied thresholds and a duplicate feature; two- and three-channel histograms."""
    from lrank._kernels import ole_tree as ot
    from lrank._kernels import trees as tk

    hist, off, pmax, pmin, p_total, tot, parent = _ole_node(seed, two, subtract)
    h_unit = 0.5 if two else 0.0
    for min_data, min_hess in ((1, 1e-9), (3, 0.0), (2, 0.05), (4, float(tot[1]) / 6)):
        best = -np.inf
        for f in range(off.size - 1):
            want = ref_ph.ole_feature_best(hist, off, f, min_data, min_hess, pmax, pmin, p_total, tot, parent,
                                           h_unit)
            old = tk._feature_best(hist, off, f, tk.RWSE, float(min_data), float(min_hess), True, pmax, pmin,
                                   p_total, tot, parent, h_unit, np.empty((4, off[f + 1] - off[f])))
            assert (float(old[0]), int(old[1])) == want or (want[1] == -1 and old[1] == -1)
            got = ot.ole_feature_best(hist, off, f, min_data, min_hess, pmax, pmin, p_total, tot, parent,
                                      h_unit)
            assert np.float64(got[0]).tobytes() == np.float64(want[0]).tobytes() and got[1] == want[1]
            for floor in (best, want[0], np.nextafter(want[0], -np.inf), want[0] / 2, -1.0, 0.0):
                got = ot.ole_feature_best(hist, off, f, min_data, min_hess, pmax, pmin, p_total, tot, parent,
                                          h_unit, floor=floor)
                if want[1] >= 0 and want[0] > floor:
                    assert np.float64(got[0]).tobytes() == np.float64(want[0]).tobytes() and got[1] == want[1]
                else:
                    assert got[1] == -1 or got[0] <= floor
            if want[1] >= 0 and want[0] > best:
                best = want[0]
    with pytest.raises(ValueError, match="hist"):
        ot.ole_feature_best(hist.astype(np.float32), off, 0, 1, 0.0, pmax, pmin, p_total, tot, parent, 0.0)
    with pytest.raises(ValueError, match="pmax"):
        ot.ole_feature_best(hist, off, 0, 1, 0.0, pmax[:3], pmin, p_total, tot, parent, 0.0)


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
def test_whole_ole_tree_workspace_contents_do_not_matter(monkeypatch, growth):
    """The kernel sets its scratch (``u``, the int64 and float node rows, the pair-bin buffer) itself: the
    same tree when they hold garbage (issue 15.5: the caller passes them in, the kernel allocates nothing)."""
    from lrank._kernels import ole_tree as ot

    codes, nb, lam, w, pairs = _ole_data(5)
    kw = dict(num_leaves=9, min_child_samples=2, growth=growth, criterion="ole")
    want = RegressionTree(**kw).fit_gradients(codes, -lam, w, n_bins=nb, pairs=pairs)
    grow = ot._grow_ole_tree
    calls = []

    def dirty(*args):
        calls.append(1)
        u, iscr, fscr, bins = args[-4:]
        u.fill(np.nan), iscr.fill(7777), fscr.fill(np.nan), bins.fill(65535)
        return grow(*args)

    monkeypatch.setattr(ot, "_grow_ole_tree", dirty)
    got = RegressionTree(**kw).fit_gradients(codes, -lam, w, n_bins=nb, pairs=pairs)
    assert calls == [1]
    _assert_same(got, want)
