import re

import numpy as np
import pytest

from lrank.data import RankingData, RankingDataError, as_ranking_data


def small():
    X = np.arange(12, dtype=float).reshape(6, 2)
    return RankingData.from_qid(X, [2, 1, 0, 1, 1, 0], qid=[10, 10, 10, 20, 30, 30])


def test_construction_and_properties():
    d = small()
    assert (d.n_queries, d.n_docs, d.n_features) == (3, 6, 2)
    assert d.qptr.tolist() == [0, 3, 4, 6]
    assert d.qid.tolist() == [10, 20, 30]
    assert d.X.dtype == np.float32 and d.y.dtype == np.int32
    assert d.doc_qid().tolist() == [10, 10, 10, 20, 30, 30]
    assert d.query_index().tolist() == [0, 0, 0, 1, 2, 2]
    assert RankingData.from_group(d.X, d.y, [3, 1, 2]).qptr.tolist() == d.qptr.tolist()


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(y=[0, 1, np.nan]), "finite"),
        (dict(y=[0, 1.5, 2]), "document 1 is 1.5; labels must be finite integers in 0..30"),
        (dict(y=[0, -1, 2]), "document 1 is -1; labels must be non-negative"),
        (dict(y=[0, 1, 31]), "document 2 is 31; labels must be below 31"),
        (dict(y=np.array([0, 2**40, 1])), "document 1 is 1099511627776; labels must be below 31"),
        (dict(y=np.array([0, 1, 3e9])), "document 2 is 3000000000.0; labels must be below 31"),
        (dict(y=np.array([0, 1, 2**64 - 1], dtype=np.uint64)), "document 2 is 18446744073709551615"),
        (dict(qptr=[0, 2, 2, 3]), "empty"),
        (dict(qptr=[0, 2]), "end at"),
        (dict(X=np.array([[1.0], [np.inf], [0.0]])), "infinite"),
        (dict(y=["a", "b", "c"]), "numeric"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, msg):
    args = dict(X=np.zeros((3, 1)), y=[0, 1, 2], qptr=[0, 1, 3])
    args.update(kwargs)
    with pytest.raises(RankingDataError, match=msg):
        RankingData(**args)


def test_unknown_qid_order_is_an_error():
    msg = r"documents of query 1 are not contiguous: the query reappears at document 2 \("
    with pytest.raises(RankingDataError, match=msg):  # the id as the user wrote it, not np.int64(1)
        RankingData.from_qid(np.zeros((4, 1)), [0, 1, 0, 1], qid=np.array([1, 2, 1, 2]))
    with pytest.raises(RankingDataError, match="query 'a' are not contiguous"):
        RankingData.from_qid(np.zeros((3, 1)), [0, 1, 0], qid=np.array(["a", "b", "a"]))


def test_subset_keeps_queries_in_given_order():
    d = small()
    s = d.subset([2, 0])
    assert s.qid.tolist() == [30, 10]
    assert s.y.tolist() == [1, 0, 2, 1, 0]
    np.testing.assert_array_equal(s.X[:2], d.X[4:6])


def test_a_boolean_mask_selects_what_it_marks():
    """``subset([False, True, False])`` used to be read as positions 0, 1, 0 (the qids [10 20 10])."""
    d = small()
    assert d.subset([False, True, True]).qid.tolist() == [20, 30]
    assert d.subset(np.array([2.0, 0.0])).qid.tolist() == [30, 10]  # integral floats are positions
    with pytest.raises(IndexError, match=r"mask of query positions needs 3 entries, got shape \(2,\)"):
        d.subset([True, False])
    with pytest.raises(TypeError, match="query positions must be integers, got 0.5"):
        d.subset([0.5])
    rows = np.zeros(d.n_docs, bool)
    rows[[4, 5]] = True
    t = d.take_documents(rows)
    assert t.qid.tolist() == [30] and t.n_docs == 2
    with pytest.raises(IndexError, match="document index out of range"):
        d.take_documents([-1])  # used to wrap to the last document


def test_kfold_partitions_queries_3_1_1():
    rng = np.random.default_rng(0)
    d = RankingData.from_group(rng.normal(size=(50, 3)), rng.integers(0, 3, 50), [5] * 10)
    folds = d.kfold(5, random_state=1)
    assert len(folds) == 5
    tests = np.concatenate([f.test.qid for f in folds])
    assert sorted(tests.tolist()) == list(range(10))
    for f in folds:
        ids = [set(f.train.qid), set(f.valid.qid), set(f.test.qid)]
        assert len(ids[0]) == 6 and len(ids[1]) == 2 and len(ids[2]) == 2
        assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    again = d.kfold(5, random_state=1)
    assert all((a.test.qid == b.test.qid).all() for a, b in zip(folds, again))
    assert all(f.valid is None for f in d.kfold(5, validation=False))


def test_task_folds_split_documents_of_one_query():
    rng = np.random.default_rng(0)
    d = RankingData(rng.normal(size=(23, 2)), rng.integers(1, 6, 23), [0, 23])
    folds = d.task_folds(5, random_state=0)
    seen = []
    for f in folds:
        assert f.train.n_queries == f.valid.n_queries == f.test.n_queries == 1
        assert f.train.n_docs + f.valid.n_docs + f.test.n_docs == 23
        seen.append(f.test.X[:, 0])
    assert np.sort(np.concatenate(seen)).tolist() == np.sort(d.X[:, 0]).tolist()
    with pytest.raises(RankingDataError, match="single-query"):
        small().task_folds(5)


def test_pairs_weighting_and_describe():
    d = small()
    p = d.pairs()
    assert list(zip(p.hi.tolist(), p.lo.tolist())) == [(0, 1), (0, 2), (1, 2), (4, 5)]
    assert np.isclose(p.weight.sum(), 1.0) and np.allclose(p.weight, 0.25)
    q = d.pairs("query")
    assert np.allclose(q.weight, [1 / 6, 1 / 6, 1 / 6, 1 / 2])
    assert d.pairs("none").weight.tolist() == [1.0] * 4
    with pytest.raises(ValueError):
        d.pairs("bogus")
    assert d.describe() == {"#query": 3, "#doc": 6, "#doc/#query": 2.0, "#feature": 2, "#critical pairs": 4}
    assert d.n_critical_pairs().tolist() == [3, 0, 1]


def test_as_ranking_data_conventions():
    X, y = np.zeros((4, 2)), [0, 1, 1, 0]
    assert as_ranking_data(X, y, qid=[5, 5, 6, 6]).n_queries == 2
    assert as_ranking_data(X, y, group=[1, 3]).group.tolist() == [1, 3]
    with pytest.raises(TypeError, match="ranking needs query ids: pass qid="):
        as_ranking_data(X, y)
    import lrank

    with lrank.config_context(one_query=True):
        one = as_ranking_data(X, y)
    assert one.n_queries == 1 and one.provenance["one_query"] is True
    d = as_ranking_data(X, y, group=[2, 2])
    assert as_ranking_data(d) is d
    with pytest.raises(TypeError):
        as_ranking_data(X, y, qid=[1, 1, 2, 2], group=[2, 2])
    with pytest.raises(TypeError):
        as_ranking_data(d, y)


def test_concat_keeps_queries_and_checks_features():
    d = small()
    both = RankingData.concat([d, d.subset([1])])
    assert both.n_queries == 4 and both.qid.tolist() == [10, 20, 30, 20]
    np.testing.assert_array_equal(both.X[-1], d.X[3])
    with pytest.raises(RankingDataError):
        RankingData.concat([d, RankingData(np.zeros((2, 3)), [0, 1], [0, 2])])
    named = RankingData(d.X, d.y, d.qptr, qid=d.qid, feature_names=["a", "b"])
    renamed = RankingData(d.X, d.y, d.qptr, qid=d.qid, feature_names=["a", "c"])
    with pytest.raises(RankingDataError, match="part 1's feature names differ from part 0's .*'c' against"):
        RankingData.concat([named, renamed])  # used to keep ["a", "b"] silently
    assert list(RankingData.concat([d, named]).feature_names) == ["a", "b"]


def test_label_contract_no_silent_wrap():
    """The issue's cases: 2**40 became 0 and 3e9 became -2147483648; now both are refused."""
    from lrank.data import LABEL_BOUND

    assert LABEL_BOUND == 31
    with pytest.raises(RankingDataError, match="below 31"):
        RankingData.from_qid(np.eye(2), np.array([2**40, 0]), [1, 1])
    with pytest.raises(RankingDataError, match="below 31"):
        RankingData.from_qid(np.eye(2), np.array([3e9, 0]), [1, 1])
    with pytest.raises(RankingDataError, match="non-negative"):
        as_ranking_data(np.eye(2), np.array([-3, 0]), group=[2])
    d = RankingData.from_qid(np.eye(2), np.array([30, 0], dtype=np.uint8), [1, 1])
    assert d.y.tolist() == [30, 0] and d.y.dtype == np.int32
    assert RankingData.from_group(np.eye(2), np.array([True, False]), [2]).y.tolist() == [1, 0]


@pytest.mark.parametrize("call, match", [
    (lambda X, y: RankingData.from_qid(X, y, None), "qid is required"),
    (lambda X, y: RankingData.from_group(X, y, None), "group is required"),
    (lambda X, y: RankingData(X, y, None), "qptr must be a 1-d integer array"),
    (lambda X, y: as_ranking_data(X, y, qid=None, group=None), "ranking needs query ids"),
])
def test_missing_query_ids_never_make_one_query(call, match):
    """Every data-layer entry point refuses rows without query ids (issue 14.3)."""
    X, y = np.zeros((4, 2)), [0, 1, 1, 0]
    with pytest.raises((TypeError, RankingDataError), match=match):
        call(X, y)


@pytest.mark.parametrize("qid, match", [
    ([1, 1, np.nan, np.nan, 2, 2], r"qid\[2\] is nan"),
    (np.array([np.nan] * 6), r"qid\[0\] is nan"),
    ([1, 1, 2, 2, 3, None], r"qid\[5\] is None"),
    ([1.0, 1.0, 2.0, np.inf, 3.0, 3.0], r"qid\[3\] is inf"),
])
def test_missing_query_ids_are_refused_naming_qid(qid, match):
    """NaN query ids made one query per row, silently (NaN != NaN): now an error naming the parameter."""
    X, y = np.zeros((6, 2)), [0, 1, 1, 0, 2, 1]
    with pytest.raises(RankingDataError, match=match):
        RankingData.from_qid(X, y, qid)
    with pytest.raises(RankingDataError, match=match):
        as_ranking_data(X, y, qid=qid)


def test_fit_with_nan_query_ids_is_refused():
    from lrank.models.rankboost import RankBoost

    X, y = np.random.default_rng(0).normal(size=(6, 2)), [0, 1, 1, 0, 2, 1]
    with pytest.raises(RankingDataError, match="qid"):
        RankBoost(n_estimators=2).fit(X, y, qid=[1, 1, np.nan, np.nan, 2, 2])


def test_float_query_ids_that_are_numbers_still_work():
    d = RankingData.from_qid(np.zeros((4, 1)), [0, 1, 1, 0], [1.0, 1.0, 2.5, 2.5])
    assert d.group.tolist() == [2, 2] and d.qid.tolist() == [1.0, 2.5]
    big = RankingData.from_qid(np.zeros((4, 1)), [0, 1, 1, 0], [2**70, 2**70, 1, 1])  # beyond int64
    assert big.group.tolist() == [2, 2] and big.qid.tolist() == [2**70, 1]


@pytest.mark.parametrize("group, match", [
    ([2.5, 3.5], r"group\[0\] is 2.5; group holds the number of documents of each query"),
    ([2, 3], r"group sums to 5 documents, but X has 6 rows"),
    ([2, 5], r"group sums to 7 documents, but X has 6 rows"),
    ([2, 0, 4], r"group\[1\] is 0; every query needs at least one document"),
    ([2, -3, 7], r"group\[1\] is -3"),
    ([2, np.nan], r"group\[1\] is nan"),
    ([[3, 3]], "group must be 1-d"),
    (["3", "3"], "group must hold integers"),
])
def test_group_errors_speak_of_group(group, match):
    X, y = np.zeros((6, 2)), [0, 1, 1, 0, 2, 1]
    with pytest.raises(RankingDataError, match=match) as err:
        RankingData.from_group(X, y, group)
    assert "qptr" not in str(err.value)


def test_integral_float_group_counts_are_accepted():
    d = RankingData.from_group(np.zeros((6, 2)), [0, 1, 1, 0, 2, 1], np.array([2.0, 4.0]))
    assert d.group.tolist() == [2, 4]


# ------------------------------------------------------------------------------ the float32 cast
def test_float32_merging_distinct_values_warns_with_counts():
    """Unix-timestamp features: 869 distinct float64 values became 9 float32 values, silently."""
    from lrank.data.container import Float32CastWarning

    rng = np.random.default_rng(0)
    ts = 1.6e9 + np.arange(869, dtype=np.float64)
    X = np.column_stack([rng.normal(size=869), rng.permutation(ts)])
    with pytest.warns(Float32CastWarning, match=r"column 1: the float32 cast merges 869 distinct values into "
                                                 r"\d+ "):
        d = RankingData(X, np.zeros(869, dtype=int), [0, 869])
    assert np.unique(d.X[:, 1]).size < 869


def test_float32_checks_of_a_large_matrix():
    """Above `_MERGE_SAMPLE` rows: a merging column is found on the sampled rows and counted on all of them;
    one tiny value and one overflow are found wherever they are (not only on the sampled rows)."""
    from lrank.data.container import _MERGE_SAMPLE, Float32CastWarning, as_float32

    n = 3 * _MERGE_SAMPLE + 7
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=n), 1.6e9 + np.arange(n, dtype=np.float64), np.ones(n)])
    d32 = np.unique(X[:, 1].astype(np.float32)).size
    with pytest.warns(Float32CastWarning, match=rf"X column 1: the float32 cast merges {n} distinct values "
                                                 rf"into {d32} ") as rec:
        as_float32(X)
    assert len(rec) == 1
    X[:, 1] = 0.0
    X[n - 2, 2] = 1e-300  # not a sampled row (every 4th from 0)
    with pytest.warns(Float32CastWarning, match=rf"1 non-zero values .* X\[{n - 2}, 2\] = 1e-300"):
        as_float32(X)
    X[n - 2, 2] = -1e39
    with pytest.raises(RankingDataError, match=rf"X\[{n - 2}, 2\] = -1e\+39 overflows float32"):
        as_float32(X)


def test_float32_cast_of_exact_or_ordinary_values_is_silent():
    import warnings

    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RankingData(rng.normal(size=(5000, 4)), np.zeros(5000, dtype=int), [0, 5000])  # rounding, no merging
        RankingData(rng.normal(size=(50, 3)).astype(np.float32).astype(np.float64), np.zeros(50, dtype=int),
                    [0, 50])
        RankingData(np.arange(12).reshape(6, 2), [0] * 6, [0, 6])  # small integers are exact


def test_float32_flushing_tiny_values_to_zero_warns():
    from lrank.data.container import Float32CastWarning

    X = np.array([[1e-300], [2e-300], [1.0], [0.0]])
    with pytest.warns(Float32CastWarning, match=r"2 non-zero values .* become 0 .*X\[0, 0\] = 1e-300"):
        d = RankingData(X, [0, 1, 0, 1], [0, 4])
    assert d.X[0, 0] == 0.0


@pytest.mark.parametrize("value", [1e300, -1e39])
def test_float32_overflow_is_named_as_such(value):
    X = np.array([[0.0], [value], [1.0]])
    said = rf"X\[1, 0\] = {re.escape(f'{value:g}')} overflows float32"
    with pytest.raises(RankingDataError, match=said) as err:
        RankingData(X, [0, 1, 2], [0, 3])
    assert "is infinite" not in str(err.value)
    with pytest.raises(RankingDataError, match=r"X\[1, 0\] is infinite"):  # a real infinity stays so
        RankingData(np.array([[0.0], [np.inf], [1.0]]), [0, 1, 2], [0, 3])


def test_the_estimators_check_the_cast_too():
    """fit and predict on float64 arrays go through the same checks (the estimators' own float32 cast)."""
    from lrank.data.container import Float32CastWarning
    from lrank.models.rankboost import RankBoost

    ts = 1.6e9 + np.arange(40, dtype=np.float64)
    X = np.column_stack([np.arange(40.0), ts])
    y, qid = np.arange(40) % 3, np.repeat([1, 2, 3, 4], 10)
    with pytest.warns(Float32CastWarning, match="column 1"):
        m = RankBoost(n_estimators=2).fit(X, y, qid=qid)
    with pytest.warns(Float32CastWarning, match="column 1"):
        m.predict(X)
    with pytest.raises(ValueError, match="overflows float32"):
        m.predict(np.column_stack([np.arange(40.0), np.full(40, 1e300)]))


def test_from_qid_with_per_query_ids_names_both_lengths_and_doc_qid():
    X = np.zeros((5, 2))
    with pytest.raises(RankingDataError, match=r"X has 5 rows but qid has 2 entries.*doc_qid"):
        RankingData.from_qid(X, np.zeros(5, dtype=int), np.array([1, 2]))


def test_merge_counts_of_all_columns_at_once_match_the_column_by_column_count():
    """`_merged_columns` (one sort of every column) against the reference `merged` (one column at a time):
    NaN, all-NaN and all-equal columns, ties, values that merge (timestamps) or become 0, one and two rows."""
    from lrank.data.container import _merged_columns
    from tests.reference.data import merged

    rng = np.random.default_rng(5)
    for rows in (1, 2, 3, 17, 400):
        cols = [rng.normal(size=rows), np.full(rows, np.nan), np.full(rows, 3.25),
                rng.integers(0, 3, rows).astype(float), 1.6e9 + rng.integers(0, 50, rows),
                np.where(rng.random(rows) < 0.3, np.nan, 1.6e9 + rng.random(rows) * 100),
                rng.choice([0.0, 1e-300, 2e-300, 1.0], rows), rng.choice([-np.inf, np.inf, 0.5], rows)]
        A = np.column_stack(cols)
        d64, d32, pairs = _merged_columns(A)
        for j in range(A.shape[1]):
            e64, e32, pair = merged(A[:, j])
            assert (int(d64[j]), int(d32[j])) == (e64, e32), (rows, j)
            if pair is not None:
                assert (float(pairs[j, 0]), float(pairs[j, 1])) == pair, (rows, j)


def test_float32_checks_leave_the_input_alone():
    """The merge check sorts a copy: a Fortran-ordered float64 X (whose transpose is C-ordered) is not sorted
    in place."""
    from lrank.data.container import as_float32

    X = np.asfortranarray(np.random.default_rng(6).normal(size=(300, 4)))
    before = X.copy()
    assert np.array_equal(as_float32(X), before.astype(np.float32))
    assert np.array_equal(X, before)
