"""`bin_features` (one sort per feature, threads, a row sample above ``sample_size``) against the
original one-feature-at-a-time implementation."""

import numpy as np
import pytest

from lrank._kernels.binning import apply_thresholds
from lrank.data.binning import bin_features
from tests.reference.binning import bin_features_v1

pytestmark = pytest.mark.kernel


def _X(rng, n, F, missing=0.1, ties=True):
    X = rng.normal(size=(n, F)).astype(np.float32)
    if ties:
        X[:, ::2] = np.round(X[:, ::2] * 3)  # few distinct values
    X[:, -1] = 1.0  # constant: no threshold
    X[rng.random((n, F)) < missing] = np.nan
    return X


@pytest.mark.parametrize("strategy", ["subsample", "quantile", "all"])
@pytest.mark.parametrize("max_thr", [1, 7, 254, 255])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_same_bits_as_the_original(strategy, max_thr, n_jobs):
    rng = np.random.default_rng(max_thr)
    X = _X(rng, 600, 6)
    want_codes, want_th = bin_features_v1(X, max_thr, strategy, random_state=3)
    got = bin_features(X, max_thr, strategy, random_state=3, n_jobs=n_jobs)
    assert len(got.thresholds) == len(want_th)
    for a, b in zip(got.thresholds, want_th):
        np.testing.assert_array_equal(a, b)
    assert got.codes.dtype == want_codes.dtype
    np.testing.assert_array_equal(got.codes, want_codes)


def test_row_sample_above_sample_size():
    rng = np.random.default_rng(0)
    X = _X(rng, 3000, 5, ties=False)
    full = bin_features(X, 20, "quantile", random_state=1, sample_size=None)
    a = bin_features(X, 20, "quantile", random_state=1, sample_size=500, n_jobs=1)
    b = bin_features(X, 20, "quantile", random_state=1, sample_size=500, n_jobs=2)
    for t1, t2 in zip(a.thresholds, b.thresholds):  # threads change nothing
        np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(a.codes, b.codes)
    assert any(not np.array_equal(t1, t2) for t1, t2 in zip(a.thresholds, full.thresholds))
    # thresholds of the sample, codes of every row
    srng = np.random.default_rng(1)
    rows = np.sort(srng.choice(3000, size=500, replace=False))
    _, th = bin_features_v1(X[rows], 20, "quantile", random_state=1)
    for t1, t2 in zip(a.thresholds, th):
        np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(a.codes, a.transform(X))
    c = bin_features(X, 20, "quantile", random_state=None, sample_size=500)
    d = bin_features(X, 20, "quantile", random_state=None, sample_size=500)
    np.testing.assert_array_equal(c.codes, d.codes)  # no seed: still the same sample


def test_threaded_coding_same_codes():
    rng = np.random.default_rng(5)
    X = _X(rng, 120_000, 3)
    bins = bin_features(X[:2000], 254, "quantile")
    th, nt = bins.padded_thresholds(), bins.n_thresholds
    one = apply_thresholds(X, th, nt, np.empty(X.shape, dtype=np.uint8), n_jobs=1)
    two = apply_thresholds(X, th, nt, np.empty(X.shape, dtype=np.uint8), n_jobs=2)
    np.testing.assert_array_equal(one, two)


def test_bad_input():
    with pytest.raises(ValueError, match="sample_size"):
        bin_features(np.zeros((3, 2)), sample_size=1)
    with pytest.raises(ValueError, match="shapes"):
        apply_thresholds(np.zeros((3, 2), np.float32), np.zeros((3, 1)), np.zeros(2, np.int64),
                         np.empty((3, 2), np.uint8))
