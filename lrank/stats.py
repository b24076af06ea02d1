"""Comparing algorithms over many tasks (Demšar 2006): average ranks, Friedman + Nemenyi, CD diagrams,
paired t-tests. Thin wrappers over scipy and scikit-posthocs; nothing statistical is hand-written.

Scores come as a DataFrame with one row per task (data set) and one column per algorithm.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def _frame(scores: Any) -> pd.DataFrame:
    df = pd.DataFrame(scores)
    if df.shape[1] < 2:
        raise ValueError("need at least two algorithms (columns)")
    if df.isna().any().any():
        raise ValueError("scores contain NaN; drop or fill the tasks first")
    return df.astype(np.float64)


def task_ranks(scores: Any, lower_is_better: bool = True) -> pd.DataFrame:
    """Rank of each algorithm on each task (1 = best; ties get the average rank)."""
    df = _frame(scores)
    return df.rank(axis=1, method="average", ascending=lower_is_better)


def average_ranks(scores: Any, lower_is_better: bool = True) -> pd.Series:
    """Average rank of each algorithm over the tasks (the RankBoost+ paper's Table 1)."""
    return task_ranks(scores, lower_is_better).mean(axis=0)


def friedman(scores: Any) -> tuple[float, float]:
    """Friedman's chi-square statistic and p-value (``scipy.stats.friedmanchisquare``)."""
    from scipy.stats import friedmanchisquare

    df = _frame(scores)
    if df.shape[1] < 3:
        raise ValueError("the Friedman test needs at least three algorithms")
    res = friedmanchisquare(*[df[c].to_numpy() for c in df.columns])
    return float(res.statistic), float(res.pvalue)


def nemenyi(scores: Any) -> pd.DataFrame:
    """Pairwise Nemenyi p-values after Friedman (``scikit_posthocs.posthoc_nemenyi_friedman``)."""
    import scikit_posthocs as sp

    df = _frame(scores)
    p = sp.posthoc_nemenyi_friedman(df.to_numpy())
    p.index = p.columns = list(df.columns)
    return p


def critical_difference(n_algorithms: int, n_tasks: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``q_alpha sqrt(k (k+1) / (6 N))`` (Demšar 2006, Eq. 2).

    ``q_alpha`` is the studentized range quantile over sqrt(2) (``scipy.stats.studentized_range``).
    """
    from scipy.stats import studentized_range

    k, N = int(n_algorithms), int(n_tasks)
    if k < 2 or N < 1:
        raise ValueError("need k >= 2 algorithms and N >= 1 tasks")
    q = studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * N)))


def cd_diagram(scores: Any, lower_is_better: bool = True, alpha: float = 0.05, ax: Any = None) -> Any:
    """Critical-difference diagram (``scikit_posthocs.critical_difference_diagram``): average ranks,
    with bars joining algorithms whose Nemenyi p-value is at least ``alpha``. Returns the axes."""
    import matplotlib.pyplot as plt
    import scikit_posthocs as sp

    ranks = average_ranks(scores, lower_is_better)
    sig = nemenyi(scores)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 2.2))
    sp.critical_difference_diagram(ranks, sig, alpha=alpha, ax=ax)
    return ax


def paired_ttest(a: Any, b: Any) -> tuple[float, float]:
    """Paired two-sided t-test (``scipy.stats.ttest_rel``): statistic and p-value."""
    from scipy.stats import ttest_rel

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.size < 2:
        raise ValueError("need two equally long samples of at least two values")
    res = ttest_rel(a, b)
    return float(res.statistic), float(res.pvalue)


def comparison_table(scores: Any, lower_is_better: bool = True, alpha: float = 0.05) -> pd.DataFrame:
    """Average rank per algorithm with the Friedman p-value and the critical difference (one table)."""
    df = _frame(scores)
    out = pd.DataFrame({"average rank": average_ranks(df, lower_is_better), "mean": df.mean(axis=0)})
    if df.shape[1] >= 3:
        out.attrs["friedman_p"] = friedman(df)[1]
    out.attrs["critical_difference"] = critical_difference(df.shape[1], df.shape[0], alpha)
    return out


# ------------------------------------------------------------------------------------- verdicts
HELD, NOT_HELD, UNDECIDED = "HELD", "NOT HELD", "UNDECIDED"


def paired_comparison(a: Any, b: Any, *, alpha: float = 0.05, n_resamples: int = 9999,
                      random_state: int = 0) -> dict:
    """Compare two paired samples (per query or per task): is ``a`` larger than ``b``?

    Two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon``; zero differences dropped, as
    Wilcox's rule) for the p-value, and a percentile bootstrap (``scipy.stats.bootstrap``) of the mean
    difference ``a - b`` for a ``1 - alpha`` interval. Returns ``n``, ``mean_a``, ``mean_b``,
    ``mean_diff``, ``ci_low``, ``ci_high``, ``p_value`` and ``verdict`` for the claim "a > b":
    HELD when p < alpha and the mean difference is positive, NOT HELD when p < alpha and it is
    negative, UNDECIDED otherwise (not significant is never NOT HELD).
    """
    from scipy.stats import bootstrap, wilcoxon

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two equally long 1-d samples, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired samples must be finite")
    d = a - b
    n = int(d.size)
    out = {"n": n, "mean_a": float(a.mean()) if n else math.nan, "mean_b": float(b.mean()) if n else math.nan,
           "mean_diff": float(d.mean()) if n else math.nan, "ci_low": math.nan, "ci_high": math.nan,
           "p_value": 1.0, "verdict": UNDECIDED}
    if n < 2 or not np.any(d != 0):
        return out
    nz = d[d != 0]
    # exact null distribution when it is exact (no ties, n <= 50), else the normal approximation with the
    # tie correction; scipy's "auto" falls back to a permutation test that is slow on small tied samples
    exact = nz.size <= 50 and np.unique(np.abs(nz)).size == nz.size
    out["p_value"] = float(wilcoxon(d, zero_method="wilcox", alternative="two-sided",
                                    method="exact" if exact else "approx").pvalue)
    if np.ptp(d) > 0:
        ci = bootstrap((d,), np.mean, confidence_level=1 - alpha, n_resamples=n_resamples,
                       method="percentile", rng=np.random.default_rng(random_state)).confidence_interval
        out["ci_low"], out["ci_high"] = float(ci.low), float(ci.high)
    else:
        out["ci_low"] = out["ci_high"] = float(d[0])
    out["verdict"] = verdict(out["p_value"], out["mean_diff"] > 0, alpha)
    return out


def verdict(p_value: float, direction_holds: bool, alpha: float = 0.05) -> str:
    """HELD / NOT HELD / UNDECIDED from a two-sided p-value and the sign of the observed effect."""
    if not p_value < alpha:
        return UNDECIDED
    return HELD if direction_holds else NOT_HELD
