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
