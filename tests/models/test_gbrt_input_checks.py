"""Bad input to the tree ensembles (MART, LambdaMART, McRank): named parameters, warned degenerate data."""

import warnings

import numpy as np
import pytest

from lrank.data import RankingData, make_letor_like
from lrank.models.gbrt import MART, LambdaMART, McRank

MODELS = {"MART": MART, "LambdaMART": LambdaMART, "McRank": McRank}


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=8, docs_per_query=(5, 12), n_features=4, random_state=0)


@pytest.mark.parametrize("sigma", [1e300, 1e155, float("inf"), 0.0, -1.0])
def test_sigma_out_of_range_is_named(data, sigma):
    """sigma=1e300 failed inside the tree with 'grad and hess must be finite' (sigma**2 overflows)."""
    with pytest.raises(ValueError, match="'sigma' parameter of LambdaMART"):
        LambdaMART(n_estimators=2, sigma=sigma).fit(data)


@pytest.mark.parametrize("sigma", [1e-3, 1.0, 1e100])
def test_sigma_in_range_fits_finite_models(data, sigma):
    m = LambdaMART(n_estimators=3, sigma=sigma, min_child_samples=2).fit(data)
    assert np.isfinite(m.predict(data.X)).all()


def _all_equal(data):
    return RankingData(data.X, np.full(data.n_docs, 2), data.qptr)


def _one_document_queries(data):
    return RankingData(data.X, data.y, np.arange(data.n_docs + 1))


@pytest.mark.parametrize("make", [_all_equal, _one_document_queries])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_nothing_to_rank_is_warned(data, name, make):
    """All-equal labels or one-document queries: no pair to order, and the ensembles fitted (for
    LambdaMART: trees of zeros) silently; now a DegenerateDataWarning, as RankBoost warns."""
    from lrank.models._base import DegenerateDataWarning

    with pytest.warns(DegenerateDataWarning, match=rf"{name}: no query has two documents with different "
                                                   "labels"):
        MODELS[name](n_estimators=2, min_child_samples=1).fit(make(data))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ordinary_data_is_not_warned(data, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MODELS[name](n_estimators=2, min_child_samples=2).fit(data)
