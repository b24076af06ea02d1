"""Numbers recorded by notebooks/05_rankboost_plus.ipynb (skipped when the notebook has not run).

Each test checks a relation the recorded numbers must satisfy if the code is right; none re-reads a flag
the notebook computed about itself.
"""

import math
import os

import pytest

from lrank import results

NB = "05_rankboost_plus"
R = results.load(NB)
pytestmark = pytest.mark.skipif(not R, reason=f"{NB} has not run (no recorded results)")

ALGOS = ("Rb-d", "Rb-c", "Rb+")
METRICS = ("r1", "r2", "ndcg@3", "ndcg@5", "ndcg@7")


def _domains():
    return sorted(R.get("n_tasks", {}).get("value", {}))


def test_exact_items_and_derivations_hold():
    """Every worked example, printed value and derivation of the paper is a registry row of its own; the
    printed values of Prop. 1 and Lemmas 1-3 are matched to the paper's digits (HELD)."""
    reg = _registry()
    exact = reg[reg["kind"].isin(["exact", "derivation"])]
    assert len(exact) >= 30
    for cid in ("prop1.r1", "prop1.e1", "prop1.e1_alpha_d", "prop1.e1_alpha_c", "lemma2.r1_e1",
                "lemma2.prod_z",
                "lemma2.u", "lemma3.alphas", "lemma3.e1_rbd", "lemma3.minimum", "thm2.chain"):
        assert reg.loc[cid, "verdict"] == "HELD", cid


def test_average_ranks_are_ranks():
    """Per domain and metric, the three average ranks lie in [1, 3] and sum to 1 + 2 + 3."""
    assert _domains(), "no experiment ran"
    for dom in _domains():
        for met in METRICS:
            r = [R[f"table1_{dom}_{met}_{a}"]["value"] for a in ALGOS]
            assert all(1.0 <= x <= 3.0 for x in r), (dom, met, r)
            assert sum(r) == pytest.approx(6.0, abs=1e-9), (dom, met, r)


def test_table3_means_in_range():
    for dom in _domains():
        for met in METRICS:
            for a in ALGOS:
                assert 0.0 <= R[f"table3_{dom}_{met}_{a}"]["value"] <= 1.0


def test_every_fold_is_kept():
    """5 folds x 3 algorithms per task, including featureless tasks and 0-round models."""
    for dom, n in R["n_tasks"]["value"].items():
        assert R[f"folds_{dom}_folds"]["value"] == 5 * 3 * n
        halted = R[f"folds_{dom}_Rb-d halted (eps- = 0)"]["value"]
        assert R[f"folds_{dom}_Rb-d halted at round 1"]["value"] <= halted
    if "MovieLens" in R["n_tasks"]["value"]:
        featureless = R["n_movielens_featureless"]["value"]
        # a featureless task is the constant model in all 15 of its fits
        assert R["folds_MovieLens_constant model (0 rounds)"]["value"] >= 15 * featureless


def test_movielens_task_count():
    if "MovieLens" not in R["n_tasks"]["value"]:
        pytest.skip("MovieLens data not present in this run")
    assert R["n_tasks"]["value"]["MovieLens"] == 364  # ML-100K users with >= 100 ratings
    assert R["n_movielens_featureless"]["value"] == 4


def _registry():
    from lrank import claims

    path = claims.claims_dir() / f"{NB}.csv"
    if not path.is_file():
        pytest.skip(f"{NB} wrote no registry")
    return claims.load(path).set_index("id")


def test_rank_claims_are_decided_pairwise_over_tasks():
    """Table 1 / Fig. 3 rows: Nemenyi's pairwise p (not Friedman's), n = the domain's tasks, and the effect is
    the difference of the recorded average ranks (worse minus better)."""
    from lrank import claims

    reg = _registry()
    n_tasks = R["n_tasks"]["value"]
    rows = reg[reg.index.str.startswith("table1.") & ~reg.index.str.endswith("closer_to_rbplus")]
    assert len(rows) == 15 * len(n_tasks)
    name = {"rbplus": "Rb+", "rbc": "Rb-c", "rbd": "Rb-d"}
    mid = {"r1": "r1", "r2": "r2", "ndcg3": "ndcg@3", "ndcg5": "ndcg@5", "ndcg7": "ndcg@7"}
    for cid, r in rows.iterrows():
        _, dom, met, pair = cid.split(".")
        dom = next(d for d in n_tasks if d.lower() == dom)
        better, worse = (name[x] for x in pair.split("_vs_"))
        assert r["test"].startswith("Nemenyi") and r["n"] == n_tasks[dom], cid
        ranks = {a: R[f"table1_{dom}_{mid[met]}_{a}"]["value"] for a in ALGOS}
        assert r["effect"] == pytest.approx(ranks[worse] - ranks[better], abs=1e-5), cid
        if dom == "WEB10K" and os.environ.get("LRANK_PROFILE", "quick") == "quick":
            assert r["verdict"] == claims.NOT_COMPARABLE and r["data_kind"] == "substitute", cid


def test_verdicts_follow_their_adjusted_p_values():
    """No verdict contradicts its effect and adjusted p; a test that is not significant after Holm is never
    NOT HELD (without a margin)."""
    from lrank import claims

    reg = _registry()
    assert claims.check_consistency(reg.reset_index()) == []
    tested = reg[reg["test"].notna() & (reg["kind"] != "finding")]
    assert len(tested) > 0
    for cid, r in tested.iterrows():
        no_margin = not (isinstance(r["margin"], float) and math.isfinite(r["margin"]))
        if no_margin and r["p_adj"] >= 0.05:
            assert r["verdict"] in (claims.UNDECIDED, claims.NOT_COMPARABLE), cid


def test_fig4_claim_follows_its_own_number():
    """The Fig. 4 narrative row is decided by the train E1 difference on every halted fold: HELD only with a
    positive mean difference, whatever the caption of the one drawn fold says."""
    reg = _registry()
    rows = reg[reg.index.str.startswith("fig4.rbc_below_halted_rbd.")]
    for cid, r in rows.iterrows():
        assert r["unit"] == "tasks" and r["n"] >= 1, cid
        if r["verdict"] == "HELD":
            assert r["effect"] > 0, cid
    if "fig4_E1_rbd_minus_rbc_min" in R:
        assert math.isfinite(R["fig4_E1_rbd_minus_rbc_min"]["value"])


def test_fig1_optimal_rbplus_independent_set_fits_its_task():
    """Fig. 1's optimal Rb+ (one query): S holds at most documents - 1 rankers and gains at most one per
    round; its dependent moves come from its first one on, within the rounds run."""
    from lrank.papers.rankboost_plus import FIG1_ROUNDS, FIG1_TASK

    assert FIG1_TASK["n_queries"] == 1
    top = R["fig1_optimal_max_independent"]["value"]
    full = R["fig1_optimal_full_rank_round"]["value"]
    first = R["fig1_optimal_first_dependent_round"]["value"]
    n_dep = R["fig1_optimal_n_dependent"]["value"]
    assert 1 <= top <= FIG1_TASK["docs_per_query"] - 1
    assert top <= full <= FIG1_ROUNDS
    assert (first is None) == (n_dep == 0)
    if first is not None:
        assert 1 <= n_dep <= FIG1_ROUNDS - first + 1
    assert top + n_dep <= FIG1_ROUNDS
