"""lrank.papers.rankboost_plus(_claims): Table 1's ranks are tie-tolerant, the pairwise rank evidence follows
the order of the scores (and can go against the paper), Fig. 2's quantities and Fig. 4's halted folds."""

import numpy as np
import pandas as pd
import pytest

from lrank import claims
from lrank.papers import rankboost_plus as rbp
from lrank.papers import rankboost_plus_claims as rbc


def _selected(values: dict[str, list[float]]) -> pd.DataFrame:
    """A `run_tasks` "selected" frame: one task per position, the values of each algorithm on 5 folds."""
    rows = [{"task": f"t{i}", "algorithm": a, "fold": k, "metric": "ndcg@3", "round": 1, "value": v}
            for a, vals in values.items() for i, v in enumerate(vals) for k in range(5)]
    return pd.DataFrame(rows)


def test_round_significant_keeps_real_differences_and_nan():
    x = np.array([0.123456789012345, -3.5e-7, 0.0, np.nan, np.inf, 1 - 1e-11])
    r = rbp.round_significant(x)
    assert r[0] == pytest.approx(0.123456789012, abs=1e-15)
    assert r[1] == -3.5e-7 and r[2] == 0.0 and np.isnan(r[3]) and r[4] == np.inf
    assert r[5] != 1.0  # a difference of 1e-11 is kept (12 significant digits)
    s = rbp.round_significant(pd.Series([0.5, 0.25], index=["a", "b"], name="x"))
    assert list(s.index) == ["a", "b"] and s.name == "x"


def test_a_near_tie_in_the_last_bits_is_a_tie_in_the_ranks():
    """Two algorithms whose fold values differ by a few ulps tie on the task (average rank 1.5 each); a real
    difference of 1e-9 still orders them. Red without the rounding in per_task_scores."""
    base = 0.7310585786300049
    near = np.nextafter(np.nextafter(base, 1), 1)
    sel = _selected({"Rb-d": [base, 0.2], "Rb-c": [near, 0.2 + 1e-9], "Rb+": [0.9, 0.9]})
    sc = rbp.per_task_scores(sel, "ndcg@3")
    from lrank import stats

    r = stats.task_ranks(sc, lower_is_better=False)
    assert r.loc["t0", "Rb-d"] == r.loc["t0", "Rb-c"] == 2.5
    assert r.loc["t1", "Rb-c"] == 2.0 and r.loc["t1", "Rb-d"] == 3.0


def _scores(n: int, shift: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    return pd.DataFrame({"Rb-d": base + 2 * shift + rng.normal(0, 0.01, n), "Rb-c": base + shift
                         + rng.normal(0, 0.01, n), "Rb+": base + rng.normal(0, 0.01, n)})


def test_rank_pair_evidence_follows_the_scores_and_can_go_against_the_paper():
    """Errors (lower is better): Rb+ lowest -> positive effect (the paper's order), Nemenyi p small; the same
    scores read as higher-is-better reverse the sign; pure noise gives a large p."""
    clear = _scores(40, 0.1)
    ev = rbc.rank_pair_evidence(clear, "Rb+", "Rb-d", lower_is_better=True)
    assert ev.n == 40 and ev.effect == pytest.approx(2.0) and ev.p < 1e-6
    assert ev.ci[0] <= ev.effect <= ev.ci[1]
    against = rbc.rank_pair_evidence(clear, "Rb+", "Rb-d", lower_is_better=False)
    assert against.effect == pytest.approx(-2.0) and against.p < 1e-6
    noise = _scores(40, 0.0, seed=3)
    assert rbc.rank_pair_evidence(noise, "Rb+", "Rb-c", lower_is_better=True).p > 0.05
    closer = rbc.closer_evidence(clear, lower_is_better=True)
    assert closer.effect == pytest.approx(0.0)  # ranks 1, 2, 3 on every task: equal gaps


def test_rank_claims_are_decided_pairwise_on_substitute_data():
    """add_rank_claims: one row per pair and metric (+ the 'closer' rows on R1/R2); on the quick profile's
    WEB10K sample every row is NOT COMPARABLE and names the substitute."""
    reg = claims.Registry("05_test", "RankBoost+")
    sc = _scores(30, 0.1)
    data = {"data_kind": "substitute", "data": "toy", "not_comparable": "substitute for the paper's queries"}
    rows = rbc.add_rank_claims(reg, {"r2": sc, "ndcg@5": 1 - sc}, "WEB10K", data)
    assert len(rows) == 3 + 1 + 3
    df = reg.finalize(record=False, write=False)
    assert (df["verdict"] == claims.NOT_COMPARABLE).all()
    assert df["data_kind"].eq("substitute").all() and df["reason"].str.contains("substitute").all()
    assert df.set_index("id").loc["table1.web10k.r2.rbplus_vs_rbd", "test"].startswith("Nemenyi")


def test_settling_round():
    c = np.array([[1.0, 0.5, 0.15, 0.1, 0.1], [1.0, 1.0, 1.0, 1.0, 1.0]])
    # round 3 is the first at or below 0.19 (90% of the fall to 0.1); a flat curve settles at round 1
    np.testing.assert_array_equal(rbc.settling_round(c), [3.0, 1.0])


def test_halted_folds_pairs_rbd_with_rbc_on_the_same_fold():
    f = pd.DataFrame({"task": ["a", "a", "b", "b"], "fold": [0, 0, 1, 1],
                      "algorithm": ["Rb-d", "Rb-c", "Rb-d", "Rb-c"], "stop": [rbc.HALT, "", "", ""],
                      "n_iter": [3, 10, 10, 10], "E1_last": [0.8, 0.5, 0.7, 0.6],
                      "E1_min": [0.8, 0.4, 0.7, 0.6]})
    h = rbc.halted_folds(f)
    assert len(h) == 1 and h.loc[0, "task"] == "a"
    assert h.loc[0, "rbd_E1"] == 0.8 and h.loc[0, "rbc_E1_min"] == 0.4
