"""LambdaMART's lambdas and second-order weights per query (Wu, Burges, Svore & Gao 2010).

For every query and every pair ``(i, j)`` of its documents with ``y_i > y_j`` (the LambdaMART box as
notebook 03 reconstructs it, Sec. 4, step (b); RankLib's ``computePseudoResponses``)::

    dZ   = |(disc(r_i) - disc(r_j)) (g_i - g_j)| / maxDCG_q       |Delta NDCG@k| of swapping i and j
    rho  = 1 / (1 + exp(sigma (s_i - s_j)))
    lambda_i += sigma dZ rho                  lambda_j -= sigma dZ rho
    w_i      += sigma^2 dZ rho (1 - rho)      w_j      += sigma^2 dZ rho (1 - rho)

with gains ``g = 2^y - 1`` (``label_gain``: ``g = y`` or a table ``g(y)``, non-decreasing in the label),
ranks ``r`` from sorting the current scores in decreasing order (ties broken by document order, a stable
sort), discount ``disc(r) = 1 / log2(r + 2)`` for 0-based ranks ``r < k`` and 0 beyond (NDCG@k; ``k <= 0``
means the whole list), and ``maxDCG_q`` the ideal DCG@k of the query. A query whose ideal DCG is 0 (no
relevant document) or whose labels are all equal gets zero lambdas and weights. The global factor ``1/n`` of
the BoostingTree paper cancels in every leaf value and is omitted. ``lambda > 0`` pushes a document up; the
gradient of the implicit loss is ``-lambda``.

LightGBM's variant of these lambdas (its ``lambdarank`` objective, ``src/objective/rank_objective.hpp``)
is two options of `lambdamart_gradients`: ``truncation_level`` (LightGBM's
``lambdarank_truncation_level``, 30 there) keeps the pairs whose higher-scored document ranks in the top
``truncation_level``, with the discount ``1 / log2(r + 2)`` at every rank and ``maxDCG`` the ideal DCG at
the level (``k=0``); ``norm`` (LightGBM's ``lambdarank_norm``, on there) divides each pair's ``dZ`` by
``0.01 + |s_i - s_j|`` once a query's scores are not all equal and multiplies the query's lambdas and weights
by ``log2(1 + S) / S``, ``S = 2 sum_pairs sigma dZ rho``: queries with many or large lambdas are damped,
pairs already far apart count less. Neither changes a bit of the NDCG@k lambdas when off.

The pairwise weights ``w_ij = sigma^2 dZ rho (1 - rho)`` are also returned as a pair list (pairs with
``dZ > 0`` only) for the tree-fitting paper's OLE criterion, whose exact node second derivative
subtracts the pairs that fall inside one node (Example 3-4 of Xia, Zhai & Wang).

Cost: one ``exp`` per document, not per pair: with ``e_i = exp(sigma (s_i - s_max))`` (``s_max`` the
query's top score, so ``e_i <= 1`` never overflows), ``rho = e_j / (e_i + e_j)`` and
``rho (1 - rho) = e_i e_j / (e_i + e_j)^2``; a pair whose two exponentials underflow takes its own
``exp``. The whole-list lambdas (``k <= 0``) of BoostingTree's LambdaMART base are O(n_q^2) divisions,
one per pair of documents with different labels, laid out so they vectorise without reassociation
(`_whole_list`, issue 15.2): the documents of a query are grouped by label once per call (a counting
sort) and stored by group (structure of arrays); each document of a group then sweeps all the less
relevant documents (contiguous: the groups are in label order) in one loop (`_pair_sweep`) that
computes every pair's terms once and adds them into both documents' sums: into the swept documents'
sums directly (one per vector lane, no reduction) and into the sweeping document's through eight
interleaved partial sums (a dependence at distance 8, not a reduction) added in a fixed tree at the
end of the sweep (``error_model="numpy"`` so the division is not guarded). Each sum thus takes its
terms in an order fixed by the data alone (by sweep, then by position; the lanes, then the tree),
never by the vector width or the CPU: no ``fastmath``. Until issue 15.2 every pair was visited twice,
with a division each time: ~0.94 ms a call on the MSLR sample pooled to 10,000 documents of 3 grades
(389,021 pairs), ~0.72 ms since, of which ~0.4 ms is the per-query sort, exponentials and grouping.
The whole-list lambdas differ from a pair-by-pair sum in the last bits (relative 1e-14 on the
recorded cases).
NDCG@k lambdas (``k > 0``, LambdaMART) keep the pair-by-pair order and their bits; without a pair list
and with no underflow each top-k rank's row runs in two sweeps (`_top_k_rows_plain`): the pairs' terms,
vectorised (one division per pair, no branch, no reduction), then the rank's own sums in rank order
(the same sums bit for bit).
Per query the documents are ranked by a stable O(n) sort of the scores' keys carried beside the
indices (`_score_keys`, `lrank._kernels.sorting._sort_bucketed`: buckets, a radix sort where they
crowd; NaN scores set apart first, then last), the permutation of the stable merge sort `_sort_stable`
that it replaced (same bits; ~30% less time per call at 190k documents, measured).
``tests/kernels/test_lambdas.py`` checks the NDCG@k lambdas against outputs recorded before the session-4
rewrite, and a LETOR-sized case with tree-like ties recorded before the session-5 one; the whole-list lambdas
against those outputs to 1e-12 and against digests of their bits recorded at issue 15.2.

Compile time (issue 15.5): what used to be a chain of nine kernels plus numba's ``argsort`` and
``np.take`` is one compiled kernel per use: `_lambdas` (NDCG@k without the pair list, LambdaMART),
`_lambdas_pairs` (pair by pair: the pair list of OLE, and the rare queries where an exponential
underflowed, which `_lambdas` and `_lambdas_whole` only mark), `_lambdas_within` (queries of at most
``k`` documents, all pairs grouped by label; also only marked by `_lambdas`: ~0.9 s of compilation a
LETOR-sized fit never needs) or `_lambdas_whole` (whole list, BoostingTree), whose per-query preparation
and pair loops are ``inline="always"`` helpers merged into it before typing, plus the sort
(`_sort_bucketed`) and, for the whole list, the vectorised sweep (`_pair_sweep`). A LambdaMART fit on
LETOR-sized queries thus compiles `_lambdas` and the sort only. One signature each: the validating
function normalises dtypes and allocates the workspaces. The parallel twin compiles only when
``n_jobs != 1``. Where the rest of `_lambdas`' compile time goes (numba 0.68, cold cache, CPU): LLVM's
optimisation of the one big function about half, numba's type inference a third, inlining the helpers
the rest; as separate compiled functions instead of inlined ones the total is the same or more
(measured: `_prepare_query` compiled on its own, 0.15-0.4 s more), and inlining the sort as well costs
~1.1 s more (the one big function's compilation grows faster than its size).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from ._jit import threads as numba_threads
from .sorting import _DIGIT, _sort_bucketed

_TINY = 1e-280  # below this ex_i / (ex_i + ex_j) loses digits: take the pair's own exp

#: rows of the integer workspace: rank -> document, grouped position -> rank, group starts, group cursors,
#: the sort's scratch, label counts (also the sort's bucket and digit counts), labels by rank
_I_ROWS = 7
#: rows of the float workspace: sort keys, gains, exponentials, discounts, lambdas and weights by rank,
#: log2(r + 2), the label-grouped exponentials, discounts, lambdas and weights (whole list; the first two
#: also hold a top-k row's per-pair terms in `_top_k_rows_plain`), 1 / log2(r + 2), the sort's key scratch,
#: the whole list's lane partial sums (two rows), per-pair gain factors and the scores by rank
_F_ROWS = 17
#: interleaved partial sums of a sweeping document's own terms in `_pair_sweep` (the float workspace's rows
#: are ``_LANES`` longer for them)
_LANES = 8


@njit(inline="always")
def _score_keys(scores, lo, n, key, idx):
    """Sort keys ``-s`` of documents ``lo:lo+n`` in ``key[:nn]`` with their offsets in ``idx[:nn]``, for the
    ``nn`` documents whose score is a number, in document order, then the offsets of those whose score is
    NaN in ``idx[nn:n]`` (NaN ranks last, ties in document order; a float comparison already ties -0 with
    +0); returns ``nn``. Sorting ``key[:nn]`` stably then gives ``np.argsort(-s, kind="mergesort")``."""
    nn = 0
    for t in range(n):
        v = -scores[lo + t]
        if v == v:
            key[nn] = v
            idx[nn] = t
            nn += 1
    j = nn
    for t in range(n):
        if not scores[lo + t] == scores[lo + t]:
            idx[j] = t
            j += 1
    return nn


#: `_lambdas`' marks in ``todo``: a query it left for another kernel
_UNDERFLOW = 1  # an exponential underflowed: pair by pair (`_lambdas_pairs`)
_WITHIN_K = 2   # at most k documents: every pair, grouped by label (`_lambdas_within`)


@njit(cache=True, error_model="numpy")
def _lambdas(y, qptr, scores, k, kd, ki, norm, sigma, lam, w, inv_max_dcg, gains, todo, q0, q1, iw, fw):
    """NDCG@k lambdas ``lam`` and weights ``w`` (``k > 0``, LambdaMART; no pair list) of queries ``q0:q1``,
    filled in place; returns the number of pairs with ``dZ > 0`` of the queries done here.

    One compiled kernel for LambdaMART's chain (issue 15.5: every jitted function costs compile time): per
    query `_prepare_query`, then `_top_k_rows_plain`. Two kinds of query are only marked in ``todo`` (their
    ``lam``, ``w`` left zero) for a kernel that compiles only when a fit meets one: ``_UNDERFLOW`` (an
    exponential underflowed: `_lambdas_pairs`) and ``_WITHIN_K`` (at most ``k`` documents:
    `_lambdas_within`; ~0.9 s of compilation that LETOR-sized queries never need). ``iw`` (int64,
    ``_I_ROWS x max(nmax + 1, 2**_DIGIT)``) and ``fw`` (float64, ``_F_ROWS x (nmax + 1 + _LANES)``) are the
    workspaces (`_workspaces`), ``nmax`` the largest query. ``k`` cuts the rows (pairs whose higher-ranked
    document is in the top ``k``), ``kd`` the discount and ``ki`` the ideal DCG (each ``<= 0``: the whole
    list); ``norm``: LightGBM's normalisation (`_normalise`).
    """
    order = iw[0]
    gain, ex, dr, lr, wr, sr = fw[1], fw[2], fw[3], fw[4], fw[5], fw[16]
    _log_discounts(fw)
    n_pairs = 0
    for q in range(q0, q1):
        todo[q] = 0
        n, kk, inv, ng, run = _prepare_query(q, y, qptr, scores, k, kd, ki, sigma, lam, w, inv_max_dcg,
                                             gains, iw, fw)
        if not run:
            continue
        if not _no_underflow(ex, n):
            todo[q] = _UNDERFLOW
            continue
        if kk == n:
            todo[q] = _WITHIN_K
            continue
        m, acc = _top_k_rows_plain(sigma, n, kk, inv, gain, ex, dr, lr, wr, fw[7], fw[8], norm, sr)
        n_pairs += m
        if norm:
            _normalise(lr, wr, n, acc)
        for r in range(n):
            lam[order[r]] = lr[r]
            w[order[r]] = wr[r]
    return n_pairs


@njit(cache=True, error_model="numpy")
def _lambdas_within(y, qptr, scores, k, kd, ki, norm, sigma, lam, w, inv_max_dcg, gains, queries, iw, fw):
    """NDCG@k lambdas and weights of the ``queries`` listed, each of at most ``k`` documents and with no
    exponential underflowed (`_lambdas` marks them ``_WITHIN_K``): every pair, grouped by label
    (`_within_k`). Returns the number of pairs with ``dZ > 0``."""
    order, pos, gstart, gptr, yr = iw[0], iw[1], iw[2], iw[3], iw[6]
    gain, ex, dr, lr, wr, sr = fw[1], fw[2], fw[3], fw[4], fw[5], fw[16]
    _log_discounts(fw)
    n_pairs = 0
    for t in range(queries.size):
        q = queries[t]
        n, kk, inv, ng, run = _prepare_query(q, y, qptr, scores, k, kd, ki, sigma, lam, w, inv_max_dcg,
                                             gains, iw, fw)
        m, acc = _within_k(sigma, n, kk, ng, inv, gain, ex, dr, yr, pos, gstart, gptr, lr, wr, norm, sr)
        n_pairs += m
        if norm:
            _normalise(lr, wr, n, acc)
        for r in range(n):
            lam[order[r]] = lr[r]
            w[order[r]] = wr[r]
    return n_pairs


@njit(cache=True, error_model="numpy")
def _lambdas_pairs(y, qptr, scores, k, kd, ki, norm, sigma, fill_pairs, lam, w, inv_max_dcg, gains, pa, pb,
                   pw, queries, iw, fw):
    """NDCG@k (or whole-list) lambdas and weights of the ``queries`` listed, pair by pair (`_top_k_rows`),
    and when ``fill_pairs`` their pair list ``(pa, pb, pw)`` in that order; returns the number of pairs with
    ``dZ > 0``. For the OLE criterion's pair list (every query) and for the queries `_lambdas` marked
    (an exponential underflowed: those pairs take their own ``exp``)."""
    order, yr = iw[0], iw[6]
    gain, ex, dr, lr, wr, sr = fw[1], fw[2], fw[3], fw[4], fw[5], fw[16]
    _log_discounts(fw)
    n_pairs = 0
    for t in range(queries.size):
        q = queries[t]
        n, kk, inv, ng, run = _prepare_query(q, y, qptr, scores, k, kd, ki, sigma, lam, w, inv_max_dcg,
                                             gains, iw, fw)
        if not run:
            continue
        m, acc = _top_k_rows(sigma, n, kk, inv, scores, order, yr, gain, ex, dr, lr, wr, fill_pairs,
                             pa, pb, pw, n_pairs, norm, sr)
        if norm:
            f = _normalise(lr, wr, n, acc)
            if fill_pairs:
                for u in range(n_pairs, n_pairs + m):
                    pw[u] *= f
        n_pairs += m
        for r in range(n):
            lam[order[r]] = lr[r]
            w[order[r]] = wr[r]
    return n_pairs


@njit(cache=True, error_model="numpy")
def _lambdas_whole(y, qptr, scores, sigma, lam, w, inv_max_dcg, gains, todo, q0, q1, iw, fw):
    """Whole-list lambdas and weights (``k <= 0``, BoostingTree's LambdaMART base; no pair list) of queries
    ``q0:q1``; returns the number of pairs with ``dZ > 0`` of the queries done here. A kernel of its own so
    that LambdaMART never compiles the grouped sweeps: per query `_prepare_query`, then `_whole_list`. A
    query where an exponential underflowed is only marked ``_UNDERFLOW`` in ``todo`` (its ``lam``, ``w``
    left zero) for `_lambdas_pairs`, as `_lambdas` marks it: the pair-by-pair loop compiles only when a fit
    meets one (~0.5 s of a first BoostingTree fit otherwise)."""
    order, pos, gstart = iw[0], iw[1], iw[2]
    gain, ex, dr, lr, wr = fw[1], fw[2], fw[3], fw[4], fw[5]
    E, D, GI, LAM, W, PC, PH = fw[7], fw[8], fw[15], fw[9], fw[10], fw[13], fw[14]
    _log_discounts(fw)
    n_pairs = 0
    for q in range(q0, q1):
        todo[q] = 0
        n, kk, inv, ng, run = _prepare_query(q, y, qptr, scores, 0, 0, 0, sigma, lam, w, inv_max_dcg, gains,
                                             iw, fw)
        if not run:
            continue
        if not _no_underflow(ex, n):
            todo[q] = _UNDERFLOW
            continue
        n_pairs += _whole_list(sigma, n, ng, inv, gain, ex, dr, pos, gstart, E, D, GI, LAM, W, PC, PH)
        for u in range(n):
            lr[pos[u]] = LAM[u]
            wr[pos[u]] = W[u]
        for r in range(n):
            lam[order[r]] = lr[r]
            w[order[r]] = wr[r]
    return n_pairs


@njit(inline="always")
def _log_discounts(fw):
    """``fw[6] = log2(r + 2)`` and ``fw[11] = 1 / log2(r + 2)`` for every rank ``r``, once per call."""
    lg, ilg = fw[6], fw[11]
    for r in range(lg.size):
        lg[r] = np.log2(r + 2.0)
        ilg[r] = 1.0 / lg[r]


@njit(inline="always")
def _no_underflow(ex, n):
    """Whether every exponential of the query is above ``_TINY`` (a NaN is not)."""
    for r in range(n):
        if not ex[r] > _TINY:
            return False
    return True


@njit(inline="always")
def _prepare_query(q, y, qptr, scores, k, kd, ki, sigma, lam, w, inv_max_dcg, gains, iw, fw):
    """Query ``q``'s per-rank workspaces: its documents ranked by score (stable, `_sort_bucketed`; ties by
    document order) with labels ``yr``, scores ``sr``, discounts ``dr`` of NDCG@kd (cut at rank ``kd``;
    ``kd <= 0``: never), gains (``gains[y]``, the table of `lambdamart_gradients`' ``label_gain``; an empty
    table: ``2^y - 1``) and one exponential ``ex = exp(sigma (s - s_max))`` each (``rho_ij = ex_j /
    (ex_i + ex_j)``), zeroed sums ``lr, wr``; the ranks grouped by label (``pos``, ``gstart``: a counting
    sort, a stable sort when the label range is wider than the workspace); ``1 / maxDCG@ki`` (``ki <= 0``:
    the whole list) from the groups, also stored in ``inv_max_dcg[q]``.

    Zeroes the query's ``lam`` and ``w``. Returns ``(n, kk, inv, ng, run)``: its size, the rows' cut
    ``min(k, n)`` (``k <= 0``: ``n``), ``1 / maxDCG@ki``, the number of label groups, and whether any pair
    can have ``dZ > 0`` (two documents or more, a relevant one, two labels or more).
    """
    order, pos, gstart, cnt, yr, tmp = iw[0], iw[1], iw[2], iw[5], iw[6], iw[4]
    key, gain, ex, dr, lr, wr, lg, ilg, key2 = fw[0], fw[1], fw[2], fw[3], fw[4], fw[5], fw[6], fw[11], fw[12]
    sr = fw[16]
    lo, hi = qptr[q], qptr[q + 1]
    n = hi - lo
    for i in range(lo, hi):
        lam[i] = 0.0
        w[i] = 0.0
    inv_max_dcg[q] = 0.0
    if n < 2:
        return n, 0, 0.0, 0, False
    # ranks: the scores in decreasing order, ties by document order
    nn = _score_keys(scores, lo, n, key, order)
    _sort_bucketed(key, order, key2, tmp, pos, iw[3], cnt, nn)
    kk = n if (k <= 0 or k > n) else k
    kdd = n if (kd <= 0 or kd > n) else kd
    smax = scores[lo + order[0]]
    for r in range(n):
        d = lo + order[r]
        order[r] = d
        yr[r] = y[d]
        dr[r] = ilg[r] if r < kdd else 0.0           # disc(r) of NDCG@kd
        ex[r] = np.exp(sigma * (scores[d] - smax))  # rho_ij = ex_j / (ex_i + ex_j)
        sr[r] = scores[d]
        lr[r] = 0.0
        wr[r] = 0.0
    # ranks grouped by label: pos[u] is the rank at grouped position u, group g owns gstart[g]:gstart[g+1]
    ymin = yr[0]
    ymax = yr[0]
    for r in range(1, n):
        if yr[r] < ymin:
            ymin = yr[r]
        if yr[r] > ymax:
            ymax = yr[r]
    width = ymax - ymin + 1
    ng = 0
    if width <= cnt.size:  # a counting sort
        for v in range(width):
            cnt[v] = 0
        for r in range(n):
            cnt[yr[r] - ymin] += 1
        u = 0
        for v in range(width):  # cnt[v] becomes the first position of label ymin + v
            c = cnt[v]
            if c > 0:
                gstart[ng] = u
                ng += 1
            cnt[v] = u
            u += c
        for r in range(n):
            v = yr[r] - ymin
            pos[cnt[v]] = r
            cnt[v] += 1
    else:
        for r in range(n):
            key[r] = yr[r]
            pos[r] = r
        _sort_bucketed(key, pos, key2, tmp, gstart, iw[3], cnt, n)
        for u in range(n):
            if u == 0 or yr[pos[u]] != yr[pos[u - 1]]:
                gstart[ng] = u
                ng += 1
    gstart[ng] = n
    tabled = gains.size > 0
    for g in range(ng):  # gains by rank, one per label group: the table's g(y) (label_gain), else 2^y - 1,
        # exact (no integer-power loop). The ufunc takes the int64 label as it is: `math.ldexp` wants a
        # Python int (`int()`, one more builtin implementation to compile, issue 15.5); the same value
        yv = yr[pos[gstart[g]]]
        gv = gains[yv] if tabled else np.ldexp(1.0, yv) - 1.0
        for u in range(gstart[g], gstart[g + 1]):
            gain[pos[u]] = gv
    # maxDCG@ki: the gains in decreasing order, summed by rank
    kki = n if (ki <= 0 or ki > n) else ki
    ideal = 0.0
    r = 0
    for g in range(ng - 1, -1, -1):
        gv = gain[pos[gstart[g]]]
        for _ in range(gstart[g + 1] - gstart[g]):
            if r >= kki:
                break
            ideal += gv / lg[r]
            r += 1
    inv = 1.0 / ideal if ideal > 0.0 else 0.0
    inv_max_dcg[q] = inv
    if inv == 0.0 or ng < 2:  # no relevant document, or all labels equal: no pair has dZ > 0
        return n, kk, inv, ng, False
    return n, kk, inv, ng, True


@njit(inline="always")
def _whole_list(sigma, n, ng, inv, gain, ex, dr, pos, gstart, E, D, GI, LAM, W, PC, PH):
    """The pair loop of one whole-list query (no pair list, no underflow): lambdas ``LAM`` and weights ``W``
    in label-grouped positions (``pos`` maps them to ranks).

    Documents are laid out by label group (structure of arrays: exponential ``E``, discount ``D``), and
    each pair of documents with different labels is visited once (one division per pair,
    `_pair_sweep`): every document of a group sweeps all the less relevant documents at once (the
    groups below its own are contiguous), so the sweeps are long and few when the least relevant
    documents are the most numerous (the usual case). ``GI`` holds, per swept document,
    ``sigma |g_a - g_b| / maxDCG`` for the group being swept from. A swept document's sums take their
    terms in sweep order (by sweeping group, then by position in it), a sweeping document's own in
    `_pair_sweep`'s fixed lane order: nothing depends on how the compiler vectorises. Returns the
    number of pairs with ``dZ > 0``.
    """
    for u in range(n):
        t = pos[u]
        E[u] = ex[t]
        D[u] = dr[t]
        LAM[u] = 0.0
        W[u] = 0.0
    m = 0
    for g in range(1, ng):
        m += (gstart[g + 1] - gstart[g]) * gstart[g]
    for g in range(1, ng):
        o0, o1 = gstart[g], gstart[g + 1]
        ga = gain[pos[o0]]
        for v in range(o0):
            GI[v] = sigma * (abs(ga - gain[pos[v]]) * inv)
        _pair_sweep(E[o0:o1], D[o0:o1], LAM[o0:o1], W[o0:o1], E[:o0], D[:o0], GI[:o0], LAM[:o0], W[:o0],
                    sigma, PC, PH)
    return m


@njit(cache=True, error_model="numpy")
def _pair_sweep(EA, DA, LA, WA, E, D, GI, LAM, W, sigma, PC, PH):
    """Every pair of a sweeping document ``a`` (views ``EA, DA, LA, WA`` of exponentials, discounts, lambdas
    and weights) with every less relevant document ``b`` (views ``E, D, LAM, W``; ``GI[b] =
    sigma |g_a - g_b| / maxDCG``), each pair's terms computed once, with one division::

        c = sigma dZ rho               rho = e_b / (e_a + e_b),  dZ = |d_a - d_b| |g_a - g_b| / maxDCG
        h = sigma^2 dZ rho (1 - rho) = c sigma e_a / (e_a + e_b)

    ``LAM[b] -= c``, ``W[b] += h`` in place (no reduction: each ``b`` takes the ``a`` in order), and
    ``LA[a] += sum_b c``, ``WA[a] += sum_b h`` in a fixed order: ``_LANES = 8`` interleaved partial sums,
    lane ``j`` adding the terms of ``b = j, j + 8, j + 16, ...`` in turn, kept in the rows ``PC``, ``PH``
    (``PC[b + 8] = PC[b] + c_b``, at least ``E.size + 8`` long), then the eight lanes added in a fixed
    tree (`_lanes_sum`). The partial sums are a dependence at distance 8, not a reduction, so the loop
    vectorises (``error_model="numpy"``: ``e_a + e_b > 0`` here, and Python's zero-division check would
    keep the division scalar) and the result is the one of this loop run in order whatever width LLVM
    picks; no ``fastmath`` (no reassociation). Kept a compiled function of its own, not inlined (inside
    the big kernel LLVM vectorised the former sweep worse, measured).
    """
    nb = E.size
    for u in range(EA.size):
        ea = EA[u]
        da = DA[u]
        sea = sigma * ea
        for j in range(_LANES):
            PC[j] = 0.0
            PH[j] = 0.0
        for v in range(nb):
            eb = E[v]
            iv = 1.0 / (ea + eb)
            z = abs(da - D[v]) * GI[v]              # sigma |Delta NDCG| of swapping the two documents
            c = z * (eb * iv)                       # sigma dZ rho
            h = c * (sea * iv)                      # sigma^2 dZ rho (1 - rho)
            LAM[v] -= c
            W[v] += h
            PC[v + _LANES] = PC[v] + c
            PH[v + _LANES] = PH[v] + h
        LA[u] += _lanes_sum(PC, nb)
        WA[u] += _lanes_sum(PH, nb)


@njit(inline="always")
def _lanes_sum(P, nb):
    """`_pair_sweep`'s eight lanes, ``P[nb:nb + 8]`` (lane ``(nb + j) % 8`` at ``P[nb + j]``), added in a
    fixed tree order."""
    return (((P[nb] + P[nb + 1]) + (P[nb + 2] + P[nb + 3]))
            + ((P[nb + 4] + P[nb + 5]) + (P[nb + 6] + P[nb + 7])))


@njit(inline="always")
def _within_k(sigma, n, kk, ng, inv, gain, ex, dr, yr, pos, gstart, gptr, lr, wr, norm, sr):
    """The pair loop of one query of at most ``k`` documents (no pair list, no underflow): documents grouped
    by label, so only pairs of different labels are visited; adds into ``lr``/``wr`` (by rank), the rank
    ``r``'s own terms summed apart and added once. With ``norm`` each ``dZ`` is divided by the pair's score
    distance (`_spread`). Returns the number of pairs with ``dZ > 0`` and the sum of the pairs'
    ``sigma dZ rho`` (`_normalise`)."""
    s2 = sigma * sigma
    spread = _spread(norm, sr, n)
    acc = 0.0
    for g in range(ng):
        gptr[g] = gstart[g]
    m = 0
    for r in range(kk):
        ya = yr[r]
        ga = gain[r]
        da = dr[r]
        ea = ex[r]
        sa = sr[r]
        la = 0.0
        wa = 0.0
        for g in range(ng):
            e = gstart[g + 1]
            u = gptr[g]
            while u < e and pos[u] <= r:  # first rank of the group below rank r
                u += 1
            gptr[g] = u
            yb = yr[pos[gstart[g]]]
            if yb == ya or u == e:
                continue
            dg = abs(ga - gain[pos[gstart[g]]]) * inv
            m += e - u
            up = ya > yb  # the document at rank r is the more relevant one: rho = ex_b / (ex_a + ex_b)
            for v in range(u, e):
                t = pos[v]
                eb = ex[t]
                dz = (da - dr[t]) * dg  # Delta NDCG of the swap (da > dr[t]: rank r above t)
                if spread:
                    dz = dz / (_SPREAD + abs(sa - sr[t]))
                iv = 1.0 / (ea + eb)
                c = sigma * dz * (eb if up else ea) * iv
                h = s2 * dz * (ea * iv) * (eb * iv)
                la += c if up else -c  # (x - c is x + (-c) exactly)
                lr[t] -= c if up else -c
                wa += h
                wr[t] += h
                acc += c
        lr[r] += la
        wr[r] += wa
    return m, acc


@njit(inline="always")
def _top_k_rows_plain(sigma, n, kk, inv, gain, ex, dr, lr, wr, ct, ht, norm, sr):
    """`_top_k_rows` without the pair list and with no exponential underflowed, the same sums bit for bit
    without a branch per pair: a pair of equal labels adds exact zeros (``dZ = 0``; no NaN or infinity
    reaches here, and a sum that starts at +0 never becomes -0, so ``x + 0 = x``) and the more relevant
    document is chosen by selects on the gains (``g_a > g_b`` wherever ``y_a > y_b`` gives ``dZ > 0``:
    gains are finite here and non-decreasing in the label, `lambdamart_gradients` checks a ``label_gain``
    table for it; where two labels share a gain ``dZ = 0`` and either choice adds zeros, as in the
    pair-by-pair loop, which skips such a pair). Each top-k rank ``r`` takes two sweeps over the ranks
    below it: the first computes every pair's terms into ``ct``, ``ht`` (no reduction and indices from 0 on
    views, so it vectorises: one division per pair), the second adds them into rank ``r``'s own sums in rank
    order and into the lower documents' sums, the order of the pair-by-pair loop (a serial chain of
    additions: without reassociation it cannot vectorise, so it is kept apart from the divisions). With
    ``norm`` each ``dZ`` is divided by the pair's score distance (`_spread`). Returns the number of pairs
    with ``dZ > 0`` and the sum of the pairs' ``sigma dZ rho`` (`_normalise`)."""
    m = 0
    s2 = sigma * sigma
    spread = _spread(norm, sr, n)
    acc = 0.0
    for r in range(kk):
        ga = gain[r]
        da = dr[r]
        ea = ex[r]
        sa = sr[r]
        E, G, D, S, C, H = ex[r + 1:n], gain[r + 1:n], dr[r + 1:n], sr[r + 1:n], ct[r + 1:n], ht[r + 1:n]
        for t in range(E.size):  # (indices from 0 on views: provably not negative, so it vectorises)
            eb = E[t]
            gb = G[t]
            dz = abs((da - D[t]) * (ga - gb)) * inv         # |Delta NDCG| of the swap (0 for equal labels)
            if spread:
                dz = dz / (_SPREAD + abs(sa - S[t]))
            up = ga > gb                                    # rank r is the more relevant document
            sg = 1.0 if up else -1.0
            ei = ea if up else eb
            ej = eb if up else ea
            inv_den = 1.0 / (ei + ej)
            rho = ej * inv_den                              # 1 / (1 + exp(sigma (s_i - s_j)))
            rr = (ei * inv_den) * rho
            C[t] = sg * (sigma * dz) * rho                  # lambda_i += sigma dZ rho (or lambda_j -=)
            H[t] = s2 * dz * rr                             # w_i, w_j += sigma^2 dZ rho (1 - rho)
            m += 1 if dz != 0.0 else 0
        la = lr[r]
        wa = wr[r]
        for t in range(r + 1, n):  # rank r's sums in rank order; the lower documents' sums
            c = ct[t]
            h = ht[t]
            la += c
            wa += h
            lr[t] -= c
            wr[t] += h
            acc += abs(c)
        lr[r] = la
        wr[r] = wa
    return m, acc


@njit(inline="always")
def _top_k_rows(sigma, n, kk, inv, scores, order, yr, gain, ex, dr, lr, wr, fill_pairs, pa, pb, pw, n0,
                norm, sr):
    """Pair by pair: the top-``kk`` ranks against every rank below them, adding into ``lr``/``wr`` (by rank)
    and, when ``fill_pairs``, writing the pairs from ``pa[n0]`` on. ``rho`` from the two exponentials, or
    from the pair's own ``exp`` where both underflow; with ``norm`` each ``dZ`` divided by the pair's
    score distance (`_spread`). Returns the number of pairs with ``dZ > 0`` and the sum of the pairs'
    ``sigma dZ rho`` (`_normalise`)."""
    m = n0
    spread = _spread(norm, sr, n)
    acc = 0.0
    for r in range(kk):
        ya = yr[r]
        ga = gain[r]
        da = dr[r]
        ea = ex[r]
        sa = scores[order[r]]
        for t in range(r + 1, n):
            yb = yr[t]
            if ya == yb:
                continue
            dz = abs((da - dr[t]) * (ga - gain[t])) * inv   # |Delta NDCG| of the swap
            if dz == 0.0:
                continue
            if spread:
                dz = dz / (_SPREAD + abs(sr[r] - sr[t]))
            if ya > yb:   # i = rank r is the more relevant document
                i, j, ei, ej, si, sj = r, t, ea, ex[t], sa, scores[order[t]]
            else:
                i, j, ei, ej, si, sj = t, r, ex[t], ea, scores[order[t]], sa
            if ei > _TINY and ej > _TINY:  # rho_ij = 1 / (1 + exp(sigma (s_i - s_j))) = e_j / (e_i + e_j)
                inv_den = 1.0 / (ei + ej)
                rho = ej * inv_den
                rr = (ei * inv_den) * rho
            else:
                rho = 1.0 / (1.0 + np.exp(sigma * (si - sj)))
                rr = rho * (1.0 - rho)
            lr[i] += sigma * dz * rho
            lr[j] -= sigma * dz * rho
            acc += sigma * dz * rho
            h = sigma * sigma * dz * rr
            wr[i] += h
            wr[j] += h
            if fill_pairs:
                pa[m] = order[i]
                pb[m] = order[j]
                pw[m] = h
            m += 1
    return m - n0, acc


#: LightGBM's ``lambdarank_norm``: each pair's ``|Delta NDCG|`` divided by ``_SPREAD + |s_i - s_j|``
_SPREAD = 0.01


@njit(inline="always")
def _spread(norm, sr, n):
    """Whether the pairs' ``dZ`` are divided by their score distance, ``dZ / (0.01 + |s_i - s_j|)``: with
    LightGBM's normalisation (``norm``) once the query's scores are not all equal (LightGBM's
    ``best_score != worst_score``: on the first tree every pair keeps its ``dZ``)."""
    return norm and n > 1 and sr[0] != sr[n - 1]


@njit(inline="always")
def _normalise(lr, wr, n, acc):
    """LightGBM's per-query normalisation (``lambdarank_norm``): the query's lambdas and weights times
    ``log2(1 + S) / S``, ``S = 2 sum_pairs sigma dZ rho`` (``acc`` is the sum), which damps queries with
    many or large lambdas. Returns the factor (1 when ``S = 0``)."""
    s = 2.0 * acc
    if not s > 0.0:
        return 1.0
    f = np.log2(1.0 + s) / s
    for r in range(n):
        lr[r] *= f
        wr[r] *= f
    return f


@njit(cache=True, parallel=True)
def _lambdas_parallel(y, qptr, scores, k, kd, ki, norm, whole, sigma, lam, w, inv_max_dcg, gains, todo,
                      counts, iw, fw):
    """Parallel twin of `_lambdas` / `_lambdas_whole` (``whole``) without the pair list: ``prange`` over
    ``n_chunks = counts.size`` chunks of queries, each with its own workspaces ``iw[c]``, ``fw[c]``; every
    query is computed exactly as in the serial pass (results do not depend on threads; the caller finishes
    the queries marked in ``todo``). ``counts[c]`` gets chunk ``c``'s number of pairs with ``dZ > 0``
    (an array from the caller: no NumPy constructor compiled here). Compiled only when ``n_jobs != 1``."""
    nq = qptr.size - 1
    n_chunks = counts.size
    for c in prange(n_chunks):
        q0 = c * nq // n_chunks
        q1 = (c + 1) * nq // n_chunks
        if whole:
            counts[c] = _lambdas_whole(y, qptr, scores, sigma, lam, w, inv_max_dcg, gains, todo, q0, q1,
                                       iw[c], fw[c])
        else:
            counts[c] = _lambdas(y, qptr, scores, k, kd, ki, norm, sigma, lam, w, inv_max_dcg, gains, todo,
                                 q0, q1, iw[c], fw[c])


@njit(cache=True, parallel=True)
def _lambdas_within_parallel(y, qptr, scores, k, kd, ki, norm, sigma, lam, w, inv_max_dcg, gains, queries,
                             counts, iw, fw):
    """Parallel twin of `_lambdas_within`: ``prange`` over ``counts.size`` chunks of the ``queries``
    listed, each chunk with its own workspaces ``iw[c]``, ``fw[c]`` and its number of pairs with ``dZ > 0``
    in ``counts[c]``; every query computed exactly as in the serial kernel (the same bits). Compiled only
    when a fit on threads meets queries of at most ``k`` documents (every query of the whole list)."""
    nq = queries.size
    n_chunks = counts.size
    for c in prange(n_chunks):
        q0 = c * nq // n_chunks
        q1 = (c + 1) * nq // n_chunks
        counts[c] = _lambdas_within(y, qptr, scores, k, kd, ki, norm, sigma, lam, w, inv_max_dcg, gains,
                                    queries[q0:q1], iw[c], fw[c])


def _workspaces(qptr: np.ndarray, n_chunks: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The integer and float workspaces of `_lambdas`, sized for the largest query (one per chunk when
    ``n_chunks > 0``)."""
    nmax = int(np.max(np.diff(qptr))) if qptr.size > 1 else 1
    lead = (n_chunks,) if n_chunks > 0 else ()
    return (np.empty(lead + (_I_ROWS, max(nmax + 1, 1 << _DIGIT)), dtype=np.int64),  # the radix's counts
            np.empty(lead + (_F_ROWS, nmax + 1 + _LANES), dtype=np.float64))


def _cut(value, name: str) -> int:
    """An integer rank cut from a caller (``None``: 0, no cut), refused with the parameter's name when it is
    not an integer (a bool is not) or, for ``truncation_level``, below 1."""
    if value is None:
        return 0
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"lambdamart_gradients: {name} must be an int, got {value!r}")
    if name == "truncation_level" and value < 1:
        raise ValueError(f"lambdamart_gradients: truncation_level must be >= 1 or None, got {value}")
    return int(value)


def _gain_table(label_gain, y: np.ndarray) -> np.ndarray:
    """The gain table of ``label_gain`` for the labels ``y`` (float64, indexed by label; empty for ``None``:
    the kernels' ``2^y - 1``), refused with ``label_gain`` named when a gain is not finite, negative or
    smaller than a lower label's, when it is too short for the largest label or a label is negative."""
    if label_gain is None:
        return np.empty(0)
    ymax = int(y.max()) if y.size else 0
    if y.size and int(y.min()) < 0:
        raise ValueError(f"lambdamart_gradients: label_gain needs labels >= 0, got label {int(y.min())}")
    if isinstance(label_gain, str):
        if label_gain != "linear":
            raise ValueError(f"lambdamart_gradients: label_gain must be None, 'linear' or an array of gains, "
                             f"got {label_gain!r}")
        return np.arange(ymax + 1, dtype=np.float64)  # g(y) = y (CatBoost's LambdaMart)
    try:
        g = np.array(label_gain, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"lambdamart_gradients: label_gain must be None, 'linear' or an array of gains, "
                        f"got {label_gain!r}") from None
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"lambdamart_gradients: label_gain must be a non-empty 1-d array of gains, got "
                         f"shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError(f"lambdamart_gradients: label_gain must be finite, got {g.tolist()}")
    if np.any(g < 0):
        raise ValueError(f"lambdamart_gradients: label_gain must be >= 0, got {g.tolist()}")
    if np.any(np.diff(g) < 0):  # the kernels pick a pair's more relevant document by its larger gain
        raise ValueError(f"lambdamart_gradients: label_gain must be non-decreasing in the label, got "
                         f"{g.tolist()}")
    if ymax >= g.size:
        raise ValueError(f"lambdamart_gradients: label_gain has {g.size} gains (labels 0..{g.size - 1}) but "
                         f"the data have label {ymax}")
    return np.ascontiguousarray(g)


def check_label_gain(label_gain: str | np.ndarray | list[float] | None, y: np.ndarray) -> np.ndarray:
    """``label_gain`` checked against the labels ``y`` as `lambdamart_gradients` checks it (a ValueError or
    TypeError naming ``label_gain``), for an estimator to refuse a bad table before it bins its features;
    returns the gain table (empty for ``None``)."""
    return _gain_table(label_gain, np.ascontiguousarray(y, dtype=np.int32))


def lambdamart_gradients(
    y: np.ndarray, qptr: np.ndarray, scores: np.ndarray, k: int = 10, sigma: float = 1.0,
    with_pairs: bool = False, n_jobs: int = 1, *, truncation_level: int | None = None, norm: bool = False,
    label_gain: str | np.ndarray | list[float] | None = None,
):
    """Lambdas and weights of LambdaMART for the current ``scores``.

    Parameters
    ----------
    y : int array (n,)
        Labels.
    qptr : int64 array (n_queries + 1,)
        Query offsets.
    scores : float64 array (n,)
        Current model scores.
    k : int
        NDCG truncation: the discount is ``1 / log2(r + 2)`` for 0-based ranks ``r < k`` and 0 below, and
        ``maxDCG`` is the ideal DCG@k (``<= 0``: the whole list, no cut).
    sigma : float
        The sigmoid's shape parameter.
    with_pairs : bool
        Also return the pair list ``(pa, pb, pw)`` for the exact (OLE) second derivative.
    n_jobs : int
        Threads (``prange`` over queries; ``-1``: numba's thread count); the results are the same bit
        for bit. The pair list (``with_pairs``) is always filled serially. The parallel twin is
        compiled (or loaded from the cache) on its first use only: ``n_jobs=1`` never compiles it.
    truncation_level : int or None
        LightGBM's ``lambdarank_truncation_level``: only the pairs whose higher-scored document ranks in
        the top ``truncation_level`` (0-based ranks below it) contribute; with ``k <= 0`` the ideal DCG is
        cut there too (LightGBM's ``1 / maxDCG@truncation_level``), while the discount still runs down the
        whole list. ``None``: the pairs of NDCG@k (every pair with a document in the top ``k``; all pairs
        for ``k <= 0``). LightGBM's lambdarank is ``k=0, truncation_level=30, norm=True``.
    norm : bool
        LightGBM's ``lambdarank_norm``: once a query's scores are not all equal, each pair's ``|Delta NDCG|``
        is divided by ``0.01 + |s_i - s_j|``; then the query's lambdas and weights are multiplied by
        ``log2(1 + S) / S``, ``S`` twice the sum of its pairs' ``sigma |Delta NDCG| rho``. (LightGBM reads
        ``rho`` from a table of the sigmoid and keeps float32 gradients; here ``rho`` is exact.)
    label_gain : None, "linear" or array-like of float
        The gain ``g(y)`` of a label in ``dZ`` and ``maxDCG``. ``None``: ``2^y - 1`` (the same bits as
        before the option). ``"linear"``: ``g(y) = y`` (CatBoost's LambdaMart default). An array: LightGBM's
        ``label_gain``, ``g(y) = label_gain[y]`` for the labels ``0..len(label_gain) - 1``: finite, ``>= 0``
        and non-decreasing in the label (two labels of equal gain make their pairs weigh 0), at least
        ``max(y) + 1`` long; a table needs labels ``>= 0``.

    Returns
    -------
    lam, w : float64 arrays (n,)
    pairs : tuple of arrays or None
    """
    y = np.ascontiguousarray(y, dtype=np.int32)
    qptr = np.ascontiguousarray(qptr, dtype=np.int64)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if y.ndim != 1 or y.shape != scores.shape or qptr.ndim != 1 or qptr.size < 1 or qptr[-1] != y.size:
        raise ValueError("y, scores and qptr do not describe the same documents")
    n = y.size
    if np.any(np.diff(qptr) < 0) or qptr[0] != 0:
        raise ValueError("qptr must start at 0 and be non-decreasing")
    if not isinstance(norm, (bool, np.bool_)):
        raise TypeError(f"lambdamart_gradients: norm must be a bool, got {norm!r}")
    level = _cut(truncation_level, "truncation_level")
    k, sigma, nq, norm = _cut(k, "k"), float(sigma), int(qptr.size - 1), bool(norm)
    gains = _gain_table(label_gain, y)     # g(y) = gains[y]; empty: 2^y - 1
    kr = level if level > 0 else k         # the rows: pairs whose higher-scored document ranks above kr
    ki = k if k > 0 else level             # the ideal DCG's cut
    whole = kr <= 0 and ki <= 0 and not norm  # BoostingTree's whole list: the grouped sweeps
    lam = np.empty(n)
    w = np.empty(n)
    inv = np.zeros(nq)
    pairs = None
    if with_pairs:
        # an upper bound on the pairs with dZ > 0: every (top-kr, below) pair of every query
        sizes = np.diff(qptr)
        kk = sizes if kr <= 0 else np.minimum(sizes, kr)
        cap = int(np.sum(kk * (sizes - 1) - kk * (kk - 1) // 2))
        pa = np.empty(cap, dtype=np.int64)
        pb = np.empty(cap, dtype=np.int64)
        pw = np.empty(cap)
        iw, fw = _workspaces(qptr)
        m = _lambdas_pairs(y, qptr, scores, kr, k, ki, norm, sigma, True, lam, w, inv, gains, pa, pb, pw,
                           np.arange(nq, dtype=np.int64), iw, fw)
        return lam, w, (pa[:m].copy(), pb[:m].copy(), pw[:m].copy())
    todo = np.zeros(nq, dtype=np.int8)  # queries `_lambdas` / `_lambdas_whole` left to another kernel
    threads = 1
    if n_jobs != 1 and nq > 1:
        with numba_threads(n_jobs) as threads:  # chunks of queries balance uneven query sizes; each
            chunks = min(nq, 8 * threads)  # query is computed as in the serial pass
            iw, fw = _workspaces(qptr, chunks)
            _lambdas_parallel(y, qptr, scores, kr, k, ki, norm, whole, sigma, lam, w, inv, gains, todo,
                              np.zeros(chunks, dtype=np.int64), iw, fw)
            iw, fw = iw[0], fw[0]
    elif whole:
        iw, fw = _workspaces(qptr)
        _lambdas_whole(y, qptr, scores, sigma, lam, w, inv, gains, todo, 0, nq, iw, fw)
    else:
        iw, fw = _workspaces(qptr)
        _lambdas(y, qptr, scores, kr, k, ki, norm, sigma, lam, w, inv, gains, todo, 0, nq, iw, fw)
    if todo.any():
        _finish_marked(y, qptr, scores, (kr, k, ki, norm), sigma, lam, w, inv, gains, todo, iw, fw, threads)
    return lam, w, pairs


def _finish_marked(y, qptr, scores, cuts, sigma, lam, w, inv, gains, todo, iw, fw, threads=1) -> None:
    """The queries `_lambdas` / `_lambdas_whole` marked: those of at most ``k`` documents with
    `_lambdas_within` (on ``threads`` threads by `_lambdas_within_parallel` when there are several; every
    query of a whole-list fit with LightGBM's normalisation), those where an exponential underflowed pair by
    pair, each with its own ``exp`` where both underflow (`_lambdas_pairs`). Each kernel compiles on a
    fit's first such query only. ``cuts`` is ``(rows, discount, ideal, norm)`` as `_lambdas` takes them."""
    within = np.flatnonzero(todo == _WITHIN_K).astype(np.int64)
    if within.size > 1 and threads > 1:
        with numba_threads(threads):
            chunks = min(within.size, 8 * threads)
            iwc, fwc = _workspaces(qptr, chunks)
            _lambdas_within_parallel(y, qptr, scores, *cuts, sigma, lam, w, inv, gains, within,
                                     np.zeros(chunks, dtype=np.int64), iwc, fwc)
    elif within.size:
        _lambdas_within(y, qptr, scores, *cuts, sigma, lam, w, inv, gains, within, iw, fw)
    under = np.flatnonzero(todo == _UNDERFLOW).astype(np.int64)
    if under.size:
        e_i = np.empty(0, dtype=np.int64)
        _lambdas_pairs(y, qptr, scores, *cuts, sigma, False, lam, w, inv, gains, e_i, e_i, np.empty(0), under,
                       iw, fw)


def warmup() -> None:
    """Compile the lambda kernels on toy queries, the parallel twins included: with ``n_jobs`` above 1 on
    several queries a fit takes `_lambdas_parallel` and, where numba has several threads and two queries
    are within ``k``, `_lambdas_within_parallel` (LambdaMART's lambdas do from 50,000 documents on)."""
    y = np.array([2, 0, 1, 0], dtype=np.int32)
    qptr = np.array([0, 4], dtype=np.int64)
    lambdamart_gradients(y, qptr, np.zeros(4), k=3)
    lambdamart_gradients(y, qptr, np.zeros(4), k=10)  # a query within k
    lambdamart_gradients(y, qptr, np.zeros(4), k=3, with_pairs=True)
    lambdamart_gradients(y, qptr, np.zeros(4), k=0)
    y = np.array([2, 0, 1, 0, 1, 0, 0, 2], dtype=np.int32)
    qptr = np.array([0, 4, 6, 8], dtype=np.int64)  # one query longer than k = 3, two within it
    lambdamart_gradients(y, qptr, np.zeros(8), k=3, n_jobs=-1)
