"""Numbers recorded by notebooks/05_rankboost_plus.ipynb (skipped when the notebook has not run).

Each test checks a relation the recorded numbers must satisfy if the code is right; none re-reads a flag
the notebook computed about itself.
"""

import math

import pytest

from lrank import results

NB = "05_rankboost_plus"
R = results.load(NB)
pytestmark = pytest.mark.skipif(not R, reason=f"{NB} has not run (no recorded results)")

EXACT_TO_PRINTED = [  # paper value, printed digits: ours rounded (Lemma 3's minimum: truncated) must equal it
    *[f"prop1_{h}_{k}" for h in ("h1", "h2") for k in ("R1x19", "E1", "E1_alpha_d", "E1_alpha_c")],
    "lemma1_min_elements_violating", "lemma2_R1", "lemma2_E1", "lemma2_prodZ", "lemma2_U",
    "lemma3_alpha1", "lemma3_alpha2", "lemma3_E1_rbd", "lemma3_E1_min_trunc5", "lemma3_argmin1_trunc5",
    "lemma3_argmin2_trunc5",
]
ALGOS = ("Rb-d", "Rb-c", "Rb+")
METRICS = ("r1", "r2", "ndcg@3", "ndcg@5", "ndcg@7")


def _domains():
    return sorted(R.get("n_tasks", {}).get("value", {}))


@pytest.mark.parametrize("name", EXACT_TO_PRINTED)
def test_paper_values(name):
    entry = R[name]
    assert entry["value"] == pytest.approx(entry["paper"], abs=1e-12), name


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


def test_verdicts_follow_their_p_values():
    """HELD only with p < 0.05; a single paired test that is not significant is UNDECIDED, never NOT HELD."""
    vs = {k[len("verdict_"):]: v for k, v in R.items() if k.startswith("verdict_")}
    assert vs
    for key, v in vs.items():
        assert v["value"] in ("HELD", "NOT HELD", "UNDECIDED"), key
        assert v["n"] >= 1
        if key.startswith("fig4"):
            continue  # an exact count, not a test
        p = v["p_value"]
        assert not math.isnan(p)
        if v["value"] == "HELD":
            assert p < 0.05, (key, p)
        if key == "fig2_rbd_raises_E2" and p >= 0.05:
            assert v["value"] == "UNDECIDED", (key, p)


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
