"""The pair-histogram kernel (eps+/eps-/eps0 of every stump) and the exact pattern dedup."""

import numpy as np
import pytest

from lrank._kernels.pair_stumps import _pair_min_codes as pair_min_codes
from lrank._kernels.pair_stumps import _stump_eps as stump_eps
from lrank._kernels.pair_stumps import _stump_pattern as stump_pattern
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
