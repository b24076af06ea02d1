"""Rb-d, Rb-c and RankBoost+ (Connamacher, Pancha, Liu, Ray 2020) for binary weak rankers (stumps).

All three instantiate the RankBoost template (notebook 05 writes it out with Algorithms 1-2): a
distribution ``D_t`` over the critical pairs, a binary weak ranker ``h_t = [x_f > theta]`` chosen from
the pair statistics ``eps+, eps-, eps0`` (Eq. 8), a weight ``alpha_t``, a multiplicative update.

* Rb-d: ``h_t = argmin eps- - eps+`` (Eq. 13; with signed weights, ``argmax |eps+ - eps-|``),
  ``alpha_t = 1/2 ln(eps+/eps-)`` (Eq. 14), update Eq. 10.
* Rb-c: ``r_t = eps+ - eps-`` (Eq. 17), ``alpha_t = 1/2 ln((1+r)/(1-r))`` (Eq. 19), update Eq. 10.
* RankBoost+: ``delta = eps- - eps+ + eps0 tanh(alpha')`` (Eq. 33) with ``alpha'`` the weight already
  accumulated on the same ranker, ``h_t = argmax |delta|`` (Eq. 32), alpha by Eq. 34, update Eq. 25-27.
  ``implementation="efficient"`` is Algorithm 2 (an independent set S, pruned once with
  select-independent-subset at the first dependent choice); ``"optimal"`` also searches the directions
  in the span of S (least squares for beta, a line search along beta).

Linear algebra on pair patterns: a stump's pattern over the pairs is ``u = A v`` with ``v`` the
document indicator ``[x_f > theta]`` and ``A`` the pair incidence matrix (row ``e_hi - e_lo``). With the
pair-graph Laplacian ``G = A^T A = V diag(lambda) V^T`` (per connected component), ``L = diag(sqrt
lambda) V^T`` gives ``||L v|| = ||A v||`` and ``L v = 0`` iff ``A v = 0``: every linear relation among
patterns holds among the short vectors ``L v`` (dimension below the number of documents), so the least
squares and QR steps of Sec. 3.5 run in that space, not in R^m.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from lrank._kernels.pair_stumps import add_log_terms, add_log_terms_many, scale_pairs
from lrank._kernels.stumps import TIE_TOL
from lrank.data.binning import bin_features
from lrank.data.container import RankingData
from lrank.models._base import BaseRanker, TreeEnsembleMixin

VARIANTS = ("d", "c", "plus")
IMPLEMENTATIONS = ("efficient", "optimal")
EPS_MINUS_ZERO = ("halt", "infinite", "constant")
#: ``history_`` columns (index ``iteration`` = 1..n_iter_). ``train_E2`` is ``exp(train_log_E2)`` and
#: may overflow to inf (with a RuntimeWarning); ``train_log_E2`` and ``log_prod_Z`` stay finite.
HISTORY_COLUMNS = ["feature", "threshold", "eps_plus", "eps_minus", "eps_zero", "alpha", "alpha_prime", "Z",
                   "kind", "train_E1", "train_log_E1", "train_E2", "train_log_E2", "train_R1", "train_R2",
                   "log_prod_Z", "bound", "n_independent", "time_s"]
_DEP_TOL = 1e-7  # a pattern is in span(S) when its residual is below _DEP_TOL * ||pattern||


def _first_best(score: np.ndarray) -> int:
    """The lowest index whose score is within ``TIE_TOL`` of the largest: ``np.argmax`` with near-ties
    as ties. The scores (eps differences, Eq. 8-13 and 32-33, at most 2 in size) differ in the last bits
    between CPUs (numpy's SIMD exp and log in the weight updates), so a strict maximum would let the
    CPU choose between two rankers that split the pairs alike; `lrank._kernels.stumps` has the same rule.
    """
    score = np.asarray(score, dtype=np.float64)
    top = score.max()
    if not np.isfinite(top):
        return int(np.argmax(score))
    return int(np.flatnonzero(score >= top - TIE_TOL)[0])


# --------------------------------------------------------------------------------------------------
# The paper's formulas on pair statistics (used by the estimator and shown in the notebook)
# --------------------------------------------------------------------------------------------------
def alpha_d(eps_plus: float, eps_minus: float) -> float:
    """Rb-d weight, Eq. 14: ``1/2 ln(eps+ / eps-)`` (infinite when eps- = 0)."""
    with np.errstate(divide="ignore"):
        return float(0.5 * (np.log(eps_plus) - np.log(eps_minus)))


def alpha_c(r: float) -> float:
    """Rb-c weight, Eq. 19: ``1/2 ln((1 + r) / (1 - r))``."""
    with np.errstate(divide="ignore"):
        return float(0.5 * (np.log1p(r) - np.log1p(-r)))


def alpha_plus(eps_plus: float, eps_minus: float, eps_zero: float, alpha_prime: float = 0.0) -> float:
    """RankBoost+ weight, Eq. 34 (Eq. 19 when ``alpha' = 0``, Eq. 39)."""
    c = 2.0 * math.cosh(alpha_prime)
    num = eps_plus + eps_zero * math.exp(-alpha_prime) / c
    den = eps_minus + eps_zero * math.exp(alpha_prime) / c
    with np.errstate(divide="ignore"):
        return float(0.5 * (np.log(num) - np.log(den)))


def delta_plus(eps_plus: Any, eps_minus: Any, eps_zero: Any, alpha_prime: Any = 0.0) -> Any:
    """RankBoost+ selection score, Eq. 33: ``eps- - eps+ + eps0 tanh(alpha')``."""
    return eps_minus - eps_plus + eps_zero * np.tanh(alpha_prime)


def z_d(eps_plus: float, eps_minus: float, eps_zero: float, alpha: float) -> float:
    """Normaliser of Rb-d / Rb-c, Eq. 11: ``eps0 + eps+ e^-alpha + eps- e^alpha``."""
    return float(eps_zero + eps_plus * np.exp(-alpha) + eps_minus * np.exp(alpha))


def z_plus(eps_plus: float, eps_minus: float, eps_zero: float, alpha: float,
           alpha_prime: float = 0.0) -> float:
    """Normaliser of RankBoost+, Eq. 27."""
    return float(eps_plus * np.exp(-alpha) + eps_minus * np.exp(alpha)
                 + eps_zero * np.cosh(alpha + alpha_prime) / np.cosh(alpha_prime))


def log_cosh(x: Any) -> Any:
    """``ln cosh x`` without overflow."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    return a + np.log1p(np.exp(-2.0 * a)) - math.log(2.0)


def pair_log_terms(u: np.ndarray, eta: float) -> np.ndarray:
    """``ln omega*_2(i, f, eta)`` of Eq. 23: ``-eta`` correct, ``+eta`` reversed, ``ln cosh eta`` tied."""
    return _log_term_table(eta)[_outcome_index(u)]


def _log_term_table(eta: float) -> np.ndarray:
    """``ln omega*_2`` by outcome ``u + 1``: reversed ``eta``, tied ``ln cosh eta``, correct ``-eta``."""
    return np.array([eta, float(log_cosh(eta)), -eta])


def _log_rescale(q: np.ndarray, u: np.ndarray, l_plus: float, l_minus: float, l_zero: float) -> float | None:
    """``q_i *= exp(l[u_i])`` by outcome (+1, -1, 0), then ``q /= sum``; returns ``ln`` of that sum.

    ``q`` is a distribution proportional to ``w1 exp(x)`` for some per-pair log weights ``x`` (E1's
    ``-margins``, E2's ``lt``): ``ln sum w1 exp(x)`` then grows by the returned value (Eq. 12 / 29's
    product of normalisers), one multiplication per pair instead of one ``exp``. None when ``q``
    vanishes in float64 (the caller recomputes it from ``x``).
    """
    s = max(l_plus, l_minus, l_zero)
    s = s if abs(s) > 300.0 else 0.0  # shift only where exp would overflow
    z = scale_pairs(q, u, math.exp(l_plus - s), math.exp(l_minus - s), math.exp(l_zero - s))
    if not (z > 0.0 and math.isfinite(z)):
        return None
    q /= z
    return math.log(z) + s


def _distribution(x: np.ndarray, w1: np.ndarray) -> tuple[np.ndarray, float]:
    """``(w1 exp(x) / S, ln S)`` with ``S = sum w1 exp(x)``, without overflow."""
    log_s = log_weighted_sum_exp(x, w1)
    with np.errstate(under="ignore", invalid="ignore"):
        q = w1 * np.exp(x - log_s) if math.isfinite(log_s) else w1.copy()
    return np.where(np.isnan(q), 0.0, q), log_s


def _log_cosh1(x: float) -> float:
    """``ln cosh x`` of one float (as `log_cosh`, in ``math``)."""
    a = abs(x)
    return a + math.log1p(math.exp(-2.0 * a)) - math.log(2.0)


def _outcome_index(u: np.ndarray) -> np.ndarray:
    u = np.asarray(u)
    if u.dtype.kind != "i":
        u = u.astype(np.int8)
    return u + 1


def log_weighted_sum_exp(x: np.ndarray, w: np.ndarray) -> float:
    """``ln sum_i w_i exp(x_i)`` without overflow (``w >= 0``; ``-inf`` when every term is 0)."""
    x = np.asarray(x, dtype=np.float64)
    mx = float(np.max(x)) if x.size else -math.inf
    if math.isfinite(mx):  # fast path: shift by the largest term (exact unless w = 0 where x is largest)
        with np.errstate(under="ignore"):
            tot = float(np.dot(w, np.exp(x - mx)))
        if tot > 0 and math.isfinite(tot):
            return mx + math.log(tot)
    pos = w > 0
    if not pos.any():
        return -math.inf
    mx = float(np.max(x[pos]))
    if not math.isfinite(mx):
        return mx
    with np.errstate(under="ignore"):
        return mx + math.log(float(np.sum(w * np.exp(x - mx))))


def theorem_bound(deltas: Any) -> float:
    """``exp(-2 sum_t (delta_t / 2)^2)``: Theorem 1 (Eq. 16) or Theorem 2 (Eq. 35) for the deltas given."""
    d = np.asarray(deltas, dtype=np.float64)
    return float(np.exp(-2.0 * np.sum((d / 2.0) ** 2)))


# --------------------------------------------------------------------------------------------------
# Linear algebra in the pair space
# --------------------------------------------------------------------------------------------------
class _PairSpace:
    """``L`` with ``L^T L = A^T A`` (pair-graph Laplacian), block-diagonal over connected components."""

    def __init__(self, hi: np.ndarray, lo: np.ndarray, n: int) -> None:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        adj = coo_matrix((np.ones(hi.size), (hi, lo)), shape=(n, n)).tocsr()
        adj = adj + adj.T
        _, comp = connected_components(adj, directed=False)
        deg = np.asarray(adj.sum(axis=1)).ravel()
        blocks = []
        for c in np.unique(comp):
            idx = np.flatnonzero(comp == c)
            if idx.size < 2:
                continue
            G = -adj[idx][:, idx].toarray()
            G[np.diag_indices(idx.size)] += deg[idx]
            lam, V = np.linalg.eigh(G)
            keep = lam > 1e-9 * max(lam[-1], 1.0)
            blocks.append((idx, np.sqrt(lam[keep])[:, None] * V[:, keep].T))
        self.blocks = blocks  # (document indices, L block) per connected component
        self.dim = sum(b.shape[0] for _, b in blocks)

    def vector(self, codes: np.ndarray, f: int, j: int) -> np.ndarray:
        """``L v`` for the stump ``v = [code_f > j]``."""
        parts = [b[:, codes[idx, f] > j].sum(axis=1) for idx, b in self.blocks]
        return np.concatenate(parts) if parts else np.zeros(0)

    def vectors(self, codes: np.ndarray, feature: np.ndarray, bins: np.ndarray, n_bins: int) -> np.ndarray:
        """``L v`` of many stumps, ``(dim, K)``."""
        from lrank._kernels.pair_stumps import doc_suffix_rows

        out = np.empty((self.dim, feature.size))
        row = 0
        for idx, b in self.blocks:
            r = b.shape[0]
            sub = codes[idx]
            rows = np.ascontiguousarray(b.T)  # (documents, r)
            for f in np.unique(feature):
                sel = np.flatnonzero(feature == f)
                suffix = doc_suffix_rows(sub[:, f], rows, n_bins)  # suffix[c] = sum over codes >= c
                out[row:row + r, sel] = suffix[bins[sel] + 1].T  # [code > j] = codes >= j + 1
            row += r
        return out


def _orth_residual(Q: np.ndarray, v: np.ndarray) -> np.ndarray:
    res = v - Q @ (Q.T @ v)
    return res - Q @ (Q.T @ res)


def select_independent_subset(Q: np.ndarray, R: Any, order: np.ndarray, tol: float = _DEP_TOL,
                              chunk: int = 256) -> tuple[list[int], np.ndarray]:
    """Columns of ``R`` (taken in ``order``) independent of span(Q) and of each other (Alg. 2 line 14).

    Sequential Gram-Schmidt: a column is kept when its residual after projecting on the basis so far
    exceeds ``tol * ||column||``. This is the QR of ``[S, permute(R)]`` read column by column (the
    authors keep the columns with ``|diag(R')| > 0``); it stops once the basis spans the whole space.
    ``R`` is an array ``(dim, K)`` or a function returning the columns of given indices (computed
    ``chunk`` at a time). Returns the kept column indices and their vectors.
    """
    dim = Q.shape[0]
    get = (lambda idx: R[:, idx]) if isinstance(R, np.ndarray) else R
    B = Q.copy()
    kept: list[int] = []
    vecs: list[np.ndarray] = []
    order = np.asarray(order)
    for start in range(0, order.size, chunk):
        if B.shape[1] >= dim:
            break
        idx = order[start:start + chunk]
        block = get(idx)
        for c, v in zip(idx, block.T):
            if B.shape[1] >= dim:
                break
            nv = np.linalg.norm(v)
            if nv == 0:
                continue
            res = _orth_residual(B, v)
            nr = np.linalg.norm(res)
            if nr > tol * nv:
                kept.append(int(c))
                vecs.append(v)
                B = np.column_stack([B, res / nr])
    return kept, (np.column_stack(vecs) if vecs else np.zeros((dim, 0)))


class _IndependentSet:
    """A linearly independent set of weak rankers with weights eta, and F2(eta) (Eq. 22) over it."""

    def __init__(self, space: _PairSpace, codes: np.ndarray, hi: np.ndarray, lo: np.ndarray,
                 w1: np.ndarray, cand_f: np.ndarray, cand_j: np.ndarray, exact_log_terms: bool = True
                 ) -> None:
        self.space, self.codes, self.hi, self.lo, self.w1 = space, codes, hi, lo, w1
        self.cand_f, self.cand_j = cand_f, cand_j
        self.members: list[int] = []
        self.where: dict[int, int] = {}
        self.eta = np.zeros(0)
        # members' vectors and an orthonormal basis of their span, in column buffers grown by doubling
        # (Fortran order: the first k columns are one contiguous block; no copy of the set per member)
        self._vbuf = np.zeros((space.dim, 8), order="F")
        self._qbuf = np.zeros((space.dim, 8), order="F")
        self.exact_log_terms = exact_log_terms  # lt in NumPy's bits (the optimal variant's line search)
        self.lt = np.zeros(hi.size)  # ln omega*_2 summed over the members, per pair
        self.q = w1.copy()  # w1 exp(lt) / F2(eta): F2's distribution over the pairs
        self.log_e2 = 0.0  # ln F2(eta), accumulated as the sum of ln of q's normalisers (Eq. 29's form)
        self._patterns: dict[int, np.ndarray] = {}

    def pattern(self, c: int) -> np.ndarray:
        from lrank._kernels.pair_stumps import stump_pattern

        p = self._patterns.get(c)
        if p is None:
            p = stump_pattern(self.codes, self.hi, self.lo, int(self.cand_f[c]), int(self.cand_j[c]))
            self._patterns[c] = p
        return p

    def vector(self, c: int) -> np.ndarray:
        return self.space.vector(self.codes, int(self.cand_f[c]), int(self.cand_j[c]))

    def residual_norm(self, v: np.ndarray) -> tuple[float, float]:
        return float(np.linalg.norm(_orth_residual(self.Q, v))), float(np.linalg.norm(v))

    def is_dependent(self, v: np.ndarray) -> bool:
        res, nv = self.residual_norm(v)
        return res <= _DEP_TOL * nv

    @property
    def vecs(self) -> np.ndarray:
        """The members' vectors ``L v``, one column each."""
        return self._vbuf[:, :len(self.members)]

    @property
    def Q(self) -> np.ndarray:
        """An orthonormal basis of span(vecs), one column per member."""
        return self._qbuf[:, :len(self.members)]

    def add_member(self, c: int, v: np.ndarray, eta: float = 0.0) -> int:
        res = _orth_residual(self.Q, v)
        k = len(self.members)
        if k == self._qbuf.shape[1]:
            grow = lambda b: np.concatenate([b, np.zeros_like(b)], axis=1)  # noqa: E731
            self._qbuf, self._vbuf = np.asfortranarray(grow(self._qbuf)), np.asfortranarray(grow(self._vbuf))
        self._qbuf[:, k] = res / np.linalg.norm(res)
        self._vbuf[:, k] = v
        self.members.append(int(c))
        self.where[int(c)] = len(self.members) - 1
        self.eta = np.r_[self.eta, 0.0]
        if eta != 0.0:
            self.set_eta(len(self.members) - 1, eta)
        return len(self.members) - 1

    def add_members(self, cands: list[int], vecs: np.ndarray) -> None:
        for c, k in zip(cands, range(vecs.shape[1])):
            self.add_member(c, vecs[:, k], 0.0)

    def set_eta(self, j: int, new: float) -> None:
        """Change one member's weight: F2's pair distribution ``q`` and ``ln F2`` by Eq. 25-27."""
        u = self.pattern(self.members[j])
        old = float(self.eta[j])
        d_tie = _log_cosh1(new) - _log_cosh1(old)
        if self.exact_log_terms:
            add_log_terms(self.lt, u, _log_term_table(new) - _log_term_table(old))  # Eq. 25, log domain
        else:
            add_log_terms(self.lt, u, np.array([new - old, d_tie, (-new) - (-old)]))
        # the same change on q: correct pairs e^-(new - old), reversed e^(new - old), tied cosh new / cosh old
        lz = _log_rescale(self.q, u, old - new, new - old, d_tie)
        if lz is None:  # q vanished in float64 (extreme weights): from the log terms
            self.q, self.log_e2 = _distribution(self.lt, self.w1)
        else:
            self.log_e2 += lz
        self.eta[j] = new

    def set_etas(self, js: np.ndarray, steps: np.ndarray) -> None:
        """``eta_j += steps[j]`` for every ``j`` in ``js`` (a dependent ranker spread over the members).

        The log terms change member by member in the order of ``js`` (as repeated `set_eta`); F2 and
        its distribution are then recomputed once from them (one ``exp`` per pair).
        """
        if js.size <= 2:
            for k in js:
                self.set_eta(int(k), self.eta[k] + steps[k])
            return
        new = self.eta[js] + steps[js]
        U = np.stack([self.pattern(self.members[int(k)]) for k in js])
        tables = np.stack([self._table(float(n)) - self._table(float(o)) for n, o in zip(new, self.eta[js])])
        add_log_terms_many(self.lt, U, tables)  # Eq. 25 for each changed member
        self.q, self.log_e2 = _distribution(self.lt, self.w1)
        self.eta[js] = new

    def _table(self, eta: float) -> np.ndarray:
        """``ln omega*_2`` by outcome (reversed, tied, correct) of one weight (Eq. 23)."""
        if self.exact_log_terms:
            return _log_term_table(eta)
        return np.array([eta, _log_cosh1(eta), -eta])

    def coefficients(self, v: np.ndarray) -> np.ndarray:
        """beta with ``S beta = v`` (least squares over the members)."""
        return np.linalg.lstsq(self.vecs, v, rcond=None)[0]

    def accumulate(self, c: int, weight: float) -> str:
        """Add ``weight * h_c`` to the ensemble (the paper's 'final detail' of Sec. 4); returns the case."""
        j = self.where.get(int(c))
        if j is not None:
            self.set_eta(j, self.eta[j] + weight)
            return "member"
        v = self.vector(c)
        if self.is_dependent(v):
            beta = self.coefficients(v)
            self.set_etas(np.flatnonzero(beta != 0.0), weight * beta)
            return "dependent"
        self.add_member(c, v, weight)
        return "new"

    def log_f2(self) -> float:
        """``ln F_2(eta)`` (Eq. 22) over the independent set: finite where F_2 itself overflows."""
        return self.log_e2


# --------------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------------
class RankBoostPlus(TreeEnsembleMixin, BaseRanker):
    """Rb-d, Rb-c and RankBoost+ with binary stumps ``[x_f > theta]`` (Connamacher et al. 2020).

    Parameters
    ----------
    variant : {"d", "c", "plus"}
        Rb-d (Eq. 13, 14, 10), Rb-c (Eq. 17, 19, 10) or RankBoost+ (Eq. 32-34, 25-27).
    implementation : {"efficient", "optimal"}
        RankBoost+ only: Algorithm 2, or the search over every direction including span(S).
    n_estimators : int
        Boosting rounds T (at most; a stop rule may end training earlier, see ``stop_reason_``).
    max_thresholds : int
        Thresholds per feature (the paper: at most 255, subsampled at random when there are more;
        255 gives uint16 bin codes, 254 keeps uint8).
    eps_minus_zero : {"halt", "infinite", "constant"}
        What Rb-d does when the chosen ranker reverses no pair (eps- = 0, Eq. 14 undefined); the same
        rule applies to a perfect ranker in Rb-c and RankBoost+ (infinite alpha).
        ``"halt"``: the paper's behaviour (Fig. 4), keep the ensemble before that round and stop; when
        that happens at round 1 the model has ``n_iter_ = 0``: ``staged_predict`` yields nothing and
        ``predict`` returns the constant model (all scores 0, every pair tied).
        ``"infinite"``: add the ranker with infinite weight and stop; the ensemble is then ``inf * h_T``
        as Lemma 1 defines it (the finite part is dropped).
        ``"constant"``: give it weight ``large_alpha`` and continue with the limiting distribution
        (pairs it ranks correctly get weight 0, Z = eps0), as in Lemma 2.
    large_alpha : float
        The constant of ``eps_minus_zero="constant"``.
    alpha_sign : {"any", "positive"}
        ``"any"``: alpha may be negative (Obs. 1; the authors' code). ``"positive"``: only rankers with
        eps+ > eps- are chosen (Rb-d/Rb-c as in Mohri et al., Lemma 3); training stops when none is left.
    stop_on_repeat : bool
        Stop when the same ranker is chosen twice in a row (the authors' code; not in the paper).
    pair_weighting : {"uniform", "query"}
        The initial distribution D_1 over critical pairs.
    random_state : int, Generator or None
        Seeds the threshold subsample and the column permutation of Algorithm 2.
    verbose : bool
        tqdm progress bar over rounds.

    Attributes
    ----------
    alphas_ : ndarray
        alpha_t of each round.
    estimators_ : list
        The chosen stump of each round, ``(feature, threshold)``.
    history_ : pandas.DataFrame
        One row per round, indexed by ``iteration``: the stump, ``eps_plus`` / ``eps_minus`` /
        ``eps_zero``, ``alpha``, ``alpha_prime``, ``Z``, ``train_E1``, ``train_E2`` (F2 over an independent
        set, Eq. 22), their logarithms ``train_log_E1`` / ``train_log_E2`` (finite where E2 overflows),
        ``train_R1``, ``train_R2``, ``log_prod_Z`` (sum of ln Z_t: Eq. 12 / 29 say it equals ln E1 / ln E2),
        the Theorem 1/2 ``bound``, the size of the independent set, the round's wall time.
    n_iter_ : int
        Rounds kept (0 when Rb-d halted at round 1).
    best_iteration_ : None
        No early stopping on an ``eval_set``: rounds are chosen outside (``lrank.experiments``).
    prune_iteration_ : int or None
        Efficient RankBoost+: the round at which Algorithm 2 pruned R (line 14), else None.
    stop_reason_ : str
        ``"n_estimators reached"``, ``"eps- = 0 (halt)"``, ``"no ranker with a nonzero gradient"``, ...
    """

    _parameter_constraints: dict = {
        "variant": [StrOptions(set(VARIANTS))],
        "implementation": [StrOptions(set(IMPLEMENTATIONS))],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_thresholds": [Interval(Integral, 1, 65534, closed="both")],
        "eps_minus_zero": [StrOptions(set(EPS_MINUS_ZERO))],
        "large_alpha": [Interval(Real, 0, None, closed="neither")],
        "alpha_sign": [StrOptions({"any", "positive"})],
        "stop_on_repeat": ["boolean"],
        "pair_weighting": [StrOptions({"uniform", "query"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, variant: str = "plus", implementation: str = "efficient", n_estimators: int = 300,
                 max_thresholds: int = 255, eps_minus_zero: str = "halt", large_alpha: float = 30.0,
                 alpha_sign: str = "any", stop_on_repeat: bool = False, pair_weighting: str = "uniform",
                 random_state: Any = None, verbose: bool = False) -> None:
        self.variant = variant
        self.implementation = implementation
        self.n_estimators = n_estimators
        self.max_thresholds = max_thresholds
        self.eps_minus_zero = eps_minus_zero
        self.large_alpha = large_alpha
        self.alpha_sign = alpha_sign
        self.stop_on_repeat = stop_on_repeat
        self.pair_weighting = pair_weighting
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------------------------ checks
    def _validate(self) -> None:
        super()._validate()
        for name in ("n_estimators", "max_thresholds"):
            if isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be an int, got the bool {getattr(self, name)!r}")
        if self.alpha_sign == "positive" and self.variant == "plus":
            raise ValueError("alpha_sign='positive' applies to variant 'd' and 'c' only, not 'plus'")

    # ------------------------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None, sample_weight: Any = None,
            eval_set: Any = None, eval_group: Any = None, eval_qid: Any = None,
            eval_names: Any = None) -> RankBoostPlus:
        """Fit on graded labels within queries, or on general pair feedback.

        Parameters
        ----------
        X : array (n_docs, n_features), RankingData, or pair feedback
            Pair feedback is an object with ``X``, ``hi``, ``lo`` (and optionally ``weight``): document
            ``hi[i]`` should rank above ``lo[i]`` (e.g. ``lrank.data.generators.subset_lattice()``).
        y, qid, group
            Labels and query ids / sizes (BaseRanker's contract) when ``X`` is an array.
        sample_weight : array-like, optional
            Query weights (one per query, or per document and constant within each query): the initial
            distribution D_1 of a query's critical pairs is multiplied by its weight. Not with pair
            feedback (its pairs carry their own ``weight``).
        eval_set, eval_group, eval_qid, eval_names
            LightGBM's conventions (see `lrank.models._base`). RankBoost+ does not stop on them: each eval
            set's NDCG@10 after every round is added to ``history_`` (``valid_ndcg@10``, ...).

        Returns
        -------
        self
        """
        self._validate()
        if hasattr(X, "hi") and hasattr(X, "lo") and not isinstance(X, RankingData):
            Xf = self._features(X.X, n_features=np.asarray(X.X).shape[1], reset=True)
            self.n_features_in_ = Xf.shape[1]
            hi = np.ascontiguousarray(X.hi, dtype=np.int64)
            lo = np.ascontiguousarray(X.lo, dtype=np.int64)
            w = getattr(X, "weight", None)
            w1 = np.full(hi.size, 1.0) if w is None else np.asarray(w, dtype=np.float64).copy()
            if (w1 < 0).any() or not np.isfinite(w1).all():
                raise ValueError("pair weights must be finite and non-negative")
            if sample_weight is not None:
                raise ValueError("sample_weight weighs queries; pair feedback carries its own weight per "
                                 "pair")
        else:
            data = self._ranking_data(X, y, qid, group)
            Xf = data.X
            cp = data.pairs(self.pair_weighting)
            hi, lo, w1 = cp.hi, cp.lo, cp.weight.copy()
            wq = self._sample_weight(sample_weight, data, "query")
            if wq is not None:
                w1 *= wq[data.query_index()[hi]]
                if hi.size and not w1.sum() > 0:
                    raise ValueError("sample_weight is zero on every query that has a critical pair")
        valid = self._eval_sets(eval_set, eval_group, eval_qid, eval_names)
        if hi.size == 0:
            raise ValueError(f"no critical pairs: every query has a single label value (n_samples = "
                             f"{Xf.shape[0]})")
        if (hi < 0).any() or (hi >= Xf.shape[0]).any() or (lo < 0).any() or (lo >= Xf.shape[0]).any():
            raise ValueError("pair indices out of range")
        w1 = w1 / w1.sum()
        with _blas_controller().limit(limits=1, user_api="blas"):  # small dense algebra: threads only contend
            self._fit_pairs(Xf, hi, lo, w1)
        if valid:
            from lrank.metrics import training_measure

            hist = self.history_.copy()
            for j, vd in enumerate(valid):
                measure = training_measure(vd.y, vd.qptr, "ndcg@10")
                vals = [measure(s) for s in self.staged_predict(vd.X)][: len(hist)]
                vals += [np.nan] * (len(hist) - len(vals))
                hist["valid_ndcg@10" if j == 0 else f"valid{j}_ndcg@10"] = vals
            self.history_ = self._history(hist)
        return self
    def _fit_pairs(self, X: np.ndarray, hi: np.ndarray, lo: np.ndarray, w1: np.ndarray) -> None:
        from lrank._kernels.pair_stumps import (
            candidate_eps,
            candidate_plan,
            margin_losses,
            pair_min_codes,
            stump_outcomes,
        )
        from lrank.weak.pair_patterns import distinct_stumps

        rng = np.random.default_rng(self.random_state)
        n = X.shape[0]
        bins = bin_features(X, max_thresholds=int(self.max_thresholds), threshold_strategy="subsample",
                            random_state=rng)
        codes = bins.codes
        n_bins = bins.max_bins
        minc = pair_min_codes(codes, hi, lo)
        cands = distinct_stumps(codes, bins.n_thresholds, hi, lo, random_state=rng, minc=minc)
        cf, cj = cands.feature, cands.bin
        K = len(cands)
        self.n_candidates_ = {"stumps": cands.n_candidates, "all_tie": cands.n_all_tie,
                              "duplicates": cands.n_duplicates, "distinct": K}
        thr = np.array([-np.inf if j == 0 else bins.thresholds[f][j - 1] for f, j in zip(cf, cj)])
        plan = candidate_plan(codes, minc, cf, cj, n_bins)  # Eq. 8 per round on the candidates only

        space = _PairSpace(hi, lo, n)
        state = _IndependentSet(space, codes, hi, lo, w1, cf, cj,
                                exact_log_terms=self.variant == "plus" and self.implementation == "optimal")
        variant, impl = self.variant, self.implementation
        D = w1.copy()
        margins = np.zeros(hi.size)
        p_e1, log_e1 = w1.copy(), 0.0  # w1 exp(-margins) / E1 and ln E1 (Eq. 5), updated each round
        active = np.ones(K, dtype=bool)  # Algorithm 2's R (columns not yet removed)
        greedy = True
        prune_at = None  # the round at which Algorithm 2 pruned R (line 14)
        H = space.vectors(codes, cf, cj, n_bins) if (variant == "plus" and impl == "optimal") else None
        rounds: list[tuple[np.ndarray, np.ndarray]] = []
        rows: list[dict] = []
        sum_sq = 0.0  # sum_t (delta_t / 2)^2 of the Theorem 1 / 2 bound
        log_prodZ = 0.0  # sum_t ln Z_t (Eq. 12 / 29 in the log domain: a product of Z_t may overflow)
        stop = "n_estimators reached"
        last = -1
        infinite_last = False
        tick = time.perf_counter()
        for t in self._progress(self.n_estimators, desc=f"Rb-{variant}"):
            if K == 0:
                stop = "no candidate ranker"
                break
            cep, cem, ce0 = candidate_eps(plan, hi, lo, D)  # Eq. 8 for every candidate
            move = None  # (candidate, alpha', kind) or ("line", beta)
            if variant in ("d", "c"):
                score = cep - cem  # eps+ - eps- = r_t (Eq. 17), -delta of Eq. 13
                if self.alpha_sign == "positive":
                    k = _first_best(score)
                    if not score[k] > 1e-12:
                        stop = "no ranker with eps+ > eps-"
                        break
                else:
                    k = _first_best(np.abs(score))
                    if not abs(score[k]) > 1e-12:
                        stop = "no ranker with a nonzero gradient"
                        break
                move = (k, 0.0, "member" if k in state.where else "new")
            else:
                mem = np.array(state.members, dtype=np.int64)
                d_mem = delta_plus(cep[mem], cem[mem], ce0[mem], state.eta) if mem.size else np.zeros(0)
                d_new = cem - cep  # Eq. 33 with alpha' = 0
                if impl == "efficient":
                    if greedy:
                        mask = active.copy()
                        mask[mem] = False
                        jm = _first_best(np.abs(d_mem)) if mem.size else -1
                        best_m = abs(d_mem[jm]) if mem.size else -1.0
                        cand_new = np.flatnonzero(mask)
                        kn = int(cand_new[_first_best(np.abs(d_new[cand_new]))]) if cand_new.size else -1
                        best_n = abs(d_new[kn]) if kn >= 0 else -1.0
                        if jm >= 0 and best_m >= best_n - TIE_TOL:  # near-ties go to the members
                            move = (int(mem[jm]), float(state.eta[jm]), "member")
                        elif kn >= 0:
                            v = state.vector(kn)
                            active[kn] = False  # line 13
                            if not state.is_dependent(v):
                                move = (kn, 0.0, "new")
                            else:  # line 14: prune R once, then search S only
                                greedy = False
                                prune_at = t + 1
                                rest = np.flatnonzero(active & ~np.isin(np.arange(K), mem))
                                kept, vecs = select_independent_subset(
                                    state.Q, lambda idx: space.vectors(codes, cf[idx], cj[idx], n_bins),
                                    rng.permutation(rest))
                                state.add_members(kept, vecs)
                                active[:] = False
                    if move is None:  # line 15
                        mem = np.array(state.members, dtype=np.int64)
                        if mem.size == 0:
                            stop = "no candidate ranker"
                            break
                        d_mem = delta_plus(cep[mem], cem[mem], ce0[mem], state.eta)
                        jm = _first_best(np.abs(d_mem))
                        move = (int(mem[jm]), float(state.eta[jm]), "member")
                else:  # optimal: every direction, including span(S)
                    score = np.abs(d_new)
                    kind = np.zeros(K, dtype=np.int8)  # 0 new, 1 member, 2 dependent
                    betas = None
                    if mem.size:
                        Qs, Rs = np.linalg.qr(state.vecs)
                        P = Qs.T @ H
                        res = np.linalg.norm(H - Qs @ P, axis=0)
                        dep = res <= _DEP_TOL * np.linalg.norm(H, axis=0)
                        betas = np.linalg.solve(Rs, P[:, dep])
                        g = d_mem @ betas / np.linalg.norm(betas, axis=0)
                        di = np.flatnonzero(dep)
                        score[di] = np.abs(g)
                        kind[di] = 2
                        score[mem] = np.abs(d_mem)
                        kind[mem] = 1
                    k = _first_best(score)
                    if kind[k] == 1:
                        j = state.where[k]
                        move = (k, float(state.eta[j]), "member")
                    elif kind[k] == 0:
                        move = (k, 0.0, "new")
                    else:
                        beta = betas[:, int(np.searchsorted(np.flatnonzero(kind == 2), k))]
                        move = ("line", beta, k)
                if move[0] == "line":
                    chosen = score[move[2]]
                elif move[2] == "member":
                    mem = np.array(state.members, dtype=np.int64)
                    chosen = abs(d_mem[state.where[move[0]]]) if mem.size == d_mem.size else abs(
                        delta_plus(cep[move[0]], cem[move[0]], ce0[move[0]], move[1]))
                else:
                    chosen = abs(d_new[move[0]])
                if not chosen > 1e-12:
                    stop = "no ranker with a nonzero gradient"
                    break
            # ---------------------------------------------------------------- weight and update
            if move[0] == "line":
                beta, k = move[1], move[2]
                alpha, Z = self._line_search(state, beta)
                log_prodZ += _log(Z)
                D = w1 * np.exp(state.lt)
                D /= D.sum()
                idx = np.flatnonzero(beta != 0.0)
                rounds.append((np.array([state.members[i] for i in idx]), alpha * beta[idx]))
                for i in idx:
                    margins += alpha * beta[i] * state.pattern(state.members[i])
                row = dict(feature=int(cf[k]), threshold=float(thr[k]), eps_plus=np.nan, eps_minus=np.nan,
                           eps_zero=np.nan, alpha=alpha, alpha_prime=np.nan, Z=Z, kind="dependent")
            else:
                k, ap, kind = move
                u, e_m, e_0, e_p = stump_outcomes(codes, hi, lo, int(cf[k]), int(cj[k]), D)  # Eq. 8
                tot = e_p + e_m + e_0
                e_p, e_m, e_0 = e_p / tot, e_m / tot, e_0 / tot
                if self.stop_on_repeat and t >= 2 and k == last:
                    stop = "same ranker twice in a row"
                    break
                if variant == "d":
                    alpha = alpha_d(e_p, e_m)  # Eq. 14
                    delta = e_p - e_m
                elif variant == "c":
                    alpha = alpha_c(e_p - e_m)  # Eq. 19
                    delta = e_p - e_m
                else:
                    alpha = alpha_plus(e_p, e_m, e_0, ap)  # Eq. 34
                    delta = -float(delta_plus(e_p, e_m, e_0, ap))
                if not np.isfinite(alpha):
                    mode = self.eps_minus_zero
                    if mode == "halt":
                        stop = "eps- = 0 (halt)" if variant == "d" else "perfect ranker (halt)"
                        break
                    sgn = 1.0 if alpha > 0 else -1.0
                    if mode == "infinite":
                        alpha = sgn * np.inf
                        infinite_last = True
                        rounds.append((np.array([k]), np.array([alpha])))
                        margins = sgn * np.where(u > 0, np.inf, np.where(u < 0, -np.inf, 0.0))
                        Z = e_0
                        log_prodZ += _log(Z)
                        sum_sq += (delta / 2.0) ** 2
                        rows.append(self._row(t, cf[k], thr[k], e_p, e_m, e_0, alpha, ap, Z, kind, log_prodZ,
                                              _losses(margins, w1), state, sum_sq))
                        stop = "eps- = 0 (infinite weight)"
                        break
                    # constant: finite weight in g, limiting distribution (correct pairs -> 0)
                    alpha = sgn * float(self.large_alpha)
                    Z = scale_pairs(D, u if sgn > 0 else -u, 0.0, 1.0, 1.0)
                    if Z <= 0:
                        stop = "all pairs ranked correctly"
                    else:
                        D /= Z
                elif variant in ("d", "c"):
                    Z = scale_pairs(D, u, math.exp(-alpha), math.exp(alpha), 1.0)  # Eq. 10, Z of Eq. 11
                    D /= Z
                else:  # Eq. 25-27
                    w0 = math.cosh(alpha + ap) / math.cosh(ap)
                    Z = scale_pairs(D, u, math.exp(-alpha), math.exp(alpha), w0)
                    D /= Z
                log_prodZ += _log(Z)
                sum_sq += (delta / 2.0) ** 2
                if variant == "plus":
                    if kind == "member":
                        j = state.where[k]
                        state.set_eta(j, state.eta[j] + alpha)
                    else:
                        state.add_member(k, state.vector(k), alpha)
                else:
                    kind = state.accumulate(k, alpha)  # "member", "new" or "dependent" (E2's set)
                r1, r2 = margin_losses(margins, u, alpha, w1)  # margins += alpha u; R1, R2
                lz = _log_rescale(p_e1, u, -alpha, alpha, 0.0)  # E1_t = E1_{t-1} sum_i p_i e^(-alpha u_i)
                if lz is None:
                    p_e1, log_e1 = _distribution(-margins, w1)
                else:
                    log_e1 += lz
                losses = (log_e1, r1, r2)
                rounds.append((np.array([k]), np.array([alpha])))
                row = dict(feature=int(cf[k]), threshold=float(thr[k]), eps_plus=e_p, eps_minus=e_m,
                           eps_zero=e_0, alpha=alpha, alpha_prime=ap if variant == "plus" else np.nan, Z=Z,
                           kind=kind)
                last = k
            if move[0] == "line":
                losses = _losses(margins, w1)
                p_e1, log_e1 = _distribution(-margins, w1)
            rows.append(self._finish_row(t, row, log_prodZ, losses, state, sum_sq))
            now = time.perf_counter()
            rows[-1]["time_s"] = now - tick  # wall time of this round (Fig. 1)
            tick = now
            if stop == "all pairs ranked correctly":
                break
        self.prune_iteration_ = prune_at
        self._store(rounds, rows, cf, thr, stop, infinite_last)

    @staticmethod
    def _line_search(state: _IndependentSet, beta: np.ndarray) -> tuple[float, float]:
        """Minimise F2(eta + lambda beta) over lambda (the optimal RankBoost+ along a dependent direction)."""
        from scipy.optimize import minimize_scalar

        idx = np.flatnonzero(beta != 0.0)
        U = [state.pattern(state.members[i]) for i in idx]
        base = state.lt.copy()
        for i, u in zip(idx, U):
            base -= pair_log_terms(u, state.eta[i])
        log_old = log_weighted_sum_exp(state.lt, state.w1)  # ln F2 before the step (NumPy, as f)

        def f(lam: float) -> float:  # ln F2(eta + lam beta) - ln F2(eta): same minimiser, no overflow
            lt = base.copy()
            for i, u in zip(idx, U):
                lt += pair_log_terms(u, state.eta[i] + lam * beta[i])
            return log_weighted_sum_exp(lt, state.w1) - log_old

        res = minimize_scalar(f, bracket=(-1.0, 0.0, 1.0) if f(1.0) > f(0.0) else (0.0, 1.0))
        lam = float(res.x)
        for i in idx:
            state.set_eta(int(i), state.eta[i] + lam * beta[i])
        return lam, math.exp(log_weighted_sum_exp(state.lt, state.w1) - log_old)

    @staticmethod
    def _finish_row(t: int, row: dict, log_prodZ: float, losses: tuple[float, float, float],
                    state: _IndependentSet, sum_sq: float) -> dict:
        log_e1, r1, r2 = losses  # ln E1 (Eq. 5), R1 (Eq. 3), R2 (Eq. 4) of the margins after round t
        log_e2 = state.log_f2()  # ln E2 = ln F2(eta), Eq. 22-24
        e1 = math.exp(log_e1) if log_e1 < 709.78 else math.inf  # float64 overflows above ln(1.8e308)
        e2 = math.exp(log_e2) if log_e2 < 709.78 else math.inf
        row.update(train_E1=e1, train_log_E1=log_e1, train_E2=e2, train_log_E2=log_e2,
                   train_R1=float(r1), train_R2=float(r2), log_prod_Z=log_prodZ,
                   bound=float(np.exp(-2.0 * sum_sq)), n_independent=len(state.members))  # Eq. 16 / 35
        return row

    def _row(self, t, f, thr, e_p, e_m, e_0, alpha, ap, Z, kind, log_prodZ, losses, state, sum_sq) -> dict:
        row = dict(feature=int(f), threshold=float(thr), eps_plus=e_p, eps_minus=e_m, eps_zero=e_0,
                   alpha=alpha, alpha_prime=ap if self.variant == "plus" else np.nan, Z=Z, kind=kind)
        return self._finish_row(t, row, log_prodZ, losses, state, sum_sq)

    def _store(self, rounds, rows, cf, thr, stop, infinite_last) -> None:
        used = np.unique(np.concatenate([r[0] for r in rounds])) if rounds else np.zeros(0, np.int64)
        pos = {int(c): i for i, c in enumerate(used)}
        self.stump_features_ = cf[used].astype(np.int64)
        self.stump_thresholds_ = thr[used].astype(np.float64)
        self.round_stumps_ = [np.array([pos[int(c)] for c in r[0]], dtype=np.int64) for r in rounds]
        self.round_weights_ = [np.asarray(r[1], dtype=np.float64) for r in rounds]
        self.history_ = self._history(rows, columns=HISTORY_COLUMNS)
        self.alphas_ = self.history_["alpha"].to_numpy(dtype=np.float64)
        self.estimators_ = [(int(f), float(th)) for f, th in zip(self.history_["feature"],
                                                                 self.history_["threshold"])]
        self.n_iter_ = len(rounds)
        self.best_iteration_ = None
        self.stop_reason_ = stop
        self.infinite_last_ = bool(infinite_last)
        inf = np.isinf(self.history_["train_E2"].to_numpy(dtype=np.float64))
        if inf.any():
            warnings.warn(f"RankBoostPlus(variant={self.variant!r}): train E2 overflows float64 from round "
                          f"{int(np.argmax(inf)) + 1} on (history_['train_E2'] is inf there); "
                          "history_['train_log_E2'] holds ln E2", RuntimeWarning, stacklevel=3)

    # --------------------------------------------------------------------------------- prediction
    def _stump_values(self, X: Any) -> np.ndarray:
        Xf = self._features(X, self.n_features_in_).astype(np.float64)
        if self.stump_features_.size == 0:
            return np.zeros((Xf.shape[0], 0))
        return (Xf[:, self.stump_features_] > self.stump_thresholds_[None, :]).astype(np.float64)

    def _stages(self, X: Any, n: int):
        V = self._stump_values(X)
        g = np.zeros(V.shape[0])
        for t in range(n):
            s, w = self.round_stumps_[t], self.round_weights_[t]
            if self.infinite_last_ and t == self.n_iter_ - 1:
                yield np.sign(w[0]) * V[:, s[0]]  # Lemma 1's definition: (g + inf h_T) = inf h_T
                return
            g = g + V[:, s] @ w
            yield g.copy()

    def staged_predict(self, X: Any):
        """Scores after each round 1..n_iter_ (a generator of float64 arrays).

        A model with ``n_iter_ = 0`` (Rb-d halted at round 1) yields nothing; its `predict` is the
        constant model.
        """
        self._check_fitted()
        yield from self._stages(X, self.n_iter_)

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Scores of the ensemble after ``num_iteration`` rounds (default: all ``n_iter_``).

        ``inf * h_T`` (``eps_minus_zero="infinite"``) is returned as ``sign * h_T``; with 0 rounds every
        score is 0 (the constant model: every pair tied).
        """
        k = self._num_iteration(num_iteration)
        out = np.zeros(self._features(X, self.n_features_in_).shape[0])
        for stage in self._stages(X, k):
            out = stage
        return out


def _losses(margins: np.ndarray, w1: np.ndarray) -> tuple[float, float, float]:
    """``(ln E1, R1, R2)`` of the pair margins (Eq. 5, 3, 4); margins may be infinite, never NaN."""
    return (log_weighted_sum_exp(-margins, w1), float(np.sum(w1 * (margins <= 0))),
            float(np.sum(w1 * ((margins < 0) + 0.5 * (margins == 0)))))


@functools.lru_cache(maxsize=1)
def _blas_controller():
    """threadpoolctl's controller, built once per process (finding the BLAS libraries takes ~4 ms).

    SciPy's modules the fit uses are imported first, so that every BLAS a fit can call is loaded
    when the controller lists them.
    """
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.sparse.csgraph  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _log(z: float) -> float:
    return math.log(z) if z > 0 else -math.inf
