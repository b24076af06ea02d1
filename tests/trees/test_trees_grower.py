"""The tree engine's grower (`lrank.trees.grower`, ``lrank._kernels.grower``): every tree it grows, in every
layout and on any number of threads, is the node-by-node NumPy oracle's (``tests/reference/tree_grower.py``)
bit for bit; its partitions against NumPy; its workspace reused from tree to tree."""

import itertools

import numba
import numpy as np
import pytest

from lrank._kernels import grower as gk
from lrank._kernels import histograms as hk
from lrank._kernels.lambdas import lambdamart_gradients
from lrank.trees.grower import TreeGrower
from tests.reference import tree_grower as ref
from tests.reference import trees as brute

FIELDS = ("feature", "bin", "left", "right", "gain", "value", "count", "sum_grad", "sum_hess")
LAYOUTS = ("global", "offsets", "columns", "threads")


def _ranking(seed, n=160, F=6, max_code=7, dtype=np.uint8, k=10):
    """Codes with ties and missing values (code 0) and LambdaMART's derivatives and pair list on queries
    that include one-document queries and a query whose labels are all equal."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, 40)
    sizes = sizes[np.cumsum(sizes) <= n]
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    nb = rng.integers(2, max_code + 1, F)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(dtype)
    y = rng.integers(0, 4, n).astype(np.int32)
    y[qptr[1]:qptr[2]] = 1  # all labels equal: no pair
    lam, w, pairs = lambdamart_gradients(y, qptr, np.round(rng.normal(size=n), 1), k=k, with_pairs=True)
    return codes, nb.astype(np.int64), -lam, w, pairs, rng


def _grower(codes, nb, layout, **kw):
    g = TreeGrower(codes, nb, n_jobs=2 if layout == "threads" else 1, **kw)
    g.column_min_docs = 0 if layout == "columns" else 10**9
    if layout == "offsets":
        g.global_bins_max_bytes = 0
    if layout == "threads":  # the parallel twins on a small set
        g.parallel_min_tree_work = g.parallel_min_work = g.parallel_min_bins = 0
    return g


def _assert_oracle(tree, leaf_of, want):
    for name in FIELDS:
        assert getattr(tree, name).tobytes() == np.asarray(want[name]).tobytes(), name
    assert leaf_of.tobytes() == want["leaf_of"].tobytes()


@pytest.mark.kernel
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("criterion", ["se", "wse", "rwse", "ole", "classify"])
def test_trees_are_the_oracles_bit_for_bit(criterion, layout):
    """SE, WSE, RWSE, OLE with pairs and NDCGBoost's classifier trees, best, breadth and depth first,
    without and with a feature constraint (an int; a list repeating features) or a feature subset (with and
    without feature 0: feature subsampling) or a row sample (bagging: alone, with a constraint, with a feature
    subset; one too small to split; every row, shuffled), varying and constant hessians (two channels), in
    every layout: the oracle's node record and leaves (every row's, in the sample or not), bit for bit; a
    subset's tree splits on its features only, and a subset of every feature (a sample of every row) is the
    unrestricted tree. OLE's trees of a sample are grown without the pair list (which refuses a sample)."""
    limits = ((None, None, None), (3, None, None), ([5, 0, 5, 2, 1], None, None), (None, [4, 1, 5], None),
              (None, [0, 3], None), (None, [2], None), (None, None, "bag"), (3, None, "bag"),
              (None, [4, 1, 5], "bag"), (None, None, "tiny"), (None, None, "all"))
    for seed in (0, 1):
        codes, nb, grad, hess, pairs, rng = _ranking(seed)
        if criterion == "classify":
            grad = rng.normal(size=grad.size)
        n = grad.size
        for growth, (cons, feats, bag), const in itertools.product(
                ("best_first", "breadth_first", "depth_first"), limits, (False, True)):
            if criterion == "classify" and (growth != "best_first" or const):
                continue
            h = np.full(grad.size, 0.5) if const else hess
            md, mh = (1, 0.0) if criterion == "classify" else (3, 1e-3)
            p = pairs if criterion == "ole" and bag is None else None
            rows = {None: None, "bag": np.sort(rng.choice(n, int(0.6 * n), replace=False)),
                    "tiny": rng.choice(n, 2 * md - 1, replace=False), "all": rng.permutation(n)}[bag]
            g = _grower(codes, nb, layout, num_leaves=6, min_child_samples=md, min_child_weight=mh,
                        growth=growth, criterion=criterion)
            tree, leaf_of = g.grow(grad, h, pairs=p, constraint=cons, features=feats, sample=rows)
            want = ref.grow(codes, grad, h, num_leaves=6, criterion=criterion, min_data=md, min_hess=mh,
                            growth=growth, pairs=p, constraint=cons, n_bins=nb, features=feats, sample=rows)
            _assert_oracle(tree, leaf_of, want)
            if bag == "tiny":
                assert tree.n_leaves == 1
            elif not (criterion == "classify" and feats and bag):  # (NDCGBoost's rule may find no gain there)
                assert tree.n_leaves > 1
            if bag is not None:
                assert tree.count[0] == len(rows)
            if bag == "all":
                plain = g.grow(grad, h, constraint=cons, features=feats)[0]
                for name in FIELDS:
                    assert getattr(tree, name).tobytes() == getattr(plain, name).tobytes(), name
            if feats is not None:
                assert set(tree.feature[tree.feature >= 0].tolist()) <= set(feats)
                every = g.grow(grad, h, pairs=p, features=np.arange(codes.shape[1])[::-1])[0]
                plain = g.grow(grad, h, pairs=p)[0]
                assert every.feature.tobytes() == plain.feature.tobytes()
                assert every.value.tobytes() == plain.value.tobytes()


@pytest.mark.kernel
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("criterion", ["se", "rwse", "classify"])
def test_stumps_are_the_oracles_bit_for_bit(criterion, layout):
    """Two-leaf trees (BoostingTree's stumps), whose one split completes the tree (over the columns, on one
    thread: `_last_split_columns`, the root's histogram two columns a pass): on every feature (feature 0
    alone, or with another), unconstrained, with a row sample, varying and constant hessians, the oracle's
    node record and every row's leaf, bit for bit; a sample too small to split stays one leaf."""
    for seed in (0, 1):
        codes, nb, grad, hess, _, rng = _ranking(seed)
        if criterion == "classify":
            grad = rng.normal(size=grad.size)
        n, F = codes.shape
        md, mh = (1, 0.0) if criterion == "classify" else (3, 1e-3)
        g = _grower(codes, nb, layout, num_leaves=2, min_child_samples=md, min_child_weight=mh,
                    criterion=criterion)
        bag = np.sort(rng.choice(n, int(0.6 * n), replace=False))
        for cons, rows, const in itertools.product([None, *range(F)], (None, bag, bag[:2 * md - 1]),
                                                   (False, True)):
            if criterion == "classify" and const:
                continue
            h = np.full(n, 0.5) if const else hess
            tree, leaf_of = g.grow(grad, h, constraint=cons, sample=rows)
            want = ref.grow(codes, grad, h, num_leaves=2, criterion=criterion, min_data=md, min_hess=mh,
                            growth="best_first", constraint=cons, n_bins=nb, sample=rows)
            _assert_oracle(tree, leaf_of, want)
            if rows is not None and rows.size < 2 * md:
                assert tree.n_leaves == 1
            elif criterion != "classify":  # (NDCGBoost's rule may find no gain)
                assert tree.n_leaves == 2


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["breadth_first", "best_first", "depth_first"])
@pytest.mark.parametrize("criterion", ["se", "wse", "rwse", "ole"])
def test_trees_match_brute_force(criterion, growth):
    """The leaves and values of the brute-force reference (every split of every leaf from each criterion's
    own equation; OLE's exact second derivative from the pairwise Hessian)."""
    codes, nb, grad, hess, pairs, _ = _ranking(3, n=60, F=3, max_code=5, k=5)
    plist = list(zip(*pairs)) if criterion == "ole" else None
    if plist is None:
        hess = hess + 0.05  # the reference divides by every node's hessian
    g = TreeGrower(codes, nb, num_leaves=5, min_child_samples=2, min_child_weight=1e-9, growth=growth,
                   criterion=criterion)
    tree, leaf_of = g.grow(grad, hess, pairs=pairs if plist else None)
    leaves, values = brute.fit_tree(codes, grad, hess, 5, criterion, min_data=2, min_hess=1e-9, pairs=plist,
                                    growth=growth)
    got = {tuple(np.flatnonzero(leaf_of == nd)): tree.value[nd] for nd in np.unique(leaf_of)}
    assert sorted(got) == sorted(tuple(np.flatnonzero(M)) for M in leaves)
    if criterion != "ole":
        for M, v in zip(leaves, values):
            assert got[tuple(np.flatnonzero(M))] == pytest.approx(v, rel=1e-10, abs=1e-12)


def _array_owner(a):
    """What holds an array's memory (a view's base's base ..., through a memoryview to its object)."""
    while isinstance(a, (np.ndarray, memoryview)):
        a = a.base if isinstance(a, np.ndarray) else a.obj
    return a


@pytest.mark.kernel
@pytest.mark.parametrize("criterion", ["se", "classify"])
def test_root_cache_mapping_changes_no_bit(criterion, monkeypatch):
    """A root cache at or above ``ROOT_CACHE_MAP_BYTES`` is an anonymous mapping of its own (writeable,
    C-contiguous), below it an ordinary array; BoostingTree-like constrained trees from kept derivatives
    (each feature's root rows made once, then read back) are the same bits either way, the same as from
    derivatives that share no root rows (``share_roots=False``, no cache made), and the oracle's."""
    import mmap

    from lrank.trees import grower as tg

    codes, nb, grad, hess, _, rng = _ranking(5)
    if criterion == "classify":
        grad = rng.normal(size=grad.size)
    md, mh = (1, 0.0) if criterion == "classify" else (3, 1e-3)
    trees = {}
    for limit in (0, 1 << 62):
        monkeypatch.setattr(tg, "ROOT_CACHE_MAP_BYTES", limit)
        g = _grower(codes, nb, "columns", num_leaves=3, min_child_samples=md, min_child_weight=mh,
                    criterion=criterion)
        d = g.derivatives(grad, hess)
        assert d.nbytes == 0  # the caller's own arrays, no root rows yet
        got = []
        for cons in ((2, 2), (0, 4), (2, 5), (4, 0)):
            tree, leaf_of = g.grow(d, constraint=cons)
            got.append([getattr(tree, name).tobytes() for name in FIELDS] + [leaf_of.tobytes()])
        cache = d.root_cache(2 if criterion == "classify" else 4)[0]
        assert cache.flags.c_contiguous and cache.flags.writeable and cache.dtype == np.float64
        assert isinstance(_array_owner(cache), mmap.mmap) == (limit == 0)
        C = cache.shape[1]
        assert d.nbytes == int(nb[[0, 2, 4, 5]].sum()) * C * 8  # the root rows of the features grown on
        trees[limit] = got
    assert trees[0] == trees[1 << 62]
    one = g.derivatives(grad, hess, share_roots=False)  # the roots straight into each tree's histograms
    for k, cons in enumerate(((2, 2), (0, 4), (2, 5), (4, 0))):
        tree, leaf_of = g.grow(one, constraint=cons)
        assert [getattr(tree, name).tobytes() for name in FIELDS] + [leaf_of.tobytes()] == trees[0][k]
    assert one.nbytes == 0 and one._root is None  # no cache made
    assert g.derivatives(grad.astype(np.float32), hess).nbytes == grad.size * 8  # a converted copy counts
    want = ref.grow(codes, grad, hess, num_leaves=3, criterion=criterion, min_data=md, min_hess=mh,
                    growth="best_first", constraint=(4, 0), n_bins=nb)
    assert trees[0][-1][FIELDS.index("value")] == np.asarray(want["value"]).tobytes()


@pytest.mark.kernel
def test_one_grower_many_trees():
    """Boosting-like: one grower grows trees of new derivatives, pair lists of other lengths, constraints
    and none, one after another; each tree is the oracle's (its buffers' contents do not matter)."""
    codes, nb, *_ = _ranking(9)
    for layout in ("global", "columns"):
        g = _grower(codes, nb, layout, num_leaves=7, min_child_samples=3, criterion="ole")
        for seed, cons in ((10, None), (11, [2, 4, 1, 0, 3, 2]), (12, None)):
            _, _, grad, hess, pairs, _ = _ranking(seed, n=codes.shape[0] + 20)
            grad, hess = grad[:codes.shape[0]], hess[:codes.shape[0]]
            keep = (pairs[0] < codes.shape[0]) & (pairs[1] < codes.shape[0])
            pairs = tuple(a[keep] for a in pairs)
            for p in (pairs, None):
                tree, leaf_of = g.grow(grad, hess, pairs=p, constraint=cons)
                want = ref.grow(codes, grad, hess, num_leaves=7, criterion="ole", min_data=3, pairs=p,
                                constraint=cons, n_bins=nb)
                _assert_oracle(tree, leaf_of, want)


def test_trees_at_scale_on_threads_are_the_serial_trees():
    """Past the column layout's size (several chunks of rows, many-bin features, a constant feature): the
    trees of 1 and 2 threads against the serial row-major trees, bit for bit; the later roots take the
    counts the first kept."""
    rng = np.random.default_rng(17)
    n, F = TreeGrower.column_min_docs + hk.CHUNK_ROWS + 123, 10
    codes = rng.integers(0, 200, size=(n, F)).astype(np.uint8)
    codes[:, 3] = 0
    derivs = [(np.round(rng.normal(size=n), 2), rng.uniform(0.1, 1.0, size=n)) for _ in range(2)]
    derivs.append((derivs[0][0], np.ones(n)))
    serial = TreeGrower(codes, num_leaves=12)
    serial.column_min_docs = 10**9
    threaded = [TreeGrower(codes, num_leaves=12, n_jobs=j) for j in (1, 2)]
    for grad, hess in derivs:
        want, w_leaf = serial.grow(grad, hess)
        for g in threaded:
            got, leaf_of = g.grow(grad, hess)
            for name in FIELDS:
                assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
            assert leaf_of.tobytes() == w_leaf.tobytes()
    counts = threaded[0].columns()[3]["counts"]
    assert counts[0][-1] == 1.0 and np.any(counts[2] != 0.0)


@pytest.mark.parametrize("cap", ["bytes", "rows"])
def test_global_bins_past_their_limits(cap):
    """Past `TreeGrower.global_bins`'s limits (matrix bytes; more than 65,536 histogram rows) unconstrained
    serial trees still read global bin indices (uint32 past 65,536 rows); OLE trees read the codes with
    offsets: the oracle's trees."""
    F = 5 if cap == "bytes" else 300
    codes, nb, grad, hess, pairs, _ = _ranking(17, n=240, F=F, max_code=9)
    if cap == "rows":
        codes[:, 0] = np.arange(codes.shape[0]) % 256
        nb[0] = 256
        nb[1:] = 255  # 300 x ~255 histogram rows
    g = TreeGrower(codes, nb, num_leaves=8, min_child_samples=4, criterion="ole")
    if cap == "bytes":
        g.global_bins_max_bytes = 0
    assert g.global_bins() is None
    assert g.whole_tree_bins().dtype == (np.uint16 if cap == "bytes" else np.uint32)
    for p in (pairs, None):
        tree, leaf_of = g.grow(grad, hess, pairs=p)
        _assert_oracle(tree, leaf_of, ref.grow(codes, grad, hess, num_leaves=8, criterion="ole", min_data=4,
                                               pairs=p, n_bins=nb))


@pytest.mark.kernel
def test_partitions_match_numpy():
    """Stable partitions of a node's rows (row-major, with each row's node; one column) and of its pairs
    (left, right, crossing: each group in order), against NumPy."""
    rng = np.random.default_rng(5)
    n, F = 90, 5
    codes = rng.integers(0, 9, size=(n, F)).astype(np.uint8)
    codes_t = np.ascontiguousarray(codes.T)
    for start, end in ((0, n), (13, 61), (40, 41), (20, 20)):
        for f in range(F):
            for j in (-1, 0, 1, 8):  # all right, missing left, a split, all left
                rows = rng.permutation(n).astype(np.int64)
                seg = rows[start:end]
                go = codes[seg, f] <= j
                want = np.concatenate((seg[go], seg[~go]))
                p, leaf_of = rows.copy(), np.full(n, -5, dtype=np.int64)
                mid = gk._partition_rows(codes, p, start, end, f, j, np.empty(n, dtype=np.int64), leaf_of,
                                         1, 2)
                assert mid == start + go.sum() and (p[start:end] == want).all()
                assert (p[:start] == rows[:start]).all() and (p[end:] == rows[end:]).all()
                assert (leaf_of[seg] == np.where(go, 1, 2)).all() and (np.delete(leaf_of, seg) == -5).all()
                q = rows.astype(np.int32)
                assert gk._partition_column(codes_t[f], q, start, end, j, np.empty(n, dtype=np.int32)) == mid
                assert (q == p).all()
    codes, nb, grad, hess, (pa, pb, pw), _ = _ranking(4)
    m = pa.size
    leaf_of = np.where(codes[:, 2] <= 2, 5, 6).astype(np.int64)
    leaf_of[rng.random(leaf_of.size) < 0.1] = 7  # documents that left the node earlier: their pairs drop
    qa, qb, qw = pa.copy(), pb.copy(), pw.copy()
    scratch = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m)
    mid, end = gk._partition_pairs(qa, qb, qw, 2, m, leaf_of, 5, 6, *scratch)
    la, lb = leaf_of[pa[2:]], leaf_of[pb[2:]]
    groups = [(la == lb) & (la == 5), (la == lb) & (la == 6), la != lb]
    order = np.concatenate([np.flatnonzero(gr) for gr in groups]) + 2
    assert (mid, end) == (2 + groups[0].sum(), 2 + groups[0].sum() + groups[1].sum())
    for got, orig in ((qa, pa), (qb, pb), (qw, pw)):
        assert (got[:2] == orig[:2]).all() and (got[2:end] == orig[order][:end - 2]).all()


@pytest.mark.kernel
def test_label_leaves():
    """Each leaf's rows get its node id (internal nodes' ranges are their leaves'), on one and two threads."""
    rng = np.random.default_rng(3)
    rows = rng.permutation(12).astype(np.int64)
    ni = np.zeros((5, gk.NI), dtype=np.int64)
    ni[:, gk.START] = [0, 0, 5, 5, 9]
    ni[:, gk.END] = [12, 5, 12, 9, 12]
    ni[:, gk.LEFT] = [1, -1, 3, -1, -1]
    want = np.empty(12, dtype=np.int64)
    for nd in (1, 3, 4):
        want[rows[ni[nd, gk.START]:ni[nd, gk.END]]] = nd
    for threads in (1, 2):
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        got = np.full(12, -7, dtype=np.int64)
        gk._label_leaves(rows, ni, 5, got)
        assert (got == want).all()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    root = np.zeros((1, gk.NI), dtype=np.int64)  # a tree of one leaf: every row in node 0
    root[0, gk.LEFT], root[0, gk.END] = -1, 12
    one = np.full(12, -7, dtype=np.int64)
    gk._label_leaves(rows, root, 1, one)
    assert (one == 0).all()


def test_threads_restored_and_results_independent_of_them():
    codes, nb, grad, hess, pairs, _ = _ranking(4)
    before = numba.get_num_threads()
    for layout in LAYOUTS:
        for crit in ("se", "wse"):
            _grower(codes, nb, layout, num_leaves=4, criterion=crit).grow(grad, hess)
            assert numba.get_num_threads() == before


def test_leaf_values_and_node_record():
    """Leaf values are one Newton step ``-G / H`` of each leaf's documents (Eq. 11), internal nodes 0; the
    node record's counts and sums are the documents' under each node; thresholds map each bin to the raw
    value (``-inf`` for the bin of missing values)."""
    codes, nb, grad, hess, _, _ = _ranking(8)
    thresholds = [np.arange(1, b - 1) * 0.5 for b in nb]
    tree, leaf_of = TreeGrower(codes, nb, thresholds, num_leaves=7, min_child_samples=4).grow(grad, hess)
    for nd in range(tree.n_nodes):
        if tree.left[nd] < 0:
            m = leaf_of == nd
            assert tree.count[nd] == m.sum()
            assert tree.value[nd] == pytest.approx(-grad[m].sum() / hess[m].sum(), rel=1e-12)
        else:
            assert tree.value[nd] == 0.0
            j = tree.bin[nd]
            assert tree.threshold[nd] == (-np.inf if j == 0 else thresholds[tree.feature[nd]][j - 1])
    assert tree.count[0] == codes.shape[0] and tree.sum_grad[0] == pytest.approx(grad.sum())


def test_bad_input_named():
    codes, nb, grad, hess, pairs, _ = _ranking(0)
    with pytest.raises(ValueError, match="criterion"):
        TreeGrower(codes, criterion="gini")
    with pytest.raises(ValueError, match="num_leaves"):
        TreeGrower(codes, num_leaves=1)
    with pytest.raises(ValueError, match="uint8/uint16"):
        TreeGrower(codes.astype(np.int64))
    with pytest.raises(ValueError, match="n_bins"):
        TreeGrower(codes, nb[:-1])
    g = TreeGrower(codes, nb)
    with pytest.raises(ValueError, match="shape"):
        g.grow(grad[:-1], hess)
    with pytest.raises(ValueError, match="finite"):
        g.grow(np.where(np.arange(grad.size) == 3, np.nan, grad), hess)
    with pytest.raises(ValueError, match="feature_constraint"):
        g.grow(grad, hess, constraint=[1])
    with pytest.raises(ValueError, match="feature_constraint entries"):
        TreeGrower(codes, nb, num_leaves=2).grow(grad, hess, constraint=[99])
    ni, nf = g.nodes
    with pytest.raises(ValueError, match="node record"):
        gk.grow((ni[:3], nf[:3]), (g.off, np.zeros((10, 50, 3)), *g._row_list(), g.leaf_of, g.positions),
                g.positions, criterion="se", h_unit=0.0, num_leaves=10, min_data=1.0, min_hess=0.0,
                codes=codes, gbin=g.global_bins(), vals=np.zeros((codes.shape[0], 3)),
                scan=g.scan)


@pytest.mark.kernel
@pytest.mark.parametrize("layout", LAYOUTS)
def test_l2_leaf_penalty_trees_are_the_oracles(layout):
    """``reg_lambda`` (RWSE's L2 leaf penalty): in every layout, growth order, with and without a constraint
    and with a constant hessian, the oracle's node record bit for bit; and penalties that change the tree."""
    for seed in (0, 1):
        codes, nb, grad, hess, _, _ = _ranking(seed)
        changed = 0
        grid = itertools.product(("best_first", "breadth_first", "depth_first"), (None, [5, 0, 5, 2, 1]),
                                 (False, True), (0.7, 30.0))
        for growth, cons, const, lam in grid:
            h = np.full(grad.size, 0.5) if const else hess
            g = _grower(codes, nb, layout, num_leaves=6, min_child_samples=3, growth=growth, criterion="rwse",
                        reg_lambda=lam)
            tree, leaf_of = g.grow(grad, h, constraint=cons)
            want = ref.grow(codes, grad, h, num_leaves=6, criterion="rwse", min_data=3, min_hess=1e-3,
                            growth=growth, constraint=cons, n_bins=nb, reg_lambda=lam)
            _assert_oracle(tree, leaf_of, want)
            plain, plain_leaf = _grower(codes, nb, layout, num_leaves=6, min_child_samples=3, growth=growth,
                                        criterion="rwse").grow(grad, h, constraint=cons)
            changed += not np.array_equal(plain_leaf, leaf_of)
        assert changed > 0  # the penalty reaches the split gain, not only the leaf values


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["breadth_first", "best_first", "depth_first"])
def test_l2_leaf_penalty_matches_the_penalised_objective(growth):
    """The brute-force reference minimises each leaf's penalised second-order objective
    ``sum (g v + h v^2 / 2) + reg_lambda v^2 / 2`` directly: same leaves, values ``-G / (H + reg_lambda)``."""
    codes, nb, grad, hess, _, _ = _ranking(3, n=60, F=3, max_code=5, k=5)
    hess = hess + 0.05
    for lam in (0.5, 4.0):
        tree, leaf_of = TreeGrower(codes, nb, num_leaves=5, min_child_samples=2, min_child_weight=1e-9,
                                   growth=growth, criterion="rwse", reg_lambda=lam).grow(grad, hess)
        leaves, values = brute.fit_tree(codes, grad, hess, 5, "rwse", min_data=2, min_hess=1e-9,
                                        growth=growth, reg_lambda=lam)
        got = {tuple(np.flatnonzero(leaf_of == nd)): tree.value[nd] for nd in np.unique(leaf_of)}
        assert sorted(got) == sorted(tuple(np.flatnonzero(M)) for M in leaves)
        for M, v in zip(leaves, values):
            assert got[tuple(np.flatnonzero(M))] == pytest.approx(v, rel=1e-10, abs=1e-12)
            assert abs(v) < abs(grad[M].sum() / hess[M].sum())  # shrunk towards 0


def test_l2_leaf_penalty_checked():
    codes, nb, *_ = _ranking(0)
    for bad in (-1.0, np.inf, np.nan, True, "1"):
        with pytest.raises(ValueError, match="reg_lambda"):
            TreeGrower(codes, nb, criterion="rwse", reg_lambda=bad)
    for crit in ("se", "wse", "ole", "classify"):
        with pytest.raises(ValueError, match="reg_lambda.*rwse"):
            TreeGrower(codes, nb, criterion=crit, reg_lambda=1.0)
    TreeGrower(codes, nb, criterion="se", reg_lambda=0)  # 0: no penalty, any criterion


def test_feature_subset_checked():
    codes, nb, grad, hess, *_ = _ranking(0)
    g = TreeGrower(codes, nb, num_leaves=4, criterion="rwse")
    for bad in ([], [0, 6], [-1], [[0, 1]], [0.5]):
        with pytest.raises(ValueError, match="features"):
            g.grow(grad, hess, features=bad)
    with pytest.raises(ValueError, match="constraint or a feature subset"):
        g.grow(grad, hess, features=[0, 1], constraint=1)


@pytest.mark.kernel
@pytest.mark.parametrize("layout", LAYOUTS)
def test_sample_tree_is_the_tree_of_the_sampled_rows(layout):
    """A tree grown on a sample (bagging) is the tree of a matrix holding those rows only (its node record
    bit for bit, the in-bag rows' leaves), every criterion (OLE without pairs) and growth order; the rows
    out of the bag reach the leaf their codes lead to."""
    codes, nb, grad, hess, _, rng = _ranking(5)
    n = grad.size
    for crit, growth in itertools.product(("se", "wse", "rwse", "ole", "classify"),
                                          ("best_first", "breadth_first", "depth_first")):
        g_ = rng.normal(size=n) if crit == "classify" else grad
        md = 1 if crit == "classify" else 3
        s = np.sort(rng.choice(n, n // 2, replace=False))
        kw = dict(num_leaves=6, min_child_samples=md, growth=growth, criterion=crit)
        tree, leaf_of = _grower(codes, nb, layout, **kw).grow(g_, hess, sample=s)
        sub, sub_leaf = _grower(codes[s], nb, layout, **kw).grow(g_[s], hess[s])
        for name in FIELDS:
            assert getattr(tree, name).tobytes() == getattr(sub, name).tobytes(), (crit, growth, name)
        assert leaf_of[s].tobytes() == sub_leaf.tobytes()
        nd = np.zeros(n, dtype=np.int64)  # every row down the tree by its codes
        for _ in range(tree.n_nodes):
            inner = tree.left[nd] >= 0
            go = codes[np.arange(n), np.maximum(tree.feature[nd], 0)] <= tree.bin[nd]
            nd = np.where(inner, np.where(go, tree.left[nd], tree.right[nd]), nd)
        assert leaf_of.tobytes() == nd.tobytes()


def test_sample_checked():
    codes, nb, grad, hess, pairs, _ = _ranking(0)
    n = grad.size
    g = TreeGrower(codes, nb, num_leaves=4, criterion="rwse")
    for bad in ([], [0, n], [-1], [[0, 1]], [0.5, 1.0], np.array([True, False]), [3, 1, 3]):
        with pytest.raises(ValueError, match="sample"):
            g.grow(grad, hess, sample=bad)
    with pytest.raises(ValueError, match="sample"):
        TreeGrower(codes, nb, criterion="ole").grow(grad, hess, pairs=pairs, sample=[0, 1, 2])
    tree, leaf_of = g.grow(grad, hess, sample=np.array([5, 2, 9], dtype=np.uint16))  # any int dtype and order
    assert tree.count[0] == 3 and tree.n_leaves == 1 and (leaf_of == 0).all()


def test_sample_edge_cases():
    """All-equal gradients on a sample: SE gains nothing, one leaf of the in-bag rows' Newton step that every
    row takes; a one-row matrix's sample of its row is the tree without a sample."""
    codes, nb, grad, hess, _, _ = _ranking(2)
    n = grad.size
    s = np.arange(0, n, 3)
    tree, leaf_of = TreeGrower(codes, nb, num_leaves=4, min_child_samples=1).grow(np.full(n, 0.5), hess,
                                                                                    sample=s)
    assert tree.n_leaves == 1 and tree.count[0] == s.size and (leaf_of == 0).all()
    assert tree.value[0] == pytest.approx(-0.5 * s.size / hess[s].sum(), rel=1e-12)
    one = np.zeros((1, 2), dtype=np.uint8)
    g = TreeGrower(one, num_leaves=4, min_child_samples=1)
    a = g.grow(np.array([1.0]), np.array([1.0]), sample=[0])[0]
    b = g.grow(np.array([1.0]), np.array([1.0]))[0]
    assert a.value.tobytes() == b.value.tobytes() and a.value[0] == -1.0


@pytest.mark.parametrize("criterion", ["se", "classify"])
@pytest.mark.parametrize("L", [2, 3, 4, 8])
def test_constraint_layout_of_python_ints_is_numpys(L, criterion):
    """A constraint given as a tuple of Python ints (BoostingTree's) is laid out on Python lists
    (`TreeGrower._plain_layout`): the same five arrays as the NumPy route of any other sequence, and the
    same tree bit for bit; NDCGBoost's classifier lays out the constraint's features only (no feature 0 for
    the totals). A longer constraint grows the tree of its first ``L - 1`` entries (the tail checked, not
    read). A short, empty or out-of-range tuple goes to the NumPy route, which names it."""
    codes, nb, grad, hess, _, rng = _ranking(7, F=9)
    F = codes.shape[1]
    g = TreeGrower(codes, nb, num_leaves=L, min_child_samples=1, criterion=criterion)
    g.column_min_docs = 0
    d = g.derivatives(grad, hess)
    head = max(L - 1, 1)
    for _ in range(40):
        c = tuple(int(v) for v in rng.integers(0, F, size=head + int(rng.integers(0, 3))))
        plain = g._plain_layout(c)
        g._layouts.clear()
        numpy_route = g._layout(np.array(c))
        for a, b in zip(plain, numpy_route, strict=True):
            assert a.dtype == b.dtype == np.int64 and a.flags.c_contiguous and np.array_equal(a, b)
        want_used = sorted(set(c[:head]) | (set() if criterion == "classify" else {0}))
        assert plain[1].tolist() == want_used and plain[0].tolist() == list(c[:head])
        trees = []
        for cc in (c, np.array(c), c[:head]):
            g._layouts.clear()
            trees.append(g.grow(d, constraint=cc)[0])
        for t in trees[1:]:
            for f in FIELDS:
                assert np.array_equal(getattr(trees[0], f), getattr(t, f)), f
    bad = [(), (F,), (-1,)] + ([(0,) * (L - 2)] if L > 2 else [])
    for c in bad:
        assert g._plain_layout(c) is None
        with pytest.raises(ValueError, match="feature_constraint"):
            g.grow(d, constraint=c)
