"""BOOSTINGTREE and EXP3.P driving AdaBoostStumps: Table 2 replayed, Theorem 2, determinism."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from lrank.models.adaboost import AdaBoostStumps
from lrank.models.boostingtree import BoostingTree, Exp3P
from lrank.papers.boostingtree import (
    PAPER_TABLE2_BOTTOM as PAPER_BOTTOM,
)
from lrank.papers.boostingtree import (
    PAPER_TABLE2_TOP as PAPER_TOP,
)
from lrank.papers.boostingtree import (
    illustrative_example,
    table2_best_case,
    table2_frame,
    table2_worst_case,
    theorem2_check,
)


def _run(sampler, **kw):
    X, y = illustrative_example()
    return BoostingTree(AdaBoostStumps(), n_estimators=100, constraint_sampler=sampler, stop_at=1.0,
                        **kw).fit(X, y)


def test_table2_worst_case_cell_by_cell():
    bt = _run(table2_worst_case)
    assert table2_frame(bt).values.tolist() == PAPER_TOP
    assert bt.n_iter_ == 9 and bt.tree_.f[bt.best_node_] == 1.0
    assert bt.path_label(bt.best_node_) == "1,1,1"


def test_table2_best_case_and_typo():
    bt = _run(table2_best_case)
    got = table2_frame(bt).values.tolist()
    assert got[3][0] == "2"                     # ours: the root's second child
    fixed = [r[:] for r in PAPER_BOTTOM]
    fixed[3][0] = "2"
    assert got == fixed
    assert bt.n_iter_ == 4


@pytest.mark.parametrize("step_c", ["table", "theorem"])
@pytest.mark.parametrize("seed", range(6))
def test_theorem2_bounds_random_runs(step_c, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=60) > 0, 1, -1)
    bt = BoostingTree(AdaBoostStumps(), n_estimators=80, step_c=step_c, random_state=seed).fit(X, y)
    chk = theorem2_check(bt.rounds_)
    assert chk["eq2_upper (l < 2r)"].all()
    assert chk["eq3 (l >= bound)"].all()
    if step_c == "theorem":
        assert chk["eq2_lower (r <= l)"].all()
    assert (bt.rounds_["round_length"] >= 1).all()


def test_worst_case_theorem2_first_bound_fails_with_table_step_c():
    chk = theorem2_check(_run(table2_worst_case).rounds_)
    assert not chk["eq2_lower (r <= l)"].all()       # the "known gap" of the reconstructed BOOSTINGTREE box
    assert chk["eq3 (l >= bound)"].all() and chk["eq2_upper (l < 2r)"].all()


def test_same_seed_same_tree_and_cache_recompute():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = np.where(X[:, 0] + X[:, 2] > 0, 1, -1)
    a = BoostingTree(AdaBoostStumps(), n_estimators=40, random_state=5).fit(X, y)
    b = BoostingTree(AdaBoostStumps(), n_estimators=40, random_state=5, cache_bytes=0).fit(X, y)
    assert a.history_.equals(b.history_)
    assert np.array_equal(a.predict(X), b.predict(X))
    assert a.n_iter_ == 40 and len(a.history_) == 40
    staged = list(a.staged_predict(X))
    assert len(staged) == 40 and np.array_equal(staged[-1], a.predict(X))
    # num_iteration=k: the best model among the first k generated
    for k in (1, 7, 40):
        node = int(np.argmax(a.tree_.f[:k + 1]))
        assert np.array_equal(a.predict(X, num_iteration=k), staged[k - 1])
        assert a.tree_.f[a.select_node(num_iteration=k)] == a.tree_.f[node]


def test_exp3p_on_adaboost():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 6))
    y = np.where(X[:, 3] > 0, 1, -1)
    e = Exp3P(AdaBoostStumps(), n_estimators=60, random_state=2).fit(X, y)
    e2 = Exp3P(AdaBoostStumps(), n_estimators=60, random_state=2).fit(X, y)
    assert e.history_.equals(e2.history_)
    assert np.isfinite(e.weights_).all()
    # the informative arm ends with the largest weight
    assert int(np.argmax(e.weights_)) == 3
    assert np.array_equal(e.predict(X), list(e.staged_predict(X))[-1])
    with pytest.raises(ValueError):
        Exp3P(AdaBoostStumps(), lam=0.0).fit(X, y)


def test_errors():
    X, y = illustrative_example()
    with pytest.raises(ValueError, match="base"):
        BoostingTree(None).fit(X, y)
    with pytest.raises(ValueError, match="step_c"):
        BoostingTree(AdaBoostStumps(), step_c="x").fit(X, y)
    with pytest.raises(ValueError, match="base"):
        BoostingTree(object()).fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        Exp3P(AdaBoostStumps(), lam=0.0).fit(X, y)


def _ranking_toy(seed=0, nq=10):
    from lrank.data.container import RankingData

    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 12, size=nq)
    qid = np.repeat(np.arange(nq), sizes)
    X = rng.normal(size=(qid.size, 6)).astype(np.float32)
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 2] + rng.normal(scale=0.5, size=qid.size)), 0, 2).astype(int)
    return RankingData.from_qid(X, y, qid)


@pytest.mark.parametrize("which", ["ndcgboost", "lambdamart"])
def test_ranking_bases_under_boostingtree_exp3p_standard(which):
    from lrank.models.boostingtree import LambdaMARTBase, Standard
    from lrank.models.ndcgboost import NDCGBoost

    d = _ranking_toy()
    base = NDCGBoost(num_leaves=2) if which == "ndcgboost" else LambdaMARTBase(num_leaves=3)
    bt = BoostingTree(base, n_estimators=30, random_state=0, eval_metric="ndcg@5").fit(d, eval_set=d)
    bt2 = BoostingTree(base, n_estimators=30, random_state=0, eval_metric="ndcg@5").fit(d, eval_set=d)
    assert bt.history_.equals(bt2.history_)
    assert bt.history_["valid_ndcg@5"].notna().all()
    node = bt.select_node("valid", max_length=3)
    assert bt.tree_.depth[node] <= 3
    # the tree's stored f is the training metric of the node's recomputed model
    from lrank.metrics import evaluate

    i = int(bt.history_["node"].iloc[-1])
    f = evaluate(d.y, bt.predict_node(d, i), d.qptr, ["mean_ndcg"], discount="jk")["mean_ndcg"]
    assert f == pytest.approx(bt.tree_.f[i], abs=1e-9)
    e = Exp3P(base, n_estimators=20, random_state=0).fit(d)
    s = Standard(base, n_estimators=10, eval_metric="ndcg@5").fit(d, eval_set=d)
    assert len(e.estimators_) == 20 and len(s.estimators_) == 10
    assert s.history_["train_mean_ndcg"].iloc[-1] > s.history_["train_mean_ndcg"].iloc[0] - 0.05
    assert list(s.history_.columns) == ["train_mean_ndcg", "valid_ndcg@5"]


@pytest.mark.parametrize("vmetric", ["ndcg@5", "mean_ndcg", "r2"])
@pytest.mark.parametrize("name", ["BoostingTree", "Exp3P", "Standard"])
def test_valid_column_is_evaluate_of_each_models_scores(name, vmetric, monkeypatch):
    """``history_``'s validation column equals `evaluate` (with the step's ``metric_kwargs``: NDCGBoost's
    ``discount="jk"``) on every generated model's validation scores, bit for bit; the drivers score with
    one `Evaluator` per fit, built on the validation labels, or with `evaluate` for a metric the Evaluator
    does not compute (``r2``)."""
    import lrank.metrics
    from lrank.metrics import evaluate
    from lrank.models.boostingtree import Standard
    from lrank.models.ndcgboost import NDCGBoost

    built = []

    class Counted(lrank.metrics.Evaluator):
        def __init__(self, y, qptr, *args, **kw):
            built.append(len(y))
            super().__init__(y, qptr, *args, **kw)

    monkeypatch.setattr(lrank.metrics, "Evaluator", Counted)
    train, valid = _ranking_toy(seed=0, nq=10), _ranking_toy(seed=1, nq=7)
    assert train.n_docs != valid.n_docs
    base = NDCGBoost(num_leaves=2)
    est = {"BoostingTree": BoostingTree(base, n_estimators=25, random_state=0, eval_metric=vmetric),
           "Exp3P": Exp3P(base, n_estimators=15, random_state=0, eval_metric=vmetric),
           "Standard": Standard(base, n_estimators=10, eval_metric=vmetric)}[name].fit(train, eval_set=valid)
    got = est.history_[f"valid_{vmetric}"].to_numpy()
    Xv = np.ascontiguousarray(valid.X, dtype=np.float32)
    if name == "BoostingTree":
        scores = [est.predict_node(valid, int(i)) for i in est.history_["node"]]
    else:
        scores, v = [], np.zeros(valid.n_docs)
        for hyp in est.estimators_:
            v = v + hyp.predict(Xv)
            scores.append(v)
    want = [evaluate(valid.y, s, valid.qptr, [vmetric], discount="jk")[vmetric] for s in scores]
    assert len(got) == len(want) == est.n_iter_
    assert np.array_equal(got, np.array(want), equal_nan=True)
    assert built.count(valid.n_docs) == (0 if vmetric == "r2" else 1)


@pytest.mark.parametrize("which", ["ndcgboost", "lambdamart", "lambdamart_ole"])
def test_kept_weights_give_the_same_step_and_tree(which):
    """A step from kept weights (``reweight(model)``, what BoostingTree stores per node) equals the step
    that reweights itself, bit for bit; BoostingTree with every node's weights evicted at once
    (``cache_bytes=0``: recomputed each time) grows the same tree as with them kept."""
    from lrank.models.boostingtree import LambdaMARTBase
    from lrank.models.ndcgboost import NDCGBoost

    d = _ranking_toy()
    base = (NDCGBoost(num_leaves=3) if which == "ndcgboost"
            else LambdaMARTBase(num_leaves=3, ndcg_at=0 if which == "lambdamart" else 5))
    step = base.boosting_step(d)
    if which == "lambdamart_ole":
        from dataclasses import replace

        step.params = replace(step.params, criterion="ole")
    rng = np.random.default_rng(3)
    model = rng.normal(size=d.n_docs)
    for cons in (None, (1, 0), (2, 2)):
        h1, m1 = step.step(model, cons)
        h2, m2 = step.step(model, cons, weights=step.reweight(model))
        assert np.array_equal(m1, m2)
        assert np.array_equal(h1.predict(d.X), h2.predict(d.X))
    a = BoostingTree(base, n_estimators=40, random_state=1).fit(d)
    b = BoostingTree(base, n_estimators=40, random_state=1, cache_bytes=0).fit(d)
    assert a.history_.equals(b.history_)
    assert np.array_equal(a.predict(d.X), b.predict(d.X))


@pytest.mark.parametrize("which", ["ndcgboost", "lambdamart"])
def test_stump_nodes_keep_no_root_rows(which):
    """The weights a node keeps (``reweight``) hold root histogram rows only for trees of three leaves or
    more: a node's stumps each take another feature (a constraint is used once per node), so a kept root
    row would be made once and never read; a wider constrained tree's first feature may come back in the
    node's next tree."""
    from lrank.models.boostingtree import LambdaMARTBase
    from lrank.models.ndcgboost import NDCGBoost

    d = _ranking_toy()
    model = np.random.default_rng(5).normal(size=d.n_docs)
    for leaves in (2, 3):
        base = NDCGBoost(num_leaves=leaves) if which == "ndcgboost" else LambdaMARTBase(num_leaves=leaves)
        step = base.boosting_step(d)
        wts = step.reweight(model)
        step.step(model, (1,) if leaves == 2 else (1, 0), weights=wts)
        assert wts[3].share_roots == (leaves > 2), leaves
        assert (wts[3].nbytes > 0) == (leaves > 2), (leaves, wts[3].nbytes)


def test_run_protocol_and_three_grades():
    from lrank.models.boostingtree import Standard
    from lrank.models.ndcgboost import NDCGBoost
    from lrank.papers.boostingtree import claim_better, claim_not_worse, run_protocol, three_grades

    d = _ranking_toy(nq=15)
    d.y[:] = np.minimum(d.y * 2, 4)
    d3 = three_grades(d)
    assert d3.y.max() <= 2 and "relabel" in d3.provenance
    assert np.array_equal(d3.y, np.minimum(d.y, 2))
    folds = d3.kfold(5, random_state=0)[:2]
    keep = []
    ests = {"std": Standard(NDCGBoost(), n_estimators=4),
            "bt": BoostingTree(NDCGBoost(), n_estimators=8, random_state=0),
            "exp3p": Exp3P(NDCGBoost(), n_estimators=8, random_state=0)}
    pq, fits = run_protocol(ests, folds, metric="ndcg@5", test_metrics=("ndcg@5", "mean_ndcg"),
                            lengths=(None, 1, 2), keep=keep)
    n_test = sum(f.test.n_queries for f in folds)
    assert len(pq) == 3 * 3 * n_test and len(keep) == 6 and len(fits) == 6
    assert (pq.loc[pq["max_length"] == 1, "length"] <= 1).all()
    assert pq["ndcg@5"].between(0, 1).all()
    # the picked model of the standard variant is the first best validation round
    est = next(e for fo, n, e in keep if fo == 1 and n == "std")
    v = est.history_["valid_ndcg@5"].to_numpy()
    picked = pq[(pq.fold == 1) & (pq.algorithm == "std") & pq.max_length.isna()]["length"]
    assert (picked == np.argmax(v) + 1).all()
    c = claim_better(pq, "bt", "std", "mean_ndcg")
    assert c["n"] == n_test and c["verdict"] in ("HELD", "NOT HELD", "UNDECIDED")
    same = claim_not_worse(pq, "std", "std", "mean_ndcg")
    assert same["verdict"] == "UNDECIDED" and same["mean_diff"] == 0


def test_claim_verdicts_can_fail():
    """The claim checks say NOT HELD for a clearly worse algorithm and HELD for a clearly better one."""
    import pandas as pd

    from lrank.papers.boostingtree import claim_better, claim_not_worse, claim_worst

    rng = np.random.default_rng(0)
    n = 60
    base = rng.uniform(0.3, 0.6, n)
    rows = []
    for name, shift in (("good", 0.05), ("ref", 0.0), ("bad", -0.05)):
        rows.append(pd.DataFrame({"fold": 1, "algorithm": name, "max_length": np.nan, "query": np.arange(n),
                                  "m": base + shift + rng.normal(0, 0.01, n)}))
    pq = pd.concat(rows, ignore_index=True)
    assert claim_better(pq, "good", "ref", "m")["verdict"] == "HELD"
    assert claim_better(pq, "bad", "ref", "m")["verdict"] == "NOT HELD"
    assert claim_not_worse(pq, "good", "ref", "m")["verdict"] == "HELD"
    assert claim_not_worse(pq, "bad", "ref", "m")["verdict"] == "NOT HELD"
    assert claim_worst(pq, "bad", ["good", "ref"], "m")["verdict"] == "HELD"
    assert claim_worst(pq, "ref", ["good", "bad"], "m")["verdict"] == "NOT HELD"


# ------------------------------------------------------------------ the estimator contract
def _drivers():
    from lrank.models.boostingtree import Standard
    from lrank.models.ndcgboost import NDCGBoost

    return {"BoostingTree": BoostingTree(NDCGBoost(), n_estimators=12, random_state=0),
            "Exp3P": Exp3P(NDCGBoost(), n_estimators=6, random_state=0),
            "Standard": Standard(NDCGBoost(), n_estimators=5)}


RETIRED = {"n_rounds", "n_trees", "n_iter", "n_sequences", "max_leaves", "n_leaves", "min_data_in_leaf"}


@pytest.mark.parametrize("name", ["BoostingTree", "Exp3P", "Standard"])
def test_driver_contract(name):
    from sklearn.base import clone

    from lrank.models._base import BaseRanker

    est = _drivers()[name]
    cls = type(est)
    assert issubclass(cls, BaseRanker)
    params = set(cls().get_params(deep=False))
    assert not params & RETIRED and set(cls._parameter_constraints) == params
    assert ("random_state" in params) == (name != "Standard")     # Standard has no random choice
    d = _ranking_toy(1)
    est.fit(d)
    n = est.n_iter_
    h = est.history_
    assert h.index.name == "iteration" and list(h.index) == list(range(1, n + 1))
    assert "train_mean_ndcg" in h and est.best_iteration_ is None and isinstance(est.stop_reason_, str)
    staged = list(est.staged_predict(d.X))
    assert len(staged) == n and np.array_equal(staged[-1], est.predict(d.X))
    for k in (1, n):
        assert np.array_equal(est.predict(d.X, num_iteration=k), staged[k - 1])
    with pytest.raises(ValueError, match="num_iteration"):
        est.predict(d.X, num_iteration=n + 1)
    with pytest.raises(ValueError, match="features"):
        est.predict(d.X[:, :-1])
    assert np.array_equal(clone(est).fit(d.X, d.y, qid=d.doc_qid()).predict(d.X), est.predict(d.X))
    with pytest.raises(TypeError, match="qid"):
        clone(est).fit(d.X, d.y)


@pytest.mark.parametrize("name", ["BoostingTree", "Exp3P", "Standard"])
@pytest.mark.parametrize("bad", [0, 2.5, "5", -1, True])
def test_driver_n_estimators_validated(name, bad):
    est = _drivers()[name].set_params(n_estimators=bad)
    with pytest.raises((ValueError, TypeError), match="n_estimators"):
        est.fit(_ranking_toy(1))


@pytest.mark.parametrize("name", ["BoostingTree", "Exp3P", "Standard"])
def test_driver_save_load_in_a_fresh_process_and_small_pickles(name, tmp_path):
    import pickle
    import subprocess
    import sys
    import textwrap

    from sklearn.base import clone

    est = _drivers()[name]
    d = _ranking_toy(1)
    est.fit(d)
    path = est.save_model(tmp_path / "m")
    np.save(tmp_path / "X.npy", d.X)
    np.save(tmp_path / "p.npy", est.predict(d.X))
    code = textwrap.dedent(f"""
        import numpy as np
        from lrank.models._base import load_model
        m = load_model({str(path)!r})
        assert type(m).__name__ == {name!r}
        p = m.predict(np.load({str(tmp_path / 'X.npy')!r}))
        assert np.array_equal(p, np.load({str(tmp_path / 'p.npy')!r}))
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
    small, big = _ranking_toy(2, nq=10), _ranking_toy(2, nq=80)
    sizes = [len(pickle.dumps(clone(est).fit(x))) for x in (small, big)]
    assert sizes[1] < 2.5 * sizes[0] + 20_000, sizes


def test_boostingtree_refuses_to_save_a_callable(tmp_path):
    from lrank.metamax import h_exp_sqrt

    X, y = illustrative_example()
    bt = BoostingTree(AdaBoostStumps(), n_estimators=5, h=h_exp_sqrt).fit(X, y)
    with pytest.raises(TypeError, match="h="):
        bt.save_model(tmp_path / "bt")
    with pytest.raises(TypeError, match="constraint_sampler"):
        _run(table2_worst_case).save_model(tmp_path / "bt2")


def test_lambdamart_base_parameters():
    from lrank.models.boostingtree import LambdaMARTBase

    params = set(LambdaMARTBase().get_params())
    assert not params & RETIRED and set(LambdaMARTBase._parameter_constraints) == params
    with pytest.raises(ValueError, match="num_leaves"):
        Exp3P(LambdaMARTBase(num_leaves=1), n_estimators=2).fit(_ranking_toy())


def _checked():
    from lrank.models.boostingtree import Standard
    from lrank.models.ndcgboost import NDCGBoost

    return [Standard(NDCGBoost(), n_estimators=3), Exp3P(NDCGBoost(), n_estimators=3, random_state=0),
            BoostingTree(NDCGBoost(), n_estimators=4, random_state=0)]


# sample_weight is refused by these drivers (no natural weighting; tests/models/test_fit_conventions.py)
_NO_WEIGHTS = {c: "refuses sample_weight (no natural weighting)" for c in (
    "check_sample_weights_pandas_series", "check_sample_weights_not_an_array", "check_sample_weights_list",
    "check_sample_weights_shape", "check_sample_weights_not_overwritten",
    "check_sample_weight_equivalence_on_dense_data", "check_all_zero_sample_weights_error")}


@pytest.mark.filterwarnings("ignore")
@parametrize_with_checks(_checked(), expected_failed_checks=lambda est: _NO_WEIGHTS)
def test_sklearn_estimator_checks(estimator, check):
    """scikit-learn's estimator checks (as tests/models/test_sklearn_checks.py runs over the rankers)."""
    import lrank

    with lrank.config_context(one_query=True):
        check(estimator)


def _stump_data(seed):
    """Queries of 1-40 documents (one-document queries included), tied and missing feature values, a
    query with all labels equal, an all-missing feature and a constant one."""
    from lrank.data.container import RankingData

    rng = np.random.default_rng(seed)
    sizes = np.array([1, 40, 1, 17, 25, 3, 12])
    qid = np.repeat(np.arange(sizes.size), sizes)
    n = qid.size
    X = rng.normal(size=(n, 7)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1])                         # ties
    X[rng.random(n) < 0.2, 2] = np.nan                  # missing values
    X[:, 3] = np.nan
    X[:, 4] = 1.0
    y = rng.integers(0, 3, size=n)
    y[qid == 3] = 1                                     # all labels equal
    return RankingData.from_qid(X, y, qid)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("min_child_samples", [1, 5])
def test_constrained_steps_are_the_oracles_trees(seed, min_child_samples):
    """A constrained LambdaMART step grows, over the columns of its constraint's features, the tree of the
    node-by-node NumPy oracle (``tests/reference/tree_grower.py``): every node array and the new model bit
    for bit, for every feature, with kept weights or not, a constant hessian, no valid split; a feature
    tree of three leaves too."""
    from lrank.models.boostingtree import LambdaMARTBase
    from lrank.models.gbrt import lambda_derivatives
    from tests.reference import tree_grower as ref

    d = _stump_data(seed)
    rng = np.random.default_rng(seed)
    for leaves in (2, 3):
        step = LambdaMARTBase(num_leaves=leaves, min_child_samples=min_child_samples).boosting_step(d)
        for model in (rng.normal(size=d.n_docs), np.zeros(d.n_docs)):
            wts = step.reweight(model)
            lam, w_lam, _ = lambda_derivatives(d.y, d.qptr, model, ndcg_at=0, sigma=1.0, with_pairs=False)
            assert wts[0].tobytes() == (-lam).tobytes()  # L' = -lambda
            assert wts[1].tobytes() == w_lam.tobytes()
            const = (wts[0], np.full(d.n_docs, 0.5), wts[2])
            for f in range(d.n_features):
                cons = (f,) if leaves == 2 else (f, (f + 3) % d.n_features)
                for w in (wts, None, const):
                    tree, new = step.step(model, cons, weights=w)
                    grad, hess = (wts if w is None else w)[:2]
                    want = ref.grow(step.bins.codes, grad, hess, num_leaves=leaves, criterion="se",
                                    min_data=min_child_samples, min_hess=1e-3, constraint=cons,
                                    n_bins=step.bins.n_bins)
                    value = want["value"] * step.params.learning_rate
                    assert tree.value.tobytes() == value.tobytes(), (f, w is None)
                    for a in ("feature", "bin", "left", "right", "gain"):
                        assert getattr(tree, a).tobytes() == want[a].tobytes(), (f, a)
                    assert new.tobytes() == (model + value[want["leaf_of"]]).tobytes()
                    assert np.array_equal(tree.predict(d.X), tree.value[tree.apply(d.X)])


@pytest.mark.parametrize("driver", ["BoostingTree", "Exp3P", "Standard"])
def test_driver_without_base_says_what_to_pass(driver):
    import lrank

    with pytest.raises(TypeError, match=rf"pass base=, e.g. {driver}\(base=lrank.LambdaMARTBase\(\)\)"):
        getattr(lrank, driver)().fit(np.zeros((4, 2)), np.array([0, 1, 0, 1]), qid=[1, 1, 2, 2])
