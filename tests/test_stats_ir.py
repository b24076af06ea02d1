"""lrank.stats' IR significance tests (paired randomisation, paired t, Holm / Bonferroni / BH) against ranx's
``compare`` on the same per-query scores, and statsmodels' corrections."""

import numpy as np
import pandas as pd
import pytest

from lrank import stats


def _runs(seed=0, n_queries=40, n_docs=12):
    """Qrels and three runs (ranx objects) of increasing quality on random documents."""
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {"weak": {}, "mid": {}, "good": {}}
    for q in range(n_queries):
        rel = rng.integers(0, 3, n_docs)
        qrels[f"q{q}"] = {f"d{d}": int(r) for d, r in enumerate(rel) if r > 0}
        for name, noise in (("weak", 1.6), ("mid", 1.3), ("good", 1.0)):
            s = rel + noise * rng.normal(size=n_docs)
            runs[name][f"q{q}"] = {f"d{d}": float(v) for d, v in enumerate(s)}
    qrels = {q: r for q, r in qrels.items() if r}
    return ranx.Qrels(qrels), {k: ranx.Run({q: v[q] for q in qrels}, name=k) for k, v in runs.items()}


def _per_query(run, metric):
    return np.array([run.scores[metric][q] for q in sorted(run.scores[metric])])


def test_t_test_equals_ranx_student_exactly():
    import ranx

    qrels, runs = _runs()
    report = ranx.compare(qrels, list(runs.values()), ["ndcg@10"], stat_test="student")
    for a, b in (("good", "weak"), ("mid", "weak"), ("good", "mid")):
        ours = stats.paired_ttest(_per_query(runs[a], "ndcg@10"), _per_query(runs[b], "ndcg@10"))[1]
        theirs = report.comparisons[frozenset([a, b])]["ndcg@10"]["p_value"]
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-300)


def test_randomization_test_agrees_with_ranx_fisher_within_monte_carlo_error():
    import ranx

    qrels, runs = _runs(seed=3, n_queries=30)
    n = 4000
    report = ranx.compare(qrels, list(runs.values()), ["ndcg@10", "map"], stat_test="fisher",
                          n_permutations=n, random_seed=7)
    checked = 0
    for metric in ("ndcg@10", "map"):
        for a, b in (("good", "weak"), ("mid", "weak"), ("good", "mid")):
            x, y = _per_query(runs[a], metric), _per_query(runs[b], metric)
            diff, ours = stats.randomization_test(x, y, n_resamples=n, random_state=1)
            theirs = report.comparisons[frozenset([a, b])][metric]["p_value"]
            assert diff == pytest.approx(x.mean() - y.mean())
            # both are Monte-Carlo estimates of the same p from n relabellings each: 4 standard errors
            p = max(ours, theirs, 1.0 / n)
            assert abs(ours - theirs) <= 4 * np.sqrt(2 * p * (1 - p) / n) + 2.0 / n, (metric, a, b)
            checked += 0.001 < theirs < 0.999
    assert checked >= 2  # some comparisons are neither certain nor hopeless, so the check has teeth


def test_randomization_test_is_exact_for_few_queries():
    # 5 queries: 32 relabellings, enumerated; |mean d| >= observed for the sign flips of d = (1, 1, 1, 1, 1)
    # only at all-plus and all-minus: p = 2 / 32
    a = np.array([2.0, 3.0, 4.0, 5.0, 6.0])
    assert stats.randomization_test(a, a - 1)[1] == pytest.approx(2 / 32)
    assert stats.randomization_test(a, a) == (0.0, 1.0)
    assert stats.randomization_test(a, a - 1, random_state=5) == stats.randomization_test(a, a - 1)


def test_randomization_test_same_seed_same_bits():
    rng = np.random.default_rng(0)
    a, b = rng.random(50), rng.random(50)
    assert stats.randomization_test(a, b, random_state=3) == stats.randomization_test(a, b, random_state=3)


def test_corrections_are_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.03, 0.2, 0.005])
    for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        adj, rej = stats.correct_pvalues(p, ours)
        np.testing.assert_array_equal(adj, multipletests(p, method=theirs)[1])
        np.testing.assert_array_equal(rej, adj < 0.05)
    # Holm by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.2 times 5, 4, 3, 2, 1, running maximum
    np.testing.assert_allclose(stats.correct_pvalues(p, "holm")[0], [0.04, 0.09, 0.09, 0.2, 0.025])
    np.testing.assert_array_equal(stats.correct_pvalues(p, "none")[0], p)
    with pytest.raises(ValueError, match="correction must be one of"):
        stats.correct_pvalues(p, "sidak-ish")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        stats.correct_pvalues([0.5, 1.5])


def test_compare_family_over_systems_and_metrics():
    rng = np.random.default_rng(0)
    base = rng.random(60)
    ndcg = pd.DataFrame({"bm25": base, "lmart": base + 0.1 + 0.02 * rng.normal(size=60),
                         "noise": base + 0.05 * rng.normal(size=60)})
    ap = ndcg * 0.8
    out = stats.compare({"ndcg@10": ndcg, "map": ap}, baseline="bm25", test="t", correction="bonferroni")
    assert list(out["system"]) == ["lmart", "noise", "lmart", "noise"]
    assert (out["baseline"] == "bm25").all() and list(out["metric"]) == ["ndcg@10"] * 2 + ["map"] * 2
    np.testing.assert_allclose(out["p_adjusted"], np.minimum(4 * out["p_value"], 1.0))
    assert out.loc[0, "significant"] and not out.loc[1, "significant"]
    assert out.loc[0, "p_value"] == stats.paired_ttest(ndcg["lmart"], ndcg["bm25"])[1]
    allpairs = stats.compare(ndcg, test="fisher", n_resamples=999)
    assert [(s, b) for s, b in zip(allpairs["system"], allpairs["baseline"])] == [
        ("lmart", "bm25"), ("noise", "bm25"), ("noise", "lmart")]
    assert allpairs.loc[0, "p_value"] == pytest.approx(1 / 1000)  # no relabelling reaches a shift of 0.1


def test_compare_refuses_bad_input():
    df = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [0.2, np.nan, 0.1]})
    with pytest.raises(ValueError, match="system 'b' has no score on some queries"):
        stats.compare(df)
    with pytest.raises(ValueError, match="test must be one of"):
        stats.compare(df.fillna(0), test="wilcoxon")
    with pytest.raises(ValueError, match="baseline 'c' is not one of"):
        stats.compare(df.fillna(0), baseline="c")
    with pytest.raises(ValueError, match=r"different numbers of queries \(a 3, b 2\)"):  # was pandas' words
        stats.compare({"ndcg@10": {"a": [0.1, 0.2, 0.3], "b": np.array([0.2, 0.1])}})
    with pytest.raises(ValueError, match="equally long"):
        stats.randomization_test([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="n_resamples"):
        stats.randomization_test([0.1, 0.2], [0.1, 0.3], n_resamples=0)
