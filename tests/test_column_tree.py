"""Feature-group histograms over column-major codes, the column partitions and the whole-tree kernel at
scale (`lrank._kernels.column_tree`): against plain NumPy references, bit for bit, and the serial
kernel's tree on any number of threads."""

import numba
import numpy as np
import pytest

from lrank._kernels import column_tree as ct
from lrank._kernels import trees as tk
from lrank._kernels.histograms import _histogram
from lrank._kernels.lambdas import lambdamart_gradients
from lrank.weak.tree import RegressionTree
from tests.reference import trees as ref


def _matrix(seed, n=70, F=5, max_bins=9):
    """Few codes per feature (ties), bin 0 (missing) included."""
    rng = np.random.default_rng(seed)
    nb = rng.integers(2, max_bins, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    return rng, codes, off


def _histogram_reference(codes, vals, rows, off, nf):
    """Each feature's bins summed over ``rows`` in order (``np.add.at`` adds repeated indices one after
    another): the summation order the kernel promises for every bin."""
    out = np.zeros((off[-1], vals.shape[1]))
    for f in range(nf):
        for c in range(vals.shape[1]):
            np.add.at(out[:, c], off[f] + codes[rows, f].astype(np.int64), vals[rows, c])
    return out


def _derivatives(rng, n, C):
    """Rounded gradients and hessians (tied partial sums) and the channels the column kernel adds: C = 2
    (gradient, a constant hessian ``h_unit``) or C = 4 (gradient, hessian, count 1, 0)."""
    grad, hess = np.round(rng.normal(size=n), 1), np.round(rng.uniform(0.1, 2.0, size=n), 1)
    grad[::9] = -0.0
    h_unit = 0.5 if C == 2 else 0.0
    vals = np.zeros((n, C))
    vals[:, 0] = grad
    vals[:, 1] = h_unit if C == 2 else hess
    if C == 4:
        vals[:, 2] = 1.0
    return grad, hess, h_unit, vals


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 4])
def test_column_histogram_matches_reference(C):
    """Any node (all rows, a sorted subset, a shuffled subset, one row, none), all features or the first
    ``nf`` (a group of four and a remainder), one and two threads: the reference's bits and the row-wise
    serial kernel's on the same channels."""
    for seed, (n, F) in enumerate(((70, 5), (61, 9), (ct.CHUNK_ROWS + 4_001, 6))):  # the last: two chunks
        rng, codes, off = _matrix(seed, n, F)
        codes_t = np.ascontiguousarray(codes.T)
        grad, hess, h_unit, vals = _derivatives(rng, n, C)
        og = np.empty((3, ct.CHUNK_ROWS, C))
        for rows in (np.arange(n), np.sort(rng.choice(n, n // 3, replace=False)), rng.permutation(n)[:n // 2],
                     np.array([n - 1]), np.zeros(0, dtype=np.int64)):
            rows = rows.astype(np.int64)
            for nf in (F, 1, min(F, 5)):
                want = _histogram_reference(codes, vals, rows, off, nf)
                if nf == F:
                    serial = np.zeros_like(want)
                    _histogram(codes, vals, rows, 0, rows.size, off, serial)
                    np.testing.assert_array_equal(serial, want)
                for threads, blocks in ((1, 1), (2, 2), (2, 3), (1, 3)):  # blocks of feature groups
                    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
                    got = np.zeros_like(want)
                    ct._histogram_columns(codes_t, grad, hess, h_unit, rows, 0, rows.size, off, got,
                                          og[:blocks], nf)
                    assert got.tobytes() == want.tobytes(), (n, F, nf, rows.size, threads, blocks)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.kernel
def test_column_child_histogram_subtracts_from_parent():
    rng, codes, off = _matrix(11, n=80, F=7)
    codes_t = np.ascontiguousarray(codes.T)
    grad, hess, h_unit, vals = _derivatives(rng, 80, 4)
    rows = rng.permutation(80).astype(np.int64)
    parent = _histogram_reference(codes, vals, rows, off, 7)
    for nf in (7, 1):
        out = np.full_like(parent, 99.0)  # zeroed by the kernel on the first nf features' rows
        p = parent.copy()
        og = np.empty((2, ct.CHUNK_ROWS, 4))
        ct._child_histogram_columns(codes_t, grad, hess, h_unit, rows, 10, 35, off, out, p, og, nf)
        TB = off[nf]
        want = _histogram_reference(codes, vals, rows[10:35], off, nf)
        assert out[:TB].tobytes() == want[:TB].tobytes()
        assert p[:TB].tobytes() == (parent[:TB] - want[:TB]).tobytes()
        np.testing.assert_array_equal(p[TB:], parent[TB:])


def _partition_reference(codes, rows, start, end, f, j):
    """Stable partition by ``code_f <= j`` in NumPy: the left rows, then the right rows, in order."""
    seg = rows[start:end]
    go_left = codes[seg, f] <= j
    lt, rt = seg[go_left], seg[~go_left]
    return np.concatenate((lt, rt)), start + lt.size, lt, rt


@pytest.mark.kernel
def test_column_partition_matches_reference():
    rng, codes, off = _matrix(5, n=90)
    n = codes.shape[0]
    codes_t = np.ascontiguousarray(codes.T)
    for start, end in ((0, n), (13, 61), (40, 41), (20, 20)):
        for f in range(codes.shape[1]):
            for j in (-1, 0, 1, 8):  # all right, missing left, a split, all left
                for dtype in (np.int64, np.int32):
                    rows = rng.permutation(n).astype(dtype)
                    want, mid, lt_rows, rt_rows = _partition_reference(codes, rows, start, end, f, j)
                    p = rows.copy()
                    assert ct._partition_column(codes_t[f], p, start, end, j, np.empty(n, dtype=dtype)) == mid
                    np.testing.assert_array_equal(p[start:end], want)
                    np.testing.assert_array_equal(p[:start], rows[:start])
                    np.testing.assert_array_equal(p[end:], rows[end:])
                    s = rows.astype(np.int64)
                    leaf_of = np.full(n, -5, dtype=np.int64)
                    assert tk._partition_rows(codes, s, start, end, f, j, np.empty(n, dtype=np.int64),
                                              leaf_of, 1, 2) == mid
                    np.testing.assert_array_equal(s, p)


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
    for threads in (1, 2):
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        got = np.full(12, -7, dtype=np.int64)
        ct._label_leaves(rows, start, end, left, 5, got)
        np.testing.assert_array_equal(got, want)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    one = np.full(12, -7, dtype=np.int64)  # a tree of one leaf: every row in node 0
    ct._label_leaves(rows, start, end, np.array([-1], dtype=np.int64), 1, one)
    assert (one == 0).all()


@pytest.mark.kernel
def test_transpose_matches_numpy():
    rng = np.random.default_rng(2)
    for n, F, dtype in ((0, 3, np.uint8), (1, 4, np.uint8), (ct.TRANSPOSE_ROWS * 3 + 7, 5, np.uint8),
                        (300, 2, np.uint16)):
        codes = rng.integers(0, 200, size=(n, F)).astype(dtype)
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            out = np.full((F, n), 7, dtype=dtype)
            ct._transpose(codes, out)
            np.testing.assert_array_equal(out, codes.T)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def _tree_bits(t):
    return [a.tobytes() for a in (t.feature_, t.bin_, t.children_left_, t.value_, t.gain_, t.sum_grad_,
                                  t.sum_hess_, t.leaf_of_, t.n_node_samples_)]


def _lambdamart_data(seed, F=4):
    """LambdaMART derivatives of a ranking set with one-document queries and an all-equal-labels query."""
    rng = np.random.default_rng(seed)
    sizes = (40, 1, 25, 1, 60, 30, 1, 43)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    y[qptr[5]:qptr[6]] = 2  # all labels equal: zero lambdas
    codes = rng.integers(0, 7, size=(n, F)).astype(np.uint8)
    lam, w = lambdamart_gradients(y, qptr, rng.normal(size=n), k=10)[:2]
    return codes, -lam, w


@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
@pytest.mark.parametrize("crit", ["se", "wse", "rwse"])
def test_column_tree_same_bits_any_threads_and_path(monkeypatch, crit, growth):
    """The column whole-tree kernel (forced on a small set) on 1 and 2 threads, the serial whole-tree
    kernel and the node-by-node path (1 and 2 threads) grow one tree, bit for bit; constant and varying
    hessians (two and three channels); WSE always grows node by node."""
    codes, grad, hess = _lambdamart_data(3, F=9)  # two groups of four features and one alone
    for h in (hess + 0.05, np.ones_like(hess)):
        out = []
        for min_docs, whole in ((16, True), (10**9, True), (16, False)):
            monkeypatch.setattr(RegressionTree, "_column_min_docs", min_docs)
            monkeypatch.setattr(RegressionTree, "_whole_tree_kernel", whole)
            for n_jobs in (1, 2):
                t = RegressionTree(num_leaves=9, min_child_samples=3, growth=growth, criterion=crit,
                                   n_jobs=n_jobs)
                out.append(_tree_bits(t.fit_gradients(codes, grad, h)))
        assert all(o == out[0] for o in out[1:])


def test_column_tree_at_scale_is_the_serial_tree(monkeypatch):
    """Past the default size (several chunks of rows, 136-like many-bin features): the column kernel on
    1 and 2 threads against the serial whole-tree kernel, bit for bit."""
    rng = np.random.default_rng(17)
    n, F = RegressionTree._column_min_docs + ct.CHUNK_ROWS + 123, 10
    codes = rng.integers(0, 200, size=(n, F)).astype(np.uint8)
    codes[:, 3] = 0  # a constant (all missing) feature
    grad, hess = np.round(rng.normal(size=n), 2), rng.uniform(0.1, 1.0, size=n)
    for h in (hess, np.ones(n)):
        got = [_tree_bits(RegressionTree(num_leaves=12, n_jobs=j).fit_gradients(codes, grad, h))
               for j in (1, 2)]
        monkeypatch.setattr(RegressionTree, "_column_min_docs", 10**9)
        want = _tree_bits(RegressionTree(num_leaves=12).fit_gradients(codes, grad, h))
        monkeypatch.undo()
        assert got[0] == want and got[1] == want


def test_column_trees_on_one_workspace_are_the_serial_trees(monkeypatch):
    """Boosting-like: several trees on one workspace with new derivatives each (a varying hessian: the
    later roots add two lanes and take the counts the first tree kept), on 1 and 2 threads, each tree
    bit for bit the serial whole-tree kernel's on its own workspace."""
    rng = np.random.default_rng(23)
    n, F = RegressionTree._column_min_docs + 1000, 9
    codes = rng.integers(0, 60, size=(n, F)).astype(np.uint8)
    codes[rng.random(n) < 0.3, 2] = 0  # a feature with many equal codes
    derivs = [(np.round(rng.normal(size=n), 3), rng.uniform(0.05, 1.0, size=n)) for _ in range(3)]
    want = []
    monkeypatch.setattr(RegressionTree, "_column_min_docs", 10**9)
    for grad, hess in derivs:
        want.append(_tree_bits(RegressionTree(num_leaves=7).fit_gradients(codes, grad, hess)))
    monkeypatch.undo()
    for n_jobs in (1, 2):
        ws = None
        for t, (grad, hess) in enumerate(derivs):
            tree = RegressionTree(num_leaves=7, n_jobs=n_jobs).fit_gradients(codes, grad, hess, workspace=ws)
            ws = tree.workspace_
            assert _tree_bits(tree) == want[t], (n_jobs, t)
        root_n = ws.columns()[4]
        assert root_n[-1] == 1.0  # the counts were kept
        assert np.any(ws.columns()[6] != 0.0)  # and the later roots took the two-lane path
        TB = ws.offsets[-1]
        np.testing.assert_array_equal(root_n[:TB], np.concatenate(
            [np.bincount(codes[:, f], minlength=int(ws.n_bins[f])) for f in range(F)]))


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["best_first", "breadth_first"])
def test_column_tree_matches_reference(monkeypatch, growth):
    """The column tree picks the brute-force reference's leaves and values (SE and RWSE)."""
    monkeypatch.setattr(RegressionTree, "_column_min_docs", 7)
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


def test_boosting_trees_read_leaf_labels_without_a_copy():
    """GBRT's trees hand over the workspace's row labels (no copy per tree); a tree grown on its own
    keeps a copy the next tree cannot overwrite."""
    from lrank.models.gbrt import MART

    codes, grad, hess = _lambdamart_data(6)
    own = RegressionTree(num_leaves=4).fit_gradients(codes, grad, hess)
    before = own.leaf_of_.copy()
    RegressionTree(num_leaves=4).fit_gradients(codes, -grad, hess, workspace=own.workspace_)
    np.testing.assert_array_equal(own.leaf_of_, before)
    lent = MART(num_leaves=4, min_child_samples=20)._tree().fit_gradients(codes, grad, hess)
    assert lent.leaf_of_ is lent.workspace_.leaf_of
    np.testing.assert_array_equal(lent.leaf_of_, before)


def test_column_tree_restores_numba_threads(monkeypatch):
    monkeypatch.setattr(RegressionTree, "_column_min_docs", 16)
    codes, grad, hess = _lambdamart_data(4)
    before = numba.get_num_threads()
    for crit in ("se", "wse"):  # the whole-tree kernel and the node-by-node path
        RegressionTree(num_leaves=4, n_jobs=1, criterion=crit).fit_gradients(codes, grad, hess)
        assert numba.get_num_threads() == before
