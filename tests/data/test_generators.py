"""Synthetic generators: determinism, shapes, label ranges, missingness, provenance; Prop. 1's lattice."""

from fractions import Fraction

import numpy as np
import pytest

from lrank.data import RankingData
from lrank.data.generators import (
    ML100K_RATING_SHARES,
    PairFeedback,
    make_bipartite,
    make_collaborative_filtering,
    make_letor_like,
    subset_lattice,
)


def _same(a: RankingData, b: RankingData) -> bool:
    return (
        a.X.tobytes() == b.X.tobytes()
        and a.y.tobytes() == b.y.tobytes()
        and a.qptr.tobytes() == b.qptr.tobytes()
        and a.provenance == b.provenance
    )


# ----------------------------------------------------------------------------------- make_letor_like
def test_letor_like_deterministic_and_seed_sensitive():
    a = make_letor_like(n_queries=20, missing_rate=0.1, random_state=3)
    b = make_letor_like(n_queries=20, missing_rate=0.1, random_state=3)
    c = make_letor_like(n_queries=20, missing_rate=0.1, random_state=4)
    assert _same(a, b)
    assert not _same(a, c)


def test_letor_like_shapes_labels_provenance():
    d = make_letor_like(n_queries=30, docs_per_query=(5, 9), n_features=12, n_grades=5, random_state=0)
    assert isinstance(d, RankingData)
    assert d.n_queries == 30 and d.n_features == 12
    assert ((d.group >= 5) & (d.group <= 9)).all()
    assert d.y.min() >= 0 and d.y.max() <= 4
    assert np.isfinite(d.X).all()
    p = d.provenance
    assert p["generator"] == "make_letor_like" and p["random_state"] == 0
    assert p["params"]["n_grades"] == 5 and p["params"]["docs_per_query"] == (5, 9)
    assert len(p["informative_features"]) == 9  # round(0.75 * 12)


def test_letor_like_fixed_query_size_and_grades_skewed():
    d = make_letor_like(n_queries=200, docs_per_query=50, n_features=5, n_grades=3, random_state=1)
    assert (d.group == 50).all()
    share = np.bincount(d.y, minlength=3) / d.n_docs
    # prior shares 4/7, 2/7, 1/7 (proportional to 2^-k)
    np.testing.assert_allclose(share, [4 / 7, 2 / 7, 1 / 7], atol=0.03)


def test_letor_like_missing_rate():
    d = make_letor_like(n_queries=50, docs_per_query=40, n_features=20, missing_rate=0.3, random_state=2)
    assert abs(np.isnan(d.X).mean() - 0.3) < 0.02


def test_letor_like_informative_features_carry_signal():
    d = make_letor_like(n_queries=100, docs_per_query=30, n_features=10, noise=0.5, random_state=5)
    inf = set(d.provenance["informative_features"])
    corr = [abs(np.corrcoef(d.X[:, j], d.y)[0, 1]) for j in range(d.n_features)]
    assert min(corr[j] for j in inf) > max(corr[j] for j in range(10) if j not in inf)


@pytest.mark.parametrize(
    "kwargs",
    [dict(n_grades=1), dict(missing_rate=1.0), dict(noise=-1), dict(docs_per_query=(5, 2)),
     dict(docs_per_query=0), dict(n_informative=100)],
)
def test_letor_like_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        make_letor_like(n_queries=3, n_features=5, **kwargs)


def test_generator_rejects_generator_objects():
    with pytest.raises(TypeError, match="integer seed"):
        make_letor_like(random_state=np.random.default_rng(0))


# ------------------------------------------------------------------------ make_collaborative_filtering
def test_cf_deterministic():
    a = make_collaborative_filtering(n_users=60, n_movies=80, density=0.2, random_state=7)
    b = make_collaborative_filtering(n_users=60, n_movies=80, density=0.2, random_state=7)
    assert a.tobytes() == b.tobytes()


def test_cf_movielens_shape():
    R, prov = make_collaborative_filtering(random_state=0, return_provenance=True)
    assert R.shape == (943, 1682) and R.dtype == np.float64
    obs = ~np.isnan(R)
    vals = R[obs]
    assert set(np.unique(vals)) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert abs(obs.mean() - 0.063) < 0.003  # density of ML-100K: 100,000 / (943 * 1682)
    assert obs.sum(axis=1).min() >= 20  # ML-100K keeps users with >= 20 ratings
    shares = np.bincount(vals.astype(int), minlength=6)[1:] / vals.size
    np.testing.assert_allclose(shares, ML100K_RATING_SHARES, atol=0.005)
    # popularity skew: the most rated movie has far more ratings than the median one
    per_movie = obs.sum(axis=0)
    assert per_movie.max() > 10 * max(np.median(per_movie), 1)
    # a few hundred users with >= 100 ratings (the paper's MovieLens had 367 such tasks)
    assert 250 <= (obs.sum(axis=1) >= 100).sum() <= 450
    assert prov["generator"] == "make_collaborative_filtering" and prov["random_state"] == 0


def test_cf_bad_parameters():
    with pytest.raises(ValueError):
        make_collaborative_filtering(density=0.0)
    with pytest.raises(ValueError):
        make_collaborative_filtering(n_movies=10, min_ratings_per_user=11)


# --------------------------------------------------------------------------------- make_bipartite
def test_bipartite():
    d = make_bipartite(n_queries=4, n_good=(2, 3), n_bad=6, n_features=6, random_state=0)
    assert set(np.unique(d.y)) == {0, 1}
    for q in range(d.n_queries):
        yq = d.y[d.qptr[q] : d.qptr[q + 1]]
        assert 2 <= yq.sum() <= 3 and (yq == 0).sum() == 6
    assert _same(d, make_bipartite(n_queries=4, n_good=(2, 3), n_bad=6, n_features=6, random_state=0))
    assert d.provenance["generator"] == "make_bipartite"
    for bad in ({"n_good": 0}, {"n_bad": (0, 2)}):  # the error names the parameter given
        name = next(iter(bad))
        with pytest.raises(ValueError, match=f"^{name}"):
            make_bipartite(n_queries=2, n_features=3, random_state=0, **{"n_good": 1, "n_bad": 2, **bad})
    inf = d.provenance["informative_features"]
    assert len(inf) == 3


# ---------------------------------------------------------------------------------- subset_lattice
def test_subset_lattice_structure():
    s = subset_lattice()
    assert isinstance(s, PairFeedback)
    assert s.X.shape == (8, 3)
    assert s.names[0] == "{}" and s.names[-1] == "{a,b,c}"
    assert len(s.hi) == 19  # 3*1 + 3*3 + 1*7 strict inclusions
    np.testing.assert_allclose(s.weight, 1 / 19)
    assert s.weight.sum() == pytest.approx(1.0)
    # hi is a strict superset of lo: indicators dominate and differ
    assert (s.X[s.hi] >= s.X[s.lo]).all() and (s.X[s.hi] != s.X[s.lo]).any(axis=1).all()
    assert len({(h, l) for h, l in zip(s.hi, s.lo)}) == 19


def _rloss_counts(s: PairFeedback, sets: set[str]):
    h = np.array([name in sets for name in s.names], dtype=float)
    d = h[s.hi] - h[s.lo]
    return int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum())


def test_subset_lattice_prop1_counts_and_r1():
    """RankBoost+ App. A, proof of Prop. 1: h1 orders 3 pairs right, 1 wrong, ties 15; R1(h1) = 16/19."""
    s = subset_lattice()
    right, wrong, tied = _rloss_counts(s, {"{a,b}"})
    assert (right, wrong, tied) == (3, 1, 15)
    assert Fraction(wrong + tied, 19) == Fraction(16, 19)  # paper: R1(h1) = 16/19 (Eq. 3)
    right, wrong, tied = _rloss_counts(s, {"{}", "{a,c}", "{a,b,c}"})
    assert (right, wrong, tied) == (7, 5, 7)
    assert Fraction(wrong + tied, 19) == Fraction(12, 19)  # paper: R1(h2) = 12/19
