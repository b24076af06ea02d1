"""Feature binning: candidate stump thresholds per feature and integer bin codes.

A binary stump of the RankBoost papers is ``h(x) = [f(x) > theta]``. lrank searches stumps and grows
trees over bin codes: with the thresholds ``theta_1 < ... < theta_k`` of a feature,

* code ``0`` holds the missing values (NaN), a bin below every known value;
* code ``c >= 1`` holds the values with exactly ``c - 1`` thresholds strictly below them,

so ``x > theta_j`` exactly when ``code > j``. Thresholds are midpoints of consecutive distinct known
values, as in the RankBoost+ authors' code.

Codes are ``uint8`` when every feature has at most 254 thresholds (255 value bins + the missing bin =
256 codes) and ``uint16`` otherwise. The RankBoost+ paper subsamples at most 255 thresholds; that
needs 257 codes, one more than a byte holds, so ``max_thresholds=255`` gives ``uint16`` codes and the
default ``max_thresholds=254`` is the largest that keeps ``uint8`` (LightGBM's ``max_bin=255`` makes
the same cut). The notebooks say which they use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lrank._kernels.binning import apply_thresholds

STRATEGIES = ("subsample", "quantile", "all")


@dataclass(eq=False)
class FeatureBins:
    """Per-feature thresholds and the bin codes of the data they were fitted on.

    Attributes
    ----------
    codes : ndarray of shape (n_docs, n_features), uint8 or uint16
        Bin codes (0 = missing).
    thresholds : list of ndarray
        ``thresholds[f]`` are feature ``f``'s increasing candidate thresholds (float64).
    """

    codes: np.ndarray
    thresholds: list[np.ndarray]

    @property
    def n_thresholds(self) -> np.ndarray:
        return np.array([t.size for t in self.thresholds], dtype=np.int64)

    @property
    def n_bins(self) -> np.ndarray:
        """Codes in use per feature: the missing bin plus ``k + 1`` value bins."""
        return self.n_thresholds + 2

    @property
    def max_bins(self) -> int:
        return int(self.n_bins.max()) if self.thresholds else 2

    def padded_thresholds(self) -> np.ndarray:
        """Thresholds as an ``(n_features, max_k)`` float64 array padded with +inf (for kernels)."""
        k = max((t.size for t in self.thresholds), default=0)
        out = np.full((len(self.thresholds), max(k, 1)), np.inf)
        for f, t in enumerate(self.thresholds):
            out[f, : t.size] = t
        return out

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bin codes of new data with the fitted thresholds."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != len(self.thresholds):
            raise ValueError(f"X must have {len(self.thresholds)} columns, got shape {X.shape}")
        out = np.empty(X.shape, dtype=self.codes.dtype)
        return apply_thresholds(X, self.padded_thresholds(), self.n_thresholds, out)

    def threshold_value(self, feature: int, j: int) -> float:
        """The value of stump ``[code > j]`` of ``feature`` as a raw-feature threshold ``theta_j``."""
        return float(self.thresholds[feature][j - 1])

    def __iter__(self):
        yield self.codes
        yield self.thresholds


def candidate_thresholds(values: np.ndarray) -> np.ndarray:
    """Midpoints between consecutive distinct known values (NaN ignored), float64."""
    v = np.unique(values[~np.isnan(values)].astype(np.float64))
    if v.size < 2:
        return np.zeros(0)
    mid = (v[:-1] + v[1:]) / 2.0
    # float32 data: a midpoint may round onto a value; keep thresholds strictly between values.
    return mid


def _feature_thresholds(col: np.ndarray, max_thresholds: int, strategy: str) -> np.ndarray:
    """Candidate thresholds of one feature column; for ``"quantile"`` already cut to ``max_thresholds``
    (``"subsample"`` is cut afterwards, in feature order, from the one random stream)."""
    known = np.sort(col[~np.isnan(col)]).astype(np.float64)  # one sort gives the distinct values and
    if known.size < 2:                                          # the order statistics of the quantiles
        return np.zeros(0)
    v = known[np.r_[True, known[1:] != known[:-1]]]
    if v.size < 2:
        return np.zeros(0)
    cand = (v[:-1] + v[1:]) / 2.0
    if strategy == "quantile" and cand.size > max_thresholds:
        qs = np.quantile(known, np.linspace(0, 1, max_thresholds + 2)[1:-1])
        pos = np.clip(np.searchsorted(cand, qs), 0, cand.size - 1)
        cand = np.unique(cand[pos])
    return cand


def bin_features(
    X: np.ndarray,
    max_thresholds: int = 254,
    threshold_strategy: str = "subsample",
    random_state: int | np.random.Generator | None = None,
    sample_size: int | None = 200_000,
    n_jobs: int | None = None,
) -> FeatureBins:
    """Choose per-feature candidate thresholds and return the bin codes.

    Parameters
    ----------
    X : ndarray of shape (n_docs, n_features)
        Raw features; NaN is missing.
    max_thresholds : int, default 254
        At most this many thresholds per feature. 254 keeps codes in ``uint8`` (see module docstring);
        255 reproduces the RankBoost+ paper exactly with ``uint16`` codes.
    threshold_strategy : {"subsample", "quantile", "all"}
        How the thresholds are chosen (the one name of every estimator's parameter too).
        ``"subsample"`` (the RankBoost+ paper's rule): all midpoints when a feature has at most
        ``max_thresholds`` of them, else a uniform random subset of that size.
        ``"quantile"``: midpoints nearest to ``max_thresholds`` evenly spaced quantiles of the
        known values (LightGBM-like). ``"all"``: every midpoint (``max_thresholds`` ignored).
    random_state : int, Generator or None
        Seeds the subsample (and the row sample); the same seed gives the same thresholds.
    sample_size : int or None, default 200,000
        With more rows than this, the thresholds come from this many rows drawn without replacement
        (LightGBM's ``bin_construct_sample_cnt``; seeded by ``random_state``, 0 when None); every row is
        then coded. None: always every row. Sets up to this size are binned exactly as before.
    n_jobs : int or None
        Threads for the per-feature thresholds and the coding (None: numba's thread count). The result
        does not depend on it.

    Returns
    -------
    FeatureBins
    """
    if threshold_strategy not in STRATEGIES:
        raise ValueError(f"threshold_strategy must be one of {STRATEGIES}, got {threshold_strategy!r}")
    if not isinstance(max_thresholds, (int, np.integer)) or max_thresholds < 1:
        raise ValueError(f"max_thresholds must be a positive integer, got {max_thresholds!r}")
    if sample_size is not None and (not isinstance(sample_size, (int, np.integer)) or sample_size < 2):
        raise ValueError(f"sample_size must be an integer >= 2 or None, got {sample_size!r}")
    X = np.ascontiguousarray(X, dtype=np.float32)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {X.shape}")
    if n_jobs is None:
        import numba

        n_jobs = numba.get_num_threads()
    n_jobs = max(1, int(n_jobs))
    rng = np.random.default_rng(random_state)
    n, F = X.shape
    if sample_size is not None and n > sample_size:
        srng = np.random.default_rng(0) if random_state is None else rng
        rows = np.sort(srng.choice(n, size=int(sample_size), replace=False))
        cols = np.ascontiguousarray(X[rows].T)
    else:
        cols = np.ascontiguousarray(X.T)

    def one(f: int) -> np.ndarray:
        return _feature_thresholds(cols[f], max_thresholds, threshold_strategy)

    if n_jobs > 1 and F > 1 and cols.shape[1] >= 50_000:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(n_jobs, F)) as ex:
            thresholds = list(ex.map(one, range(F)))
    else:
        thresholds = [one(f) for f in range(F)]
    cols = None  # free the column copy before coding (peak memory)
    if threshold_strategy == "subsample":
        for f in range(F):  # in feature order: one random stream, the same draws as ever
            if thresholds[f].size > max_thresholds:
                thresholds[f] = np.sort(rng.choice(thresholds[f], size=max_thresholds, replace=False))
    kmax = max((t.size for t in thresholds), default=0)
    if kmax + 2 > 65536:
        raise ValueError(f"a feature has {kmax} thresholds; at most 65534 fit the codes")
    dtype = np.uint8 if kmax + 2 <= 256 else np.uint16
    bins = FeatureBins(np.empty(X.shape, dtype=dtype), thresholds)
    apply_thresholds(X, bins.padded_thresholds(), bins.n_thresholds, bins.codes, n_jobs=n_jobs)
    return bins
