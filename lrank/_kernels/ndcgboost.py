"""NDCGBoost kernels (Valizadegan et al. 2009; box: notebook 03, Sec. 4): document weights, A/B sums.

The ``@njit`` kernels are private (``_name``); each is called through one validating function:
`gamma_pairs` (step (a): gamma and beta) and `ab_sums` (step (c): A and B); step (b)'s classifier tree
is grown by the tree engine (``lrank._kernels.grower``). Nothing here imports from the layers above.

Cost: ``sig_jk = 1 / (1 + exp(2 (F_j - F_k))) = ex_k / (ex_j + ex_k)`` with ``ex = exp(2 (F - max_q F))``,
one ``exp`` per document (a query whose scores span more than ~320 takes one per pair); step (a) is two
sweeps over each query's pairs and step (c) one sweep over the pairs with different classifier outputs,
each adding into a contiguous run of per-document sums (vectorised without reassociation; the terms are
summed in a fixed order, not the order of the original double loop, so the last bits differ from it).
A query whose exponentials underflow is left by the main kernels (`_gamma_kernel` marks it in ``todo``,
`_ab_kernel` stops at it) to kernels of their own, `_gamma_exact` and `_ab_exact`, that the validating
functions call only when there is one: a first fit compiles the one-exp-per-pair loops only when it
meets such a query (issue 15.5: every jitted function costs compile time).
"""

from __future__ import annotations

import numpy as np

from lrank._kernels.sorting import _sort_bucketed

from ._jit import njit

_TINY = 1e-280  # below this e_k / (e_j + e_k) loses digits: the query takes one exp per pair instead

#: `_gamma_kernel`'s mark in ``todo``: a query whose exponentials underflowed, left for `_gamma_exact`
_UNDERFLOW = 1


@njit(cache=True)
def _query_exp(F, lo, hi, ex):
    """``ex_j = exp(2 (F_j - F_max))`` for the query's documents (one ``exp`` per document, ``<= 1``);
    returns whether none underflowed (then ``sig_jk = 1 / (1 + exp(2 (F_j - F_k)))``
    ``= ex_k / (ex_j + ex_k)``)."""
    fmax = F[lo]
    for j in range(lo + 1, hi):
        fmax = F[j] if F[j] > fmax else fmax  # max(fmax, F[j]), without the builtin's implementation
    ok = True
    for j in range(lo, hi):
        ex[j] = np.exp(2.0 * (F[j] - fmax))
        ok = ok and ex[j] > _TINY
    return ok


@njit(cache=True, error_model="numpy")
def _add_sig(ej, E, S, Q):
    """``S_k += sig_kj = ex_j / (ex_k + ex_j)`` for the documents of the views ``E, S``, keeping
    ``Q_k = 1 / (ex_k + ex_j)`` for the second sweep (vectorises: no branch, no reduction;
    ``error_model="numpy"`` since ``ex_k + ex_j > 0``)."""
    for k in range(E.size):
        iv = 1.0 / (E[k] + ej)
        Q[k] = iv
        S[k] += ej * iv


@njit(cache=True)
def _add_theta(ej, bj, E, Bt, G, Q):
    """``G_k += P_jk (beta_k - beta_j)`` with ``P_jk = sig_jk (1 - sig_jk) = ex_j ex_k Q_k^2`` (``Q`` from
    `_add_sig`: no division)."""
    for k in range(E.size):
        iv = Q[k]
        G[k] += (ej * iv) * (E[k] * iv) * (Bt[k] - bj)


@njit(cache=True)
def _beta(g, invZ, lo, hi, S, beta):
    """``beta_j = g_j / (Z (1 + pibar_j) ln^2(1 + pibar_j))`` from ``S_j = pibar_j - 1``."""
    for j in range(lo, hi):
        L = np.log(2.0 + S[j])                            # ln(1 + pibar_j)
        beta[j] = g[j] * invZ / ((2.0 + S[j]) * L * L)


@njit(cache=True)
def _gamma_query_fast(g, invZ, lo, hi, ex, gamma, beta, Q):
    """Step (a) of one query from the per-document exponentials: two sweeps over all pairs, each adding
    into a contiguous run of documents (so each accumulator gets its terms in document order); the
    first keeps ``1 / (ex_j + ex_k)`` in the ``n x n`` workspace ``Q`` for the second."""
    n = hi - lo
    for j in range(lo, hi):
        gamma[j] = 0.0
    for j in range(n):                                    # pibar_k - 1 = sum_{j != k} sig_kj (in gamma)
        ej = ex[lo + j]
        row = Q[j * n:(j + 1) * n]
        _add_sig(ej, ex[lo:lo + j], gamma[lo:lo + j], row[:j])
        _add_sig(ej, ex[lo + j + 1:hi], gamma[lo + j + 1:hi], row[j + 1:])
        row[j] = 0.5 / ej                                 # the diagonal (multiplied by beta_j - beta_j = 0)
    _beta(g, invZ, lo, hi, gamma, beta)
    for j in range(lo, hi):
        gamma[j] = 0.0
    for j in range(n):                                    # gamma_k = sum_j P_jk (beta_k - beta_j)
        _add_theta(ex[lo + j], beta[lo + j], ex[lo:hi], beta[lo:hi], gamma[lo:hi], Q[j * n:(j + 1) * n])


@njit(cache=True)
def _gamma_exact(F, g, qptr, invZ, queries, gamma, beta):
    """Step (a) of the ``queries`` listed (those `_gamma_kernel` marks ``_UNDERFLOW``: scores so far apart
    that ``ex`` underflows) with one ``exp`` per pair, filling their ``gamma`` and ``beta`` in place. A
    kernel of its own, compiled only when a fit meets such a query (~0.2 s of every first fit otherwise)."""
    for t in range(queries.size):
        q = queries[t]
        lo, hi = qptr[q], qptr[q + 1]
        for j in range(lo, hi):
            gamma[j] = 0.0
        for j in range(lo, hi):
            for k in range(j + 1, hi):
                sg = 1.0 / (1.0 + np.exp(2.0 * (F[j] - F[k])))
                gamma[j] += sg
                gamma[k] += 1.0 - sg
        _beta(g, invZ[q], lo, hi, gamma, beta)
        for j in range(lo, hi):
            gamma[j] = 0.0
        for j in range(lo, hi):
            for k in range(j + 1, hi):
                sg = 1.0 / (1.0 + np.exp(2.0 * (F[j] - F[k])))
                d = sg * (1.0 - sg) * (beta[j] - beta[k])
                gamma[j] += d
                gamma[k] -= d


@njit(cache=True)
def _gamma_kernel(F, g, qptr, invZ, gamma, beta, ex, todo, Q):
    """NDCGBoost's document weights gamma and beta (NDCGBoost box, step (a)); O(sum n_q^2) divisions, one
    ``exp`` per document. A query whose exponentials underflowed (scores spanning more than ~320) is only
    marked ``_UNDERFLOW`` in ``todo`` (its ``gamma``, ``beta`` left zero, its ``ex`` filled) for
    `_gamma_exact`, which `gamma_pairs` calls when a query is marked. ``Q`` (float64, at least
    ``nmax * nmax`` entries, ``nmax`` the largest query) holds ``1 / (ex_j + ex_k)`` of the current query:
    scratch from the caller (no NumPy constructor compiled here, issue 15.5)."""
    for q in range(qptr.size - 1):
        todo[q] = 0
        lo, hi = qptr[q], qptr[q + 1]
        for j in range(lo, hi):
            gamma[j] = 0.0
            beta[j] = 0.0
            ex[j] = 0.0
        if invZ[q] == 0.0 or hi - lo < 2:
            continue
        if _query_exp(F, lo, hi, ex):
            _gamma_query_fast(g, invZ[q], lo, hi, ex, gamma, beta, Q)
        else:
            todo[q] = _UNDERFLOW


@njit(cache=True, error_model="numpy")
def _add_ab(ej, bj, E, Bt, CA, CB):
    """``CA_k += beta_j P_jk`` and ``CB_k += beta_k P_jk`` (the pair ``(j, k)`` with ``f(x_j) > f(x_k)``)."""
    for k in range(E.size):
        iv = 1.0 / (ej + E[k])
        P = (ej * iv) * (E[k] * iv)
        CA[k] += bj * P
        CB[k] += Bt[k] * P


@njit(cache=True)
def _ab_exact(qptr, F, fx, beta, q, A, B):
    """``A`` and ``B`` (running sums, returned) plus query ``q``'s pairs, one ``exp`` per pair: the query at
    which `_ab_kernel` stopped (its ``ex`` underflowed, so `_gamma_exact` computed its ``beta``). A kernel
    of its own, compiled only when a fit meets such a query (~0.3 s of `_ab_kernel`'s compilation before)."""
    lo, hi = qptr[q], qptr[q + 1]
    for j in range(lo, hi):
        for k in range(j + 1, hi):
            if fx[j] == fx[k]:
                continue
            sg = 1.0 / (1.0 + np.exp(2.0 * (F[j] - F[k])))
            P = sg * (1.0 - sg)
            if fx[j] > fx[k]:      # theta_jk counts in A, theta_kj in B
                A += beta[j] * P
                B += beta[k] * P
            else:
                A += beta[k] * P
                B += beta[j] * P
    return A, B


@njit(cache=True)
def _ab_kernel(qptr, invZ, F, fx, beta, ex, q0, A, B, fw, iw):
    """``A`` and ``B`` of the NDCGBoost box, step (c), for classifier outputs ``fx`` (after `_gamma_kernel`):
    the running sums ``A``, ``B`` plus queries ``q0, q0 + 1, ...`` in order, returned with the query
    ``q`` at which it stopped.

    It stops (before adding anything of it) at a query whose exponentials underflowed (``ex`` zero or
    ``<= _TINY``: `_gamma_exact` computed it with one ``exp`` per pair, and so must A, B be): `ab_sums`
    then adds that query with `_ab_exact` and resumes here at ``q + 1``, so the terms are added in the
    order of one pass and the one-exp-per-pair loop compiles only when a fit meets such a query; ``q`` is
    the number of queries when none is left. Each other query's documents are sorted by ``fx`` once;
    every document then sweeps the contiguous run of documents with a smaller output (only the pairs with
    ``f(x_j) != f(x_k)`` are visited), adding into per-document sums that are totalled in a fixed order at
    the end. The sort is the kernels' shared stable sort `lrank._kernels.sorting._sort_bucketed`
    (``np.argsort(fx, kind="mergesort")``'s permutation for ``fx`` without NaN, which `ab_sums` checks;
    O(n): a classifier's outputs take two values)
    and the underflow test a loop with ``np.min``'s NaN rule: neither compiles a NumPy implementation of
    its own (issue 15.5: ~1.4 s of a first fit). The scratch comes from the caller, so that no NumPy
    constructor compiles here either: ``fw`` (float64, ``_AB_F_ROWS`` rows, each at least as long as the
    largest query) and ``iw`` (int64, ``_AB_I_ROWS`` rows, each at least ``max(2 n + 1, 256)`` for the
    largest query's ``n``: the sort's counts) (`_ab_workspaces`).
    """
    E, Bt, CA, CB, key, key2 = fw[0], fw[1], fw[2], fw[3], fw[4], fw[5]
    o, o2, code, code2, cnt = iw[0], iw[1], iw[2], iw[3], iw[4]
    for q in range(q0, qptr.size - 1):
        lo, hi = qptr[q], qptr[q + 1]
        n = hi - lo
        if invZ[q] == 0.0 or n < 2:
            continue
        low = ex[lo]  # np.min(ex[lo:hi]): a NaN is the minimum
        for j in range(lo + 1, hi):
            if ex[j] < low or ex[j] != ex[j]:
                low = ex[j]
            if low != low:
                break
        if ex[lo] == 0.0 or low <= _TINY:  # the query took one exp per pair: so does A, B (`_ab_exact`)
            return A, B, q
        for u in range(n):  # the documents by increasing output, ties in document order
            key[u] = fx[lo + u]
            o[u] = u
        _sort_bucketed(key, o, key2, o2, code, code2, cnt, n)
        for u in range(n):
            E[u] = ex[lo + o[u]]
            Bt[u] = beta[lo + o[u]]
            CA[u] = 0.0
            CB[u] = 0.0
        first = 0                                   # first position holding the current fx value
        for u in range(n):
            if u > 0 and fx[lo + o[u]] != fx[lo + o[u - 1]]:
                first = u
            if first > 0:                          # documents 0:first have a smaller output
                _add_ab(E[u], Bt[u], E[:first], Bt[:first], CA[:first], CB[:first])
        for u in range(n):
            A += CA[u]
            B += CB[u]
    return A, B, qptr.size - 1


#: rows of `_ab_kernel`'s float workspace (E, Bt, CA, CB, the sort's keys and their scratch) and of its
#: int64 one (the sort's permutation, its scratch, two rows of key codes and the counts)
_AB_F_ROWS = 6
_AB_I_ROWS = 5


def _largest_query(qptr: np.ndarray) -> int:
    """The number of documents of the largest query, at least 1."""
    return max(int(np.diff(qptr).max()), 1) if qptr.size > 1 else 1


def _ab_workspaces(qptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_ab_kernel`'s float and int64 workspaces, sized for the largest query."""
    nmax = _largest_query(qptr)
    return np.empty((_AB_F_ROWS, nmax)), np.empty((_AB_I_ROWS, max(2 * nmax + 1, 256)), dtype=np.int64)


def pair_offsets(qptr: np.ndarray) -> np.ndarray:
    """Start of each query's unordered pairs in the flat pair buffer (``n_q (n_q - 1) / 2`` per query)."""
    n = np.diff(np.asarray(qptr, dtype=np.int64))
    return np.concatenate([[0], np.cumsum(n * (n - 1) // 2)]).astype(np.int64)


def _f64(name: str, a: np.ndarray, n: int | None = None) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 1 or (n is not None and a.size != n):
        raise ValueError(f"{name} must be 1-d with {n} entries, got shape {a.shape}")
    return a


def _check_queries(qptr: np.ndarray, n_docs: int, invZ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    qptr = np.ascontiguousarray(qptr, dtype=np.int64)
    if qptr.ndim != 1 or qptr.size < 1 or qptr[0] != 0 or qptr[-1] != n_docs or np.any(np.diff(qptr) < 0):
        raise ValueError(f"qptr must be non-decreasing offsets from 0 to {n_docs}")
    invZ = _f64("invZ", invZ, qptr.size - 1)
    return qptr, invZ


def gamma_workspace(qptr: np.ndarray) -> np.ndarray:
    """Scratch for `gamma_pairs` on the queries ``qptr``: ``n_max ** 2`` float64 (``n_max`` the largest
    query), for a caller that computes step (a) every round on the same queries."""
    return np.empty(_largest_query(np.asarray(qptr)) ** 2)


def gamma_pairs(F: np.ndarray, g: np.ndarray, qptr: np.ndarray, invZ: np.ndarray,
                work: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NDCGBoost step (a): per-document ``gamma``, ``beta`` and ``ex = exp(2 (F - max_q F))``.

    ``F`` are the current scores, ``g = 2^l - 1`` the gains, ``invZ`` ``1 / maxDCG`` per query (0 for a
    query without a relevant document: it contributes nothing, with ``ex = 0``). ``beta`` and ``ex``
    feed `ab_sums`. ``work`` (optional, from `gamma_workspace`; overwritten) is the kernel's ``n_max ** 2``
    scratch: without it each call allocates its own, which above glibc's mmap threshold (128 KiB, a
    query of 128 documents) is a fresh mapping whose pages fault in on every call (about a fifth of
    step (a)'s time on the MSLR sample's 308-document query).
    """
    F = _f64("F", F)
    g = _f64("g", g, F.size)
    qptr, invZ = _check_queries(qptr, F.size, invZ)
    gamma, beta, ex = np.empty(F.size), np.empty(F.size), np.empty(F.size)
    todo = np.zeros(qptr.size - 1, dtype=np.int8)  # queries `_gamma_kernel` left to `_gamma_exact`
    nmax = _largest_query(qptr)
    if work is None:
        work = np.empty(nmax * nmax)
    elif not (isinstance(work, np.ndarray) and work.dtype == np.float64 and work.ndim == 1
              and work.flags.c_contiguous and work.flags.writeable and work.size >= nmax * nmax):
        raise ValueError(f"work must be a writeable, contiguous 1-d float64 array of at least {nmax * nmax} "
                         f"entries (the largest query, {nmax} documents, squared; `gamma_workspace`), got "
                         f"{type(work).__name__} {getattr(work, 'dtype', '')} {getattr(work, 'shape', '')}")
    _gamma_kernel(F, g, qptr, invZ, gamma, beta, ex, todo, work)
    if todo.any():
        _gamma_exact(F, g, qptr, invZ, np.flatnonzero(todo == _UNDERFLOW).astype(np.int64), gamma, beta)
    return gamma, beta, ex


def ab_sums(qptr: np.ndarray, invZ: np.ndarray, F: np.ndarray, fx: np.ndarray, beta: np.ndarray,
            ex: np.ndarray) -> tuple[float, float]:
    """NDCGBoost step (c): ``A = sum theta_jk [f(x_j) > f(x_k)]`` and ``B = sum theta_kj [f(x_j) > f(x_k)]``
    (``beta`` and ``ex`` from `gamma_pairs` on the same ``F``)."""
    F = _f64("F", F)
    fx = _f64("fx", fx, F.size)
    bad = np.flatnonzero(np.isnan(fx))
    if bad.size:
        raise ValueError(f"fx (the classifier's outputs) holds NaN at row {int(bad[0])}")
    beta = _f64("beta", beta, F.size)
    ex = _f64("ex", ex, F.size)
    qptr, invZ = _check_queries(qptr, F.size, invZ)
    nq = qptr.size - 1
    fw, iw = _ab_workspaces(qptr)
    A, B, q = _ab_kernel(qptr, invZ, F, fx, beta, ex, 0, 0.0, 0.0, fw, iw)
    while q < nq:  # a query whose exponentials underflowed: its pairs one exp each, in their place in the sum
        A, B = _ab_exact(qptr, F, fx, beta, q, A, B)
        A, B, q = _ab_kernel(qptr, invZ, F, fx, beta, ex, q + 1, A, B, fw, iw)
    return float(A), float(B)


def warmup() -> None:
    """Compile the NDCGBoost kernels on a toy query and one whose scores are far apart (the underflow
    kernels, which a fit compiles only when it meets such a query)."""
    g = np.array([3.0, 0.0, 1.0])
    qptr = np.array([0, 3], dtype=np.int64)
    invZ = np.array([0.25])
    for F in (np.array([0.1, 0.0, -0.2]), np.array([0.0, -400.0, -800.0])):
        _, beta, ex = gamma_pairs(F, g, qptr, invZ)
        ab_sums(qptr, invZ, F, np.array([1.0, 0.0, 1.0]), beta, ex)
