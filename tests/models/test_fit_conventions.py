"""LightGBM's fit conventions on every ranker: eval_set as (X, y) pairs with eval_group= / eval_qid=,
eval_names, and sample_weight where the algorithm has a natural weighting (a clear refusal elsewhere)."""

import warnings

import numpy as np
import pytest

from lrank.data import RankingData, make_letor_like
from lrank.models.adarank import AdaRank
from lrank.models.boostingtree import BoostingTree, Exp3P, LambdaMARTBase, Standard
from lrank.models.gbrt import MART, LambdaMART, McRank
from lrank.models.ndcgboost import NDCGBoost
from lrank.models.rankboost import RankBoost
from lrank.models.rankboost_plus import RankBoostPlus

MAKERS = {
    "RankBoost": lambda: RankBoost(n_estimators=6, random_state=0),
    "RankBoostPlus": lambda: RankBoostPlus(n_estimators=6, random_state=0),
    "AdaRank": lambda: AdaRank(n_estimators=6),
    "MART": lambda: MART(n_estimators=4, min_child_samples=2),
    "LambdaMART": lambda: LambdaMART(n_estimators=4, min_child_samples=2),
    "McRank": lambda: McRank(n_estimators=3, min_child_samples=2),
    "NDCGBoost": lambda: NDCGBoost(n_estimators=4, random_state=0),
    "BoostingTree": lambda: BoostingTree(LambdaMARTBase(), n_estimators=6, random_state=0),
    "Exp3P": lambda: Exp3P(LambdaMARTBase(), n_estimators=6, random_state=0),
    "Standard": lambda: Standard(LambdaMARTBase(), n_estimators=6),
}
WEIGHTED = {"RankBoost": "query", "RankBoostPlus": "query", "AdaRank": "query", "LambdaMART": "query",
            "MART": "document", "McRank": "document"}


@pytest.fixture(scope="module")
def sets():
    train = make_letor_like(n_queries=10, docs_per_query=(5, 12), n_features=5, random_state=0)
    valid = make_letor_like(n_queries=4, docs_per_query=(5, 12), n_features=5, random_state=1)
    return train, valid


def _valid_columns(model):
    return [c for c in model.history_.columns if c.startswith(("valid", "va_", "other_"))]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_lightgbm_eval_set_forms_equal_the_ranking_data_form(name, sets):
    train, valid = sets
    ref = MAKERS[name]().fit(train.X, train.y, group=train.group, eval_set=valid)
    # PyTerrier's pt.ltr.apply_learned_model(form="ltr") call, verbatim
    pt = MAKERS[name]().fit(train.X, train.y, group=train.group, eval_set=[(valid.X, valid.y)],
                            eval_group=[valid.group])
    by_qid = MAKERS[name]().fit(train.X, train.y, qid=train.doc_qid(), eval_set=[(valid.X, valid.y)],
                                eval_qid=[valid.doc_qid()])
    assert _valid_columns(ref), "the eval set was scored"
    for other in (pt, by_qid):
        np.testing.assert_array_equal(other.predict(valid.X), ref.predict(valid.X))
        np.testing.assert_array_equal(other.history_[_valid_columns(ref)].to_numpy(),
                                      ref.history_[_valid_columns(ref)].to_numpy())


@pytest.mark.parametrize("name", ["LambdaMART", "RankBoost", "AdaRank", "RankBoostPlus"])
def test_eval_names_name_history_columns(name, sets):
    train, valid = sets
    m = MAKERS[name]().fit(train, eval_set=[valid, train], eval_names=["va", "other"])
    cols = _valid_columns(m)
    assert cols and all(c.startswith(("va_", "other_")) for c in cols), cols
    assert not any(c.startswith("valid") for c in m.history_.columns)
    plain = MAKERS[name]().fit(train, eval_set=[valid])
    assert any(c.startswith("valid_") for c in plain.history_.columns)


def test_eval_set_errors_are_clear(sets):
    train, valid = sets
    m = LambdaMART(n_estimators=2)
    with pytest.raises(TypeError, match=r"eval_set\[0\] is a tuple \(X, y\): its queries need eval_group="):
        m.fit(train, eval_set=[(valid.X, valid.y)])
    with pytest.raises(ValueError, match=r"eval_group must hold one array per eval set \(1\), got 2"):
        m.fit(train, eval_set=[(valid.X, valid.y)], eval_group=[valid.group, valid.group])
    with pytest.raises(TypeError, match="eval_group or eval_qid, not both"):
        m.fit(train, eval_set=[(valid.X, valid.y)], eval_group=[valid.group], eval_qid=[valid.doc_qid()])
    with pytest.raises(ValueError, match="eval_group was given without an eval_set"):
        m.fit(train, eval_group=[valid.group])
    with pytest.raises(ValueError, match="eval_names must be 1 non-empty strings"):
        m.fit(train, eval_set=[valid], eval_names=["a", "b"])
    with pytest.raises(TypeError, match=r"eval_set\[0\] is a RankingData: it has its queries"):
        m.fit(train, eval_set=[valid], eval_group=[valid.group])
    with pytest.raises(ValueError, match=r"eval_set\[0\]: "):
        m.fit(train, eval_set=[(valid.X, valid.y)], eval_group=[valid.group[:-1]])


def _duplicate_query(data, q):
    """``data`` with query ``q`` appended once more (a second copy under a new id)."""
    extra = data.subset([q])
    extra.qid = np.array([data.qid.max() + 1])
    return RankingData.concat([data, extra])


@pytest.mark.parametrize("name", ["RankBoost", "RankBoostPlus", "AdaRank", "LambdaMART"])
def test_query_weight_two_equals_the_query_twice(name, sets):
    train, valid = sets
    kw = {"max_thresholds": 254, "threshold_strategy": "all"} if name == "RankBoost" else {}
    if name == "AdaRank":
        kw = {"early_stopping_rounds": None, "max_consecutive": None}  # rounds past the paper's stop rule
    if name == "LambdaMART":
        kw = {"threshold_strategy": "all", "min_child_samples": 1, "criterion": "rwse"}
    make = lambda: MAKERS[name]().set_params(**kw)  # noqa: E731
    w = np.ones(train.n_queries)
    w[3] = 2.0
    weighted = make().fit(train, sample_weight=w)
    twice = make().fit(_duplicate_query(train, 3))
    np.testing.assert_allclose(weighted.predict(valid.X), twice.predict(valid.X), rtol=1e-9, atol=1e-12)
    # a per-document weight constant within each query is the same query weight
    per_doc = make().fit(train, sample_weight=np.repeat(w, train.group))
    np.testing.assert_array_equal(per_doc.predict(valid.X), weighted.predict(valid.X))
    # and the weight moves the model (the check above is not vacuous)
    assert not np.allclose(weighted.predict(valid.X), make().fit(train).predict(valid.X))


def test_document_weight_two_equals_the_document_twice(sets):
    train, valid = sets
    make = lambda: MART(n_estimators=4, min_child_samples=1, min_child_weight=0.0, threshold_strategy="all",  # noqa: E731
                        criterion="rwse")
    w = np.ones(train.n_docs)
    rows = np.r_[np.arange(train.n_docs), 7]  # document 7 twice (it stays in its query)
    rows.sort()
    w[7] = 2.0
    weighted = make().fit(train, sample_weight=w)
    twice = make().fit(train.take_documents(rows))
    np.testing.assert_allclose(weighted.predict(valid.X), twice.predict(valid.X), rtol=1e-9, atol=1e-12)
    assert weighted.init_[0] == pytest.approx(np.average(train.y, weights=w))


@pytest.mark.parametrize("name", ["NDCGBoost", "BoostingTree", "Exp3P", "Standard"])
def test_rankers_without_a_natural_weighting_refuse_sample_weight(name, sets):
    train, _ = sets
    with pytest.raises(ValueError, match=f"{name} has no natural weighting.*sample_weight is not supported"):
        MAKERS[name]().fit(train, sample_weight=np.ones(train.n_queries))


def test_sample_weight_errors_are_clear(sets):
    train, _ = sets
    w = np.ones(train.n_docs)
    w[train.qptr[2] + 1] = 3.0
    with pytest.raises(ValueError, match=rf"differs within query {train.qid[2]} "):
        LambdaMART(n_estimators=2, criterion="rwse").fit(train, sample_weight=w)
    with pytest.raises(ValueError, match="one weight per document"):
        MART(n_estimators=2, criterion="rwse").fit(train, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match=r"sample_weight\[0\] = -1.0"):
        RankBoost(n_estimators=2).fit(train, sample_weight=-np.ones(train.n_queries))
    for crit in ("se", "ole"):
        with pytest.raises(ValueError, match=f"criterion='rwse' or 'wse', not '{crit}'"):
            LambdaMART(n_estimators=2, criterion=crit).fit(train, sample_weight=np.ones(train.n_queries))
    # the default (no weight) and weights of one give the same model bits where no rescaling happens
    a = RankBoost(n_estimators=4, random_state=0).fit(train)
    b = RankBoost(n_estimators=4, random_state=0).fit(train, sample_weight=np.ones(train.n_queries))
    np.testing.assert_array_equal(a.alphas_, b.alphas_)


def test_early_stopping_keeps_the_earlier_round_on_a_near_tie():
    """A validation score that beats the best by rounding only (another CPU's last bits) is no improvement."""
    from lrank.models._base import improves

    assert improves(0.5, -np.inf) and improves(0.5 + 1e-9, 0.5)
    assert not improves(0.5 + 1e-15, 0.5) and not improves(0.5, 0.5) and not improves(np.nan, 0.5)
    assert not improves(-0.5 + 1e-15, -0.5) and improves(-0.5 + 1e-9, -0.5)


# ------------------------------------------------------------------------------ nothing to rank
def _one_document_queries(data):
    return RankingData(data.X, data.y, np.arange(data.n_docs + 1))  # fit(..., qid=np.arange(n))


def _all_equal_labels(data):
    return RankingData(data.X, np.full(data.n_docs, 2), data.qptr)


@pytest.mark.parametrize("make", [_one_document_queries, _all_equal_labels])
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_nothing_to_rank_is_never_silent(name, sets, make):
    """No query with two differently labelled documents: no pair to order. MART, LambdaMART and McRank
    (trees of zeros), AdaRank, NDCGBoost and the BoostingTree drivers fitted such data without a word;
    every ranker now warns, naming itself, at the caller's line (RankBoost stops at its first round;
    RankBoostPlus, whose potential has no critical pair to sum over, refuses)."""
    from lrank.models._base import DegenerateDataWarning
    from lrank.models.rankboost import DegenerateRoundWarning

    data = make(sets[0])
    if name == "RankBoostPlus":
        with pytest.raises(ValueError, match="no critical pairs"):
            MAKERS[name]().fit(data)
        return
    if name == "RankBoost":
        with pytest.warns(DegenerateRoundWarning, match="RankBoost stopped early: no crucial pairs"):
            MAKERS[name]().fit(data)
        return
    with pytest.warns(DegenerateDataWarning,
                      match=rf"^{name}: no query has two documents with different labels") as caught:
        MAKERS[name]().fit(data)
    assert all(w.filename == __file__ for w in caught
               if issubclass(w.category, DegenerateDataWarning)), "the warning points at the caller's line"


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_ordinary_data_is_not_warned_as_nothing_to_rank(name, sets):
    from lrank.models._base import DegenerateDataWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        MAKERS[name]().fit(sets[0])
