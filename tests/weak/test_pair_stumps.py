"""The pair-histogram kernel (eps+/eps-/eps0 of every stump) and the exact pattern dedup."""

import numpy as np
import pytest

from lrank._kernels.pair_stumps import pair_min_codes, stump_eps, stump_pattern
from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.weak.pair_patterns import distinct_stumps
from tests.reference.rankboost_plus import distinct_patterns, doc_suffix_rows, stump_eps_loop

pytestmark = pytest.mark.kernel


def _data(seed, n=40, F=5, nan=0.2, levels=6, labels=3, qsizes=(15, 1, 24)):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, F)).astype(np.float32)
    X[rng.random((n, F)) < nan] = np.nan
    X[:, 0] = rng.integers(0, levels, size=n)  # no missing value, so that -X[:, 0] reverses its order
    X[:, 1] = X[:, 0]  # a duplicate feature
    X[:, 2] = -X[:, 0]  # a negated one
    X[:, 3] = 7.0  # constant: every stump ties
    y = rng.integers(0, labels, size=n)
    y[15:16] = 0  # one-document query
    return RankingData(X, y, np.r_[0, np.cumsum(qsizes)])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_thresholds", [3, 254, 255])
def test_stump_eps_matches_loop(seed, max_thresholds):
    d = _data(seed)
    cp = d.pairs()
    rng = np.random.default_rng(seed)
    D = rng.random(cp.hi.size)
    D /= D.sum()
    bins = bin_features(d.X, max_thresholds=max_thresholds, random_state=seed)
    nb = bins.max_bins
    minc = pair_min_codes(bins.codes, cp.hi, cp.lo)
    got = stump_eps(bins.codes, minc, cp.hi, cp.lo, D, nb)
    want = stump_eps_loop(bins.codes, cp.hi, cp.lo, D, nb)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-12)


def test_all_equal_labels_and_one_document():
    X = np.array([[1.0], [2.0], [np.nan]], dtype=np.float32)
    hi = np.zeros(0, dtype=np.int64)
    bins = bin_features(X)
    minc = pair_min_codes(bins.codes, hi, hi)
    ep, em, e0 = stump_eps(bins.codes, minc, hi, hi, np.zeros(0), bins.max_bins)
    assert ep.sum() == em.sum() == e0.sum() == 0.0
    ds = distinct_stumps(bins.codes, bins.n_thresholds, hi, hi)
    assert len(ds) == 0 and ds.n_all_tie == ds.n_candidates


@pytest.mark.parametrize("seed", range(4))
def test_distinct_stumps_match_reference(seed):
    d = _data(seed)
    cp = d.pairs()
    bins = bin_features(d.X, random_state=seed)
    ds = distinct_stumps(bins.codes, bins.n_thresholds, cp.hi, cp.lo, random_state=seed)
    ref = distinct_patterns(bins.codes, bins.n_thresholds, cp.hi, cp.lo)
    assert [(f, j) for f, j, _ in ref] == list(zip(ds.feature.tolist(), ds.bin.tolist()))
    assert 1 not in ds.feature and 2 not in ds.feature and 3 not in ds.feature  # copies, negation, constant
    assert ds.n_candidates == ds.n_all_tie + ds.n_duplicates + len(ds)
    for f, j, u in ref:
        np.testing.assert_array_equal(stump_pattern(bins.codes, cp.hi, cp.lo, f, j), u)


def test_dedup_independent_of_seed():
    d = _data(7)
    cp = d.pairs()
    bins = bin_features(d.X)
    a = distinct_stumps(bins.codes, bins.n_thresholds, cp.hi, cp.lo, random_state=1)
    b = distinct_stumps(bins.codes, bins.n_thresholds, cp.hi, cp.lo, random_state=2)
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.bin, b.bin)



@pytest.mark.parametrize("seed", range(8))
def test_doc_suffix_rows_matches_numpy(seed):
    """The suffix sums of document rows (RankBoost+'s stump vectors) against np.add.at + cumsum, bit for bit:
    repeated codes, code 0 (missing), one document, all documents on one code, signed zeros, uint16."""
    from lrank._kernels.pair_stumps import doc_suffix_rows as kernel

    rng = np.random.default_rng(seed)
    for trial in range(25):
        n = int(rng.integers(1, 60)) if trial else 1
        r = int(rng.integers(1, 9))
        n_bins = int(rng.integers(1, 12)) if seed % 2 else 300
        col = rng.integers(0, n_bins, n).astype(np.uint16 if n_bins > 256 else np.uint8)
        if trial % 4 == 1:
            col[:] = col[0]
        vals = rng.normal(size=(n, r)) * 10.0 ** rng.integers(-8, 8, (n, 1))
        vals[rng.random((n, r)) < 0.1] = -0.0
        want = doc_suffix_rows(col, vals, n_bins)
        got = kernel(col, vals, n_bins)
        assert got.shape == (n_bins, r) and got.tobytes() == want.tobytes()


def test_doc_suffix_rows_errors():
    from lrank._kernels.pair_stumps import doc_suffix_rows as kernel

    col = np.array([0, 3, 1], dtype=np.uint8)
    with pytest.raises(ValueError, match="n_bins=3 must exceed every code"):
        kernel(col, np.ones((3, 2)), 3)
    with pytest.raises(ValueError, match="vals must be"):
        kernel(col, np.ones((2, 2)), 4)
    with pytest.raises(ValueError, match="col must be 1-d uint8 or uint16"):
        kernel(col.astype(np.int64), np.ones((3, 2)), 4)


def test_workspaces_are_written_before_read():
    # the kernels' workspaces and fully written outputs come from np.empty: garbage in them changes nothing
    from lrank._kernels import pair_stumps as K

    d = _data(3)
    cp = d.pairs()
    rng = np.random.default_rng(3)
    D = rng.random(cp.hi.size)
    D /= D.sum()
    bins = bin_features(d.X, max_thresholds=5, random_state=3)
    codes, nb = bins.codes, bins.max_bins
    n, F = codes.shape
    m = cp.hi.size
    minc = pair_min_codes(codes, cp.hi, cp.lo)
    junk = lambda shape, dtype=np.float64: rng.integers(1, 99, size=shape).astype(dtype)  # noqa: E731
    np.testing.assert_array_equal(K._pair_min_codes(codes, cp.hi, cp.lo, junk((F, m), codes.dtype)), minc)
    for dt in (np.float64, np.int64, np.uint64):
        v = rng.integers(0, 9, size=n).astype(dt)
        np.testing.assert_array_equal(K._doc_suffix(codes, v, junk((F, nb), dt), junk((F, nb - 1), dt)),
                                      K.doc_suffix(codes, v, nb))
    for dt in (np.float64, np.int64):
        w = rng.integers(0, 9, size=m).astype(dt)
        np.testing.assert_array_equal(K._pair_suffix(minc, w, junk((4, nb), dt), junk((F, nb - 1), dt)),
                                      K.pair_suffix(minc, w, nb))
    want = stump_eps(codes, minc, cp.hi, cp.lo, D, nb)
    got = K._stump_eps(codes, minc, cp.hi, cp.lo, D, np.zeros((2, n)), junk((F, nb)), junk((4, nb)),
                       junk((3, F, nb - 1)), junk((3, F, nb - 1)))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    ds = distinct_stumps(codes, bins.n_thresholds, cp.hi, cp.lo, random_state=3, minc=minc)
    plan = K.candidate_plan(codes, minc, ds.feature, ds.bin, nb)
    B = plan.minc_b.shape[2]
    got = K._candidate_eps(plan.codes_c, plan.minc_b, cp.hi, cp.lo, D, plan.cptr, plan.corder, plan.cj,
                           np.zeros((2, n)), junk((2, B, nb)), junk((B, 4, nb)), junk((3, nb)),
                           junk((3, len(ds))))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w[ds.feature, ds.bin])
    f1, j1 = ds.feature[:6], ds.bin[:6]
    f2, j2 = np.r_[f1[:3], f1[4:], f1[3]], np.r_[j1[:3], j1[4:], j1[3]]  # three equal, three rotated
    want = K.patterns_equal(codes, cp.hi, cp.lo, f1, j1, f2, j2)
    assert (want[:3] == 1).all()
    ends = junk((2, F, m), codes.dtype)
    got = K._patterns_equal(codes, cp.hi, cp.lo, f1, j1, f2, j2, np.zeros(F, bool), ends, junk(6, np.int8))
    np.testing.assert_array_equal(got, want)
    u, em, e0, ep = K._stump_outcomes(codes, cp.hi, cp.lo, int(f1[0]), int(j1[0]), D, junk(m, np.int8),
                                      np.zeros(3))
    assert (em, e0, ep) == K.stump_outcomes(codes, cp.hi, cp.lo, int(f1[0]), int(j1[0]), D)[1:]
    np.testing.assert_array_equal(u, stump_pattern(codes, cp.hi, cp.lo, int(f1[0]), int(j1[0])))
    np.testing.assert_array_equal(K._stump_pattern(codes, cp.hi, cp.lo, int(f1[0]), int(j1[0]),
                                                   junk(m, np.int8)), u)


def test_python_functions_check_their_arrays():
    from lrank._kernels import pair_stumps as K

    codes = np.array([[3, 1], [2, 0], [1, 2]], dtype=np.uint8)
    hi = np.array([0, 0, 1])
    lo = np.array([1, 2, 2])
    minc = K.pair_min_codes(codes, hi, lo)
    with pytest.raises(ValueError, match="uint8 or uint16"):
        K.pair_min_codes(codes.astype(np.int64), hi, lo)
    with pytest.raises(ValueError, match="one length"):
        K.pair_min_codes(codes, hi, lo[:2])
    with pytest.raises(ValueError, match="float64, int64 or uint64"):
        K.doc_suffix(codes, np.ones(3, np.float32), 4)
    with pytest.raises(ValueError, match="values must be"):
        K.doc_suffix(codes, np.ones(2), 4)
    with pytest.raises(ValueError, match="n_bins"):
        K.doc_suffix(codes, np.ones(3), 1)
    with pytest.raises(ValueError, match="weights must be"):
        K.pair_suffix(minc, np.ones(2), 4)
    with pytest.raises(ValueError, match="minc must be"):
        K.stump_eps(codes, minc[:, :2], hi, lo, np.ones(3), 4)
    with pytest.raises(ValueError, match="0 <= f < 2"):
        K.stump_pattern(codes, hi, lo, 2, 0)
    with pytest.raises(ValueError, match="one weight per pair"):
        K.stump_outcomes(codes, hi, lo, 0, 0, np.ones(2))
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        K.patterns_equal(codes, hi, lo, np.array([0]), np.array([0]), np.array([5]), np.array([0]))
    u = np.array([1, 0, -1], dtype=np.int8)
    with pytest.raises(ValueError, match="in place"):  # a converted copy would lose the update
        K.scale_pairs(np.ones(3, np.float32), u, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="one outcome per pair"):
        K.scale_pairs(np.ones(3), u[:2], 1.0, 1.0, 1.0)
    D = np.ones(3)
    assert K.scale_pairs(D, u, 0.5, 2.0, 1.0) == 3.5 and D.tolist() == [0.5, 1.0, 2.0]
    plan = K.candidate_plan(codes, minc, np.array([0]), np.array([1]), 4)
    with pytest.raises(ValueError, match="the plan has 3 pairs"):
        K.candidate_eps(plan, hi[:2], lo[:2], np.ones(2))


# ------------------------------------------------------------- RankBoost+'s per-round update wrappers
def test_the_per_round_updates_match_numpy_and_refuse_wrong_shapes():
    """`add_log_terms`, `add_log_terms_many` and `margin_losses` (the validating functions RankBoost+
    calls) against plain NumPy on random patterns, ties (u = 0) included."""
    from lrank._kernels import pair_stumps as ps

    rng = np.random.default_rng(5)
    m = 50
    u = rng.integers(-1, 2, m).astype(np.int8)
    lt = rng.normal(size=m)
    table = rng.normal(size=3)
    want = lt + table[u + 1]
    ps.add_log_terms(lt, u, table)
    np.testing.assert_array_equal(lt, want)
    U = rng.integers(-1, 2, (3, m)).astype(np.int8)
    tables = rng.normal(size=(3, 3))
    want = lt.copy()
    for k in range(3):
        want = want + tables[k, U[k] + 1]
    ps.add_log_terms_many(lt, U, tables)
    np.testing.assert_allclose(lt, want, rtol=1e-15, atol=0)
    margins, w1 = rng.integers(-2, 3, m).astype(np.float64), rng.random(m)
    g = margins + 0.5 * u
    r1, r2 = ps.margin_losses(margins, u, 0.5, w1)
    np.testing.assert_array_equal(margins, g)
    assert r1 == pytest.approx(w1[g <= 0].sum(), rel=1e-14)
    assert r2 == pytest.approx(w1[g < 0].sum() + 0.5 * w1[g == 0].sum(), rel=1e-14)
    with pytest.raises(ValueError, match="add_log_terms"):
        ps.add_log_terms(lt, u[:-1], table)
    with pytest.raises(ValueError, match="add_log_terms_many"):
        ps.add_log_terms_many(lt, U, tables[:2])
    with pytest.raises(ValueError, match="margin_losses"):
        ps.margin_losses(margins, u, 0.5, w1[:-1])
