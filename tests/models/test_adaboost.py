"""AdaBoost with stumps on the BoostingTree paper's Fig. 4 problem: Table 1 exactly."""

import numpy as np
import pytest

from lrank.models.adaboost import AdaBoostStep, AdaBoostStumps
from lrank.papers.boostingtree import illustrative_example
from tests.reference.boostingtree import best_stump_errors


def test_table1_unconstrained():
    X, y = illustrative_example()
    m = AdaBoostStumps(n_estimators=5).fit(X, y)
    assert np.round(m.alphas_, 4).tolist() == [0.5493, 0.5493, 0.6264, 0.7630, 0.6730]
    assert [(w.feature + 1, w.split()) for w in m.estimators_] == [
        (1, "<= 0.4"), (2, "<= 0.4"), (2, "> 0.6"), (1, "> 0.2"), (1, "> 0.6")]
    assert m.history_["train_error"].iloc[-1] == 0.0
    assert (m.predict(X) == y).all()
    # alpha_3 = 1/2 ln 3.5 exactly (eps_3 = 2/9): the paper prints 0.62
    assert m.alphas_[2] == pytest.approx(0.5 * np.log(3.5), abs=1e-12)


def test_table1_feature1_only():
    X, y = illustrative_example()
    m = AdaBoostStumps(n_estimators=3, constraint=0).fit(X, y)
    assert np.round(m.alphas_, 4).tolist() == [0.5493, 0.5493, 0.8047]
    assert [w.split() for w in m.estimators_] == ["<= 0.4", "> 0.6", "> 0.2"]
    assert (m.predict(X) == y).all()


def test_tie_break_rules_differ_and_random_is_seeded():
    X, y = illustrative_example()
    first = AdaBoostStumps(n_estimators=5, tie_break="first").fit(X, y)
    assert first.estimators_[0].split() == "<= 0.4"
    r1 = AdaBoostStumps(n_estimators=5, tie_break="random", random_state=1).fit(X, y).alphas_
    r2 = AdaBoostStumps(n_estimators=5, tie_break="random", random_state=1).fit(X, y).alphas_
    assert np.array_equal(r1, r2)
    with pytest.raises(ValueError):
        AdaBoostStumps(tie_break="nope").fit(X, y)


@pytest.mark.parametrize("seed", range(15))
def test_weak_learner_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(2, 30)), int(rng.integers(1, 4))
    X = rng.integers(0, 4, size=(n, F)).astype(float)    # ties in values
    X[rng.random((n, F)) < 0.15] = np.nan                # missing values
    y = np.where(rng.random(n) < 0.5, 1, -1)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    base = AdaBoostStep(X, y)
    model = rng.normal(size=n)
    D = base.weights(model)
    ref = best_stump_errors(X, y, D)
    if not ref:
        return
    w = base.fit_stump(model)
    assert w.error == pytest.approx(min(r[0] for r in ref), abs=1e-12)
    # the chosen stump's error is what its predictions give
    assert D[np.sign(w.predict(X)) != y].sum() == pytest.approx(w.error, abs=1e-12)


def test_one_class_and_constant_feature():
    X = np.array([[1.0], [1.0], [1.0]])
    base = AdaBoostStep(X, [1, -1, 1])
    w, m = base.step(base.initial_model())
    assert w.alpha == 0.0 and np.all(m == 0)


def test_bad_labels():
    with pytest.raises(ValueError):
        AdaBoostStumps().fit(np.zeros((3, 1)), [0, 1, 2])
    with pytest.raises(ValueError):
        AdaBoostStumps().fit(np.zeros((3, 1)), [0, 1])


# ------------------------------------------------------------------ the estimator contract
def test_contract_names_history_num_iteration():
    from lrank.models._base import BaseRanker

    assert issubclass(AdaBoostStumps, BaseRanker) and AdaBoostStumps.binary_classifier
    params = set(AdaBoostStumps().get_params())
    assert params == set(AdaBoostStumps._parameter_constraints) and "n_rounds" not in params
    X, y = illustrative_example()
    m = AdaBoostStumps(n_estimators=5).fit(X, y)
    h = m.history_
    assert h.index.name == "iteration" and list(h.index) == [1, 2, 3, 4, 5]
    assert {"alpha", "feature", "threshold", "train_error"} <= set(h.columns)
    staged = list(m.staged_decision_function(X))
    for k in (1, 3, 5):
        np.testing.assert_array_equal(m.decision_function(X, num_iteration=k), staged[k - 1])
    assert [list(p) for p in m.staged_predict(X)][-1] == m.predict(X).tolist()
    assert m.best_iteration_ is None and m.stop_reason_ == "n_estimators reached"
    with pytest.raises(ValueError, match="num_iteration"):
        m.predict(X, num_iteration=6)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :1])
    assert m.score(X, y) == 1.0


@pytest.mark.parametrize("bad", [0, 2.5, "5", -1, True])
def test_n_estimators_validated_at_fit(bad):
    X, y = illustrative_example()
    with pytest.raises((ValueError, TypeError), match="n_estimators"):
        AdaBoostStumps(n_estimators=bad).fit(X, y)


def test_save_load_round_trip(tmp_path):
    import pickle

    from lrank.models._base import load_model

    X, y = illustrative_example()
    m = AdaBoostStumps(n_estimators=5).fit(X, y)
    back = load_model(m.save_model(tmp_path / "ada"))
    assert isinstance(back, AdaBoostStumps) and back.estimators_ == m.estimators_
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).predict(X), m.predict(X))
