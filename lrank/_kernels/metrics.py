"""Per-query ranking metrics as numba kernels.

Layout: every array is flat over documents and grouped into queries by CSR offsets ``qptr`` (query
``q`` owns rows ``qptr[q]:qptr[q+1]``). One call of :func:`rank_order` sorts every query once
(score-descending; `lrank._kernels.sorting._sort_bucketed`, stable, via :func:`_rank_query`); the metric
kernels then walk the *sorted* label array (``y[order]``) and, for the normalised metrics, the *ideal*
label array (each query's labels sorted in decreasing order, see :func:`ideal_labels`). When only such
metrics are asked for, :func:`evaluate_sorted` (and its parallel twin) does all of this one query at a
time in scratch memory, with the same per-query code and hence the same bits. Hot loops elsewhere in
lrank (AdaRank's feature x query metric matrix) call :func:`query_metric` directly; ideal DCGs
(``lrank.metrics.ideal_dcg``) are :func:`_fixed_gains`' cumulative sums. :func:`_evaluate_fixed`
(``lrank.metrics.Evaluator``; MeanNDCG alone: :func:`_evaluate_fixed_mean`) gives the same values for fixed
labels and new scores, the label-only work done once and only the nonzero-label documents ranked
(:func:`_place_fixed`; the queries that need a sort by :func:`_place_merged`).

Code outside ``lrank._kernels`` calls the kernels through the validating functions at the end of this
module (:func:`rank_order`, :func:`ideal_labels`, :func:`query_metric`, :func:`evaluate_sorted`,
:func:`evaluate_fixed`, ...), which check dtypes, dimensions and lengths in O(1) and then call the kernel.

Integer codes (module constants, read by the plain-Python layer :mod:`lrank.metrics`):

* metrics: ``NDCG``, ``MEAN_NDCG``, ``MAP``, ``ERR``, ``PREC``, ``MRR``, ``WTA``, ``DCG``;
* ties: ``TIES_STABLE`` (document order), ``TIES_PESSIMISTIC`` (lowest label first among tied
  scores), ``TIES_OPTIMISTIC`` (highest label first);
* gain: ``GAIN_EXP`` (2^rel - 1), ``GAIN_LINEAR`` (rel);
* discount: ``DISC_LOG2`` (1/log2(i+1)), ``DISC_JK`` (Jarvelin-Kekalainen: 1 for i = 1, 1/log2 i after).

A query value of ``empty`` is written where the metric is undefined for the query (no relevant
document); pass NaN to mark the query as skipped.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ._jit import njit
from .sorting import _sort_bucketed, _sort_stable

NDCG = 0
MEAN_NDCG = 1
MAP = 2
ERR = 3
PREC = 4
MRR = 5
WTA = 6
DCG = 7

TIES_STABLE = 0
TIES_PESSIMISTIC = 1
TIES_OPTIMISTIC = 2

GAIN_EXP = 0
GAIN_LINEAR = 1

DISC_LOG2 = 0
DISC_JK = 1


# ---------------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _labels_scores_ok(y, scores, yf, bound):
    """Copy ``y`` into float64 ``yf``; True iff every label is an integer in ``0 <= label < bound`` and no
    score is NaN (one pass each; the caller locates and reports a failure)."""
    ok = True
    for i in range(y.size):
        v = float(y[i])
        yf[i] = v
        ok &= (v >= 0.0) & (v < bound) & (v == math.floor(v))
    for i in range(scores.size):
        ok &= scores[i] == scores[i]
    return ok


@njit(cache=True)
def _int_labels_scores_ok(y, scores, bound):
    """``(ok, top)``: ``ok`` True iff every (integer) label is in ``0 <= label < bound`` and no score is NaN,
    ``top`` the largest label (-1 for none); one pass each, nothing copied (`lrank.metrics.evaluate`'s
    path for int32 labels, which the sorted metrics' kernel reads as they are)."""
    ok = True
    top = -1
    for i in range(y.size):
        v = y[i]
        ok &= (v >= 0) & (v < bound)
        top = v if v > top else top
    for i in range(scores.size):
        ok &= scores[i] == scores[i]
    return ok, top


# ---------------------------------------------------------------------------------------------------
# sorting: stable sorts of negated keys (decreasing order, equal keys in their incoming order; no NaN
# reaches them): `lrank._kernels.sorting._sort_bucketed` (:func:`_rank_query`), and the merge sort
# `_sort_stable` for the reference order only (:func:`_rank_order_merge`, which the tests compare with)
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _order_query(scores, labels, a, b, ties, key, idx, tkey, tidx, order):
    """Sort rows ``a:b`` of one query into ``order[a:b]`` (see :func:`rank_order`)."""
    m = b - a
    if ties == 0:
        for i in range(m):
            key[i] = -scores[a + i]
            idx[i] = a + i
    else:
        # first by label (stable), lowest first for pessimistic, highest first for optimistic ...
        sign = 1.0 if ties == 1 else -1.0
        for i in range(m):
            key[i] = sign * labels[a + i]
            idx[i] = a + i
        _sort_stable(key, idx, tkey, tidx, m)
        # ... then by decreasing score, stably, so the label order survives among equal scores
        for i in range(m):
            key[i] = -scores[idx[i]]
    _sort_stable(key, idx, tkey, tidx, m)
    for i in range(m):
        order[a + i] = idx[i]


@njit(cache=True)
def _rank_order_merge(scores, labels, qptr, ties):
    """:func:`rank_order` by a merge sort of every whole query: the reference order for the tests."""
    n = scores.size
    nq = qptr.size - 1
    order = np.arange(n)
    mmax = 0
    for q in range(nq):
        mq = qptr[q + 1] - qptr[q]
        mmax = mq if mq > mmax else mmax  # (not max(): an overload to compile)
    key = np.empty(mmax, dtype=np.float64)
    idx = np.empty(mmax, dtype=np.int64)
    tkey = np.empty(mmax, dtype=np.float64)
    tidx = np.empty(mmax, dtype=np.int64)
    for q in range(nq):
        if qptr[q + 1] - qptr[q] >= 2:
            _order_query(scores, labels, qptr[q], qptr[q + 1], ties, key, idx, tkey, tidx, order)
    return order


#: `_place_fixed` counts a placed document's rank within its bucket (vectorised comparisons) while the
#: query's placed documents' buckets hold at most this many documents per document of the query in all,
#: else the query is sorted (`_place_merged`; the same ranks either way; measured on sums of a few stumps,
#: whose buckets are large: counting ~2x faster at 1-3 stumps on the MSLR sample)
_PLACE_BUDGET = 32


@njit(inline="always")
def _rank_query(scores, labels, a, b, ties, key, idx, key2, idx2, code, code2, cnt):
    """Rows ``a:b`` of one query in ranking order, left in ``idx[:b - a]`` (see :func:`rank_order`):
    decreasing score, equal scores by ``ties`` (0 document order; 1 lowest label first, 2 highest first,
    equal labels then in document order). `lrank._kernels.sorting._sort_bucketed` (stable, O(m)) on the
    negated scores, after one stable pass on the tie key (the label) when ``ties != 0``: the unique
    stable order, that of the merge sort (:func:`_rank_order_merge`, tested). ``key``, ``key2`` (float64),
    ``idx2``, ``code``, ``code2`` (int64) hold at least ``b - a`` entries and ``cnt`` (int64) at least
    ``max(b - a + 1, 256)``; no score is NaN."""
    m = b - a
    if ties != 0:
        sign = 1.0 if ties == 1 else -1.0  # increasing keys: lowest label first for pessimistic
        for i in range(m):
            key[i] = sign * labels[a + i]
            idx[i] = a + i
        _sort_bucketed(key, idx, key2, idx2, code, code2, cnt, m)
        for i in range(m):
            key[i] = -scores[idx[i]]
    else:
        for i in range(m):
            key[i] = -scores[a + i]
            idx[i] = a + i
    _sort_bucketed(key, idx, key2, idx2, code, code2, cnt, m)


@njit(inline="always")
def _sort_scratch(mmax):
    """:func:`_rank_query`'s scratch for queries of up to ``mmax`` documents: ``key``, ``idx``, ``key2``,
    ``idx2``, ``code``, ``code2``, ``cnt``."""
    wide = 2 * mmax + 1 if 2 * mmax + 1 > 256 else 256  # 2 m + 1: two buckets per key
    ints = np.int64
    return (np.empty(mmax, dtype=np.float64), np.empty(mmax, dtype=ints), np.empty(mmax, dtype=np.float64),
            np.empty(mmax, dtype=ints), np.empty(mmax, dtype=ints), np.empty(mmax, dtype=ints),
            np.empty(wide, dtype=ints))


@njit(cache=True)
def _rank_order(scores, labels, qptr, ties):
    """Global row indices of every query's documents in decreasing score order.

    ``ties`` orders documents with equal scores: 0 by document order (stable), 1 lowest label first
    (pessimistic), 2 highest label first (optimistic); equal labels then keep document order.
    """
    n = scores.size
    nq = qptr.size - 1
    order = np.arange(n)
    mmax = 0
    for q in range(nq):
        mq = qptr[q + 1] - qptr[q]
        mmax = mq if mq > mmax else mmax  # (not max(): an overload to compile)
    key, idx, key2, idx2, code, code2, cnt = _sort_scratch(mmax)
    for q in range(nq):
        a, b = qptr[q], qptr[q + 1]
        if b - a >= 2:
            _rank_query(scores, labels, a, b, ties, key, idx, key2, idx2, code, code2, cnt)
            for i in range(b - a):
                order[a + i] = idx[i]
    return order


@njit(cache=True, parallel=True)
def _rank_order_parallel(scores, labels, qptr, ties):
    """Parallel twin of :func:`rank_order` (blocks of queries over threads, scratch per block; identical
    output)."""
    n = scores.size
    nq = qptr.size - 1
    order = np.arange(n)
    mmax = 0
    for q in range(nq):
        mq = qptr[q + 1] - qptr[q]
        mmax = mq if mq > mmax else mmax  # (not max(): an overload to compile)
    block = 64
    nblocks = (nq + block - 1) // block
    for bl in prange(nblocks):
        key, idx, key2, idx2, code, code2, cnt = _sort_scratch(mmax)
        q_end = (bl + 1) * block
        for q in range(bl * block, q_end if q_end < nq else nq):
            a, b = qptr[q], qptr[q + 1]
            if b - a >= 2:
                _rank_query(scores, labels, a, b, ties, key, idx, key2, idx2, code, code2, cnt)
                for i in range(b - a):
                    order[a + i] = idx[i]
    return order


@njit(cache=True)
def _ideal_query(labels, a, b, counts, out, o, limit):
    """The ``limit`` largest of labels ``a:b`` in decreasing order into ``out[o:o + limit]``.

    A counting sort if the labels span at most 256 values, else a stable sort (`_sort_bucketed`; the
    same values as ``np.sort`` reversed, labels being finite); ``limit >= b - a`` gives them all.
    """
    if b == a:
        return
    lo = labels[a]
    hi = labels[a]
    for i in range(a, b):  # min() and max() without their implementations to compile (issue 15.5)
        v = labels[i]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    m = b - a
    if hi - lo < 257.0:  # int(hi - lo) <= 256, tested on the float: a wider range is never cast
        span = np.int64(hi - lo)  # truncation, as int() (a cast, no overload)
        for c in range(span + 1):
            counts[c] = 0
        for i in range(a, b):
            counts[np.int64(labels[i] - lo)] += 1
        k = o
        end = o + (m if m < limit else limit)
        for c in range(span, -1, -1):
            for _ in range(counts[c]):
                if k == end:
                    return
                out[k] = lo + c
                k += 1
    else:  # the scores' sort (compiled for them), not np.sort: one sort less to compile
        key, idx, key2, idx2, code, code2, cnt = _sort_scratch(m)
        for i in range(m):
            key[i] = -float(labels[a + i])
            idx[i] = a + i
        _sort_bucketed(key, idx, key2, idx2, code, code2, cnt, m)
        for i in range(m if m < limit else limit):
            out[o + i] = labels[idx[i]]


@njit(cache=True)
def _ideal_labels(labels, qptr):
    """Each query's labels sorted in decreasing order (the ideal ranking's labels), float64.

    A counting sort when the query's labels span at most 256 values, else a comparison sort.
    """
    out = np.empty(labels.size, dtype=np.float64)
    counts = np.zeros(257, dtype=np.int64)
    for q in range(qptr.size - 1):
        _ideal_query(labels, qptr[q], qptr[q + 1], counts, out, qptr[q], qptr[q + 1] - qptr[q])
    return out


# ---------------------------------------------------------------------------------------------------
# gains and discounts
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _gain_value(rel, gain):
    """Gain of a label: 2^rel - 1 (gain 0) or rel (gain 1).

    For an integer label in 0..62, 2^rel is built by a shift (exact, so equal to ``2.0**rel``).
    """
    if gain == 0:
        if rel >= 0.0 and rel <= 62.0 and rel == math.floor(rel):
            return float(np.int64(1) << np.int64(rel)) - 1.0
        return 2.0**rel - 1.0
    return rel


@njit(inline="always")
def _discount_value(pos, disc):
    """Discount of 1-based position ``pos``: 1/log2(pos+1) (disc 0) or JK's 1, 1/log2(pos) (disc 1)."""
    if disc == 0:
        return 1.0 / math.log2(pos + 1.0)
    if pos <= 1:
        return 1.0
    return 1.0 / math.log2(float(pos))


@njit(inline="always")
def _discounts(disc, out):
    """``out[i] = _discount_value(i + 1, disc)`` for positions ``i = 0 .. out.size - 1`` (a table, computed
    once per call; float64 ``out`` from the caller, returned: no NumPy constructor compiled here)."""
    for i in range(out.size):
        out[i] = _discount_value(i + 1, disc)
    return out


@njit(cache=True)
def _dcg_tab(lab, a, kk, gain, dtab):
    """DCG of the ``kk`` labels from ``lab[a]`` on, summed in rank order, with the discounts of
    :func:`_discounts`."""
    s = 0.0
    for i in range(kk):
        s += _gain_value(lab[a + i], gain) * dtab[i]
    return s


# ---------------------------------------------------------------------------------------------------
# per-query metrics over sorted labels
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _metric_query(y_sorted, ideal_sorted, a, m, code, k, gain, dtab, empty, rel_threshold, max_grade):
    """One metric of one query whose ``m`` labels start at ``a`` (see :func:`query_metric`).

    ``dtab`` holds the discounts of positions 1..m (:func:`_discounts`).
    """
    kk = m if (k <= 0 or k > m) else k
    top = ideal_sorted[a] if m > 0 else 0.0  # the query's maximum label
    if code == DCG:
        return _dcg_tab(y_sorted, a, kk, gain, dtab)
    if code == NDCG or code == MEAN_NDCG or code == ERR:
        if m == 0 or top <= 0.0:  # ideal DCG is 0: no relevant document
            return empty
    else:
        if m == 0 or top < rel_threshold:
            return empty
    if code == NDCG:
        return _dcg_tab(y_sorted, a, kk, gain, dtab) / _dcg_tab(ideal_sorted, a, kk, gain, dtab)
    elif code == MEAN_NDCG:
        # BoostingTree Sec. 4.1: (1/m) sum_{k=1}^{m} NDCG@k
        d = 0.0
        di = 0.0
        acc = 0.0
        for i in range(m):
            w = dtab[i]
            d += _gain_value(y_sorted[a + i], gain) * w
            di += _gain_value(ideal_sorted[a + i], gain) * w
            acc += d / di
        return acc / m
    elif code == MAP:
        hits = 0
        s = 0.0
        for i in range(m):  # branch-free: precision at every relevant position
            rel = y_sorted[a + i] >= rel_threshold
            hits += rel
            s += rel * (hits / (i + 1.0))
        return s / hits
    elif code == ERR:
        # ERR@k (Chapelle et al. 2009; gdeval / RankLib): R = (2^g - 1) / 2^max_grade
        scale = 2.0**max_grade
        s = 0.0
        decay = 1.0
        for i in range(kk):
            r = _gain_value(y_sorted[a + i], 0) / scale  # (2^g - 1) / 2^max_grade
            s += r * decay / (i + 1.0)
            decay *= 1.0 - r
        return s
    elif code == PREC:
        hits = 0
        for i in range(kk):
            if y_sorted[a + i] >= rel_threshold:
                hits += 1
        return hits / (k if k > 0 else m)
    elif code == MRR:
        v = 0.0
        for i in range(m):
            if y_sorted[a + i] >= rel_threshold:
                v = 1.0 / (i + 1.0)
                break
        return v
    elif code == WTA:
        return 1.0 if y_sorted[a] == top else 0.0
    else:
        return np.nan


@njit(cache=True)
def _query_metric(y_sorted, ideal_sorted, qptr, code, k, gain, disc, empty, rel_threshold, max_grade):
    """One metric for every query, from labels in ranked order and in ideal order.

    Parameters
    ----------
    y_sorted, ideal_sorted : float64 arrays
        Labels in the ranking's order and in decreasing order, grouped by ``qptr``.
    code : int
        NDCG, MEAN_NDCG, MAP, ERR, PREC, MRR, WTA or DCG.
    k : int
        Cut-off (``<= 0``: all positions). ``PREC`` divides by ``k`` even when the query is shorter.
    empty : float
        Value of a query without a relevant document (NaN = skipped).
    """
    nq = qptr.size - 1
    mmax = 0
    for q in range(nq):
        mq = qptr[q + 1] - qptr[q]
        mmax = mq if mq > mmax else mmax  # (not max(): an overload to compile)
    dtab = _discounts(disc, np.empty(mmax, dtype=np.float64))
    out = np.empty(nq, dtype=np.float64)
    for q in range(nq):
        out[q] = _metric_query(y_sorted, ideal_sorted, qptr[q], qptr[q + 1] - qptr[q], code, k, gain, dtab,
                               empty, rel_threshold, max_grade)
    return out


# ---------------------------------------------------------------------------------------------------
# fused: sort, gather, ideal labels and several metrics in one pass per query
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _evaluate_query(scores, labels, a, b, ties, codes, ks, gain, dtab, empty, rel_threshold, max_grade,
                    label_bound, key, idx, key2, idx2, code, code2, cnt, ys, ideal, counts, out, q):
    """Every metric of ``codes`` for query ``q`` (rows ``a:b``) into ``out[:, q]``; scratch as for
    :func:`_rank_query` (``cnt`` at least ``max(m + 1, 256)``), ``ys`` and ``ideal`` of size m.

    ``label_bound > 0`` says every label is an integer ``0 <= y < label_bound`` (the caller checked): the
    labels are then counted while they are gathered in ranking order, and the ideal labels read from
    the counts (no pass of their own); ``0``: the gathered labels sorted (:func:`_rank_query`'s sort).
    """
    m = b - a
    if label_bound > 0:
        for c in range(label_bound):
            counts[c] = 0
    if m >= 2:
        _rank_query(scores, labels, a, b, ties, key, idx, key2, idx2, code, code2, cnt)
        if label_bound > 0:
            for i in range(m):
                v = labels[idx[i]]
                ys[i] = v
                counts[np.int64(v)] += 1
        else:
            for i in range(m):
                ys[i] = labels[idx[i]]
    elif m == 1:
        ys[0] = labels[a]
        if label_bound > 0:
            counts[np.int64(labels[a])] += 1
    need = 0  # ideal positions read: the top label, NDCG's top k, MeanNDCG's all
    for j in range(codes.size):  # (max() and min() as selects: no builtin overloads to compile)
        if codes[j] == MEAN_NDCG:
            need = m
        elif codes[j] == NDCG:
            kj = m if (ks[j] <= 0 or ks[j] > m) else ks[j]
            need = kj if kj > need else need
        else:
            need = 1 if 1 > need else need
    need = m if m < need else need  # the query holds m labels
    if label_bound > 0:
        k = 0
        c = label_bound - 1
        while k < need:  # from the highest label down
            left = need - k
            for _ in range(left if left < counts[c] else counts[c]):
                ideal[k] = c
                k += 1
            c -= 1
    else:  # the labels in decreasing order: the gathered ones sorted (the same values as any sort)
        for i in range(m):
            key[i] = -ys[i]
            idx[i] = i
        _sort_bucketed(key, idx, key2, idx2, code, code2, cnt, m)
        for i in range(need):
            ideal[i] = ys[idx[i]]
    for j in range(codes.size):
        if codes[j] == MAP and m > 0 and ideal[0] >= rel_threshold:
            out[j, q] = _average_precision(ys, m, rel_threshold, idx2)
        else:
            out[j, q] = _metric_query(ys, ideal, 0, m, codes[j], ks[j], gain, dtab, empty, rel_threshold,
                                      max_grade)


@njit(inline="always")
def _average_precision(ys, m, rel_threshold, pos):
    """:func:`_metric_query`'s MAP of a query with a relevant document, dividing at relevant positions only.

    The relevant positions are gathered first (branch-free) into the scratch ``pos``; the sum then
    adds ``hits / rank`` at each, in rank order: the same additions as the branch-free loop over all
    positions (which adds ``0.0`` elsewhere), hence the same bits, with one division per relevant
    document instead of one per document.
    """
    n = 0
    for i in range(m):
        pos[n] = i
        n += ys[i] >= rel_threshold
    s = 0.0
    for h in range(n):
        s += (h + 1) / (pos[h] + 1.0)
    return s / n


@njit(cache=True)
def _evaluate_sorted(scores, labels, qptr, ties, codes, ks, gain, disc, empty, rel_threshold, max_grade,
                     label_bound):
    """Metrics ``codes[j]`` at cut-offs ``ks[j]`` for every query: ``out[j, q]``, shape (n_codes, n_q).

    The same values as :func:`rank_order`, the gather ``labels[order]``, :func:`ideal_labels` and one
    :func:`query_metric` call per code, computed one query at a time in scratch memory. ``label_bound``:
    see :func:`_evaluate_query` (``0`` for any finite labels).
    """
    nq = qptr.size - 1
    mmax = 0
    for q in range(nq):
        mq = qptr[q + 1] - qptr[q]
        mmax = mq if mq > mmax else mmax  # (not max(): an overload to compile)
    out = np.empty((codes.size, nq), dtype=np.float64)
    dtab = _discounts(disc, np.empty(mmax, dtype=np.float64))
    key, idx, key2, idx2, code, code2, cnt = _sort_scratch(mmax)
    ys = np.empty(mmax, dtype=np.float64)
    ideal = np.empty(mmax, dtype=np.float64)
    counts = np.empty(label_bound if label_bound > 257 else 257, dtype=np.int64)
    for q in range(nq):
        _evaluate_query(scores, labels, qptr[q], qptr[q + 1], ties, codes, ks, gain, dtab, empty,
                        rel_threshold, max_grade, label_bound, key, idx, key2, idx2, code, code2, cnt, ys,
                        ideal, counts, out, q)
    return out


@njit(cache=True, parallel=True)
def _evaluate_sorted_parallel(scores, labels, qptr, ties, codes, ks, gain, disc, empty, rel_threshold,
                             max_grade, label_bound):
    """Parallel twin of :func:`evaluate_sorted` (blocks of queries over threads; identical output)."""
    nq = qptr.size - 1
    mmax = 0
    for q in range(nq):
        mq = qptr[q + 1] - qptr[q]
        mmax = mq if mq > mmax else mmax  # (not max(): an overload to compile)
    out = np.empty((codes.size, nq), dtype=np.float64)
    dtab = _discounts(disc, np.empty(mmax, dtype=np.float64))
    block = 64
    nblocks = (nq + block - 1) // block
    for bl in prange(nblocks):
        key, idx, key2, idx2, code, code2, cnt = _sort_scratch(mmax)
        ys = np.empty(mmax, dtype=np.float64)
        ideal = np.empty(mmax, dtype=np.float64)
        counts = np.empty(label_bound if label_bound > 257 else 257, dtype=np.int64)
        q_end = (bl + 1) * block
        for q in range(bl * block, q_end if q_end < nq else nq):
            _evaluate_query(scores, labels, qptr[q], qptr[q + 1], ties, codes, ks, gain, dtab, empty,
                            rel_threshold, max_grade, label_bound, key, idx, key2, idx2, code, code2, cnt,
                            ys, ideal, counts, out, q)
    return out


# ---------------------------------------------------------------------------------------------------
# fixed labels, new scores (lrank.metrics.Evaluator): the label-only work done once, then per call the
# ranks of the documents with a nonzero label only
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _fixed_gains(labels, ideal, qptr, gain, disc, icum, gdoc, dtab):
    """Fill ``icum``, ``gdoc`` and ``dtab`` of the label tables of :func:`_evaluate_fixed` (``lrank.metrics``'
    ``_fixed_tables``): ``icum[a + i]`` the ideal DCG of a query's top ``i + 1`` positions summed as
    :func:`_metric_query`'s MeanNDCG loop sums it, from ``ideal`` (:func:`_ideal_labels`' values);
    ``gdoc`` every document's gain; ``dtab`` the discounts (:func:`_discounts`) of the longest query. All
    float64, from the caller (one entry per document; ``dtab`` one per position of the longest query): no
    NumPy constructor compiled here (issue 15.5)."""
    nq = qptr.size - 1
    _discounts(disc, dtab)
    for q in range(nq):
        di = 0.0
        for i in range(qptr[q + 1] - qptr[q]):
            di += _gain_value(ideal[qptr[q] + i], gain) * dtab[i]
            icum[qptr[q] + i] = di
    for i in range(labels.size):
        gdoc[i] = _gain_value(labels[i], gain)


@njit(cache=True)
def _place_fixed(scores, labels, qptr, ties, tables, ys, gs, need_ys, key, idx, tk, tidx, cnt, pos, todo):
    """Every query's labels ``ys`` and gains ``gs`` in ranking order (:func:`_rank_query`'s order, rows
    ``qptr[q]:qptr[q + 1]`` per query); returns -1 if a score is NaN, else the number of queries marked
    ``todo[q] = 1`` for :func:`_place_merged` (0: every query placed).

    ``tables`` is ``(ideal, icum, gdoc, tkey, rel, rptr, dtab)`` (``lrank.metrics._fixed_tables``). Only
    the documents with a nonzero label (``rel``) are placed, the other
    positions hold 0 (in ``ys`` only if ``need_ys``, else its content is undefined). A query's scores
    are bucketed into ``2 m + 1`` buckets by linear interpolation (every document of an earlier bucket
    has a strictly higher score), and a placed document's rank is its bucket's start plus the documents
    of its bucket ranked before it: a higher score, or an equal one with a higher ``tkey``, or an equal
    ``tkey`` and an earlier row. With ``ties="stable"`` a bucket holding one score value only (a sum of a
    few stumps gives few values per query) is already in rank order, its rows being scattered in row
    order: its documents' ranks are their positions, not counted (MSLR sample, MeanNDCG of a sum of 3
    stumps: 0.30 -> 0.08 ms a call). Where the score range is not finite or zero, or the placed
    documents' buckets hold more than ``_PLACE_BUDGET`` documents per document of the query in all
    (counting would cost more than sorting), the query needs a sort: it is only marked in ``todo`` (its
    positions left unfinished) for :func:`_place_merged`, a kernel of its own, so that a first fit
    compiles the sort only when its scores need it (issue 15.5); a zero score range with stable ties
    needs no sort (row order) and is placed here. One call for all queries: a call per query costs more
    than the placing.
    """
    gdoc, tkey, rel, rptr = tables[2], tables[3], tables[4], tables[5]
    gs[:] = 0.0
    if need_ys:
        ys[:] = 0.0
    n_marked = 0
    for q in range(qptr.size - 1):
        todo[q] = 0
        a, b = qptr[q], qptr[q + 1]
        m = b - a
        lo = scores[a] if m > 0 else 0.0
        hi = lo
        lo2 = lo
        hi2 = lo
        ok = True
        for i in range(a, b - 1, 2):  # two chains of min / max, each waiting for its own compares
            v = scores[i]
            v2 = scores[i + 1]
            ok &= (v == v) & (v2 == v2)
            lo = v if v < lo else lo
            hi = v if v > hi else hi
            lo2 = v2 if v2 < lo2 else lo2
            hi2 = v2 if v2 > hi2 else hi2
        v = scores[b - 1] if m > 0 else 0.0
        ok &= v == v
        lo = lo2 if lo2 < lo else lo  # min(lo, lo2, v), max(hi, hi2, v), without builtins to compile
        lo = v if v < lo else lo
        hi = hi2 if hi2 > hi else hi
        hi = v if v > hi else hi
        if not ok:
            return -1
        nb = 2 * m
        width = hi - lo
        scale = nb / width if width > 0.0 else 0.0
        merge = not (width > 0.0 and math.isfinite(width) and math.isfinite(scale))
        if not merge:
            for i in range(nb + 1):
                cnt[i] = 0
            for i in range(m):  # a loop of its own: vectorised (min(int(x), nb - 1) without overloads)
                bk = np.int64((hi - scores[a + i]) * scale)
                tidx[i] = nb - 1 if nb - 1 < bk else bk
            for i in range(m):
                cnt[tidx[i] + 1] += 1
            run = 0
            for i in range(1, nb + 1):  # cnt[bk]: the start of bucket bk (a running sum in a register)
                run += cnt[i]
                cnt[i] = run
            for i in range(m):  # scatter in document order: cnt[bk] becomes the end of bucket bk
                bk = tidx[i]
                p = cnt[bk]
                cnt[bk] = p + 1
                key[p] = scores[a + i]
                if ties != 0:
                    tk[p] = tkey[a + i]
                pos[i] = p
            if ties == 0:  # idx[p] = 1 where p's bucket holds one score value: its rank is p itself
                p0 = 0
                for bk in range(nb):
                    e = cnt[bk]
                    if e > p0:
                        v0 = key[p0]
                        same = 1
                        for j in range(p0 + 1, e):
                            same &= key[j] == v0
                        for j in range(p0, e):
                            idx[j] = same
                        p0 = e
            work = 0
            for t in range(rptr[q], rptr[q + 1]):
                i = rel[t] - a
                bk = tidx[i]
                p = pos[i]
                if ties == 0 and idx[p] == 1:  # rows of equal scores are in row order: ranked as placed
                    ys[a + p] = labels[a + i]
                    gs[a + p] = gdoc[a + i]
                    continue
                r = cnt[bk - 1] if bk > 0 else 0
                work += cnt[bk] - r
                if work > _PLACE_BUDGET * m:  # heavy ties: counting would cost more than the sort
                    merge = True
                    break
                v = key[p]
                if ties == 0:
                    for j in range(r, p):  # earlier rows: ahead unless lower
                        r += key[j] >= v
                    for j in range(p + 1, cnt[bk]):  # later rows: ahead only if higher
                        r += key[j] > v
                else:  # equal scores: ahead if a higher tie key, or an equal one and an earlier row
                    w = tk[p]
                    for j in range(r, p):
                        r += (key[j] > v) | ((key[j] == v) & (tk[j] >= w))
                    for j in range(p + 1, cnt[bk]):
                        r += (key[j] > v) | ((key[j] == v) & (tk[j] > w))
                ys[a + r] = labels[a + i]
                gs[a + r] = gdoc[a + i]
        if merge:  # sorted by _place_merged (all tied and stable: row order, here)
            if m >= 2 and (width != 0.0 or ties != 0):
                todo[q] = 1
                n_marked += 1
            else:
                for i in range(a, b):
                    ys[i] = labels[i]
                    gs[i] = gdoc[i]
    return n_marked


@njit(cache=True)
def _place_merged(scores, labels, qptr, ties, gdoc, ys, gs, key, idx, key2, idx2, code, code2, cnt, todo):
    """The queries :func:`_place_fixed` marked in ``todo``, sorted (:func:`_rank_query`: the same order,
    ``lrank.metrics.evaluate``'s bits): every position of such a query rewritten in ``ys`` and ``gs``.
    Scratch as for :func:`_rank_query` (``key``, ``idx``, ``key2``, ``idx2`` are :func:`_place_fixed`'s
    ``key``, ``idx``, ``tk``, ``tidx``)."""
    for q in range(qptr.size - 1):
        if todo[q] == 0:
            continue
        a, b = qptr[q], qptr[q + 1]
        _rank_query(scores, labels, a, b, ties, key, idx, key2, idx2, code, code2, cnt)
        for i in range(b - a):
            ys[a + i] = labels[idx[i]]
            gs[a + i] = gdoc[idx[i]]


@njit(cache=True)
def _mean_ndcg_two(gs, icum, ideal, a, m, a2, m2, dtab, empty):
    """:func:`_metric_query`'s MeanNDCG of two queries (rows ``a:a + m`` and ``a2:a2 + m2``) from the gains
    in ranking order ``gs`` and the ideal DCGs ``icum``: each query's terms summed in its order, the two
    sums interleaved (two independent chains of additions, twice the throughput of one)."""
    n1 = m if m > 0 and ideal[a] > 0.0 else 0
    n2 = m2 if m2 > 0 and ideal[a2] > 0.0 else 0
    d = 0.0
    acc = 0.0
    d2 = 0.0
    acc2 = 0.0
    n12 = n2 if n2 < n1 else n1  # min(n1, n2) (no builtin overload to compile)
    for i in range(n12):
        d += gs[a + i] * dtab[i]
        acc += d / icum[a + i]
        d2 += gs[a2 + i] * dtab[i]
        acc2 += d2 / icum[a2 + i]
    for i in range(n12, n1):
        d += gs[a + i] * dtab[i]
        acc += d / icum[a + i]
    for i in range(n12, n2):
        d2 += gs[a2 + i] * dtab[i]
        acc2 += d2 / icum[a2 + i]
    return (acc / m if n1 > 0 else empty), (acc2 / m2 if n2 > 0 else empty)


@njit(cache=True)
def _evaluate_fixed(scores, labels, qptr, ties, codes, ks, gain, empty, rel_threshold, max_grade, tables,
                    ys, gs, key, idx, tk, tidx, cnt, pos, todo, out, place):
    """:func:`_evaluate_sorted` into ``out`` with the label-only ``tables`` (see :func:`_place_fixed`; the
    same bits), every metric by :func:`_metric_query` on the labels in ranking order; ``ys``, ``gs`` have
    one entry per document, ``todo`` one per query, the other scratch ``max(m)`` (``cnt``
    ``2 max(m) + 1``). With ``place`` it first places the documents (:func:`_place_fixed`) and returns its
    -1 (a NaN score, ``out`` untouched) or its count of queries marked for :func:`_place_merged`
    (``out`` untouched: the caller places them and calls again without ``place``); 0 when ``out`` is
    done. MeanNDCG alone has a kernel of its own (:func:`_evaluate_fixed_mean`), so a fit reading one
    metric compiles one metric's code path (issue 15.5)."""
    if place:
        r = _place_fixed(scores, labels, qptr, ties, tables, ys, gs, True, key, idx, tk, tidx, cnt, pos, todo)
        if r != 0:
            return r
    ideal, dtab = tables[0], tables[6]
    nq = qptr.size - 1
    for j in range(codes.size):
        for q in range(nq):
            out[j, q] = _metric_query(ys, ideal, qptr[q], qptr[q + 1] - qptr[q], codes[j], ks[j], gain, dtab,
                                      empty, rel_threshold, max_grade)
    return 0


@njit(cache=True)
def _evaluate_fixed_mean(scores, labels, qptr, ties, empty, tables, ys, gs, key, idx, tk, tidx, cnt, pos,
                         todo, out, place):
    """:func:`_evaluate_fixed` when every row of ``out`` is MeanNDCG (BoostingTree's measure): the gains in
    ranking order only (``ys`` not needed) and two queries at a time (:func:`_mean_ndcg_two`, the bits of
    :func:`_metric_query`'s MeanNDCG); the same returns."""
    if place:
        r = _place_fixed(scores, labels, qptr, ties, tables, ys, gs, False, key, idx, tk, tidx, cnt, pos,
                         todo)
        if r != 0:
            return r
    ideal, icum, dtab = tables[0], tables[1], tables[6]
    nq = qptr.size - 1
    for q in range(0, nq, 2):
        a, b = qptr[q], qptr[q + 1]
        c = qptr[q + 2] if q + 1 < nq else b
        v, v2 = _mean_ndcg_two(gs, icum, ideal, a, b - a, b, c - b, dtab, empty)
        for j in range(out.shape[0]):
            out[j, q] = v
            if q + 1 < nq:
                out[j, q + 1] = v2
    return 0


# ---------------------------------------------------------------------------------------------------
# pair losses R1, R2 (RankBoost+ Eq. 3-4) over the critical pairs of each query
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _pair_losses(s_sorted, y_sorted, qptr):
    """Per-query ``(R1, R2)`` over the critical pairs, from scores and labels in ranked order.

    ``R1`` counts a tied critical pair as wrong (Eq. 3), ``R2`` as half wrong (Eq. 4). Queries without
    critical pairs get NaN. O(n_q^2) per query, with an early exit when all labels are equal.
    """
    nq = qptr.size - 1
    r1 = np.full(nq, np.nan)
    r2 = np.full(nq, np.nan)
    for q in range(nq):
        a, b = qptr[q], qptr[q + 1]
        if b - a < 2:
            continue
        lo = y_sorted[a]
        hi = y_sorted[a]
        for i in range(a, b):  # min() and max() as selects (no builtin overloads to compile)
            v = y_sorted[i]
            lo = v if v < lo else lo
            hi = v if v > hi else hi
        if lo == hi:
            continue
        crit = 0
        tie = 0
        wrong = 0
        for i in range(a, b):
            yi = y_sorted[i]
            si = s_sorted[i]
            for j in range(i + 1, b):  # s_sorted[i] >= s_sorted[j]
                yj = y_sorted[j]
                if yi == yj:
                    continue
                crit += 1
                if si == s_sorted[j]:
                    tie += 1
                elif yi < yj:
                    wrong += 1
        r1[q] = (wrong + tie) / crit  # Eq. 3: h(x') - h(x) <= 0 is an error
        r2[q] = (wrong + 0.5 * tie) / crit  # Eq. 4: a tie is half an error
    return r1, r2


# ---------------------------------------------------------------------------------------------------
# RankBoost Sec. 6.2.4 and App. A: expectations under random tie-breaking
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _expected_disagreement(s_sorted, y_sorted, ideal_sorted, qptr):
    """E[disagreement] (RankBoost Sec. 6.2.4) per query in O(n_q log n_q) (NaN: no ordered pair).

    Counted independently of :func:`pair_losses`: documents are inserted into a Fenwick tree over the
    query's distinct labels in increasing score order, one tie group at a time; a document misorders
    every already inserted (lower-scored) document with a higher label, and ties with every document
    of its group with a different label.
    """
    nq = qptr.size - 1
    out = np.full(nq, np.nan)
    for q in range(nq):
        a, b = qptr[q], qptr[q + 1]
        m = b - a
        if m < 2:
            continue
        # distinct labels, increasing
        uniq = np.empty(m, dtype=np.float64)
        nu = 0
        for i in range(b - 1, a - 1, -1):
            v = ideal_sorted[i]
            if nu == 0 or uniq[nu - 1] != v:
                uniq[nu] = v
                nu += 1
        if nu < 2:
            continue
        uniq = uniq[:nu]
        total = np.zeros(nu, dtype=np.int64)
        tree = np.zeros(nu + 1, dtype=np.int64)
        inserted = 0
        wrong = 0.0
        tie = 0.0
        end = b
        while end > a:  # tie groups from the lowest score up
            start = end - 1
            while start > a and s_sorted[start - 1] == s_sorted[end - 1]:
                start -= 1
            cnt = np.zeros(nu, dtype=np.int64)
            for i in range(start, end):
                u = np.searchsorted(uniq, y_sorted[i])
                cnt[u] += 1
                # inserted documents with a label index <= u
                s = 0
                j = u + 1
                while j > 0:
                    s += tree[j]
                    j -= j & (-j)
                wrong += inserted - s
            g = end - start
            same = 0
            for u in range(nu):
                same += cnt[u] * cnt[u]
                total[u] += cnt[u]
            tie += 0.5 * (g * g - same)
            for i in range(start, end):
                u = np.searchsorted(uniq, y_sorted[i])
                j = u + 1
                while j <= nu:
                    tree[j] += 1
                    j += j & (-j)
            inserted += g
            end = start
        same = 0
        for u in range(nu):
            same += total[u] * total[u]
        crit = 0.5 * (m * m - same)
        out[q] = (wrong + 0.5 * tie) / crit
    return out


@njit(cache=True)
def _log_binom(n, k):
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@njit(cache=True)
def _expected_precisions(s_sorted, good_sorted, qptr, empty):
    """Per-query ``(E[AP], E[PROT], E[coverage])`` under random tie-breaking (RankBoost Eq. 22).

    ``good_sorted`` (uint8) marks the good documents in ranked order. For the k-th good document,
    lying in a tie group of Q documents of which q are good, with R documents and r good documents
    ranked strictly above the group, ``Pr[rank(t_k) = i] = C(i-R-1, k-r-1) C(Q-i+R, q-k+r) / C(Q, q)``.
    Queries without a good document get ``empty``.
    """
    nq = qptr.size - 1
    eap = np.full(nq, empty)
    eprot = np.full(nq, empty)
    ecov = np.full(nq, empty)
    for q in range(nq):
        a, b = qptr[q], qptr[q + 1]
        K = 0
        for i in range(a, b):
            K += good_sorted[i]
        if K == 0:
            continue
        ap = 0.0
        prot = 0.0
        cov = 0.0
        r = 0  # good documents strictly above the current tie group
        start = a
        while start < b:
            end = start + 1
            while end < b and s_sorted[end] == s_sorted[start]:
                end += 1
            Q = end - start
            qg = 0
            for i in range(start, end):
                qg += good_sorted[i]
            if qg > 0:
                R = start - a
                lden = _log_binom(Q, qg)
                logs = np.empty(Q + 1)
                logs[0] = 0.0
                for i in range(1, Q + 1):
                    logs[i] = math.log(i)
                for j in range(1, qg + 1):  # t_k is the j-th good document of the group, k = r + j
                    kk = r + j
                    e_inv = 0.0  # E[1 / rank(t_k)]
                    # Eq. 24 (ell = i - R):
                    # log Pr[Y_j = ell] = log C(ell-1, j-1) + log C(Q-ell, q-j) - log C(Q, q),
                    # started at ell = j and advanced by the ratio of consecutive terms
                    logp = _log_binom(Q - j, qg - j) - lden
                    for ell in range(j, Q - qg + j + 1):
                        e_inv += math.exp(logp) / (R + ell)
                        if ell < Q - qg + j:
                            logp += logs[ell] - logs[ell - j + 1] + logs[Q - ell - qg + j] - logs[Q - ell]
                    ap += kk * e_inv  # E[AP] = (1/K) sum_k k E[1/rank(t_k)]
                    if kk == 1:
                        prot = e_inv  # E[PROT] = E[1/rank(t_1)]
                    if kk == K:
                        cov = K * e_inv  # E[coverage] = E[K/rank(t_K)]
                r += qg
            start = end
        eap[q] = ap / K
        eprot[q] = prot
        ecov[q] = cov
    return eap, eprot, ecov


# ---------------------------------------------------------------------------------------------------
# the validating Python functions: each checks its arguments in O(1) (dtype, dimensions, lengths that must
# agree, option codes) and calls its kernel; the values (labels, offsets, scores) are the caller's to check
# (`lrank.metrics` does so once, by `labels_scores_ok` and `int_labels_scores_ok` and its offset checks)
# ---------------------------------------------------------------------------------------------------
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_I32 = np.dtype(np.int32)
_U8 = np.dtype(np.uint8)
_LABEL_DTYPES = (_F64, _I64, _I32)  # the label arrays the kernels are called with (int: read as they are)
_N_CODES = 8  # the metric codes NDCG .. DCG


def _array(name: str, a: np.ndarray, dtypes: tuple[np.dtype, ...], ndim: int = 1, n: int = -1,
           writeable: bool = False) -> np.ndarray:
    """``a`` itself if it is a C-contiguous ndarray of one of ``dtypes`` with ``ndim`` dimensions (and
    ``n`` entries along the first, unless ``n`` is -1); else a ``ValueError`` naming ``name``."""
    if not (type(a) is np.ndarray and a.dtype in dtypes and a.ndim == ndim and a.flags.c_contiguous):
        raise ValueError(f"{name} must be a C-contiguous {ndim}-d array of "
                         f"{' or '.join(str(d) for d in dtypes)}, got "
                         f"{getattr(a, 'dtype', type(a).__name__)} of shape {np.shape(a)}")
    if n >= 0 and a.shape[0] != n:
        raise ValueError(f"{name} must have {n} entries (one per document or query), got {a.shape[0]}")
    if writeable and not a.flags.writeable:
        raise ValueError(f"{name} must be writeable (the kernel writes into it)")
    return a


def _queries(qptr: np.ndarray, n_docs: int) -> int:
    """The number of queries of the int64 offsets ``qptr``, which must start at 0 and end at ``n_docs``."""
    _array("qptr", qptr, (_I64,))
    if qptr.size < 1 or qptr[0] != 0 or qptr[-1] != n_docs:
        raise ValueError(f"qptr must start at 0 and end at n_docs={n_docs} (n_queries + 1 offsets)")
    return qptr.size - 1


def _choice(name: str, value: int, n: int) -> int:
    """``value`` as an int, which must be one of ``0 .. n - 1`` (an option code of this module)."""
    v = int(value)
    if not 0 <= v < n:
        raise ValueError(f"{name} must be one of 0 .. {n - 1}, got {value!r}")
    return v


def _metric_codes(codes: np.ndarray, ks: np.ndarray) -> None:
    _array("codes", codes, (_I64,))
    _array("ks", ks, (_I64,), n=codes.size)


def labels_scores_ok(y: np.ndarray, scores: np.ndarray, bound: float) -> tuple[bool, np.ndarray]:
    """Whether every label is an integer in ``0 <= label < bound`` and no score is NaN, in one pass each;
    and the labels as float64.

    Parameters
    ----------
    y : ndarray (n_docs,) of int64 / int32 / float64
        Labels (C-contiguous).
    scores : ndarray (n_docs,) of float64
        Scores.
    bound : float
        The labels' exclusive upper bound.

    Returns
    -------
    ok : bool
        False if a check fails (the caller locates and reports the failure).
    yf : ndarray (n_docs,) of float64
        ``y`` as float64 (complete whether or not ``ok``).
    """
    _array("y", y, _LABEL_DTYPES)
    _array("scores", scores, (_F64,), n=y.size)
    yf = np.empty(y.size)
    return bool(_labels_scores_ok(y, scores, yf, float(bound))), yf


def int_labels_scores_ok(y: np.ndarray, scores: np.ndarray, bound: int) -> tuple[bool, int]:
    """Whether every int32 label is in ``0 <= label < bound`` and no score is NaN, and the largest label,
    in one pass each (nothing copied).

    Parameters
    ----------
    y : ndarray (n_docs,) of int32
        Labels.
    scores : ndarray (n_docs,) of float64
        Scores.
    bound : int
        The labels' exclusive upper bound.

    Returns
    -------
    ok : bool
        False if a check fails (the caller locates and reports the failure).
    top : int
        The largest label (-1 for no document).
    """
    _array("y", y, (_I32,))
    _array("scores", scores, (_F64,), n=y.size)
    ok, top = _int_labels_scores_ok(y, scores, int(bound))
    return bool(ok), int(top)


def rank_order(scores: np.ndarray, labels: np.ndarray, qptr: np.ndarray, ties: int,
               parallel: bool = False) -> np.ndarray:
    """Global row indices of every query's documents in decreasing score order (`_rank_order`).

    Parameters
    ----------
    scores : ndarray (n_docs,) of float64
        Scores (no NaN).
    labels : ndarray (n_docs,) of float64 / int64 / int32
        Labels (read by the tie rules).
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    ties : int
        ``TIES_STABLE``, ``TIES_PESSIMISTIC`` or ``TIES_OPTIMISTIC``.
    parallel : bool
        Use the parallel twin `_rank_order_parallel` (the same output).

    Returns
    -------
    ndarray (n_docs,) of int64
    """
    _array("scores", scores, (_F64,))
    _array("labels", labels, _LABEL_DTYPES, n=scores.size)
    _queries(qptr, scores.size)
    t = _choice("ties", ties, 3)
    return (_rank_order_parallel if parallel else _rank_order)(scores, labels, qptr, t)


def ideal_labels(labels: np.ndarray, qptr: np.ndarray) -> np.ndarray:
    """Each query's labels in decreasing order (the ideal ranking's labels).

    Parameters
    ----------
    labels : ndarray (n_docs,) of float64
        Labels.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).

    Returns
    -------
    ndarray (n_docs,) of float64
    """
    _array("labels", labels, (_F64,))
    _queries(qptr, labels.size)
    return _ideal_labels(labels, qptr)


def query_metric(y_sorted: np.ndarray, ideal_sorted: np.ndarray, qptr: np.ndarray, code: int, k: int,
                 gain: int, disc: int, empty: float, rel_threshold: float, max_grade: float) -> np.ndarray:
    """One metric for every query from the labels in ranked order and in ideal order (`_query_metric`).

    Parameters
    ----------
    y_sorted, ideal_sorted : ndarray (n_docs,) of float64
        Labels in the ranking's order and in decreasing order, grouped by ``qptr``.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    code : int
        ``NDCG``, ``MEAN_NDCG``, ``MAP``, ``ERR``, ``PREC``, ``MRR``, ``WTA`` or ``DCG``.
    k : int
        Cut-off (``<= 0``: every position).
    gain, disc : int
        ``GAIN_EXP`` or ``GAIN_LINEAR``; ``DISC_LOG2`` or ``DISC_JK``.
    empty : float
        Value of a query without a relevant document (NaN: skipped).
    rel_threshold : float
        Lowest relevant label.
    max_grade : float
        Top grade of ERR's scale.

    Returns
    -------
    ndarray (n_queries,) of float64
    """
    _array("y_sorted", y_sorted, (_F64,))
    _array("ideal_sorted", ideal_sorted, (_F64,), n=y_sorted.size)
    _queries(qptr, y_sorted.size)
    return _query_metric(y_sorted, ideal_sorted, qptr, _choice("code", code, _N_CODES), int(k),
                         _choice("gain", gain, 2), _choice("disc", disc, 2), float(empty),
                         float(rel_threshold), float(max_grade))


def evaluate_sorted(scores: np.ndarray, labels: np.ndarray, qptr: np.ndarray, ties: int, codes: np.ndarray,
                    ks: np.ndarray, gain: int, disc: int, empty: float, rel_threshold: float,
                    max_grade: float, label_bound: int, parallel: bool = False) -> np.ndarray:
    """Metrics ``codes[j]`` at cut-offs ``ks[j]`` of every query, one query at a time (`_evaluate_sorted`).

    Parameters
    ----------
    scores : ndarray (n_docs,) of float64
        Scores (no NaN).
    labels : ndarray (n_docs,) of float64 / int64 / int32
        Labels; with ``label_bound > 0`` integers in ``0 <= label < label_bound``.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    ties : int
        ``TIES_STABLE``, ``TIES_PESSIMISTIC`` or ``TIES_OPTIMISTIC``.
    codes, ks : ndarray (n_metrics,) of int64
        Metric codes (see `query_metric`) and their cut-offs.
    gain, disc : int
        ``GAIN_EXP`` or ``GAIN_LINEAR``; ``DISC_LOG2`` or ``DISC_JK``.
    empty : float
        Value of a query without a relevant document (NaN: skipped).
    rel_threshold : float
        Lowest relevant label.
    max_grade : float
        Top grade of ERR's scale.
    label_bound : int
        The labels' exclusive upper bound (ideal labels counted), or 0 for any finite labels (sorted).
    parallel : bool
        Use the parallel twin `_evaluate_sorted_parallel` (the same output).

    Returns
    -------
    ndarray (n_metrics, n_queries) of float64
    """
    _array("scores", scores, (_F64,))
    _array("labels", labels, _LABEL_DTYPES, n=scores.size)
    _queries(qptr, scores.size)
    _metric_codes(codes, ks)
    label_bound = int(label_bound)
    if label_bound < 0:
        raise ValueError(f"label_bound must be 0 or positive, got {label_bound}")
    kernel = _evaluate_sorted_parallel if parallel else _evaluate_sorted
    return kernel(scores, labels, qptr, _choice("ties", ties, 3), codes, ks, _choice("gain", gain, 2),
                  _choice("disc", disc, 2), float(empty), float(rel_threshold), float(max_grade), label_bound)


def fixed_gains(labels: np.ndarray, ideal: np.ndarray, qptr: np.ndarray, gain: int,
                disc: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gain tables of `evaluate_fixed` (`_fixed_gains`): the cumulative ideal DCGs, every document's
    gain and the discounts of the longest query's positions.

    Parameters
    ----------
    labels : ndarray (n_docs,) of float64
        Labels.
    ideal : ndarray (n_docs,) of float64
        Each query's labels in decreasing order (the values of `ideal_labels`).
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    gain, disc : int
        ``GAIN_EXP`` or ``GAIN_LINEAR``; ``DISC_LOG2`` or ``DISC_JK``.

    Returns
    -------
    icum : ndarray (n_docs,) of float64
        ``icum[qptr[q] + i]``: the ideal DCG of query ``q``'s top ``i + 1`` positions.
    gdoc : ndarray (n_docs,) of float64
        Every document's gain.
    dtab : ndarray (longest query,) of float64
        The discounts of positions 1, 2, ...
    """
    _array("labels", labels, (_F64,))
    _array("ideal", ideal, (_F64,), n=labels.size)
    _queries(qptr, labels.size)
    gain, disc = _choice("gain", gain, 2), _choice("disc", disc, 2)
    sizes = np.diff(qptr)
    icum, gdoc = np.empty(labels.size), np.empty(labels.size)
    dtab = np.empty(int(sizes.max()) if sizes.size else 0)
    _fixed_gains(labels, ideal, qptr, gain, disc, icum, gdoc, dtab)
    return icum, gdoc, dtab


#: dtypes of `evaluate_fixed`'s scratch ``(ys, gs, key, idx, tk, tidx, cnt, pos, todo)`` and tables
#: ``(ideal, icum, gdoc, tkey, rel, rptr, dtab)``
_SCRATCH_DTYPES = (_F64, _F64, _F64, _I64, _F64, _I64, _I64, _I64, _I64)
_TABLE_DTYPES = (_F64, _F64, _F64, _F64, _I64, _I64, _F64)


#: the last ``(labels, qptr, tables, scratch, codes, ks, n_docs, n_queries)`` `_fixed_inputs` accepted: an
#: `lrank.metrics.Evaluator` passes the same objects on every call (tuples, and arrays whose shape and dtype
#: do not change), so their checks run once per Evaluator; a call then checks ``scores`` and ``out`` only
_fixed_checked: tuple = ()


def _fixed_inputs(scores: np.ndarray, labels: np.ndarray, qptr: np.ndarray, tables: tuple, scratch: tuple,
                  out: np.ndarray, codes: np.ndarray | None, ks: np.ndarray | None) -> None:
    """The O(1) checks of `evaluate_fixed` and (``codes`` and ``ks`` None: ``out`` of any number of rows)
    `evaluate_fixed_mean`."""
    global _fixed_checked
    last = _fixed_checked
    if last and labels is last[0] and qptr is last[1] and tables is last[2] and scratch is last[3] \
            and codes is last[4] and ks is last[5] \
            and type(scores) is np.ndarray and scores.dtype is _F64 and scores.shape == last[6] \
            and type(out) is np.ndarray and out.dtype is _F64 and out.ndim == 2 and out.shape[1] == last[7] \
            and (codes is None or out.shape[0] == codes.size) and scores.flags.c_contiguous \
            and out.flags.c_contiguous and out.flags.writeable:
        return
    n_rows = -1
    if codes is not None or ks is not None:
        _metric_codes(codes, ks)
        n_rows = codes.size
    _array("scores", scores, (_F64,))
    n = scores.size
    _array("labels", labels, (_F64,), n=n)
    nq = _queries(qptr, n)
    if type(tables) is not tuple or len(tables) != 7 or \
            tuple(getattr(a, "dtype", None) for a in tables) != _TABLE_DTYPES:
        raise ValueError("tables must be the tuple (ideal, icum, gdoc, tkey, rel, rptr, dtab) of float64 and "
                         "int64 arrays (lrank.metrics._fixed_tables)")
    ideal, icum, gdoc, tkey, rel, rptr, dtab = tables
    if not (ideal.size == icum.size == gdoc.size == tkey.size == n and rptr.size == nq + 1):
        raise ValueError(f"tables: ideal, icum, gdoc and tkey must have {n} entries and rptr {nq + 1}")
    if type(scratch) is not tuple or len(scratch) != 9 or \
            tuple(getattr(a, "dtype", None) for a in scratch) != _SCRATCH_DTYPES:
        raise ValueError("scratch must be the tuple (ys, gs, key, idx, tk, tidx, cnt, pos, todo) of float64 "
                         "and int64 arrays")
    ys, gs, key, idx, tk, tidx, cnt, pos, todo = scratch
    m = dtab.size
    if not (ys.size == gs.size == n and key.size == idx.size == tk.size == tidx.size == pos.size == m
            and cnt.size >= 2 * m + 1 and todo.size == nq):
        raise ValueError(f"scratch: ys and gs must have {n} entries, key, idx, tk, tidx and pos {m} (the "
                         f"longest query, dtab's), cnt at least {2 * m + 1} and todo {nq}")
    _array("out", out, (_F64,), ndim=2, writeable=True)
    if out.shape[1] != nq or (n_rows >= 0 and out.shape[0] != n_rows):
        raise ValueError(f"out must have shape {(n_rows if n_rows >= 0 else 'n_rows', nq)}, got {out.shape}")
    _fixed_checked = (labels, qptr, tables, scratch, codes, ks, (n,), nq)


def evaluate_fixed(scores: np.ndarray, labels: np.ndarray, qptr: np.ndarray, ties: int, codes: np.ndarray,
                   ks: np.ndarray, gain: int, empty: float, rel_threshold: float, max_grade: float,
                   tables: tuple, scratch: tuple, out: np.ndarray, place: bool) -> int:
    """`evaluate_sorted`'s values for fixed labels into ``out`` (`_evaluate_fixed`: the same bits).

    Parameters
    ----------
    scores : ndarray (n_docs,) of float64
        Scores.
    labels : ndarray (n_docs,) of float64
        Labels.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    ties : int
        ``TIES_STABLE``, ``TIES_PESSIMISTIC`` or ``TIES_OPTIMISTIC``.
    codes, ks : ndarray (n_metrics,) of int64
        Metric codes (see `query_metric`) and their cut-offs.
    gain : int
        ``GAIN_EXP`` or ``GAIN_LINEAR``.
    empty : float
        Value of a query without a relevant document (NaN: skipped).
    rel_threshold : float
        Lowest relevant label.
    max_grade : float
        Top grade of ERR's scale.
    tables : tuple
        ``(ideal, icum, gdoc, tkey, rel, rptr, dtab)`` of the labels (``lrank.metrics._fixed_tables``).
    scratch : tuple
        ``(ys, gs, key, idx, tk, tidx, cnt, pos, todo)``: float64 ``ys``, ``gs`` (one entry per document),
        ``key``, ``tk`` and int64 ``idx``, ``tidx``, ``pos`` (one per position of the longest query),
        int64 ``cnt`` (at least twice that plus one) and ``todo`` (one per query).
    out : ndarray (n_metrics, n_queries) of float64
        Written with the metrics when the return value is 0.
    place : bool
        First place the documents in ranking order (else they were placed by an earlier call and
        `place_merged`).

    Returns
    -------
    int
        -1 for a NaN score and the number of queries marked in ``todo`` for `place_merged` (``out``
        untouched in both cases); 0 when ``out`` is written.
    """
    _fixed_inputs(scores, labels, qptr, tables, scratch, out, codes, ks)
    return _evaluate_fixed(scores, labels, qptr, _choice("ties", ties, 3), codes, ks,
                           _choice("gain", gain, 2), float(empty), float(rel_threshold), float(max_grade),
                           tables, *scratch, out, bool(place))


def evaluate_fixed_mean(scores: np.ndarray, labels: np.ndarray, qptr: np.ndarray, ties: int, empty: float,
                        tables: tuple, scratch: tuple, out: np.ndarray, place: bool) -> int:
    """`evaluate_fixed` when every row of ``out`` is MeanNDCG (`_evaluate_fixed_mean`: the same bits).

    Parameters
    ----------
    scores, labels, qptr, ties, empty, tables, scratch, place
        As for `evaluate_fixed`.
    out : ndarray (n_rows, n_queries) of float64
        Every row written with the MeanNDCG values when the return value is 0.

    Returns
    -------
    int
        As for `evaluate_fixed`.
    """
    _fixed_inputs(scores, labels, qptr, tables, scratch, out, None, None)
    return _evaluate_fixed_mean(scores, labels, qptr, _choice("ties", ties, 3), float(empty), tables,
                                *scratch, out, bool(place))


def place_merged(scores: np.ndarray, labels: np.ndarray, qptr: np.ndarray, ties: int, gdoc: np.ndarray,
                 ys: np.ndarray, gs: np.ndarray, key: np.ndarray, idx: np.ndarray, key2: np.ndarray,
                 idx2: np.ndarray, code: np.ndarray, code2: np.ndarray, cnt: np.ndarray,
                 todo: np.ndarray) -> None:
    """Place the queries `evaluate_fixed` marked in ``todo`` by a sort (`_place_merged`): every position
    of such a query rewritten in ``ys`` and ``gs``.

    Parameters
    ----------
    scores, labels, gdoc : ndarray (n_docs,) of float64
        Scores, labels and every document's gain.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    ties : int
        ``TIES_STABLE``, ``TIES_PESSIMISTIC`` or ``TIES_OPTIMISTIC``.
    ys, gs : ndarray (n_docs,) of float64
        Labels and gains in ranking order, written for the marked queries.
    key, key2 : ndarray (m,) of float64
        Scratch, ``m`` at least the longest query.
    idx, idx2, code, code2 : ndarray (m,) of int64
        Scratch.
    cnt : ndarray of int64
        Scratch of at least ``max(2 m + 1, 256)`` entries.
    todo : ndarray (n_queries,) of int64
        1 for a query to place, else 0.
    """
    _array("scores", scores, (_F64,))
    n = scores.size
    for name, a in (("labels", labels), ("gdoc", gdoc), ("ys", ys), ("gs", gs)):
        _array(name, a, (_F64,), n=n)
    nq = _queries(qptr, n)
    m = key.size
    for name, a, dt in (("key", key, _F64), ("key2", key2, _F64), ("idx", idx, _I64), ("idx2", idx2, _I64),
                        ("code", code, _I64), ("code2", code2, _I64)):
        _array(name, a, (dt,), n=m)
    _array("cnt", cnt, (_I64,))
    if cnt.size < max(2 * m + 1, 256):
        raise ValueError(f"cnt must have at least {max(2 * m + 1, 256)} entries, got {cnt.size}")
    _array("todo", todo, (_I64,), n=nq)
    _place_merged(scores, labels, qptr, _choice("ties", ties, 3), gdoc, ys, gs, key, idx, key2, idx2, code,
                  code2, cnt, todo)


def pair_losses(s_sorted: np.ndarray, y_sorted: np.ndarray,
                qptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-query ``(R1, R2)`` over the critical pairs (`_pair_losses`; NaN: no critical pair).

    Parameters
    ----------
    s_sorted, y_sorted : ndarray (n_docs,) of float64
        Scores and labels in ranked order.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).

    Returns
    -------
    tuple of two ndarray (n_queries,) of float64
    """
    _array("s_sorted", s_sorted, (_F64,))
    _array("y_sorted", y_sorted, (_F64,), n=s_sorted.size)
    _queries(qptr, s_sorted.size)
    return _pair_losses(s_sorted, y_sorted, qptr)


def expected_disagreement(s_sorted: np.ndarray, y_sorted: np.ndarray, ideal_sorted: np.ndarray,
                          qptr: np.ndarray) -> np.ndarray:
    """E[disagreement] (RankBoost Sec. 6.2.4) per query (`_expected_disagreement`; NaN: no ordered pair).

    Parameters
    ----------
    s_sorted, y_sorted : ndarray (n_docs,) of float64
        Scores and labels in ranked order.
    ideal_sorted : ndarray (n_docs,) of float64
        Each query's labels in decreasing order.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).

    Returns
    -------
    ndarray (n_queries,) of float64
    """
    _array("s_sorted", s_sorted, (_F64,))
    _array("y_sorted", y_sorted, (_F64,), n=s_sorted.size)
    _array("ideal_sorted", ideal_sorted, (_F64,), n=s_sorted.size)
    _queries(qptr, s_sorted.size)
    return _expected_disagreement(s_sorted, y_sorted, ideal_sorted, qptr)


def expected_precisions(s_sorted: np.ndarray, good_sorted: np.ndarray, qptr: np.ndarray,
                        empty: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-query ``(E[AP], E[PROT], E[coverage])`` under random tie-breaking (`_expected_precisions`).

    Parameters
    ----------
    s_sorted : ndarray (n_docs,) of float64
        Scores in ranked order.
    good_sorted : ndarray (n_docs,) of uint8
        1 for a good document, in ranked order.
    qptr : ndarray (n_queries + 1,) of int64
        CSR query offsets (non-decreasing, from 0 to ``n_docs``).
    empty : float
        Value of a query without a good document.

    Returns
    -------
    tuple of three ndarray (n_queries,) of float64
    """
    _array("s_sorted", s_sorted, (_F64,))
    _array("good_sorted", good_sorted, (_U8,), n=s_sorted.size)
    _queries(qptr, s_sorted.size)
    return _expected_precisions(s_sorted, good_sorted, qptr, float(empty))


def warmup() -> None:
    """Compile every kernel of this module on a toy input."""
    for lab in (np.array([1, 0], dtype=np.int64), np.array([1, 0], dtype=np.int32), np.array([1.0, 0.0])):
        _labels_scores_ok(lab, np.zeros(2), np.empty(2), 31.0)
    _int_labels_scores_ok(np.array([1, 0], dtype=np.int32), np.zeros(2), 31)
    y = np.array([2.0, 0.0, 1.0, 0.0, 1.0], dtype=np.float64)
    s = np.array([0.5, 0.5, 0.1, 0.9, -1.0], dtype=np.float64)
    qptr = np.array([0, 3, 5], dtype=np.int64)
    for ties in (0, 1, 2):
        _rank_order_merge(s, y, qptr, ties)
        order = _rank_order(s, y, qptr, ties)
    ys = y[order]
    ss = s[order]
    ideal = _ideal_labels(y, qptr)
    for code in range(8):
        _query_metric(ys, ideal, qptr, code, 3, 0, 0, np.nan, 1.0, 4.0)
    codes = np.arange(8, dtype=np.int64)
    ks = np.full(8, 3, dtype=np.int64)
    for ties in (0, 1, 2):
        _evaluate_sorted(s, y, qptr, ties, codes, ks, 0, 0, np.nan, 1.0, 4.0, 0)
        _evaluate_sorted(s, y.astype(np.int32), qptr, ties, codes, ks, 0, 0, np.nan, 1.0, 4.0, 31)
    _pair_losses(ss, ys, qptr)
    _expected_disagreement(ss, ys, ideal, qptr)
    _expected_precisions(ss, (ys >= 1).astype(np.uint8), qptr, np.nan)
    icum, gdoc, dtab = np.empty(5), np.empty(5), np.empty(3)
    _fixed_gains(y, _ideal_labels(y, qptr), qptr, 0, 1, icum, gdoc, dtab)
    tables = (_ideal_labels(y, qptr), icum, gdoc, np.zeros(5), np.array([0, 2, 4]), np.array([0, 2, 3]), dtab)
    scratch = (np.empty(5), np.empty(5), np.empty(3), np.empty(3, dtype=np.int64), np.empty(3),
               np.empty(3, dtype=np.int64), np.empty(7, dtype=np.int64), np.empty(3, dtype=np.int64),
               np.ones(2, dtype=np.int64))
    _evaluate_fixed(s, y, qptr, 0, codes, ks, 0, np.nan, 1.0, 4.0, tables, *scratch, np.empty((8, 2)), True)
    _evaluate_fixed_mean(s, y, qptr, 0, np.nan, tables, *scratch, np.empty((1, 2)), True)
    ys, gs, key, idx, tk, tidx, _, _, todo = scratch
    _place_merged(s, y, qptr, 0, gdoc, ys, gs, key, idx, tk, tidx, np.empty(3, dtype=np.int64),
                  np.empty(3, dtype=np.int64), np.empty(256, dtype=np.int64), todo)
