"""`lrank._kernels.sorting._sort_stable`, the one stable sort of the kernels, against NumPy's merge sort."""

from __future__ import annotations

import numpy as np
import pytest

from lrank._kernels.sorting import _COUNT_MAX, _RUN, _sort_stable


@pytest.mark.kernel
@pytest.mark.parametrize("n", [0, 1, 2, 3, _RUN - 1, _RUN, _RUN + 1, _COUNT_MAX, _COUNT_MAX + 1, 100, 257])
def test_stable_sort_is_numpys_mergesort(n):
    """The permutation of ``np.argsort(key, kind="mergesort")`` on the prefix ``n`` of the buffers only:
    ties in their incoming order (rounded keys, all keys equal), signed zeros equal, infinities,
    subnormals, integer-valued keys (labels); negated keys give the decreasing stable order the metrics
    use."""
    rng = np.random.default_rng(n)
    for trial in range(6):
        key = np.round(rng.normal(size=n + 3), trial % 3) * (1e-310 if trial == 3 else 1.0)
        if n:
            key[rng.integers(0, n, max(1, n // 6))] = -0.0
            key[rng.integers(0, n, 1)] = rng.choice([np.inf, -np.inf])
        if trial == 4:
            key[:] = 2.0
        if trial == 5:
            key = rng.integers(0, 5, n + 3).astype(np.float64)
        for sign in (1.0, -1.0):
            k = sign * key
            want = np.argsort(k[:n], kind="mergesort")
            idx = np.arange(n + 3, dtype=np.int64) + 10
            kk = k.copy()
            _sort_stable(kk, idx, np.empty(n + 3), np.empty(n + 3, dtype=np.int64), n)
            assert (idx[:n] - 10).tolist() == want.tolist()
            assert idx[n:].tolist() == [n + 10, n + 11, n + 12]  # past the prefix: untouched
            assert np.array_equal(kk[n:], k[n:])
