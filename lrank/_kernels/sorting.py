"""The stable sort of lrank's kernels: `_sort_stable` (ascending keys carrying row indices; equal keys keep
their incoming order), shared by LambdaMART's lambdas (`lrank._kernels.lambdas`), NDCGBoost's step (c)
(`lrank._kernels.ndcgboost`) and the metrics' merge sorts (`lrank._kernels.metrics`): one sort to compile
in a process (issue 15.5), one to test (``tests/test_sorting.py``, against ``np.argsort(kind="mergesort")``).
A descending order sorts the negated keys. Nothing here imports from the layers above.
"""

from __future__ import annotations

from ._jit import njit

#: `_sort_stable` counts positions (O(n^2) vectorised comparisons) up to this many keys, merges beyond
_COUNT_MAX = 64
#: `_sort_stable`'s merges start from runs of this many keys, each sorted by counting
_RUN = 32


@njit(inline="always")
def _count_sort(key, idx, key2, idx2, n):
    """`_sort_stable` by counting: key ``t`` goes to position ``#{u < t: key_u <= key_t} + #{u > t: key_u <
    key_t}``, its place in a stable ascending sort (no NaN keys: ``<`` is then a strict weak order, ``-0``
    tying with ``+0``), so the permutation is the merge sort's exactly. Each count is an integer sum of
    comparisons over a contiguous run: it vectorises, and an integer sum is exact in any order."""
    for t in range(n):
        kt = key[t]
        c = 0
        for u in range(t):
            c += 1 if key[u] <= kt else 0
        for u in range(t + 1, n):
            c += 1 if key[u] < kt else 0
        key2[c] = kt
        idx2[c] = idx[t]
    for t in range(n):
        key[t] = key2[t]
        idx[t] = idx2[t]


@njit(cache=True)
def _sort_stable(key, idx, key2, idx2, n):
    """Sort ``key[:n]`` ascending (no NaN) and ``idx[:n]`` with it, equal keys in their incoming order: a
    stable bottom-up merge sort of runs of ``_RUN`` keys (each sorted by `_count_sort`: 30% faster than
    insertion-sorted runs of 16 at 116 keys, measured) on keys carried beside the indices (no indirect
    loads; merges without a branch per element). After `lrank._kernels.lambdas._score_keys` the
    permutation of ``np.argsort(-scores, kind="mergesort")``; ``key2``, ``idx2`` are scratch (``key[:n]``
    is not necessarily left sorted: ``idx`` is the result). Up to ``_COUNT_MAX`` keys the positions are
    counted instead (`_count_sort` over one run of all ``n`` keys: the same permutation, fewer branches;
    one inlined `_count_sort`, not two, compiles ~0.14 s faster)."""
    if n < 2:
        return
    run = n if n <= _COUNT_MAX else _RUN
    for start in range(0, n, run):  # each run sorted by counting (stable); no merge when run == n
        stop = start + run if start + run < n else n  # (no min(): each builtin overload is a compile)
        _count_sort(key[start:stop], idx[start:stop], key2[start:stop], idx2[start:stop], stop - start)
    sk, si, dk, di = key, idx, key2, idx2
    width = run
    swapped = False
    while width < n:
        for start in range(0, n, 2 * width):
            mid = start + width if start + width < n else n
            end = start + 2 * width if start + 2 * width < n else n
            i, j, o = start, mid, start
            while i < mid and j < end:
                a = sk[i]
                b = sk[j]
                right = b < a  # b strictly first; selects, not a branch (the outcome is unpredictable)
                dk[o] = b if right else a
                di[o] = si[j] if right else si[i]
                j += 1 if right else 0
                i += 0 if right else 1
                o += 1
            while i < mid:
                dk[o] = sk[i]
                di[o] = si[i]
                i += 1
                o += 1
            while j < end:
                dk[o] = sk[j]
                di[o] = si[j]
                j += 1
                o += 1
        sk, si, dk, di = dk, di, sk, si
        swapped = not swapped
        width *= 2
    if swapped:
        for t in range(n):
            idx[t] = idx2[t]
