"""TREC run and qrels files: writing lrank's rankings for trec_eval / ir-measures / ranx / PyTerrier, and
reading them back for `lrank eval` and `lrank compare`.

A run line is ``qid Q0 docid rank score tag`` (whitespace separated); a qrels line is ``qid iter docid
relevance``. Document ids come from the data (`RankingData.docids`, a LETOR file's ``#docid = ...``); a
data set without them (MSLR-WEB, Yahoo, Istella, generated data) gets ``d<i>``, ``i`` the document's
0-based position within its query, in the run and the qrels alike, so the two files always match.

Ties: trec_eval (and so ir-measures and PyTerrier's evaluation) ignores the rank column and orders each
query by score, then by document id in reverse string order. `evaluate_run` orders the same way; lrank's
own metrics break ties by document order instead (as LightGBM), so a run whose scores tie can evaluate
differently in trec_eval than ``lrank.metrics.evaluate`` on the scores. Ties are common: stump ensembles
(RankBoost), single-feature rankers (AdaRank) and small tree ensembles give many documents one score.
``lrank eval`` then prints, on standard error, each metric's range over every order of the ties
(``evaluate(..., ties="pessimistic")`` and ``"optimistic"``).

Gain: lrank's NDCG gives a label ``rel`` the gain ``2^rel - 1`` (LETOR's, RankLib's and LightGBM's
convention); trec_eval's ``ndcg_cut`` and ir-measures' ``nDCG`` give it ``rel``. On graded labels the two
differ; ``evaluate_run(..., gain="linear")`` (``lrank eval --gain linear``) gives trec_eval's NDCG.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lrank.data.container import RankingData


class TrecFormatError(ValueError):
    """A TREC run or qrels file that cannot be read; the message names the file and line."""


def document_ids(data: RankingData) -> np.ndarray:
    """The id of every document of ``data`` as written to TREC files (str array of ``n_docs``).

    ``data.docids`` when the data has them, else ``d<i>`` with ``i`` the document's 0-based position
    within its query.

    Parameters
    ----------
    data : RankingData
        The documents (its ``docids``, or its ``qptr`` for the ``d<i>`` ids).

    Returns
    -------
    ndarray of str, shape (n_docs,)
        In the order of the documents in ``data``.
    """
    if data.docids is not None:
        return np.asarray(data.docids, dtype=str)
    pos = np.arange(data.n_docs) - np.repeat(data.qptr[:-1], data.group)
    return np.char.add("d", pos.astype(str))


def _query_ids(data: RankingData) -> np.ndarray:
    return np.asarray([str(q) for q in data.qid])


def _check_ids(ids: np.ndarray, what: str) -> None:
    bad = np.flatnonzero([(not s) or any(c.isspace() for c in s) for s in ids])
    if bad.size:
        raise ValueError(f"{what} {ids[bad[0]]!r} (document {bad[0]}) is empty or holds whitespace: a TREC "
                         "file cannot represent it")


def write_trec_run(path: str | os.PathLike, data: RankingData, scores: Any, tag: str = "lrank") -> Path:
    """Write ``scores`` of the documents of ``data`` as a TREC run file.

    Each query's documents are written best first, ranks 1, 2, ...; equal scores keep their order in
    ``data`` (lrank's ``ties="stable"``). Scores are written with 17 significant digits, so a reader
    gets the float64 values back exactly.

    Parameters
    ----------
    path : path-like
        The file to write (overwritten).
    data : RankingData
        The queries and documents (``qid``, and ``docids`` when it has them, see `document_ids`).
    scores : array-like of float, shape (n_docs,)
        Higher is better; must be finite.
    tag : str, default "lrank"
        The run's name (last column), without whitespace.

    Returns
    -------
    Path
        ``path``.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (data.n_docs,):
        raise ValueError(f"scores must hold one value per document ({data.n_docs}), got shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError(f"scores[{int(np.flatnonzero(~np.isfinite(s))[0])}] is not finite")
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"tag must be a non-empty word without whitespace, got {tag!r}")
    docs, qids = document_ids(data), _query_ids(data)
    _check_ids(docs, "document id")
    _check_ids(qids, "query id")
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        for q in range(data.n_queries):
            lo, hi = int(data.qptr[q]), int(data.qptr[q + 1])
            order = lo + np.argsort(-s[lo:hi], kind="stable")
            fh.writelines(f"{qids[q]} Q0 {docs[i]} {r} {s[i]:.17g} {tag}\n" for r, i in enumerate(order, 1))
    return path


def write_trec_qrels(path: str | os.PathLike, data: RankingData) -> Path:
    """Write the labels of ``data`` as a TREC qrels file (``qid 0 docid label``, every document, the
    non-relevant ones too, in the data's order).

    Parameters
    ----------
    path : path-like
        The file to write (overwritten).
    data : RankingData
        The queries, documents and labels (``qid``, ``y``, and ``docids`` when it has them, see
        `document_ids`). Query and document ids must be non-empty and hold no whitespace.

    Returns
    -------
    Path
        ``path``.
    """
    docs, qids = document_ids(data), _query_ids(data)
    _check_ids(docs, "document id")
    _check_ids(qids, "query id")
    doc_q = np.repeat(qids, data.group)
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(f"{q} 0 {d} {int(r)}\n" for q, d, r in zip(doc_q, docs, data.y))
    return path


def _read_columns(path: str | os.PathLike, n_cols: int, what: str) -> tuple[Path, list[list[str]], list[int]]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no {what} file at {path}")
    rows, lines = [], []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != n_cols:
                raise TrecFormatError(f"{path}:{lineno}: a {what} line has {n_cols} fields, this one has "
                                      f"{len(parts)}: {line.strip()[:80]!r}")
            rows.append(parts)
            lines.append(lineno)
    if not rows:
        raise TrecFormatError(f"{path}: no {what} lines (empty file)")
    return path, rows, lines


def read_trec_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC run file into a DataFrame with columns ``query``, ``docid``, ``rank``, ``score``,
    ``tag`` (one row per line, in file order; ids as strings, score float64).

    Raises `TrecFormatError` naming the file and line for a line without 6 fields, a non-numeric
    score or rank, or a document listed twice for one query.

    Parameters
    ----------
    path : path-like
        The run file (``qid Q0 docid rank score tag`` per line; blank lines are skipped).

    Returns
    -------
    DataFrame
        The columns above; ``attrs["path"]`` holds the file's path.
    """
    path, rows, lines = _read_columns(path, 6, "run")
    df = pd.DataFrame(rows, columns=["query", "q0", "docid", "rank", "score", "tag"]).drop(columns="q0")
    for col, conv in (("score", float), ("rank", int)):
        try:
            df[col] = df[col].map(conv)
        except ValueError:
            k = next(i for i, v in enumerate(df[col]) if not _parses(conv, v))
            what = "an integer" if conv is int else "a number"
            raise TrecFormatError(f"{path}:{lines[k]}: {col} {df[col][k]!r} is not {what}") from None
    if not np.isfinite(df["score"].to_numpy()).all():
        k = int(np.flatnonzero(~np.isfinite(df["score"].to_numpy()))[0])
        raise TrecFormatError(f"{path}:{lines[k]}: score {rows[k][4]!r} is not finite")
    return _unique_documents(df, path, rows, lines, "appears twice in query")


def read_trec_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC qrels file into a DataFrame with columns ``query``, ``docid``, ``relevance`` (int).

    Raises `TrecFormatError` naming the file and line for a line without 4 fields, a relevance that is
    not an integer, or a document judged twice for one query.

    Parameters
    ----------
    path : path-like
        The qrels file (``qid iter docid relevance`` per line; ``iter`` is dropped, blank lines are
        skipped).

    Returns
    -------
    DataFrame
        The columns above; ``attrs["path"]`` holds the file's path.
    """
    path, rows, lines = _read_columns(path, 4, "qrels")
    df = pd.DataFrame(rows, columns=["query", "iter", "docid", "relevance"]).drop(columns="iter")
    try:
        df["relevance"] = df["relevance"].map(int)
    except ValueError:
        k = next(i for i, v in enumerate(df["relevance"]) if not _parses(int, v))
        raise TrecFormatError(f"{path}:{lines[k]}: relevance {rows[k][3]!r} is not an integer") from None
    return _unique_documents(df, path, rows, lines, "is judged twice for query")


def _unique_documents(df: pd.DataFrame, path: Path, rows: list, lines: list, what: str) -> pd.DataFrame:
    """``df`` (with its file in ``attrs["path"]``), or an error at the first document listed twice."""
    dup = df.duplicated(["query", "docid"]).to_numpy()
    if dup.any():
        k = int(np.flatnonzero(dup)[0])
        raise TrecFormatError(f"{path}:{lines[k]}: document {rows[k][2]!r} {what} {rows[k][0]!r}")
    df.attrs["path"] = str(path)
    return df


def _parses(conv: Any, v: str) -> bool:
    try:
        conv(v)
    except ValueError:
        return False
    return True


def evaluate_run(run: str | os.PathLike | pd.DataFrame, qrels: str | os.PathLike | pd.DataFrame,
                 metrics: str | list[str] = ("ndcg@10",), **metric_kwargs: Any) -> pd.DataFrame:
    """Per-query metrics of a TREC run against qrels, with lrank's metrics (`lrank.metrics.evaluate`).

    As trec_eval does: only queries that are in both files are scored; a retrieved document without a
    judgement is non-relevant, and so is a negative relevance; each query is ordered by score, ties by
    document id in reverse string order. Unlike trec_eval, NDCG's gain is ``2^rel - 1`` unless
    ``gain="linear"`` is passed (trec_eval's ``rel``), and the ideal ranking (NDCG) and the number of
    relevant documents (MAP) count the retrieved documents only: a warning says when relevant documents
    are missing from the run (a run written by `write_trec_run` from a whole data set misses none).

    Parameters
    ----------
    run, qrels : path-like or DataFrame (from `read_trec_run` / `read_trec_qrels`)
    metrics : str or sequence of str, default ("ndcg@10",)
        `lrank.metrics` names, e.g. ``["ndcg@10", "map"]``.
    **metric_kwargs
        Conventions passed to `lrank.metrics.evaluate` (``gain``, ``discount``, ``empty``, ...).

    Returns
    -------
    DataFrame
        Indexed by query id (``query``, in the run's order), one column per metric.
    """
    from lrank.metrics import evaluate

    run = run if isinstance(run, pd.DataFrame) else read_trec_run(run)
    qrels = qrels if isinstance(qrels, pd.DataFrame) else read_trec_qrels(qrels)
    judged = qrels.set_index(["query", "docid"])["relevance"]
    keep = run["query"].isin(set(qrels["query"]))
    if not keep.any():
        raise ValueError(f"the run {run.attrs.get('path', '')} and the qrels {qrels.attrs.get('path', '')} "
                         "have no query in common")
    r = run.loc[keep, ["query", "docid", "score"]].copy()
    order = {q: i for i, q in enumerate(pd.unique(r["query"]))}
    r["_q"] = r["query"].map(order)
    # trec_eval's order: score descending, then document id descending (reverse string order)
    r = r.sort_values(["_q", "score", "docid"], ascending=[True, False, False], kind="stable")
    idx = pd.MultiIndex.from_arrays([r["query"], r["docid"]])
    y = judged.reindex(idx).fillna(0).to_numpy()
    y = np.clip(y, 0, None).astype(np.int64)
    qptr = np.r_[0, np.cumsum(r.groupby("_q", sort=True).size().to_numpy())].astype(np.int64)
    rel = qrels[(qrels["relevance"] > 0) & qrels["query"].isin(order)]
    missing = ~pd.MultiIndex.from_frame(rel[["query", "docid"]]).isin(idx)
    if missing.any():
        warnings.warn(f"{int(missing.sum())} relevant documents of {rel[missing]['query'].nunique()} queries "
                      "are not in the run; lrank scores the retrieved documents only (trec_eval would count "
                      "them in the ideal ranking and in MAP's denominator)", stacklevel=2)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    vals = evaluate(y, r["score"].to_numpy(np.float64), qptr, names, per_query=True, **metric_kwargs)
    return pd.DataFrame(vals, index=pd.Index(list(order), name="query"))
