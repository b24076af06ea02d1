"""`lrank._kernels.feature_stump` (BoostingTree's one-feature LambdaMART and NDCGBoost stumps) against
plain NumPy references, bit for bit, on random inputs with ties, missing values (code 0), all-zero
lambdas (a query whose labels are all equal), tiny sets and a constant hessian."""

from __future__ import annotations

import numpy as np
import pytest

from lrank._kernels.feature_stump import _classifier_split, _stump_root, _stump_split
from tests.reference.boostingtree import classifier_split, se_stump

pytestmark = pytest.mark.kernel


def _case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 3, 17, 200, 1000]))
    nb, nb0 = int(rng.integers(2, 40)), int(rng.integers(2, 40))
    col = rng.integers(0, nb, size=n).astype(np.uint8)
    col0 = rng.integers(0, nb0, size=n).astype(np.uint8)
    col[rng.random(n) < 0.2] = 0                                   # missing values: code 0
    lam = np.round(rng.normal(size=n), 1)                          # ties in the sums
    lam[: n // 4] = 0.0                                            # documents of an all-equal query
    hess = np.abs(rng.normal(size=n)) * (rng.random(n) < 0.9)
    if seed % 5 == 0:
        lam[:] = 0.0
    return col, col0, lam, hess, nb, nb0


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("md, min_hess", [(0.5, 0.0), (4.5, 0.0), (0.5, 1.0)])
def test_kernel_is_the_numpy_stump_bit_for_bit(seed, md, min_hess):
    col, col0, lam, hess, nb, nb0 = _case(seed)
    n = lam.size
    tot0 = np.empty((nb0, 3))
    G, H, N, usable = _stump_root(col0, lam, hess, tot0)
    assert usable == bool(np.all(np.isfinite(lam)) and not (hess[0] > 0 and np.all(hess == hess[0])))
    for f0 in (False, True):
        c, b = (col0, nb0) if f0 else (col, nb)
        leaf_of, tot = np.zeros(n, dtype=np.int64), np.zeros((3, 4))
        j, gain, mid = _stump_split(c, b, col0, lam, hess, tot0, G, H, N, f0, md, min_hess,
                                   np.empty((max(nb, nb0), 3)), np.empty((nb0, 3)), leaf_of, tot)
        rj, rgain, rleaf, rch = se_stump(c, col0, lam, hess, b, nb0, md, min_hess)
        assert j == rj
        if j < 0:
            continue
        assert np.array_equal(gain, rgain, equal_nan=True)
        if rleaf is None:
            assert not gain > 0.0
            continue
        assert np.array_equal(leaf_of, rleaf) and mid == int(np.sum(rleaf == 1))
        for child in (1, 2):
            assert tuple(tot[child, :3]) == rch[child - 1], child


def test_constant_or_non_finite_weights_are_left_to_the_tree():
    col0 = np.array([0, 1, 1, 2], dtype=np.uint8)
    tot0 = np.empty((3, 3))
    lam = np.array([0.5, -0.5, 0.2, -0.2])
    assert not _stump_root(col0, lam, np.full(4, 0.25), tot0)[3]
    assert not _stump_root(col0, np.array([0.5, np.nan, 0.2, -0.2]), np.ones(4) * [1, 2, 3, 4], tot0)[3]
    G, H, N, ok = _stump_root(col0, lam, np.array([1.0, 2.0, 3.0, 4.0]), tot0)
    assert ok and (G, H, N) == (0.0, 10.0, 4.0)


@pytest.mark.parametrize("seed", range(60))
def test_classifier_kernel_is_the_numpy_stump_bit_for_bit(seed):
    col, _, lam, _, nb, _ = _case(seed)
    s = lam - 0.05 * (seed % 3)                                    # node sums of either sign, zeros, ties
    j, gain = _classifier_split(col, nb, s, float(s.sum()), np.empty((nb, 2)))
    rj, rgain = classifier_split(col, nb, s)
    assert j == rj and np.array_equal(gain, rgain, equal_nan=True)
