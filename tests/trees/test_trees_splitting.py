"""The tree engine's splitter (``lrank._kernels.splitting``): each criterion's scan against a plain
Python scan that divides out every score (``tests/reference``), bit for bit, whatever the bar skips;
the parallel twin; NDCGBoost's node sums as NumPy sums them."""

import numpy as np
import pytest

from lrank._kernels import splitting as sk
from lrank._kernels.lambdas import lambdamart_gradients
from tests.reference import pair_histograms as ref_ph
from tests.reference import tree_grower as ref_tg
from tests.reference import trees as ref


def _totals(hist, off, C):
    t = np.zeros(4)
    for c in range(C):
        acc = 0.0
        for b in range(off[0], off[1]):
            acc += hist[b, c]
        t[c] = acc
    if C == 2:
        t[2] = t[1]
    return t


def _bits(x):
    return np.float64(x).tobytes()


@pytest.mark.kernel
@pytest.mark.parametrize("C", [2, 3])
@pytest.mark.parametrize("crit", [sk.SE, sk.RWSE])
def test_fast_scan_bar_same_bits(C, crit):
    """The SE/RWSE scan's bar (skip a threshold the products prove below the best so far) gives the bits
    of the plain scan, across gradient scales where products could underflow or overflow, duplicated
    features (exact ties across features), empty bins holding a rounding residue, parent scores; the
    parallel twin gives the same, its buffers holding garbage."""
    rng = np.random.default_rng(700 + 10 * C + crit)
    for case in range(60):
        F = int(rng.integers(1, 9))
        nb = rng.integers(2, 30, F)
        off = np.r_[0, np.cumsum(nb)].astype(np.int64)
        cnt = rng.integers(0, 6, off[-1]).astype(float) * (rng.random(off[-1]) < 0.7)
        g = rng.normal(size=off[-1]) * (cnt > 0) * [1.0, 1e-120, 1e120, 3.7][case % 4]
        g += (cnt == 0) * rng.choice([0.0, 1e-17, -2e-17], off[-1])  # residues in empty bins
        if case % 3 == 0:
            g = np.round(g, 1)
        h = cnt if C == 2 else cnt * rng.uniform(0.1, 1.0, off[-1])
        hist = np.column_stack([g, h] if C == 2 else [g, h, cnt])
        if F > 1:  # feature 1 repeats feature 0: equal scores, the first feature wins
            k = nb[0]
            hist = np.concatenate([hist[:k], hist[:k], hist[k:]])
            off = np.r_[0, off + k]
            F += 1
        tot = _totals(hist, off, C)
        h_unit = 1.0 if C == 2 else 0.0
        feats = np.arange(F, dtype=np.int64)
        width = int(np.diff(off).max())
        for min_data in (1.0, 3.0):
            for ps in (0.0, 1.7, float(tot[0]) ** 2):
                buf = np.empty((4, width))
                fast = sk._scan_fast(hist, off, feats, crit, min_data, 0.0, *tot[:3], ps, h_unit, buf, 0.0)
                plain = ref.histogram_split_scan(hist, off, crit, min_data, 0.0, tot, ps, h_unit)
                assert _bits(fast[0]) == _bits(plain[0]) and fast[1:] == plain[1:]
                junk = np.random.default_rng(0).normal(size=(F, 4, width))  # contents must not matter
                par = sk._scan_parallel(hist, off, feats, crit, min_data, 0.0, *tot[:3], 0.0, ps, h_unit,
                                        None, None, 0.0, np.empty(F), np.empty(F, dtype=np.int64), junk, 0.0)
                assert _bits(par[0]) == _bits(fast[0]) and par[1:] == fast[1:]


@pytest.mark.kernel
def test_fast_scan_floor():
    """A feature scan with a floor above every score returns no threshold; a floor of -inf or one at the
    best score returns the unbarred result."""
    rng = np.random.default_rng(5)
    hist = np.column_stack([rng.normal(size=40), np.ones(40), np.ones(40)])
    args = (hist, 0, 40, True, 1.5, 0.0, float(hist[:, 0].sum()), 40.0, 40.0, 0.0)
    buf = np.empty((4, 40))
    best, j = sk._fast_feature(*args, -np.inf, buf, 0.0)
    assert j >= 0
    assert sk._fast_feature(*args, best, buf, 0.0) == (best, j)
    assert sk._fast_feature(*args, best * 1.01, buf, 0.0) == (-np.inf, -1)


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wse_scan_matches_reference(seed):
    """WSE's scan (empty bins skipped, the scan stops once the right side is too small) against the plain
    scan, and its parallel twin."""
    rng = np.random.default_rng(seed)
    F = 6
    nb = rng.integers(2, 12, F)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    cnt = rng.integers(0, 5, off[-1]).astype(float) * (rng.random(off[-1]) < 0.8)
    h = cnt * rng.uniform(0.05, 1.0, off[-1])
    g = np.round(rng.normal(size=off[-1]), 1) * (cnt > 0)
    q = g * g / np.maximum(h, 1e-12)
    hist = np.column_stack([g, h, cnt, q])
    tot = _totals(hist, off, 4)
    feats = np.arange(F, dtype=np.int64)
    for min_data, min_hess in ((1.0, 0.0), (3.0, 1e-3), (6.0, 0.5)):
        score = ref_tg._node_score("wse", tot, 0.0, min_hess)
        got = sk._scan_wse(hist, off, feats, min_data, min_hess, *tot, score)
        want = ref_tg._wse_scan(hist, off, min_data - 0.5, min_hess, tot, score)
        assert _bits(got[0]) == _bits(want[0]) and got[1:] == want[1:]
        par = sk._scan_parallel(hist, off, feats, sk.WSE, min_data, min_hess, *tot, score, 0.0, None, None,
                                0.0, np.empty(F), np.empty(F, dtype=np.int64), np.empty((F, 4, 12)), 0.0)
        assert _bits(par[0]) == _bits(got[0]) and par[1:] == got[1:]


def _ole_node(seed, two, subtract):
    """A node's histograms (gradient, hessian[, count]) and pair histograms in plain NumPy: the documents
    with an even code sum on features 1 and 3, one-document and all-equal-label queries among them;
    ``subtract``: the other child's, made as the parent's minus these (rounding residues in empty bins)."""
    rng = np.random.default_rng(seed)
    sizes = (1, 14, 9, 60, 1, 45, 22, 80)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    y[qptr[1]:qptr[2]] = 2
    scores = np.round(rng.normal(size=n), 1)
    lam, w, (pa, pb, pw) = lambdamart_gradients(y, qptr, scores, k=6, with_pairs=True)
    nb = rng.integers(2, 41, 7)
    codes = np.stack([rng.integers(0, b, n) for b in nb], axis=1).astype(np.uint8)
    codes[:, 6] = codes[:, 2]  # a duplicate feature: tied gains across features
    nb[6] = nb[2]
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    grad = np.round(-lam, 2)
    inside = (codes[:, 1].astype(np.int64) + codes[:, 3]) % 2 == 0
    C = 2 if two else 3
    vals = np.stack([grad, np.full(n, 0.5) if two else w, np.ones(n)][:C], axis=1)

    def hist_of(mask):
        out = np.zeros((off[-1], C))
        idx = (off[:-1][None, :] + codes[mask].astype(np.int64)).ravel()
        for c in range(C):
            np.add.at(out[:, c], idx, np.repeat(vals[mask, c], codes.shape[1]))
        return out

    node = ~inside if subtract else inside
    hist = hist_of(np.ones(n, bool)) - hist_of(inside) if subtract else hist_of(inside)
    empty = (hist[:, 1] == 0.0) & (hist[:, -1] == 0.0)
    if subtract:
        hist[empty, 0] = 1e-15
    keep = node[pa] & node[pb]
    pmax, pmin = ref_ph.pair_histograms(codes, pa[keep], pb[keep], pw[keep], 0, int(keep.sum()), off)
    if subtract:
        pmax[empty] = 1e-15
        pmin[empty] = -1e-15
    p_total = 0.0
    for x in pw[keep]:
        p_total += float(x)
    tot = _totals(hist, off, C)
    if two:
        tot[2] = float(node.sum())
    return hist, off, pmax, pmin, p_total, tot


@pytest.mark.kernel
@pytest.mark.parametrize("subtract", [False, True])
@pytest.mark.parametrize("two", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_ole_scan_matches_reference(seed, two, subtract):
    """OLE's scan (products before divisions, the node's best so far as the bar) against a plain Python scan
    and the reference grower's, bit for bit; with a floor, the same result whenever that beats the floor,
    else nothing above it (what the caller discards); the parallel twin. Empty bins with rounding residues,
    tied thresholds and a duplicate feature; two- and three-channel histograms."""
    hist, off, pmax, pmin, p_total, tot = _ole_node(seed, two, subtract)
    h_unit = 0.5 if two else 0.0
    inv = 1.0 / h_unit if h_unit else 0.0
    F = off.size - 1
    for min_data, min_hess in ((1, 1e-9), (3, 0.0), (2, 0.05), (4, float(tot[1]) / 6)):
        score = ref_tg._node_score("ole", tot, p_total, min_hess)
        best = -np.inf
        for f in range(F):
            want = ref_ph.ole_feature_best(hist, off, f, min_data, min_hess, pmax, pmin, p_total, tot, score,
                                           h_unit)
            o, nb = int(off[f]), int(off[f + 1] - off[f])
            args = (hist, o, nb, min_data - 0.5, float(min_hess), *tot[:3], inv, pmax, pmin, p_total, score)
            got = sk._ole_feature(*args, -np.inf)
            assert _bits(got[0]) == _bits(want[0]) and got[1] == want[1]
            for floor in (best, want[0], np.nextafter(want[0], -np.inf), want[0] / 2, -1.0, 0.0):
                got = sk._ole_feature(*args, floor)
                if want[1] >= 0 and want[0] > floor:
                    assert _bits(got[0]) == _bits(want[0]) and got[1] == want[1]
                else:
                    assert got[1] == -1 or got[0] <= floor
            if want[1] >= 0 and want[0] > best:
                best = want[0]
        feats = np.arange(F, dtype=np.int64)
        got = sk._scan_ole(hist, off, feats, min_data, min_hess, *tot[:3], pmax, pmin, p_total, score, h_unit)
        want = ref_tg._ole_scan(hist, off, min_data - 0.5, min_hess, tot, pmax, pmin, p_total, score, h_unit)
        assert _bits(got[0]) == _bits(want[0]) and got[1:] == want[1:]
        par = sk._scan_parallel(hist, off, feats, sk.RWSE, float(min_data), float(min_hess), *tot[:3], 0.0,
                                score, h_unit, pmax, pmin, p_total, np.empty(F), np.empty(F, dtype=np.int64),
                                np.empty((F, 4, 41)), 0.0)
        assert _bits(par[0]) == _bits(got[0]) and par[1:] == got[1:]


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_classify_scan_matches_reference(seed):
    """NDCGBoost's scan: ``max(0, S_l) + max(0, S_r) - max(0, S)`` with a document on each side, the first
    candidate (features in order) within ``tol`` of the largest (``tol = 0``: the first maximum); a node of
    one document has no split."""
    rng = np.random.default_rng(seed)
    F = 5
    nb = rng.integers(2, 9, F)
    off = np.r_[0, np.cumsum(nb)].astype(np.int64)
    cnt = rng.integers(0, 4, off[-1]).astype(float)
    s = np.round(rng.normal(size=off[-1]), 1) * (cnt > 0)
    hist = np.column_stack([s, cnt, cnt])
    feats = np.arange(F, dtype=np.int64)
    for S in (float(s.sum()), -abs(float(s.sum())), 0.0):
        N = float(cnt[:nb[0]].sum())
        for tol in (0.0, 0.05, 0.25):
            got = sk._scan_classify(hist, off, feats, S, N, tol)
            want = ref_tg._classify_scan(hist, off, S, N, tol)
            assert _bits(got[0]) == _bits(want[0]) and got[1:] == want[1:]
    one = np.zeros((off[-1], 3))
    one[off[:-1] + 1, :] = [0.3, 1.0, 1.0]
    assert sk._scan_classify(one, off, feats, 0.3, 1.0, 0.0)[1] == -1


@pytest.mark.kernel
def test_node_scores():
    """The node score of each criterion: SE ``G^2 / N``; RWSE / OLE / WSE on the exact ``H - 2 P`` when it
    reaches ``min_hess`` (else 0), RWSE's plus the leaf penalty ``lam``; NDCGBoost's ``max(0, S)``."""
    assert sk._node_score(sk.SE, 3.0, 9.0, 4.0, 0.0, 0.0, 0.0, 0.0) == 9.0 / 4.0
    assert sk._node_score(sk.RWSE, 3.0, 9.0, 4.0, 0.0, 2.0, 0.0, 0.0) == 9.0 / 5.0
    assert sk._node_score(sk.RWSE, 3.0, 9.0, 4.0, 0.0, 2.0, 6.0, 0.0) == 0.0
    assert sk._node_score(sk.RWSE, 3.0, 9.0, 4.0, 0.0, 2.0, 0.0, 1.0) == 9.0 / 6.0  # L2 leaf penalty on h
    assert sk._node_score(sk.WSE, 3.0, 9.0, 4.0, 0.5, 0.0, 0.0, 0.0) == 1.0 - 0.5
    assert sk._node_score(sk.CLASSIFY, -2.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0) == 0.0
    assert sk._node_score(sk.CLASSIFY, 2.5, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0) == 2.5


@pytest.mark.kernel
def test_pairwise_sum_is_numpys():
    """A node's weight sum in NumPy's order (blocks of 128 in eight accumulators, halves added), bit for bit
    with ``numpy.sum`` over any row list: 1 to 3,000 rows, widely scaled values, exact cancellations, NaN."""
    rng = np.random.default_rng(0)
    for trial in range(400):
        n = int(rng.integers(1, 3000)) if trial % 2 else int(rng.integers(1, 40))
        s = rng.normal(size=n) * 10 ** rng.uniform(-3, 3, size=n)
        if trial % 7 == 0:
            s = np.round(s)
        rows = np.sort(rng.choice(n + 10, size=n, replace=False))
        rows = rows[rows < n].astype(np.int64) if trial % 3 else rng.permutation(n).astype(np.int64)
        if rows.size == 0:  # never a node's
            continue
        got, want = sk._pairwise_sum(s, rows, 0, rows.size), s[rows].sum()
        # bit for bit, but for the sign of an exact zero (the kernels do not keep signed zeros; NDCGBoost
        # reads a sum through max(0, S) and S > 0 only)
        assert _bits(got) == _bits(want) if want != 0.0 else got == 0.0, (trial, n)
    s = np.array([1.0, np.nan, 2.0])
    assert np.isnan(sk._pairwise_sum(s, np.arange(3, dtype=np.int64), 0, 3))
