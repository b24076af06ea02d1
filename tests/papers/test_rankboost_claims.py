"""The evidence behind notebook 01's claims (lrank.papers.rankboost_claims and the per-query pooling of
lrank.papers.rankboost): the conjunction test, the unpaired and trend tests, and one unit per query or
user however often it is measured."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lrank import claims
from lrank.claims import Evidence
from lrank.papers import rankboost as paper
from lrank.papers import rankboost_claims as rbc


def _ev(p, effect, n=30, margin=None, ci=None):
    ci = ci or (effect - 0.1, effect + 0.1)
    return Evidence(test="t", n=n, unit="users", p=p, effect=effect, effect_desc="d", ci=ci, margin=margin,
                    margin_rationale="why" if margin is not None else "")


def test_all_parts_is_an_intersection_union_test():
    held = rbc.all_parts([_ev(0.001, 0.2), _ev(0.03, 0.1, n=20), _ev(0.002, 0.3)], "all")
    assert held.p == 0.03 and held.effect == 0.1 and held.n == 20  # the weakest part decides
    assert claims.decide(held, held.p)[0] == "HELD"
    one_weak = rbc.all_parts([_ev(0.001, 0.2), _ev(0.4, 0.05)], "all")
    assert claims.decide(one_weak, one_weak.p)[0] == "UNDECIDED"
    against = rbc.all_parts([_ev(0.001, 0.2), _ev(0.01, -0.3), _ev(0.2, -0.1)], "all")
    assert against.effect == -0.3 and against.p == pytest.approx(0.03)  # Bonferroni over the 3 parts
    assert claims.decide(against, against.p)[0] == "NOT HELD"
    weak_against = rbc.all_parts([_ev(0.001, 0.2), _ev(0.02, -0.3)], "all")
    assert claims.decide(weak_against, weak_against.p)[0] == "NOT HELD"  # 0.04 after x2
    margin_out = rbc.all_parts([_ev(0.001, 0.0, margin=0.05, ci=(-0.02, 0.02)),
                                _ev(0.9, -0.2, margin=0.05, ci=(-0.3, -0.1))], "all")
    assert margin_out.ci == (-0.3, -0.1)
    assert claims.decide(margin_out, margin_out.p)[0] == "NOT HELD"
    with pytest.raises(ValueError, match="no parts"):
        rbc.all_parts([], "nothing")


def test_unpaired_and_trend_match_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.3, 1, 40), rng.normal(0, 1, 35)
    e = rbc.unpaired(a, b, unit="users", effect_desc="a - b")
    assert e.p == pytest.approx(stats.mannwhitneyu(a, b).pvalue) and e.n == 75
    assert e.effect == pytest.approx(a.mean() - b.mean()) and e.ci[0] < e.effect < e.ci[1]
    x = rng.normal(size=60)
    y = -x + rng.normal(0, 0.5, 60)
    up, down = (rbc.trend(x, y, unit="users", effect_desc="rho", direction=d) for d in (1, -1))
    rho, p = stats.spearmanr(x, y)
    assert up.p == pytest.approx(p) and up.effect == pytest.approx(rho) and down.effect == pytest.approx(-rho)
    assert up.ci[1] < 0 < down.ci[0]  # a falling trend supports "falls" and contradicts "rises"
    assert rbc.trend(x, np.ones(60), unit="users", effect_desc="flat").p == 1.0
    with pytest.raises(ValueError, match="at least 4 users"):
        rbc.trend(x[:3], y[:3], unit="users", effect_desc="rho")


def _movie_frame(n_users=12, sizes=(50, 100, 200, 400), splits=2, rb_bonus=0.05, seed=0):
    """A Fig. 5-like frame: every user a target at every size and in every split."""
    rng = np.random.default_rng(seed)
    rows = []
    for split in range(splits):
        for size in sizes:
            for u in range(n_users):
                base = rng.uniform(0.3, 0.6)
                for alg in ("RankBoost", "Regression", "NN", "VSIM", "random"):
                    for m in rbc.MEASURES:
                        bonus = (rb_bonus if alg == "RankBoost" else 0.0) * (-1 if m == "disagreement" else 1)
                        val = base + bonus
                        rows.append(dict(target=u, algorithm=alg, measure=m, value=val + rng.normal(0, 1e-3),
                                         size=size, split=split))
    return pd.DataFrame(rows)


def test_movie_comparisons_count_each_user_once():
    df = _movie_frame()
    e = rbc.better(df, "RankBoost", "VSIM", "ap")
    assert e.n == 12 and e.effect == pytest.approx(0.05, abs=1e-3)  # not 12 users x 4 sizes x 2 splits
    assert rbc.better(df, "RankBoost", "VSIM", "disagreement").effect == pytest.approx(0.05, abs=1e-3)
    assert rbc.better(df, "RankBoost", "VSIM", "ap", "size", [400]).n == 12
    assert rbc.per_user(df, "NN", "prot").index.tolist() == list(range(12))
    reg = claims.Registry("01_rankboost", "RankBoost")
    ids = rbc.fig5_rows(reg, df)
    tested = [reg.claims[i].evidence for i in ids if reg.claims[i].evidence is not None]
    assert tested and all(ev.n <= 12 for ev in tested)
    assert reg.claims["fig5.rb_beats_regression"].evidence.effect > 0


def test_fig4_runs_pool_folds_and_repeats_per_query():
    from lrank.data import make_letor_like

    raw = make_letor_like(n_queries=16, docs_per_query=12, n_features=5, random_state=0)
    data = paper.as_homepage_finding(raw)
    sets = [data.kfold(4, random_state=s, validation=False) for s in (0, 1)]
    learners = {k: paper.LEARNERS[k] for k in ("WeakLearn.3", "WeakLearn.3.cum")}
    runs = paper.fig4_runs(sets, 6, at=(2, 6), learners=learners)
    for run in runs.values():
        for k in (2, 6):
            te, tr = run.test_per_query[k], run.train_per_query[k]
            assert te.index.is_unique and tr.index.is_unique
            assert sorted(te.index) == sorted(data.qid) == sorted(tr.index)  # one value per query
    one = paper.fig4_runs(sets[0], 6, at=(2, 6), learners=learners)  # a single cross-validation still works
    assert one["WeakLearn.3"].test_per_query[6].size == data.n_queries


def test_fig8_rows_are_exact():
    from lrank.metrics import random_guessing

    fractions = (1 / 2, 1 / 3, 1 / 4)
    left = pd.DataFrame([dict(fraction=f, **random_guessing(60, round(60 * f))) for f in fractions])
    right = pd.DataFrame([dict(n_movies=n, **random_guessing(n, n // 4)) for n in (8, 40, 240)])
    reg = claims.Registry("01_rankboost", "RankBoost")
    rbc.fig8_rows(reg, left, right)
    assert reg.claims["fig8.left"].verdict == "HELD" and reg.claims["fig8.left"].ours == 6
    reg2 = claims.Registry("01_rankboost", "RankBoost")
    rbc.fig8_rows(reg2, left.iloc[::-1], right)  # rising fractions: the values rise, the claim fails
    assert reg2.claims["fig8.left"].verdict == "NOT HELD"


def test_equation_lines_show_the_lines_that_carry_an_equation():
    from lrank._kernels import stumps

    short = paper.equation_lines(stumps._potentials_from_pairs)  # Eq. 10 named in its docstring only
    assert "pi[hi[p]] += w" in short and "pi[lo[p]] -= w" in short
    long_ = paper.equation_lines(stumps._scan_third)
    assert "Eq. (14)" in long_ and all("Eq." in ln or "step" in ln or "Fig. 3" in ln
                                       for ln in long_.split("```python\n")[1].split("\n```")[0].splitlines())
