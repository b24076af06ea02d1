"""One estimator contract for every ranker (lrank/models/_base.py): the same names, fit conventions,
predict(X, num_iteration=), history_ format, parameter validation at fit, save_model/load_model,
small pickles, scikit-learn's clone / GridSearchCV with a group-aware splitter."""

import importlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import lrank
from lrank.data import RankingDataError, make_letor_like
from lrank.models._base import BaseRanker

# name -> (module, quick parameters). Every ranker of the package is listed here.
RANKERS = {
    "RankBoost": ("lrank.models.rankboost", {"n_estimators": 5}),
    "RankBoostPlus": ("lrank.models.rankboost_plus", {"n_estimators": 5}),
    "AdaRank": ("lrank.models.adarank", {"n_estimators": 5}),
    "MART": ("lrank.models.gbrt", {"n_estimators": 5, "min_child_samples": 2}),
    "LambdaMART": ("lrank.models.gbrt", {"n_estimators": 5, "min_child_samples": 2}),
    "McRank": ("lrank.models.gbrt", {"n_estimators": 3, "min_child_samples": 2}),
    "NDCGBoost": ("lrank.models.ndcgboost", {"n_estimators": 5}),
    "RankSVM": ("lrank.baselines.ranksvm", {"C": 0.1}),
    "RegressionRanker": ("lrank.baselines.collaborative", {}),
    "NearestNeighbourRanker": ("lrank.baselines.collaborative", {}),
    "VSIM": ("lrank.baselines.collaborative", {}),
}
# rankers that boost: they have rounds, staged_predict and a per-round history_
BOOSTERS = ["RankBoost", "RankBoostPlus", "AdaRank", "MART", "LambdaMART", "McRank", "NDCGBoost"]
# one name per concept: none of these may appear as a parameter of any estimator
RETIRED = {"n_rounds", "n_trees", "n_iter", "n_sequences", "max_leaves", "n_leaves", "min_data_in_leaf",
           "min_sum_hessian_in_leaf", "early_stopping"}


def cls_of(name):
    module, _ = RANKERS[name]
    return getattr(importlib.import_module(module), name)


def make(name, seed=0, **extra):
    cls = cls_of(name)
    kw = dict(RANKERS[name][1])
    if "random_state" in cls().get_params():
        kw["random_state"] = seed
    kw.update(extra)
    return cls(**kw)


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=12, docs_per_query=(5, 15), n_features=6, random_state=0)


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_one_base_and_one_name_per_concept(name):
    cls = cls_of(name)
    assert issubclass(cls, BaseRanker)
    params = set(cls().get_params())
    assert not params & RETIRED, f"{name} still uses {sorted(params & RETIRED)}"
    assert cls._parameter_constraints, f"{name} declares no _parameter_constraints"
    assert set(cls._parameter_constraints) == params, "every parameter is declared, and only those"


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_fit_conventions(name, data):
    est = make(name).fit(data)
    p = est.predict(data.X)
    assert p.shape == (data.n_docs,) and np.isfinite(p).all()
    assert est.n_features_in_ == data.n_features
    np.testing.assert_array_equal(clone(est).fit(data.X, data.y, qid=data.doc_qid()).predict(data.X), p)
    np.testing.assert_array_equal(clone(est).fit(data.X, data.y, group=data.group).predict(data.X), p)
    np.testing.assert_array_equal(make(name).fit(data).predict(data.X), p)  # same seed, same bits
    assert set(clone(est).get_params()) == set(est.get_params())
    with pytest.raises(ValueError, match="features"):
        est.predict(data.X[:, :-1])


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_fit_without_queries_is_an_error_unless_said(name, data):
    with pytest.raises(TypeError, match="qid"):
        make(name).fit(data.X, data.y)
    one = data.subset([0])
    with lrank.config_context(one_query=True):
        a = make(name).fit(one.X, one.y).predict(one.X)
    np.testing.assert_array_equal(a, make(name).fit(one).predict(one.X))


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_unknown_qid_order_is_an_error(name, data):
    qid = data.doc_qid().copy()
    qid[[0, -1]] = qid[[-1, 0]]  # a document of the last query appears first
    with pytest.raises(RankingDataError, match="not contiguous"):
        make(name).fit(data.X, data.y, qid=qid)


@pytest.mark.parametrize("name", BOOSTERS)
def test_rounds_history_and_num_iteration(name, data):
    est = make(name).fit(data)
    n = est.n_iter_
    assert 1 <= n <= est.n_estimators
    h = est.history_
    assert isinstance(h, pd.DataFrame) and h.index.name == "iteration"
    assert list(h.index) == list(range(1, len(h) + 1)) and len(h) == n
    staged = list(est.staged_predict(data.X))
    assert len(staged) == n
    np.testing.assert_array_equal(staged[-1], est.predict(data.X))
    for k in (1, n):
        np.testing.assert_array_equal(est.predict(data.X, num_iteration=k), staged[k - 1])
    with pytest.raises(ValueError, match="num_iteration"):
        est.predict(data.X, num_iteration=n + 1)
    assert hasattr(est, "best_iteration_") and hasattr(est, "stop_reason_")


@pytest.mark.parametrize("name", BOOSTERS)
@pytest.mark.parametrize("bad", [0, 2.5, "5", -1, True])
def test_parameters_validated_at_fit_naming_the_parameter(name, bad, data):
    est = make(name, n_estimators=bad)  # __init__ stores only
    with pytest.raises((ValueError, TypeError), match="n_estimators"):
        est.fit(data)


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_save_load_round_trip_in_a_fresh_process(name, data, tmp_path):
    est = make(name).fit(data)
    path = est.save_model(tmp_path / "model")
    np.save(tmp_path / "X.npy", data.X)
    np.save(tmp_path / "p.npy", est.predict(data.X))
    code = textwrap.dedent(f"""
        import numpy as np
        from lrank.models._base import load_model
        m = load_model({str(path)!r})
        assert type(m).__name__ == {name!r}
        p = m.predict(np.load({str(tmp_path / 'X.npy')!r}))
        assert np.array_equal(p, np.load({str(tmp_path / 'p.npy')!r})), "predictions differ after load"
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_fitted_state_does_not_carry_training_data(name):
    small = make_letor_like(n_queries=10, docs_per_query=(20, 20), n_features=6, random_state=1)
    big = make_letor_like(n_queries=80, docs_per_query=(20, 20), n_features=6, random_state=1)
    sizes = [len(pickle.dumps(make(name).fit(d))) for d in (small, big)]
    # an ensemble of the same number of rounds: its size must not follow the 8x larger training set
    assert sizes[1] < 2.5 * sizes[0] + 20_000, sizes


def test_grid_search_with_group_kfold(data):
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold

    qid = data.doc_qid()
    with sklearn.config_context(enable_metadata_routing=True):
        est = make("LambdaMART").set_fit_request(qid=True).set_score_request(qid=True)
        gs = GridSearchCV(est, {"learning_rate": [0.05, 0.2]}, cv=GroupKFold(3))
        gs.fit(data.X, data.y, groups=qid, qid=qid)
    assert set(gs.cv_results_["param_learning_rate"]) == {0.05, 0.2}
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()


def test_score_takes_query_weights_and_a_routed_pipeline_scores(data):
    """score(..., sample_weight=) is the weighted mean of the queries' NDCG@10; scikit-learn's routed
    Pipeline.score passes sample_weight (None) to the last step, which must take it."""
    import sklearn
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from lrank.metrics import evaluate

    qid = data.doc_qid()
    est = make("LambdaMART").fit(data)
    per_query = evaluate(data.y, est.predict(data.X), data.qptr, ["ndcg@10"], per_query=True)["ndcg@10"]
    w = np.arange(1.0, data.n_queries + 1)
    weighted = pytest.approx(np.average(per_query, weights=w))
    assert est.score(data.X, data.y, qid=qid, sample_weight=w) == weighted
    assert est.score(data, sample_weight=np.repeat(w, data.group)) == weighted  # per document, per query
    assert est.score(data, sample_weight=np.ones(data.n_queries)) == pytest.approx(est.score(data))
    with pytest.raises(ValueError, match="differs within query"):
        est.score(data, sample_weight=np.arange(data.n_docs, dtype=float))
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("scale", StandardScaler()),
                         ("rank", make("LambdaMART").set_fit_request(qid=True).set_score_request(qid=True))])
        pipe.fit(data.X, data.y, qid=qid)
        assert np.isfinite(pipe.score(data.X, data.y, qid=qid))


# ---------------------------------------------------------------------- DataFrame column names
def _all_estimators():
    """Every ranker, the AdaBoost base and the BoostingTree drivers (each fits X, y in one query)."""
    from lrank.models.adaboost import AdaBoostStumps
    from lrank.models.boostingtree import BoostingTree, Exp3P, Standard
    from lrank.models.ndcgboost import NDCGBoost

    ests = {name: make(name) for name in sorted(RANKERS)}
    ests["AdaBoostStumps"] = AdaBoostStumps(n_estimators=5)
    ests["BoostingTree"] = BoostingTree(NDCGBoost(), n_estimators=5, random_state=0)
    ests["Exp3P"] = Exp3P(NDCGBoost(), n_estimators=5, random_state=0)
    ests["Standard"] = Standard(NDCGBoost(), n_estimators=5)
    return ests


@pytest.mark.parametrize("name", sorted(_all_estimators()))
def test_scikit_learns_column_name_check(name):
    """scikit-learn's own `check_dataframe_column_names_consistency`: ``feature_names_in_`` after a
    DataFrame fit; predict / score on reordered, renamed or missing columns raise its error."""
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    est = _all_estimators()[name]
    with lrank.config_context(one_query=True), np.errstate(all="ignore"), \
            __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", RuntimeWarning)
        check_dataframe_column_names_consistency(name, est)


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_columns_are_checked_at_predict_and_kept_in_the_model_file(name, data, tmp_path):
    import warnings

    cols = [f"feat_{j}" for j in range(data.n_features)]
    df = pd.DataFrame(data.X, columns=cols)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a DataFrame fit and predict warn about nothing
        est = make(name).fit(df, data.y, qid=data.doc_qid())
        p = est.predict(df)
    assert list(est.feature_names_in_) == cols and est.feature_names_in_.dtype == object
    np.testing.assert_array_equal(p, make(name).fit(data).predict(data.X))
    loaded = BaseRanker.load_model(est.save_model(tmp_path / "m"))
    assert isinstance(loaded.feature_names_in_, np.ndarray) and loaded.feature_names_in_.dtype == object
    assert list(loaded.feature_names_in_) == cols
    for model in (est, loaded):
        for bad, what in [(df[cols[::-1]], "same order"), (df.rename(columns={cols[0]: "other"}), "unseen"),
                          (df[cols[1:]], "missing")]:
            with pytest.raises(ValueError, match=what):
                model.predict(bad)
            if name in BOOSTERS:
                with pytest.raises(ValueError, match=what):
                    next(iter(model.staged_predict(bad)))
        np.testing.assert_array_equal(model.predict(df), p)
        with pytest.warns(UserWarning, match="X does not have valid feature names"):  # a plain array
            np.testing.assert_array_equal(model.predict(np.asarray(df, dtype=np.float64)), p)
    if name in BOOSTERS and "eval_set" in __import__("inspect").signature(est.fit).parameters:
        with pytest.raises(ValueError, match="same order"):
            make(name).fit(df, data.y, qid=data.doc_qid(), eval_set=(df[cols[::-1]], data.y, data.doc_qid()))
    # a refit on arrays forgets the names (scikit-learn's reset)
    est.fit(data.X, data.y, qid=data.doc_qid())
    assert not hasattr(est, "feature_names_in_")


def test_grid_search_without_routing_is_an_error_not_nan_scores(data):
    """Without metadata routing scikit-learn calls score() with no qid; a silent NaN per split would let
    GridSearchCV pick a 'best' parameter from nothing, so score raises and names the routing recipe."""
    from sklearn.model_selection import GridSearchCV, GroupKFold

    qid = data.doc_qid()
    gs = GridSearchCV(make("LambdaMART"), {"learning_rate": [0.05, 0.2]}, cv=GroupKFold(2),
                      error_score="raise")
    with pytest.raises(TypeError, match=r"set_score_request\(qid=True\)"):
        gs.fit(data.X, data.y, groups=qid, qid=qid)


# ---------------------------------------------------------------------- dir() and booster_
@pytest.mark.parametrize("name", sorted(_all_estimators()))
def test_dir_works_fitted_and_unfitted(name, data):
    """dir() (Jupyter's tab completion) lists attributes through hasattr: a property raising anything but
    AttributeError broke it for fitted RankBoost and RankBoostPlus (booster_ without node counts)."""
    from sklearn.base import clone

    est = clone(_all_estimators()[name])
    assert "fit" in dir(est) and "booster_" not in dir(est)
    y = (data.y > 0).astype(int) if name == "AdaBoostStumps" else data.y   # binary
    with lrank.config_context(one_query=True), np.errstate(all="ignore"):
        est.fit(data.X, y)
    assert "n_features_in_" in dir(est)


def test_dir_does_not_build_a_booster(data, monkeypatch):
    lightgbm = pytest.importorskip("lightgbm")
    est = make("LambdaMART").fit(data)

    def refuse(*args, **kwargs):
        raise AssertionError("dir() built a Booster")

    monkeypatch.setattr(lightgbm, "Booster", refuse)
    assert "booster_" in dir(est) and "feature_importances_" in dir(est)


def test_booster_predicts_as_the_model_or_says_why_it_is_absent(data, monkeypatch):
    pytest.importorskip("lightgbm")
    est = make("LambdaMART").fit(data)
    np.testing.assert_allclose(est.booster_.predict(data.X), est.predict(data.X), rtol=1e-6, atol=1e-9)
    stumps = make("RankBoost").fit(data)
    assert not hasattr(stumps, "booster_")
    with pytest.raises(AttributeError, match=r"no node counts.*to_lightgbm\(data="):
        _ = stumps.booster_
    monkeypatch.setitem(sys.modules, "lightgbm", None)   # as if LightGBM were not installed
    with pytest.raises(AttributeError, match="pip install lightgbm"):
        _ = est.booster_


@pytest.mark.parametrize("name", ["RankBoost", "AdaRank", "MART", "LambdaMART", "McRank", "NDCGBoost",
                                  "Standard"])
def test_early_stopping_on_the_training_data_is_refused(name, data):
    """LightGBM users write eval_set=[(X, y), (X_valid, y_valid)]: LightGBM skips the training set for early
    stopping; lrank watches the first set, so with the training data first that is an error, not a model
    stopped on its own training score. Without early stopping, or with the validation set first, it runs."""
    from lrank.models.boostingtree import LambdaMARTBase, Standard

    valid = make_letor_like(n_queries=6, docs_per_query=(5, 15), n_features=6, random_state=1)
    X, y, qid = data.X, data.y, data.doc_qid()

    def est(**kw):
        if name == "Standard":
            return Standard(LambdaMARTBase(num_leaves=2), n_estimators=5, **kw)
        return make(name, **kw)

    both = [(X, y), (valid.X, valid.y)]
    qids = [qid, valid.doc_qid()]
    with pytest.raises(ValueError, match=r"eval_set\[0\] is the training data.*put the validation set first"):
        est(early_stopping_rounds=2).fit(X, y, qid=qid, eval_set=both, eval_qid=qids)
    with pytest.raises(ValueError, match=r"eval_set\[0\] is the training data"):
        est(early_stopping_rounds=2).fit(data, eval_set=[data, valid])
    est(early_stopping_rounds=2).fit(X, y, qid=qid, eval_set=both[::-1], eval_qid=qids[::-1])
    est(early_stopping_rounds=None).fit(X, y, qid=qid, eval_set=both, eval_qid=qids)
