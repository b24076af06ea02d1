"""LETOR / SVMlight files with ``qid``: reading (through scikit-learn's parser), caching, writing."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import os
import re
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from lrank.data.container import RankingData, RankingDataError, first_bad_label, label_error, qptr_from_qid

#: Version of the cache files' layout (part of their names). 2: the arrays' own sha256 is stored and checked.
CACHE_VERSION = 2
_BOM = b"\xef\xbb\xbf"
_INT64 = (-(2**63), 2**63 - 1)
_LINE = re.compile(r"^\s*(\S+)\s+qid:(\S+)((?:\s+\d+:\S+)*)\s*(#.*)?$")


class LetorFormatError(ValueError):
    """A LETOR file that cannot be read; the message names the file and line."""


class LetorCacheWarning(UserWarning):
    """The binary cache of a LETOR file could not be used (damaged, edited) or written (read-only data
    folder); the file was parsed and its data returned all the same."""


def _opener(path: Path):
    """``open`` for plain files, ``gzip.open`` / ``bz2.open`` for ``.gz`` / ``.bz2`` (the suffixes
    scikit-learn's ``load_svmlight_file`` decompresses)."""
    return {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix, open)


def _open_text(path: Path) -> IO[str]:
    """The file's text (decompressed; a leading UTF-8 byte-order mark dropped), for the error paths."""
    return _opener(path)(path, "rt", encoding="utf-8-sig", errors="replace")


def _open_bytes(path: Path) -> IO[bytes]:
    """The file's bytes (decompressed), positioned after a leading UTF-8 byte-order mark if there is one."""
    fh = _opener(path)(path, "rb")
    if fh.read(len(_BOM)) != _BOM:
        fh.seek(0)
    return fh


def sha256_of(path: str | os.PathLike, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in 4 MiB chunks.

    Parameters
    ----------
    path : path-like
        The file (its bytes as stored: a ``.gz`` file is hashed compressed).
    chunk : int, default 4194304
        Bytes read at a time (4 MiB); does not change the result.

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _cache_dir() -> Path:
    from lrank.paths import data_dir

    return data_dir() / "cache"


def _find_bad_line(path: Path, n_features: int | None) -> str:
    """Scan the text for the first line that is not ``label qid:Q idx:val ...`` (called on error)."""
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            body = line.split("#", 1)[0].strip()
            if not body:
                continue
            m = _LINE.match(line.rstrip("\n"))
            if m is None:
                return f"{path}:{lineno}: not 'label qid:ID index:value ...': {line.strip()[:80]!r}"
            label, q = m.group(1), m.group(2)
            try:
                qi = int(q)
            except ValueError:
                return f"{path}:{lineno}: qid {q!r} is not an integer"
            if not _INT64[0] <= qi <= _INT64[1]:
                return f"{path}:{lineno}: qid {q} does not fit in 64 bits (query ids are read as int64)"
            try:
                lv = float(label)
            except ValueError:
                return f"{path}:{lineno}: label {label!r} is not a number"
            if not np.isfinite(lv) or lv != round(lv):
                return f"{path}:{lineno}: label {label!r} is not a finite integer"
            last = 0
            for tok in m.group(3).split():
                idx, _, val = tok.partition(":")
                try:
                    i, v = int(idx), float(val)
                except ValueError:
                    return f"{path}:{lineno}: feature {tok!r} is not index:value"
                if i < 1:
                    return f"{path}:{lineno}: feature index {i} ({tok!r}): LETOR feature indices start at 1"
                if i <= last:
                    return f"{path}:{lineno}: feature indices must increase ({tok!r} after {last})"
                if not np.isfinite(v):
                    return f"{path}:{lineno}: feature {tok!r} is not finite"
                last = i
            if n_features is not None and last > n_features:
                return f"{path}:{lineno}: feature index {last} exceeds n_features={n_features}"
    return f"{path}: could not be parsed"


def _doc_line_numbers(path: Path) -> np.ndarray:
    lines = []
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.split("#", 1)[0].strip():
                lines.append(lineno)
    return np.asarray(lines)


#: Default limit of `load_letor`'s dense feature matrix (float32 bytes): 2 GiB.
MAX_DENSE_BYTES = 2 * 1024**3
#: Above this many bytes, a dense matrix whose stored (non-zero) values fill less than `MIN_FILL` of it is
#: refused too: a huge, nearly empty feature range is almost always a typo or an id written as a feature.
SPARSE_GUARD_BYTES = 64 * 1024**2
MIN_FILL = 1e-3


def _gib(n: float) -> str:
    return f"{n / 1024**3:.3g} GiB" if n >= 1024**3 else f"{n / 1024**2:.3g} MiB"


def _check_dense_size(path: Path, X, max_dense_bytes: int | None) -> None:
    """Refuse, before allocating, a dense matrix over ``max_dense_bytes``, or a huge, nearly empty one."""
    if max_dense_bytes is None:
        return
    n, f = X.shape
    size = 4 * n * f  # float32
    fill = X.nnz / (n * f) if n * f else 1.0
    too_big = size > max_dense_bytes
    too_empty = size > SPARSE_GUARD_BYTES and fill < MIN_FILL
    if not (too_big or too_empty):
        return
    pos = int(np.argmax(X.indices)) if X.nnz else 0
    row = int(np.searchsorted(X.indptr, pos, side="right") - 1)
    line = _doc_line_numbers(path)[row] if X.nnz else 1
    why = (f"more than max_dense_bytes={max_dense_bytes:,} ({_gib(max_dense_bytes)})" if too_big else
           f"while only {X.nnz:,} values are stored ({fill:.2g} of it, below {MIN_FILL:g})")
    raise LetorFormatError(
        f"{path}:{line}: feature index {int(X.indices[pos]) + 1 if X.nnz else f} makes the dense feature "
        f"matrix {n:,} x {f:,} float32 = {_gib(size)}, {why}; refusing to allocate it. If the index is "
        "a mistake, fix the file; pass n_features= to state the number of features; or pass "
        "max_dense_bytes=None (or a larger limit) to load it anyway."
    )


def _parse(path: Path, n_features: int | None, max_dense_bytes: int | None = MAX_DENSE_BYTES
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    try:
        with _open_bytes(path) as fh:
            X, y, qid = load_svmlight_file(
                fh, n_features=n_features, query_id=True, dtype=np.float32, zero_based=False
            )
    except (ValueError, RuntimeError, OverflowError) as exc:
        raise LetorFormatError(_find_bad_line(path, n_features) + f" ({exc})") from None
    bad = first_bad_label(y)  # the label contract, checked before any cast (no int32 wrap)
    if bad is not None:
        line = _doc_line_numbers(path)[bad]
        raise LetorFormatError(label_error(bad, y[bad], where=f"{path}:{line}: label"))
    if qid.shape[0] != X.shape[0]:
        raise LetorFormatError(_find_bad_line(path, n_features) + " (a line without qid?)")
    _check_dense_size(path, X, max_dense_bytes)
    Xd = X.toarray()
    if not np.isfinite(Xd).all():
        bad = int(np.argwhere(~np.isfinite(Xd))[0][0])
        raise LetorFormatError(f"{path}:{_doc_line_numbers(path)[bad]}: a feature value is NaN or infinite")
    return Xd, y.astype(np.int32), qid.astype(np.int64)


def load_letor(
    path: str | os.PathLike,
    n_features: int | None = None,
    cache: bool = True,
    expected_sha256: str | None = None,
    max_dense_bytes: int | None = MAX_DENSE_BYTES,
) -> RankingData:
    """Read a LETOR / SVMlight ranking file (``label qid:Q 1:v 2:v ... # comment``).

    Parsing is scikit-learn's ``load_svmlight_file(query_id=True)``; the result is validated (labels
    integral, queries contiguous, no NaN) and, with ``cache=True``, stored as ``.npz`` under
    ``$LRANK_DATA/cache`` keyed by the file's sha256, so later loads run at disk speed. The cache file
    records the sha256 of its own arrays: a cache that cannot be read or does not match it (damaged,
    edited) is reported with a `LetorCacheWarning`, and the file is parsed again and the cache rewritten.
    A cache that cannot be written (read-only ``LRANK_DATA``) is reported the same way; the parsed data is
    returned either way.

    Parameters
    ----------
    path : path-like
        A text file; ``.gz`` and ``.bz2`` files are decompressed (error messages give the line of the
        decompressed text). A leading UTF-8 byte-order mark is skipped.
    n_features : int, optional
        Force the number of features (default: the largest index in the file).
    cache : bool, default True
    expected_sha256 : str, optional
        Verify the file's checksum first.
    max_dense_bytes : int or None, default `MAX_DENSE_BYTES` (2 GiB)
        The features are stored dense (float32). Before allocating, the size ``4 * n_docs *
        n_features`` is checked: above ``max_dense_bytes`` the file is refused, and so is a matrix above
        64 MiB in which fewer than 1 in 1,000 entries is stored (a huge, nearly empty feature range such
        as ``100000000:1``). The error names the file, the line holding the largest feature index and
        the size. ``None`` switches the check off.

    Notes
    -----
    The text after ``#`` on each document line is kept as ``comments`` and, when every line has
    ``docid = ...`` (LETOR 3.0 / 4.0), its value as ``docids`` (both None for a file without ``#``); TREC
    run files written by `lrank.io.write_trec_run` use them. Measured on the MSLR sample (5.8 MB): the
    extra pass costs 1.2% of the parse without comments and 3.4% with LETOR 4.0 comments; a cached load
    reads them from a small file beside the arrays (0.5-1.9 ms of a 28 ms load).

    A feature absent from a line is 0, as in SVMlight (LETOR files list every feature; the 0 is not
    a missing value). NaN features are refused: a missing value cannot be written in this format.

    Raises
    ------
    LetorFormatError
        A malformed line or a line without ``qid``; a non-numeric, NaN or fractional label; a
        non-integer qid; feature indices below 1, not increasing, or above ``n_features``; a NaN or
        infinite feature value; a qid outside the int64 range; a query whose documents are not
        contiguous; an empty file; a sha256
        that differs from ``expected_sha256``; a dense matrix over ``max_dense_bytes`` or huge and
        nearly empty. The message gives ``file:line`` where a line is at fault.
    FileNotFoundError
        No file at ``path``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no LETOR file at {path}")
    digest = sha256_of(path)
    if expected_sha256 is not None and digest != expected_sha256:
        raise LetorFormatError(f"{path}: sha256 {digest} does not match the expected {expected_sha256}")
    cfile = _cache_dir() / f"letor-v{CACHE_VERSION}-{digest}-{n_features or 0}.npz"
    arrays = _read_cache(cfile, path) if cache else None
    if arrays is None:
        arrays = _parse(path, n_features, max_dense_bytes)
        if cache:
            try:
                _write_cache(cfile, *arrays)
            except OSError as exc:  # a read-only or full data folder: the parse succeeded all the same
                warnings.warn(f"could not write the LETOR cache {cfile} ({exc}); {path} was parsed and its "
                              "data is returned, but the next load parses it again (set LRANK_DATA to a "
                              "writable folder, or pass cache=False)", LetorCacheWarning, stacklevel=2)
    X, y, qid = arrays
    docids, comments = _document_comments(path, digest, y.size, cache)
    if y.size == 0:
        raise LetorFormatError(f"{path}: no documents (empty file, or comments only)")
    try:
        qptr, ids = qptr_from_qid(qid)
    except RankingDataError:
        raise LetorFormatError(_noncontiguous_message(path, qid)) from None
    try:
        return RankingData(
            X, y, qptr, qid=ids,
            provenance={"source": "letor", "path": str(path), "sha256": digest},
            docids=docids, comments=comments,
        )
    except RankingDataError as exc:
        raise LetorFormatError(f"{path}: {exc}") from None


_DOCID = re.compile(r"(?:^|\s)docid\s*=\s*(\S+)")


def _document_comments(path: Path, digest: str, n_docs: int, cache: bool
                       ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(docids, comments)`` of the document lines, or ``(None, None)`` for a file without ``#``.

    scikit-learn's parser drops comments, so this is a second pass over the bytes: a block scan for
    ``#`` (memchr speed; most MSLR / Istella / Yahoo files have no comment at all), then, only when one
    is found, a line pass that keeps each document line's text after ``#``. ``docids`` holds the value of
    ``docid = ...`` (LETOR 3.0 / 4.0's comments) when every document line has one, else None. With
    ``cache`` the result (also "no comment") is kept beside the parsed arrays
    (``comments-v1-<sha256>.npz``), so a cached load does not read the text again; an unreadable
    one is scanned again and rewritten.
    """
    cfile = _cache_dir() / f"comments-v1-{digest}.npz"
    if cache and cfile.is_file():
        try:
            with np.load(cfile, allow_pickle=False) as z:
                has = bool(z["has_comments"])
                docids, comments = (z[k] if z[k].shape == (n_docs,) else None for k in ("docids", "comments"))
            if comments is not None or not has:
                return docids, comments
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            pass  # unreadable: scan again and rewrite
    docids = comments = None
    if _has_hash(path):
        kept = []
        with _open_bytes(path) as fh:
            for raw in fh:
                body, _, comment = raw.partition(b"#")
                if body.strip():
                    kept.append(comment.strip().decode("utf-8", errors="replace"))
        if len(kept) == n_docs:  # always, unless the parser and this pass disagree on a line
            comments = np.asarray(kept, dtype=str)
            ids = [_DOCID.search(c) for c in kept]
            if kept and all(ids):
                docids = np.asarray([m.group(1) for m in ids], dtype=str)
    if cache:
        try:
            cfile.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=cfile.parent, prefix=cfile.stem + ".", suffix=".tmp.npz")
        except OSError:  # a read-only data folder: load_letor has warned about its cache already
            return docids, comments
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, has_comments=comments is not None,
                         docids=np.zeros(0, str) if docids is None else docids,
                         comments=np.zeros(0, str) if comments is None else comments)
            os.replace(tmp, cfile)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return docids, comments


def _has_hash(path: Path, chunk: int = 1 << 22) -> bool:
    with _open_bytes(path) as fh:
        while block := fh.read(chunk):
            if b"#" in block:
                return True
    return False


def _arrays_sha256(X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> str:
    """sha256 of the cached arrays (dtypes, shapes and bytes): the cache's own checksum."""
    h = hashlib.sha256()
    for a in (X, y, qid):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape};".encode())
        h.update(a.reshape(-1).view(np.uint8))
    return h.hexdigest()


def _read_cache(cfile: Path, source: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The cached arrays, or None when absent. A cache that cannot be read, or whose arrays do not match the
    sha256 it recorded for them (damaged or edited), is reported with a `LetorCacheWarning` and not
    trusted: the caller parses ``source`` again and rewrites it."""
    if not cfile.is_file():
        return None
    try:
        with np.load(cfile, allow_pickle=False) as z:
            X, y, qid, recorded = z["X"], z["y"], z["qid"], str(z["sha256"])
        if X.ndim != 2 or y.shape != (X.shape[0],) or qid.shape != (X.shape[0],):
            raise ValueError(f"array shapes {X.shape}, {y.shape}, {qid.shape} do not fit together")
        if _arrays_sha256(X, y, qid) != recorded:
            raise ValueError("its arrays do not match the checksum it recorded for them (edited?)")
    except Exception as exc:  # noqa: BLE001 -- any failure to read a cache means: parse the source again
        warnings.warn(f"damaged LETOR cache {cfile} ({type(exc).__name__}: {exc}); parsing {source} again "
                      "and rewriting the cache", LetorCacheWarning, stacklevel=3)
        return None
    return X, y, qid


def _write_cache(cfile: Path, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> None:
    """Write atomically through a unique temporary file (parallel workers may load the same file)."""
    cfile.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cfile.parent, prefix=cfile.stem + ".", suffix=".tmp.npz")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, X=X, y=y, qid=qid, sha256=np.array(_arrays_sha256(X, y, qid)))
        os.replace(tmp, cfile)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _noncontiguous_message(path: Path, qid: np.ndarray) -> str:
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    first: dict = {}
    lines = _doc_line_numbers(path)
    for s in starts:
        q = int(qid[s])
        if q in first:
            return (
                f"{path}:{lines[s]}: qid {q} reappears (its documents began at line {lines[first[q]]}); "
                "the documents of a query must be contiguous"
            )
        first[q] = s
    return f"{path}: query ids are not contiguous"


def save_letor(data: RankingData, path: str | os.PathLike) -> None:
    """Write ``data`` as a LETOR file (one-based feature indices, ``qid:`` per line).

    NaN cannot be written in this format; a data set with missing values is an error rather than a
    silent zero.

    Parameters
    ----------
    data : RankingData
        The documents, written in their order: label ``y``, the query's ``qid``, then every feature
        (zeros too) with 9 significant digits, which give float32 values back exactly; then ``# `` and the
        document's ``comments`` entry when the data has comments (as `load_letor` read them), else
        ``# docid = <id>`` when it has ``docids``, so that `load_letor` gives both back.
    path : path-like
        The file to write (overwritten). A ``.gz`` or ``.bz2`` file is compressed, as `load_letor`
        decompresses it (a ``.gz`` file's header carries no time stamp: same data, same bytes).
    """
    if np.isnan(data.X).any():
        raise ValueError("LETOR files cannot hold missing values (NaN); impute them before saving")
    path = Path(path)
    if data.comments is not None:
        tails = [f" # {c}" if c else " #" for c in data.comments]
        bad = next((i for i, c in enumerate(data.comments) if "\n" in c or "\r" in c), None)
        if bad is not None:
            raise ValueError(f"comments[{bad}] holds a line break; a LETOR comment ends with its line")
    elif data.docids is not None:
        bad = next((i for i, d in enumerate(data.docids) if not d or d.split() != [d]), None)
        if bad is not None:
            raise ValueError(f"docids[{bad}] is {str(data.docids[bad])!r}; a docid is one word, no spaces")
        tails = [f" # docid = {d}" for d in data.docids]
    else:
        tails = [""] * data.n_docs
    qid = data.doc_qid()
    if path.suffix == ".gz":
        fh = io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")
    else:
        fh = _opener(path)(path, "wt", encoding="utf-8")
    with fh:
        for i in range(data.n_docs):
            feats = " ".join(f"{j + 1}:{float(v):.9g}" for j, v in enumerate(data.X[i]))
            fh.write(f"{int(data.y[i])} qid:{qid[i]} {feats}{tails[i]}\n")
