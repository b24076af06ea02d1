"""scikit-learn's own estimator checks over every ranker (``parametrize_with_checks``).

The checks call ``fit(X, y)`` without query ids; they run inside ``lrank.config_context(one_query=True)``,
the documented way of saying that all rows are one query. Checks that cannot apply to rankers are listed as
expected failures with their reason.
"""

import importlib

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_estimator_api import RANKERS

import lrank

# check name -> why it cannot apply to a ranker (shared by every ranker)
NOT_FOR_RANKERS = {}

# per-estimator additions: name -> {check: reason}
SPECIFIC: dict[str, dict[str, str]] = {}

# sample_weight (LightGBM's fit convention, lrank/models/_base.py) where an algorithm has no per-document
# weighting; the weighting each one does have is tested in tests/models/test_fit_conventions.py
_PER_QUERY = ("weights queries: under one_query=True every row is one query, and a per-document weight that "
              "varies within a query is refused")
_REFUSED = "refuses sample_weight (no natural weighting)"
_SE = "its default criterion 'se' counts documents and refuses a weight (criterion='rwse' weighs them)"
_WEIGHT_CHECKS = ("check_sample_weights_pandas_series", "check_sample_weights_not_an_array",
                  "check_sample_weights_list", "check_sample_weights_shape",
                  "check_sample_weights_not_overwritten", "check_sample_weight_equivalence_on_dense_data")
for _name in ("RankBoost", "RankBoostPlus", "AdaRank", "LambdaMART"):  # LambdaMART's default: 'rwse'
    SPECIFIC[_name] = {c: _PER_QUERY for c in _WEIGHT_CHECKS[-2:]}
SPECIFIC["McRank"] = {c: _SE for c in _WEIGHT_CHECKS}
SPECIFIC["NDCGBoost"] = {c: _REFUSED for c in (*_WEIGHT_CHECKS, "check_all_zero_sample_weights_error")}
SPECIFIC["MART"] = {"check_sample_weight_equivalence_on_dense_data": (
    "thresholds are quantiles of the documents and min_child_samples counts documents, so a repeated "
    "document moves both; the weighted loss itself equals repetition (tests/models/test_fit_conventions.py)")}


def _make(name):
    module, params = RANKERS[name]
    return getattr(importlib.import_module(module), name)(**params)


def expected_failed_checks(estimator):
    return {**NOT_FOR_RANKERS, **SPECIFIC.get(type(estimator).__name__, {})}


@pytest.mark.filterwarnings("ignore")
@parametrize_with_checks([_make(n) for n in sorted(RANKERS)], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    with lrank.config_context(one_query=True):
        check(estimator)
