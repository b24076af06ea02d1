"""Comparing algorithms over many tasks (Demšar 2006): average ranks, Friedman + Nemenyi, CD diagrams,
paired t-tests; and comparing systems over queries as IR papers do (`compare`: the paired randomisation
test or paired t-test with a Holm / Bonferroni / Benjamini-Hochberg correction). Thin wrappers over scipy,
statsmodels and scikit-posthocs; nothing statistical is hand-written.

Scores come as a DataFrame with one row per task (data set, or query) and one column per algorithm.
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


def task_ranks(scores: Any, *, lower_is_better: bool) -> pd.DataFrame:
    """Rank of each algorithm on each task (1 = best; ties get the average rank).

    Parameters
    ----------
    scores : DataFrame or array-like of shape (n_tasks, n_algorithms)
        One row per task and one column per algorithm (at least two; no NaN).
    lower_is_better : bool
        True when a smaller score is better (an error rate, a loss): the smallest score on a task gets
        rank 1; False where larger is better (NDCG, MAP). Required, with no default: both kinds of
        score are common, and the wrong guess reverses every rank without any error.

    Returns
    -------
    DataFrame
        The ranks, float64, with the index and columns of ``scores``.
    """
    df = _frame(scores)
    return df.rank(axis=1, method="average", ascending=lower_is_better)


def average_ranks(scores: Any, *, lower_is_better: bool) -> pd.Series:
    """Average rank of each algorithm over the tasks (the RankBoost+ paper's Table 1).

    Parameters
    ----------
    scores : DataFrame or array-like of shape (n_tasks, n_algorithms)
        One row per task and one column per algorithm (at least two; no NaN).
    lower_is_better : bool
        True when a smaller score is better (an error rate, a loss): the smallest score on a task gets
        rank 1; False where larger is better (NDCG, MAP). Required, with no default: both kinds of
        score are common, and the wrong guess reverses every rank without any error.

    Returns
    -------
    Series
        The mean of `task_ranks` over the tasks, indexed by algorithm.
    """
    return task_ranks(scores, lower_is_better=lower_is_better).mean(axis=0)


def friedman(scores: Any) -> tuple[float, float]:
    """Friedman's chi-square statistic and p-value (``scipy.stats.friedmanchisquare``).

    Parameters
    ----------
    scores : DataFrame or array-like of shape (n_tasks, n_algorithms)
        One row per task and one column per algorithm (at least three; no NaN). The test depends on
        the ranks only, so whether lower or higher is better does not matter.

    Returns
    -------
    statistic : float
    p_value : float
    """
    from scipy.stats import friedmanchisquare

    df = _frame(scores)
    if df.shape[1] < 3:
        raise ValueError("the Friedman test needs at least three algorithms")
    res = friedmanchisquare(*[df[c].to_numpy() for c in df.columns])
    return float(res.statistic), float(res.pvalue)


def nemenyi(scores: Any) -> pd.DataFrame:
    """Pairwise Nemenyi p-values after Friedman (``scikit_posthocs.posthoc_nemenyi_friedman``).

    Parameters
    ----------
    scores : DataFrame or array-like of shape (n_tasks, n_algorithms)
        One row per task and one column per algorithm (at least two; no NaN). The test is two-sided
        on the ranks, so whether lower or higher is better does not matter.

    Returns
    -------
    DataFrame of shape (n_algorithms, n_algorithms)
        The p-value of every pair, indexed and labelled by the columns of ``scores``.
    """
    import scikit_posthocs as sp

    df = _frame(scores)
    p = sp.posthoc_nemenyi_friedman(df.to_numpy())
    p.index = p.columns = list(df.columns)
    return p


def critical_difference(n_algorithms: int, n_tasks: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``q_alpha sqrt(k (k+1) / (6 N))`` (Demšar 2006, Eq. 2).

    ``q_alpha`` is the studentized range quantile over sqrt(2) (``scipy.stats.studentized_range``).

    Parameters
    ----------
    n_algorithms : int
        ``k``, the number of algorithms compared (>= 2).
    n_tasks : int
        ``N``, the number of tasks (data sets) they are compared on (>= 1).
    alpha : float, default 0.05
        Significance level.

    Returns
    -------
    float
        The smallest difference of average ranks that is significant at level ``alpha``.
    """
    from scipy.stats import studentized_range

    k, N = int(n_algorithms), int(n_tasks)
    if k < 2 or N < 1:
        raise ValueError("need k >= 2 algorithms and N >= 1 tasks")
    q = studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * N)))


def cd_diagram(scores: Any, *, lower_is_better: bool, alpha: float = 0.05, ax: Any = None) -> Any:
    """Critical-difference diagram (``scikit_posthocs.critical_difference_diagram``): average ranks,
    with bars joining algorithms whose Nemenyi p-value is at least ``alpha``. Returns the axes.

    Parameters
    ----------
    scores : DataFrame or array-like of shape (n_tasks, n_algorithms)
        One row per task and one column per algorithm (at least two; no NaN).
    lower_is_better : bool
        True when a smaller score is better, False where larger is better (NDCG, MAP); passed to
        `average_ranks` (the Nemenyi p-values do not depend on it). Required, as there.
    alpha : float, default 0.05
        Significance level: pairs with a Nemenyi p-value below it are not joined.
    ax : matplotlib.axes.Axes, optional
        The axes to draw on; None draws on a new 6.4 x 2.2 inch figure.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    import scikit_posthocs as sp

    ranks = average_ranks(scores, lower_is_better=lower_is_better)
    sig = nemenyi(scores)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 2.2))
    sp.critical_difference_diagram(ranks, sig, alpha=alpha, ax=ax)
    return ax


def paired_ttest(a: Any, b: Any) -> tuple[float, float]:
    """Paired two-sided t-test (``scipy.stats.ttest_rel``): statistic and p-value.

    Parameters
    ----------
    a, b : array-like of shape (n_pairs,)
        The paired samples (e.g. per-query scores of two systems on the same queries, in the same
        order), of the same shape and at least two values each.

    Returns
    -------
    statistic : float
        Positive when ``a`` is larger on average.
    p_value : float
        NaN when ``a`` and ``b`` are identical (0, with an infinite statistic, when ``a - b`` is a
        non-zero constant).
    """
    from scipy.stats import ttest_rel

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"need two equally long 1-d samples of at least two values, got shapes {a.shape} "
                         f"and {b.shape}")
    res = ttest_rel(a, b)
    return float(res.statistic), float(res.pvalue)


def comparison_table(scores: Any, *, lower_is_better: bool, alpha: float = 0.05) -> pd.DataFrame:
    """Average rank per algorithm with the Friedman p-value and the critical difference (one table).

    Parameters
    ----------
    scores : DataFrame or array-like of shape (n_tasks, n_algorithms)
        One row per task and one column per algorithm (at least two; no NaN).
    lower_is_better : bool
        True when a smaller score is better (an error rate, a loss): the smallest score on a task gets
        rank 1; False where larger is better (NDCG, MAP). Required, with no default: both kinds of
        score are common, and the wrong guess reverses every rank without any error.
    alpha : float, default 0.05
        Significance level of the critical difference (`critical_difference`).

    Returns
    -------
    DataFrame
        One row per algorithm, columns ``average rank`` and ``mean`` (the mean score over the tasks);
        ``attrs["critical_difference"]``, and ``attrs["friedman_p"]`` when there are at least three
        algorithms.
    """
    df = _frame(scores)
    ranks = average_ranks(df, lower_is_better=lower_is_better)
    out = pd.DataFrame({"average rank": ranks, "mean": df.mean(axis=0)})
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

    Parameters
    ----------
    a, b : array-like of shape (n_pairs,)
        The paired samples, 1-d, of the same length, finite. With fewer than two pairs, or no non-zero
        difference, the result is UNDECIDED with ``p_value`` 1 and no interval (NaN).
    alpha : float, default 0.05
        Significance level of the verdict; the interval's confidence level is ``1 - alpha``.
    n_resamples : int, default 9999
        Bootstrap resamples.
    random_state : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    dict
        The keys listed above; ``verdict`` is one of ``"HELD"``, ``"NOT HELD"``, ``"UNDECIDED"``.
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
    """HELD / NOT HELD / UNDECIDED from a two-sided p-value and the sign of the observed effect.

    Parameters
    ----------
    p_value : float
        Two-sided p-value of the test; NaN counts as not significant.
    direction_holds : bool
        Whether the observed effect has the claimed sign (e.g. ``mean(a - b) > 0`` for "a > b").
    alpha : float, default 0.05
        Significance level.

    Returns
    -------
    str
        ``"HELD"`` when ``p_value < alpha`` and the direction holds, ``"NOT HELD"`` when ``p_value <
        alpha`` and it does not, ``"UNDECIDED"`` otherwise.
    """
    if not p_value < alpha:
        return UNDECIDED
    return HELD if direction_holds else NOT_HELD


# --------------------------------------------------------------- significance as IR papers test it
#: ``correction=`` names accepted by `compare` and `correct_pvalues`, with statsmodels' method names.
CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "fdr_bh": "fdr_bh",
               "benjamini-hochberg": "fdr_bh"}
#: ``test=`` names accepted by `compare`.
TESTS = ("fisher", "t")


def _paired(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"need two equally long 1-d samples of at least two values (one per query), got "
                         f"shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired samples must be finite (a query without a score?)")
    return a, b


def randomization_test(a: Any, b: Any, *, n_resamples: int = 10000, random_state: int = 0
                       ) -> tuple[float, float]:
    """Paired randomisation (Fisher) test over queries, two-sided (Smucker, Allan & Carterette 2007).

    Under the null hypothesis the two systems are exchangeable on every query, so each query's pair of
    scores is swapped with probability 1/2; the p-value is the share of such relabellings whose
    ``|mean(a) - mean(b)|`` is at least the observed one. Computed by ``scipy.stats.permutation_test``
    (``permutation_type="samples"``: exact when ``2**n <= n_resamples``, else ``n_resamples`` random
    relabellings, whose p-value is ``(k + 1) / (n_resamples + 1)``); ranx's ``compare(stat_test="fisher")``
    is the same test (its p-value is ``k / n_permutations``).

    Parameters
    ----------
    a, b : array-like of shape (n_queries,)
        Per-query scores of the two systems on the same queries, in the same order.
    n_resamples : int, default 10000
        Random relabellings. The Monte-Carlo standard error of p is ``sqrt(p (1 - p) / n_resamples)``.
    random_state : int, default 0
        Seed of the random relabellings.

    Returns
    -------
    statistic : float
        ``mean(a) - mean(b)``.
    p_value : float
        1 when ``a`` and ``b`` are equal on every query.
    """
    from scipy.stats import permutation_test

    a, b = _paired(a, b)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    diff = float(a.mean() - b.mean())
    if not np.any(a != b):
        return diff, 1.0

    def stat(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.abs(np.mean(x - y, axis=axis))

    res = permutation_test((a, b), stat, permutation_type="samples", vectorized=True,
                           n_resamples=int(n_resamples), alternative="greater",
                           rng=np.random.default_rng(random_state))
    return diff, float(res.pvalue)


def correct_pvalues(p_values: Any, correction: str = "holm", alpha: float = 0.05
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Adjust a family of p-values for multiple comparisons (``statsmodels.stats.multitest.multipletests``).

    Parameters
    ----------
    p_values : array-like of floats in [0, 1]
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
        Holm's step-down, Bonferroni, or Benjamini-Hochberg's false discovery rate (``"bh"``, also spelt
        ``"fdr_bh"``); ``"none"`` returns the p-values as they are.
    alpha : float, default 0.05

    Returns
    -------
    p_adjusted : ndarray
    reject : ndarray of bool
        ``p_adjusted < alpha`` for the corrections that adjust p (Holm, Bonferroni, BH).
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError(f"p-values must lie in [0, 1], got {p[np.isnan(p) | (p < 0) | (p > 1)][:3]}")
    key = str(correction).lower()
    if key == "none":
        return p.copy(), p < alpha
    if key not in CORRECTIONS:
        raise ValueError(f"correction must be one of {sorted(CORRECTIONS) + ['none']}, got {correction!r}")
    if p.size == 0:
        return p.copy(), np.zeros(0, dtype=bool)
    from statsmodels.stats.multitest import multipletests

    _, adj, _, _ = multipletests(p, alpha=alpha, method=CORRECTIONS[key])
    return adj, adj < alpha


def compare(scores: Any, *, baseline: str | None = None, test: str = "fisher", correction: str = "holm",
            alpha: float = 0.05, n_resamples: int = 10000, random_state: int = 0) -> pd.DataFrame:
    """Paired significance tests of systems over queries, corrected across systems and metrics.

    The IR practice of ranx's ``compare`` and PyTerrier's ``pt.Experiment(baseline=..., correction=...)``:
    every system against the baseline (or, without one, every pair of systems), on every metric, by the
    paired randomisation test (`randomization_test`) or the paired t-test (`paired_ttest`), with one
    correction over the whole family of tests.

    Parameters
    ----------
    scores : DataFrame, or dict of DataFrames
        One row per query and one column per system (per-query scores, e.g. from
        ``lrank.metrics.evaluate(..., per_query=True)``); a dict ``{metric: DataFrame}`` tests several
        metrics in one family. Rows must be the same queries for every system (no NaN).
    baseline : str, optional
        The system every other is compared with; default every pair (in column order).
    test : {"fisher", "t"}, default "fisher"
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
    alpha : float, default 0.05
    n_resamples : int, default 10000
        Random relabellings of the randomisation test (``test="fisher"``).
    random_state : int, default 0
        Seed of the randomisation test; every comparison uses the same one.

    Returns
    -------
    DataFrame
        One row per test: ``metric``, ``system``, ``baseline``, ``mean``, ``mean_baseline``, ``diff``
        (``mean - mean_baseline``), ``n`` (queries), ``p_value``, ``p_adjusted`` and ``significant``
        (``p_adjusted < alpha``).
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    tables = dict(scores) if isinstance(scores, dict) else {"score": scores}
    rows = []
    for metric, table in tables.items():
        if isinstance(table, dict) and not all(isinstance(v, pd.Series) for v in table.values()):
            sizes = {str(k): len(v) for k, v in table.items()}
            if len(set(sizes.values())) > 1:
                raise ValueError(f"metric {metric!r}: the systems have scores for different numbers of "
                                 f"queries ({', '.join(f'{k} {n}' for k, n in sizes.items())}); compare "
                                 "systems on the same queries")
        df = pd.DataFrame(table)
        if df.shape[1] < 2:
            raise ValueError(f"metric {metric!r}: need at least two systems (columns), got {df.shape[1]}")
        if df.isna().any().any():
            col = df.columns[df.isna().any()][0]
            raise ValueError(f"metric {metric!r}: system {col!r} has no score on some queries (NaN); "
                             "compare systems on the same queries")
        names = [str(c) for c in df.columns]
        df.columns = names
        if baseline is not None and baseline not in names:
            raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
        pairs = ([(s, baseline) for s in names if s != baseline] if baseline is not None else
                 [(names[j], names[i]) for i in range(len(names)) for j in range(i + 1, len(names))])
        for system, base in pairs:
            a, b = df[system].to_numpy(np.float64), df[base].to_numpy(np.float64)
            if test == "fisher":
                _, p = randomization_test(a, b, n_resamples=n_resamples, random_state=random_state)
            else:
                _, p = paired_ttest(a, b)
                p = 1.0 if math.isnan(p) else p  # identical samples: no evidence of a difference
            rows.append({"metric": metric, "system": system, "baseline": base, "mean": float(a.mean()),
                         "mean_baseline": float(b.mean()), "diff": float(a.mean() - b.mean()),
                         "n": int(a.size), "p_value": float(p)})
    out = pd.DataFrame(rows, columns=["metric", "system", "baseline", "mean", "mean_baseline", "diff", "n",
                                      "p_value"])
    out["p_adjusted"], out["significant"] = correct_pvalues(out["p_value"].to_numpy(), correction, alpha)
    out.attrs.update(test=test, correction=correction, alpha=alpha)
    return out
