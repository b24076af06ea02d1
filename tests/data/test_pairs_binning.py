import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrank._kernels.pairs import count_critical_pairs, critical_pairs
from lrank.data import bin_features

from reference.data import bin_codes
from reference.data import critical_pairs as ref_pairs


def random_queries(rng, n_queries, max_docs, n_labels):
    sizes = rng.integers(1, max_docs + 1, n_queries)
    y = rng.integers(0, n_labels, sizes.sum()).astype(np.int32)
    return y, np.r_[0, np.cumsum(sizes)].astype(np.int64)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_labels", [1, 2, 5])
def test_critical_pairs_match_reference(seed, n_labels):
    rng = np.random.default_rng(seed)
    y, qptr = random_queries(rng, 20, 15, n_labels)  # includes one-document and all-equal queries
    hi, lo, qof = critical_pairs(y, qptr)
    rhi, rlo = ref_pairs(y, qptr)
    np.testing.assert_array_equal(hi, rhi)
    np.testing.assert_array_equal(lo, rlo)
    assert (y[hi] > y[lo]).all()
    np.testing.assert_array_equal(np.bincount(qof, minlength=20), count_critical_pairs(y, qptr))
    if n_labels == 1:
        assert hi.size == 0


@given(st.integers(0, 2**31 - 1), st.floats(0.0, 0.6), st.sampled_from(["subsample", "quantile", "all"]),
       st.integers(1, 8))
@settings(max_examples=40, deadline=None)
def test_bin_codes_match_reference(seed, missing, strategy, max_thr):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(40, 4)).astype(np.float32)  # many ties
    X[:, 3] = 7.0  # a constant feature: no threshold
    X[rng.random(X.shape) < missing] = np.nan
    bins = bin_features(X, max_thresholds=max_thr, threshold_strategy=strategy, random_state=seed)
    np.testing.assert_array_equal(bins.codes, bin_codes(X, bins.thresholds))
    assert bins.codes.dtype == np.uint8
    assert (bins.codes[np.isnan(X)] == 0).all() and (bins.codes[~np.isnan(X)] >= 1).all()
    assert bins.thresholds[3].size == 0
    for f, t in enumerate(bins.thresholds):
        assert np.all(np.diff(t) > 0)
        if strategy != "all":
            assert t.size <= max_thr
        for j, theta in enumerate(t, start=1):  # x > theta_j  <=>  code > j
            known = ~np.isnan(X[:, f])
            np.testing.assert_array_equal(X[known, f] > theta, bins.codes[known, f] > j)
    np.testing.assert_array_equal(bins.transform(X), bins.codes)


def test_binning_rules_and_dtype():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2)).astype(np.float32)
    b = bin_features(X, random_state=0)
    assert b.codes.dtype == np.uint8 and b.n_thresholds.tolist() == [254, 254]
    b255 = bin_features(X, max_thresholds=255, random_state=0)
    assert b255.codes.dtype == np.uint16 and b255.codes.max() == 256
    ball = bin_features(X, threshold_strategy="all")
    assert ball.n_thresholds.tolist() == [1999, 1999]
    # the same seed gives the same thresholds, another seed others
    assert all((a == c).all() for a, c in zip(b.thresholds, bin_features(X, random_state=0).thresholds))
    assert any((a != c).any() for a, c in zip(b.thresholds, bin_features(X, random_state=1).thresholds))
    with pytest.raises(ValueError):
        bin_features(X, threshold_strategy="bogus")
    with pytest.raises(ValueError):
        bin_features(X, max_thresholds=0)
    with pytest.raises(ValueError):
        b.transform(X[:, :1])
