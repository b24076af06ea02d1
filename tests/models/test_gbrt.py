"""MART, McRank, LambdaMART and the one-step LambdaMART API."""

import numpy as np
import pytest
from sklearn.base import clone

from lrank.data.binning import bin_features
from lrank.data.generators import make_letor_like
from lrank.metrics import evaluate
from lrank.models.gbrt import MART, LambdaMART, LambdaMARTParams, McRank, lambdamart_step


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=30, docs_per_query=(5, 30), n_features=8, n_grades=4, missing_rate=0.1,
                           random_state=0)


@pytest.fixture(scope="module")
def valid():
    return make_letor_like(n_queries=15, docs_per_query=(5, 30), n_features=8, n_grades=4, missing_rate=0.1,
                           random_state=1)


KW = dict(n_estimators=15, num_leaves=6, min_child_samples=5, learning_rate=0.2)


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
@pytest.mark.parametrize("crit", ["se", "ole"])
def test_fit_predict_deterministic(cls, crit, data):
    a = cls(criterion=crit, **KW).fit(data, eval_set=data)  # the training data watched, as in LightGBM
    b = cls(criterion=crit, **KW).fit(data.X, data.y, qid=data.doc_qid())
    pa, pb = a.predict(data.X), b.predict(data)
    assert pa.tobytes() == pb.tobytes()
    assert list(b.history_.columns) == ["n_leaves", "sum_abs_grad"]  # nothing evaluated unless asked
    # the raw-feature prediction of the eval set scores the training data as the binned loop did
    train = a.history_["valid_ndcg@10"].iloc[-1]
    assert evaluate(data.y, pa, data.qptr, ["ndcg@10"])["ndcg@10"] == pytest.approx(train, abs=1e-12)
    staged = list(a.staged_predict(data.X))
    assert len(staged) == a.n_iter_ == 15
    np.testing.assert_allclose(staged[-1], pa, rtol=1e-12)
    ndcg0 = evaluate(data.y, np.zeros(data.n_docs), data.qptr, ["ndcg@10"])["ndcg@10"]
    ndcg = evaluate(data.y, pa, data.qptr, ["ndcg@10"])["ndcg@10"]
    assert ndcg > ndcg0 + 0.05  # learns something on its training data
    assert list(a.history_.columns) == ["n_leaves", "sum_abs_grad", "valid_ndcg@10"]
    assert a.history_.index.name == "iteration" and list(a.history_.index) == list(range(1, 16))
    assert a.best_iteration_ is None and a.stop_reason_.startswith("n_estimators=15")


def test_mart_theorem2_all_criteria_equal(data):
    preds = [MART(criterion=c, **KW).fit(data).predict(data.X) for c in ("se", "wse", "rwse", "ole")]
    for p in preds[1:]:
        np.testing.assert_allclose(p, preds[0], rtol=1e-10)


def test_mart_reduces_squared_error(data):
    m = MART(**KW).fit(data)
    errs = [np.mean((p - data.y) ** 2) for p in m.staged_predict(data.X)]
    assert all(b <= a + 1e-12 for a, b in zip(errs, errs[1:]))


def test_mcrank_proba(data):
    m = McRank(**KW).fit(data)
    p = m.predict_proba(data.X)
    assert p.shape == (data.n_docs, 4)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(m.predict(data.X), p @ np.arange(4))
    assert m.trees_[0].shape[0] == 4 * 15  # one tree per class per iteration


def test_early_stopping(data, valid):
    m = LambdaMART(n_estimators=200, num_leaves=6, min_child_samples=5, learning_rate=0.5,
                   early_stopping_rounds=5).fit(data, eval_set=valid)
    h = m.history_["valid_ndcg@10"]
    assert m.n_iter_ < 200 and len(h) == m.n_iter_
    assert m.best_iteration_ == int(np.argmax(h)) + 1 == m.n_iter_ - 5
    assert m.stop_reason_.startswith("early stopping")
    best = evaluate(valid.y, m.predict(valid.X), valid.qptr, ["ndcg@10"])["ndcg@10"]
    assert best == pytest.approx(h.max())


def test_lambdamart_step_api(data):
    bins = bin_features(data.X, threshold_strategy="quantile")
    params = LambdaMARTParams(num_leaves=2, learning_rate=0.2, min_child_samples=1)
    scores = np.zeros(data.n_docs)
    tree, new = lambdamart_step(bins.codes, data.y, data.qptr, scores, constraint=[5], params=params,
                                n_bins=bins.n_bins, thresholds=bins.thresholds)
    assert tree.feature[0] == 5
    np.testing.assert_allclose(new, scores + tree.predict(data.X))
    # unconstrained steps replay LambdaMART exactly (the steps' lambdas and splits: Burges' NDCG@10, SE)
    m = LambdaMART(n_estimators=3, num_leaves=4, min_child_samples=5, learning_rate=0.2, criterion="se",
                   ndcg_at=10, lambdarank_truncation_level=None, lambdarank_norm=False).fit(data)
    s = np.zeros(data.n_docs)
    for _ in range(3):
        _, s = lambdamart_step(bins.codes, data.y, data.qptr, s,
                               params=dict(num_leaves=4, min_child_samples=5, learning_rate=0.2),
                               n_bins=bins.n_bins, thresholds=bins.thresholds)
    np.testing.assert_allclose(s, m.predict(data.X), rtol=1e-12)
    # and LightGBM's lambdarank with CatBoost's linear gains, through the step's parameters alike
    lgb = dict(ndcg_at=None, lambdarank_truncation_level=30, lambdarank_norm=True, label_gain="linear")
    m = LambdaMART(n_estimators=3, num_leaves=4, min_child_samples=5, learning_rate=0.2, criterion="se",
                   **lgb).fit(data)
    s = np.zeros(data.n_docs)
    for _ in range(3):
        _, s = lambdamart_step(bins.codes, data.y, data.qptr, s,
                               params=dict(num_leaves=4, min_child_samples=5, learning_rate=0.2, **lgb),
                               n_bins=bins.n_bins, thresholds=bins.thresholds)
    np.testing.assert_allclose(s, m.predict(data.X), rtol=1e-12)
    with pytest.raises(ValueError, match="label_gain"):
        lambdamart_step(bins.codes, data.y, data.qptr, s, params=dict(label_gain=[0.0, 1.0]))


def test_sklearn_api_and_errors(data):
    m = LambdaMART(n_estimators=2, criterion="ole", ndcg_at=5)
    c = clone(m)
    assert c.get_params()["ndcg_at"] == 5 and c.get_params()["criterion"] == "ole"
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        m.predict(data.X)
    with pytest.raises(ValueError):
        LambdaMART(n_estimators=0).fit(data)
    with pytest.raises(ValueError):
        LambdaMART(criterion="xx", n_estimators=1).fit(data)
    m.fit(data)
    with pytest.raises(ValueError):
        m.predict(data.X[:, :3])


def test_lambdamart_step_reuses_a_grower_same_bits(data):
    """lambdamart_step on one grower step after step (constrained and not, pair lists of other lengths)
    gives the bits of a fresh grower each step."""
    from lrank.models.gbrt import step_grower

    bins = bin_features(data.X, threshold_strategy="quantile")
    rng = np.random.default_rng(3)
    for crit in ("se", "ole"):
        params = LambdaMARTParams(num_leaves=3, learning_rate=0.2, min_child_samples=2, criterion=crit)
        grower = step_grower(bins.codes, params, bins.n_bins)
        s_kept = s_fresh = rng.normal(size=data.n_docs)
        for cons in (5, None, [2, 7], 0, None):
            t1, s_kept = lambdamart_step(bins.codes, data.y, data.qptr, s_kept, constraint=cons,
                                         params=params, n_bins=bins.n_bins, grower=grower)
            t2, s_fresh = lambdamart_step(bins.codes, data.y, data.qptr, s_fresh, constraint=cons,
                                          params=params, n_bins=bins.n_bins)
            assert s_kept.tobytes() == s_fresh.tobytes()
            assert t1.value.tobytes() == t2.value.tobytes()


def test_eval_set_forms_and_early_stopping_needs_one(data, valid):
    kw = dict(n_estimators=4, num_leaves=4, min_child_samples=5)
    a = LambdaMART(**kw).fit(data, eval_set=valid)
    b = LambdaMART(**kw).fit(data, eval_set=[(valid.X, valid.y, valid.doc_qid()), valid])
    np.testing.assert_array_equal(a.history_["valid_ndcg@10"], b.history_["valid_ndcg@10"])
    np.testing.assert_array_equal(b.history_["valid_ndcg@10"], b.history_["valid1_ndcg@10"])
    assert a.best_iteration_ is None  # no early stopping: predict uses every tree
    np.testing.assert_array_equal(a.predict(data.X), a.predict(data.X, num_iteration=4))
    with pytest.raises(ValueError, match="eval_set"):
        LambdaMART(early_stopping_rounds=2, **kw).fit(data)


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
@pytest.mark.parametrize("param,bad", [("num_leaves", 0), ("num_leaves", 1), ("num_leaves", 2.5),
                                       ("n_estimators", "5"), ("n_estimators", 2.5), ("n_jobs", 0),
                                       ("learning_rate", 0.0), ("min_child_samples", 0),
                                       ("min_child_weight", -1.0), ("criterion", "xx"),
                                       ("early_stopping_rounds", 0), ("num_leaves", True),
                                       ("reg_lambda", -1.0), ("reg_lambda", "1"),
                                       ("colsample_bytree", 0.0), ("colsample_bytree", 1.5),
                                       ("colsample_bytree", "1"), ("subsample", 0.0), ("subsample", 1.5),
                                       ("subsample", "1"), ("subsample", None)])
def test_bad_parameters_refused_at_fit_naming_them(cls, param, bad, data):
    est = cls(**{param: bad})
    with pytest.raises((ValueError, TypeError), match=param):
        est.fit(data)


@pytest.mark.parametrize("param,bad", [("sigma", -1.0), ("sigma", 0.0), ("ndcg_at", -1), ("ndcg_at", 0),
                                       ("ndcg_at", "5")])
def test_lambdamart_parameters(param, bad, data):
    with pytest.raises((ValueError, TypeError), match=param):
        LambdaMART(**{param: bad}).fit(data)


def test_unknown_eval_metric_fails_before_the_first_tree(data, monkeypatch):
    from lrank.trees.grower import TreeGrower

    def no_tree(self, *args, **kwargs):
        raise AssertionError("a tree was grown before eval_metric was checked")

    monkeypatch.setattr(TreeGrower, "grow", no_tree)
    for cls in (MART, McRank, LambdaMART):
        with pytest.raises(ValueError, match="eval_metric"):
            cls(eval_metric="zzz").fit(data)


def test_mcrank_labels(data):
    with pytest.raises(ValueError, match="n_classes"):
        McRank(n_classes=2, n_estimators=1).fit(data)
    m = McRank(n_classes=6, n_estimators=2, min_child_samples=5).fit(data)
    assert m.n_classes_ == 6 and m.predict_proba(data.X).shape == (data.n_docs, 6)


def test_fitted_state_holds_no_training_data(data):
    m = LambdaMART(n_estimators=3, min_child_samples=5).fit(data)
    for k, v in vars(m).items():
        if isinstance(v, np.ndarray):
            assert v.shape[0] != data.n_docs, k
    assert not hasattr(m, "bins_") and not hasattr(m, "train_scores_")


def test_memory_follows_the_trees_made_not_n_estimators(tmp_path):
    """n_estimators=10**7 with early stopping after a few trees: the ensemble storage grows with the
    trees made (issue 14.6: it was preallocated for n_estimators, 3.26 GB peak). Measured in a fresh
    process with tracemalloc (NumPy reports its allocations to it)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import tracemalloc
        from lrank.data.generators import make_letor_like
        from lrank.models.gbrt import LambdaMART
        tr = make_letor_like(n_queries=30, docs_per_query=(5, 30), n_features=8, random_state=0)
        va = make_letor_like(n_queries=15, docs_per_query=(5, 30), n_features=8, random_state=1)
        LambdaMART(n_estimators=2).fit(tr)  # compile outside the measurement
        tracemalloc.start()
        m = LambdaMART(n_estimators=10**7, early_stopping_rounds=3, learning_rate=0.5,
                       min_child_samples=5).fit(tr, eval_set=va)
        peak = tracemalloc.get_traced_memory()[1]
        print(m.n_iter_, peak)
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    n_iter, peak = map(int, out.split())
    assert n_iter < 1000
    assert peak < 50 * 2**20, f"peak {peak / 2**20:.1f} MiB for {n_iter} trees"


def _awkward_set(seed):
    """Ties, NaN, one-document queries, a query with all-equal labels, a constant feature."""
    rng = np.random.default_rng(seed)
    sizes = [1, 30, 12, 1, 25, 40, 8, 60, 33, 1, 20]
    n = sum(sizes)
    X = rng.normal(size=(n, 9)).astype(np.float32)
    X[:, 2] = np.round(X[:, 2])
    X[rng.random((n, 9)) < 0.1] = np.nan
    X[:, 5] = 1.0
    y = rng.integers(0, 4, n)
    y[117:157] = 2  # the sixth query: all labels equal
    return X, y, np.repeat(np.arange(len(sizes)), sizes)


@pytest.mark.parametrize("cls", [MART, LambdaMART, McRank])
def test_threads_same_bits(cls, monkeypatch):
    """n_jobs=2 (the lambdas' parallel twin from `PARALLEL_MIN_LAMBDA_DOCS` documents, forced here, and
    the trees' parallel histograms and scans, forced too) gives the bits of n_jobs=1, on ties, NaN,
    one-document queries and a query with all-equal labels; so does `lambdamart_step`."""
    import lrank.models.gbrt as gbrt
    from lrank.trees.grower import TreeGrower

    monkeypatch.setattr(gbrt, "PARALLEL_MIN_LAMBDA_DOCS", 0)
    monkeypatch.setattr(TreeGrower, "parallel_min_tree_work", 0)
    monkeypatch.setattr(TreeGrower, "parallel_min_work", 0)
    monkeypatch.setattr(TreeGrower, "parallel_min_bins", 0)
    for seed in range(2):
        X, y, qid = _awkward_set(seed)
        out = []
        for n_jobs in (1, 2):
            m = cls(n_estimators=5, num_leaves=7, min_child_samples=3, n_jobs=n_jobs)
            out.append((m.fit(X, y, qid=qid).predict(X), m.trees_, m.history_["sum_abs_grad"].to_numpy()))
        assert out[0][0].tobytes() == out[1][0].tobytes()
        for a, b in zip(out[0][1] + (out[0][2],), out[1][1] + (out[1][2],)):
            assert a.tobytes() == b.tobytes()
    if cls is LambdaMART:
        X, y, qid = _awkward_set(5)
        bins = bin_features(X)
        qptr = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, qid.size].astype(np.int64)
        s = np.random.default_rng(0).normal(size=qid.size)
        steps = [lambdamart_step(bins.codes, y, qptr, s, params=dict(n_jobs=nj, min_child_samples=3),
                                 n_bins=bins.n_bins)[1] for nj in (1, 2)]
        assert steps[0].tobytes() == steps[1].tobytes()


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
def test_reg_lambda_shrinks_the_leaves_and_needs_rwse(cls, data):
    """``reg_lambda`` 0 is the unpenalised fit bit for bit; a penalty changes the model and shrinks every
    tree's leaf values; with a criterion other than RWSE it is refused at fit, naming it and the criterion."""
    kw = dict(KW, criterion="rwse")
    plain = cls(**kw).fit(data)
    zero = cls(**kw, reg_lambda=0.0).fit(data)
    assert plain.predict(data.X).tobytes() == zero.predict(data.X).tobytes()
    pen = cls(**kw, reg_lambda=50.0).fit(data)
    assert not np.array_equal(plain.predict(data.X), pen.predict(data.X))
    first = [np.abs(m.trees_[4][0]).max() for m in (plain, pen)]  # the first tree's largest leaf value
    assert first[1] < first[0]
    with pytest.raises(ValueError, match="reg_lambda.*rwse.*'se'"):
        cls(**KW, criterion="se", reg_lambda=1.0).fit(data)


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
def test_colsample_bytree_draws_each_trees_features_from_the_seed(cls, data):
    """``colsample_bytree`` 1.0 is the fit without it, bit for bit; below 1 each tree splits on at most
    ``round(fraction F)`` features (a new draw per tree: the trees together use more), the same seed gives
    the same bits and another seed another model."""
    F = data.X.shape[1]
    plain = cls(**KW).fit(data)
    one = cls(**KW, colsample_bytree=1.0, random_state=3).fit(data)
    assert plain.predict(data.X).tobytes() == one.predict(data.X).tobytes()
    frac = 0.3
    n_feat = max(1, round(frac * F))
    fits = [cls(**KW, colsample_bytree=frac, random_state=seed).fit(data) for seed in (0, 0, 1)]
    feature, left = fits[0].trees_[0], fits[0].trees_[2]
    per_tree = [set(f[lt >= 0].tolist()) for f, lt in zip(feature, left)]  # internal nodes' features
    assert max(len(f) for f in per_tree) <= n_feat
    assert len(set().union(*per_tree)) > n_feat
    assert fits[0].predict(data.X).tobytes() == fits[1].predict(data.X).tobytes()
    assert not np.array_equal(fits[0].predict(data.X), fits[2].predict(data.X))
    assert not np.array_equal(plain.predict(data.X), fits[0].predict(data.X))


def _recording_grow(monkeypatch):
    """Record the ``features`` and ``sample`` of every tree grown (`TreeGrower.grow`)."""
    from lrank.trees.grower import TreeGrower

    calls = []
    grow = TreeGrower.grow

    def record(self, *args, **kw):
        calls.append((kw.get("features"), kw.get("sample")))
        return grow(self, *args, **kw)

    monkeypatch.setattr(TreeGrower, "grow", record)
    return calls


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
def test_subsample_grows_each_iterations_trees_on_a_seeded_draw(cls, data, monkeypatch):
    """``subsample`` 1.0 is the fit without it, bit for bit (no draw); below 1 every tree's root holds
    ``round(fraction n)`` documents (McRank's class trees of one iteration the same ones), the same seed gives
    the same bits and another seed another model; every document's score still moves by its leaf (the
    training scores the fit kept are the raw-feature predictions: out-of-bag rows routed as ``predict``)."""
    plain = cls(**KW).fit(data)
    one = cls(**KW, subsample=1.0, random_state=3).fit(data)
    assert plain.predict(data.X).tobytes() == one.predict(data.X).tobytes()
    frac = 0.5
    n_bag = max(1, int(np.floor(frac * data.n_docs + 0.5)))  # rounded half up, as colsample_bytree's count
    calls = _recording_grow(monkeypatch)
    fits = [cls(**KW, subsample=frac, random_state=seed).fit(data, eval_set=data) for seed in (0, 0, 1)]
    assert (fits[0].tree_count_[:, 0] == n_bag).all()  # each tree's root: the in-bag documents
    samples = [s for _, s in calls[:fits[0].trees_[0].shape[0]]]
    K = fits[0].init_.size
    for it in range(KW["n_estimators"]):
        for k in range(1, K):  # one draw per iteration, shared by its class trees
            assert samples[it * K + k] is samples[it * K]
    assert not np.array_equal(samples[0], samples[K])  # a new draw per iteration
    assert fits[0].predict(data.X).tobytes() == fits[1].predict(data.X).tobytes()
    assert not np.array_equal(fits[0].predict(data.X), fits[2].predict(data.X))
    assert not np.array_equal(plain.predict(data.X), fits[0].predict(data.X))
    kept = fits[0].history_["valid_ndcg@10"].to_numpy()
    staged = [evaluate(data.y, p, data.qptr, ["ndcg@10"])["ndcg@10"] for p in fits[0].staged_predict(data.X)]
    np.testing.assert_allclose(kept, staged, rtol=0, atol=1e-12)


def test_subsample_out_of_bag_documents_move_by_their_leaf(data):
    """MART's ``sum |f - y|`` after each tree (the fit's own training scores, out-of-bag documents included)
    is the raw-feature prediction's: every document took the leaf its features lead to."""
    m = MART(**KW, subsample=0.3, random_state=0).fit(data)
    got = m.history_["sum_abs_grad"].to_numpy()[1:]
    want = [np.abs(p - data.y).sum() for p in m.staged_predict(data.X)][:-1]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _half(n_docs: int) -> int:
    """The documents a tree sees with ``subsample=0.5``: half of them, halves rounded up."""
    return int(np.floor(0.5 * n_docs + 0.5))


@pytest.mark.parametrize("cls", [MART, McRank, LambdaMART])
def test_subsample_with_colsample_bytree(cls, data, monkeypatch):
    """Both subsamplings at once: each tree on ``round(0.5 n)`` documents and ``round(0.3 F)`` features, and
    the features drawn are those of the fit without row subsampling (a stream of their own)."""
    calls = _recording_grow(monkeypatch)
    cols = cls(**KW, colsample_bytree=0.3, random_state=2).fit(data)
    drawn = [f for f, _ in calls]
    calls.clear()
    both = cls(**KW, colsample_bytree=0.3, subsample=0.5, random_state=2).fit(data)
    assert len(calls) == len(drawn)
    for (f, s), f0 in zip(calls, drawn):
        assert np.array_equal(f, f0) and s is not None
    assert (both.tree_count_[:, 0] == _half(data.n_docs)).all()
    feature, left = both.trees_[0], both.trees_[2]
    assert max(len(set(f[lt >= 0].tolist())) for f, lt in zip(feature, left)) <= round(0.3 * data.n_features)
    assert not np.array_equal(cols.predict(data.X), both.predict(data.X))


def test_subsample_refused_with_lambdamarts_pair_list(data):
    with pytest.raises(ValueError, match="subsample.*ole"):
        LambdaMART(**KW, criterion="ole", subsample=0.5).fit(data)
    LambdaMART(**KW, criterion="ole", subsample=1.0).fit(data)  # every document: no sample
    for cls in (MART, McRank):  # no pair list: OLE's gain on the in-bag documents' own derivatives
        m = cls(**KW, criterion="ole", subsample=0.5).fit(data)
        assert (m.tree_count_[:, 0] == _half(data.n_docs)).all()
