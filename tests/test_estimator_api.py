"""Every ranker follows one contract: fit(RankingData) == fit(X, y, qid=...) == fit(X, y, group=...),
predict needs no qid, staged_predict ends at predict, clone works, the same seed gives the same bits."""

import inspect

import numpy as np
import pytest
from sklearn.base import clone

import lrank.models as M
from lrank.data import RankingDataError, make_letor_like

ROUNDS = {"RankBoost": "n_rounds", "RankBoostPlus": "n_rounds", "AdaRank": "n_rounds", "MART": "n_trees",
          "LambdaMART": "n_trees", "McRank": "n_trees", "NDCGBoost": "n_iter"}


def make(name, seed=0):
    cls = getattr(M, name)
    params = inspect.signature(cls.__init__).parameters
    kw = {ROUNDS[name]: 5} if ROUNDS[name] in params else {}
    if "random_state" in params:
        kw["random_state"] = seed
    return cls(**kw)


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=12, docs_per_query=(5, 15), n_features=6, random_state=0)


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_estimator_contract(name, data):
    est = make(name).fit(data)
    p = est.predict(data.X)
    assert p.shape == (data.n_docs,) and np.isfinite(p).all()
    staged = list(est.staged_predict(data.X))
    assert len(staged) >= 1 and np.allclose(staged[-1], p)
    assert hasattr(est, "n_iter_") and hasattr(est, "history_")
    np.testing.assert_array_equal(clone(est).fit(data.X, data.y, qid=data.doc_qid()).predict(data.X), p)
    np.testing.assert_array_equal(clone(est).fit(data.X, data.y, group=data.group).predict(data.X), p)
    np.testing.assert_array_equal(make(name).fit(data).predict(data.X), p)  # same seed, same bits
    assert set(clone(est).get_params()) == set(est.get_params())


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_unknown_qid_order_is_an_error(name, data):
    qid = data.doc_qid().copy()
    qid[[0, -1]] = qid[[-1, 0]]  # a document of the last query appears first
    with pytest.raises(RankingDataError, match="not contiguous"):
        make(name).fit(data.X, data.y, qid=qid)
