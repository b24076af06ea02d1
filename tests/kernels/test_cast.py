"""`lrank._kernels.cast.cast_float32` (the float32 cast and its checks in one pass) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from lrank._kernels.cast import cast_float32
from tests.reference.data import cast_float32 as reference


def _matrix(rng, n, F):
    """Ordinary values with NaN, infinities, overflows, values that vanish or round, signed zeros, ties."""
    X = rng.normal(size=(n, F)) * 10.0 ** rng.integers(-3, 4, size=(n, F))
    specials = np.array([np.nan, np.inf, -np.inf, 1e39, -4e38, 1e-300, -1e-46, 0.0, -0.0, 0.5, 1.6e9 + 0.25,
                         3.4028235e38, 3.4028236e38, 1.4e-45, 7e-46])
    mask = rng.random((n, F)) < 0.3
    X[mask] = rng.choice(specials, size=int(mask.sum()))
    if F > 1:
        X[:, -1] = X[0, -1]  # one column of equal values
    return X


@pytest.mark.kernel
@pytest.mark.parametrize("n", [1, 2, 3, 17, 300])
@pytest.mark.parametrize("step", [1, 3])
def test_cast_and_checks_match_numpy(n, step):
    rng = np.random.default_rng(100 * n + step)
    for F in (1, 4, 9):
        X = _matrix(rng, n, F)
        X32, changed, stats = cast_float32(X, step)
        want32, want_changed, want_stats = reference(X, step)
        assert X32.dtype == np.float32 and X32.flags.c_contiguous
        assert np.array_equal(X32.view(np.uint32), want32.view(np.uint32)), (n, F)
        assert np.array_equal(changed, want_changed), (n, F, changed, want_changed)
        assert np.array_equal(stats, want_stats), (n, F, stats, want_stats)


@pytest.mark.kernel
def test_exact_and_missing_values_change_nothing():
    X = np.array([[np.nan, 0.5, -0.0, np.inf], [np.nan, 2.0, 0.0, -np.inf]])
    X32, changed, stats = cast_float32(X)
    assert not changed.any() and stats.tolist() == [2, 0, -1, 0, -1]
    assert np.array_equal(X32, X.astype(np.float32), equal_nan=True)


def test_cast_refuses_other_input():
    with pytest.raises(ValueError, match="2-d float64"):
        cast_float32(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="2-d float64"):
        cast_float32(np.zeros(3))
    with pytest.raises(ValueError, match="step must be at least 1"):
        cast_float32(np.zeros((2, 2)), 0)
