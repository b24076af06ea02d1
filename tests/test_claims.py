"""The claims registry: verdicts follow from the evidence, Holm within a paper, files, seed stability."""

import math

import numpy as np
import pytest
from scipy import stats

from lrank import claims
from lrank.claims import HELD, NOT_COMPARABLE, NOT_HELD, NOT_TESTABLE, UNDECIDED, Evidence, Registry


@pytest.fixture(autouse=True)
def _out(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("LRANK_PROFILE", "quick")


def ev(p, effect, ci=(math.nan, math.nan), **kw):
    return Evidence(test="t", n=30, unit="queries", p=p, effect=effect, effect_desc="a - b", ci=ci, **kw)


def add(reg, cid, e, **kw):
    return reg.tested(cid, location="Fig. 1", sentence="A beats B.", quantity="NDCG", data_kind="synthetic",
                      data="toy", evidence=e, **kw)


def test_decide_follows_p_and_sign():
    assert claims.decide(ev(0.01, 0.2), 0.01)[0] == HELD
    assert claims.decide(ev(0.01, -0.2), 0.01)[0] == NOT_HELD
    assert claims.decide(ev(0.2, -0.2), 0.2)[0] == UNDECIDED  # not significant is never NOT HELD
    assert claims.decide(ev(0.2, 0.2), 0.2)[0] == UNDECIDED


def test_margin_claims_need_a_rationale_and_decide_by_interval():
    with pytest.raises(ValueError, match="rationale"):
        ev(0.01, 0.0, margin=0.01)
    m = dict(margin=0.01, margin_rationale="a tenth of the paper's smallest reported gap")
    assert claims.decide(ev(0.01, -0.002, **m), 0.01)[0] == HELD
    assert claims.decide(ev(0.3, -0.05, ci=(-0.08, -0.02), **m), 0.3)[0] == NOT_HELD
    assert claims.decide(ev(0.3, -0.005, ci=(-0.03, 0.02), **m), 0.3)[0] == UNDECIDED


def test_holm_within_the_paper_turns_a_lone_significance_undecided():
    reg = Registry("01_rankboost", "RankBoost")
    add(reg, "a", ev(0.03, 0.1))
    alone = reg.finalize(record=False, write=False)
    assert alone.loc[0, "verdict"] == HELD
    for cid, p in (("b", 0.04), ("c", 0.5)):
        add(reg, cid, ev(p, 0.1))
    df = reg.finalize(record=False, write=False).set_index("id")
    # Holm: sorted p 0.03, 0.04, 0.5 -> 3 x 0.03, max(that, 2 x 0.04), max(that, 0.5)
    assert np.allclose(df["p_adj"], [0.09, 0.09, 0.5])
    assert list(df["verdict"]) == [UNDECIDED] * 3


def test_findings_are_reported_never_counted_nor_adjusted():
    reg = Registry("02_adarank", "AdaRank")
    add(reg, "a", ev(0.01, 0.1))
    reg.finding("scaling", location="ours", sentence="time grows linearly", quantity="s", ours=1.0,
                data_kind="synthetic", data="toy", evidence=ev(0.9, 0.1))
    df = reg.finalize(record=False, write=False).set_index("id")
    assert df.loc["a", "p_adj"] == pytest.approx(0.01)  # a family of one
    assert reg.counts()[HELD] == 1 and sum(reg.counts().values()) == 1


def test_overrides_keep_the_evidence_and_need_a_reason():
    reg = Registry("03_boostingtree", "BoostingTree")
    add(reg, "asym", ev(0.01, 0.1), not_comparable="tested at 75 sequences; the paper's claim is at 25,000")
    reg.untestable("wsj", location="Fig. 3", sentence="AdaRank wins on WSJ.", reason="TREC WSJ is licensed")
    with pytest.raises(ValueError, match="reason"):
        reg.untestable("ap", location="Fig. 4", sentence="AdaRank wins on AP.", reason="")
    df = reg.finalize(record=False, write=False).set_index("id")
    assert df.loc["asym", "verdict"] == NOT_COMPARABLE and "HELD" in df.loc["asym", "reason"]
    assert df.loc["wsj", "verdict"] == NOT_TESTABLE


def test_an_untested_not_comparable_row_needs_its_reason_and_stays_out_of_holm():
    reg = Registry("01_rankboost", "RankBoost")
    with pytest.raises(ValueError, match="needs its reason"):
        reg.not_comparable("rankboost.nc", location="Fig. 1", sentence="s", reason=" ")
    reg.not_comparable("rankboost.nc", location="Fig. 1", sentence="s", reason="budget 40 of 1,000 rounds",
                       ours=[1.0], paper_value=[2.0])
    add(reg, "rankboost.a", ev(0.03, 0.1))
    df = reg.finalize(record=False, write=False).set_index("id")
    assert df.loc["rankboost.nc", "verdict"] == NOT_COMPARABLE
    assert "budget 40" in df.loc["rankboost.nc", "reason"]
    assert df.loc["rankboost.a", "verdict"] == HELD  # a family of one: the untested row is not counted


def test_exact_claims_compare_with_the_printed_digits():
    reg = Registry("05_rankboost_plus", "RankBoost+")
    reg.exact("prop1", location="Prop. 1", sentence="R1(h1) = 16/19", ours=16 / 19, paper_value=0.842105,
              tol=5e-7)
    reg.exact("bad", location="Lemma 3", sentence="E1 ~ .888387", ours=0.8885, paper_value=0.888387, tol=5e-7)
    df = reg.finalize(record=False, write=False).set_index("id")
    assert df.loc["prop1", "verdict"] == HELD and df.loc["bad", "verdict"] == NOT_HELD


def test_consistency_check_refuses_a_verdict_against_its_number():
    reg = Registry("04_tree_fitting", "Tree fitting")
    add(reg, "a", ev(0.001, 0.3))
    df = reg.finalize(record=False, write=False)
    assert claims.check_consistency(df) == []
    broken = df.assign(effect=-0.3)
    assert claims.check_consistency(broken)  # HELD with a negative effect
    assert claims.check_consistency(df.assign(verdict=UNDECIDED))  # significant yet UNDECIDED
    assert claims.check_consistency(df.assign(verdict=NOT_HELD))
    # a margin (non-inferiority) claim with p_adj < alpha is HELD: UNDECIDED there is a contradiction too
    m = dict(margin=0.01, margin_rationale="a tenth of the paper's smallest gap")
    reg = Registry("04_tree_fitting", "Tree fitting")
    add(reg, "m", ev(0.001, 0.0, ci=(-0.005, 0.005), **m))
    df = reg.finalize(record=False, write=False)
    assert list(df["verdict"]) == [HELD] and claims.check_consistency(df) == []
    assert claims.check_consistency(df.assign(verdict=UNDECIDED)) == [
        "m: UNDECIDED with p_adj 0.001 < 0.05"]


def test_a_finding_takes_no_verdict_override():
    """``tested(kind="finding", not_comparable=...)`` used to drop the override silently (finalize keeps a
    finding's verdict empty)."""
    reg = Registry("04_tree_fitting", "Tree fitting")
    with pytest.raises(ValueError, match="'f': a finding is reported, not judged"):
        add(reg, "f", ev(0.01, 0.1), kind="finding", not_comparable="substitute data")


def test_one_override_with_one_reason():
    """Both overrides at once used to keep NOT TESTABLE HERE and drop the not_comparable reason."""
    reg = Registry("04_tree_fitting", "Tree fitting")
    with pytest.raises(ValueError, match="'g': give not_comparable or not_testable, not both"):
        add(reg, "g", ev(0.01, 0.1), not_comparable="substitute data", not_testable="no such data here")


def test_ids_kinds_and_duplicates_are_checked():
    reg = Registry("01_rankboost", "RankBoost")
    with pytest.raises(ValueError, match="id"):
        add(reg, "Bad Id", ev(0.1, 0.1))
    add(reg, "x", ev(0.1, 0.1))
    with pytest.raises(ValueError, match="twice"):
        add(reg, "x", ev(0.1, 0.1))
    with pytest.raises(ValueError, match="substitute"):
        reg.tested("y", location="L", sentence="S", quantity="q", data_kind="substitute", data="",
                   evidence=ev(0.1, 0.1))


def test_files_per_notebook_and_the_whole_registry(tmp_path):
    for nb, paper in (("05_rankboost_plus", "RankBoost+"), ("01_rankboost", "RankBoost")):
        reg = Registry(nb, paper)
        add(reg, f"{paper.lower().replace('+', 'p')}.a", ev(0.01, 0.1))
        reg.finalize()
    full = claims.load()
    assert list(full["notebook"]) == ["01_rankboost", "05_rankboost_plus"]
    assert list(full.columns) == list(claims.COLUMNS)
    from lrank import results

    assert results.load("01_rankboost")["claim:rankboost.a"]["value"] == HELD
    assert claims.summary(full).loc["RankBoost", HELD] == 1


def test_seed_folders_are_combined_and_read_back_per_seed(tmp_path):
    # what `python -m lrank reproduce --seeds` stores: seed-<k>/claims/<notebook>.csv, combined per seed
    for k, p in ((1, 0.01), (2, 0.6)):
        reg = Registry("01_rankboost", "RankBoost")
        add(reg, "rankboost.a", ev(p, 0.1))
        df = reg.finalize(record=False, write=False)
        folder = tmp_path / "seeds" / f"seed-{k}"
        (folder / "claims").mkdir(parents=True)
        df.to_csv(folder / "claims" / "01_rankboost.csv", index=False)
        assert claims.combine(folder) == folder / "claims.csv"
    from lrank.papers import index

    table = index.seed_verdicts(tmp_path / "seeds")
    assert list(table.columns) == ["seed_1", "seed_2"]
    assert table.loc[("01_rankboost", "rankboost.a")].tolist() == [HELD, UNDECIDED]


@pytest.mark.parametrize("text, seeds", [("0-4", [0, 1, 2, 3, 4]), ("1,3", [1, 3]), ("2", [2]),
                                         ("0-1,1-2", [0, 1, 2])])
def test_seed_ranges_of_the_reproduce_command(text, seeds):
    from lrank.__main__ import _seed_list

    assert _seed_list(text) == seeds


@pytest.mark.parametrize("text", ["", "3-1", "a", "-1", "1-b"])
def test_bad_seed_ranges_are_refused_with_the_text(text):
    import argparse

    from lrank.__main__ import _seed_list

    with pytest.raises(argparse.ArgumentTypeError, match="seeds as 0-4"):
        _seed_list(text)


@pytest.mark.parametrize("test", claims.PAIRED_TESTS)
def test_paired_evidence_matches_scipy(test):
    rng = np.random.default_rng(0)
    b = rng.normal(size=40)
    a = b + 0.4 + rng.normal(scale=0.5, size=40)
    e = claims.paired(a, b, unit="queries", effect_desc="a - b", test=test)
    d = a - b
    expect = {"wilcoxon": stats.wilcoxon(d, method="exact").pvalue, "t": stats.ttest_rel(a, b).pvalue,
              "sign": stats.binomtest(int((d > 0).sum()), d.size).pvalue}.get(test)
    if expect is not None:
        assert e.p == pytest.approx(expect, rel=1e-12)
    else:
        assert e.p < 0.01
    assert e.n == 40 and e.effect == pytest.approx(d.mean()) and e.ci[0] < d.mean() < e.ci[1]


def test_paired_noninferiority_is_one_sided_on_the_shifted_difference():
    rng = np.random.default_rng(1)
    b = rng.normal(size=60)
    a = b - 0.001 + rng.normal(scale=0.01, size=60)
    e = claims.paired(a, b, unit="queries", effect_desc="a - b", test="t", margin=0.01,
                      margin_rationale="test")
    assert e.p == pytest.approx(stats.ttest_1samp(a - b + 0.01, 0, alternative="greater").pvalue)
    assert claims.decide(e, e.p)[0] == HELD


def test_correlated_evidence_is_spearman_with_a_bootstrap_interval():
    rng = np.random.default_rng(2)
    x = rng.normal(size=50)
    mono = claims.correlated(x, np.exp(x), unit="queries", effect_desc="x and exp(x)")
    assert mono.effect == pytest.approx(1.0) and mono.n == 50 and mono.p < 1e-10
    assert claims.decide(mono, mono.p)[0] == HELD
    anti = claims.correlated(x, -x**3, unit="queries", effect_desc="x and -x^3")
    assert anti.effect == pytest.approx(-1.0) and claims.decide(anti, anti.p)[0] == NOT_HELD
    y = x + rng.normal(scale=1.5, size=50)
    e = claims.correlated(x, y, unit="queries", effect_desc="x and y")
    r = stats.spearmanr(x, y)
    assert e.effect == pytest.approx(r.statistic) and e.p == pytest.approx(r.pvalue)
    assert e.ci[0] < e.effect < e.ci[1] and 0 < e.effect
    assert claims.correlated(x, y, unit="queries", effect_desc="x and y").ci == e.ci  # seeded
    indep = claims.correlated(x, rng.normal(size=50), unit="queries", effect_desc="x and noise")
    assert indep.p > 0.05 and indep.ci[0] < 0 < indep.ci[1]
    assert claims.decide(indep, indep.p)[0] == UNDECIDED


def test_correlated_given_a_shared_baseline_removes_the_correlation_it_alone_makes():
    """x = b - s and y = e - s with b, e independent: plain rho is positive by the shared s alone, the
    partial rho given s is not; a real link of b and e shows in both."""
    rng = np.random.default_rng(4)
    s, b, e = rng.normal(size=(3, 200))
    plain = claims.correlated(b - s, e - s, unit="queries", effect_desc="d")
    part = claims.correlated(b - s, e - s, unit="queries", effect_desc="d", given=s)
    assert plain.effect > 0.3 and plain.p < 1e-6 and "partial" not in plain.test
    assert part.p > 0.05 and part.ci[0] < 0 < part.ci[1] and "partial" in part.test
    linked = claims.correlated(b - s, b + 0.5 * e - s, unit="queries", effect_desc="d", given=s)
    assert linked.effect > 0.5 and linked.p < 1e-6 and linked.ci[0] < linked.effect < linked.ci[1]
    with pytest.raises(ValueError, match="given"):
        claims.correlated(b, e, unit="queries", effect_desc="d", given=s[:-1])


def test_correlated_refuses_bad_input_and_cannot_decide_a_constant_side():
    with pytest.raises(ValueError, match="equally long"):
        claims.correlated([1.0, 2.0, 3.0], [1.0, 2.0], unit="queries", effect_desc="d")
    with pytest.raises(ValueError, match="finite"):
        claims.correlated([1.0, 2.0, np.nan], [1.0, 2.0, 3.0], unit="queries", effect_desc="d")
    flat = claims.correlated([1.0, 2.0, 3.0, 4.0], [0.5] * 4, unit="queries", effect_desc="d")
    assert flat.p == 1.0 and math.isnan(flat.effect) and claims.decide(flat, flat.p)[0] == UNDECIDED


def test_recorded_rows_keep_the_claim_kind_apart_from_the_precision_kind(tmp_path):
    """A derivation row and a tested row are recorded (a derivation's kind is not a precision kind)."""
    from lrank import results

    reg = Registry("02_adarank", "AdaRank")
    reg.derivation("adarank.d", location="L", sentence="S", shown="it holds")
    add(reg, "adarank.t", ev(0.01, 0.1))
    reg.finalize()
    rec = results.load("02_adarank")
    assert rec["claim:adarank.d"]["claim_kind"] == "derivation"
    assert rec["claim:adarank.t"]["claim_kind"] == "protocol"
    assert all(rec[k].get("kind") in (None, *results.KINDS) for k in ("claim:adarank.d", "claim:adarank.t"))
