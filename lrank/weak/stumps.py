"""Binary stumps of RankBoost (Sec. 4): ``h(x) = [f_i(x) > theta]``, ``q_def`` on missing values (Eq. 9).

`BinnedStumps` holds the candidate thresholds (from `lrank.data.binning`) and the feature-major bin codes
of the training rows; `BinnedStumps.search` is WeakLearn (Fig. 3) through potentials (Eq. 10-14), and
with pair weights it is WeakLearn.2 (minimum Z, Eq. 3). The kernels live in ``lrank._kernels.stumps``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lrank._kernels import stumps as K
from lrank.data.binning import FeatureBins, bin_features


@dataclass(frozen=True)
class Stump:
    """One weak ranking (Eq. 9) and the statistics it was chosen by.

    ``feature``: column; ``bin``: ``h = [code > bin]`` on the training codes; ``threshold``: the raw
    value theta (``-inf`` for bin 0, ``+inf`` for bin k+1); ``q_def``: 0 or 1; ``r``: Eq. (10);
    ``w_minus``, ``w_zero``, ``w_plus``: W_-, W_0, W_+ (Sec. 3.2) when known (WeakLearn.2), else NaN.
    """

    feature: int
    bin: int
    threshold: float
    q_def: int
    r: float
    w_minus: float = float("nan")
    w_zero: float = float("nan")
    w_plus: float = float("nan")


class BinnedStumps:
    """Candidate stumps of every feature over binned training data.

    Parameters
    ----------
    X : ndarray (n_docs, n_features)
        Raw features, NaN = unranked (the paper's bottom symbol).
    max_thresholds : int
        Candidate thresholds per feature (255 as the RankBoost+ paper; codes are uint16 then).
    threshold_strategy : str
        Threshold choice, see `lrank.data.binning.bin_features`.
    random_state : int or None
        Seeds the threshold subsample.
    bins : FeatureBins, optional
        Use these bins instead of fitting new ones.
    """

    def __init__(self, X: np.ndarray, max_thresholds: int = 255, threshold_strategy: str = "subsample",
                 random_state: int | None = None, bins: FeatureBins | None = None) -> None:
        if bins is None:
            bins = bin_features(X, max_thresholds, threshold_strategy, random_state)
        self.bins = bins
        self.codes_t = np.ascontiguousarray(self.bins.codes.T)
        self.n_thresholds = self.bins.n_thresholds.astype(np.int64)
        self.n_bins = int(self.n_thresholds.max()) + 2 if self.n_thresholds.size else 2
        self.n_features, self.n_docs = self.codes_t.shape
        self._rows_codes: tuple[np.ndarray, np.ndarray] | None = None  # (rows, codes_t[:, rows])

    # ------------------------------------------------------------------------------------------
    def threshold(self, feature: int, j: int) -> float:
        """Raw threshold of bin ``j`` of ``feature``: -inf for 0, theta_j for 1..k, +inf for k+1."""
        k = int(self.n_thresholds[feature])
        if j <= 0:
            return -np.inf
        if j > k:
            return np.inf
        return float(self.bins.thresholds[feature][j - 1])

    def values(self, feature: int, j: int, q_def: float) -> np.ndarray:
        """h(x) on the training rows (float64)."""
        return K.stump_on_codes(self.codes_t[feature], int(j), float(q_def))

    def histogram(self, pi: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """hist[f, c] = sum of pi over rows with code c on feature f (one pass over the codes).

        With ``rows`` (the feedback instances, fixed during a fit) the codes of those rows are copied
        once into a contiguous matrix and every later call with the same rows histograms that copy with
        ``pi[rows]``: the same arithmetic as `K.potential_histogram` (same bits), without its gathers.
        """
        pi = np.ascontiguousarray(pi, dtype=np.float64)
        if rows is None:
            return K.potential_histogram_dense(self.codes_t, pi, self.n_bins)
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cached = self._rows_codes
        if cached is None or not np.array_equal(cached[0], rows):
            cached = (rows.copy(), np.ascontiguousarray(self.codes_t[:, rows]))
            self._rows_codes = cached
        return K.potential_histogram_dense(cached[1], pi[rows], self.n_bins)

    def search(self, pi: np.ndarray, *, q_def: int | None = None, rows: np.ndarray | None = None,
               cum: np.ndarray | None = None, pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               eps: float = 0.0) -> Stump | None:
        """Choose a stump from the potentials ``pi``.

        Without ``pairs``: WeakLearn (Fig. 3), max |r| (third method). With ``pairs = (hi, lo, D)``:
        WeakLearn.2, min Z = W_0 + 2 sqrt(W_- W_+) (second method). With ``cum`` (array
        ``(n_features, n_bins, 2)`` of cumulative weights): only stumps whose cumulative weight stays
        positive (WeakLearn.cum). Returns None when no allowed stump has r != 0.
        """
        qmode = -1 if q_def is None else int(q_def)
        if qmode not in (-1, 0, 1):
            raise ValueError(f"q_def must be None, 0 or 1, got {q_def!r}")
        use_cum = cum is not None
        if cum is None:
            cum = np.zeros((1, 1, 1))
        if pairs is None:
            hist = self.histogram(pi, rows)
            if use_cum:
                f, j, q, r = K.scan_third_cum(hist, self.n_thresholds, qmode, cum)
            else:
                f, j, q, r = K.scan_third(hist, self.n_thresholds, qmode)
            wm = w0 = wp = float("nan")
        else:
            hi, lo, D = pairs
            mass, count = K.pair_split_histograms(self.codes_t, hi, lo, D, self.n_bins)
            f, j, q, r, wm, w0, wp = K.scan_second(mass, count, self.n_thresholds, qmode, cum, use_cum,
                                                  float(D.sum()), float(eps))
        if f < 0:
            return None
        return Stump(int(f), int(j), self.threshold(int(f), int(j)), int(q), float(r), float(wm), float(w0),
                     float(wp))


def warmup() -> None:
    """Compile the stump kernels."""
    K.warmup()


@dataclass(frozen=True)
class FeatureRanking:
    """A [0, 1]-valued weak ranking from a raw feature (Sec. 4's first weak learner):
    ``h(x) = (f(x) - low) / (high - low)`` clipped to [0, 1], ``q_def`` where f is missing."""

    feature: int
    low: float
    high: float
    q_def: int
    r: float


class ScaledFeatures:
    """Candidate weak rankings h = scaled raw feature (one per feature and q_def in {0, 1}).

    Scaling uses each feature's training range, so h is in [0, 1] (as the first and third methods of
    Sec. 3.2 require); a constant feature scores 0. ``search`` maximises |r| = |sum_x h(x) pi(x)|
    (Eq. 5, 10) in O(n F) with two matrix-vector products.
    """

    def __init__(self, X: np.ndarray) -> None:
        X = np.asarray(X, dtype=np.float64)
        self.missing = np.isnan(X)
        with np.errstate(all="ignore"):
            low = np.where(self.missing.all(0), 0.0, np.nanmin(np.where(self.missing, np.inf, X), axis=0))
            high = np.where(self.missing.all(0), 1.0, np.nanmax(np.where(self.missing, -np.inf, X), axis=0))
        self.low = low
        # a constant feature gets a width that survives rounding: from |low| = 2**53 on, low + 1.0 is low
        # itself and h = (x - low) / (high - low) was 0 / 0 = NaN on every row (NaN alphas); the next
        # float above low keeps h = 0 there (low + 1.0 is that or larger below 2**53: the same bits)
        self.high = np.where(high > low, high, np.maximum(low + 1.0, np.nextafter(low, np.inf)))
        self.scaled = np.where(self.missing, 0.0, np.clip((X - self.low) / (self.high - self.low), 0.0, 1.0))
        self.missing_f = self.missing.astype(np.float64)
        self.n_docs, self.n_features = X.shape

    def search(self, pi: np.ndarray, *, q_def: int | None = None,
               cum: np.ndarray | None = None) -> FeatureRanking | None:
        """max |r| over features and q_def; with ``cum`` (``(n_features, 2)``) only rankings whose
        cumulative weight plus alpha (Eq. 6, sign of r) stays positive.

        The rule of the stump kernels (`lrank._kernels.stumps`): |r| within ``TIE_TOL`` of the best
        keeps the first ranking (lowest feature, then q_def 0), |r| <= ``TIE_TOL`` counts as 0, the
        cumulative weight must exceed ``TIE_TOL``; r comes from BLAS, whose last bits differ by CPU."""
        r_known = self.scaled.T @ pi
        r_miss = self.missing_f.T @ pi
        qs = (0, 1) if q_def is None else (int(q_def),)
        best = None
        for f in range(self.n_features):
            for q in qs:
                r = float(r_known[f] + q * r_miss[f])
                if abs(r) <= K.TIE_TOL or (best is not None and abs(r) <= abs(best.r) + K.TIE_TOL):
                    continue
                if cum is not None:
                    rc = min(max(r, -1.0 + 1e-15), 1.0 - 1e-15)
                    if not cum[f, q] + 0.5 * np.log((1 + rc) / (1 - rc)) > K.TIE_TOL:
                        continue
                best = FeatureRanking(f, float(self.low[f]), float(self.high[f]), q, r)
        return best

    def values(self, fr: FeatureRanking) -> np.ndarray:
        """h(x) on the training rows."""
        return np.where(self.missing[:, fr.feature], float(fr.q_def), self.scaled[:, fr.feature])


def feature_ranking_values(X: np.ndarray, feature: int, low: float, high: float, q_def: float) -> np.ndarray:
    """h(x) of a `FeatureRanking` on new data."""
    x = np.asarray(X, dtype=np.float64)[:, feature]
    return np.where(np.isnan(x), q_def, np.clip((x - low) / (high - low), 0.0, 1.0))
