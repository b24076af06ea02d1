"""Plain-NumPy references for lrank.metrics, written straight from the definitions, one query at a time.

Every function takes the labels and scores of ONE query and returns a float (NaN where the metric is
undefined for the query). Ties are broken as lrank documents them: ``ties="stable"`` keeps document
order, ``"pessimistic"`` puts low labels first, ``"optimistic"`` high labels first.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def order(y, s, ties="stable"):
    y = np.asarray(y, dtype=float)
    s = np.asarray(s, dtype=float)
    idx = list(range(len(s)))
    if ties == "stable":
        key = lambda i: (-s[i], i)  # noqa: E731
    elif ties == "pessimistic":
        key = lambda i: (-s[i], y[i], i)  # noqa: E731
    else:
        key = lambda i: (-s[i], -y[i], i)  # noqa: E731
    return np.array(sorted(idx, key=key), dtype=int)


def gain(rel, kind="exp"):
    rel = np.asarray(rel, dtype=float)
    return 2.0**rel - 1.0 if kind == "exp" else rel


def discount(n, kind="log2"):
    i = np.arange(1, n + 1, dtype=float)
    if kind == "log2":
        return 1.0 / np.log2(i + 1.0)
    d = np.ones(n)
    d[1:] = 1.0 / np.log2(i[1:])
    return d


def dcg_at(labels_in_order, k, g="exp", d="log2"):
    lab = np.asarray(labels_in_order, dtype=float)[:k]
    return float(np.sum(gain(lab, g) * discount(lab.size, d)))


def ndcg(y, s, k=None, g="exp", d="log2", ties="stable"):
    y = np.asarray(y, dtype=float)
    n = y.size
    k = n if k is None else min(k, n)
    ideal = dcg_at(np.sort(y)[::-1], k, g, d)
    if n == 0 or ideal == 0:
        return math.nan
    return dcg_at(y[order(y, s, ties)], k, g, d) / ideal


def mean_ndcg(y, s, g="exp", d="log2", ties="stable"):
    n = len(y)
    if n == 0 or max(y) <= 0:
        return math.nan
    return float(np.mean([ndcg(y, s, k, g, d, ties) for k in range(1, n + 1)]))


def average_precision(y, s, thr=1, ties="stable"):
    y = np.asarray(y, dtype=float)
    rel = y[order(y, s, ties)] >= thr
    if not rel.any():
        return math.nan
    prec = np.cumsum(rel) / np.arange(1, rel.size + 1)
    return float(np.sum(prec[rel]) / rel.sum())


def err(y, s, k=None, max_grade=4, ties="stable"):
    y = np.asarray(y, dtype=float)
    if y.size == 0 or y.max() <= 0:
        return math.nan
    lab = y[order(y, s, ties)][: (y.size if k is None else k)]
    R = (2.0**lab - 1.0) / 2.0**max_grade
    stop = R * np.concatenate([[1.0], np.cumprod(1.0 - R)[:-1]])
    return float(np.sum(stop / np.arange(1, lab.size + 1)))


def precision(y, s, k, thr=1, ties="stable"):
    y = np.asarray(y, dtype=float)
    if not (y >= thr).any():
        return math.nan
    return float(np.sum(y[order(y, s, ties)][:k] >= thr) / k)


def reciprocal_rank(y, s, thr=1, ties="stable"):
    y = np.asarray(y, dtype=float)
    rel = np.flatnonzero(y[order(y, s, ties)] >= thr)
    return math.nan if rel.size == 0 else 1.0 / (rel[0] + 1)


def wta(y, s, thr=1, ties="stable"):
    y = np.asarray(y, dtype=float)
    if y.size == 0 or y.max() < thr:
        return math.nan
    return float(y[order(y, s, ties)[0]] == y.max())


def r1_r2(y, s):
    """RankBoost+ Eq. 3-4 over every critical pair (hi, lo) with y[hi] > y[lo]."""
    crit = wrong = tie = 0
    for i in range(len(y)):
        for j in range(len(y)):
            if y[i] > y[j]:
                crit += 1
                if s[i] < s[j]:
                    wrong += 1
                elif s[i] == s[j]:
                    tie += 1
    if crit == 0:
        return math.nan, math.nan
    return (wrong + tie) / crit, (wrong + 0.5 * tie) / crit


def tie_orders(y, s):
    """Every total order consistent with the scores (ties broken in every way): list of label arrays."""
    y = np.asarray(y, dtype=float)
    s = np.asarray(s, dtype=float)
    groups = [np.flatnonzero(s == v) for v in np.unique(s)[::-1]]
    out = []
    for perms in itertools.product(*[list(itertools.permutations(g)) for g in groups]):
        out.append(y[np.concatenate([np.array(p, dtype=int) for p in perms])])
    return out


def _precision_measures(good_in_order):
    ranks = np.flatnonzero(good_in_order) + 1
    K = ranks.size
    ap = np.mean(np.arange(1, K + 1) / ranks)
    return ap, 1.0 / ranks[0], K / ranks[-1]


def expected_by_enumeration(y, s, good="max"):
    """E[AP], E[PROT], E[coverage], E[disagreement] by enumerating every tie order (small inputs)."""
    y = np.asarray(y, dtype=float)
    thr = y.max() if good == "max" else good
    vals = []
    for lab in tie_orders(y, s):
        g = lab >= thr
        pm = _precision_measures(g) if g.any() else (math.nan,) * 3
        # disagreement of a total order: misordered pairs / ordered pairs
        n = lab.size
        crit = wrong = 0
        for i in range(n):
            for j in range(i + 1, n):
                if lab[i] != lab[j]:
                    crit += 1
                    wrong += lab[i] < lab[j]
        vals.append((*pm, wrong / crit if crit else math.nan))
    return tuple(float(v) for v in np.mean(np.array(vals), axis=0))


def per_query(fn, y, s, qptr, **kw):
    """Apply a one-query reference to every query of flat arrays."""
    return np.array([fn(y[qptr[q]:qptr[q + 1]], s[qptr[q]:qptr[q + 1]], **kw) for q in range(len(qptr) - 1)],
                    dtype=float)


def loop_evaluate(y, s, qptr, k=10):
    """A straightforward per-query NumPy loop for ndcg@k, map and err@k (the benchmark's reference)."""
    return {
        f"ndcg@{k}": np.nanmean(per_query(ndcg, y, s, qptr, k=k)),
        "map": np.nanmean(per_query(average_precision, y, s, qptr)),
        f"err@{k}": np.nanmean(per_query(err, y, s, qptr, k=k)),
    }
