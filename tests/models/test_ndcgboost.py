"""NDCGBoost: kernels against the double loops of the NDCGBoost box, the classifier tree, the estimator."""

import numpy as np
import pytest

from lrank.data.container import RankingData
from lrank.models.ndcgboost import NDCGBoost, grow_tree, ndcgboost_AB, ndcgboost_gamma
from tests.reference.boostingtree import ndcgboost_AB as ref_AB
from tests.reference.boostingtree import ndcgboost_gamma as ref_gamma


def _random_queries(rng, nq=6):
    sizes = rng.integers(1, 9, size=nq)                   # includes one-document queries
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 3, size=n)
    y[qptr[0]:qptr[1]] = 0                                # a query without a relevant document
    if nq > 2:
        y[qptr[2]:qptr[3]] = 1                            # all-equal labels
    F = np.round(rng.normal(size=n), 1)                   # ties in scores
    g = 2.0 ** y - 1
    Z = np.array([np.sum(np.sort(g[a:b])[::-1] / np.log2(np.arange(2, b - a + 2)))
                  for a, b in zip(qptr[:-1], qptr[1:])])
    invZ = np.where(Z > 0, 1 / np.where(Z > 0, Z, 1), 0.0)
    return F, g, qptr, Z, invZ


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(12))
def test_gamma_and_AB_match_reference(seed):
    rng = np.random.default_rng(seed)
    F, g, qptr, Z, invZ = _random_queries(rng)
    got = ndcgboost_gamma(F, g, qptr, invZ)
    Zs = np.where(Z > 0, Z, 0.0)
    ref = ref_gamma(F, g, qptr, Zs)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-13)
    fx = rng.integers(0, 2, size=F.size).astype(float)
    A, B = ndcgboost_AB(F, g, qptr, invZ, fx)
    rA, rB = ref_AB(F, g, qptr, Zs, fx)
    assert A == pytest.approx(rA, rel=1e-10, abs=1e-14) and B == pytest.approx(rB, rel=1e-10, abs=1e-14)


def test_gamma_is_half_the_gradient_of_relaxed_expected_ndcg():
    rng = np.random.default_rng(7)
    F, g, qptr, Z, invZ = _random_queries(rng, nq=3)

    def relaxed(Fv):
        tot = 0.0
        for q in range(qptr.size - 1):
            a, b = qptr[q], qptr[q + 1]
            if invZ[q] == 0:
                continue
            for j in range(a, b):
                pib = 1 + sum(1 / (1 + np.exp(2 * (Fv[j] - Fv[k]))) for k in range(a, b) if k != j)
                tot += g[j] * invZ[q] / np.log(1 + pib)
        return tot

    gam = ndcgboost_gamma(F, g, qptr, invZ)
    eps = 1e-6
    for j in range(F.size):
        e = np.zeros(F.size)
        e[j] = eps
        num = (relaxed(F + e) - relaxed(F - e)) / (2 * eps)
        assert num == pytest.approx(2 * gam[j], abs=1e-6)


def test_gamma_sums_to_zero_per_query():
    rng = np.random.default_rng(3)
    F, g, qptr, Z, invZ = _random_queries(rng)
    gam = ndcgboost_gamma(F, g, qptr, invZ)
    for a, b in zip(qptr[:-1], qptr[1:]):
        assert abs(gam[a:b].sum()) < 1e-12


@pytest.mark.parametrize("seed", range(8))
def test_classifier_stump_is_the_best_stump(seed):
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.integers(0, 5, size=(n, 3)).astype(np.float32)
    X[rng.random((n, 3)) < 0.1] = np.nan
    from lrank.data.binning import bin_features

    bins = bin_features(X, threshold_strategy="all")
    s = rng.normal(size=n)
    tree, leaf = grow_tree(bins.codes, bins.thresholds, s, 2, None)
    best = -np.inf
    for f in range(3):
        u = np.where(np.isnan(X[:, f]), -np.inf, X[:, f]).astype(np.float64)
        for th in np.unique(u)[:-1]:
            L = s[u <= th].sum()
            R = s[u > th].sum()
            best = max(best, max(L, 0) + max(R, 0) - max(s.sum(), 0))
    got = (s * tree.predict(X)).sum() - max(s.sum(), 0)
    assert got == pytest.approx(best, abs=1e-12)
    assert np.array_equal(tree.predict(X), tree.value[leaf])
    # constrained to a feature: uses only it
    t2, _ = grow_tree(bins.codes, bins.thresholds, s, 3, (2, 1))
    splits = t2.feature[t2.left >= 0]
    assert set(splits) <= {1, 2}
    if splits.size:
        assert t2.feature[0] == 2


def _toy(seed=0, nq=8):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 12, size=nq)
    qid = np.repeat(np.arange(nq), sizes)
    X = rng.normal(size=(qid.size, 5)).astype(np.float32)
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=qid.size)), 0, 2).astype(int)
    return RankingData.from_qid(X, y, qid)


def test_ndcgboost_fits_and_is_deterministic():
    d = _toy()
    a = NDCGBoost(n_estimators=15, metric="mean_ndcg", random_state=0).fit(d)
    b = NDCGBoost(n_estimators=15, metric="mean_ndcg", random_state=0).fit(d)
    assert np.array_equal(a.predict(d), b.predict(d))
    h = a.history_
    assert h.index.name == "iteration" and list(h.columns) == ["alpha", "A", "B", "train_mean_ndcg"]
    assert h["train_mean_ndcg"].iloc[-1] > h["train_mean_ndcg"].iloc[0] - 1e-12 and (a.alphas_ >= 0).all()
    staged = list(a.staged_predict(d.X))
    assert np.allclose(staged[-1], a.predict(d.X))
    v = NDCGBoost(n_estimators=3, eval_metric="ndcg@5").fit(d, eval_set=d)
    assert v.history_["valid_ndcg@5"].notna().all()
    assert a.best_iteration_ is None and a.stop_reason_ == "n_estimators reached"


def test_ndcgboost_bad_input():
    d = _toy()
    with pytest.raises(ValueError, match="num_leaves"):
        NDCGBoost(num_leaves=1).fit(d)
    with pytest.raises(ValueError, match="eval_set"):
        NDCGBoost(n_estimators=2, early_stopping_rounds=1).fit(d)
    with pytest.raises(ValueError, match="discount"):
        NDCGBoost(discount="ln").fit(d)
    with pytest.raises(ValueError, match="zzz"):
        NDCGBoost(eval_metric="zzz").fit(d, eval_set=d)   # refused before the first iteration


def test_ab_sums_refuses_nan_outputs():
    """Step (c) sorts the classifier's outputs: a NaN there is an error naming ``fx`` and the row, not a
    silent order."""
    from lrank._kernels.ndcgboost import ab_sums, gamma_pairs

    qp = np.array([0, 3, 5])
    F, g, invZ = np.array([0.1, 0.4, -0.2, 0.3, 0.0]), np.array([1.0, 0.0, 3.0, 0.0, 1.0]), np.ones(2)
    _, beta, ex = gamma_pairs(F, g, qp, invZ)
    fx = np.array([1.0, -1.0, 1.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="fx .*NaN at row 3"):
        ab_sums(qp, invZ, F, fx, beta, ex)
    fx[3] = -1.0
    assert np.isfinite(ab_sums(qp, invZ, F, fx, beta, ex)).all()


def test_ndcgboost_early_stopping():
    d = _toy(1)
    va = _toy(2)
    full = NDCGBoost(n_estimators=40).fit(d, eval_set=va)
    v = full.history_["valid_mean_ndcg"].to_numpy()
    es = NDCGBoost(n_estimators=40, early_stopping_rounds=3).fit(d, eval_set=va)
    best = int(np.argmax(v)) + 1
    # stops 3 rounds after the first best, unless that is past the end
    assert es.best_iteration_ == int(np.argmax(v[:es.n_iter_])) + 1
    assert es.n_iter_ == min(40, es.best_iteration_ + 3) or es.n_iter_ == 40
    assert es.best_iteration_ <= best or es.n_iter_ < 40
    np.testing.assert_array_equal(es.predict(d.X), full.predict(d.X, num_iteration=es.best_iteration_))


def test_default_binning_is_deterministic_without_seed():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(6), 60)
    X = rng.normal(size=(qid.size, 3)).astype(np.float32)   # > 254 distinct values per feature
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 1).astype(int)
    d = RankingData.from_qid(X, y, qid)
    a = NDCGBoost(n_estimators=3).fit(d).predict(d)
    b = NDCGBoost(n_estimators=3).fit(d).predict(d)
    assert np.array_equal(a, b)


def test_kernels_private_behind_validating_functions():
    import ast
    import inspect

    import lrank._kernels.ndcgboost as K

    tree = ast.parse(inspect.getsource(K))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("lrank.") and not m.startswith("lrank._kernels")]
    jitted = [name for name, obj in vars(K).items() if hasattr(obj, "py_func")]
    assert jitted and all(name.startswith("_") for name in jitted), jitted
    K.warmup()
    F, g, qptr = np.zeros(3), np.ones(3), np.array([0, 3])
    with pytest.raises(ValueError, match="g"):
        K.gamma_pairs(F, g[:2], qptr, np.ones(1))
    with pytest.raises(ValueError, match="qptr"):
        K.gamma_pairs(F, g, np.array([0, 2]), np.ones(1))
    with pytest.raises(ValueError, match="invZ"):
        K.gamma_pairs(F, g, qptr, np.ones(2))


def test_step_alpha_is_a_quarter_log_of_A_over_B_and_improves_the_bound():
    """Step (c): alpha = 1/4 ln(A/B) from the reference A, B of the chosen classifier, and it minimises
    A e^{-2 alpha} + B e^{2 alpha} (a wrong constant in the step turns this red)."""
    from lrank.models.ndcgboost import NDCGBoostStep

    d = _toy(3)
    step = NDCGBoostStep(d, num_leaves=3)
    model = np.random.default_rng(0).normal(scale=0.1, size=d.n_docs)
    tree, new = step.step(model)
    fx = tree.predict(d.X) / tree.scale
    np.testing.assert_allclose(new, model + tree.scale * fx)
    g = 2.0 ** d.y - 1
    Z = np.array([np.sum(np.sort(g[a:b])[::-1] / np.log2(np.arange(2, b - a + 2)))
                  for a, b in zip(d.qptr[:-1], d.qptr[1:])])
    A, B = ref_AB(model, g, d.qptr, Z, fx)
    assert A > B > 0
    dd = step.smoothing * (A + B)                           # the documented smoothing of A and B
    assert tree.scale == pytest.approx(0.25 * np.log((A + dd) / (B + dd)), rel=1e-9)
    assert tree.scale == pytest.approx(0.25 * np.log(A / B), rel=1e-4)
    obj = lambda a: A * np.exp(-2 * a) + B * np.exp(2 * a)   # noqa: E731
    assert obj(tree.scale) < min(obj(tree.scale * 0.9), obj(tree.scale * 1.1))
    with pytest.raises(ValueError, match="zzz"):
        NDCGBoost(metric="zzz").boosting_step(d)


@pytest.mark.kernel
@pytest.mark.parametrize("seed", range(6))
def test_gamma_and_AB_match_reference_with_outputs_of_several_values(seed):
    """Step (c) for a classifier with outputs in {0, 0.5, 1} (ties between outputs count in neither sum)."""
    rng = np.random.default_rng(100 + seed)
    F, g, qptr, Z, invZ = _random_queries(rng, nq=8)
    fx = rng.integers(0, 3, size=F.size) / 2.0
    A, B = ndcgboost_AB(F, g, qptr, invZ, fx)
    rA, rB = ref_AB(F, g, qptr, np.where(Z > 0, Z, 0.0), fx)
    assert A == pytest.approx(rA, rel=1e-10, abs=1e-14) and B == pytest.approx(rB, rel=1e-10, abs=1e-14)


@pytest.mark.kernel
def test_far_apart_scores_take_one_exp_per_pair():
    """A query whose scores span 800 (exp(2 (F - F_max)) underflows) next to an ordinary one: the first goes
    through the one-exp-per-pair loop, the second through the per-document exponentials; both match the
    reference."""
    F = np.array([0.0, -400.0, -800.0, 3.0, 0.5, 0.1, -0.2, 0.3])
    y = np.array([1, 2, 0, 1, 2, 0, 1, 1])
    qptr = np.array([0, 4, 8], dtype=np.int64)
    g = 2.0 ** y - 1
    Z = np.array([np.sum(np.sort(g[a:b])[::-1] / np.log2(np.arange(2, b - a + 2)))
                  for a, b in zip(qptr[:-1], qptr[1:])])
    invZ = 1 / Z
    got = ndcgboost_gamma(F, g, qptr, invZ)
    np.testing.assert_allclose(got, ref_gamma(F, g, qptr, Z), rtol=1e-10, atol=1e-13)
    fx = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    A, B = ndcgboost_AB(F, g, qptr, invZ, fx)
    rA, rB = ref_AB(F, g, qptr, Z, fx)
    assert A == pytest.approx(rA, rel=1e-10, abs=1e-14) and B == pytest.approx(rB, rel=1e-10, abs=1e-14)


def _far_and_near():
    """A query whose scores are 400 apart (its exponentials underflow) and an ordinary one, with gains and
    ``invZ``; both queries hold a close pair with different outputs, so both add to A and B."""
    F = np.array([0.0, -400.0, -800.0, 0.3, 3.0, 0.5, 0.1, -0.2, 0.3])
    y = np.array([1, 2, 0, 2, 1, 2, 0, 1, 1])
    g = 2.0 ** y - 1
    fx = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    return F, g, fx, (0, 4), (4, 9)


@pytest.mark.kernel
@pytest.mark.parametrize("far_first", [True, False])
def test_underflowing_query_is_finished_by_its_own_kernels(far_first, monkeypatch):
    """`_gamma_kernel` only marks a query whose exponentials underflow and `_ab_kernel` stops at it;
    `_gamma_exact` and `_ab_exact` (kernels of their own, so a fit compiles them only when it meets such a
    query) then compute it: a call holding it, an ordinary query and a one-document query gives each
    query's gamma, beta and ex of a call on that query alone, bit for bit, and A, B their sums (added in
    one pass, so up to the last bits); the delegated kernels run only when a query needs them."""
    import lrank._kernels.ndcgboost as K

    F0, g0, fx0, far, near = _far_and_near()
    parts = [far, near, (0, 1)] if far_first else [near, (0, 1), far]   # (0, 1): a one-document query
    idx = np.concatenate([np.arange(a, b) for a, b in parts])
    F, g, fx = F0[idx], g0[idx], fx0[idx]
    qptr = np.concatenate([[0], np.cumsum([b - a for a, b in parts])]).astype(np.int64)
    invZ = np.full(len(parts), 0.3)
    calls = []
    for name in ("_gamma_exact", "_ab_exact"):
        kernel = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, _k=kernel, _n=name: calls.append((_n, a)) or _k(*a))
    gamma, beta, ex = K.gamma_pairs(F, g, qptr, invZ)
    A, B = K.ab_sums(qptr, invZ, F, fx, beta, ex)
    under = [q for q, part in enumerate(parts) if part == far]
    assert [n for n, _ in calls] == ["_gamma_exact", "_ab_exact"]
    assert calls[0][1][4].tolist() == under and calls[1][1][4] == under[0]
    sums = []
    for q in range(len(parts)):
        lo, hi = qptr[q], qptr[q + 1]
        one = np.array([0, hi - lo], dtype=np.int64)
        del calls[:]
        alone = K.gamma_pairs(F[lo:hi], g[lo:hi], one, invZ[q:q + 1])
        sums.append(K.ab_sums(one, invZ[q:q + 1], F[lo:hi], fx[lo:hi], alone[1], alone[2]))
        assert len(calls) == (2 if q in under else 0)
        for got, ref in zip((gamma, beta, ex), alone):
            assert got[lo:hi].tobytes() == ref.tobytes(), q
    assert np.any(gamma[qptr[under[0]]:qptr[under[0] + 1]] != 0.0)
    assert min(abs(x) for part in (far, near) for x in sums[parts.index(part)]) > 1e-3
    assert A == pytest.approx(sum(a for a, _ in sums), rel=1e-14)
    assert B == pytest.approx(sum(b for _, b in sums), rel=1e-14)


def test_underflow_kernels_compile_only_when_a_query_needs_them(tmp_path):
    """In a fresh process with an empty numba cache, gamma_pairs and ab_sums on ordinary queries compile
    neither `_gamma_exact` nor `_ab_exact` (issue 15.5: ~0.2 s and more of every first NDCGBoost fit);
    a query whose exponentials underflow compiles both."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import numba

    if numba.config.DISABLE_JIT:
        pytest.skip("NUMBA_DISABLE_JIT: nothing compiles")
    code = """
import numpy as np
import lrank._kernels.ndcgboost as K
qptr, invZ = np.array([0, 3, 5]), np.ones(2)
g, fx = np.array([3.0, 0.0, 1.0, 1.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0, 1.0])
def run(F):
    _, beta, ex = K.gamma_pairs(F, g, qptr, invZ)
    K.ab_sums(qptr, invZ, F, fx, beta, ex)
    return [len(k.signatures) for k in (K._gamma_kernel, K._ab_kernel, K._gamma_exact, K._ab_exact)]
print(run(np.array([0.1, 0.0, -0.2, 0.3, 0.4])), run(np.array([0.1, 0.0, -0.2, 0.3, -400.0])))
"""
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("] [") == ["[1, 1, 0, 0", "1, 1, 1, 1]\n"], out.stdout


@pytest.mark.kernel
def test_gamma_and_AB_match_reference_on_longer_queries():
    """Queries of up to 45 documents (the vectorised sweeps' main loops, not only their remainders), with
    ties in scores, a one-document query, a query of all-equal labels and one without a relevant one."""
    rng = np.random.default_rng(11)
    sizes = np.array([1, 45, 17, 30, 2, 23])
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 3, size=n)
    y[qptr[2]:qptr[3]] = 1
    y[qptr[4]:qptr[5]] = 0
    F = np.round(rng.normal(size=n), 1)
    g = 2.0 ** y - 1
    Z = np.array([np.sum(np.sort(g[a:b])[::-1] / np.log2(np.arange(2, b - a + 2)))
                  for a, b in zip(qptr[:-1], qptr[1:])])
    invZ = np.where(Z > 0, 1 / np.where(Z > 0, Z, 1), 0.0)
    np.testing.assert_allclose(ndcgboost_gamma(F, g, qptr, invZ), ref_gamma(F, g, qptr, Z),
                               rtol=1e-10, atol=1e-13)
    fx = rng.integers(0, 2, size=n).astype(float)
    A, B = ndcgboost_AB(F, g, qptr, invZ, fx)
    rA, rB = ref_AB(F, g, qptr, Z, fx)
    assert A == pytest.approx(rA, rel=1e-10, abs=1e-14) and B == pytest.approx(rB, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_classifier_trees_are_the_oracles_bit_for_bit(seed):
    """Step (b)'s trees, constrained stumps (the column-major codes of one feature) and unconstrained
    three-leaf trees, against the node-by-node NumPy oracle (``tests/reference/tree_grower.py``: each
    node's ``S`` by ``numpy.sum``): tied, missing, all-missing and constant features, sums of either sign
    (leaves of 0 and 1, and no valid split); and the NDCGBoost step through it."""
    from lrank.data.binning import bin_features
    from tests.reference import tree_grower as ref

    rng = np.random.default_rng(seed)
    n = 60
    X = rng.integers(0, 6, size=(n, 6)).astype(np.float32)
    X[:, 1] = rng.normal(size=n)
    X[rng.random((n, 6)) < 0.15] = np.nan
    X[:, 4] = np.nan
    X[:, 5] = 2.0
    bins = bin_features(X, threshold_strategy="quantile")
    nb = bins.n_bins
    for s in (rng.normal(size=n), np.abs(rng.normal(size=n)), -np.abs(rng.normal(size=n)), np.zeros(n)):
        for L, cons in [(2, (f,)) for f in range(X.shape[1])] + [(3, None), (3, (1, 0))]:
            t, leaf = grow_tree(bins.codes, bins.thresholds, s, L, cons)
            want = ref.grow(bins.codes, s, None, num_leaves=L, criterion="classify", min_data=1, min_hess=0.0,
                            constraint=cons, n_bins=nb)
            for a in ("feature", "bin", "left", "right", "value", "gain"):
                assert getattr(t, a).tobytes() == want[a].tobytes(), (cons, a)
            assert leaf.tobytes() == want["leaf_of"].tobytes()
            assert np.array_equal(t.predict(X), t.value[leaf])
    d = _toy(seed)
    step = NDCGBoost().boosting_step(d)
    model = rng.normal(size=d.n_docs)
    for f in range(d.n_features):
        h, new = step.step(model, (f,))
        gamma = step.reweight(model)[0]
        want = ref.grow(step.codes, gamma, None, num_leaves=2, criterion="classify", min_data=1, min_hess=0.0,
                        constraint=(f,), n_bins=np.array([t.size + 2 for t in step.thresholds]))
        assert h.value.tobytes() == want["value"].tobytes()
        assert new.tobytes() == (model + h.scale * want["value"][want["leaf_of"]]).tobytes()
        assert np.array_equal(h.predict(d.X), h.scale * h.value[h.apply(d.X)])


@pytest.mark.parametrize("path", ["general", "stump"])
def test_split_choices_do_not_hang_on_the_last_bits(path):
    """Gains equal in exact arithmetic are ties won by the lowest feature / bin, and a gain of rounding size
    is none: weights perturbed by an ulp (another CPU's rounding) grow the same tree (notebook 03's chess
    trees once parted on a gain of 1.2e-16 on one CPU and 7e-17 on another). "stump": a constrained stump
    (the column-major codes of its feature), "general": an unconstrained tree (the row-major codes)."""
    from lrank.data.binning import bin_features

    X = np.array([[0, 0], [1, 1], [2, 2], [3, 3]], dtype=np.float32)    # two features that split alike
    bins = bin_features(X, threshold_strategy="all")
    base = np.array([1.0, -1.0, 1.0, -1.0])                             # bins 0 and 2 tie within a feature
    trees = []
    for bump in (0.0, 1e-15, -1e-15):
        for i in range(4):
            s = base.copy()
            s[i] += bump
            constraint = (1,) if path == "stump" else None
            tree, leaf = grow_tree(bins.codes, bins.thresholds, s, 2, constraint)
            trees.append((str(tree.feature.tolist()), str(tree.threshold.tolist()), str(leaf.tolist())))
    assert len(set(trees)) == 1, set(trees)
    assert trees[0][0].startswith("[1," if path == "stump" else "[0,")
    # all weights positive: every split's gain is S_L + S_R - S, zero up to rounding: no split
    pos = np.array([0.1, 0.7, 0.2, 0.3])
    for constraint in ((0, 0, 0), (1, 1, 1), None):
        tree, _ = grow_tree(bins.codes, bins.thresholds, pos, 4, constraint)
        assert tree.feature.tolist() == [-1], constraint


@pytest.mark.kernel
def test_gamma_pairs_with_a_kept_workspace_is_bit_for_bit_the_same():
    """`gamma_pairs` with the caller's scratch (`gamma_workspace`, reused across calls with whatever the
    last call left in it, and a larger one) returns the bits of a fresh allocation: random queries with
    one-document queries, ties, all-equal labels and a query without a relevant document, then a far-apart
    query (the underflow kernel); the step keeps one, and its fit is the same as with fresh scratch."""
    import lrank._kernels.ndcgboost as K
    from lrank.models.ndcgboost import NDCGBoostStep

    rng = np.random.default_rng(7)
    kept = None
    for seed in range(8):
        F, g, qptr, Z, invZ = _random_queries(np.random.default_rng(seed), nq=7)
        if seed == 7:
            F[qptr[4]:qptr[5]] = np.linspace(0.0, -900.0, qptr[5] - qptr[4])   # underflows
        if kept is None or kept.size < K.gamma_workspace(qptr).size:
            kept = K.gamma_workspace(qptr)
            kept[:] = rng.normal(size=kept.size)                                 # stale contents
        big = np.full(K.gamma_workspace(qptr).size + 5, np.nan)
        ref = K.gamma_pairs(F, g, qptr, invZ)
        for work in (kept, big):
            got = K.gamma_pairs(F, g, qptr, invZ, work)
            for a, b in zip(got, ref):
                assert a.tobytes() == b.tobytes(), seed
    d = _toy(4)
    step = NDCGBoostStep(d, num_leaves=3)
    assert step._work.size == int(np.diff(d.qptr).max()) ** 2
    model = np.random.default_rng(1).normal(scale=0.2, size=d.n_docs)
    fresh = K.gamma_pairs(model, step.g, step.qptr, step.invZ)
    for _ in range(2):                                                           # the kept scratch, twice
        assert all(a.tobytes() == b.tobytes() for a, b in zip(step.reweight(model)[:3], fresh))


def test_gamma_pairs_refuses_a_bad_workspace():
    """A workspace too small, of another dtype, not contiguous or read-only is refused, naming ``work`` and
    the size it needs (no silent write past its end)."""
    import lrank._kernels.ndcgboost as K

    F, g, qptr, _, invZ = _random_queries(np.random.default_rng(3), nq=5)
    need = int(np.diff(qptr).max()) ** 2
    ro = np.empty(need)
    ro.flags.writeable = False
    for bad in (np.empty(need - 1), np.empty(need, dtype=np.float32), np.empty(2 * need)[::2], ro,
                np.empty((need, 1)), [0.0] * need):
        with pytest.raises(ValueError, match=f"work must .* at least {need} entries"):
            K.gamma_pairs(F, g, qptr, invZ, bad)
    K.gamma_pairs(F, g, qptr, invZ, np.empty(need))
