"""The validating functions of lrank._kernels.stumps: bad input names the parameter; good input gives
exactly the kernel's result."""

import numpy as np
import pytest

from lrank._kernels import stumps as K


def _problem(seed=0, n=12, m=20, F=3, n_bins=6):
    rng = np.random.default_rng(seed)
    hi = np.sort(rng.integers(0, n, m)).astype(np.int64)
    lo = ((hi + 1 + rng.integers(0, n - 1, m)) % n).astype(np.int64)
    D = rng.random(m)
    D /= D.sum()
    h = (rng.random(n) > 0.5).astype(np.float64)
    H = rng.standard_normal(n)
    codes_t = rng.integers(0, n_bins, (F, n)).astype(np.uint8)
    nt = np.full(F, n_bins - 2, dtype=np.int64)
    return rng, hi, lo, D, h, H, codes_t, nt, n_bins


def test_wrappers_return_the_kernels_results():
    rng, hi, lo, D, h, H, codes_t, nt, n_bins = _problem()
    n = h.size
    hist = K.potential_histogram_dense(codes_t, rng.standard_normal(n), n_bins)
    cum = rng.standard_normal(hist.shape + (2,))
    assert K.scan_third(hist, nt, -1) == K._scan_third(hist, nt, -1)
    assert K.scan_third_cum(hist, nt, 0, cum) == K._scan_third_cum(hist, nt, 0, cum)
    pi = rng.standard_normal(n)
    order, n_above, buf = K.sorted_order_inputs(codes_t, n_bins)
    assert K.search_sorted_order(order, n_above, pi, nt, -1, buf) == \
        K._search_sorted_order(order, n_above, pi, nt, -1, buf.copy())
    assert K.ranking_loss(hi, lo, D, H) == K._ranking_loss(hi, lo, D, H)
    assert K.ranking_losses(hi, lo, D, H) == K._ranking_losses(hi, lo, D, H)
    diff = h[lo] - h[hi]
    assert K.z_of_alpha(diff, D, 0.3) == K._z_of_alpha(diff, D, 0.3)
    assert K.streaming_pass(codes_t) == K._streaming_pass(codes_t)
    D_a, D_b = D.copy(), D.copy()
    assert K.update_pairs(hi, lo, D_a, h, 0.3) == K._update_pairs(hi, lo, D_b, h, 0.3)
    assert np.array_equal(D_a, D_b)
    D_a, D_b, pi_a, pi_b = D.copy(), D.copy(), np.zeros(n), np.zeros(n)
    assert K.round_pairs(hi, lo, D_a, h, 0.3, D, H, pi_a) == K._round_pairs(hi, lo, D_b, h, 0.3, D, H, pi_b)
    assert np.array_equal(D_a, D_b) and np.array_equal(pi_a, pi_b)
    X = rng.standard_normal((n, 3)).astype(np.float32)
    X[0, 1] = np.nan
    args = (np.array([1, 0], dtype=np.int64), np.array([0.1, -0.2]), np.array([0.0, 1.0]),
            np.array([0.5, 2.0]))
    out = K.stump_scores(X, *args, np.zeros(n))
    assert np.array_equal(out, K._stump_scores(X, *args, np.zeros(n)))


def test_wrappers_name_the_bad_parameter():
    rng, hi, lo, D, h, H, codes_t, nt, n_bins = _problem()
    n = h.size
    hist = np.zeros((3, n_bins))
    order, n_above = K.sorted_order_inputs(codes_t, n_bins)[:2]
    f1, i1, z = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros
    cases = [
        ("n_thresholds", lambda: K.scan_third(hist, nt[:2], -1)),
        ("qmode", lambda: K.scan_third(hist, nt, 2)),
        ("cum", lambda: K.scan_third_cum(hist, nt, -1, np.zeros((3, n_bins, 3)))),
        ("buf", lambda: K.search_sorted_order(order, n_above, z(n), nt, -1, z((8, n), dtype=np.float32))),
        ("hi, lo and D", lambda: K.ranking_loss(hi, lo[:-1], D, H)),
        ("hi, lo and D", lambda: K.ranking_losses(hi, lo, D[:-1], H)),
        ("diff and w", lambda: K.z_of_alpha(h[:3], D, 0.1)),
        ("codes_t", lambda: K.streaming_pass(codes_t.astype(np.float64))),
        ("D", lambda: K.update_pairs(hi, lo, D.astype(np.float32), h, 0.1)),
        ("pi", lambda: K.round_pairs(hi, lo, D.copy(), h, 0.1, D, H, np.zeros(n, dtype=np.float32))),
        ("h, H and pi", lambda: K.round_pairs(hi, lo, D.copy(), h, 0.1, D, H[:-1], np.zeros(n))),
        ("hi, lo, D and D1", lambda: K.round_pairs(hi, lo, D.copy(), h, 0.1, D[:-1], H, np.zeros(n))),
        ("X", lambda: K.stump_scores(z((n, 2), dtype=np.int64), i1, f1, f1, f1, z(n))),
        ("feature, theta, qdef and alpha", lambda: K.stump_scores(z((n, 2)), i1, z(2), f1, f1, z(n))),
        ("out", lambda: K.stump_scores(z((n, 2)), i1, f1, f1, f1, z(n - 1))),
    ]
    for name, call in cases:
        with pytest.raises(ValueError, match=name):
            call()


def _potentials_bipartite_reference(v, side, c, doc_query):
    """pi(x) = s(x) c_q v(x) (RankBoost Eq. 8 for bipartite feedback), zero outside the feedback."""
    return np.where(side != 0, side * c[doc_query] * v, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_potentials_bipartite_agrees_with_numpy(seed):
    """Random queries (one-document queries among them), documents outside the feedback (side 0), a query
    whose documents are all on one side (all-equal labels) and a zero query mass."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, 8)
    doc_query = np.repeat(np.arange(sizes.size), sizes).astype(np.int64)
    side = rng.integers(-1, 2, doc_query.size).astype(np.int64)
    side[doc_query == 0] = 1                                    # one query: every document on one side
    v = rng.random(doc_query.size)
    c = rng.random(sizes.size)
    c[1] = 0.0
    got = K.potentials_bipartite(v, side, c, doc_query)
    np.testing.assert_array_equal(got, _potentials_bipartite_reference(v, side, c, doc_query))
    assert got.dtype == np.float64 and (got[side == 0] == 0).all()
    with pytest.raises(ValueError, match="one length"):
        K.potentials_bipartite(v[:-1], side, c, doc_query)
