"""Inputs of the recorded lambdas fixture (``lambdas_bits.npz``): LambdaMART's NDCG@k lambdas must keep their
bits (issue 15), so `tests/kernels/test_lambdas.py` compares the kernel against outputs recorded from the
kernel as it was before the session-4 rewrite (commit 838e78a), case by case.

The whole-list lambdas (``k <= 0``) are recorded too; issue 15.2 allows them to move (then record again and
say so). Run ``python -m tests.reference.lambdas_cases`` to record the fixture again (only after a change
that is allowed to move bits, and say so in the commit).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).with_name("lambdas_bits.npz")


def _queries(rng, sizes, n_labels=5, ties=False, spread=1.0):
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, n_labels, n).astype(np.int32)
    s = rng.normal(size=n) * spread
    if ties:
        s = np.round(s, 0)
    return y, qptr, s


def inputs() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Named ``(y, qptr, scores)``: ties in scores and labels, one-document queries, all-equal labels, queries
    without a relevant document, a wide label range (sorted, not counted), NaN scores, far-apart scores (the
    per-document exponential underflows) and LETOR-sized queries."""
    out = {}
    rng = np.random.default_rng(2026)
    sizes = [1, 7, 12, 2, 5, 9, 1, 30, 11, 64]
    y, qptr, s = _queries(rng, sizes, ties=True)
    y[qptr[2]:qptr[3]] = 0  # no relevant document
    y[qptr[4]:qptr[5]] = 2  # all equal labels
    out["small_ties"] = (y, qptr, s)
    y, qptr, s = _queries(rng, sizes)
    out["small"] = (y, qptr, s)
    y, qptr, s = _queries(rng, [1, 13, 6, 40, 3, 25], n_labels=4, ties=True)
    y[y == 3] = 60  # label range wider than the largest query: a stable sort instead of a count
    out["wide_labels"] = (y, qptr, s)
    y, qptr, s = _queries(rng, [9, 14, 5])
    s[[2, 11, 20]] = np.nan
    out["nan_scores"] = (y, qptr, s)
    y = np.array([0, 2, 1, 0, 1, 2, 3, 0, 1, 2, 0, 1], dtype=np.int32)
    s = np.array([0.0, -400.0, -800.0, -1200.0, 3.0, -801.0, 1.0, -2.0, -750.0, -760.0, 5.0, -900.0])
    out["far_apart"] = (y, np.array([0, 12], dtype=np.int64), s)
    sizes = rng.integers(20, 200, 6)
    y, qptr, s = _queries(rng, sizes, n_labels=5, spread=3.0)
    out["letor"] = (y, qptr, s)
    y, qptr, s = _queries(rng, [8, 10, 4, 10], n_labels=3)  # every query within k = 10: all pairs
    out["within_k"] = (y, qptr, s)
    out["letor_ties"] = _letor_ties(np.random.default_rng(2027))
    return out


def _letor_ties(rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LETOR-sized queries (make_letor_like's 80-152 documents and smaller ones) whose scores are sums of a
    few trees' leaf values (many exact ties), with one-document queries, all-equal labels, no relevant
    document, signed zeros, infinities and NaN scores (recorded from the kernel before the session-5 sort
    and pair-loop rewrite, commit 0cad47b)."""
    sizes = np.r_[rng.integers(80, 153, 8), [1, 2, 1, 17, 11, 150, 3]]
    y, qptr, _ = _queries(rng, sizes, n_labels=5)
    leaves = rng.normal(size=(4, 10)) * 0.1
    s = sum(leaves[t][rng.integers(0, 10, y.size)] for t in range(4))
    q = lambda i: slice(qptr[i], qptr[i + 1])  # noqa: E731
    y[q(1)] = 3                          # all equal labels
    y[q(2)] = 0                          # no relevant document
    s[q(3)] = 0.0                        # every score equal (the first tree)
    s[qptr[4]:qptr[4] + 40:2] *= -0.0    # signed zeros (ties with +0)
    s[qptr[5] + 3] = np.nan
    s[qptr[5] + 7] = np.inf
    s[qptr[5] + 9] = -np.inf
    s[qptr[6] + 5:qptr[6] + 9] = np.nan
    return y, qptr, s


#: (k, sigma, with_pairs) of every recorded call on every input
CALLS = [(10, 1.0, False), (10, 1.0, True), (3, 1.0, False), (1, 2.5, False), (3, 2.5, True),
         (20, 1.0, False), (10, 0.5, False), (0, 1.0, False), (0, 2.5, True)]


def call_key(name: str, k: int, sigma: float, with_pairs: bool) -> str:
    return f"{name}|k={k}|sigma={sigma:g}|pairs={int(with_pairs)}"


def record() -> None:
    from lrank._kernels.lambdas import lambdamart_gradients

    arrays = {}
    for name, (y, qptr, s) in inputs().items():
        for k, sigma, with_pairs in CALLS:
            lam, w, pairs = lambdamart_gradients(y, qptr, s, k=k, sigma=sigma, with_pairs=with_pairs)
            key = call_key(name, k, sigma, with_pairs)
            arrays[key + "|lam"] = lam
            arrays[key + "|w"] = w
            if pairs is not None and not name.startswith("letor"):  # (their pair lists: ~100 KB, same loop)
                arrays[key + "|pa"] = pairs[0].astype(np.int32)
                arrays[key + "|pb"] = pairs[1].astype(np.int32)
                arrays[key + "|pw"] = pairs[2]
    np.savez_compressed(FIXTURE, **arrays)


if __name__ == "__main__":
    record()
