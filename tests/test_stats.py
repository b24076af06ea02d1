"""lrank.stats: ranks, Friedman/Nemenyi, critical difference (Demšar 2006 values), paired t-test."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

from lrank import stats

matplotlib.use("Agg")


def _scores(seed=0, n=30):
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    return pd.DataFrame({"Rb+": base, "Rb-c": base + 0.05 + 0.01 * rng.random(n),
                         "Rb-d": base + 0.2 + 0.01 * rng.random(n)})


def test_average_ranks_and_ties():
    df = pd.DataFrame({"a": [1.0, 2.0, 1.0], "b": [2.0, 1.0, 1.0]})
    np.testing.assert_allclose(stats.task_ranks(df, lower_is_better=True).to_numpy(),
                               [[1, 2], [2, 1], [1.5, 1.5]])
    r = stats.average_ranks(_scores(), lower_is_better=True)
    assert list(r.round(6)) == [1.0, 2.0, 3.0]
    assert list(stats.average_ranks(_scores(), lower_is_better=False).round(6)) == [3.0, 2.0, 1.0]


@pytest.mark.parametrize("fn", ["task_ranks", "average_ranks", "cd_diagram", "comparison_table"])
def test_rank_direction_must_be_said(fn):
    """NDCG and MAP (higher is better) and error rates (lower is better) are both common: a default
    direction reversed every rank of the other kind without an error."""
    with pytest.raises(TypeError, match="lower_is_better"):
        getattr(stats, fn)(_scores())
    table = stats.comparison_table(_scores(), lower_is_better=False)
    assert list(table["average rank"].round(6)) == [3.0, 2.0, 1.0]


def test_critical_difference_demsar():
    # Demsar 2006 Table 5(a): q_0.05 = 2.343 for k = 3, 2.569 for k = 4
    assert abs(stats.critical_difference(3, 1) / np.sqrt(3 * 4 / 6) - 2.343) < 1e-3
    assert abs(stats.critical_difference(4, 1) / np.sqrt(4 * 5 / 6) - 2.569) < 1e-3


def test_friedman_nemenyi():
    df = _scores()
    chi2, p = stats.friedman(df)
    assert chi2 == pytest.approx(60.0) and p < 1e-10  # perfectly consistent ranks: chi2 = 2N
    pv = stats.nemenyi(df)
    assert list(pv.columns) == ["Rb+", "Rb-c", "Rb-d"]
    assert pv.loc["Rb+", "Rb-d"] < 0.05


def test_cd_diagram_and_ttest():
    ax = stats.cd_diagram(_scores(), lower_is_better=True)
    assert ax is not None
    t, p = stats.paired_ttest([1, 2, 3, 4.5], [1.5, 2.5, 3.2, 5])
    assert p < 0.1 and t < 0


def test_bad_input():
    with pytest.raises(ValueError):
        stats.average_ranks(pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, 2.0]}), lower_is_better=True)
    with pytest.raises(ValueError):
        stats.friedman(pd.DataFrame({"a": [1.0, 2.0], "b": [2.0, 1.0]}))
    with pytest.raises(ValueError):
        stats.paired_ttest([1.0], [2.0])
    with pytest.raises(ValueError, match=r"1-d samples .* got shapes \(2, 2\) and \(2, 2\)"):
        stats.paired_ttest([[1.0, 2.0], [3.0, 4.0]], [[1.5, 2.0], [3.0, 4.5]])  # was a TypeError


def test_paired_comparison_verdicts():
    from lrank.stats import paired_comparison, verdict

    rng = np.random.default_rng(0)
    base = rng.normal(size=60)
    up = paired_comparison(base + 0.5 + 0.1 * rng.normal(size=60), base)
    assert up["verdict"] == "HELD" and up["n"] == 60 and up["p_value"] < 1e-6
    assert up["ci_low"] > 0 and up["ci_low"] < up["mean_diff"] < up["ci_high"]
    down = paired_comparison(base - 0.5 + 0.1 * rng.normal(size=60), base)
    assert down["verdict"] == "NOT HELD" and down["ci_high"] < 0
    noise = paired_comparison(base + rng.normal(size=60), base + rng.normal(size=60))
    assert noise["verdict"] == "UNDECIDED" and noise["p_value"] > 0.05
    assert paired_comparison(base[:1], base[:1] - 1)["verdict"] == "UNDECIDED"  # one pair decides nothing
    assert verdict(0.049, True) == "HELD" and verdict(0.049, False) == "NOT HELD"
    assert verdict(0.05, True) == "UNDECIDED"


def test_paired_comparison_p_value_is_scipys():
    from scipy.stats import wilcoxon

    from lrank.stats import paired_comparison

    rng = np.random.default_rng(1)
    a, b = rng.normal(size=30), rng.normal(size=30)
    assert paired_comparison(a, b)["p_value"] == pytest.approx(wilcoxon(a - b).pvalue, rel=1e-12)
    ta, tb = np.round(a, 1), np.round(b, 1)  # ties: normal approximation with the tie correction
    assert paired_comparison(ta, tb)["p_value"] == pytest.approx(
        wilcoxon(ta - tb, method="approx").pvalue, rel=1e-12)
    with pytest.raises(ValueError, match="equally long"):
        paired_comparison(a, b[:-1])
