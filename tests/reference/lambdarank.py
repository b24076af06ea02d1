"""Plain-NumPy reference of LightGBM's lambdarank gradients (``LambdarankNDCG::GetGradientsForOneQuery`` in
LightGBM's ``src/objective/rank_objective.hpp``), transcribed loop for loop, in lrank's sign convention
(``lambda > 0`` pushes a document up) and with an exact sigmoid (LightGBM reads it from a table).

Per query, documents sorted by decreasing score (stable); for every rank ``i`` below the truncation level
and every ``j > i`` with a different label, ``high`` / ``low`` the more / less relevant of the two::

    dNDCG = (g_high - g_low) |disc(rank_high) - disc(rank_low)| / maxDCG
    dNDCG /= 0.01 + |s_high - s_low|          (norm, when the query's best and worst scores differ)
    rho   = 1 / (1 + exp(sigma (s_high - s_low)))
    lambda_high += sigma dNDCG rho            lambda_low -= sigma dNDCG rho
    w_high, w_low += sigma^2 dNDCG rho (1 - rho)
    S += 2 sigma dNDCG rho

and with ``norm`` (and ``S > 0``) every lambda and weight of the query times ``log2(1 + S) / S``.
LightGBM's discount is ``1 / log2(2 + r)`` at every rank and its ``maxDCG`` the ideal DCG at the truncation
level; ``ndcg_at`` (lrank's NDCG@k, not LightGBM's) cuts the discount and the ideal DCG at ``k`` instead.
"""

from __future__ import annotations

import numpy as np


def lambdarank(y, qptr, scores, truncation_level=30, norm=True, sigma=1.0, ndcg_at=None, gains=None):
    """Lambdas and weights of LightGBM's lambdarank for the current ``scores``; ``ndcg_at`` (an int) cuts
    the discount and the ideal DCG at that rank (lrank's ``k``), ``truncation_level=None`` takes every
    row; ``gains`` is LightGBM's ``label_gain``, the gain of each label ``0, 1, ...`` (None: its default
    ``2^y - 1``)."""

    def gain(v):
        return 2.0 ** v - 1.0 if gains is None else float(gains[v])

    n = len(y)
    lam = np.zeros(n)
    w = np.zeros(n)
    for q in range(len(qptr) - 1):
        lo, hi = int(qptr[q]), int(qptr[q + 1])
        cnt = hi - lo
        if cnt < 1:
            continue
        s = [float(v) for v in scores[lo:hi]]
        lab = [int(v) for v in y[lo:hi]]
        idx = sorted(range(cnt), key=lambda t: -s[t])  # Python's sort is stable: ties by document order
        level = cnt if truncation_level is None else truncation_level
        ideal_cut = ndcg_at if ndcg_at is not None else level

        def disc(r):
            return 0.0 if ndcg_at is not None and r >= ndcg_at else 1.0 / np.log2(2.0 + r)

        ideal = sorted(lab, reverse=True)
        max_dcg = sum(gain(ideal[r]) / np.log2(2.0 + r) for r in range(min(ideal_cut, cnt)))
        inv = 1.0 / max_dcg if max_dcg > 0 else 0.0
        best, worst = s[idx[0]], s[idx[cnt - 1]]
        ql = np.zeros(cnt)
        qw = np.zeros(cnt)
        total = 0.0
        for i in range(min(cnt - 1, level)):
            for j in range(i + 1, cnt):
                if lab[idx[i]] == lab[idx[j]]:
                    continue
                hr, lr_ = (i, j) if lab[idx[i]] > lab[idx[j]] else (j, i)
                high, low = idx[hr], idx[lr_]
                delta_score = s[high] - s[low]
                dcg_gap = gain(lab[high]) - gain(lab[low])
                d = dcg_gap * abs(disc(hr) - disc(lr_)) * inv
                if norm and best != worst:
                    d /= 0.01 + abs(delta_score)
                rho = 1.0 / (1.0 + np.exp(sigma * delta_score))
                p_lambda = sigma * d * rho
                p_hess = sigma * sigma * d * rho * (1.0 - rho)
                ql[high] += p_lambda
                ql[low] -= p_lambda
                qw[high] += p_hess
                qw[low] += p_hess
                total += 2.0 * p_lambda
        if norm and total > 0:
            f = np.log2(1.0 + total) / total
            ql *= f
            qw *= f
        lam[lo:hi] = ql
        w[lo:hi] = qw
    return lam, w
