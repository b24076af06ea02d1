"""LightGBM-style lambdas (``truncation_level``, ``norm``): the kernel against the loop-for-loop transcription
of LightGBM's lambdarank in `tests/reference/lambdarank.py`."""

import numpy as np
import pytest

from lrank._kernels.lambdas import lambdamart_gradients
from tests.reference import lambdarank as ref

pytestmark = pytest.mark.kernel


def _queries(seed, sizes=(1, 7, 12, 2, 5, 9, 40, 33, 4, 61), ties=False):
    """Queries of the given sizes with 5 grades and normal scores; among them a one-document query, one
    with no relevant document, one of all-equal labels and one whose scores are all equal (LightGBM's
    ``best_score == worst_score``: no distance scaling)."""
    rng = np.random.default_rng(seed)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 5, n).astype(np.int32)
    s = rng.normal(size=n)
    if ties:
        s = np.round(s, 0)
    y[qptr[3]:qptr[4]] = 0   # no relevant document
    y[qptr[4]:qptr[5]] = 2   # all labels equal
    s[qptr[5]:qptr[6]] = 0.5  # all scores equal
    return y, qptr, s


def _ref(y, qptr, s, k, level, norm, sigma=1.0):
    """The reference for the kernel's ``(k, truncation_level, norm)``."""
    rows = level if level is not None else (k if k > 0 else None)
    return ref.lambdarank(y, qptr, s, truncation_level=rows, norm=norm, sigma=sigma,
                          ndcg_at=k if k > 0 else None)


CASES = [(0, 30, True), (0, 30, False), (0, 5, True), (10, None, True), (3, None, True), (0, None, True),
         (10, 30, True), (10, 4, False), (0, 1, True)]


@pytest.mark.parametrize("k,level,norm", CASES)
@pytest.mark.parametrize("ties", [False, True])
def test_kernel_matches_lightgbm_reference(k, level, norm, ties):
    """Every path (the top-k rows, queries within the cut, pair lists) against the reference, with ties in
    scores, one-document queries, all-equal labels, all-equal scores and no relevant document."""
    y, qptr, s = _queries(100 + k + (level or 0) + 7 * norm + 3 * ties, ties=ties)
    rlam, rw = _ref(y, qptr, s, k, level, norm)
    lam, w, _ = lambdamart_gradients(y, qptr, s, k=k, truncation_level=level, norm=norm)
    np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-14)
    plam, pw_doc, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=k, truncation_level=level, norm=norm,
                                                      with_pairs=True)
    np.testing.assert_allclose(plam, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(pw_doc, rw, rtol=1e-12, atol=1e-14)
    # the pair list carries the normalised pair weights: they add up to the documents' weights
    np.testing.assert_allclose(np.bincount(pa, pw, y.size) + np.bincount(pb, pw, y.size), rw, rtol=1e-12,
                               atol=1e-14)
    assert (y[pa] > y[pb]).all()
    for q in range(qptr.size - 1):
        assert abs(lam[qptr[q]:qptr[q + 1]].sum()) < 1e-12  # lambdas still cancel within a query
    assert lam[0] == 0 and w[0] == 0  # the one-document query


@pytest.mark.parametrize("k,level,norm", [(0, 30, True), (10, None, True), (0, 3, False)])
def test_threads_give_the_serial_bits(k, level, norm):
    y, qptr, s = _queries(7, sizes=(1, 30, 2, 57, 1, 12, 40, 3, 25, 9, 80, 31), ties=True)
    a = lambdamart_gradients(y, qptr, s, k=k, truncation_level=level, norm=norm)
    b = lambdamart_gradients(y, qptr, s, k=k, truncation_level=level, norm=norm, n_jobs=2)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_underflowing_query_normalised_pair_by_pair(n_jobs):
    """A query whose scores lie 1500 apart (its exponentials underflow: finished pair by pair) is normalised
    as the reference does, next to ordinary queries."""
    y, qptr, s = _queries(11, sizes=(8, 12, 1, 15, 9, 6, 20))
    far = slice(qptr[1], qptr[2])
    s[far] = np.linspace(0.0, -1500.0, qptr[2] - qptr[1])
    lam, w, _ = lambdamart_gradients(y, qptr, s, k=0, truncation_level=30, norm=True, n_jobs=n_jobs)
    rlam, rw = _ref(y, qptr, s, 0, 30, True)
    assert np.isfinite(lam).all() and np.isfinite(w).all() and np.any(lam[far] != 0)
    np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-12 * np.abs(rlam).max())
    np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-12 * np.abs(rw).max())


def test_normalisation_is_what_it_says():
    """On one query: without normalisation the lambdas are Burges' (the old NDCG@k ones when the cut is k);
    with it, on all-equal scores, they are those times ``log2(1 + S) / S`` with ``S = sum |lambda|`` of the
    plain pairs counted twice; and a truncation level of 1 keeps only the top document's pairs."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 4, 20).astype(np.int32)
    y[:2] = [0, 3]
    qptr = np.array([0, 20], dtype=np.int64)
    s = np.zeros(20)
    plain, wp, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=0, truncation_level=30, with_pairs=True)
    normed, wn, _ = lambdamart_gradients(y, qptr, s, k=0, truncation_level=30, norm=True)
    # S from the pairs: at equal scores rho = 1/2, so a pair's sigma dZ rho is twice its weight sigma^2 dZ / 4
    S = 2.0 * np.sum(2.0 * pw)
    f = np.log2(1.0 + S) / S
    np.testing.assert_allclose(normed, plain * f, rtol=1e-12)
    np.testing.assert_allclose(wn, wp * f, rtol=1e-12)
    top, _, (ta, tb, _) = lambdamart_gradients(y, qptr, s, k=0, truncation_level=1, with_pairs=True)
    assert ta.size == np.count_nonzero(y != y[0]) and np.all((ta == 0) | (tb == 0))  # rank 0 in every pair
    old, _, _ = lambdamart_gradients(y, qptr, s, k=10)
    same, _, _ = lambdamart_gradients(y, qptr, s, k=10, truncation_level=10, norm=False)
    assert old.tobytes() == same.tobytes()


def test_bad_parameters_are_named():
    y, qptr, s = _queries(3)
    for bad, kind in ((0, ValueError), (-3, ValueError), (True, TypeError), (2.5, TypeError)):
        with pytest.raises(kind, match="truncation_level"):
            lambdamart_gradients(y, qptr, s, k=0, truncation_level=bad)
    with pytest.raises(TypeError, match="norm"):
        lambdamart_gradients(y, qptr, s, norm="yes")


def _ranking_data():
    from lrank.data.generators import make_letor_like

    return make_letor_like(n_queries=12, docs_per_query=(5, 60), n_features=6, n_grades=4, random_state=3)


@pytest.mark.parametrize("kw,want", [
    ({}, dict(k=0, truncation_level=30, norm=True)),  # the defaults: LightGBM's lambdarank
    (dict(ndcg_at=10, lambdarank_truncation_level=None, lambdarank_norm=False), dict(k=10)),  # the papers'
    (dict(ndcg_at=5, lambdarank_truncation_level=8, lambdarank_norm=True), dict(k=5, truncation_level=8,
                                                                              norm=True)),
])
def test_lambdamart_hands_its_options_to_the_lambdas(kw, want):
    """LambdaMART's gradients are exactly the kernel's for its ``ndcg_at``, ``lambdarank_truncation_level``
    and ``lambdarank_norm``."""
    from lrank.models.gbrt import LambdaMART

    d = _ranking_data()
    raw = np.random.default_rng(0).normal(size=(d.n_docs, 1))
    (_, grad, hess, _), = LambdaMART(**kw)._derivatives(d, raw)
    lam, w, _ = lambdamart_gradients(d.y, d.qptr, raw[:, 0], **want)
    assert grad.tobytes() == (-lam).tobytes() and hess.tobytes() == w.tobytes()


def test_lambdamart_refuses_bad_lambda_options_by_name():
    from lrank.models.gbrt import LambdaMART

    d = _ranking_data()
    for bad in (dict(lambdarank_truncation_level=0), dict(lambdarank_truncation_level=True),
                dict(lambdarank_norm="yes"), dict(ndcg_at=0)):
        name = next(iter(bad))
        with pytest.raises((ValueError, TypeError), match=name):
            LambdaMART(n_estimators=1, **bad).fit(d)
    m = LambdaMART(n_estimators=2, ndcg_at=None, lambdarank_truncation_level=None).fit(d)  # the whole list
    assert np.isfinite(m.predict(d.X)).all()


# -- label_gain: LightGBM's table of label gains, CatBoost's linear gain ------------------------------------

@pytest.mark.parametrize("k,level,norm", CASES)
@pytest.mark.parametrize("label_gain", ["linear", [0.0, 0.5, 3.0, 3.0, 10.0]])
def test_label_gain_matches_lightgbm_reference(k, level, norm, label_gain):
    """LightGBM's ``label_gain`` (the reference takes the table as LightGBM does) on every path, ties in
    scores, one-document queries, all-equal labels and scores, no relevant document; threads too."""
    y, qptr, s = _queries(200 + k + (level or 0) + 7 * norm, ties=True)
    table = np.arange(5.0) if label_gain == "linear" else label_gain
    rlam, rw = ref.lambdarank(y, qptr, s, truncation_level=level if level is not None else (k or None),
                              norm=norm, ndcg_at=k if k > 0 else None, gains=table)
    for n_jobs in (1, 2):
        lam, w, _ = lambdamart_gradients(y, qptr, s, k=k, truncation_level=level, norm=norm, n_jobs=n_jobs,
                                         label_gain=label_gain)
        np.testing.assert_allclose(lam, rlam, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(w, rw, rtol=1e-12, atol=1e-14)
    plam, pwd, (pa, pb, pw) = lambdamart_gradients(y, qptr, s, k=k, truncation_level=level, norm=norm,
                                                   with_pairs=True, label_gain=label_gain)
    np.testing.assert_allclose(plam, rlam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(pwd, rw, rtol=1e-12, atol=1e-14)


def test_lambdamart_label_gain_fits_round_trips_and_is_refused_by_name(tmp_path):
    """``LambdaMART(label_gain=...)`` hands the table to the lambdas, fits and predicts; ``get_params``,
    ``set_params``, ``clone`` and model files keep it (a list; an old file without it loads as None); bad
    tables are refused naming ``label_gain``."""
    from sklearn.base import clone

    from lrank.models import load_model
    from lrank.models.gbrt import LambdaMART

    d = _ranking_data()
    raw = np.random.default_rng(0).normal(size=(d.n_docs, 1))
    for gain in ("linear", [0.0, 1.0, 4.0, 4.5]):
        (_, grad, hess, _), = LambdaMART(label_gain=gain)._derivatives(d, raw)
        lam, w, _ = lambdamart_gradients(d.y, d.qptr, raw[:, 0], k=0, truncation_level=30, norm=True,
                                         label_gain=gain)
        assert grad.tobytes() == (-lam).tobytes() and hess.tobytes() == w.tobytes()
    m = LambdaMART(n_estimators=3, label_gain="linear").fit(d)
    p = m.predict(d.X)
    assert np.isfinite(p).all()
    assert not np.array_equal(p, LambdaMART(n_estimators=3).fit(d).predict(d.X))  # 4 grades: gains differ
    assert m.get_params()["label_gain"] == "linear"
    c = clone(m).set_params(label_gain=[0.0, 1.0, 2.0, 3.0])
    assert c.get_params()["label_gain"] == [0.0, 1.0, 2.0, 3.0]
    assert clone(c).label_gain == [0.0, 1.0, 2.0, 3.0]
    assert LambdaMART().label_gain is None
    c.fit(d)
    assert c.predict(d.X).tobytes() == p.tobytes()  # the linear table is "linear"
    for gain in ("linear", [0.0, 1.0, 2.0, 3.0], np.array([0.0, 1.0, 2.0, 3.0])):
        fitted = LambdaMART(n_estimators=2, label_gain=gain).fit(d)
        path = fitted.save_model(tmp_path / "m.npz")
        back = load_model(path)
        assert np.array_equal(back.label_gain, gain) if not isinstance(gain, str) else back.label_gain == gain
        assert back.predict(d.X).tobytes() == fitted.predict(d.X).tobytes()
    import lrank.models.gbrt as G

    def no_binning(*args, **kwargs):
        raise AssertionError("binned before label_gain was checked")

    with pytest.MonkeyPatch.context() as mp:  # refused before the features are binned
        mp.setattr(G, "bin_features", no_binning)
        for bad in ([0.0, -1.0, 2.0, 3.0], [0.0, np.nan, 2.0, 3.0], [0.0, 2.0, 1.0, 3.0], [0.0, 1.0, 2.0],
                    "exp"):
            with pytest.raises((ValueError, TypeError), match="label_gain"):
                LambdaMART(n_estimators=1, label_gain=bad).fit(d)
