"""Single-feature weak rankers: scaling, direction and missing values."""

from __future__ import annotations

import numpy as np
import pytest

from lrank.weak.single_feature import SingleFeatureRankers


def test_minmax_both_directions_and_missing():
    X = np.array([[1.0, 5.0], [3.0, np.nan], [2.0, 5.0], [np.nan, 7.0]])
    w = SingleFeatureRankers(directions="both").fit(X)
    H = w.transform(X)
    assert H.shape == (4, 4)
    np.testing.assert_allclose(H[:, 0], [0.0, 1.0, 0.5, 0.0])  # missing -> lowest (0)
    np.testing.assert_allclose(H[:, 2], [0.0, -1.0, -0.5, -1.0])  # reversed: -z; missing lowest (-1)
    np.testing.assert_allclose(H[:, 1], [0.0, 0.0, 0.0, 1.0])
    assert w.candidates_.tolist() == [[0, 1], [1, 1], [0, -1], [1, -1]]
    r = w.ranker(2)
    np.testing.assert_allclose(r(X), H[:, 2])


def test_scaling_none_is_raw_and_order_preserving():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * [1, 100, 1e4]
    a = SingleFeatureRankers(scaling="none", directions="both").fit(X).transform(X)
    b = SingleFeatureRankers(scaling="minmax", directions="both").fit(X).transform(X)
    np.testing.assert_allclose(a[:, :3], X)
    np.testing.assert_allclose(a[:, 3:], -X)
    for c in range(6):  # same order, so the same single-feature metric
        np.testing.assert_array_equal(np.argsort(a[:, c], kind="stable"), np.argsort(b[:, c], kind="stable"))


def test_constant_and_all_missing_features():
    X = np.array([[2.0, np.nan], [2.0, np.nan]])
    H = SingleFeatureRankers().fit(X).transform(X)
    np.testing.assert_array_equal(H, 0.0)


def test_errors():
    with pytest.raises(ValueError):
        SingleFeatureRankers(scaling="z")
    with pytest.raises(ValueError):
        SingleFeatureRankers(directions="neg")
    w = SingleFeatureRankers()
    with pytest.raises(RuntimeError):
        w.transform(np.zeros((2, 2)))
    w.fit(np.zeros((2, 2)))
    with pytest.raises(ValueError):
        w.transform(np.zeros((2, 3)))


def test_standard_scaling_values_missing_and_order():
    X = np.array([[1.0, 5.0], [3.0, np.nan], [2.0, 5.0], [np.nan, 7.0]])
    w = SingleFeatureRankers(scaling="standard", directions="both").fit(X)
    H = w.transform(X)
    x0 = np.array([1.0, 3.0, 2.0])
    z0 = (x0 - x0.mean()) / x0.std()
    np.testing.assert_allclose(H[[0, 1, 2], 0], z0)
    assert H[3, 0] == pytest.approx(z0.min())  # missing -> the lowest training value
    np.testing.assert_allclose(H[[0, 1, 2], 2], -z0)
    assert H[3, 2] == pytest.approx(-z0.max())
    raw = SingleFeatureRankers(scaling="none").fit(X).transform(X)
    for c in range(2):  # same ranking as the raw values
        np.testing.assert_array_equal(np.argsort(H[:, c], kind="stable"),
                                      np.argsort(raw[:, c], kind="stable"))
