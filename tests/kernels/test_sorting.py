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


@pytest.mark.kernel
@pytest.mark.parametrize("n", [0, 1, 2, 3, 24, 25, 64, 100, 257, 1000])
def test_bucketed_sort_is_numpys_mergesort(n):
    """`_sort_bucketed` (LambdaMART's per-query sort) gives ``np.argsort(key, kind="mergesort")``'s
    permutation on the prefix ``n``: spread keys (the bucket path), rounded keys and heavy ties, all keys
    equal, signed zeros, integer keys, runs of equal keys; and on the radix fallback: infinities, one far
    outlier (the rest crowd one bucket), keys over 600 decades, tied signed zeros and subnormals among
    infinities, keys differing in three digits only. The scratch may hold anything."""
    from lrank._kernels.sorting import _DIGIT, _MOVES_PER_KEY, _sort_bucketed

    rng = np.random.default_rng(1000 + n)
    for trial in range(13):
        key = np.round(rng.normal(size=n + 3), (0, 1, 2, 8)[trial % 4]) * (1e-310 if trial == 3 else 1.0)
        if n and trial == 1:
            key[rng.integers(0, n, max(1, n // 6))] = -0.0
        if n and trial == 2:
            key[rng.integers(0, n, 1)] = rng.choice([np.inf, -np.inf])
        if trial == 4:
            key[:] = 2.0
        if trial == 5:
            key = rng.integers(0, 5, n + 3).astype(np.float64)
        if n and trial == 6:
            key[0] = 1e12  # the rest crowd one bucket
        if trial == 7:
            key = rng.normal(size=n + 3)  # continuous: the bucket path
        if trial == 8:
            key = np.repeat(rng.normal(size=(n + 3) // 5 + 1), 5)[: n + 3]  # runs of 5 equal keys
        if trial == 9:
            key = rng.normal(size=n + 3) * 10.0 ** rng.integers(-300, 300, size=n + 3)
        if trial == 10:
            key = rng.choice([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324], size=n + 3)
        if trial == 11:
            key = np.concatenate([np.round(rng.normal(size=n + 2), 1), [-1e300]])[rng.permutation(n + 3)]
        if trial == 12:  # the radix on three digits (an odd number of passes: the result is copied back)
            key = 1.0 + rng.integers(0, 1 << 16, n + 3) * 2.0**-52
            key[0] = 1.0 + 2.0**-28
        for sign in (1.0, -1.0):
            k = sign * key
            want = np.argsort(k[:n], kind="mergesort")
            kk, idx = k.copy(), np.arange(n + 3, dtype=np.int64)
            junk = rng.integers(-9, 9, size=(4, max(n + 4, 1 << _DIGIT)))
            _sort_bucketed(kk, idx, rng.normal(size=n + 3), *junk.copy(), n)
            np.testing.assert_array_equal(idx[:n], want, err_msg=f"trial {trial} sign {sign}")
            assert np.array_equal(idx[n:], np.arange(n, n + 3))  # beyond the prefix untouched
    assert _MOVES_PER_KEY >= 1
