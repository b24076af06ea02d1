"""Tree split choices that do not depend on the CPU's last bits (lrank._kernels.splitting: near-ties
within TIE_RTOL go to the first candidate): a feature whose gain exceeds an earlier one's by a few units in
the last place (another CPU's rounding of the same sums) does not win."""

import numpy as np
import pytest

from lrank._kernels import splitting as sk
from tests.reference import trees as ref

pytestmark = pytest.mark.kernel
EPS = np.finfo(np.float64).eps


def _two_alike(seed, scale, C=3, nb=8):
    """A flat histogram of two features with the same bins, feature 1's gradients scaled by ``scale``."""
    rng = np.random.default_rng(seed)
    h = np.zeros((nb, C))
    h[:, 0] = rng.normal(size=nb)
    h[:, 1] = rng.uniform(1.0, 3.0, nb)
    if C == 3:
        h[:, 2] = rng.integers(1, 6, nb)
    h2 = h.copy()
    h2[:, 0] *= scale
    hist = np.ascontiguousarray(np.vstack([h, h2]))
    off = np.array([0, nb, 2 * nb], dtype=np.int64)
    tot = np.array([h[:, 0].sum(), h[:, 1].sum(), h[:, 2].sum() if C == 3 else 0.0, 0.0])
    return hist, off, tot


def _search(hist, off, feats, crit, tot, parallel=False):
    """The engine's scan of one node (node score 0.5, h_unit 0): serial, or its parallel twin."""
    G, H, N = tot[:3]
    if parallel:
        n = feats.size
        return sk._scan_parallel(hist, off, feats, crit, 1.0, 0.0, G, H, N, 0.0, 0.5, 0.0, None, None, 0.0,
                                 np.empty(n), np.empty(n, dtype=np.int64), np.empty((n, 4, 8)), 0.0)
    return sk._scan_fast(hist, off, feats, crit, 1.0, 0.0, G, H, N, 0.5, 0.0, np.empty((4, 8)), 0.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("crit", [0, 2])
@pytest.mark.parametrize("parallel", [False, True])
def test_split_near_tie_keeps_the_first_feature(seed, crit, parallel):
    both = np.arange(2, dtype=np.int64)
    tried = 0
    for scale in (1 + 4 * EPS, 1 - 4 * EPS, 1 + 1e-12, 1 - 1e-12):
        hist, off, tot = _two_alike(seed, scale)
        g0 = _search(hist, off, both[:1], crit, tot)[0]
        g1 = _search(hist, off, both[1:], crit, tot)[0]
        got = _search(hist, off, both, crit, tot, parallel)
        assert got[1] == 0, (scale, g0, g1)  # feature 1 is at best better in the last bits: 0 is kept
        assert ref.histogram_split_scan(hist, off, crit, 1.0, 0.0, tot, 0.5, 0.0)[1:] == got[1:]
        tried += g1 > g0  # a case where the strict comparison took feature 1
    assert tried >= 1
    for scale in (1.001, 0.999):  # a real difference still wins
        hist, off, tot = _two_alike(seed, scale)
        if _search(hist, off, both[1:], crit, tot)[0] > _search(hist, off, both[:1], crit, tot)[0] + 1e-6:
            assert _search(hist, off, both, crit, tot, parallel)[1] == 1


def test_beats():
    assert sk._beats(1.0, -np.inf, np.inf)
    assert not sk._beats(np.nan, -np.inf, 0.0)
    assert not sk._beats(1.0 + 4 * EPS, 1.0, 2.0)
    assert sk._beats(1.0 + 1e-9, 1.0, 2.0)
