"""Rb-d, Rb-c and RankBoost+: against the NumPy reference, the paper's identities, the lemmas, the API."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.models.rankboost_plus import (
    HISTORY_COLUMNS,
    RankBoostPlus,
    alpha_c,
    alpha_d,
    alpha_plus,
    select_independent_subset,
    z_d,
    z_plus,
)
from lrank.papers.rankboost_plus import f2, lemma1_data, lemma2_data, lemma3_data, pair_losses
from tests.reference.rankboost_plus import distinct_patterns, run_reference


def _feedback(seed, n=30, F=4, levels=5):
    """Pair feedback with random weights (so that no two candidates tie in score)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, F)).astype(np.float32)
    X[rng.random((n, F)) < 0.1] = np.nan
    y = rng.integers(0, 3, size=n)
    d = RankingData(X, y, np.array([0, n]))
    cp = d.pairs()
    w = rng.random(cp.hi.size) + 0.5
    return SimpleNamespace(X=X, hi=cp.hi, lo=cp.lo, weight=w / w.sum())


@pytest.mark.parametrize("variant", ["d", "c", "plus"])
@pytest.mark.parametrize("seed", range(3))
def test_matches_reference(variant, seed):
    fb = _feedback(seed)
    m = RankBoostPlus(variant=variant, n_estimators=25, random_state=0).fit(fb)
    bins = bin_features(fb.X, max_thresholds=255, random_state=np.random.default_rng(0))
    pats = distinct_patterns(bins.codes, bins.n_thresholds, fb.hi, fb.lo)
    U = np.column_stack([u for *_, u in pats])
    ref = run_reference(variant, U, fb.weight, 25)
    h = m.history_
    n = len(ref)
    if variant == "plus":  # the reference stops at the first dependent choice (Alg. 2 prunes there)
        assert n >= 3
    else:
        assert n == len(h)
    h = h.reset_index(drop=True)
    for t, (k, alpha, ep, em, e0) in enumerate(ref[: min(n, len(h))]):
        assert h.feature[t] == pats[k][0]
        assert np.isclose(h.alpha[t], alpha, atol=1e-9), t
        assert np.allclose([h.eps_plus[t], h.eps_minus[t], h.eps_zero[t]], [ep, em, e0], atol=1e-12)


@pytest.mark.parametrize("impl", ["efficient", "optimal"])
@pytest.mark.parametrize("n", [12, 40])
def test_plus_identities(impl, n):
    """Eq. 29: E2 = prod Z_t; Theorem 2: R2 <= E2 <= bound; Eq. 27 is the Z used."""
    fb = _feedback(5, n=n)
    m = RankBoostPlus(variant="plus", implementation=impl, n_estimators=60, random_state=1).fit(fb)
    h = m.history_
    if n == 12:  # the independent set fills the pair space (dimension n - 1): Alg. 2 pruned R
        assert h.n_independent.iloc[-1] == n - 1
        if impl == "efficient":
            assert m.prune_iteration_ is not None and 1 <= m.prune_iteration_ <= m.n_iter_
    np.testing.assert_allclose(h.train_log_E2, h.log_prod_Z, atol=1e-9)  # Eq. 29 in the log domain
    np.testing.assert_allclose(np.exp(h.train_log_E2), h.train_E2, rtol=1e-12)
    assert (h.train_R2 <= h.train_E2 + 1e-12).all()
    assert (h.train_E2 <= h.bound + 1e-12).all()
    assert np.all(np.diff(h.train_E2) <= 1e-12)  # coordinate descent on F2 never increases it
    single = h[h.kind != "dependent"]
    for _, r in single.iterrows():
        assert np.isclose(r.Z, z_plus(r.eps_plus, r.eps_minus, r.eps_zero, r.alpha, r.alpha_prime))


def test_rbd_identities():
    """Eq. 12: E1 = prod Z_t; Theorem 1 bound >= R1 while eps- > 0."""
    fb = _feedback(6, n=40)
    m = RankBoostPlus(variant="d", n_estimators=30, random_state=1).fit(fb)
    h = m.history_
    np.testing.assert_allclose(h.train_log_E1, h.log_prod_Z, atol=1e-9)  # Eq. 12 in the log domain
    assert (h.train_R1 <= h.bound + 1e-12).all()
    for _, r in h.iterrows():
        assert np.isclose(r.Z, z_d(r.eps_plus, r.eps_minus, r.eps_zero, r.alpha))


def test_optimal_not_worse_than_efficient():
    fb = _feedback(8, n=40)
    e = RankBoostPlus(variant="plus", implementation="efficient", n_estimators=40, random_state=0).fit(fb)
    o = RankBoostPlus(variant="plus", implementation="optimal", n_estimators=40, random_state=0).fit(fb)
    assert o.history_.train_E2.iloc[-1] <= e.history_.train_E2.iloc[-1] + 1e-9


def test_alpha_formulas():
    assert np.isclose(alpha_plus(0.3, 0.2, 0.5, 0.0), alpha_c(0.1))  # Eq. 39
    assert np.isclose(alpha_d(0.6, 0.2), 0.5 * np.log(3))
    assert np.isinf(alpha_d(0.5, 0.0))


def test_lemma3_positive_alpha():
    m = RankBoostPlus(variant="d", alpha_sign="positive", n_estimators=10).fit(lemma3_data())
    assert m.n_iter_ == 2 and m.stop_reason_ == "no ranker with eps+ > eps-"
    np.testing.assert_allclose(m.alphas_, [0.5 * np.log(3), 0.5 * np.log((2 + 2 * np.sqrt(3)) / np.sqrt(3))])
    assert round(m.history_.train_E1.iloc[-1], 6) == 0.888387


@pytest.mark.parametrize("n", [3, 5, 20])
def test_lemma1_halt_and_infinite(n):
    d = lemma1_data(n)
    halt = RankBoostPlus(variant="d", n_estimators=5).fit(d)
    assert halt.n_iter_ == 1 and halt.stop_reason_ == "eps- = 0 (halt)"
    assert np.isclose(halt.alphas_[0], np.log(n))
    inf = RankBoostPlus(variant="d", n_estimators=5, eps_minus_zero="infinite").fit(d)
    assert inf.n_iter_ == 2 and np.isinf(inf.alphas_[1])
    h = inf.history_
    assert np.isclose(h.eps_plus.iloc[1], 0.5) and h.eps_minus.iloc[1] == 0.0
    assert np.isclose(h.train_R1.iloc[-1], n / (n + 1))  # Eq. 48
    U = np.exp(-0.5 * (((n - 1) / (n + 1)) ** 2 + 0.25))  # Eq. 47
    assert np.isclose(h.bound.iloc[-1], U)
    cp = d.pairs()
    assert np.isclose(pair_losses(inf.predict(d), cp.hi, cp.lo)["R1"], n / (n + 1))


def test_lemma2_constant():
    n = 2
    m = RankBoostPlus(variant="d", n_estimators=5, eps_minus_zero="constant", large_alpha=40.0)
    m.fit(lemma2_data(n))
    h = m.history_
    assert m.n_iter_ == 2
    np.testing.assert_allclose(h.Z.iloc[:2], [1 / 5, 4 / 5])
    np.testing.assert_allclose(h.train_R1.iloc[1], 4 / 5)
    np.testing.assert_allclose(h.train_E1.iloc[1], 4 / 5, atol=1e-12)
    np.testing.assert_allclose(h.bound.iloc[1], np.exp(-17 / 50))


def test_select_independent_subset():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5, 3))
    R = np.column_stack([A[:, 0], A[:, 0] + A[:, 1], rng.normal(size=5), 2 * A[:, 1]])
    Q, _ = np.linalg.qr(A[:, :1])
    kept, vecs = select_independent_subset(Q, R, np.arange(4), chunk=2)
    assert kept == [1, 2]
    np.testing.assert_array_equal(vecs, R[:, [1, 2]])


def test_api_determinism_and_staged():
    d = _ranking(3)
    a = RankBoostPlus(n_estimators=15, max_thresholds=8, random_state=3).fit(d)
    b = clone(a).fit(d)
    np.testing.assert_array_equal(a.predict(d.X), b.predict(d.X))
    stages = list(a.staged_predict(d.X))
    assert len(stages) == a.n_iter_
    np.testing.assert_array_equal(stages[-1], a.predict(d.X))
    assert a.get_params()["variant"] == "plus"
    Xn = d.X.copy()
    Xn[0, :] = np.nan
    assert np.isfinite(a.predict(Xn)).all()
    # training margins agree with predictions
    cp = d.pairs()
    assert np.isclose(pair_losses(a.predict(d.X), cp.hi, cp.lo)["R2"], a.history_.train_R2.iloc[-1])


def _ranking(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 6)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int) + (X[:, 1] > 1)
    return RankingData(X, y, np.array([0, 20, 21, 60]))


def test_bad_input():
    d = _ranking(0)
    with pytest.raises(ValueError):
        RankBoostPlus(variant="x").fit(d)
    with pytest.raises(ValueError):
        RankBoostPlus(variant="plus", alpha_sign="positive").fit(d)
    with pytest.raises(ValueError, match="no critical pairs"):
        RankBoostPlus().fit(np.ones((3, 2)), np.zeros(3), group=[3])
    m = RankBoostPlus(n_estimators=3).fit(d)
    with pytest.raises(ValueError):
        m.predict(np.ones((3, 5)))


@pytest.mark.parametrize("variant", ["d", "c"])
@pytest.mark.parametrize("n", [5, 12])
def test_e2_tracking_matches_pattern_space(variant, n):
    """Sec. 4's 'final detail' (F2 over an independent set, lstsq for dependent rankers) done directly on
    the m-dimensional patterns agrees with the estimator's compressed pair space."""
    fb = _feedback(11, n=n)
    m = RankBoostPlus(variant=variant, n_estimators=60, random_state=0).fit(fb)
    h = m.history_
    X = fb.X.astype(np.float64)
    U, eta, dependent = [], [], 0
    for t, (f, thr) in enumerate(m.estimators_):
        u = (X[fb.hi, f] > thr).astype(float) - (X[fb.lo, f] > thr).astype(float)
        a = h.alpha.iloc[t]
        if U:
            S = np.column_stack(U)
            beta = np.linalg.lstsq(S, u, rcond=None)[0]
            if np.linalg.norm(S @ beta - u) < 1e-8 * np.linalg.norm(u):
                dependent += not any(np.array_equal(u, c) for c in U)  # in the span, not a member
                eta = list(np.asarray(eta) + a * beta)
                assert np.isclose(h.train_E2.iloc[t], f2(S, eta, fb.weight), rtol=1e-8), t
                continue
        U.append(u)
        eta.append(a)
        assert np.isclose(h.train_E2.iloc[t], f2(np.column_stack(U), eta, fb.weight), rtol=1e-8), t
    if variant == "c" and n == 5:  # four documents span a 4-d pair space: later stumps are dependent
        assert dependent > 0


@pytest.mark.parametrize("variant", ["d", "c", "plus"])
def test_same_seed_bit_identical_history(variant):
    fb = _feedback(3, n=12)
    est = RankBoostPlus(variant=variant, n_estimators=40, max_thresholds=3, random_state=7)
    runs = [clone(est).fit(fb) for _ in range(2)]
    a, b = (r.history_.drop(columns="time_s", errors="ignore") for r in runs)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    np.testing.assert_array_equal(runs[0].predict(fb.X), runs[1].predict(fb.X))


def test_halt_at_round_one_is_the_constant_model(tmp_path):
    """Rb-d whose first choice reverses no pair halts with n_iter_ = 0: staged_predict yields nothing,
    predict is the constant model (all 0), and the model saves and loads."""
    X = np.array([[1.0, 0.3], [0.0, 0.1], [0.0, 0.2], [0.0, 0.9]], dtype=np.float32)
    d = RankingData(X, np.array([1, 0, 0, 0]), np.array([0, 4]))
    m = RankBoostPlus(variant="d", n_estimators=10).fit(d)
    assert m.n_iter_ == 0 and m.stop_reason_ == "eps- = 0 (halt)" and m.best_iteration_ is None
    assert list(m.staged_predict(X)) == []
    np.testing.assert_array_equal(m.predict(X), np.zeros(4))
    np.testing.assert_array_equal(m.predict(X, num_iteration=0), np.zeros(4))
    assert len(m.history_) == 0 and m.history_.index.name == "iteration"
    assert list(m.history_.columns) == HISTORY_COLUMNS
    m2 = RankBoostPlus.load_model(m.save_model(tmp_path / "m"))
    np.testing.assert_array_equal(m2.predict(X), np.zeros(4))
    # Rb-c gives the same ranker a finite weight only if it is not perfect; here it is perfect on pairs
    c = RankBoostPlus(variant="c", n_estimators=10).fit(d)
    assert c.n_iter_ == 0 and c.stop_reason_ == "perfect ranker (halt)"


def test_E2_overflow_is_tracked_in_the_log_domain():
    """Lemma 2 with a huge constant weight: E2 overflows float64; train_log_E2 stays exact, with a warning."""
    from lrank.models.rankboost_plus import log_cosh

    n = 2
    with pytest.warns(RuntimeWarning, match="train_log_E2"):
        m = RankBoostPlus(variant="d", n_estimators=2, eps_minus_zero="constant", large_alpha=800.0).fit(
            lemma2_data(n))
    h = m.history_
    assert np.isinf(h.train_E2.iloc[1]) and np.isfinite(h.train_log_E2).all()
    # pairs tied by both h1 and h2 (4n^2 of 25n^2) dominate: ln E2 = ln(4/25) + 2 ln cosh 800
    assert np.isclose(h.train_log_E2.iloc[1], np.log(4 / 25) + 2 * log_cosh(800.0), rtol=1e-12)


def test_num_iteration_and_infinite_weight_survive_save_load(tmp_path):
    d = lemma1_data(4)
    inf = RankBoostPlus(variant="d", n_estimators=5, eps_minus_zero="infinite").fit(d)
    loaded = RankBoostPlus.load_model(inf.save_model(tmp_path / "inf"))
    np.testing.assert_array_equal(loaded.predict(d.X), inf.predict(d.X))
    np.testing.assert_array_equal(inf.predict(d.X, num_iteration=1), np.log(4) * d.X[:, 0])
    stages = list(inf.staged_predict(d.X))
    assert len(stages) == inf.n_iter_ == 2
    np.testing.assert_array_equal(stages[-1], d.X[:, 1])  # inf * h2 is returned as sign * h2


@pytest.mark.parametrize("bad", [dict(variant="x"), dict(max_thresholds=0), dict(large_alpha=-1.0),
                                 dict(eps_minus_zero="never"), dict(pair_weighting="doc")])
def test_parameters_named_in_errors(bad):
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        RankBoostPlus(**bad).fit(_ranking(0))


def test_stump_statistics_against_the_loop_and_bad_input():
    from lrank.weak.pair_patterns import stump_statistics
    from tests.reference.rankboost_plus import stump_eps_loop

    fb = _feedback(4, n=25)
    bins = bin_features(fb.X, max_thresholds=255, random_state=np.random.default_rng(0))
    got = stump_statistics(bins.codes, fb.hi, fb.lo, fb.weight)
    want = stump_eps_loop(bins.codes, fb.hi, fb.lo, fb.weight, int(bins.codes.max()) + 2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-12)
    with pytest.raises(ValueError, match="pair indices"):
        stump_statistics(bins.codes, fb.hi + 100, fb.lo, fb.weight)
    with pytest.raises(ValueError, match="n_bins"):
        stump_statistics(bins.codes, fb.hi, fb.lo, fb.weight, n_bins=1)


def test_protocol_keeps_every_fold_and_selects_on_validation():
    """run_tasks: a featureless task and 0-round fits stay in (constant model), 5 folds x 3 algorithms each;
    the constant model scores R2 = 1/2."""
    from lrank.papers.rankboost_plus import per_task_scores, run_tasks

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    tasks = {"t": RankingData(X, y, np.array([0, 40])),
             "empty": RankingData(np.zeros((30, 0), np.float32), rng.integers(0, 3, 30), np.array([0, 30]))}
    out = run_tasks(tasks, 6, seed=0, max_thresholds=8)
    f = out["folds"]
    assert len(f) == 2 * 3 * 5 and f["E2_overflow"].dtype == bool
    assert (f[f.task == "empty"].n_iter == 0).all() and (f[f.task == "empty"].stop == "no feature").all()
    sc = per_task_scores(out["selected"], "r2")
    assert list(sc.index) == ["empty", "t"] and np.isfinite(sc.to_numpy()).all()
    assert np.allclose(sc.loc["empty"], 0.5)  # the constant model ties every pair: R2 = 1/2
    assert out["per_task_log_E2"]["Rb+"].shape == (2, 6)
    np.testing.assert_array_equal(out["per_task_log_E2"]["Rb+"][1], 0.0)  # "empty": F2(0) = 1
    assert (out["per_task_log_E2"]["Rb+"][0] < 0).all()


def test_protocol_on_a_dask_cluster_is_identical_to_the_local_run():
    """The MovieLens grid (run_tasks) runs unchanged on a Dask scheduler (argument or
    LRANK_DASK_SCHEDULER)."""
    distributed = pytest.importorskip("distributed")
    from lrank.papers.rankboost_plus import run_tasks

    rng = np.random.default_rng(1)
    tasks = {}
    for k in range(3):
        X = rng.normal(size=(30, 3)).astype(np.float32)
        tasks[f"t{k}"] = RankingData(X, (X[:, k] > 0).astype(int) + (X[:, 2 - k] > 0.5), np.array([0, 30]))
    local = run_tasks(tasks, 5, seed=0, max_thresholds=8)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_tasks(tasks, 5, seed=0, max_thresholds=8, scheduler=cluster.scheduler_address)
    pd.testing.assert_frame_equal(local["selected"], remote["selected"])
    pd.testing.assert_frame_equal(local["folds"], remote["folds"])
    for a in local["per_task_log_E2"]:
        np.testing.assert_array_equal(local["per_task_log_E2"][a], remote["per_task_log_E2"][a])


def test_movielens_task_set_keeps_featureless_users():
    from lrank.papers.rankboost_plus import movielens_task_set

    rng = np.random.default_rng(0)
    R = np.full((6, 40), np.nan)
    R[:3, :30] = rng.integers(1, 6, size=(3, 30))  # users 1-3 rate the same 30 movies
    R[3, 30:] = rng.integers(1, 6, size=10)  # user 4 rates 10 other movies: no feature user for it
    R[3, :2] = 3.0
    tasks, featureless = movielens_task_set(R, min_ratings=10, max_missing=0.5)
    assert list(tasks) == ["u1", "u2", "u3", "u4"] and featureless == ["u4"]
    assert tasks["u4"].n_features == 0 and tasks["u4"].n_docs == 12


def test_fig1_span_summary_finds_the_full_rank_round_and_splits_the_times():
    """`fig1_span_summary`: the first round at S's largest size, the first dependent move and the count,
    and optimal Rb+'s median stored seconds per round before / after that round (the later rounds also
    split at the first dependent move); without times, no medians."""
    from lrank.papers.rankboost_plus import FIG1_SKIP, fig1_column, fig1_span_summary

    assert FIG1_SKIP == 5  # the rounds below are laid out around it
    n_ind = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12, 12, 12, 12, 12, 12, 12, 12]
    kind = ["new"] * 12 + ["member"] * 3 + ["dependent", "member", "dependent", "dependent", "dependent"]
    hist = pd.DataFrame({"kind": kind, "n_independent": n_ind}, index=pd.RangeIndex(1, 21, name="iteration"))
    sec = [9.0] * 5 + [1.0, 1.0, 3.0, 1.0, 1.0, 1.0, 2.0] + [4.0, 5.0, 6.0] + [8.0, 7.0, 9.0, 9.0, 9.0]
    times = pd.DataFrame({"round": range(1, 21), fig1_column("Optimal Rb+"): sec})
    s = fig1_span_summary(hist, times)
    assert (s["max_independent"], s["full_rank_round"], s["first_dependent_round"], s["n_dependent"]) == (
        12, 12, 16, 4)
    assert s["rounds"] == {"before": (6, 12, 7), "after": (13, 20, 8), "member": (13, 15, 3),
                           "dependent": (16, 20, 5)}
    assert s["median_s"] == {"before": 1.0, "after": 7.5, "member": 5.0, "dependent": 9.0}
    assert fig1_span_summary(hist)["median_s"] is None
    no_dep = hist.assign(kind=["new"] * 12 + ["member"] * 8)
    s = fig1_span_summary(no_dep, times)
    assert s["first_dependent_round"] is None and s["n_dependent"] == 0
    assert set(s["median_s"]) == {"before", "after"}
