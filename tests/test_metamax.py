"""METAMAX hull selection (BoostingTree Eq. (1), Fig. 2) against brute force over c."""

import numpy as np
import pytest

from lrank.metamax import c_interval, h_exp_sqrt, hull_select, metamax_select
from tests.reference.boostingtree import select_brute, select_grid


def test_fig2_like_example():
    # x = h(n), y = f^: the top point (max y) and the rightmost point are always corners
    x = np.array([0.9, 0.6, 0.4, 0.2, 0.6])
    y = np.array([0.3, 0.55, 0.6, 0.62, 0.5])
    sel = hull_select(x, y)
    assert sel.tolist() == select_brute(x, y).tolist()
    assert sel[0] and sel[3] and not sel[4]


@pytest.mark.parametrize("seed", range(40))
def test_hull_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    n = rng.integers(0, 8, size=m)                       # repeated n: same x, coincident points
    y = rng.integers(0, 9, size=m) / 8.0                 # ties in f^
    x = h_exp_sqrt(n, float(rng.integers(1, 50)))
    got = hull_select(x, y)
    assert got.tolist() == select_brute(x, y).tolist()
    t = float(rng.integers(1, 50))
    assert metamax_select(n, y, t).tolist() == select_brute(h_exp_sqrt(n, t), y).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_hull_matches_grid_over_c_on_generic_points(seed):
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(2, 15))
    x = rng.uniform(0.05, 1.0, size=m)
    y = rng.uniform(0, 1, size=m)
    got = hull_select(x, y)
    assert got.tolist() == select_brute(x, y).tolist()
    grid = np.concatenate([np.geomspace(1e-4, 1e4, 4000)])
    assert (select_grid(x, y, grid) <= got).all()     # a grid can only miss narrow intervals


def test_collinear_points_are_not_corners():
    x = np.array([0.25, 0.5, 0.75])
    y = np.array([0.75, 0.5, 0.25])                     # on one line: the middle one is no corner
    sel = hull_select(x, y)
    assert sel.tolist() == select_brute(x, y).tolist() == [True, False, True]


def test_coincident_points_share_the_answer_and_virtual_point():
    x = np.array([0.5, 0.5, 0.3])
    y = np.array([0.75, 0.75, 0.75])
    assert hull_select(x, y).tolist() == [True, True, False]
    assert hull_select(x, y, virtual=False).tolist() == [True, True, False]


def test_c_interval_agrees():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.1, 1, 12)
    y = rng.uniform(0, 1, 12)
    sel = hull_select(x, y)
    for i in range(12):
        lo, hi = c_interval(x, y, i)
        assert (lo < hi) == sel[i]


def test_bad_input():
    with pytest.raises(ValueError):
        hull_select(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        hull_select(np.array([1.0]), np.array([np.nan]))
    assert hull_select(np.array([]), np.array([])).size == 0
