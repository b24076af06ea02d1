"""`RankingData`: documents grouped into queries, the one data model of lrank."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np


def _positions(index: Any, n: int, what: str) -> np.ndarray:
    """Positions (int64, 1-d) from integer positions or a boolean mask of length ``n``; ``what`` ("query",
    "document") names them in the error. Integral floats are taken as positions; a boolean mask used to
    be cast to positions 0 and 1."""
    a = np.asarray(index)
    if a.dtype == np.bool_:
        if a.shape != (n,):
            raise IndexError(f"a boolean mask of {what} positions needs {n} entries, got shape {a.shape}")
        return np.flatnonzero(a).astype(np.int64)
    a = a.ravel()
    if a.size and not np.issubdtype(a.dtype, np.integer):
        try:
            as_int = a.astype(np.int64)
        except (TypeError, ValueError):
            raise TypeError(f"{what} positions must be integers, got dtype {a.dtype}") from None
        if not np.array_equal(as_int, a):
            raise TypeError(f"{what} positions must be integers, got {a[as_int != a][0].item()!r}")
        return as_int
    return a.astype(np.int64)


class RankingDataError(ValueError):
    """Raised when arrays do not form a valid ranking data set."""


class Float32CastWarning(UserWarning):
    """Storing features as float32 lost information: distinct values merged, or tiny values became 0."""


class Fold(NamedTuple):
    """One cross-validation fold: train, validation (or None) and test sets.

    Parameters
    ----------
    train : RankingData
        The training set.
    valid : RankingData or None
        The validation set; None when the fold has none (``validation=False`` in `RankingData.kfold`,
        ``mslr-sample``, or a split a ``FoldFiles`` does not load).
    test : RankingData
        The test set.
    """

    train: RankingData
    valid: RankingData | None
    test: RankingData


class CriticalPairs(NamedTuple):
    """Critical pairs ``(hi, lo, weight)``: row ``hi`` must be ranked above row ``lo``.

    Parameters
    ----------
    hi : ndarray of shape (n_pairs,)
        Row (document) index of the higher-labelled document of each pair (int64).
    lo : ndarray of shape (n_pairs,)
        Row index of the lower-labelled document, in the same query as ``hi`` (int64).
    weight : ndarray of shape (n_pairs,)
        Weight of each pair (float64; see `RankingData.pairs` for the weightings).
    """

    hi: np.ndarray
    lo: np.ndarray
    weight: np.ndarray


#: The label contract: every relevance label is an integer with ``0 <= label < LABEL_BOUND``.
#: 31 (labels 0..30, the range of LightGBM's default ``label_gain``) keeps every metric exact: the largest
#: gain 2**30 - 1 is exact in float64 and a query's DCG sum stays far from overflow, so no query's NDCG
#: can become NaN. Labels outside the range are refused where data enters (`RankingData`,
#: `lrank.data.load_letor`, `lrank.metrics.evaluate`), never wrapped or clipped.
LABEL_BOUND = 31


def label_error(i: int, value: Any, where: str | None = None) -> str | None:
    """Why ``value`` (the label of document ``i``) breaks the label contract, or None if it is fine.

    Parameters
    ----------
    i : int
        Position of the document whose label ``value`` is; named in the message.
    value : object
        The label: a number or a NumPy scalar (anything that is not a number breaks the contract).
    where : str or None, default None
        Replaces ``label of document i`` at the start of the message, e.g. ``"file.txt:12: label"``
        (`lrank.data.load_letor` names the file and line); None: ``label of document i``.

    Returns
    -------
    str or None
        The message (the value, the rule it breaks, how to fix it), or None when ``value`` is an
        integer (possibly stored as a float) in ``0..LABEL_BOUND - 1``.
    """
    what = where or f"label of document {i}"
    if hasattr(value, "item"):
        value = value.item()  # 2000, not np.int64(2000)
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        return f"{what} is {value!r}; labels must be integers in 0..{LABEL_BOUND - 1}"
    if not np.isfinite(v) or v != np.floor(v):
        return f"{what} is {value!r}; labels must be finite integers in 0..{LABEL_BOUND - 1}"
    if v < 0:
        return (f"{what} is {value!r}; labels must be non-negative (integers in 0..{LABEL_BOUND - 1}); "
                "shift or relabel them, e.g. RankingData.relabel")
    if v >= LABEL_BOUND:
        return (f"{what} is {value!r}; labels must be below {LABEL_BOUND} (lrank.data.LABEL_BOUND: gains "
                f"2**label - 1 stay exact); map larger grades to 0..{LABEL_BOUND - 1}, e.g. with "
                "RankingData.relabel")
    return None


def first_bad_label(y: np.ndarray) -> int | None:
    """Index of the first label that breaks the contract (0 <= integer < LABEL_BOUND), or None.

    Parameters
    ----------
    y : array-like
        Labels, usually of shape (n_docs,). Boolean labels and an empty array always pass; float labels
        must be finite and whole; any other non-integer dtype (strings, objects, complex) fails at
        index 0.

    Returns
    -------
    int or None
        Index (into the flattened ``y``) of the first bad label, for `label_error`; None when every
        label keeps the contract.
    """
    y = np.asarray(y)
    if y.dtype.kind == "b" or y.size == 0:
        return None
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y) | (y != np.floor(y)) | (y < 0) | (y >= LABEL_BOUND)
    elif y.dtype.kind in "iu":
        bad = (y < 0) | (y >= LABEL_BOUND)
    else:
        return 0
    idx = np.flatnonzero(bad)
    return int(idx[0]) if idx.size else None


#: A column whose float32 cast merges at least this fraction of its distinct values gets a
#: `Float32CastWarning` (Unix timestamps lose 99%; ordinary float64 data loses little to rounding
#: collisions: about 0.7% of 1,000,000 normal draws, one value in 80 of a column crowded near -1).
MERGE_WARN_FRACTION = 0.1
#: Rows of the first, sampled look for merged values (every row below it); a column flagged there is
#: counted exactly on all rows.
_MERGE_SAMPLE = 20_000
_F32 = np.finfo(np.float32)


def _merged_columns(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the float32 cast does to each column of ``A`` (2-d, read as float64, left unchanged), NaN
    ignored, in one sort: ``(d64, d32, pairs)``, the distinct float64 values, the distinct values left after
    the cast (non-zero values that become 0 are `as_float32`'s other warning, not merges) and an example
    pair the cast merges (``pairs[j]``, meaningful where ``d32[j] < d64[j]``). A call on a few rows (one
    query scored) does not loop over the columns in Python."""
    S = np.array(A.T, dtype=np.float64, order="C")  # a copy, each column's values side by side
    S.sort(axis=1)  # NaN sorts last: a pair of neighbours is compared only where both are numbers
    if S.shape[1] < 2:  # one row: nothing to merge
        d64 = (S.shape[1] - np.isnan(S).sum(axis=1)).astype(np.int64)
        return d64, d64.copy(), np.zeros((S.shape[0], 2))
    new64 = (S[:, 1:] != S[:, :-1]) & ~np.isnan(S[:, 1:])
    c32 = S.astype(np.float32)
    lost = new64 & (c32[:, 1:] == c32[:, :-1]) & (c32[:, 1:] != 0)
    d64 = np.count_nonzero(new64, axis=1) + ~np.isnan(S[:, 0])
    d32 = d64 - np.count_nonzero(lost, axis=1)
    first = np.argmax(lost, axis=1)[:, None]
    return d64, d32, np.hstack([np.take_along_axis(S, first, 1), np.take_along_axis(S, first + 1, 1)])


def as_float32(X: Any, name: str = "X") -> np.ndarray:
    """``X`` as C-contiguous float32 (lrank's feature type), saying what the cast loses.

    A finite value beyond float32's range is an error ("overflows float32", naming the entry); non-zero
    values that become 0 and columns whose distinct values merge (at least `MERGE_WARN_FRACTION` of
    them, e.g. Unix timestamps) get a `Float32CastWarning` with counts. float32 input is returned as it is,
    without checks; NaN (a missing value) and infinities pass through. Above 20,000 rows the merge check
    looks at every k-th row first (so it finds columns of too few, too close values, such as timestamps,
    not the rare rounding collisions of many continuous values) and counts a flagged column on all rows.

    Parameters
    ----------
    X : array-like
        Feature values, usually of shape (n_docs, n_features); the merge check runs on 2-d input only.
        Booleans, integers of at most 16 bits (exact in float32) and non-numeric dtypes are cast without
        checks; wider integers get the merge check only.
    name : str, default "X"
        The array's name in the messages (``X[3, 5] = ...``, ``X column 5: ...``).

    Returns
    -------
    ndarray
        ``X`` as C-contiguous float32, of the same shape (``X`` itself when it already is one).

    Raises
    ------
    RankingDataError
        A finite float value beyond float32's range (the message names the first such entry).
    """
    return _cast(X, name)


def _cast(X: Any, name: str, infinite: bool = True) -> np.ndarray | None:
    """`as_float32`; with ``infinite=False``, None (and no check) for a float ``X`` that holds an infinity:
    `lrank.models._base._check_array` then lets scikit-learn's check_array refuse it with its message
    (for a C-ordered float64 ``X`` the cast's own pass finds the infinities)."""
    X = np.asarray(X)
    if X.dtype == np.float32 or X.dtype.kind not in "fiu" or X.size == 0 or (
            X.dtype.kind in "iu" and X.dtype.itemsize <= 2):
        return np.ascontiguousarray(X, dtype=np.float32)
    n = X.shape[0] if X.ndim == 2 else 0
    step = 1 if n <= _MERGE_SAMPLE else -(-n // _MERGE_SAMPLE)  # the merge check's rows: every step-th
    if X.dtype == np.float64 and X.ndim == 2 and X.flags.c_contiguous:  # the usual input: one pass
        from lrank._kernels.cast import FIRST_FLUSHED, FIRST_OVER, N_FLUSHED, N_INF, N_OVER, cast_float32

        X32, changed, st = cast_float32(X, step)
        if not infinite and st[N_INF]:
            return None
        F = X.shape[1]
        if st[N_OVER]:
            _overflows(X, name, divmod(int(st[FIRST_OVER]), F), int(st[N_OVER]))
        if st[N_FLUSHED]:
            _flushes(X, name, divmod(int(st[FIRST_FLUSHED]), F), int(st[N_FLUSHED]))
        cols = np.flatnonzero(changed)
    else:  # other floats and layouts, 64-bit integers, 1-d or 3-d input: NumPy, one pass per check
        if not infinite and X.dtype.kind == "f" and np.isinf(X).any():
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            X32 = np.ascontiguousarray(X, dtype=np.float32)
        if X.dtype.kind == "f" and np.isinf(X32).any():  # one pass over the copy; the exact mask if needed
            over = np.isinf(X32) & np.isfinite(X)
            if over.any():
                _overflows(X, name, tuple(int(i) for i in np.argwhere(over)[0]), int(over.sum()))
        if X.dtype.kind == "f" and np.count_nonzero(X32) < np.count_nonzero(X):  # a non-zero value became 0
            flushed = (X32 == 0) & (X != 0)
            if flushed.any():
                _flushes(X, name, tuple(int(i) for i in np.argwhere(flushed)[0]), int(flushed.sum()))
        if X.ndim != 2:
            return X32
        with np.errstate(invalid="ignore"):  # a column exact on the rows sampled merges none of them there
            changed = (X32[::step] != X[::step]) & ~np.isnan(X32[::step])
        cols = np.flatnonzero(changed.any(axis=0))
    if cols.size == 0:
        return X32
    rows = slice(None, None, step)
    d64s, d32s, pairs = _merged_columns(X[rows] if cols.size == X.shape[1] else X[rows][:, cols])
    flagged = (d32s < d64s) & (d64s - d32s >= MERGE_WARN_FRACTION * d64s)  # on the rows sampled
    for i in np.flatnonzero(flagged):
        j, d64, d32, pair = int(cols[i]), int(d64s[i]), int(d32s[i]), (float(pairs[i, 0]), float(pairs[i, 1]))
        if n > _MERGE_SAMPLE:  # flagged on the rows sampled: the exact counts on all rows
            e64, e32, epair = _merged_columns(X[:, [j]])
            d64, d32, pair = int(e64[0]), int(e32[0]), (float(epair[0, 0]), float(epair[0, 1]))
        if d32 == d64 or d64 - d32 < MERGE_WARN_FRACTION * d64:
            continue
        warnings.warn(
            f"{name} column {j}: the float32 cast merges {d64} distinct values into {d32} (e.g. {pair[0]!r} "
            f"and {pair[1]!r} both become {float(np.float32(pair[0]))!r}; lrank stores features as float32, "
            "24 significant bits): subtract an offset (e.g. x - x.min()) or rescale this feature",
            Float32CastWarning, stacklevel=_caller_level())
    return X32


def _overflows(X: np.ndarray, name: str, idx: tuple[int, ...], count: int) -> None:
    """Raise `as_float32`'s overflow error, naming the first entry ``idx``."""
    where = ", ".join(map(str, idx))
    raise RankingDataError(
        f"{name}[{where}] = {X[idx]:g} overflows float32 (largest finite value {_F32.max:.4g}; lrank "
        f"stores features as float32): rescale the feature ({count} such values)")


def _flushes(X: np.ndarray, name: str, idx: tuple[int, ...], count: int) -> None:
    """Warn that ``count`` non-zero values become 0 in float32, naming the first entry ``idx``."""
    warnings.warn(
        f"{name}: {count} non-zero values are below float32's smallest positive value "
        f"({_F32.smallest_subnormal:.3g}) and become 0 (e.g. {name}[{', '.join(map(str, idx))}] = "
        f"{X[idx]:g}); rescale the feature if they matter", Float32CastWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the function calling this) of the first frame outside
    the lrank package: a warning points at the user's line, not at lrank's internals."""
    import os
    import sys

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1  # level 1: the function that warns
    while frame is not None and (frame.f_code.co_filename.startswith(pkg)
                                 or frame.f_code.co_filename == "<string>"):  # a dataclass's __init__
        frame, level = frame.f_back, level + 1
    return level


def _as_labels(y: Any, n: int) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise RankingDataError(f"y must be 1-d with {n} entries, got shape {y.shape}")
    if y.dtype.kind not in "iufb":
        raise RankingDataError(f"labels must be numeric, got dtype {y.dtype}")
    i = first_bad_label(y)
    if i is not None:
        raise RankingDataError(label_error(i, y[i]))
    return np.ascontiguousarray(y, dtype=np.int32)


def qptr_from_qid(qid: Any) -> tuple[np.ndarray, np.ndarray]:
    """Turn a per-document query id array into CSR offsets and the per-query ids.

    Parameters
    ----------
    qid : array-like of shape (n_docs,)
        The query id of each document (XGBoost's ``qid``): integers, strings or other comparable values,
        each query's rows contiguous. Missing or non-finite ids (NaN, None, infinity) are refused.

    Returns
    -------
    qptr : ndarray of shape (n_queries + 1,)
        CSR offsets (int64): query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    ids : ndarray of shape (n_queries,)
        The id of each query, in the order the queries appear (values of ``qid``, with its dtype).

    Raises
    ------
    RankingDataError
        If ``qid`` is not 1-d, an id is missing or not finite, or the documents of one query are not
        contiguous (a query id reappears after another one).
    """
    qid = np.asarray(qid)
    if qid.ndim != 1:
        raise RankingDataError("qid must be 1-d")
    _check_query_ids(qid)
    if qid.size == 0:
        return np.zeros(1, dtype=np.int64), qid[:0].astype(np.int64)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    ids = qid[starts]
    if np.unique(ids).size != ids.size:
        seen: set = set()
        for s, q in zip(starts, ids.tolist()):  # Python values: the message shows 5, not np.int64(5)
            if q in seen:
                raise RankingDataError(
                    f"documents of query {q!r} are not contiguous: the query reappears at document {int(s)} "
                    "(sort the rows by query, keeping each query's documents together)"
                )
            seen.add(q)
    qptr = np.r_[starts, qid.size].astype(np.int64)
    return qptr, ids


def _check_query_ids(qid: np.ndarray) -> None:
    """Refuse missing or non-finite query ids: NaN != NaN would make every such row a query of its own."""
    if qid.dtype.kind == "f" or qid.dtype.kind == "c":
        bad = ~np.isfinite(qid)
    elif qid.dtype.kind == "O":
        import pandas as pd

        bad = np.asarray(pd.isna(qid), dtype=bool)
        bad |= np.array([isinstance(q, float) and not np.isfinite(q) for q in qid], dtype=bool)
    else:
        return
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        q = qid[i].item() if hasattr(qid[i], "item") else qid[i]
        raise RankingDataError(f"qid[{i}] is {q!r}; every row needs a finite query id "
                               f"({int(bad.sum())} of {qid.size} rows have none)")


def qptr_from_group(group: Any, n_docs: int) -> np.ndarray:
    """CSR offsets from LightGBM-style per-query document counts, checked against ``n_docs`` rows.

    Parameters
    ----------
    group : array-like of shape (n_queries,)
        Number of documents of each query, in row order (LightGBM's ``group``): positive integers
        (floats are accepted when they are whole numbers).
    n_docs : int
        Number of rows (documents) the counts must sum to.

    Returns
    -------
    ndarray of shape (n_queries + 1,)
        CSR offsets (int64): ``qptr[0] = 0``, ``qptr[-1] = n_docs``; query ``q`` owns rows
        ``qptr[q]:qptr[q+1]``.

    Raises
    ------
    RankingDataError
        Naming ``group``: not 1-d, not integers (fractional counts are refused, never truncated), a count
        below 1, or counts that do not sum to ``n_docs``.
    """
    g = np.asarray(group)
    if g.ndim != 1:
        raise RankingDataError(f"group must be 1-d (documents per query), got shape {g.shape}")
    if g.dtype.kind not in "iuf":
        raise RankingDataError(f"group must hold integers (documents per query), got dtype {g.dtype}")
    if g.dtype.kind == "f":
        bad = ~np.isfinite(g) | (g != np.floor(g))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise RankingDataError(f"group[{i}] is {g[i].item()!r}; group holds the number of documents of "
                                   "each query (positive integers)")
    if (g < 1).any():
        i = int(np.flatnonzero(g < 1)[0])
        raise RankingDataError(f"group[{i}] is {g[i].item()!r}; every query needs at least one document "
                               "(group holds the number of documents of each query)")
    total = int(np.sum(g, dtype=np.float64)) if g.dtype.kind == "f" else int(np.sum(g, dtype=object))
    if total != n_docs:
        raise RankingDataError(f"group sums to {total} documents, but X has {n_docs} rows")
    return np.r_[0, np.cumsum(g.astype(np.int64))].astype(np.int64)


@dataclass(eq=False)
class RankingData:
    """Documents with graded labels, grouped into queries.

    Parameters
    ----------
    X : array-like of shape (n_docs, n_features)
        Feature values, stored as float32; NaN marks a missing value (the RankBoost paper's "unranked").
        The cast is checked (`as_float32`): a finite value beyond float32's range is an error; values
        that become 0, or a column whose distinct values merge (e.g. Unix timestamps), give a
        `Float32CastWarning`.
    y : array-like of shape (n_docs,)
        Relevance labels, integers in ``0..LABEL_BOUND - 1`` = 0..30 (stored as int32). NaN, fractional,
        negative or larger labels are an error naming the document (never wrapped or clipped).
    qptr : array-like of shape (n_queries + 1,)
        CSR offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``. Every query must be non-empty.
    qid : array-like of shape (n_queries,), optional
        The original id of each query (default ``0..n_queries-1``).
    feature_names : list of str, optional
        One name per feature column (default ``f1``, ``f2``, ...).
    provenance : dict, optional
        Where the data came from: a file and its sha256, or a generator and its seed.
    docids : array-like of str, shape (n_docs,), optional
        Each document's id (a LETOR file's ``#docid = ...``), as written to TREC run and qrels files
        (`lrank.io`); carried along by `subset`, `concat`, `take_documents` and the folds.
    comments : array-like of str, shape (n_docs,), optional
        Each document line's comment (the text after ``#``, e.g. ``docid = GX000-00-0000000 inc = 1
        prob = 0.02``; ``""`` for a line without one).

    Examples
    --------
    >>> import numpy as np
    >>> d = RankingData.from_qid(np.eye(3), [1, 0, 2], qid=[7, 7, 9])
    >>> d.n_queries, d.n_docs
    (2, 3)
    """

    X: np.ndarray
    y: np.ndarray
    qptr: np.ndarray
    qid: np.ndarray | None = None
    feature_names: list[str] | None = None
    provenance: dict = field(default_factory=dict)
    docids: np.ndarray | None = None
    comments: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = np.asarray(self.X)
        if X.ndim != 2:
            raise RankingDataError(f"X must be 2-d (n_docs, n_features), got shape {X.shape}")
        if X.dtype.kind not in "fiub":
            raise RankingDataError(f"X must be numeric, got dtype {X.dtype}")
        X = as_float32(X)
        if np.isinf(X).any():
            i, j = np.argwhere(np.isinf(X))[0]
            raise RankingDataError(f"X[{i}, {j}] is infinite; use NaN for a missing value")
        n = X.shape[0]
        self.X = X
        self.y = _as_labels(self.y, n)
        qptr = np.asarray(self.qptr)
        if qptr.ndim != 1 or qptr.size < 1 or qptr.dtype.kind not in "iu":
            raise RankingDataError("qptr must be a 1-d integer array of query offsets")
        qptr = np.ascontiguousarray(qptr, dtype=np.int64)
        if qptr[0] != 0 or qptr[-1] != n:
            raise RankingDataError(f"qptr must start at 0 and end at n_docs={n}, got {qptr[0]}..{qptr[-1]}")
        sizes = np.diff(qptr)
        if (sizes <= 0).any():
            q = int(np.flatnonzero(sizes <= 0)[0])
            raise RankingDataError(f"query {q} is empty (qptr[{q}] = qptr[{q + 1}] = {qptr[q]})")
        self.qptr = qptr
        nq = qptr.size - 1
        if self.qid is None:
            self.qid = np.arange(nq, dtype=np.int64)
        else:
            self.qid = np.asarray(self.qid)
            if self.qid.shape != (nq,):
                raise RankingDataError(f"qid must hold one id per query ({nq}), got shape {self.qid.shape}")
        if self.feature_names is None:
            self.feature_names = [f"f{j + 1}" for j in range(X.shape[1])]
        elif len(self.feature_names) != X.shape[1]:
            raise RankingDataError(
                f"{len(self.feature_names)} feature names for {X.shape[1]} features"
            )
        self.feature_names = list(self.feature_names)
        self.provenance = dict(self.provenance or {})
        self.docids = _per_document_strings(self.docids, n, "docids")
        self.comments = _per_document_strings(self.comments, n, "comments")

    # ----------------------------------------------------------------------------- constructors
    @classmethod
    def from_qid(cls, X: Any, y: Any, qid: Any, **kwargs: Any) -> RankingData:
        """Build from XGBoost-style per-document query ids (each query's rows contiguous).

        Parameters
        ----------
        X : array-like of shape (n_docs, n_features)
            Feature values (as for `RankingData`).
        y : array-like of shape (n_docs,)
            Relevance labels, integers in ``0..LABEL_BOUND - 1``.
        qid : array-like of shape (n_docs,)
            The query id of each row, each query's rows contiguous (`qptr_from_qid`). Required: None is
            a ``TypeError``.
        **kwargs : optional
            Further fields of `RankingData`: ``feature_names``, ``provenance``, ``docids``, ``comments``.

        Returns
        -------
        RankingData
            Its ``qid`` holds each query's id, in the order the queries appear.
        """
        if qid is None:
            raise TypeError("qid is required (one query id per row); use RankingData(X, y, [0, n]) for "
                            "rows that are one query")
        qptr, ids = qptr_from_qid(qid)
        n_x, n_q = np.shape(X)[0], np.shape(qid)[0]
        if n_x != n_q:
            raise RankingDataError(f"X has {n_x} rows but qid has {n_q} entries; qid needs one query id per "
                                   "row (RankingData.doc_qid, not RankingData.qid, which has one per query)")
        return cls(X, y, qptr, qid=ids, **kwargs)

    @classmethod
    def from_group(cls, X: Any, y: Any, group: Any, **kwargs: Any) -> RankingData:
        """Build from LightGBM-style per-query document counts.

        Parameters
        ----------
        X : array-like of shape (n_docs, n_features)
            Feature values (as for `RankingData`).
        y : array-like of shape (n_docs,)
            Relevance labels, integers in ``0..LABEL_BOUND - 1``.
        group : array-like of shape (n_queries,)
            Number of documents of each query, in row order; positive integers summing to ``n_docs``
            (`qptr_from_group`). Required: None is a ``TypeError``.
        **kwargs : optional
            Further fields of `RankingData`: ``qid`` (default ``0..n_queries-1``), ``feature_names``,
            ``provenance``, ``docids``, ``comments``.

        Returns
        -------
        RankingData
        """
        if group is None:
            raise TypeError("group is required (documents per query); use RankingData(X, y, [0, n]) for "
                            "rows that are one query")
        return cls(X, y, qptr_from_group(group, np.shape(X)[0]), **kwargs)

    # ------------------------------------------------------------------------------- properties
    @property
    def n_docs(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_queries(self) -> int:
        return int(self.qptr.size - 1)

    @property
    def group(self) -> np.ndarray:
        """Per-query document counts (LightGBM's ``group``)."""
        return np.diff(self.qptr)

    def doc_qid(self) -> np.ndarray:
        """Per-document query id (XGBoost's ``qid``).

        Returns
        -------
        ndarray of shape (n_docs,)
            ``qid[q]`` for every document of query ``q``.
        """
        return np.repeat(self.qid, self.group)

    def query_index(self) -> np.ndarray:
        """Per-document query position ``0..n_queries-1`` (int64)."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.group)

    def __len__(self) -> int:
        return self.n_queries

    def __repr__(self) -> str:
        src = self.provenance.get("source", "arrays")
        return (
            f"RankingData({self.n_queries} queries, {self.n_docs} documents, "
            f"{self.n_features} features, labels {self.y.min() if self.n_docs else '-'}.."
            f"{self.y.max() if self.n_docs else '-'}, source={src!r})"
        )

    # ------------------------------------------------------------------------------- relabelling
    def relabel(self, mapping: dict[int, int] | Callable[[np.ndarray], Any], name: str | None = None
                ) -> RankingData:
        """The same documents with new labels: ``mapping`` is ``{old: new}`` (every label present must
        be a key) or a function of the label array. ``name`` (e.g. ``"MQ2007-like 3 grades"``) goes
        into ``provenance["relabel"]``.

        Parameters
        ----------
        mapping : dict or callable
            ``{old: new}`` with a key for every label present (a missing one is a ``RankingDataError``),
            or a function that takes a copy of ``y`` (int32 array of shape (n_docs,)) and returns the
            new labels. New labels must keep the label contract (integers in ``0..LABEL_BOUND - 1``).
        name : str or None, default None
            Stored in ``provenance["relabel"]``; None (or ``""``): the dict's repr, or the function's
            ``__name__``.

        Returns
        -------
        RankingData
            Same features, queries, ids, ``docids`` and ``comments``; new ``y``.

        Examples
        --------
        >>> d = RankingData.from_group(np.zeros((4, 1)), [0, 1, 3, 4], [4])
        >>> d.relabel({0: 0, 1: 1, 2: 1, 3: 2, 4: 2}).y.tolist()
        [0, 1, 2, 2]
        """
        if callable(mapping):
            y = np.asarray(mapping(self.y.copy()))
        else:
            table = {int(k): int(v) for k, v in dict(mapping).items()}
            missing = sorted(set(np.unique(self.y).tolist()) - set(table))
            if missing:
                raise RankingDataError(f"relabel: labels {missing} have no entry in the mapping {table}")
            keys = np.array(sorted(table), dtype=np.int64)
            vals = np.array([table[k] for k in keys], dtype=np.int64)
            y = vals[np.searchsorted(keys, self.y)]
        prov = dict(self.provenance, relabel=name or (repr(mapping) if not callable(mapping) else
                                                      getattr(mapping, "__name__", "function")))
        return RankingData(self.X, y, self.qptr, qid=self.qid, feature_names=self.feature_names,
                           provenance=prov, **self._strings(slice(None)))

    # -------------------------------------------------------------------------------- selection
    def subset(self, query_indices: Any) -> RankingData:
        """The queries at positions ``query_indices`` (in that order) as a new `RankingData`.

        Parameters
        ----------
        query_indices : array-like of int
            Query positions ``0..n_queries-1`` (not query ids); a position may repeat. Out-of-range
            positions (negative ones too) are an ``IndexError``.

        Returns
        -------
        RankingData
            The selected queries with their ``qid``, ``docids`` and ``comments``; ``provenance`` gains
            ``subset_of_queries`` (the number of queries taken).
        """
        idx = _positions(query_indices, self.n_queries, "query")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_queries):
            raise IndexError(f"query index out of range 0..{self.n_queries - 1}")
        sizes = self.group[idx]
        rows = (
            np.concatenate([np.arange(self.qptr[q], self.qptr[q + 1]) for q in idx])
            if idx.size
            else np.zeros(0, dtype=np.int64)
        )
        prov = dict(self.provenance, subset_of_queries=idx.size)
        return RankingData(
            self.X[rows], self.y[rows], np.r_[0, np.cumsum(sizes)], qid=self.qid[idx],
            feature_names=self.feature_names, provenance=prov, **self._strings(rows),
        )

    @staticmethod
    def concat(parts: Sequence[RankingData]) -> RankingData:
        """Queries of several data sets one after another (features must agree; ids are kept as given).

        Parameters
        ----------
        parts : sequence of RankingData
            At least one data set, all with the same number of features and, where they have feature
            names of their own (not the default ``f1, f2, ...``), the same names, which the result takes.

        Returns
        -------
        RankingData
            ``provenance`` is ``{"source": "concat", "parts": [...]}`` (each part's provenance);
            ``docids`` and ``comments`` are kept only when every part has them.
        """
        parts = list(parts)
        if not parts:
            raise RankingDataError("nothing to concatenate")
        nf = {p.n_features for p in parts}
        if len(nf) != 1:
            raise RankingDataError(f"cannot concatenate data sets with {sorted(nf)} features")
        default = [f"f{j + 1}" for j in range(parts[0].n_features)]  # the names of an unnamed data set
        named = [(i, list(p.feature_names)) for i, p in enumerate(parts) if list(p.feature_names) != default]
        for i, names in named[1:]:
            if names != named[0][1]:
                j = next(j for j, (a, b) in enumerate(zip(names, named[0][1])) if a != b)
                raise RankingDataError(f"cannot concatenate: part {i}'s feature names differ from part "
                                       f"{named[0][0]}'s (first at feature {j}: {names[j]!r} against "
                                       f"{named[0][1][j]!r})")
        sizes = np.concatenate([p.group for p in parts])
        return RankingData(
            np.concatenate([p.X for p in parts]), np.concatenate([p.y for p in parts]),
            np.r_[0, np.cumsum(sizes)], qid=np.concatenate([np.asarray(p.qid) for p in parts]),
            feature_names=named[0][1] if named else None,
            provenance={"source": "concat", "parts": [p.provenance for p in parts]},
            **{k: np.concatenate([getattr(p, k) for p in parts])
               for k in ("docids", "comments") if all(getattr(p, k) is not None for p in parts)},
        )

    def take_documents(self, rows: Any) -> RankingData:
        """Documents ``rows`` of a data set, kept in their queries (rows must keep queries contiguous).

        Parameters
        ----------
        rows : array-like of int
            Row (document) indices, in the order wanted; the rows of each query must be contiguous
            (else a ``RankingDataError``).

        Returns
        -------
        RankingData
            One query per run of rows from the same query, with that query's ``qid``.
        """
        rows = _positions(rows, self.n_docs, "document")
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_docs):
            raise IndexError(f"document index out of range 0..{self.n_docs - 1}")
        doc_q = self.query_index()[rows]
        qptr, ids = qptr_from_qid(doc_q)
        return RankingData(
            self.X[rows], self.y[rows], qptr, qid=self.qid[ids],
            feature_names=self.feature_names, provenance=dict(self.provenance), **self._strings(rows),
        )

    def kfold(self, k: int = 5, random_state: int | None = None, validation: bool = True) -> list[Fold]:
        """Split the queries into ``k`` folds, LETOR style.

        Queries are shuffled with ``random_state`` (``None`` keeps the file order) and cut into ``k``
        near-equal groups. Fold ``i`` tests on group ``i``, validates on group ``(i+1) % k`` and trains
        on the rest (3/1/1 for k = 5, as the LETOR folds); with ``validation=False`` it trains on all
        groups but ``i`` and ``valid`` is None.

        Parameters
        ----------
        k : int, default 5
            Number of folds: at least 2, at least 3 with ``validation``, at most ``n_queries``.
        random_state : int or None, default None
            Seed of the query shuffle; None: no shuffle (file order).
        validation : bool, default True
            Take a validation group; False: ``valid`` is None and training gets that group.

        Returns
        -------
        list of Fold
            ``k`` folds of query subsets (`subset`).
        """
        return [
            Fold(
                self.subset(tr),
                None if va is None else self.subset(va),
                self.subset(te),
            )
            for tr, va, te in _rotate(self.n_queries, k, random_state, validation)
        ]

    def task_folds(self, k: int = 5, random_state: int | None = None, validation: bool = True) -> list[Fold]:
        """Folds over the documents of a single-query task (the RankBoost+ protocol, 3/1/1 rotating).

        Each fold's train, validation and test sets are single-query `RankingData` holding disjoint
        documents of the task; fold ``i`` tests on part ``i`` and validates on part ``(i+1) % k``.

        Parameters
        ----------
        k : int, default 5
            Number of parts: at least 2, at least 3 with ``validation``, at most ``n_docs``.
        random_state : int or None, default None
            Seed of the document shuffle that assigns documents to parts; None: consecutive runs of
            documents. Each set keeps its documents in their original order.
        validation : bool, default True
            Take a validation part; False: ``valid`` is None and training gets that part.

        Returns
        -------
        list of Fold
            ``k`` folds of single-query data sets with the task's ``qid``. Data with more than one
            query, or fewer than ``k`` documents, is a ``RankingDataError``.
        """
        if self.n_queries != 1:
            raise RankingDataError(
                f"task_folds needs a single-query task, this data has {self.n_queries} queries"
            )
        if self.n_docs < k:
            raise RankingDataError(f"a task with {self.n_docs} documents cannot be split into {k} folds")
        return [
            Fold(self._docs(tr), None if va is None else self._docs(va), self._docs(te))
            for tr, va, te in _rotate(self.n_docs, k, random_state, validation)
        ]

    def _docs(self, rows: np.ndarray) -> RankingData:
        rows = np.sort(rows)
        return RankingData(
            self.X[rows], self.y[rows], np.array([0, rows.size]), qid=self.qid.copy(),
            feature_names=self.feature_names, provenance=dict(self.provenance), **self._strings(rows),
        )

    def _strings(self, rows: Any) -> dict:
        """``docids`` / ``comments`` of the documents ``rows`` (for the selection methods)."""
        return {k: None if getattr(self, k) is None else getattr(self, k)[rows]
                for k in ("docids", "comments")}

    # ---------------------------------------------------------------------------- pairs, stats
    def pairs(self, weighting: str = "uniform") -> CriticalPairs:
        """Critical pairs within each query: ``y[hi] > y[lo]``.

        Parameters
        ----------
        weighting : {"uniform", "query", "none"}, default "uniform"
            ``"uniform"``: every pair weighs ``1/m`` (the RankBoost initial distribution D_1);
            ``"query"``: each query's pairs share ``1/n_queries_with_pairs`` equally;
            ``"none"``: every pair weighs 1.

        Returns
        -------
        CriticalPairs
            ``hi``, ``lo`` (int64 row indices, ordered by query, then ``hi``, then ``lo``) and
            ``weight`` (float64).
        """
        from lrank._kernels.pairs import critical_pairs

        hi, lo, qof = critical_pairs(self.y, self.qptr)
        m = hi.size
        if weighting == "none":
            w = np.ones(m)
        elif weighting == "uniform":
            w = np.full(m, 1.0 / m) if m else np.zeros(0)
        elif weighting == "query":
            counts = np.bincount(qof, minlength=self.n_queries).astype(np.float64)
            nq = int((counts > 0).sum())
            w = 1.0 / (nq * counts[qof]) if m else np.zeros(0)
        else:
            raise ValueError(f"weighting must be 'uniform', 'query' or 'none', got {weighting!r}")
        return CriticalPairs(hi, lo, w)

    def n_critical_pairs(self) -> np.ndarray:
        """Number of critical pairs in each query (computed from label counts, no pair list).

        Returns
        -------
        ndarray of shape (n_queries,)
            int64 counts of pairs with ``y[hi] > y[lo]`` within each query.
        """
        from lrank._kernels.pairs import count_critical_pairs

        return count_critical_pairs(self.y, self.qptr)

    def describe(self) -> dict:
        """The statistics row of the tree-fitting paper's Table 1, plus the number of critical pairs.

        Returns
        -------
        dict
            ``"#query"``, ``"#doc"``, ``"#doc/#query"`` (0.0 without queries), ``"#feature"`` and
            ``"#critical pairs"`` (the total over all queries).
        """
        return {
            "#query": self.n_queries,
            "#doc": self.n_docs,
            "#doc/#query": self.n_docs / self.n_queries if self.n_queries else 0.0,
            "#feature": self.n_features,
            "#critical pairs": int(self.n_critical_pairs().sum()),
        }


def _per_document_strings(values: Any, n: int, name: str) -> np.ndarray | None:
    """``docids`` / ``comments`` as a 1-d str array of one entry per document (or None)."""
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.shape != (n,):
        raise RankingDataError(f"{name} must hold one string per document ({n}), got shape {arr.shape}")
    if arr.dtype.kind not in "UO":
        raise RankingDataError(f"{name} must be strings, got dtype {arr.dtype}")
    return arr.astype(str) if arr.dtype.kind == "O" else arr


def _rotate(n: int, k: int, random_state: int | None, validation: bool):
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if validation and k < 3:
        raise ValueError("k must be >= 3 when a validation part is taken")
    if n < k:
        raise RankingDataError(f"cannot split {n} items into {k} folds")
    order = np.arange(n) if random_state is None else np.random.default_rng(random_state).permutation(n)
    parts = np.array_split(order, k)
    for i in range(k):
        te = parts[i]
        va = parts[(i + 1) % k] if validation else None
        skip = {i, (i + 1) % k} if validation else {i}
        tr = np.concatenate([parts[j] for j in range(k) if j not in skip])
        yield tr, va, te


def as_ranking_data(
    X: Any, y: Any = None, *, qid: Any = None, group: Any = None, ranking_data_ok: bool = True
) -> RankingData:
    """Accept the estimator ``fit`` conventions: a `RankingData`, or ``X, y`` with ``qid`` or ``group``.

    Without ``qid`` and ``group`` it is an error, unless the caller said the rows are one query with
    ``lrank.config_context(one_query=True)``.

    Parameters
    ----------
    X : RankingData or array-like of shape (n_docs, n_features)
        A `RankingData` (returned as it is), or the feature values.
    y : array-like of shape (n_docs,) or None, default None
        Relevance labels; required with arrays, not allowed with a `RankingData`.
    qid : array-like of shape (n_docs,) or None, default None
        Per-document query ids, each query's rows contiguous (`RankingData.from_qid`). Not with
        ``group``, nor with a `RankingData`.
    group : array-like of shape (n_queries,) or None, default None
        Per-query document counts (`RankingData.from_group`). Not with ``qid``, nor with a
        `RankingData`.
    ranking_data_ok : bool, default True
        False: a `RankingData` ``X`` is a ``TypeError`` (the caller needs arrays).

    Returns
    -------
    RankingData
        ``X`` itself, or a new one; without ``qid`` and ``group`` (``one_query``) a single query with
        ``provenance={"one_query": True}``.

    Raises
    ------
    TypeError
        A missing or conflicting argument (see above), or no query structure outside ``one_query``.
    """
    if isinstance(X, RankingData):
        if not ranking_data_ok:
            raise TypeError("pass arrays, not RankingData, here")
        if y is not None or qid is not None or group is not None:
            raise TypeError("y, qid and group come from the RankingData; do not pass them as well")
        return X
    if y is None:
        raise TypeError("y is required when X is an array")
    if qid is not None and group is not None:
        raise TypeError("pass qid or group, not both")
    if qid is not None:
        return RankingData.from_qid(X, y, qid)
    if group is not None:
        return RankingData.from_group(X, y, group)
    from lrank._config import get_config

    if not get_config()["one_query"]:
        raise TypeError(
            "ranking needs query ids: pass qid= (one id per row, each query's rows contiguous) or "
            "group= (documents per query); if every row belongs to one query, say so with "
            "`with lrank.config_context(one_query=True): ...`")
    n = np.asarray(X).shape[0]
    return RankingData(X, y, np.array([0, n]), provenance={"one_query": True})
