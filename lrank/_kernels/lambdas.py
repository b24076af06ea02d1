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
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def _query_order(y, scores, lo, hi, k, disc, order):
    """Sort the query by score (stable), fill ``disc``; return (1/maxDCG@k or 0, the cut ``min(k, n)``)."""
    n = hi - lo
    o = np.argsort(-scores[lo:hi], kind="mergesort")
    kk = n if (k <= 0 or k > n) else k
    for r in range(n):
        order[r] = lo + o[r]
        disc[lo + o[r]] = 1.0 / np.log2(r + 2.0) if r < kk else 0.0
    labels = np.sort(y[lo:hi])[::-1]
    ideal = 0.0
    for r in range(kk):
        ideal += (2.0 ** labels[r] - 1.0) / np.log2(r + 2.0)
    return (1.0 / ideal if ideal > 0.0 else 0.0), kk


@njit(cache=True)
def lambdas_and_weights(y, qptr, scores, k, sigma, lam, w, disc, inv_max_dcg):
    """LambdaMART lambdas ``lam`` and weights ``w`` (filled in place); returns the number of pairs with
    ``dZ > 0`` (the size of the list :func:`pair_weights` fills).

    Only pairs with a document in the top ``k`` have ``dZ > 0``: the loop runs over the top-``k``
    positions and the documents ranked below them, O(k n_q) per query. ``disc`` (per document) and
    ``inv_max_dcg`` (per query) are workspaces that :func:`pair_weights` reuses.
    """
    n_pairs = 0
    order = np.empty(max(1, np.max(qptr[1:] - qptr[:-1])) if qptr.size > 1 else 1, dtype=np.int64)
    gain = np.empty(order.size)
    for q in range(qptr.size - 1):
        lo, hi = qptr[q], qptr[q + 1]
        n = hi - lo
        for i in range(lo, hi):
            lam[i] = 0.0
            w[i] = 0.0
        if n < 2:
            inv_max_dcg[q] = 0.0
            continue
        inv, kk = _query_order(y, scores, lo, hi, k, disc, order)
        inv_max_dcg[q] = inv
        if inv == 0.0:
            continue
        for t in range(n):  # gains 2^y - 1 once per document, not once per pair
            gain[t] = 2.0 ** y[order[t]] - 1.0
        for r in range(kk):
            a = order[r]
            ga = gain[r]
            for t in range(r + 1, n):
                b = order[t]
                if y[a] == y[b]:
                    continue
                i, j = (a, b) if y[a] > y[b] else (b, a)  # i is the more relevant document
                dz = abs((disc[a] - disc[b]) * (ga - gain[t])) * inv
                if dz == 0.0:
                    continue
                rho = 1.0 / (1.0 + np.exp(sigma * (scores[i] - scores[j])))
                lam[i] += sigma * dz * rho
                lam[j] -= sigma * dz * rho
                h = sigma * sigma * dz * rho * (1.0 - rho)
                w[i] += h
                w[j] += h
                n_pairs += 1
    return n_pairs


@njit(cache=True)
def pair_weights(y, qptr, scores, k, sigma, disc, inv_max_dcg, pa, pb, pw):
    """Fill the pair list ``(pa, pb, pw)``: ``pa`` the more relevant one, ``pw = sigma^2 dZ rho (1-rho)``.

    Call after :func:`lambdas_and_weights` with the same scores; the arrays must hold the number of
    pairs it returned. Pairs come in query order, then by the rank of the higher-ranked document of the
    pair, then by the rank of the other.
    """
    m = 0
    order = np.empty(max(1, np.max(qptr[1:] - qptr[:-1])) if qptr.size > 1 else 1, dtype=np.int64)
    gain = np.empty(order.size)
    for q in range(qptr.size - 1):
        lo, hi = qptr[q], qptr[q + 1]
        n = hi - lo
        inv = inv_max_dcg[q]
        if inv == 0.0 or n < 2:
            continue
        _, kk = _query_order(y, scores, lo, hi, k, disc, order)
        for t in range(n):
            gain[t] = 2.0 ** y[order[t]] - 1.0
        for r in range(kk):
            a = order[r]
            ga = gain[r]
            for t in range(r + 1, n):
                b = order[t]
                if y[a] == y[b]:
                    continue
                i, j = (a, b) if y[a] > y[b] else (b, a)
                dz = abs((disc[a] - disc[b]) * (ga - gain[t])) * inv
                if dz == 0.0:
                    continue
                rho = 1.0 / (1.0 + np.exp(sigma * (scores[i] - scores[j])))
                pa[m] = i
                pb[m] = j
                pw[m] = sigma * sigma * dz * rho * (1.0 - rho)
                m += 1
    return m


def lambdamart_gradients(
    y: np.ndarray, qptr: np.ndarray, scores: np.ndarray, k: int = 10, sigma: float = 1.0,
    with_pairs: bool = False,
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
    lam = np.empty(n)
    w = np.empty(n)
    disc = np.zeros(n)
    inv = np.zeros(qptr.size - 1)
    m = lambdas_and_weights(y, qptr, scores, int(k), float(sigma), lam, w, disc, inv)
    pairs = None
    if with_pairs:
        pa = np.empty(m, dtype=np.int64)
        pb = np.empty(m, dtype=np.int64)
        pw = np.empty(m)
        pair_weights(y, qptr, scores, int(k), float(sigma), disc, inv, pa, pb, pw)
        pairs = (pa, pb, pw)
    return lam, w, pairs


def warmup() -> None:
    """Compile the lambda kernels on a toy query."""
    y = np.array([2, 0, 1, 0], dtype=np.int32)
    lambdamart_gradients(y, np.array([0, 4], dtype=np.int64), np.zeros(4), k=3, with_pairs=True)
