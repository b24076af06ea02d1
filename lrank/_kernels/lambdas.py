"""LambdaMART's lambdas and second-order weights per query (Wu, Burges, Svore & Gao 2010).

For every query and every pair ``(i, j)`` of its documents with ``y_i > y_j`` (ALGORITHMS.md section 6,
step (b); RankLib's ``computePseudoResponses``)::

    dZ   = |(disc(r_i) - disc(r_j)) (g_i - g_j)| / maxDCG_q       |Delta NDCG@k| of swapping i and j
    rho  = 1 / (1 + exp(sigma (s_i - s_j)))
    lambda_i += sigma dZ rho                  lambda_j -= sigma dZ rho
    w_i      += sigma^2 dZ rho (1 - rho)      w_j      += sigma^2 dZ rho (1 - rho)

with gains ``g = 2^y - 1``, ranks ``r`` from sorting the current scores in decreasing order (ties broken
by document order, a stable sort), discount ``disc(r) = 1 / log2(r + 2)`` for 0-based ranks
``r < k`` and 0 beyond (NDCG@k; ``k <= 0`` means the whole list), and ``maxDCG_q`` the ideal DCG@k of
the query. A query whose ideal DCG is 0 (no relevant document) or whose labels are all equal gets zero
lambdas and weights. The global factor ``1/n`` of the BoostingTree paper cancels in every leaf value
and is omitted. ``lambda > 0`` pushes a document up; the gradient of the implicit loss is ``-lambda``.

The pairwise weights ``w_ij = sigma^2 dZ rho (1 - rho)`` are also returned as a pair list (pairs with
``dZ > 0`` only) for the tree-fitting paper's OLE criterion, whose exact node second derivative
subtracts the pairs that fall inside one node (Example 3-4 of Xia, Zhai & Wang).

Cost: one ``exp`` per document, not per pair: with ``e_i = exp(sigma (s_i - s_max))`` (``s_max`` the
query's top score, so ``e_i <= 1`` never overflows), ``rho = e_j / (e_i + e_j)`` and
``rho (1 - rho) = e_i e_j / (e_i + e_j)^2``; a pair whose two exponentials underflow takes its own
``exp``. The whole-list lambdas (``k <= 0``) of BoostingTree's LambdaMART base are O(n_q^2) divisions,
laid out so they vectorise without reassociation (`_lambdas_whole`): the documents of a query are
grouped by label once per call (a counting sort), stored by group (structure of arrays), and every
pair of label groups is swept twice, each sweep adding into a contiguous run of per-document sums
(no reduction in the inner loop, ``error_model="numpy"`` so the division is not guarded). The sums
thus take their terms in a fixed order (by group, then by rank), not the order of the NDCG@k loop:
whole-list lambdas differ from a pair-by-pair sum in the last bits. NDCG@k lambdas (``k > 0``,
LambdaMART) keep the pair-by-pair order and their bits.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit


@njit(cache=True)
def _label_counts(y, lo, hi, cnt):
    """Counts of each label of documents ``lo:hi`` in ``cnt[0 : ymax - ymin + 1]``; returns ``(ymin, width)``
    or ``(ymin, -1)`` when the label range is wider than ``cnt`` (then callers sort instead)."""
    ymin = y[lo]
    ymax = y[lo]
    for d in range(lo + 1, hi):
        ymin = min(ymin, y[d])
        ymax = max(ymax, y[d])
    width = ymax - ymin + 1
    if width > cnt.size:
        return ymin, -1
    for v in range(width):
        cnt[v] = 0
    for d in range(lo, hi):
        cnt[y[d] - ymin] += 1
    return ymin, width


@njit(cache=True)
def _ideal_inv(y, lo, hi, kk, lg, gain, cnt):
    """``1 / maxDCG@kk`` of the query (0 when it is 0): the gains in decreasing order, summed by rank.

    Labels are counted (no sort) when their range is small; ``gain`` holds the query's gains (any order).
    """
    n = hi - lo
    ideal = 0.0
    ymin, width = _label_counts(y, lo, hi, cnt)
    if width > 0:
        r = 0
        for v in range(width - 1, -1, -1):
            gv = 2.0 ** (ymin + v) - 1.0
            for _ in range(cnt[v]):
                if r >= kk:
                    break
                ideal += gv / lg[r]
                r += 1
    else:
        og = np.argsort(-gain[:n], kind="mergesort")  # the scores' argsort: no second sort compiled
        for r in range(kk):
            ideal += gain[og[r]] / lg[r]
    return 1.0 / ideal if ideal > 0.0 else 0.0


@njit(cache=True)
def _query_prep(y, scores, lo, hi, k, sigma, disc, order, gain, ex, lg, cnt):
    """Sort the query by score (stable) and fill the per-document workspaces.

    ``disc`` (per document) gets ``1/log2(r + 2)`` for ranks ``r < min(k, n)`` and 0 beyond (``lg[r]`` is
    ``log2(r + 2)``, tabled once per call); ``order[r]`` is the document at rank ``r``,
    ``gain[r] = 2^y - 1`` and ``ex[r] = exp(sigma (s - s_max))`` of that document (one ``exp`` per
    document: the sigmoid of a pair is then ``rho_ij = 1 / (1 + exp(sigma (s_i - s_j)))``
    ``= ex_j / (ex_i + ex_j)``).
    Returns (1/maxDCG@k or 0, the cut ``min(k, n)``).
    """
    n = hi - lo
    o = np.argsort(-scores[lo:hi], kind="mergesort")
    kk = n if (k <= 0 or k > n) else k
    smax = scores[lo + o[0]] if n > 0 else 0.0
    for r in range(n):
        d = lo + o[r]
        order[r] = d
        disc[d] = 1.0 / lg[r] if r < kk else 0.0
        gain[r] = 2.0 ** y[d] - 1.0
        ex[r] = np.exp(sigma * (scores[d] - smax))
    return _ideal_inv(y, lo, hi, kk, lg, gain, cnt), kk


_TINY = 1e-280  # below this ex_i / (ex_i + ex_j) loses digits: take the pair's own exp


@njit(cache=True)
def _rho(sigma, si, sj, ei, ej):
    """``rho_ij = 1 / (1 + exp(sigma (s_i - s_j)))`` and ``rho_ij (1 - rho_ij)`` from the per-document
    exponentials ``ei, ej`` (exact same quantity; the direct ``exp`` where both underflow)."""
    if ei > _TINY and ej > _TINY:
        inv_den = 1.0 / (ei + ej)
        rho = ej * inv_den
        return rho, (ei * inv_den) * rho
    rho = 1.0 / (1.0 + np.exp(sigma * (si - sj)))
    return rho, rho * (1.0 - rho)


@njit(cache=True)
def _group_by_label(y, order, n, yo, pos, gstart, cnt):
    """Ranks grouped by label (increasing rank within a group, labels in increasing order): ``pos[u]`` is
    the rank at grouped position ``u``, group ``g`` owns positions ``gstart[g]:gstart[g + 1]``. A
    counting sort when the labels' range is small (a stable ``argsort`` otherwise). Returns the number
    of groups."""
    lo = order[0]
    ymin = y[lo]
    ymax = y[lo]
    for t in range(n):
        yo[t] = y[order[t]]
        ymin = min(ymin, y[order[t]])
        ymax = max(ymax, y[order[t]])
    width = ymax - ymin + 1
    ng = 0
    if width <= cnt.size:
        for v in range(width):
            cnt[v] = 0
        for t in range(n):
            cnt[y[order[t]] - ymin] += 1
        u = 0
        for v in range(width):  # cnt[v] becomes the first position of label ymin + v
            c = cnt[v]
            if c > 0:
                gstart[ng] = u
                ng += 1
            cnt[v] = u
            u += c
        for t in range(n):
            v = y[order[t]] - ymin
            pos[cnt[v]] = t
            cnt[v] += 1
    else:
        srt = np.argsort(yo[:n], kind="mergesort")
        for u in range(n):
            pos[u] = srt[u]
            if u == 0 or yo[srt[u]] != yo[srt[u - 1]]:
                gstart[ng] = u
                ng += 1
    gstart[ng] = n
    return ng


@njit(cache=True, error_model="numpy")
def _pair_block_cols(sigma, dgi, ea, da, E, D, LAM, W, sgn):
    """Contributions of one document ``a`` (exponential ``ea``, discount ``da``) to the documents of another
    label (views ``E, D, LAM, W`` of their group): their lambdas move by ``-sgn c`` and weights by ``h``.

    One loop over contiguous arrays with no branch and no reduction, so it vectorises without
    reassociation (``error_model="numpy"``: ``ea + eb > 0`` here, and Python's zero-division check would
    keep the division scalar).
    """
    s2 = sigma * sigma
    for v in range(E.size):
        eb = E[v]
        dz = abs(da - D[v]) * dgi               # |Delta NDCG| of swapping the two documents
        iv = 1.0 / (ea + eb)
        rho = (eb if sgn > 0.0 else ea) * iv    # the sigmoid of the more relevant document's score
        LAM[v] -= sgn * (sigma * dz * rho)
        W[v] += s2 * dz * (ea * iv) * (eb * iv)


@njit(cache=True)
def _lambdas_whole(y, sigma, n, inv, order, gain, ex, disc, yo, pos, gstart, cnt, E, D, LAM, W):
    """The pair loop of one whole-list query when no ``exp`` underflowed, with lambdas ``LAM`` and weights
    ``W`` in label-grouped positions (``pos`` maps them to ranks).

    Documents are grouped by label once (only pairs of different labels have ``dZ > 0``) and laid out
    by group (structure of arrays: exponential ``E``, discount ``D``), so every pair loop is a
    contiguous sweep with no branch and no reduction: for each pair of groups, once with the more
    relevant group outside (adding into the less relevant documents) and once the other way round.
    Each accumulator thus receives its terms in a fixed order (by group, then by rank), whatever the
    compiler vectorises. Returns the number of pairs with ``dZ > 0``.
    """
    ng = _group_by_label(y, order, n, yo, pos, gstart, cnt)
    for u in range(n):
        t = pos[u]
        E[u] = ex[t]
        D[u] = disc[order[t]]
        LAM[u] = 0.0
        W[u] = 0.0
    n_pairs = 0
    for ga in range(ng):
        a0, a1 = gstart[ga], gstart[ga + 1]
        for gb in range(ng):
            if gb == ga:
                continue
            b0, b1 = gstart[gb], gstart[gb + 1]
            # groups are in increasing label order: ga > gb means documents of ga are the more relevant
            sgn = 1.0 if ga > gb else -1.0
            dgi = abs(gain[pos[a0]] - gain[pos[b0]]) * inv
            if ga > gb:
                n_pairs += (a1 - a0) * (b1 - b0)
            Eb, Db, Lb, Wb = E[b0:b1], D[b0:b1], LAM[b0:b1], W[b0:b1]
            for u in range(a0, a1):  # every document of ga pushes those of gb: -sgn c to each
                _pair_block_cols(sigma, dgi, E[u], D[u], Eb, Db, Lb, Wb, sgn)
    return n_pairs


@njit(cache=True)
def _lambdas_grouped(y, sigma, lo, n, kk, inv, order, gain, ex, disc, yo, do, lo_, wo, pos, gstart, gptr):
    """The pair loop of one query of at most ``k`` documents (NDCG@k lambdas, LambdaMART) when no ``exp``
    underflowed: documents grouped by label, so only pairs of different labels are visited. Adds into
    ``lo_``/``wo`` (per rank); returns the number of pairs with ``dZ > 0``. (The whole-list lambdas,
    ``k <= 0``, take the vectorised `_lambdas_whole`; this loop keeps LambdaMART's bits.)"""
    for t in range(n):
        d = order[t]
        yo[t] = y[d]
        do[t] = disc[d]
        lo_[t] = 0.0
        wo[t] = 0.0
    srt = np.argsort(yo[:n], kind="mergesort")  # ranks grouped by label, increasing rank in a group
    ng = 0
    for u in range(n):
        pos[u] = srt[u]
        if u == 0 or yo[srt[u]] != yo[srt[u - 1]]:
            gstart[ng] = u
            gptr[ng] = u
            ng += 1
    gstart[ng] = n
    s2 = sigma * sigma
    n_pairs = 0
    for r in range(kk):
        ya = yo[r]
        ga = gain[r]
        da = do[r]
        ea = ex[r]
        la = 0.0
        wa = 0.0
        for g in range(ng):
            e = gstart[g + 1]
            u = gptr[g]
            while u < e and pos[u] <= r:  # first rank of the group below rank r
                u += 1
            gptr[g] = u
            yb = yo[pos[gstart[g]]]
            if yb == ya or u == e:
                continue
            dg = abs(ga - gain[pos[gstart[g]]]) * inv
            n_pairs += e - u
            if ya > yb:  # a = order[r] is the more relevant document: rho = ex_b / (ex_a + ex_b)
                for v in range(u, e):
                    t = pos[v]
                    eb = ex[t]
                    dz = (da - do[t]) * dg  # Delta NDCG of the swap (da > do[t]: rank r above t)
                    iv = 1.0 / (ea + eb)
                    c = sigma * dz * eb * iv
                    h = s2 * dz * (ea * iv) * (eb * iv)
                    la += c
                    lo_[t] -= c
                    wa += h
                    wo[t] += h
            else:  # b is the more relevant one: rho = ex_a / (ex_a + ex_b)
                for v in range(u, e):
                    t = pos[v]
                    eb = ex[t]
                    dz = (da - do[t]) * dg
                    iv = 1.0 / (ea + eb)
                    c = sigma * dz * ea * iv
                    h = s2 * dz * (ea * iv) * (eb * iv)
                    la -= c
                    lo_[t] += c
                    wa += h
                    wo[t] += h
        lo_[r] += la
        wo[r] += wa
    return n_pairs


@njit(cache=True)
def _workspace(qptr):
    """Per-query buffers sized for the largest query, and the table ``lg[r] = log2(r + 2)``."""
    nmax = max(1, np.max(qptr[1:] - qptr[:-1])) if qptr.size > 1 else 1
    order = np.empty(nmax, dtype=np.int64)
    pos = np.empty(nmax, dtype=np.int64)
    ints = np.empty((3, nmax + 1), dtype=np.int64)  # gstart, gptr, cnt (label counts; wider ranges sort)
    f64 = np.empty((7, nmax))                        # gain, ex, yo, do, dd, lo_, wo
    lg = np.empty(nmax)
    for r in range(nmax):
        lg[r] = np.log2(r + 2.0)  # the discount's log2(r + 2), once per call
    return order, pos, ints, f64, lg


@njit(cache=True)
def _lambdas_query(q, y, qptr, scores, k, sigma, lam, w, disc, inv_max_dcg, fill_pairs, pa, pb, pw, n0,
                   order, pos, ints, f64, lg):
    """Lambdas and weights of query ``q`` (and its pairs from ``pa[n0]`` on, when ``fill_pairs``); returns
    the number of its pairs with ``dZ > 0``."""
    gstart, gptr, cnt = ints[0], ints[1], ints[2]
    gain, ex, yo, do, dd, lo_, wo = f64[0], f64[1], f64[2], f64[3], f64[4], f64[5], f64[6]
    lo, hi = qptr[q], qptr[q + 1]
    n = hi - lo
    for i in range(lo, hi):
        lam[i] = 0.0
        w[i] = 0.0
    if n < 2:
        inv_max_dcg[q] = 0.0
        return 0
    inv, kk = _query_prep(y, scores, lo, hi, k, sigma, disc, order, gain, ex, lg, cnt)
    inv_max_dcg[q] = inv
    if inv == 0.0:
        return 0
    if not fill_pairs and kk == n and np.min(ex[:n]) > _TINY:  # every pair: O(n^2)
        if k <= 0:  # the whole list (BoostingTree's LambdaMART): grouped, vectorised sweeps
            m = _lambdas_whole(y, sigma, n, inv, order, gain, ex, disc, yo, pos, gstart, cnt, do, dd, lo_, wo)
            for u in range(n):
                d = order[pos[u]]
                lam[d] = lo_[u]
                w[d] = wo[u]
            return m
        m = _lambdas_grouped(y, sigma, lo, n, kk, inv, order, gain, ex, disc, yo, do, lo_, wo, pos, gstart,
                             gptr)
        for t in range(n):
            lam[order[t]] = lo_[t]
            w[order[t]] = wo[t]
        return m
    n_pairs = n0
    for r in range(kk):
        a = order[r]
        ya = y[a]
        ga = gain[r]
        da = disc[a]
        ea = ex[r]
        sa = scores[a]
        for t in range(r + 1, n):
            b = order[t]
            yb = y[b]
            if ya == yb:
                continue
            dz = abs((da - disc[b]) * (ga - gain[t])) * inv   # |Delta NDCG| of the swap
            if dz == 0.0:
                continue
            if ya > yb:   # i = a is the more relevant document
                i, j = a, b
                rho, rr = _rho(sigma, sa, scores[b], ea, ex[t])
            else:
                i, j = b, a
                rho, rr = _rho(sigma, scores[b], sa, ex[t], ea)
            lam[i] += sigma * dz * rho
            lam[j] -= sigma * dz * rho
            h = sigma * sigma * dz * rr
            w[i] += h
            w[j] += h
            if fill_pairs:
                pa[n_pairs] = i
                pb[n_pairs] = j
                pw[n_pairs] = h
            n_pairs += 1
    return n_pairs - n0


@njit(cache=True)
def _lambdas(y, qptr, scores, k, sigma, lam, w, disc, inv_max_dcg, fill_pairs, pa, pb, pw):
    """One pass over the pairs with ``dZ > 0``: lambdas ``lam`` and weights ``w`` (filled in place) and,
    when ``fill_pairs``, the pair list ``(pa, pb, pw)``; returns the number of such pairs.

    Only pairs with a document in the top ``k`` have ``dZ > 0``: the loop runs over the top-``k``
    positions and the documents ranked below them, O(k n_q) per query (O(n_q^2) for the whole list,
    with one ``exp`` per document, not per pair).
    """
    order, pos, ints, f64, lg = _workspace(qptr)
    n_pairs = 0
    for q in range(qptr.size - 1):
        n_pairs += _lambdas_query(q, y, qptr, scores, k, sigma, lam, w, disc, inv_max_dcg, fill_pairs, pa, pb,
                                  pw, n_pairs, order, pos, ints, f64, lg)
    return n_pairs


@njit(cache=True, parallel=True)
def _lambdas_parallel(y, qptr, scores, k, sigma, lam, w, disc, inv_max_dcg, n_chunks):
    """Parallel twin of `_lambdas` without the pair list: ``prange`` over chunks of queries, each with its
    own buffers; every query is computed exactly as in `_lambdas` (results do not depend on threads)."""
    nq = qptr.size - 1
    counts = np.zeros(n_chunks, dtype=np.int64)
    e_i = np.empty(0, dtype=np.int64)
    e_f = np.empty(0)
    for c in prange(n_chunks):
        q0 = c * nq // n_chunks
        q1 = (c + 1) * nq // n_chunks
        order, pos, ints, f64, lg = _workspace(qptr[q0:q1 + 1])
        m = 0
        for q in range(q0, q1):
            m += _lambdas_query(q, y, qptr, scores, k, sigma, lam, w, disc, inv_max_dcg, False, e_i, e_i, e_f,
                                0, order, pos, ints, f64, lg)
        counts[c] = m
    return counts.sum()


def lambdamart_gradients(
    y: np.ndarray, qptr: np.ndarray, scores: np.ndarray, k: int = 10, sigma: float = 1.0,
    with_pairs: bool = False, n_jobs: int = 1,
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
        NDCG truncation (``<= 0``: full list).
    sigma : float
        The sigmoid's shape parameter.
    with_pairs : bool
        Also return the pair list ``(pa, pb, pw)`` for the exact (OLE) second derivative.
    n_jobs : int
        Threads (``prange`` over queries; ``-1``: numba's thread count); the results are the same bit
        for bit. The pair list (``with_pairs``) is always filled serially. The parallel twin is
        compiled on its first use in a process (parallel kernels are not cached: ~10 s here).

    Returns
    -------
    lam, w : float64 arrays (n,)
    pairs : tuple of arrays or None
    """
    y = np.ascontiguousarray(y, dtype=np.int32)
    qptr = np.ascontiguousarray(qptr, dtype=np.int64)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if y.shape != scores.shape or qptr[-1] != y.size:
        raise ValueError("y, scores and qptr do not describe the same documents")
    n = y.size
    if np.any(np.diff(qptr) < 0) or qptr[0] != 0:
        raise ValueError("qptr must start at 0 and be non-decreasing")
    lam = np.empty(n)
    w = np.empty(n)
    disc = np.zeros(n)
    inv = np.zeros(qptr.size - 1)
    pairs = None
    if with_pairs:
        # an upper bound on the pairs with dZ > 0: every (top-k, below) pair of every query
        sizes = np.diff(qptr)
        kk = sizes if k <= 0 else np.minimum(sizes, k)
        cap = int(np.sum(kk * (sizes - 1) - kk * (kk - 1) // 2))
        pa = np.empty(cap, dtype=np.int64)
        pb = np.empty(cap, dtype=np.int64)
        pw = np.empty(cap)
        m = _lambdas(y, qptr, scores, int(k), float(sigma), lam, w, disc, inv, True, pa, pb, pw)
        pairs = (pa[:m].copy(), pb[:m].copy(), pw[:m].copy())
    elif n_jobs != 1 and qptr.size > 2:
        import numba

        most = numba.config.NUMBA_NUM_THREADS
        threads = min(int(n_jobs), most) if n_jobs > 0 else most
        old = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:  # chunks of queries balance uneven query sizes; each query is computed as in the serial pass
            _lambdas_parallel(y, qptr, scores, int(k), float(sigma), lam, w, disc, inv,
                              min(qptr.size - 1, 8 * threads))
        finally:
            numba.set_num_threads(old)
    else:
        e_i = np.empty(0, dtype=np.int64)
        _lambdas(y, qptr, scores, int(k), float(sigma), lam, w, disc, inv, False, e_i, e_i, np.empty(0))
    return lam, w, pairs


def warmup() -> None:
    """Compile the lambda kernels on a toy query."""
    y = np.array([2, 0, 1, 0], dtype=np.int32)
    lambdamart_gradients(y, np.array([0, 4], dtype=np.int64), np.zeros(4), k=3, with_pairs=True)
