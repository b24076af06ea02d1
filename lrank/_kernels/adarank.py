"""AdaRank kernels: the feature x query metric matrix (computed once) and the per-round weighted sums.

A single-feature weak ranker's metric on a query never changes while AdaRank trains (Sec. 3.6 of Xu & Li
2007): only the query distribution ``P_t`` does. So the metric of every candidate weak ranker on every
query is computed once, ``M[c, q] = E(pi(q, d_q, h_c), y_q)``, and round ``t`` picks
``argmax_c sum_q P_t(q) M[c, q]`` (Sec. 3.6), an O(candidates x queries) weighted sum, instead of
re-ranking every feature on every query every round.

The matrix itself is filled above this layer (`lrank.weak.single_feature.feature_query_matrix`, with
`lrank.metrics.evaluate`); nothing here imports from lrank's upper layers. The ``@njit`` kernels are
private (``_name``), each behind one validating function.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

#: weighted metrics (in [0, 1]) closer than this are equal: the lowest candidate wins. The sums
#: ``sum_q P(q) M[c, q]`` round differently from one CPU to the next (fused multiply-adds, numpy's exp in
#: ``P``), so two candidates of equal merit must not be told apart by their last bits.
TIE_TOL = 1e-10


@njit(cache=True)
def _weighted_performance(M, P, out):
    """``out[c] = sum_q P[q] M[c, q]`` in query order, for every candidate ``c``; returns ``out`` (float64,
    one entry per row of ``M``, from the caller: no NumPy constructor compiled here, issue 15.5)."""
    # varphi_c = sum_i P(i) E(pi(q_i, d_i, h_c), y_i)    (Theorem 1's varphi(t); Sec. 3.6)
    C, Q = M.shape
    for c in range(C):
        s = 0.0
        for q in range(Q):
            s += P[q] * M[c, q]
        out[c] = s
    return out


@njit(cache=True)
def _choose(M, P, allowed, phi):
    """``(best, best_phi, phi)``: :func:`_weighted_performance` into ``phi``, then the lowest ``allowed``
    candidate within ``TIE_TOL`` of the largest allowed ``phi`` (``best = -1`` if none is) and its phi."""
    # Sec. 3.6: h_t = argmax_k sum_i P_t(i) E(pi(q_i, d_i, x_k), y_i); near-ties go to the lowest index
    _weighted_performance(M, P, phi)
    top = -np.inf
    for c in range(phi.size):
        if allowed[c] and phi[c] > top:
            top = phi[c]
    best = -1
    best_phi = -np.inf
    for c in range(phi.size):  # the lowest index within TIE_TOL of the best
        if allowed[c] and phi[c] >= top - TIE_TOL:
            best = c
            best_phi = phi[c]
            break
    return best, best_phi, phi


def weighted_performance(M: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``P``-weighted metric of every candidate: ``M @ P`` in a fixed summation order (float64).

    Parameters
    ----------
    M : ndarray of shape (n_candidates, n_queries)
        Feature x query metric matrix.
    P : ndarray of shape (n_queries,)
        Distribution over queries.
    """
    M = np.ascontiguousarray(M, dtype=np.float64)
    P = np.ascontiguousarray(P, dtype=np.float64)
    if M.ndim != 2 or P.ndim != 1 or M.shape[1] != P.shape[0]:
        raise ValueError(f"M must be (n_candidates, n_queries) and P (n_queries,), got {M.shape}, {P.shape}")
    return _weighted_performance(M, P, np.zeros(M.shape[0]))


def choose_weak_ranker(M: np.ndarray, P: np.ndarray, allowed: np.ndarray | None = None
                       ) -> tuple[int, float, np.ndarray]:
    """The candidate with the best ``P``-weighted metric (Sec. 3.6).

    Returns
    -------
    best : int
        Index of the chosen candidate: the lowest allowed index whose weighted metric is within
        ``TIE_TOL`` of the largest (near-ties as ties; -1 if none is allowed).
    varphi : float
        Its weighted metric ``sum_q P(q) M[best, q]``.
    phi : ndarray of shape (n_candidates,)
        Weighted metric of every candidate.
    """
    M = np.ascontiguousarray(M, dtype=np.float64)
    P = np.ascontiguousarray(P, dtype=np.float64)
    if M.ndim != 2 or P.ndim != 1 or M.shape[1] != P.shape[0]:
        raise ValueError(f"M must be (n_candidates, n_queries) and P (n_queries,), got {M.shape}, {P.shape}")
    if allowed is None:
        allowed = np.ones(M.shape[0], dtype=np.bool_)
    allowed = np.ascontiguousarray(allowed, dtype=np.bool_)
    best, best_phi, phi = _choose(M, P, allowed, np.zeros(M.shape[0]))
    return int(best), float(best_phi), phi


def warmup() -> None:
    """Compile the AdaRank kernels on a toy problem."""
    M = np.array([[0.5, 1.0], [1.0, 0.0]])
    P = np.array([0.5, 0.5])
    weighted_performance(M, P)
    choose_weak_ranker(M, P)
