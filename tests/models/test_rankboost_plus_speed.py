"""The RankBoost+ speed-up (issue 15 / issue 10's 300 rounds) keeps every model.

``tests/reference/rankboost_plus_runs.npz`` holds runs of the code before the speed-up (Rb-d, Rb-c,
efficient and optimal Rb+, the eps- = 0 modes, positive alphas, query pair weighting; MovieLens- and
MSLR-shaped tasks; the protocol's `_fold_run` on every fold of one task).

Bits are compared only where they are the same on every CPU: the chosen stumps (feature, threshold),
the rounds' kinds, the number of independent rankers and of rounds (choices made with the tie rule of
`lrank._kernels.stumps.TIE_TOL`). The weights and pair statistics (eps+, eps-, eps0, alpha, alpha', Z)
and the scores come from numpy's SIMD exp / log and numba's fused multiply-adds, whose last bits differ
between CPUs: measured over emulated CPUs (numpy without AVX-512, without AVX2; numba for a generic
x86-64) they moved by at most 3.4e-14 relative and 7.1e-15 absolute, so they agree to ``MODEL_RTOL =
1e-12`` relative and ``MODEL_ATOL = 1e-13``. The training losses (E1, E2, R1, R2, the Theorem bound),
accumulated in one pass per round, moved by up to 7.4e-12 relative on a Zen 5 machine (numpy 2.4 with
AVX-512 there too): they agree to ``CLOSE_RTOL = 1e-9`` (relative, or absolute near 0).
"""

import numpy as np
import pytest

from lrank._kernels.pair_stumps import (
    _add_log_terms,
    _add_log_terms_many,
    _margin_losses,
    candidate_eps,
    candidate_plan,
    pair_min_codes,
    scale_pairs,
    stump_eps,
    stump_outcomes,
)
from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.models.rankboost_plus import log_weighted_sum_exp
from lrank.weak.pair_patterns import distinct_stumps
from tests.reference import rankboost_plus_runs as runs
from tests.reference.rankboost_plus import stump_eps_loop

REF = np.load(runs.FIXTURE)


@pytest.fixture(scope="module")
def data():
    return runs.tasks()


MODEL_RTOL, MODEL_ATOL = 1e-12, 1e-13  # weights, pair statistics, scores (module docstring)
CLOSE_RTOL = 1e-9  # the training losses
#: the choices: the same bits on every CPU
DISCRETE = ["feature", "threshold", "n_independent"]


@pytest.mark.parametrize("name", list(runs.CONFIGS))
def test_fit_matches_the_recorded_runs(name, data):
    m = runs.fit(name, data)
    h = m.history_
    assert m.n_iter_ == int(REF[f"{name}/n_iter"])
    assert set(DISCRETE) < set(runs.EXACT)
    for col in runs.EXACT:
        got, want = h[col].to_numpy(dtype=np.float64), REF[f"{name}/{col}"]
        if col in DISCRETE:
            np.testing.assert_array_equal(got, want, err_msg=col)
        else:
            np.testing.assert_allclose(got, want, rtol=MODEL_RTOL, atol=MODEL_ATOL, err_msg=col)
    assert list(h["kind"]) == list(REF[f"{name}/kind"])
    for col in runs.CLOSE:
        np.testing.assert_allclose(h[col].to_numpy(dtype=np.float64), REF[f"{name}/{col}"], rtol=CLOSE_RTOL,
                                   atol=CLOSE_RTOL, err_msg=col)
    task = runs.CONFIGS[name][0]
    np.testing.assert_allclose(m.predict(data[task].X), REF[f"{name}/predict"], rtol=MODEL_RTOL,
                               atol=MODEL_ATOL)


def test_fold_runs_match_the_recorded_runs(data):
    for i, r in enumerate(runs.fold_runs(data)):
        assert r["n_iter"] == int(REF[f"fold{i}/n_iter"])
        np.testing.assert_allclose(r["valid"], REF[f"fold{i}/valid"], rtol=MODEL_RTOL, atol=MODEL_ATOL)
        np.testing.assert_allclose(r["test"], REF[f"fold{i}/test"], rtol=MODEL_RTOL, atol=MODEL_ATOL)
        for key in ("train_E1", "train_log_E2"):
            np.testing.assert_allclose(r[key], REF[f"fold{i}/{key}"], rtol=CLOSE_RTOL, atol=CLOSE_RTOL)


# ------------------------------------------------------------------------------------------ kernels
def _task(seed, n=40, F=6, nan=0.25, levels=6, labels=3, equal=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, F)).astype(np.float32)
    X[rng.random((n, F)) < nan] = np.nan
    X[:, 1] = X[:, 0]  # a duplicate feature
    X[:, 2] = 7.0  # constant: every stump ties
    X[:, 3] = rng.normal(size=n)  # many thresholds, no missing value
    y = np.zeros(n, dtype=np.int64) if equal else rng.integers(0, labels, size=n)
    return RankingData(X, y, np.array([0, n]))


def _setup(seed, max_thresholds=254, **kw):
    d = _task(seed, **kw)
    cp = d.pairs()
    rng = np.random.default_rng(seed)
    D = rng.random(cp.hi.size)
    D[rng.random(cp.hi.size) < 0.1] = 0.0  # zero-weight pairs (Rb-d's limiting distribution)
    D /= max(D.sum(), 1.0)
    bins = bin_features(d.X, max_thresholds=max_thresholds, random_state=seed)
    minc = pair_min_codes(bins.codes, cp.hi, cp.lo)
    cands = distinct_stumps(bins.codes, bins.n_thresholds, cp.hi, cp.lo, random_state=seed, minc=minc)
    return bins, cp, D, minc, cands


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_thresholds", [2, 254, 255])
def test_candidate_eps_is_the_full_table_at_the_candidates(seed, max_thresholds):
    bins, cp, D, minc, cands = _setup(seed, max_thresholds)
    nb = bins.max_bins
    plan = candidate_plan(bins.codes, minc, cands.feature, cands.bin, nb)
    got = candidate_eps(plan, cp.hi, cp.lo, D)
    full = stump_eps(bins.codes, minc, cp.hi, cp.lo, D, nb)
    loop = stump_eps_loop(bins.codes, cp.hi, cp.lo, D, nb)
    for g, f, w in zip(got, full, loop):
        np.testing.assert_array_equal(g, f[cands.feature, cands.bin])  # the same bits
        np.testing.assert_allclose(g, w[cands.feature, cands.bin], atol=1e-12)  # the NumPy reference
    # every stump a candidate (including all-tie ones and j = 0): the whole table
    F = bins.codes.shape[1]
    cf, cj = np.divmod(np.arange(F * (nb - 1)), nb - 1)
    allp = candidate_plan(bins.codes, minc, cf, cj, nb)
    for g, f in zip(candidate_eps(allp, cp.hi, cp.lo, D), full):
        np.testing.assert_array_equal(g, f.ravel())


@pytest.mark.kernel
def test_candidate_eps_edge_cases():
    # all labels equal: no pair, every statistic 0
    bins, cp, D, minc, cands = _setup(0, equal=True)
    assert cp.hi.size == 0
    cf = np.array([0, 3], dtype=np.int64)
    cj = np.array([0, 1], dtype=np.int64)
    plan = candidate_plan(bins.codes, minc, cf, cj, bins.max_bins)
    for g in candidate_eps(plan, cp.hi, cp.lo, D):
        np.testing.assert_array_equal(g, 0.0)
    # one document: no pair either
    X = np.array([[np.nan, 1.0]], dtype=np.float32)
    b1 = bin_features(X)
    e = np.zeros(0, dtype=np.int64)
    plan = candidate_plan(b1.codes, pair_min_codes(b1.codes, e, e), e, e, b1.max_bins)
    assert all(g.size == 0 for g in candidate_eps(plan, e, e, np.zeros(0)))
    # bad input is named
    with pytest.raises(ValueError, match="candidates"):
        candidate_plan(bins.codes, minc, np.array([99]), np.array([0]), bins.max_bins)
    with pytest.raises(ValueError, match="uint8 or uint16"):
        candidate_plan(bins.codes.astype(np.int32), minc, cf, cj, bins.max_bins)


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(3))
def test_round_kernels_match_numpy(seed):
    bins, cp, D, minc, cands = _setup(seed)
    codes = bins.codes
    for f, j in zip(cands.feature[:20], cands.bin[:20]):
        h = (codes[:, f] > j).astype(np.int8)
        u_ref = h[cp.hi] - h[cp.lo]
        u, em, e0, ep = stump_outcomes(codes, cp.hi, cp.lo, int(f), int(j), D)
        np.testing.assert_array_equal(u, u_ref)
        assert (em, e0, ep) == tuple(np.bincount(u_ref + 1, weights=D, minlength=3))  # same order, same bits
        # Eq. 10 reweighting (the caller normalises)
        Dk, Dr = D.copy(), D.copy()
        w = {1: 0.7, -1: 1.6, 0: 1.1}
        Dr *= np.where(u_ref > 0, w[1], np.where(u_ref < 0, w[-1], w[0]))
        Z = scale_pairs(Dk, u, w[1], w[-1], w[0])
        assert np.isclose(Z, Dr.sum(), rtol=1e-14)
        np.testing.assert_array_equal(Dk, Dr)
        # margins and the train losses
        margins = np.random.default_rng(seed).normal(size=u.size).round(1)  # exact ties at 0
        ref = margins + 0.3 * u
        w1 = np.full(u.size, 1.0 / max(u.size, 1))
        r1, r2 = _margin_losses(margins, u, 0.3, w1)
        np.testing.assert_array_equal(margins, ref)
        assert np.isclose(r1, np.sum(w1 * (ref <= 0)), rtol=1e-13)
        assert np.isclose(r2, np.sum(w1 * ((ref < 0) + 0.5 * (ref == 0))), rtol=1e-13)
        # log terms of Eq. 25
        lt = np.zeros(u.size)
        table = np.array([0.4, 0.05, -0.4])
        _add_log_terms(lt, u, table)
        np.testing.assert_array_equal(lt, table[u_ref + 1])
        tables = np.array([[0.3, 0.01, -0.3], [-0.2, 0.02, 0.2]])
        ref_lt = lt + tables[0][u_ref + 1]
        ref_lt += tables[1][u_ref + 1]
        _add_log_terms_many(lt, np.stack([u, u]), tables)
        np.testing.assert_array_equal(lt, ref_lt)  # member by member, in order



def test_incremental_losses_rescale_and_fall_back():
    """E1 / E2 by one multiplication per pair: ln of the normaliser is the growth of ln sum w1 exp(x);
    a distribution that vanishes in float64 is reported (None) so that the caller recomputes it."""
    from lrank.models.rankboost_plus import _distribution, _log_rescale

    rng = np.random.default_rng(1)
    w1 = rng.random(30)
    w1 /= w1.sum()
    x = rng.normal(size=30)
    u = rng.integers(-1, 2, size=30).astype(np.int8)
    q, ls = _distribution(x, w1)
    assert np.isclose(ls, log_weighted_sum_exp(x, w1), rtol=1e-14) and np.isclose(q.sum(), 1.0)
    lz = _log_rescale(q, u, -0.7, 0.7, 0.1)
    x2 = x + np.array([0.7, 0.1, -0.7])[u + 1]
    assert np.isclose(ls + lz, log_weighted_sum_exp(x2, w1), rtol=1e-13)
    np.testing.assert_allclose(q, _distribution(x2, w1)[0], rtol=1e-12)
    big = _log_rescale(q, u, -800.0, 800.0, 0.0)  # shifted: no overflow
    assert np.isclose(ls + lz + big, log_weighted_sum_exp(x2 + np.array([800.0, 0.0, -800.0])[u + 1], w1),
                      rtol=1e-12)
    only_ties = np.zeros(4, dtype=np.int8)
    assert _log_rescale(np.full(4, 0.25), only_ties, 900.0, 900.0, -900.0) is None  # all mass underflows
