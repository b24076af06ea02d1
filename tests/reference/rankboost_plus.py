"""Plain-NumPy references for RankBoost+ (Connamacher et al. 2020): a loop over candidate stumps, and
Rb-d / Rb-c / RankBoost+ written straight from the paper's equations on explicit pattern matrices."""

from __future__ import annotations

import numpy as np


def stump_eps_loop(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray, D: np.ndarray, n_bins: int):
    """eps+, eps-, eps0 (Eq. 8) of every stump ``[code_f > j]``, one candidate at a time."""
    F = codes.shape[1]
    ep = np.zeros((F, n_bins - 1))
    em = np.zeros((F, n_bins - 1))
    e0 = np.zeros((F, n_bins - 1))
    for f in range(F):
        for j in range(n_bins - 1):
            h = (codes[:, f] > j).astype(np.int64)
            u = h[hi] - h[lo]
            ep[f, j] = D[u > 0].sum()
            em[f, j] = D[u < 0].sum()
            e0[f, j] = D[u == 0].sum()
    return ep, em, e0


def distinct_patterns(codes: np.ndarray, n_thresholds: np.ndarray, hi: np.ndarray, lo: np.ndarray):
    """Distinct non-all-tie stump patterns (up to sign), first occurrence in (feature, bin) order."""
    seen = {}
    out = []
    for f in range(codes.shape[1]):
        for j in range(int(n_thresholds[f]) + 1):
            h = (codes[:, f] > j).astype(np.int8)
            u = h[hi] - h[lo]
            if not u.any():
                continue
            key = u.tobytes()
            nkey = (-u).tobytes()
            if key in seen or nkey in seen:
                continue
            seen[key] = (f, j)
            out.append((f, j, u.astype(np.int8)))
    return out


def run_reference(variant: str, U: np.ndarray, w1: np.ndarray, n_rounds: int):
    """Rb-d (Eq. 13, 14, 10), Rb-c (Eq. 17, 19, 10) or RankBoost+ greedy over members and new columns
    (Eq. 33, 34, 25) on a pattern matrix ``U`` (m x K); stops at the first dependent choice of Rb+,
    eps- = 0 of Rb-d, or a zero gradient. Returns a list of (column, alpha, eps+, eps-, eps0)."""
    D = w1 / w1.sum()
    eta = {}
    out = []
    S = np.zeros((U.shape[0], 0))
    for _ in range(n_rounds):
        ep = np.array([D[U[:, k] > 0].sum() for k in range(U.shape[1])])
        em = np.array([D[U[:, k] < 0].sum() for k in range(U.shape[1])])
        e0 = np.array([D[U[:, k] == 0].sum() for k in range(U.shape[1])])
        if variant in ("d", "c"):
            score = np.abs(ep - em)
        else:
            ap = np.array([eta.get(k, 0.0) for k in range(U.shape[1])])
            score = np.abs(em - ep + e0 * np.tanh(ap))
        k = int(np.argmax(score))
        if score[k] <= 1e-12:
            break
        a_p, a_m, a_0 = ep[k], em[k], e0[k]
        u = U[:, k]
        if variant == "d":
            if min(a_p, a_m) == 0:
                break
            alpha = 0.5 * np.log(a_p / a_m)
            D = D * np.exp(-alpha * u)
        elif variant == "c":
            r = a_p - a_m
            alpha = 0.5 * np.log((1 + r) / (1 - r))
            D = D * np.exp(-alpha * u)
        else:
            if k not in eta:
                if S.shape[1]:
                    res = u - S @ np.linalg.lstsq(S, u, rcond=None)[0]
                    if np.linalg.norm(res) < 1e-6:
                        break
                S = np.column_stack([S, u])
            ap = eta.get(k, 0.0)
            c = 2 * np.cosh(ap)
            alpha = 0.5 * np.log((a_p + a_0 * np.exp(-ap) / c) / (a_m + a_0 * np.exp(ap) / c))
            omega = np.where(u > 0, np.exp(-alpha), np.where(u < 0, np.exp(alpha),
                                                               np.cosh(alpha + ap) / np.cosh(ap)))
            D = D * omega
            eta[k] = ap + alpha
        D = D / D.sum()
        out.append((k, alpha, a_p, a_m, a_0))
    return out


def doc_suffix_rows(col: np.ndarray, vals: np.ndarray, n_bins: int) -> np.ndarray:
    """``out[c] = sum_x vals[x] [col[x] >= c]``: ``np.add.at`` into per-code zeros (documents in order), then
    a cumulative sum from the highest code (RankBoost+'s stump vectors in the pair space)."""
    per_bin = np.zeros((n_bins, vals.shape[1]))
    np.add.at(per_bin, col.astype(np.int64), vals)
    return np.cumsum(per_bin[::-1], axis=0)[::-1]
