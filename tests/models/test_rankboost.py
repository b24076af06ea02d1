"""RankBoost (Fig. 1, Fig. 2, Sec. 3.2) against the plain-NumPy reference, Theorem 1, API behaviour."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.models.rankboost import (
    DegenerateRoundWarning,
    RankBoost,
    alpha_first,
    alpha_second,
    alpha_third,
    z_value,
)
from tests.reference import rankboost as ref


def _data(seed, n_queries=5, labels=3, nan_frac=0.0, docs=(2, 12), n_features=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, size=n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    X[rng.random(X.shape) < nan_frac] = np.nan
    y = rng.integers(0, labels, size=n)
    return RankingData.from_group(X, y, sizes)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["third", "second"])
def test_matches_reference_fig1(seed, method):
    data = _data(seed)
    model = RankBoost(n_estimators=6, alpha_method=method, max_thresholds=5, random_state=seed,
                      bipartite=False).fit(data)
    p = data.pairs("uniform")
    th = [np.asarray(t) for t in bin_features(data.X, 5, "subsample", seed).thresholds]
    out, H = ref.rankboost(data.X.astype(np.float64), th, p.hi, p.lo, p.weight, model.n_iter_, method)
    np.testing.assert_allclose(model.alphas_, [o[3] for o in out], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.history_["Z"], [o[4] for o in out], rtol=1e-10)
    np.testing.assert_allclose(model.predict(data.X), H, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["third", "second", "first"])
@pytest.mark.parametrize("cum", [False, True])
def test_bipartite_path_equals_general(seed, method, cum):
    data = _data(seed, n_queries=6, labels=2, nan_frac=0.1)
    kw = dict(n_estimators=12, alpha_method=method, cumulative_positive=cum, max_thresholds=8, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        a = RankBoost(bipartite=True, **kw).fit(data)
        b = RankBoost(bipartite=False, **kw).fit(data)
    assert a.bipartite_ and not b.bipartite_
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.features_, b.features_)
    np.testing.assert_allclose(a.alphas_, b.alphas_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.predict(data.X), b.predict(data.X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.history_["Z"], b.history_["Z"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.history_["eps_plus"], b.history_["eps_plus"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["third", "second", "first"])
@pytest.mark.parametrize("cum", [False, True])
def test_theorem1_bound_holds_every_round(method, cum):
    data = _data(7, n_queries=6, labels=4, nan_frac=0.15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        m = RankBoost(n_estimators=25, alpha_method=method, cumulative_positive=cum, random_state=0).fit(data)
    h = m.history_
    assert (h["train_rloss_strict"] <= h["bound"] + 1e-12).all()  # Theorem 1
    assert (h["Z"] <= 1 + 1e-12).all()
    np.testing.assert_allclose(h["bound"], np.cumprod(h["Z"]), rtol=1e-12)
    np.testing.assert_allclose(h["eps_plus"] + h["eps_zero"] + h["eps_minus"], 1.0, atol=1e-12)
    # the recorded train loss is Eq. (21) of the final scores
    p = data.pairs("uniform")
    assert abs(ref.rloss(p.hi, p.lo, p.weight, m.predict(data.X)) - h["train_rloss"].iloc[-1]) < 1e-12


def test_cumulative_weights_stay_positive():
    data = _data(3, n_queries=8, labels=3, nan_frac=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        m = RankBoost(n_estimators=40, cumulative_positive=True, random_state=0).fit(data)
    h = m.history_
    totals = h.groupby(["feature", "bin", "q_def"])["alpha"].sum()
    assert (totals > 0).all()


def test_same_seed_bit_identical_and_staged():
    data = _data(11, n_queries=6, nan_frac=0.1)
    a = RankBoost(n_estimators=15, random_state=3).fit(data)
    b = RankBoost(n_estimators=15, random_state=3).fit(data)
    assert a.history_.equals(b.history_)
    assert np.array_equal(a.predict(data.X), b.predict(data.X))
    staged = list(a.staged_predict(data.X))
    assert len(staged) == a.n_iter_
    assert np.array_equal(staged[-1], a.predict(data.X))
    # Eq. (21) on the training pairs from the predictions equals the loss tracked during training
    np.testing.assert_allclose(a.staged_ranking_loss(data), a.history_["train_rloss"], atol=1e-12)


def test_fit_arrays_qid_group_and_clone():
    data = _data(2)
    m1 = RankBoost(n_estimators=5, random_state=0).fit(data)
    m2 = RankBoost(n_estimators=5, random_state=0).fit(data.X, data.y, qid=data.doc_qid())
    m3 = clone(m1).fit(data.X, data.y, group=data.group)
    assert np.array_equal(m1.alphas_, m2.alphas_) and np.array_equal(m1.alphas_, m3.alphas_)
    assert m3.get_params()["n_estimators"] == 5


def test_fit_feedback_equals_fit_and_flips_negative_weights():
    data = _data(5)
    p = data.pairs("uniform")
    a = RankBoost(n_estimators=8, random_state=0, bipartite=False).fit(data)
    b = RankBoost(n_estimators=8, random_state=0).fit_feedback(data.X, p.hi, p.lo, p.weight * 7)
    np.testing.assert_allclose(a.alphas_, b.alphas_, atol=1e-12)
    c = RankBoost(n_estimators=8, random_state=0).fit_feedback(data.X, p.lo, p.hi, -p.weight)
    np.testing.assert_allclose(a.alphas_, c.alphas_, atol=1e-12)
    # summing two feedback functions = concatenating their pairs
    d = RankBoost(n_estimators=8, random_state=0).fit_feedback(
        data.X, np.r_[p.hi, p.hi], np.r_[p.lo, p.lo], np.r_[p.weight, p.weight])
    np.testing.assert_allclose(a.alphas_, d.alphas_, atol=1e-12)


def test_degenerate_equal_labels_and_perfect_ranker():
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    with pytest.warns(DegenerateRoundWarning, match="no crucial pairs"):
        m = RankBoost(n_estimators=5).fit(X, np.ones(6, int), group=[6])
    assert m.n_iter_ == 0 and np.array_equal(m.predict(X), np.zeros(6))
    y = np.array([0, 0, 0, 1, 1, 1])
    for method in ("third", "second", "first"):
        with pytest.warns(DegenerateRoundWarning, match="every crucial pair"):
            m = RankBoost(n_estimators=5, alpha_method=method).fit(X, y, group=[6])
        assert m.n_iter_ == 1 and m.history_["train_rloss"].iloc[-1] == 0.0
        s = m.predict(X)
        assert s[3:].min() > s[:3].max()


def test_zero_potential_round_stops_with_warning():
    # two identical documents with different labels: every stump has r = 0
    X = np.zeros((2, 3), dtype=np.float32)
    with pytest.warns(DegenerateRoundWarning, match="r != 0"):
        m = RankBoost(n_estimators=5).fit(X, [0, 1], group=[2])
    assert m.n_iter_ == 0


def test_one_document_queries_and_nan():
    data = _data(9, n_queries=8, docs=(1, 3), nan_frac=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        m = RankBoost(n_estimators=10, random_state=0).fit(data)
    assert np.isfinite(m.predict(data.X)).all()


def test_alpha_methods_agree_on_binary_rankers():
    rng = np.random.default_rng(0)
    for _ in range(20):
        d = rng.integers(-1, 2, size=50).astype(float)
        w = rng.random(50)
        w /= w.sum()
        wm, wp = w[d < 0].sum(), w[d > 0].sum()
        a2 = alpha_second(wm, wp)
        assert abs(alpha_first(d, w) - a2) < 1e-10
        # Eq. (3): the minimum is W_0 + 2 sqrt(W_- W_+)
        assert abs(z_value(d, w, a2) - (w[d == 0].sum() + 2 * np.sqrt(wm * wp))) < 1e-12
    # smoothing when W_+ = 0
    d = np.array([-1.0, 0.0])
    w = np.array([0.5, 0.5])
    assert abs(alpha_first(d, w, eps=0.1) - alpha_second(0.5, 0.0, eps=0.1)) < 1e-10
    with pytest.raises(ValueError):
        alpha_first(d, w)
    assert abs(alpha_third(0.5) - 0.5 * np.log(3)) < 1e-15


def test_bad_parameters():
    data = _data(0)
    with pytest.raises(ValueError, match="alpha_method"):
        RankBoost(alpha_method="fourth").fit(data)
    with pytest.raises(ValueError, match="q_def"):
        RankBoost(q_def=2).fit(data)
    with pytest.raises(ValueError, match="two label values"):
        RankBoost(bipartite=True).fit(_data(0, labels=4, docs=(8, 12)))
    with pytest.raises(ValueError, match="itself"):
        RankBoost().fit_feedback(data.X, [0], [0])
    m = RankBoost(n_estimators=2).fit(data)
    with pytest.raises(ValueError, match="features"):
        m.predict(data.X[:, :2])


def test_target_rank_stats_matches_enumeration():
    import itertools

    from lrank.papers.rankboost import target_rank_stats

    y = np.array([0, 1, 0, 1, 0, 0, 1, 0])
    s = np.array([3.0, 2.0, 2.0, 2.0, 2.0, 5.0, 1.0, 2.0])
    tied = np.flatnonzero(s == 2.0)
    ranks = []
    for perm in itertools.permutations(tied):
        order = [5, 0] + list(perm) + [6]
        ranks.append(next(r for r, i in enumerate(order, 1) if y[i] > 0))
    ranks = np.array(ranks)
    st = target_rank_stats(y, s, np.array([0, 8]), ks=(1, 2, 3, 4, 5))
    assert abs(st["mean_rank"] - ranks.mean()) < 1e-12
    for k in (1, 2, 3, 4, 5):
        assert abs(st["top"][k] - (ranks <= k).mean()) < 1e-12


def test_homepage_cast_vc_bound_and_staged_loss():
    from lrank.papers.rankboost import as_homepage_finding, vc_bound

    data = _data(4, n_queries=6, labels=4)
    hp = as_homepage_finding(data)
    assert set(np.unique(hp.y)) <= {0, 1} and hp.n_queries <= data.n_queries
    m = RankBoost(n_estimators=6, random_state=0).fit(hp)
    assert m.bipartite_
    np.testing.assert_allclose(m.staged_ranking_loss(hp), m.history_["train_rloss"], atol=1e-12)
    assert vc_bound(1e6, 1e6, 10) < vc_bound(1e4, 1e4, 10) < vc_bound(1e4, 1e4, 100)
    dp = 2 * 3 * 11 * np.log2(np.e * 11)
    e = 2 * np.sqrt((dp * (np.log(2 * 1e5 / dp) + 1) + np.log(18 / 0.05)) / 1e5)
    assert abs(vc_bound(1e5, 1e5, 10, d=2, delta=0.05) - 2 * e) < 1e-12


@pytest.mark.parametrize("method", ["first", "third"])
def test_feature_weak_ranker_first_method(method):
    data = _data(6, n_queries=5, labels=3, nan_frac=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        m = RankBoost(n_estimators=8, weak_ranker="feature", alpha_method=method, bipartite=False).fit(data)
    X = data.X.astype(np.float64)
    p = data.pairs("uniform")
    lo_, hi_ = np.nanmin(X, 0), np.nanmax(X, 0)
    D = p.weight.copy()
    H = np.zeros(data.n_docs)
    for t in range(m.n_iter_):
        cand = []
        for f in range(X.shape[1]):
            for q in (0, 1):
                h = np.where(np.isnan(X[:, f]), q, (X[:, f] - lo_[f]) / (hi_[f] - lo_[f]))
                cand.append((abs(np.sum(D * (h[p.hi] - h[p.lo]))), f, q, h))
        best = max(c[0] for c in cand)
        assert abs(abs(m.history_["r"].iloc[t]) - best) < 1e-12
        h = next(c[3] for c in cand if c[1] == m.features_[t] and c[2] == m.q_defs_[t])
        d = h[p.lo] - h[p.hi]
        a = m.alphas_[t]
        if method == "first":  # dZ/dalpha = 0 at the chosen alpha
            assert abs(np.sum(D * d * np.exp(a * d))) < 1e-9
        else:
            r = np.sum(D * (h[p.hi] - h[p.lo]))
            assert abs(a - 0.5 * np.log((1 + r) / (1 - r))) < 1e-12
        D = D * np.exp(a * d)
        D /= D.sum()
        H += a * h
    np.testing.assert_allclose(m.predict(data.X), H, atol=1e-12)
    assert (m.history_["train_rloss_strict"] <= m.history_["bound"] + 1e-12).all()
    staged = list(m.staged_predict(data.X))
    np.testing.assert_allclose(staged[-1], H, atol=1e-12)


def test_feature_weak_ranker_rejects_second_method():
    with pytest.raises(ValueError, match="alpha_method=.second"):
        RankBoost(weak_ranker="feature", alpha_method="second").fit(_data(0))


def test_history_columns_and_stop_reason():
    from lrank.models.rankboost import HISTORY_COLUMNS

    data = _data(3)
    m = RankBoost(n_estimators=7, random_state=0).fit(data)
    assert list(m.history_.columns) == HISTORY_COLUMNS and m.history_.index.name == "iteration"
    assert m.stop_reason_ == "n_estimators reached" and m.best_iteration_ is None
    # alpha by Eq. 6 from the recorded r
    r = m.history_["r"]
    np.testing.assert_allclose(m.history_["alpha"], 0.5 * np.log((1 + r) / (1 - r)), atol=1e-12)
    np.testing.assert_array_equal(m.predict(data.X, num_iteration=3), list(m.staged_predict(data.X))[2])
    np.testing.assert_array_equal(m.predict(data.X, num_iteration=0), np.zeros(data.n_docs))


@pytest.mark.parametrize("bad", [{"n_estimators": True}, {"max_thresholds": 0}, {"q_def": 2},
                                 {"alpha_method": "fourth"}, {"bipartite": "yes"}, {"weak_ranker": "tree"},
                                 {"threshold_strategy": "x"}, {"positive_alpha": 1.5}, {"random_state": -1}])
def test_parameters_named_in_errors(bad):
    with pytest.raises((ValueError, TypeError), match=next(iter(bad))):
        RankBoost(**bad).fit(_data(0))


def test_positive_alpha_keeps_every_alpha_positive():
    data = _data(4, n_queries=8)
    a = RankBoost(n_estimators=40, random_state=0).fit(data)
    b = RankBoost(n_estimators=40, random_state=0, positive_alpha=True).fit(data)
    assert (a.alphas_ < 0).any(), "the paper's max |r| should take some negative alpha here"
    assert (b.alphas_ > 0).all() and (b.history_["r"] > 0).all()
    # each round b takes the largest positive r: never above a's |r| in the same round 1
    assert b.history_["r"].iloc[0] <= abs(a.history_["r"].iloc[0]) + 1e-15


def test_memory_follows_work_not_n_estimators():
    import tracemalloc

    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(DegenerateRoundWarning):  # numba compiles (or loads) the kernels outside the trace:
        RankBoost(n_estimators=1).fit(X, y, group=[6])  # a cold first fit traces ~28 MB of compilation
    tracemalloc.start()
    with pytest.warns(DegenerateRoundWarning):
        m = RankBoost(n_estimators=10**7).fit(X, y, group=[6])  # stops at round 1: |r| = 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert m.n_iter_ == 1
    assert peak < 5_000_000, f"peak {peak / 1e6:.1f} MB for one round"


def test_fitted_state_holds_the_ensemble_only():
    data = _data(6)
    m = RankBoost(n_estimators=5, random_state=0).fit(data)
    for k in m._fitted_attributes():
        v = getattr(m, k)
        assert not (isinstance(v, np.ndarray) and v.shape[0] == data.n_docs), k


def test_target_rank_stats_per_query_sums_to_counts():
    from lrank.papers.rankboost import target_rank_stats

    rng = np.random.default_rng(1)
    y = np.zeros(40, int)
    y[::8] = 1
    s = rng.integers(0, 3, size=40).astype(float)
    st = target_rank_stats(y, s, np.arange(0, 41, 8), ks=(1, 3))
    for k in (1, 3):
        assert abs(st["top_per_query"][k].sum() - st["top"][k]) < 1e-12
        assert ((st["top_per_query"][k] >= 0) & (st["top_per_query"][k] <= 1)).all()


def test_early_stopping_on_eval_set():
    from lrank.metrics import evaluate

    train, valid = _data(20, n_queries=8), _data(21, n_queries=6)
    m = RankBoost(n_estimators=10**6, early_stopping_rounds=3, random_state=0).fit(train, eval_set=valid)
    h = m.history_
    assert "valid_ndcg@10" in h and m.n_iter_ == len(h) < 10**6
    assert m.stop_reason_.startswith("early stopping") and 1 <= m.best_iteration_ <= m.n_iter_ - 3
    assert h["valid_ndcg@10"].iloc[m.best_iteration_ - 1] == h["valid_ndcg@10"].max()
    staged = list(m.staged_predict(valid.X))
    for t in (0, m.n_iter_ - 1):  # the recorded curve is the metric of the staged scores
        want = evaluate(valid.y, staged[t], valid.qptr, ["ndcg@10"])["ndcg@10"]
        assert abs(h["valid_ndcg@10"].iloc[t] - want) < 1e-12
    np.testing.assert_array_equal(m.predict(valid.X), staged[m.best_iteration_ - 1])
    # a loss metric is minimised
    m2 = RankBoost(n_estimators=60, early_stopping_rounds=5, eval_metric="r2", random_state=0).fit(
        train, eval_set=valid)
    assert m2.history_["valid_r2"].iloc[m2.best_iteration_ - 1] == m2.history_["valid_r2"].min()


def test_eval_metric_and_early_stopping_checked_at_fit():
    data = _data(0)
    with pytest.raises(ValueError, match="eval_metric"):
        RankBoost(eval_metric="zzz").fit(data)
    with pytest.raises(ValueError, match="early_stopping_rounds"):
        RankBoost(early_stopping_rounds=3).fit(data)
    with pytest.raises(ValueError, match="early_stopping_rounds"):
        RankBoost(early_stopping_rounds=0).fit(data, eval_set=data)


@pytest.mark.parametrize("value", [1e17, -1e17, 3e38, 1e16, 0.0])
@pytest.mark.parametrize("method", ["first", "third"])
def test_feature_weak_ranker_on_a_huge_constant_feature(value, method):
    """A constant feature of 1e17 made every alpha and prediction NaN ('n_estimators reached'): its range
    low + 1.0 rounded back to low, so h = 0 / 0. A constant feature scores 0 for every document: the model
    is the one fitted without it, and finite."""
    data = _data(3, n_queries=6, labels=3)
    X = np.column_stack([data.X, np.full(data.n_docs, value, dtype=np.float32)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        kw = dict(n_estimators=6, weak_ranker="feature", alpha_method=method, bipartite=False)
        m = RankBoost(**kw).fit(X, data.y, group=data.group)
        ref_m = RankBoost(**kw).fit(data)
    assert np.isfinite(m.alphas_).all() and np.isfinite(m.predict(X)).all()
    assert np.isfinite(m.history_[["r", "alpha", "Z", "bound"]].to_numpy()).all()
    np.testing.assert_array_equal(m.alphas_, ref_m.alphas_)
    np.testing.assert_array_equal(m.features_, ref_m.features_)
    np.testing.assert_array_equal(m.predict(X), ref_m.predict(data.X))
    assert (m.highs_ > m.lows_).all()


def test_feature_weak_ranker_with_only_a_huge_constant_feature_stops_clearly():
    data = _data(3, n_queries=6, labels=3)
    X = np.full((data.n_docs, 1), 1e17, dtype=np.float32)
    with pytest.warns(DegenerateRoundWarning, match="no allowed weak ranking has r != 0"):
        m = RankBoost(n_estimators=5, weak_ranker="feature").fit(X, data.y, group=data.group)
    assert m.n_iter_ == 0 and np.array_equal(m.predict(X), np.zeros(data.n_docs))


def test_feature_weak_ranker_on_huge_distinct_values_scales_them():
    """Values near 1e17 that differ: scaled to [0, 1] over their range, ranked as the small ones are."""
    data = _data(4, n_queries=6, labels=3, n_features=2)
    big = data.X.astype(np.float64) * 1e10 + 1e17
    kw = dict(n_estimators=4, weak_ranker="feature", alpha_method="third", bipartite=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        m = RankBoost(**kw).fit(big.astype(np.float32), data.y, group=data.group)
    assert np.isfinite(m.alphas_).all() and np.isfinite(m.predict(big.astype(np.float32))).all()


def test_a_non_finite_r_is_an_error_not_a_nan_model(monkeypatch):
    """The safety net behind the fix above: a weak ranking whose r is NaN stops the fit with an error naming
    the feature (it gave NaN alphas and stop_reason_ 'n_estimators reached')."""
    import dataclasses

    from lrank.weak.stumps import ScaledFeatures

    real = ScaledFeatures.search
    monkeypatch.setattr(ScaledFeatures, "search",
                        lambda self, pi, **kw: dataclasses.replace(real(self, pi, **kw), r=float("nan")))
    data = _data(3, n_queries=6, labels=3)
    with pytest.raises(FloatingPointError, match=r"round 1: the weak ranking on feature \d+ has r = nan"):
        RankBoost(n_estimators=3, weak_ranker="feature").fit(data)
