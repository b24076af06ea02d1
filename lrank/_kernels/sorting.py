"""The stable sorts of lrank's kernels (ascending keys carrying row indices; equal keys keep their incoming
order), both tested against ``np.argsort(kind="mergesort")`` in ``tests/kernels/test_sorting.py``:

* `_sort_bucketed`, O(n) (buckets, a radix sort where they crowd), the one sort the kernels run:
  LambdaMART's lambdas (`lrank._kernels.lambdas`; ~30% less time per lambdas call at 190k documents than
  the merge sort), the metrics' ranking and ideal orders (`lrank._kernels.metrics`) and NDCGBoost's step
  (c) (`lrank._kernels.ndcgboost`), so a fit or an evaluation compiles one sort;
* `_sort_stable`, a merge sort with the same permutation, kept as the reference order that the metrics'
  tests compare with (`lrank._kernels.metrics._rank_order_merge`).

A descending order sorts the negated keys. Nothing here imports from the layers above.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from ._simd import _float_bits

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


#: `_sort_bucketed` hands the keys to its radix fallback once its insertion pass has moved keys this many
#: times per key (distinct keys crowding a bucket, e.g. beside an outlier; equal keys never move, so heavy
#: ties stay on the bucket path)
_MOVES_PER_KEY = 4
#: `_sort_bucketed`'s radix fallback sorts by digits of this many bits (``cnt`` holds ``2**_DIGIT`` counts)
_DIGIT = 8
#: the int64 with only the sign bit set: the bits of ``-0.0``, and the flip that turns signed order into
#: unsigned order
_SIGN = np.int64(-9223372036854775807 - 1)


@njit(cache=True)
def _sort_bucketed(key, idx, key2, idx2, code, code2, cnt, n):
    """`_sort_stable`'s permutation (``idx[:n]`` carried by ``key[:n]`` ascending, equal keys in their
    incoming order; no NaN keys) in O(n) time, with no comparison sort to compile (LambdaMART's per-query
    sort, `lrank._kernels.lambdas._prepare_query`; the metrics' ranking sort,
    `lrank._kernels.metrics._rank_query`).

    A bucket sort first (`_bucket_pass`: expected O(n) on spread keys, linear on heavy ties); where it
    gives up (an infinite key, or distinct keys crowding a bucket), a stable LSD radix sort
    (`_radix_pass`) of the state it left, in which equal keys are still in their incoming order, so the
    permutation is the unique stable one either way: the same bits downstream as `_sort_stable`.
    ``key2`` (float64, at least ``n``), ``idx2``, ``code``, ``code2`` (int64, at least ``n``) and ``cnt``
    (int64, at least ``max(n + 1, 2**_DIGIT)``; ``2 n + 1`` gives the bucket sort twice as many buckets
    as keys, fewer moves) are scratch; ``idx`` is the result (``key[:n]`` is not left sorted)."""
    if n < 2:
        return
    if not _bucket_pass(key, idx, key2, idx2, code, cnt, n):
        _radix_pass(key, idx, idx2, code, code2, cnt, n)


@njit(inline="always")
def _bucket_pass(key, idx, key2, idx2, bucket, cnt, n):
    """`_sort_bucketed`'s bucket sort: each key falls into one of ``nb + 1`` buckets (``nb = 2 n``, or
    fewer where ``cnt`` is narrower: ``cnt.size - 1``, at least ``n``) by linear interpolation between the
    smallest and the largest key (a monotone map: equal keys share a bucket and a larger key never lands
    in an earlier one), the keys are scattered into ``key2``, ``idx2`` by bucket in their incoming order
    (stable), and an insertion pass brings them back into ``key``, ``idx``, each bucket in order (stably:
    a key moves only past strictly larger ones). False where it gives up (an infinite key range, or the
    insertion pass over its budget of ``_MOVES_PER_KEY`` moves per key), ``key`` and ``idx`` then holding
    the keys in an order in which equal keys are still in their incoming order."""
    lo = key[0]
    hi = lo
    for i in range(1, n):
        v = key[i]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    width = hi - lo
    if width == 0.0:  # all keys equal: the incoming order is the sorted one
        return True
    nb = 2 * n if 2 * n < cnt.size else cnt.size - 1
    scale = nb / width
    if not (width < np.inf and scale < np.inf):
        return False
    for b in range(nb + 1):
        cnt[b] = 0
    for i in range(n):  # a loop of its own: it vectorises
        bucket[i] = np.int64((key[i] - lo) * scale)  # 0..nb: (hi - lo) * scale rounds to at most nb
    for i in range(n):
        cnt[bucket[i]] += 1
    run = 0
    for b in range(nb + 1):  # cnt[b]: the first position of bucket b
        c = cnt[b]
        cnt[b] = run
        run += c
    for i in range(n):  # scatter in incoming order: stable
        b = bucket[i]
        p = cnt[b]
        cnt[b] = p + 1
        key2[p] = key[i]
        idx2[p] = idx[i]
    budget = _MOVES_PER_KEY * n
    last = key2[0]  # the largest key placed so far (in a register: no reload of a store just made)
    key[0] = last
    idx[0] = idx2[0]
    for i in range(1, n):  # back into key, idx, each bucket put in order on the way (insertion: a key
        v = key2[i]  # moves past strictly larger keys only, so the order stays stable)
        r = idx2[i]
        if not last > v:  # in place (most keys)
            key[i] = v
            idx[i] = r
            last = v
            continue
        j = i
        while j > 0 and key[j - 1] > v:
            key[j] = key[j - 1]
            idx[j] = idx[j - 1]
            j -= 1
        key[j] = v
        idx[j] = r
        budget -= i - j
        if budget < 0:  # distinct keys crowd a bucket: key[:i + 1] then key2[i + 1:] keeps equal keys in
            for t in range(i + 1, n):  # their incoming order, so a stable sort of it is the stable order
                key[t] = key2[t]
                idx[t] = idx2[t]
            return False
    return True


@njit(inline="always")
def _radix_pass(key, idx, idx2, code, code2, cnt, n):
    """`_sort_bucketed`'s fallback: a stable LSD radix sort of ``key[:n]`` carrying ``idx[:n]``, by
    ``_DIGIT``-bit digits of an integer code whose unsigned order is the keys' float order (IEEE-754 bits,
    ``-0.0`` made ``+0.0`` so that the two zeros tie as ``<`` ties them, negative keys' magnitude bits
    flipped, then the sign bit flipped); a digit that all keys share is skipped. Each pass is a counting
    sort, stable, so equal keys end in their incoming order. The codes live in ``code`` and ``code2``."""
    for i in range(n):
        x = _float_bits(key[i])
        x = 0 if x == _SIGN else x  # -0.0 ties with +0.0
        x = x ^ 0x7FFFFFFFFFFFFFFF if x < 0 else x  # signed order of the codes is the float order
        code[i] = x ^ _SIGN  # unsigned order of the bits: digits of (x >> s) & mask, low to high
    mask = (1 << _DIGIT) - 1
    src_k, src_i, dst_k, dst_i = code, idx, code2, idx2
    in_scratch = False
    for s in range(0, 64, _DIGIT):
        for d in range(mask + 1):
            cnt[d] = 0
        for i in range(n):
            cnt[(src_k[i] >> s) & mask] += 1
        if cnt[(src_k[0] >> s) & mask] == n:  # every key has this digit: the pass would not move any
            continue
        run = 0
        for d in range(mask + 1):  # cnt[d]: the first position of digit d
            c = cnt[d]
            cnt[d] = run
            run += c
        for i in range(n):  # in order of the previous pass: stable
            d = (src_k[i] >> s) & mask
            p = cnt[d]
            cnt[d] = p + 1
            dst_k[p] = src_k[i]
            dst_i[p] = src_i[i]
        src_k, dst_k = dst_k, src_k
        src_i, dst_i = dst_i, src_i
        in_scratch = not in_scratch
    if in_scratch:
        for i in range(n):
            idx[i] = idx2[i]
