"""Symmetric trees, split-score noise (random_strength) and minimal variance sampling in MART, McRank and
LambdaMART."""

import numpy as np
import pytest

from lrank.data.generators import make_letor_like
from lrank.metrics import evaluate
from lrank.models.gbrt import MART, LambdaMART, McRank, mvs_probabilities, mvs_sample


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=30, docs_per_query=(5, 30), n_features=8, n_grades=4, missing_rate=0.1,
                           random_state=0)


KW = dict(n_estimators=12, num_leaves=8, learning_rate=0.2, growth="symmetric")


def _recording_grow(monkeypatch):
    """Record the keyword arguments and derivatives of every tree grown (`TreeGrower.grow`)."""
    from lrank.trees.grower import TreeGrower

    calls = []
    grow = TreeGrower.grow

    def record(self, grad, hess=None, **kw):
        calls.append((np.array(grad, copy=True), np.array(hess, copy=True), kw))
        return grow(self, grad, hess, **kw)

    monkeypatch.setattr(TreeGrower, "grow", record)
    return calls


def _assert_symmetric(model):
    feature, threshold, left = model.trees_[0], model.trees_[1], model.trees_[2]
    for f, th, lt in zip(feature, threshold, left):
        k = int((lt >= 0).sum())  # internal nodes, heap order
        assert k + 1 & k == 0  # 2^D - 1
        for lev in range(k.bit_length()):
            a, b = (1 << lev) - 1, (1 << (lev + 1)) - 1
            assert (f[a:b] == f[a]).all() and (th[a:b] == th[a]).all()
            assert (lt[a:b] == 2 * np.arange(a, b) + 1).all()


def test_lambdamart_symmetric_32_leaves(data):
    m = LambdaMART(growth="symmetric", num_leaves=32, n_estimators=10, random_state=0)
    m.fit(data, eval_set=data)
    assert m.trees_[0].shape[1] == 63
    assert (m.tree_count_[:, 0] == data.n_docs).all()
    _assert_symmetric(m)
    # the fit's own training scores (history) are the staged predictions on the raw features
    staged = list(m.staged_predict(data.X))
    kept = m.history_["valid_ndcg@10"].to_numpy()
    want = [evaluate(data.y, p, data.qptr, ["ndcg@10"])["ndcg@10"] for p in staged]
    np.testing.assert_allclose(kept, want, rtol=0, atol=1e-12)
    assert m.predict(data.X).tobytes() == staged[-1].tobytes()
    assert kept[-1] > kept[0]


@pytest.mark.parametrize("cls", [MART, McRank])
def test_mart_mcrank_symmetric_training_scores_are_the_predictions(cls, data):
    m = cls(**KW, criterion="rwse").fit(data)
    _assert_symmetric(m)
    if cls is MART:  # sum |f - y| after each tree, from the fit's own scores
        got = m.history_["sum_abs_grad"].to_numpy()[1:]
        want = [np.abs(p - data.y).sum() for p in m.staged_predict(data.X)][:-1]
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isfinite(m.predict(data.X)).all()


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
@pytest.mark.parametrize("num_leaves", [10, 6, 3])
def test_symmetric_needs_power_of_two_leaves(cls, num_leaves, data):
    with pytest.raises(ValueError, match="num_leaves must be a power of two"):
        cls(growth="symmetric", num_leaves=num_leaves, n_estimators=2).fit(data)


def test_symmetric_refuses_ole_and_wse(data):
    for crit in ("ole", "wse"):
        with pytest.raises(ValueError, match="growth='symmetric' needs criterion"):
            LambdaMART(growth="symmetric", num_leaves=4, criterion=crit, n_estimators=2).fit(data)


def test_symmetric_with_both_subsamplings(data):
    a = LambdaMART(**KW, subsample=0.5, colsample_bytree=0.5, random_state=1).fit(data)
    b = LambdaMART(**KW, subsample=0.5, colsample_bytree=0.5, random_state=1).fit(data)
    assert a.predict(data.X).tobytes() == b.predict(data.X).tobytes()
    assert (a.tree_count_[:, 0] == int(np.floor(0.5 * data.n_docs + 0.5))).all()
    _assert_symmetric(a)


# ---------------------------------------------------------------------------------- random_strength
def test_random_strength_zero_is_the_fit_without_it(data, monkeypatch):
    plain = LambdaMART(**KW, random_state=0).fit(data)
    calls = _recording_grow(monkeypatch)
    zero = LambdaMART(**KW, random_state=0, random_strength=0.0).fit(data)
    assert plain.predict(data.X).tobytes() == zero.predict(data.X).tobytes()
    assert all(kw["score_noise"] == 0.0 and kw["rng"] is None for _, _, kw in calls)


def test_random_strength_changes_the_trees_same_seed_same_bits(data, monkeypatch):
    plain = LambdaMART(**KW, random_state=0).fit(data)
    calls = _recording_grow(monkeypatch)
    fits = [LambdaMART(**KW, random_state=s, random_strength=2.0).fit(data) for s in (0, 0, 1)]
    assert fits[0].predict(data.X).tobytes() == fits[1].predict(data.X).tobytes()
    for f in fits:
        assert not np.array_equal(f.trees_[0], plain.trees_[0])  # other splits
    assert not np.array_equal(fits[0].trees_[0], fits[2].trees_[0])
    _assert_symmetric(fits[0])
    # the scale: random_strength e^x / (1 + e^x), x = ln n - t learning_rate (the grower multiplies it by
    # sqrt(mean g^2) over the tree's rows)
    n = data.n_docs
    for t, (_, _, kw) in enumerate(calls[:KW["n_estimators"]]):
        x = np.log(n) - t * KW["learning_rate"]
        assert kw["score_noise"] == pytest.approx(2.0 * np.exp(x) / (1 + np.exp(x)), rel=1e-12)
        seq = kw["rng"].bit_generator.seed_seq  # random_state's stream of its own, spawn key 2
        assert (seq.entropy, seq.spawn_key) == (0, (2,))


def test_random_strength_does_not_move_the_other_streams(data, monkeypatch):
    # spawn key 2: the features and documents drawn are those of the fit without noise
    calls = _recording_grow(monkeypatch)
    LambdaMART(**KW, random_state=4, subsample=0.6, colsample_bytree=0.5).fit(data)
    drawn = [(kw["features"], kw["sample"]) for _, _, kw in calls]
    calls.clear()
    LambdaMART(**KW, random_state=4, subsample=0.6, colsample_bytree=0.5, random_strength=1.0).fit(data)
    for (f, s), (_, _, kw) in zip(drawn, calls):
        assert np.array_equal(f, kw["features"]) and np.array_equal(s, kw["sample"])


@pytest.mark.parametrize("growth", ["best_first", "breadth_first", "depth_first"])
def test_random_strength_needs_symmetric_growth(growth, data):
    with pytest.raises(ValueError, match="random_strength=1.0 needs growth='symmetric'"):
        LambdaMART(growth=growth, random_strength=1.0, n_estimators=2).fit(data)


@pytest.mark.parametrize("bad", [-0.1, "1", None])
def test_random_strength_and_sampling_method_constraints(bad, data):
    with pytest.raises((ValueError, TypeError), match="random_strength"):
        LambdaMART(**KW, random_strength=bad).fit(data)
    with pytest.raises((ValueError, TypeError), match="sampling_method"):
        LambdaMART(**KW, sampling_method="goss").fit(data)


# ---------------------------------------------------------------------------------- MVS
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("frac", [0.05, 0.3, 0.8])
def test_mvs_probabilities_sum_to_the_target(seed, frac):
    rng = np.random.default_rng(seed)
    n = 500
    g = rng.standard_t(2, size=n)  # heavy tails: some rows capped at 1
    h = rng.uniform(0.0, 2.0, size=n)
    target = frac * n
    p = mvs_probabilities(g, h, target)
    assert (p > 0).all() and (p <= 1).all()
    np.testing.assert_allclose(p.sum(), target, rtol=1e-10)
    # p_i = min(1, s_i / mu) for one mu (bisection, independently)
    s = np.sqrt(g * g + np.mean(np.abs(g)) ** 2 * h * h)
    lo, hi = 0.0, s.max() * n
    for _ in range(200):
        mu = 0.5 * (lo + hi)
        lo, hi = (lo, mu) if np.minimum(1.0, s / mu).sum() < target else (mu, hi)
    np.testing.assert_allclose(p, np.minimum(1.0, s / mu), rtol=1e-8)
    if frac == 0.8:
        assert (p == 1.0).any()


def test_mvs_probabilities_edge_cases():
    np.testing.assert_array_equal(mvs_probabilities(np.zeros(4), np.ones(4), 2.0), np.ones(4))
    g = np.array([0.0, 0.0, 1.0, -2.0])
    np.testing.assert_array_equal(mvs_probabilities(g, np.zeros(4), 3.0), [0.0, 0.0, 1.0, 1.0])


def test_mvs_sample_scales_the_kept_rows():
    rng = np.random.default_rng(0)
    g, h = rng.normal(size=300), rng.uniform(0.1, 1.0, size=300)
    p = mvs_probabilities(g, h, 90.0)
    rows, gw, hw = mvs_sample(g, h, 90.0, np.random.default_rng(7))
    u = np.random.default_rng(7).random(300)
    np.testing.assert_array_equal(rows, np.flatnonzero(u < p))
    np.testing.assert_array_equal(gw[rows], g[rows] / p[rows])
    np.testing.assert_array_equal(hw[rows], h[rows] / p[rows])
    out = np.setdiff1d(np.arange(300), rows)
    np.testing.assert_array_equal(gw[out], g[out])


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
def test_gradient_based_sampling(cls, data, monkeypatch):
    kw = dict(n_estimators=8, num_leaves=6, learning_rate=0.2, criterion="rwse")
    plain = cls(**kw, random_state=3).fit(data)
    full = cls(**kw, random_state=3, sampling_method="gradient_based", subsample=1.0).fit(data)
    assert plain.predict(data.X).tobytes() == full.predict(data.X).tobytes()  # subsample 1: no draw
    calls = _recording_grow(monkeypatch)
    fits = [cls(**kw, random_state=s, sampling_method="gradient_based", subsample=0.4).fit(data)
            for s in (0, 0, 1)]
    assert fits[0].predict(data.X).tobytes() == fits[1].predict(data.X).tobytes()
    assert not np.array_equal(fits[0].predict(data.X), fits[2].predict(data.X))
    uniform = cls(**kw, random_state=0, subsample=0.4).fit(data)
    assert not np.array_equal(fits[0].predict(data.X), uniform.predict(data.X))
    n_trees = fits[0].trees_[0].shape[0]
    for _, hw, k in calls[:n_trees]:
        rows = k["sample"]
        assert 0 < rows.size < data.n_docs
        assert (hw[rows] > 0).all()
    sizes = [k["sample"].size for _, _, k in calls[:n_trees]]
    assert abs(np.mean(sizes) - 0.4 * data.n_docs) < 0.15 * data.n_docs  # about subsample n per tree
    # the tree's root holds the sample; its hessian sum is the reweighted one
    np.testing.assert_array_equal(fits[0].tree_count_[:, 0], sizes)


def test_gradient_based_symmetric_lambdamart(data):
    a = LambdaMART(**KW, random_state=2, subsample=0.5, sampling_method="gradient_based",
                   random_strength=1.0).fit(data)
    b = LambdaMART(**KW, random_state=2, subsample=0.5, sampling_method="gradient_based",
                   random_strength=1.0).fit(data)
    assert a.predict(data.X).tobytes() == b.predict(data.X).tobytes()
    _assert_symmetric(a)


def test_lambdamart_symmetric_n_jobs_same_predictions(data, monkeypatch, symmetric_paths):
    """n_jobs = 2 (the parallel histograms and scan forced on this small set by a lowered threshold)
    predicts the bits of n_jobs = 1, with row sampling and the score noise."""
    import numba

    from lrank.trees.grower import TreeGrower

    taken = symmetric_paths
    monkeypatch.setattr(TreeGrower, "parallel_min_tree_work", 0)
    preds = {}
    for jobs in (1, 2):
        for extra in ({}, dict(subsample=0.7, random_strength=0.5)):
            m = LambdaMART(growth="symmetric", num_leaves=32, n_estimators=8, random_state=0, n_jobs=jobs,
                           **extra)
            m.fit(data)
            preds[jobs, len(extra)] = m.predict(data.X).tobytes()
    assert preds[1, 0] == preds[2, 0] and preds[1, 2] == preds[2, 2]
    assert preds[1, 0] != preds[1, 2]
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert not any(taken[:16]) and all(taken[16:]) and len(taken) == 32
