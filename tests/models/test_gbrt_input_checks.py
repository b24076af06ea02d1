"""Bad input to the tree ensembles (MART, LambdaMART, McRank): named parameters; ordinary data fits without
a warning (data with nothing to rank: `test_fit_conventions.py`, every ranker)."""

import warnings

import numpy as np
import pytest

from lrank.data import make_letor_like
from lrank.models.gbrt import MART, LambdaMART, McRank

MODELS = {"MART": MART, "LambdaMART": LambdaMART, "McRank": McRank}


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=8, docs_per_query=(5, 12), n_features=4, random_state=0)


def test_an_infinite_feature_is_refused_naming_where(data):
    """scikit-learn's message says only that X holds an infinity; lrank's adds where the first one is and
    how many there are (NaN, a missing value, is accepted)."""
    X = data.X.astype(np.float64)
    X[5, 2], X[9, 0] = np.inf, -np.inf
    for cls in (LambdaMART, MART):
        with pytest.raises(ValueError, match=r"infinity.*The first is X\[5, 2\] \(2 infinite values"):
            cls(n_estimators=2).fit(X, data.y, group=data.group)
    model = LambdaMART(n_estimators=2).fit(np.where(np.isinf(X), np.nan, X), data.y, group=data.group)
    for bad in (X, np.asfortranarray(X), X.astype(np.float32), np.asfortranarray(X.astype(np.float32)),
                np.hstack([X, X])[:, :4]):  # each layout and float type (C-ordered float64: the cast's pass)
        with pytest.raises(ValueError, match=r"The first is X\[5, 2\]"):
            model.predict(bad)


@pytest.mark.parametrize("sigma", [1e300, 1e155, float("inf"), 0.0, -1.0])
def test_sigma_out_of_range_is_named(data, sigma):
    """sigma=1e300 failed inside the tree with 'grad and hess must be finite' (sigma**2 overflows)."""
    with pytest.raises(ValueError, match="'sigma' parameter of LambdaMART"):
        LambdaMART(n_estimators=2, sigma=sigma).fit(data)


@pytest.mark.parametrize("sigma", [1e-3, 1.0, 1e100])
def test_sigma_in_range_fits_finite_models(data, sigma):
    m = LambdaMART(n_estimators=3, sigma=sigma, min_child_samples=2).fit(data)
    assert np.isfinite(m.predict(data.X)).all()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ordinary_data_is_not_warned(data, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MODELS[name](n_estimators=2, min_child_samples=2).fit(data)
