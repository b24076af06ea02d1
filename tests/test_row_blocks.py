"""Row-block histograms, the parallel stable partition and the row-block whole-tree kernel
(`lrank._kernels.row_blocks`): against plain NumPy references, bit for bit, and the same tree on any
number of threads."""

import numba
import numpy as np
import pytest

from lrank._kernels import row_blocks as rb
from lrank._kernels import trees as tk
from lrank._kernels.lambdas import lambdamart_gradients
from lrank.weak.tree import RegressionTree
from tests.reference import trees as ref


def _matrix(seed, n=70, F=5):
    """Few codes per feature (ties), bin 0 (missing) included; values rounded (tied sums)."""
    rng = np.random.default_rng(seed)
    nb = rng.integers(2, 9, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    return rng, codes, off


def _n_blocks(m, min_rows):
    """The largest power of two K <= m / min_rows, 1 <= K <= MAX_BLOCKS."""
    K = 1
    while 2 * K <= rb.MAX_BLOCKS and 2 * K * min_rows <= m:
        K *= 2
    return K


def _blocked_reference(codes, vals, rows, off, min_rows, nf):
    """The node's rows in K equal blocks, each summed from zero in row order (a plain loop), then the
    blocks' sums added in block order: the summation order the kernel promises for every bin."""
    C, m = vals.shape[1], rows.size
    K = _n_blocks(m, min_rows)
    parts = []
    for p in range(K):
        part = np.zeros((off[-1], C))
        for i in rows[p * m // K:(p + 1) * m // K]:
            for f in range(nf):
                part[off[f] + codes[i, f]] += vals[i]
        parts.append(part)
    out = parts[0].copy()
    for part in parts[1:]:
        out += part
    return out


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3, 4])
def test_blocked_histogram_matches_reference(C):
    rng, codes, off = _matrix(C)
    n, F = codes.shape
    vals = np.round(rng.normal(size=(n, C)), 1)
    feats = np.arange(F, dtype=np.int64)
    subset = np.sort(rng.choice(n, 50, replace=False))
    for rows in (subset, np.array([7]), np.array([], dtype=np.int64), np.arange(n)):
        rows = rows.astype(np.int64)
        for min_rows in (1, 3, 7, 16, 1000):
            assert rb._n_blocks(rows.size, min_rows) == _n_blocks(rows.size, min_rows)
            for nf in (F, 1):
                want = _blocked_reference(codes, vals, rows, off, min_rows, nf)
                bufs = np.zeros((rb.MAX_BLOCKS - 1, off[-1], C))
                got = np.zeros_like(want)
                rb._histogram_blocked(codes, vals, rows, 0, rows.size, off, got, bufs, min_rows, feats, nf)
                assert got.tobytes() == want.tobytes()
                assert not bufs.any()  # left all zeros for the next call
                parent = np.ones_like(want)
                out = np.full_like(want, 9.0)
                rb._child_histogram_blocked(codes, vals, rows, 0, rows.size, off, out, parent, bufs,
                                            min_rows, feats, nf)
                T = off[nf]
                assert out[:T].tobytes() == want[:T].tobytes()
                assert parent[:T].tobytes() == (1.0 - want[:T]).tobytes()
                assert (parent[T:] == 1.0).all()


@pytest.mark.kernel
def test_one_block_is_the_serial_histogram():
    """A node of fewer than ``2 min_rows`` rows: the serial kernel's bits (the small data sets' trees)."""
    from lrank._kernels import histograms as hk

    rng, codes, off = _matrix(11)
    vals = rng.normal(size=(codes.shape[0], 3))
    rows = np.arange(codes.shape[0], dtype=np.int64)
    a, b = np.zeros((off[-1], 3)), np.zeros((off[-1], 3))
    hk._histogram(codes, vals, rows, 0, rows.size, off, a)
    rb._histogram_blocked(codes, vals, rows, 0, rows.size, off, b, np.zeros((rb.MAX_BLOCKS - 1, off[-1], 3)),
                          rows.size // 2 + 1, np.arange(codes.shape[1], dtype=np.int64), codes.shape[1])
    assert a.tobytes() == b.tobytes()


def _partition_reference(codes, rows, start, end, f, j):
    """Stable partition by ``code_f <= j`` in NumPy: the left rows, then the right rows, in order."""
    seg = rows[start:end]
    go_left = codes[seg, f] <= j
    lt, rt = seg[go_left], seg[~go_left]
    return np.concatenate((lt, rt)), start + lt.size, lt, rt


@pytest.mark.kernel
def test_blocked_partition_matches_reference():
    rng, codes, off = _matrix(5, n=90)
    n = codes.shape[0]
    for start, end in ((0, n), (13, 61), (40, 41), (20, 20)):
        for f in range(codes.shape[1]):
            for j in (-1, 0, 1, 8):  # all right, missing left, a split, all left
                rows = rng.permutation(n).astype(np.int64)
                want, mid, lt_rows, rt_rows = _partition_reference(codes, rows, start, end, f, j)
                for nblk in (1, 2, 3, 7, 200):
                    r = rows.copy()
                    got = rb._partition_rows_blocked(codes, r, start, end, f, j, np.empty(n, dtype=np.int64),
                                                     np.zeros(n, dtype=np.uint8),
                                                     np.zeros(min(nblk, 5), dtype=np.int64), nblk)
                    assert got == mid
                    np.testing.assert_array_equal(r[start:end], want)
                    np.testing.assert_array_equal(r[:start], rows[:start])
                    np.testing.assert_array_equal(r[end:], rows[end:])
                    p = rows.copy()
                    tmp = np.empty(n, dtype=np.int64)
                    assert rb._partition_rows_prefetch(codes, p, start, end, f, j, tmp) == mid
                    np.testing.assert_array_equal(p, r)
                    s = rows.copy()
                    leaf_of = np.full(n, -5, dtype=np.int64)
                    assert tk._partition_rows(codes, s, start, end, f, j, np.empty(n, dtype=np.int64),
                                              leaf_of, 1, 2) == mid
                    np.testing.assert_array_equal(s, r)
                    assert (leaf_of[lt_rows] == 1).all() and (leaf_of[rt_rows] == 2).all()


@pytest.mark.kernel
def test_label_leaves_matches_reference():
    """Each leaf's rows get its node id; internal nodes' ranges are overwritten by their leaves'."""
    rng = np.random.default_rng(3)
    rows = rng.permutation(12).astype(np.int64)
    # root 0 -> 1, 2; node 2 -> 3, 4 (leaves 1, 3, 4); node ranges in rows
    start = np.array([0, 0, 5, 5, 9], dtype=np.int64)
    end = np.array([12, 5, 12, 9, 12], dtype=np.int64)
    left = np.array([1, -1, 3, -1, -1], dtype=np.int64)
    want = np.empty(12, dtype=np.int64)
    for nd in (1, 3, 4):
        want[rows[start[nd]:end[nd]]] = nd
    got = np.full(12, -7, dtype=np.int64)
    rb._label_leaves(rows, start, end, left, 5, got)
    np.testing.assert_array_equal(got, want)
    one = np.full(12, -7, dtype=np.int64)  # a tree of one leaf: every row in node 0
    rb._label_leaves(rows, start, end, np.array([-1], dtype=np.int64), 1, one)
    assert (one == 0).all()


def _tree_bits(t):
    return [a.tobytes() for a in (t.feature_, t.bin_, t.children_left_, t.value_, t.gain_, t.sum_grad_,
                                  t.sum_hess_, t.leaf_of_, t.n_node_samples_)]


def _lambdamart_data(seed):
    """LambdaMART derivatives of a ranking set with one-document queries and an all-equal-labels query."""
    rng = np.random.default_rng(seed)
    sizes = (40, 1, 25, 1, 60, 30, 1, 43)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    y[qptr[5]:qptr[6]] = 2  # all labels equal: zero lambdas
    codes = rng.integers(0, 7, size=(n, 4)).astype(np.uint8)
    lam, w = lambdamart_gradients(y, qptr, rng.normal(size=n), k=10)[:2]
    return codes, -lam, w


@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
@pytest.mark.parametrize("crit", ["se", "wse", "rwse"])
def test_blocked_tree_same_bits_any_threads_and_path(monkeypatch, crit, growth):
    """Small blocks on a small set (root: 4 blocks): the row-block whole-tree kernel on 1 and 2 threads
    and the node-by-node path (1 and 2 threads) grow one tree, bit for bit; constant and varying
    hessians."""
    monkeypatch.setattr(RegressionTree, "_block_rows", 16)
    codes, grad, hess = _lambdamart_data(3)
    for h in (hess + 0.05, np.ones_like(hess)):
        out = []
        for whole in (True, False):
            monkeypatch.setattr(RegressionTree, "_whole_tree_kernel", whole)
            for n_jobs in (1, 2):
                t = RegressionTree(num_leaves=9, min_child_samples=3, growth=growth, criterion=crit,
                                   n_jobs=n_jobs)
                out.append(_tree_bits(t.fit_gradients(codes, grad, h)))
        assert all(o == out[0] for o in out[1:])


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
def test_blocked_tree_matches_reference(monkeypatch, growth):
    """The row-block tree picks the brute-force reference's leaves and values (SE and RWSE)."""
    monkeypatch.setattr(RegressionTree, "_block_rows", 7)
    rng = np.random.default_rng(21)
    n = 60
    codes = rng.integers(0, 6, size=(n, 4)).astype(np.uint8)
    grad, hess = rng.normal(size=n), rng.uniform(0.1, 1.0, size=n)
    for crit in ("se", "rwse"):
        tree = RegressionTree(num_leaves=5, min_child_samples=3, min_child_weight=0.0, growth=growth,
                              criterion=crit, n_jobs=2).fit_gradients(codes, grad, hess)
        leaves, values = ref.fit_tree(codes, grad, hess, 5, crit, min_data=3, growth=growth)
        got = {tuple(np.flatnonzero(tree.leaf_of_ == nd)): tree.value_[nd] for nd in np.unique(tree.leaf_of_)}
        assert sorted(got) == sorted(tuple(np.flatnonzero(M)) for M in leaves)
        for M, v in zip(leaves, values):
            assert got[tuple(np.flatnonzero(M))] == pytest.approx(v, rel=1e-10, abs=1e-12)


def test_small_sets_keep_the_serial_kernel_bits(monkeypatch):
    """Below 2 `_block_rows` documents nothing changes: the serial tree's bits."""
    codes, grad, hess = _lambdamart_data(8)
    a = RegressionTree(num_leaves=8, min_child_samples=3).fit_gradients(codes, grad, hess)
    monkeypatch.setattr(RegressionTree, "_block_rows", codes.shape[0] // 2)  # two blocks at the root
    b = RegressionTree(num_leaves=8, min_child_samples=3).fit_gradients(codes, grad, hess)
    monkeypatch.setattr(RegressionTree, "_block_rows", codes.shape[0] // 2 + 1)  # one block: serial kernel
    c = RegressionTree(num_leaves=8, min_child_samples=3, n_jobs=2).fit_gradients(codes, grad, hess)
    assert _tree_bits(a) == _tree_bits(c)
    assert _tree_bits(a)[:3] == _tree_bits(b)[:3]  # same splits here; sums may differ in the last bits


def test_blocked_tree_restores_numba_threads(monkeypatch):
    monkeypatch.setattr(RegressionTree, "_block_rows", 16)
    codes, grad, hess = _lambdamart_data(4)
    before = numba.get_num_threads()
    for crit in ("se", "wse"):  # the whole-tree kernel and the node-by-node path
        RegressionTree(num_leaves=4, n_jobs=1, criterion=crit).fit_gradients(codes, grad, hess)
        assert numba.get_num_threads() == before
