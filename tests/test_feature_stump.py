"""`lrank._kernels.feature_stump` (BoostingTree's one-feature LambdaMART and NDCGBoost stumps) against
plain NumPy references, bit for bit, on random inputs with ties, missing values (code 0), all-zero
lambdas (a query whose labels are all equal), tiny sets and a constant hessian."""

from __future__ import annotations

import numpy as np
import pytest

from lrank._kernels.feature_stump import (
    _classifier_split,
    _stump_root,
    _stump_split,
    classifier_split,
    stump_root,
    stump_split,
)
from tests.reference.boostingtree import classifier_split as numpy_classifier_split
from tests.reference.boostingtree import se_stump

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


@pytest.mark.parametrize("tol", [0.0, 1e-10, 0.05])
@pytest.mark.parametrize("seed", range(60))
def test_classifier_kernel_is_the_numpy_stump_bit_for_bit(seed, tol):
    col, _, lam, _, nb, _ = _case(seed)
    s = lam - 0.05 * (seed % 3)                                    # node sums of either sign, zeros, ties
    j, gain = _classifier_split(col, nb, s, float(s.sum()), tol, np.empty((nb, 2)))
    rj, rgain = numpy_classifier_split(col, nb, s, tol)
    assert j == rj and np.array_equal(gain, rgain, equal_nan=True)


def test_classifier_near_ties_go_to_the_lowest_bin_whatever_the_last_bits():
    # bins 0 and 2 give gains equal in exact arithmetic; 1e-15 stands for another CPU's rounding
    col = np.array([0, 1, 2, 3], dtype=np.uint8)
    for eps in (0.0, 1e-15, -1e-15):
        s = np.array([1.0, -1.0, 1.0 + eps, -1.0])
        S = float(s.sum())
        j, _ = classifier_split(col, 4, s, S, tol=1e-10)
        assert j == 0, eps
    s = np.array([1.0, -1.0, 1.0 + 1e-15, -1.0])
    assert classifier_split(col, 4, s, float(s.sum()))[0] == 2        # tol 0: the last bits decide
    with pytest.raises(ValueError, match="tol must be"):
        classifier_split(col, 4, s, float(s.sum()), tol=-1.0)


# ------------------------------------------------------------------- the validating functions
def _bits(x):
    """The bytes of a result (arrays, floats, ints and bools), so that equal means bit for bit."""
    if isinstance(x, tuple):
        return tuple(_bits(v) for v in x)
    return np.asarray(x).tobytes() + str(np.asarray(x).dtype).encode()


def _split_args(seed=3, same=False):
    """Valid `stump_split` arguments (as a dict) on `_case(seed)`, the root from the kernel; the scratch
    holds garbage (NaN), as it may."""
    col, col0, lam, hess, nb, nb0 = _case(seed)
    n = lam.size
    tot0 = np.empty((nb0, 3))
    G, H, N, _ = _stump_root(col0, lam, hess, tot0)
    return dict(col=col0 if same else col, nb=nb0 if same else nb, col0=col0, lam=lam, hess=hess, tot0=tot0,
                G=G, H=H, N=N, same=same, md=0.5, min_hess=0.0, hist=np.full((max(nb, nb0), 3), np.nan),
                hs=np.full((nb0, 3), np.nan), leaf_of=np.full(n, -7, dtype=np.int64), tot=np.zeros((3, 4)))


def _copy(kw):
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in kw.items()}


@pytest.mark.parametrize("seed", range(30))
def test_validating_functions_are_the_kernels_bit_for_bit(seed):
    col, col0, lam, hess, nb, nb0 = _case(seed)
    tot0 = np.full((nb0, 3), np.nan)
    want = _stump_root(col0, lam, hess, tot0)
    got = stump_root(col0, lam, hess, nb0)
    assert _bits(got[1:]) == _bits(want) and _bits(got[0]) == _bits(tot0)
    for same in (False, True):
        for md, min_hess in ((0.5, 0.0), (4.5, 0.0), (0.5, 1.0)):
            kw = _split_args(seed, same)
            kw.update(md=md, min_hess=min_hess)
            a, b = _copy(kw), _copy(kw)
            want = _stump_split(*a.values())
            got = stump_split(**b)
            assert _bits(got) == _bits(want)
            for k in ("hist", "hs", "leaf_of", "tot", "tot0"):          # the same writes, the same bits
                assert a[k].tobytes() == b[k].tobytes(), k
    s = lam - 0.05 * (seed % 3)
    assert _bits(classifier_split(col, nb, s, float(s.sum()), 1e-10)) == \
        _bits(_classifier_split(col, nb, s, float(s.sum()), 1e-10, np.empty((nb, 2))))


def test_read_only_inputs_are_converted_like_the_house_helpers():
    """Codes and weights are made C-contiguous float64 / codes (`_codes`, `_vector`: no copy when they
    already are); the result is the kernel's on the converted arrays."""
    col, col0, lam, hess, nb, nb0 = _case(4)
    n = lam.size
    wide = np.zeros((n, 2), dtype=col.dtype)
    wide[:, 0] = col0                                                # a non-contiguous column
    lam32 = lam.astype(np.float32)
    root = stump_root(wide[:, 0], lam32, list(hess), nb0)
    tot0 = np.empty((nb0, 3))
    assert _bits(root[1:]) == _bits(_stump_root(col0, lam32.astype(np.float64), hess, tot0))
    assert root[0].tobytes() == tot0.tobytes()
    kw = _split_args(4)
    a, b = _copy(kw), _copy(kw)
    b["col0"], b["lam"], b["hess"] = wide[:, 0], lam[::-1].copy()[::-1], hess.astype(np.float32)
    a["hess"] = hess.astype(np.float32).astype(np.float64)
    assert _bits(stump_split(**b)) == _bits(_stump_split(*a.values()))
    assert a["leaf_of"].tobytes() == b["leaf_of"].tobytes() and a["tot"].tobytes() == b["tot"].tobytes()
    s = lam[::-1]                                                    # a negative stride
    assert _bits(classifier_split(col, nb, s, float(s.sum()))) == \
        _bits(_classifier_split(col, nb, s.copy(), float(s.sum()), 0.0, np.empty((nb, 2))))


def _strided(a):
    """``a``'s values in a non-contiguous view (every other element of a twice-as-long array)."""
    b = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)[::2]
    b[...] = a
    return b


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def test_stump_root_refuses_bad_input():
    col, col0, lam, hess, nb, nb0 = _case(3)
    n = lam.size
    bad = [
        (dict(col0=col0.astype(np.int64)), ValueError, "col0"),              # dtype
        (dict(col0=col0.astype(np.float64)), ValueError, "col0"),
        (dict(col0=col0.reshape(1, -1)), ValueError, "col0"),               # shape
        (dict(lam=lam[:-1]), ValueError, "lam"),
        (dict(lam=lam.reshape(1, -1)), ValueError, "lam"),
        (dict(lam=lam.astype(np.complex128)), TypeError, "lam"),
        (dict(lam=np.array(["x"] * n)), TypeError, "lam"),
        (dict(hess=np.append(hess, 1.0)), ValueError, "hess"),
        (dict(hess=hess.astype(object)), TypeError, "hess"),
        (dict(n_bins0=0), ValueError, "n_bins0"),
    ]
    for change, err, name in bad:
        kw = dict(col0=col0, lam=lam, hess=hess, n_bins0=nb0) | change
        with pytest.raises(err, match=rf"^{name} "):
            stump_root(**kw)


def test_stump_split_refuses_bad_input_and_workspaces():
    kw0 = _split_args(3)
    n, nb, nb0 = kw0["lam"].size, kw0["nb"], kw0["tot0"].shape[0]
    bad = [
        # the read-only inputs: dtype, shape
        (dict(col=kw0["col"].astype(np.float32)), ValueError, "col"),
        (dict(col=kw0["col"][:-1]), ValueError, "col0"),                     # col0 must match col
        (dict(col0=kw0["col0"].astype(np.int32)), ValueError, "col0"),
        (dict(col0=kw0["col0"][:-1]), ValueError, "col0"),
        (dict(lam=kw0["lam"][1:]), ValueError, "lam"),
        (dict(lam=kw0["lam"].astype(np.complex64)), TypeError, "lam"),
        (dict(hess=kw0["hess"].reshape(-1, 1)), ValueError, "hess"),
        (dict(tot0=kw0["tot0"][:, :2]), ValueError, "tot0"),
        (dict(tot0=kw0["tot0"].ravel()), ValueError, "tot0"),
        (dict(tot0=np.empty((0, 3))), ValueError, "tot0"),
        # nb in range
        (dict(nb=0), ValueError, "nb"),
        (dict(nb=nb0 + 1, col=kw0["col0"], same=True), ValueError, "nb"),
        (dict(nb=kw0["hist"].shape[0] + 1), ValueError, "hist"),             # more bins than hist's rows
        # the workspaces: dtype, shape, contiguity, writeable, type
        (dict(hist=kw0["hist"].astype(np.float32)), ValueError, "hist"),
        (dict(hist=np.empty((nb - 1, 3))), ValueError, "hist"),
        (dict(hist=np.empty((nb, 4))), ValueError, "hist"),
        (dict(hist=np.empty(3 * nb)), ValueError, "hist"),
        (dict(hist=_strided(kw0["hist"])), ValueError, "hist"),
        (dict(hist=_read_only(kw0["hist"])), ValueError, "hist"),
        (dict(hist=kw0["hist"].tolist()), TypeError, "hist"),
        (dict(hs=np.empty((nb0 + 1, 3))), ValueError, "hs"),
        (dict(hs=np.empty((nb0, 3), order="F")), ValueError, "hs"),
        (dict(hs=np.empty((nb0, 3), dtype=np.float32)), ValueError, "hs"),
        (dict(leaf_of=np.empty(n, dtype=np.int32)), ValueError, "leaf_of"),
        (dict(leaf_of=np.empty(n + 1, dtype=np.int64)), ValueError, "leaf_of"),
        (dict(leaf_of=_strided(kw0["leaf_of"])), ValueError, "leaf_of"),
        (dict(tot=np.zeros((3, 3))), ValueError, "tot"),
        (dict(tot=np.zeros((3, 4), order="F")), ValueError, "tot"),
        (dict(tot=np.zeros((3, 4), dtype=np.float32)), ValueError, "tot"),
    ]
    for change, err, name in bad:
        kw = _copy(kw0) | change
        with pytest.raises(err, match=rf"^{name} "):
            stump_split(**kw)
    with pytest.raises(ValueError, match=r"^hist must be .*got float32 of shape"):   # expected and actual
        stump_split(**(_copy(kw0) | dict(hist=kw0["hist"].astype(np.float32))))
    with pytest.raises(ValueError, match=rf"^leaf_of must have shape \({n},\), got \({n + 1},\)"):
        stump_split(**(_copy(kw0) | dict(leaf_of=np.empty(n + 1, dtype=np.int64))))
    with pytest.raises(ValueError, match=r"not C-contiguous"):
        stump_split(**(_copy(kw0) | dict(leaf_of=_strided(kw0["leaf_of"]))))


def test_classifier_split_refuses_bad_input():
    col, _, lam, _, nb, _ = _case(3)
    bad = [
        (dict(col=col.astype(np.int16)), ValueError, "col"),
        (dict(col=np.stack([col, col])), ValueError, "col"),
        (dict(s=lam[:-1]), ValueError, "s"),
        (dict(s=np.stack([lam, lam])), ValueError, "s"),
        (dict(s=lam.astype(np.complex128)), TypeError, "s"),
        (dict(nb=0), ValueError, "nb"),
    ]
    for change, err, name in bad:
        kw = dict(col=col, nb=nb, s=lam, S=float(lam.sum())) | change
        with pytest.raises(err, match=rf"^{name} "):
            classifier_split(**kw)


def test_the_models_report_bad_weights_by_name():
    """The checks moved from `LambdaMARTStep._stump_root` and `ndcgboost._classifier_stump` into the
    validating functions: wrong-length weights still fail with a message naming them."""
    from lrank.data.generators import make_letor_like
    from lrank.models.boostingtree import LambdaMARTBase
    from lrank.models.ndcgboost import NDCGBoost

    d = make_letor_like(n_queries=4, docs_per_query=(5, 9), n_features=3, random_state=0)
    step = LambdaMARTBase().boosting_step(d)
    model = np.zeros(d.n_docs)
    lam, w, pairs = step.reweight(model)
    with pytest.raises(ValueError, match=rf"^lam must have shape \({d.n_docs},\)"):
        step.step(model, (1,), weights=(lam[:-1], w, pairs))
    with pytest.raises(ValueError, match=rf"^hess must have shape \({d.n_docs},\)"):
        step.step(model, (1,), weights=(lam, np.append(w, 1.0), pairs))
    nstep = NDCGBoost(num_leaves=2).boosting_step(d)
    gamma, beta, ex = nstep.reweight(model)
    with pytest.raises(ValueError, match=rf"^s must have shape \({d.n_docs},\)"):
        nstep.step(model, (1,), weights=(gamma[:-1], beta, ex))
