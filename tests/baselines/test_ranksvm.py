"""Pairwise linear Ranking SVM and the BM25 column table."""

from __future__ import annotations

import numpy as np
import pytest

from lrank.baselines.ranksvm import BM25_FEATURE, BM25_FEATURES, RankSVM, pair_differences
from lrank.data import RankingData
from lrank.data.generators import make_letor_like
from lrank.metrics import evaluate


def _linear_data(seed: int = 0) -> RankingData:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 15, size=20)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 4))
    latent = 2 * X[:, 0] - X[:, 2] + 0.1 * rng.normal(size=n)
    y = np.digitize(latent, [-1.0, 1.0])
    return RankingData.from_group(X, y, sizes)


def test_pair_differences_are_critical_pairs_with_flips():
    d = _linear_data()
    D, s = pair_differences(d, random_state=0)
    hi, lo, _ = d.pairs("none")
    np.testing.assert_allclose(D, s[:, None] * (d.X[hi].astype(float) - d.X[lo].astype(float)))
    assert set(np.unique(s)) == {-1, 1}
    Dk, _ = pair_differences(d, random_state=0, max_pairs_per_query=3)
    assert Dk.shape[0] <= 3 * d.n_queries


def test_recovers_a_linear_ranking():
    d = _linear_data(1)
    m = RankSVM(C=1.0, random_state=0).fit(d)
    w = m.coef_ / np.linalg.norm(m.coef_)
    assert w[0] > 0.7 and w[2] < -0.3  # the true direction (2, 0, -1, 0) / sqrt(5)
    test = _linear_data(2)
    assert evaluate(test.y, m.predict(test.X), test.qptr, ["ndcg@5"])["ndcg@5"] > 0.9


def test_c_chosen_on_validation_and_deterministic():
    d = make_letor_like(n_queries=24, docs_per_query=(5, 20), n_features=6, missing_rate=0.1, random_state=0)
    a = RankSVM(Cs=(1e-3, 1e-1), random_state=0).fit(d)
    b = RankSVM(Cs=(1e-3, 1e-1), random_state=0).fit(d)
    assert a.C_ in (1e-3, 1e-1) and set(a.validation_scores_) == {1e-3, 1e-1}
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert np.isfinite(a.predict(d.X)).all()  # NaN -> training mean
    v = make_letor_like(n_queries=8, docs_per_query=(5, 20), n_features=6, random_state=1)
    c = RankSVM(Cs=(1e-3, 1e-1), random_state=0).fit(d, eval_set=v)
    assert c.C_ == max(c.validation_scores_, key=c.validation_scores_.get)


def test_errors_and_api():
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    d = _linear_data()
    with pytest.raises(ValueError):
        RankSVM(C=-1.0).fit(d)
    with pytest.raises(ValueError):
        RankSVM(Cs=()).fit(d)
    with pytest.raises(NotFittedError):
        RankSVM().predict(d.X)
    assert clone(RankSVM(C=2.0)).get_params()["C"] == 2.0
    m = RankSVM(C=1.0).fit(d)
    with pytest.raises(ValueError):
        m.predict(np.zeros((2, 7)))


def test_bm25_columns():
    assert BM25_FEATURES["mslr"]["whole document"] == 109  # feature 110, 1-based
    assert [BM25_FEATURES["mslr"][s] + 1 for s in ("body", "anchor", "title", "url", "whole document")] == [
        106, 107, 108, 109, 110]
    assert BM25_FEATURE["mslr"] == 109


@pytest.mark.parametrize("kwargs", [dict(C=0.0), dict(C=-1.0), dict(validation_fraction=1.0),
                                    dict(max_pairs_per_query=0), dict(max_iter=0), dict(select_by="zzz"),
                                    dict(Cs=(0.1, -1.0))])
def test_parameters_validated_at_fit_naming_the_parameter(kwargs):
    d = _linear_data()
    (name,) = kwargs
    with pytest.raises(ValueError, match=name):
        RankSVM(**kwargs).fit(d)


def test_predict_has_no_rounds():
    d = _linear_data()
    m = RankSVM(C=1.0, random_state=0).fit(d)
    np.testing.assert_array_equal(m.predict(d.X, num_iteration=None), m.predict(d.X))
    with pytest.raises(ValueError, match="num_iteration"):
        m.predict(d.X, num_iteration=3)
