"""Exact deduplication of binary stumps by their pattern over the critical pairs.

A stump ``h = [code_f > j]`` acts on the boosting problem only through its pattern
``u_i = h(hi_i) - h(lo_i)`` in ``{-1, 0, +1}`` over the critical pairs (RankBoost+ Sec. 3.5 writes each
``h_j`` as this vector). Two stumps with the same pattern, or with negated patterns (``eta h`` and
``-eta h'`` then define the same term of F2, Eq. 22), are one weak ranker; RankBoost+ tracks the
accumulated weight ``alpha'`` (Eq. 25) per distinct ranker, so the candidates must be distinct exactly.
A stump that ties every pair (all-tie) has no direction and is dropped.

Method: each stump's pattern is hashed as ``sum_i r_i u_i`` (mod 2^64) for two independent random
vectors ``r``; by linearity this is a suffix histogram over documents of the random potentials
``sum_{i: hi=x} r_i - sum_{i: lo=x} r_i`` (the kernel of ``lrank._kernels.pair_stumps``), O(n F).
Equal (or negated) hashes are then checked pattern against pattern, so a hash collision can only split
a group, never merge two different rankers. The authors' public code merges columns that are not
identical (its duplicate mask); lrank does not copy that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lrank._kernels.pair_stumps import doc_suffix, pair_min_codes, pair_suffix, patterns_equal


@dataclass(eq=False)
class DistinctStumps:
    """The distinct, non-all-tie stumps ``[code_f > j]``: one representative per pattern class.

    Attributes
    ----------
    feature, bin : ndarray of int64, shape (K,)
        Representative stump ``[code_{feature} > bin]`` (the first in feature, bin order).
    n_candidates : int
        Stumps considered (every feature, every ``j = 0..n_thresholds``).
    n_all_tie : int
        Stumps dropped because they tie every pair.
    n_duplicates : int
        Stumps dropped because an earlier stump has the same or the negated pattern.
    """

    feature: np.ndarray
    bin: np.ndarray
    n_candidates: int
    n_all_tie: int
    n_duplicates: int

    def __len__(self) -> int:
        return int(self.feature.size)


def _hash_potential(hi: np.ndarray, lo: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    r = rng.integers(0, np.iinfo(np.uint64).max, size=hi.size, dtype=np.uint64, endpoint=True)
    pot = np.zeros(n, dtype=np.uint64)
    np.add.at(pot, hi, r)
    np.subtract.at(pot, lo, r)
    return pot


def distinct_stumps(
    codes: np.ndarray,
    n_thresholds: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
    random_state: int | np.random.Generator | None = 0,
    minc: np.ndarray | None = None,
) -> DistinctStumps:
    """Distinct stumps by exact pattern over the critical pairs ``(hi, lo)``.

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes (``lrank.data.binning``); ``[code > j]`` is ``[x > theta_j]`` (``j = 0``: not missing).
    n_thresholds : ndarray of int
        Thresholds per feature; stumps ``j = 0..n_thresholds[f]`` are candidates.
    hi, lo : ndarray of int64
        Critical pairs (``hi`` preferred).
    random_state : int, Generator or None
        Seeds the hash vectors (the result does not depend on it unless a 2^-128 collision occurs).
    minc : ndarray, optional
        ``pair_min_codes(codes, hi, lo)`` if already computed.

    Returns
    -------
    DistinctStumps
    """
    codes = np.ascontiguousarray(codes)
    hi = np.ascontiguousarray(hi, dtype=np.int64)
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    n, F = codes.shape
    n_thresholds = np.asarray(n_thresholds, dtype=np.int64)
    n_bins = int(n_thresholds.max()) + 2 if F else 2
    rng = np.random.default_rng(random_state)
    if minc is None:
        minc = pair_min_codes(codes, hi, lo)
    # pairs a stump does not tie: sum_x deg(x)[c > j] - 2 sum_i [min_i > j]  (exact integers)
    deg = (np.bincount(hi, minlength=n) + np.bincount(lo, minlength=n)).astype(np.int64)
    split = doc_suffix(codes, deg, n_bins) - 2 * pair_suffix(minc, np.ones(hi.size, np.int64), n_bins)
    valid = np.arange(n_bins - 1)[None, :] <= n_thresholds[:, None]
    n_cand = int(valid.sum())
    keep = valid & (split > 0)
    n_tie = n_cand - int(keep.sum())
    f_idx, j_idx = np.nonzero(keep)  # feature-major order
    if f_idx.size == 0:
        return DistinctStumps(f_idx.astype(np.int64), j_idx.astype(np.int64), n_cand, n_tie, 0)
    with np.errstate(over="ignore"):
        h1 = doc_suffix(codes, _hash_potential(hi, lo, n, rng), n_bins)[f_idx, j_idx]
        h2 = doc_suffix(codes, _hash_potential(hi, lo, n, rng), n_bins)[f_idx, j_idx]
        n1 = np.uint64(0) - h1
        n2 = np.uint64(0) - h2
    flip = n1 < h1
    k1 = np.where(flip, n1, h1)
    k2 = np.where(flip, n2, h2)
    keys = np.stack([k1, k2], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    rep = first[inverse]  # each candidate's group representative (first occurrence)
    dup = np.flatnonzero(rep != np.arange(f_idx.size))
    is_rep = np.ones(f_idx.size, dtype=bool)
    if dup.size:
        eq = patterns_equal(codes, hi, lo, f_idx[dup], j_idx[dup], f_idx[rep[dup]], j_idx[rep[dup]])
        is_rep[dup[eq != 0]] = False  # verified duplicates; a collision (eq == 0) stays distinct
    return DistinctStumps(
        f_idx[is_rep].astype(np.int64), j_idx[is_rep].astype(np.int64), n_cand, n_tie,
        int((~is_rep).sum()),
    )


def stump_statistics(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray, D: np.ndarray,
                     n_bins: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """eps+, eps-, eps0 (RankBoost+ Eq. 8) of every stump ``[code_f > j]`` under the pair weights ``D``.

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes (``lrank.data.binning.bin_features(X).codes``).
    hi, lo : ndarray of int
        Critical pairs (document ``hi[i]`` preferred to ``lo[i]``).
    D : ndarray of float, shape (n_pairs,)
        Non-negative pair weights (a distribution in boosting).
    n_bins : int, optional
        Bins per feature (default: ``codes.max() + 2``, enough for every stump).

    Returns
    -------
    eps_plus, eps_minus, eps_zero : ndarray (n_features, n_bins - 1)
        Entry ``[f, j]`` belongs to the stump ``[code_f > j]``; computed without a loop over stumps
        (potentials and a pair histogram of ``min(code_hi, code_lo)``, O(nF + mF)).
    """
    from lrank._kernels.pair_stumps import stump_eps

    codes = np.ascontiguousarray(codes)
    if codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"codes must be 2-d uint8 or uint16, got {codes.dtype} of shape {codes.shape}")
    hi = np.ascontiguousarray(hi, dtype=np.int64)
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    D = np.ascontiguousarray(D, dtype=np.float64)
    if not (hi.shape == lo.shape == D.shape) or hi.ndim != 1:
        raise ValueError(f"hi, lo and D must be 1-d of one length, got {hi.shape}, {lo.shape}, {D.shape}")
    n = codes.shape[0]
    if hi.size and (min(hi.min(), lo.min()) < 0 or max(hi.max(), lo.max()) >= n):
        raise ValueError(f"pair indices must lie in [0, {n})")
    if (D < 0).any() or not np.isfinite(D).all():
        raise ValueError("D must be finite and non-negative")
    need = int(codes.max()) + 2 if codes.size else 2
    n_bins = need if n_bins is None else int(n_bins)
    if n_bins < need:
        raise ValueError(f"n_bins={n_bins} is below the largest code + 2 = {need}")
    return stump_eps(codes, pair_min_codes(codes, hi, lo), hi, lo, D, n_bins)
