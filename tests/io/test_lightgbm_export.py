"""LightGBM text-model export of every tree and stump ensemble (lrank.io.lightgbm over lrank.io.trees):
LightGBM and treelite load each file and predict as lrank does on data with missing values; pred_contrib
(TreeSHAP) rows sum to the prediction; Booster.feature_importance equals feature_importances_."""

import numpy as np
import pytest

from lrank.data import make_letor_like
from lrank.models.adaboost import AdaBoostStumps
from lrank.models.adarank import AdaRank
from lrank.models.boostingtree import BoostingTree, Exp3P, LambdaMARTBase, Standard
from lrank.models.gbrt import MART, LambdaMART, McRank
from lrank.models.ndcgboost import NDCGBoost
from lrank.models.rankboost import RankBoost
from lrank.models.rankboost_plus import RankBoostPlus

lgb = pytest.importorskip("lightgbm")

MODELS = {
    "MART": lambda: MART(n_estimators=6, num_leaves=5, min_child_samples=2),
    "LambdaMART": lambda: LambdaMART(n_estimators=6, num_leaves=5, min_child_samples=2),
    "McRank": lambda: McRank(n_estimators=4, num_leaves=4, min_child_samples=2),
    "NDCGBoost": lambda: NDCGBoost(n_estimators=5, num_leaves=3, random_state=0),
    "RankBoost": lambda: RankBoost(n_estimators=25, random_state=0),
    "RankBoost-qdef1": lambda: RankBoost(n_estimators=10, q_def=1, random_state=0),
    "RankBoostPlus": lambda: RankBoostPlus(n_estimators=10, random_state=0),
    "Rb-d": lambda: RankBoostPlus(variant="d", n_estimators=10, random_state=0),
    "BoostingTree": lambda: BoostingTree(LambdaMARTBase(num_leaves=3), n_estimators=12, random_state=0),
    "Exp3P": lambda: Exp3P(NDCGBoost(num_leaves=2), n_estimators=6, random_state=0),
    "Standard": lambda: Standard(LambdaMARTBase(num_leaves=2), n_estimators=6),
}


@pytest.fixture(scope="module")
def sets():
    train = make_letor_like(n_queries=12, docs_per_query=(5, 14), n_features=6, missing_rate=0.2,
                            random_state=0)
    test = make_letor_like(n_queries=6, docs_per_query=(5, 14), n_features=6, missing_rate=0.3,
                           random_state=1)
    assert np.isnan(train.X).any() and np.isnan(test.X).any()
    return train, test


def _check(model, booster, X, multiclass=False, score=None):
    X64 = X.astype(np.float64)
    got = booster.predict(X64)
    if multiclass:  # McRank: LightGBM's class probabilities; lrank's score is the expected relevance
        np.testing.assert_allclose(got, model.predict_proba(X), rtol=0, atol=1e-12)
        got = got @ np.arange(got.shape[1])
    np.testing.assert_allclose(got, (score or model.predict)(X), rtol=0, atol=1e-12)
    contrib = booster.predict(X64, pred_contrib=True)
    raw = booster.predict(X64, raw_score=True)
    if multiclass:
        K = raw.shape[1]
        sums = contrib.reshape(X.shape[0], K, -1).sum(axis=2)
        np.testing.assert_allclose(sums, raw, rtol=0, atol=1e-12)
    else:
        np.testing.assert_allclose(contrib.sum(axis=1), raw, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(booster.feature_importance("split"), model.feature_importances_)
    # LightGBM keeps split gains as float32
    np.testing.assert_allclose(booster.feature_importance("gain"), model.feature_importance("gain"),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_lightgbm_loads_the_export_and_predicts_as_lrank(name, sets, tmp_path):
    train, test = sets
    model = MODELS[name]().fit(train)
    path = tmp_path / "model.txt"
    text = model.to_lightgbm(path, data=train)
    assert path.read_text() == text
    booster = lgb.Booster(model_file=str(path))
    for X in (train.X, test.X):
        _check(model, booster, X, multiclass=name == "McRank")
    assert model.feature_importances_.sum() > 0


def test_stump_ensembles_of_binary_adaboost(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    y = (np.nan_to_num(X[:, 0], nan=-1.0) + 0.3 * rng.normal(size=80) > 0).astype(int)
    import lrank

    for model in (AdaBoostStumps(n_estimators=8), Standard(AdaBoostStumps(), n_estimators=5)):
        with lrank.config_context(one_query=True):
            model.fit(X, y)
        score = model.decision_function if isinstance(model, AdaBoostStumps) else None  # M(x), not its sign
        _check(model, lgb.Booster(model_str=model.to_lightgbm(data=X)), X, score=score)


def test_treelite_loads_the_export_and_predicts_the_same(sets, tmp_path):
    treelite = pytest.importorskip("treelite")
    train, test = sets
    for name in ("LambdaMART", "RankBoost", "NDCGBoost", "McRank", "BoostingTree"):
        model = MODELS[name]().fit(train)
        path = tmp_path / f"{name}.txt"
        model.to_lightgbm(path, data=train)
        tm = treelite.frontend.load_lightgbm_model(str(path))
        # raw margins: the sums of the trees (McRank: per class; treelite's own softmax is float32)
        raw = treelite.gtil.predict(tm, test.X.astype(np.float64), pred_margin=True).reshape(test.n_docs, -1)
        want = model._raw(test.X, model.n_iter_) if name == "McRank" else model.predict(test.X)[:, None]
        np.testing.assert_allclose(raw, want, rtol=0, atol=1e-12, err_msg=name)


def test_node_counts_recorded_at_fit_are_the_training_documents(sets):
    train, _ = sets
    model = LambdaMART(n_estimators=3, num_leaves=4, min_child_samples=2).fit(train)
    a = model.to_lightgbm()
    b = model.to_lightgbm(data=train)  # counting the training set again gives the recorded counts
    assert a == b
    booster = lgb.Booster(model_str=a)
    tree = booster.dump_model()["tree_info"][1]["tree_structure"]
    assert tree["internal_count"] == train.n_docs


ES = {  # the families that stop early on an eval_set: a long budget, stopped after 2 rounds without gain
    "MART": lambda: MART(n_estimators=60, num_leaves=5, min_child_samples=2, early_stopping_rounds=2),
    "LambdaMART": lambda: LambdaMART(n_estimators=60, num_leaves=5, min_child_samples=2,
                                     early_stopping_rounds=2),
    "McRank": lambda: McRank(n_estimators=60, num_leaves=4, min_child_samples=2, early_stopping_rounds=2),
    "NDCGBoost": lambda: NDCGBoost(n_estimators=60, num_leaves=3, random_state=0, early_stopping_rounds=2),
    "RankBoost": lambda: RankBoost(n_estimators=200, random_state=0, early_stopping_rounds=2),
}


@pytest.mark.parametrize("name", sorted(ES))
def test_after_early_stopping_the_export_holds_the_rounds_predict_uses(name, sets, tmp_path):
    """As LightGBM's save_model after early stopping: the file (and booster_) predicts as predict()."""
    train, test = sets
    model = ES[name]().fit(train, eval_set=[test])
    assert model.best_iteration_ is not None and model.best_iteration_ < model.n_iter_, "did not stop early"
    booster = lgb.Booster(model_str=model.to_lightgbm(data=train))
    for X in (train.X, test.X):
        _check(model, booster, X, multiclass=name == "McRank")
    K = booster.num_model_per_iteration()
    init = K if name in ("MART", "LambdaMART", "McRank") else 0  # the initial score: a 1-leaf tree per class
    assert booster.num_trees() == init + model.best_iteration_ * K


def test_export_survives_save_and_load(sets, tmp_path):
    from lrank.models._base import load_model

    train, _ = sets
    for name in ("LambdaMART", "NDCGBoost", "RankBoost"):
        model = MODELS[name]().fit(train)
        again = load_model(model.save_model(tmp_path / f"{name}.npz"))
        assert again.to_lightgbm(data=train) == model.to_lightgbm(data=train)
        np.testing.assert_array_equal(again.feature_importance("gain"), model.feature_importance("gain"))


def test_refusals_are_clear(sets):
    train, _ = sets
    with pytest.raises(ValueError, match="AdaRank is a weighted sum of scaled features.*none is written"):
        AdaRank(n_estimators=3).fit(train).to_lightgbm()
    with pytest.raises(ValueError, match="RankBoost records no node counts at fit: pass data="):
        RankBoost(n_estimators=3).fit(train).to_lightgbm()
    with pytest.raises(ValueError, match="weak_ranker='feature'.*no tree form"):
        RankBoost(n_estimators=3, weak_ranker="feature", alpha_method="first").fit(train).to_lightgbm(
            data=train)
    with pytest.raises(ValueError, match="importance_type must be 'split' or 'gain'"):
        MODELS["MART"]().fit(train).feature_importance("cover")
