"""AdaRank: kernels against the plain-NumPy reference, Fig. 1 semantics, Theorem 1, estimator API."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lrank._kernels.adarank import choose_weak_ranker, weighted_performance
from lrank.data import RankingData
from lrank.data.generators import make_letor_like
from lrank.models.adarank import AdaRank
from lrank.weak.single_feature import SingleFeatureRankers, feature_query_matrix
from tests.reference import adarank as ref


def _random_data(seed: int, n_queries: int = 12, n_features: int = 6, missing: float = 0.0,
                 ties: bool = True) -> RankingData:
    """Random queries including a one-document query and an all-equal-label query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 15, size=n_queries)
    sizes[0] = 1
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_features))
    if ties:
        X[:, : n_features // 2] = np.round(X[:, : n_features // 2])  # many exact ties
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    y = rng.integers(0, 3, size=n)
    y[sizes[0]: sizes[0] + sizes[1]] = 1  # all-equal labels
    return RankingData.from_group(X, y, sizes)


# ----------------------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("seed", range(5))
def test_weighted_performance_matches_reference(seed):
    rng = np.random.default_rng(seed)
    M = rng.random((7, 9))
    M[2] = M[3]  # tied candidates
    P = rng.random(9)
    P /= P.sum()
    np.testing.assert_allclose(weighted_performance(M, P), ref.weighted_performance(M, P), rtol=1e-13)
    best, phi, allphi = choose_weak_ranker(M, P)
    assert best == int(np.argmax(ref.weighted_performance(M, P)))
    assert phi == allphi[best]
    allowed = np.ones(7, dtype=bool)
    allowed[best] = False
    b2, _, _ = choose_weak_ranker(M, P, allowed)
    assert b2 != best and b2 >= 0


def test_choose_ties_go_to_lowest_index():
    M = np.array([[0.5, 0.5], [0.5, 0.5], [0.1, 0.2]])
    assert choose_weak_ranker(M, np.array([0.5, 0.5]))[0] == 0


@pytest.mark.parametrize("ulps", [1, 4, 1000])
def test_choose_near_ties_go_to_lowest_index(ulps):
    # candidate 1's weighted metric exceeds candidate 0's in the last bits only (another CPU's rounding
    # of the same sums): candidate 0 is kept on every CPU; a real difference (1e-9) still wins
    rng = np.random.default_rng(ulps)
    P = rng.random(6)
    P /= P.sum()
    row = rng.uniform(0.2, 0.8, 6)
    M = np.vstack([row, row * (1 + ulps * np.finfo(float).eps), row * 0.5])
    phi = weighted_performance(M, P)
    assert phi[1] > phi[0]
    assert choose_weak_ranker(M, P)[0] == 0
    M[1] += 1e-9
    assert choose_weak_ranker(M, P)[0] == 1


def test_kernel_shape_errors():
    with pytest.raises(ValueError):
        weighted_performance(np.zeros((2, 3)), np.zeros(2))


@pytest.mark.parametrize("missing", [0.0, 0.2])
@pytest.mark.parametrize("directions", ["positive", "both"])
def test_matrix_matches_reranking(missing, directions):
    d = _random_data(3, missing=missing)
    weak = SingleFeatureRankers(directions=directions).fit(d.X)
    H = weak.transform(d.X)
    np.testing.assert_array_equal(H, ref.weak_values(d.X, directions))
    M = feature_query_matrix(H, d.y, d.qptr, "ndcg@5")
    for c in range(H.shape[1]):
        np.testing.assert_array_equal(M[c], ref.per_query(d.y, H[:, c], d.qptr, "ndcg@5", {}))


# -------------------------------------------------------------------------------- the algorithm
@pytest.mark.parametrize("metric", ["map", "ndcg@5"])
@pytest.mark.parametrize("seed,missing,directions", [(0, 0.0, "positive"), (1, 0.1, "both"),
                                                      (2, 0.0, "both")])
def test_adarank_matches_reference(metric, seed, missing, directions):
    d = _random_data(seed, missing=missing)
    r = ref.adarank(d, metric, n_estimators=8, directions=directions)
    m = AdaRank(metric=metric, n_estimators=8, early_stopping_rounds=None, directions=directions).fit(d)
    h = m.history_
    T = len(r["alpha"])
    assert len(h) == T
    np.testing.assert_array_equal(h["candidate"].to_numpy(), r["candidate"])
    np.testing.assert_allclose(h["alpha"].to_numpy(), r["alpha"], rtol=1e-12)
    np.testing.assert_allclose(h[f"train_{metric}"].to_numpy(), r["train_E"], rtol=1e-12)
    np.testing.assert_allclose(h["bound"].to_numpy(), r["bound"], rtol=1e-9, atol=1e-12)


def test_first_round_alpha_and_distribution():
    d = _random_data(4)
    m = AdaRank(metric="map", n_estimators=1, early_stopping_rounds=None).fit(d)
    phi = m.history_["varphi"].iloc[0]
    assert m.alphas_[0] == pytest.approx(0.5 * np.log((1 + phi) / (1 - phi)), rel=1e-12)  # Fig. 1
    # train E after round 1 is the chosen feature's own E (f_1 ranks like h_1)
    assert m.history_["train_map"].iloc[0] == pytest.approx(m.metric_matrix_[m.candidates_[0]].mean())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("metric", ["map", "ndcg@5", "ndcg@10", "err@10", "mrr"])
def test_theorem1_bound_never_violated(seed, metric):
    """Theorem 1: mean training E >= 1 - prod_t e^{-delta_min^t} sqrt(1 - varphi(t)^2), every round."""
    for d in (_random_data(seed, missing=0.1),
              make_letor_like(n_queries=15, docs_per_query=(5, 30), n_features=8, random_state=seed)):
        for directions in ("positive", "both"):
            m = AdaRank(metric=metric, n_estimators=25, early_stopping_rounds=None, directions=directions,
                        max_consecutive=2).fit(d)
            h = m.history_
            assert len(h) > 0
            E = h[f"train_{metric}"]
            assert (E >= h["bound"] - 1e-9).all(), h[[f"train_{metric}", "bound"]]
            # the proof's step: Z_t <= e^{-delta_min^t} sqrt(1 - varphi(t)^2) Z_{t-1}, Z_0 = m
            Z_prev = np.r_[len(m.train_queries_), h["Z"].to_numpy()[:-1]]
            assert (h["Z"].to_numpy() <= h["bound_factor"].to_numpy() * Z_prev * (1 + 1e-12)).all()


def test_perfect_weak_ranker_caps_alpha():
    X = np.array([[3.0], [2.0], [1.0], [5.0], [4.0]])
    y = np.array([2, 1, 0, 1, 0])
    m = AdaRank(metric="ndcg@5", n_estimators=3, early_stopping_rounds=None).fit(X, y, group=[3, 2])
    assert np.isfinite(m.alphas_).all()
    assert m.history_["varphi"].iloc[0] == 1.0
    assert (m.history_["train_ndcg@5"] >= m.history_["bound"] - 1e-12).all()


# ---------------------------------------------------------------------------------- early stopping
def test_early_stopping_keeps_best_round():
    d = make_letor_like(n_queries=20, docs_per_query=(5, 30), n_features=10, random_state=1)
    m = AdaRank(metric="map", n_estimators=50, early_stopping_rounds=1).fit(d)
    h = m.history_
    assert len(h) == m.n_iter_ == len(m.alphas_) == len(m.estimators_)
    assert h["train_map"].loc[m.best_iteration_] == h["train_map"].max()
    assert m.best_iteration_ == m.n_iter_  # the rounds after the best one are discarded
    assert "no improvement" in m.stop_reason_ and "discarded" in m.stop_reason_
    full = AdaRank(metric="map", n_estimators=m.n_iter_ + 1, early_stopping_rounds=None).fit(d)
    assert full.best_iteration_ is None and full.n_iter_ == m.n_iter_ + 1
    np.testing.assert_array_equal(full.alphas_[:-1], m.alphas_)
    # the discarded round did not improve training MAP (Sec. 4.1)
    assert full.history_["train_map"].iloc[-1] <= full.history_["train_map"].iloc[-2]


def test_early_stopping_on_eval_set():
    d = make_letor_like(n_queries=20, docs_per_query=(5, 30), n_features=10, random_state=1)
    v = make_letor_like(n_queries=10, docs_per_query=(5, 30), n_features=10, random_state=2)
    m = AdaRank(metric="map", n_estimators=40, early_stopping_rounds=3, max_consecutive=1,
                eval_metric="ndcg@5").fit(d, eval_set=v)
    h = m.history_
    assert "valid_ndcg@5" in h.columns
    assert h["valid_ndcg@5"].loc[m.best_iteration_] == h["valid_ndcg@5"].max()
    staged = list(m.staged_predict(v.X))
    from lrank.metrics import evaluate
    for t in (1, m.n_iter_):
        assert h["valid_ndcg@5"].loc[t] == pytest.approx(
            evaluate(v.y, staged[t - 1], v.qptr, ["ndcg@5"])["ndcg@5"], abs=1e-12)


def test_max_consecutive_blocks_repeats():
    d = make_letor_like(n_queries=20, docs_per_query=(5, 30), n_features=10, random_state=2)
    m = AdaRank(metric="map", n_estimators=30, early_stopping_rounds=None, max_consecutive=1).fit(d)
    c = m.history_["candidate"].to_numpy()
    assert (c[1:] != c[:-1]).all()


# ------------------------------------------------------------------------------------ estimator API
def test_predict_staged_and_determinism():
    d = make_letor_like(n_queries=15, docs_per_query=(5, 20), n_features=8, missing_rate=0.1, random_state=3)
    a = AdaRank(metric="ndcg@5", n_estimators=10, early_stopping_rounds=None).fit(d)
    b = AdaRank(metric="ndcg@5", n_estimators=10, early_stopping_rounds=None)
    b.fit(d.X, d.y, qid=d.doc_qid())
    np.testing.assert_array_equal(a.predict(d.X), b.predict(d.X))
    stages = list(a.staged_predict(d.X))
    assert len(stages) == a.n_iter_
    np.testing.assert_array_equal(stages[-1], a.predict(d.X))
    assert a.history_.equals(b.history_)
    assert np.isfinite(a.predict(d.X)).all()  # NaN features are scored, not propagated
    assert a.feature_importances_.shape == (8,)


def test_params_and_clone():
    from sklearn.base import clone

    m = AdaRank(metric="ndcg@5", n_estimators=3)
    c = clone(m)
    assert c.get_params() == m.get_params()
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        m.predict(np.zeros((2, 3)))


@pytest.mark.parametrize("kwargs", [dict(metric="r1"), dict(metric="nope"), dict(n_estimators=0),
                                    dict(early_stopping_rounds=0), dict(max_consecutive=0),
                                    dict(directions="up"), dict(scaling="log"), dict(tol=-1.0),
                                    dict(eval_metric="zzz"), dict(n_estimators=2.5)])
def test_bad_parameters(kwargs):
    d = _random_data(0)
    (name,) = kwargs
    with pytest.raises(ValueError, match=name):
        AdaRank(**kwargs).fit(d)


def test_no_relevant_documents_is_an_error():
    X = np.arange(6.0).reshape(-1, 1)
    with pytest.raises(ValueError, match="undefined"):
        AdaRank().fit(X, np.zeros(6, dtype=int), group=[3, 3])


def test_predict_checks_feature_count():
    d = _random_data(1)
    m = AdaRank(n_estimators=2, early_stopping_rounds=None).fit(d)
    with pytest.raises(ValueError):
        m.predict(np.zeros((3, d.n_features + 1)))


# ------------------------------------------------------------------------ the paper's protocol
def test_paper_protocol_tests_every_query_once_and_verdicts_follow_p():
    from lrank.papers import adarank as paper
    from lrank.stats import verdict

    d = make_letor_like(n_queries=20, docs_per_query=(8, 20), n_features=6, n_grades=3, random_state=0)
    exp = paper.Experiment("toy", paper._reindexed(d), 0, 2, "adarank_fig2", "synthetic")
    res = paper.run_protocol(exp, rankboost_rounds=3, ranksvm_max_pairs=20, scalings=("minmax", "none"))
    test_q = res.per_query[(res.per_query["split"] == "test") & (res.per_query["method"] == "BM25")
                           & (res.per_query["metric"] == "map")]
    assert sorted(test_q["query"]) == list(range(d.n_queries))  # every query tested exactly once
    tab = paper.fig2_table(res)
    assert list(tab.index) == paper.METHODS and tab.notna().all().all()
    # BM25 = the chosen column: its per-query MAP is that feature's ranking
    q0 = res.folds[0].test
    from lrank.metrics import evaluate
    bm = evaluate(q0.y, q0.X[:, 0].astype(float), q0.qptr, ["map"], per_query=True, rel_threshold=2)["map"]
    np.testing.assert_allclose(res.values("BM25", "map").loc[q0.qid].to_numpy(), bm)
    # (claims_fig6 left out: with few tied queries scipy's wilcoxon runs a slow permutation test)
    claims = pd.concat([paper.claims_fig2(res, metrics=("map", "ndcg@5")), paper.claims_fig8(res),
                        paper.claims_fig910(res), paper.scaling_result(res)])
    for _, r in claims.iterrows():
        assert r["verdict"] == verdict(r["p_value"], r["mean_diff"] > 0)
    c8 = paper.claims_fig8(res)
    assert (c8["n"] == int((res.n_pairs < paper.FEW_PAIRS).sum())).all()
    assert paper.fig8_table(res)["test queries"].sum() == d.n_queries
    assert paper.fig7_counts(res).sum() == res.folds[0].train.n_queries
    rep = paper.theorem1_report([m for _, _, m in res.models])
    assert rep["violations"] == 0 and rep["z_step_violations"] == 0
    assert 0 <= rep["rounds_informative"] <= rep["rounds"]


def test_theorem1_report_counts_a_violation():
    from lrank.papers import adarank as paper

    d = make_letor_like(n_queries=15, docs_per_query=(5, 30), n_features=8, random_state=0)
    m = AdaRank(metric="map", n_estimators=10, early_stopping_rounds=None).fit(d)
    assert paper.theorem1_report([m])["violations"] == 0
    m.history_.loc[2, "bound"] = m.history_.loc[2, "train_map"] + 0.1  # a bound above the measure
    assert paper.theorem1_report([m])["violations"] == 1
