"""Per-query ranking metrics: NDCG, MeanNDCG, MAP, ERR, P@k, MRR, WTA, pair losses and expectations.

Everything takes flat arrays: labels ``y`` (integers ``0 <= y < 31``, lrank's label contract
`lrank.data.LABEL_BOUND`: every gain 2^rel - 1 is exact, so no query's value can be NaN; other labels
are refused with the document named), ``scores`` (higher = ranked
higher) and CSR query offsets ``qptr`` (query ``q`` owns rows ``qptr[q]:qptr[q+1]``, as in
:class:`lrank.RankingData`). :func:`evaluate` sorts every query once and computes any number of
metrics from that one sort; the per-metric functions (:func:`ndcg`, :func:`average_precision`, ...)
return one float64 value per query.

Conventions (the defaults are the first option of each)
-------------------------------------------------------
gain
    ``"exp"``: 2^rel - 1 (LightGBM, XGBoost, RankLib, gdeval and the papers); ``"linear"``: rel
    (``sklearn.metrics.ndcg_score``, trec_eval's ``ndcg``).
discount
    ``"log2"``: 1/log2(i+1) at 1-based position i; ``"jk"``: Jarvelin & Kekalainen's 1 for i = 1 and
    1/log2(i) after (the LETOR 3.0 / 4.0 evaluation scripts and the BoostingTree paper's MQ2007
    results; its position 1 and 2 have the same discount).
empty
    Value of a query without a relevant document, where the metric is undefined: ``0.0`` (default;
    trec_eval / ir-measures score such a query 0, tested; so do, as far as we know, the LETOR Perl
    scripts and RankLib), ``1.0`` (LightGBM's ``ndcg``, tested, and XGBoost's ``ndcg``) or ``"skip"``
    (NaN in per-query output; excluded from the mean). "No relevant document" means: for ``ndcg``,
    ``mean_ndcg`` and ``err``, every label is 0 (the ideal DCG is 0); for ``map``, ``p@k``, ``mrr``
    and ``wta``, no label reaches ``rel_threshold``. An empty query (``qptr[q] == qptr[q+1]``)
    counts as one without a relevant document.
ties
    Documents with equal scores are ordered ``"stable"``: by their order within the query (the
    order of the rows). ``"pessimistic"`` puts the lowest label first among tied scores (the worst
    case), ``"optimistic"`` the highest (the best case). LightGBM's ``ndcg`` breaks ties the
    ``"stable"`` way too (tested); ``sklearn.metrics.ndcg_score`` instead
    averages over tied orders; the RankBoost paper's expectations over random tie-breaking are the
    separate ``expected_*`` metrics, which do not depend on ``ties``.
cut-offs
    ``ndcg@k``, ``err@k`` with ``k`` larger than a query use all of its documents (the ideal DCG is cut
    at the same depth); ``p@k`` always divides by ``k`` (trec_eval's ``P_k``: missing positions count
    as non-relevant). A cut-off is a positive integer (at most 2**63 - 1); every position is the name
    without ``@k`` (``"ndcg"``) or ``k=None`` in the per-metric functions. ``"ndcg@0"`` and ``k=0`` are
    refused alike.
NaN scores
    Are an error (a ``ValueError`` naming the first one): replace them with ``-inf`` to rank such
    documents last.

Metric names
------------
``ndcg@k``, ``ndcg`` (all positions), ``dcg@k``, ``mean_ndcg`` (LETOR 4.0's MeanNDCG, BoostingTree
Sec. 4.1: the average of NDCG@1..n_q over the positions of each query), ``map`` (average precision
with ``rel_threshold``), ``err@k`` (expected reciprocal rank with the gdeval / RankLib grade scale
R = (2^g - 1) / 2^max_grade, ``max_grade`` = 4), ``p@k``, ``mrr`` (reciprocal rank of the first
relevant document), ``wta`` (winner takes all: 1 if the top-ranked document has the query's maximum
label, else 0), ``r1`` and ``r2`` (RankBoost+ Eq. 3-4: the fraction of the query's critical pairs that
are misordered, a tie counting as one resp. one half; NaN for a query without a critical pair),
``expected_disagreement``, ``expected_ap``, ``expected_prot``, ``expected_coverage`` (RankBoost Sec.
6.2.4 and App. A, Eq. 22: expectations over a uniformly random breaking of the ties in the scores).

For the ``expected_*`` precision measures a document is *good*, as in the RankBoost paper's movie
task, when it has its query's highest label (``good="max"``, the paper's bipartite reading); pass an
integer ``good`` to call every document with a label ``>= good`` good instead. A query with no good
document gets ``empty``; a query whose documents are all good scores 1. ``expected_disagreement``
equals ``r2`` (the paper's Eq. 21 / RankBoost+ Eq. 4): it is computed by a different kernel.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lrank._kernels import metrics as _k
from lrank.data.container import LABEL_BOUND, first_bad_label, label_error

__all__ = [
    "Evaluator",
    "training_measure",
    "per_query_measure",
    "MetricSpec",
    "average_precision",
    "dcg",
    "err",
    "evaluate",
    "expected_ap",
    "expected_coverage",
    "expected_disagreement",
    "expected_prot",
    "ideal_dcg",
    "mean_ndcg",
    "metric_names",
    "ndcg",
    "parse_metric",
    "precision",
    "r1",
    "r2",
    "random_guessing",
    "rank_order",
    "reciprocal_rank",
    "wta",
]

_GAINS = {"exp": _k.GAIN_EXP, "linear": _k.GAIN_LINEAR}
_DISCOUNTS = {"log2": _k.DISC_LOG2, "jk": _k.DISC_JK}
_TIES = {"stable": _k.TIES_STABLE, "pessimistic": _k.TIES_PESSIMISTIC, "optimistic": _k.TIES_OPTIMISTIC}

# name -> (kind, kernel code, cut-off: "required" | "optional" | "none")
_METRICS: dict[str, tuple[str, int, str]] = {
    "ndcg": ("sorted", _k.NDCG, "optional"),
    "dcg": ("sorted", _k.DCG, "optional"),
    "mean_ndcg": ("sorted", _k.MEAN_NDCG, "none"),
    "map": ("sorted", _k.MAP, "none"),
    "err": ("sorted", _k.ERR, "optional"),
    "p": ("sorted", _k.PREC, "required"),
    "mrr": ("sorted", _k.MRR, "none"),
    "wta": ("sorted", _k.WTA, "none"),
    "r1": ("pairs", 0, "none"),
    "r2": ("pairs", 1, "none"),
    "expected_disagreement": ("disagreement", 0, "none"),
    "expected_ap": ("expected", 0, "none"),
    "expected_prot": ("expected", 1, "none"),
    "expected_coverage": ("expected", 2, "none"),
}
_NAME_RE = re.compile(r"^([a-z_0-9]+?)(?:@(\d+))?$")
_K_MAX = 2**63 - 1  # the kernels' int64


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name: ``base`` (e.g. ``"ndcg"``), cut-off ``k`` (0 = all positions).

    Made by `parse_metric`.

    Parameters
    ----------
    name : str
        The name as written (the key of `evaluate`'s result), e.g. ``"ndcg@10"``.
    base : str
        The base name, one of `metric_names`, e.g. ``"ndcg"``.
    k : int
        The cut-off; 0 for every position (no ``@k``).
    kind : {"sorted", "pairs", "disagreement", "expected"}
        How `evaluate` computes the metric: from the labels in ranked order (the metrics `Evaluator`
        computes), from the critical pairs (``r1``, ``r2``), by the expected-disagreement kernel, or as an
        expectation over random tie-breaking (``expected_ap``, ``expected_prot``, ``expected_coverage``).
    code : int
        For ``"sorted"``, the metric's code in ``lrank._kernels.metrics`` (``NDCG``, ``MAP``, ...); for
        ``"pairs"`` and ``"expected"``, the position of the metric in its kernel's output (``r1`` 0,
        ``r2`` 1; ``expected_ap`` 0, ``expected_prot`` 1, ``expected_coverage`` 2); 0 for
        ``"disagreement"``.
    """

    name: str
    base: str
    k: int
    kind: str
    code: int


def parse_metric(name: str) -> MetricSpec:
    """Parse a metric name such as ``"ndcg@10"``, ``"map"`` or ``"err@20"``.

    Parameters
    ----------
    name : str
        A base name of `metric_names`, followed by ``@k`` (a positive integer cut-off) where the metric
        takes one (``p`` needs it). Read in lower case and without surrounding blanks; the spec keeps
        ``name`` as given.

    Returns
    -------
    MetricSpec
        The parsed name; ``k`` is 0 without a cut-off.

    Raises
    ------
    ValueError
        For a name that is not a string, an unknown name, a missing cut-off (``"p"``), one given where
        none is allowed, or a cut-off of 0 or above ``2**63 - 1``.
    """
    if not isinstance(name, str):
        raise ValueError(f"a metric name must be a string, got {name!r}")
    m = _NAME_RE.match(name.strip().lower())
    base = m.group(1) if m else None
    if base not in _METRICS:
        known = ", ".join(f"{b}@k" if c == "required" else (f"{b}[@k]" if c == "optional" else b)
                          for b, (_, _, c) in _METRICS.items())
        raise ValueError(f"unknown metric {name!r}; known metrics: {known}")
    kind, code, cut = _METRICS[base]
    k_text = m.group(2)
    if k_text is None and cut == "required":
        raise ValueError(f"metric {name!r} needs a cut-off, e.g. '{base}@10'")
    if k_text is not None and cut == "none":
        raise ValueError(f"metric {base!r} takes no cut-off, got {name!r}")
    k = int(k_text) if k_text is not None else 0
    if k_text is not None and k < 1:
        raise ValueError(f"the cut-off of {name!r} must be at least 1 (write {base!r} for every position)")
    if k > _K_MAX:
        raise ValueError(f"the cut-off of {name!r} is too large: at most 2**63 - 1 (write {base!r} for every "
                         "position)")
    return MetricSpec(name=name, base=base, k=k, kind=kind, code=code)


# ---------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------
def _check_inputs(y: Any, scores: Any, qptr: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(y)
    scores = np.asarray(scores)
    if y.ndim != 1 or scores.ndim != 1:
        raise ValueError(f"y and scores must be 1-d, got shapes {y.shape} and {scores.shape}")
    if y.shape[0] != scores.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but scores has {scores.shape[0]}")
    if y.dtype.kind not in "iufb":
        raise ValueError(f"labels must be numeric, got dtype {y.dtype}")
    if scores.dtype.kind not in "iufb":
        raise ValueError(f"scores must be numeric, got dtype {scores.dtype}")
    sf = np.ascontiguousarray(scores, dtype=np.float64)
    if y.dtype in _FAST_LABEL_DTYPES and y.flags.c_contiguous:  # one numba pass; NumPy below on failure
        ok, yf = _k.labels_scores_ok(y, sf, float(LABEL_BOUND))
        if ok:
            return yf, sf, _check_qptr(qptr, yf.size)
    i = first_bad_label(y)
    if i is not None:  # the label contract of lrank.data (0 <= integer < LABEL_BOUND): exact or refused
        raise ValueError(label_error(i, y[i]))
    yf = np.ascontiguousarray(y, dtype=np.float64)
    nan = np.isnan(sf)
    if nan.any():
        raise _nan_scores_error(nan)
    return yf, sf, _check_qptr(qptr, yf.size)


def _nan_scores_error(nan: np.ndarray) -> ValueError:
    """The error for NaN scores (`evaluate`'s and `Evaluator`'s): ``nan`` is the mask of the NaN scores
    (at least one), the first is named and all are counted."""
    i = int(np.flatnonzero(nan)[0])
    return ValueError(
        f"score of document {i} is NaN ({int(nan.sum())} NaN scores in all); "
        "replace them, e.g. with -inf to rank those documents last"
    )


_FAST_LABEL_DTYPES = tuple(np.dtype(t) for t in (np.int64, np.int32, np.float64))


def _check_qptr(qptr: Any, n_docs: int) -> np.ndarray:
    qp = np.asarray(qptr)
    if qp.ndim != 1 or qp.size < 1 or qp.dtype.kind not in "iu":
        raise ValueError("qptr must be a 1-d integer array of query offsets (n_queries + 1 entries)")
    qp = np.ascontiguousarray(qp, dtype=np.int64)
    if qp[0] != 0 or qp[-1] != n_docs:
        raise ValueError(f"qptr must start at 0 and end at n_docs={n_docs}, got {qp[0]}..{qp[-1]}")
    if qp.size > 1 and np.any(np.diff(qp) < 0):
        q = int(np.flatnonzero(np.diff(qp) < 0)[0])
        raise ValueError(f"qptr must be non-decreasing; qptr[{q}] = {qp[q]} > qptr[{q + 1}] = {qp[q + 1]}")
    return qp


def _option(value: Any, table: dict[str, int], what: str) -> int:
    if value not in table:
        raise ValueError(f"{what} must be one of {sorted(table)}, got {value!r}")
    return table[value]


def _empty_value(empty: Any) -> float:
    if isinstance(empty, str):
        if empty == "skip":
            return float("nan")
        raise ValueError(f"empty must be a number (0.0, 1.0) or 'skip', got {empty!r}")
    try:
        return float(empty)
    except (TypeError, ValueError):
        raise ValueError(f"empty must be a number (0.0, 1.0) or 'skip', got {empty!r}") from None


def _check_max_grade(specs: list[MetricSpec], top: float, max_grade: int) -> None:
    """Where an ``err[@k]`` is asked for, refuse a label above ``max_grade`` (the top of its grade scale);
    ``top`` is the largest label (-1 for none)."""
    if any(s.base == "err" for s in specs) and top > max_grade:
        raise ValueError(f"err@k: label {top:g} exceeds max_grade={max_grade}; raise max_grade")


def _int32_inputs(y: Any, scores: Any, qptr: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """`_check_inputs` for C-contiguous int32 labels without their float64 copy: ``(y, scores as float64,
    qptr as int64, largest label)``, or None for any other labels or when a check fails (`_check_inputs`
    then finds and reports the problem). The sorted metrics' kernel reads int32 labels as they are (the
    same values, so the same bits as with the float64 copy)."""
    y = np.asarray(y)
    scores = np.asarray(scores)
    if y.dtype != np.int32 or y.ndim != 1 or not y.flags.c_contiguous or scores.shape != y.shape \
            or scores.dtype.kind not in "iufb":
        return None
    sf = np.ascontiguousarray(scores, dtype=np.float64)
    ok, top = _k.int_labels_scores_ok(y, sf, LABEL_BOUND)
    if not ok:
        return None
    return y, sf, _check_qptr(qptr, y.size), float(top)


def _good_mask(y_sorted: np.ndarray, ideal: np.ndarray, qptr: np.ndarray, good: Any) -> np.ndarray:
    if isinstance(good, str):
        if good != "max":
            raise ValueError(f"good must be 'max' or an integer label threshold, got {good!r}")
        top = np.zeros(y_sorted.size)
        sizes = np.diff(qptr)
        if y_sorted.size:
            top = np.repeat(ideal[qptr[:-1][sizes > 0]], sizes[sizes > 0])
        return (y_sorted == top).astype(np.uint8)
    if isinstance(good, bool) or not isinstance(good, (int, np.integer)):
        raise ValueError(f"good must be 'max' or an integer label threshold, got {good!r}")
    return (y_sorted >= good).astype(np.uint8)


# ---------------------------------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------------------------------
#: inputs with at least this many documents are sorted by the parallel twin when numba has >1 thread
PARALLEL_MIN_DOCS = 200_000


def _parallel(n_docs: int) -> bool:
    """Whether to call the parallel twin of a kernel (large input and more than one numba thread)."""
    import numba

    return n_docs >= PARALLEL_MIN_DOCS and numba.get_num_threads() > 1


def _rank_order(sf: np.ndarray, yf: np.ndarray, qp: np.ndarray, t: int) -> np.ndarray:
    """Sort every query: the serial kernel, or its parallel twin for large inputs (same output)."""
    return _k.rank_order(sf, yf, qp, t, parallel=_parallel(sf.size))


def evaluate(
    y: Any,
    scores: Any,
    qptr: Any,
    metrics: str | Iterable[str] = ("ndcg@10",),
    *,
    per_query: bool = False,
    gain: str = "exp",
    discount: str = "log2",
    empty: float | str = 0.0,
    ties: str = "stable",
    rel_threshold: int = 1,
    max_grade: int = 4,
    good: str | int = "max",
) -> dict[str, Any]:
    """Evaluate rankings of many queries at once.

    Parameters
    ----------
    y : array-like of int, shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of float, shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``; from 0 to n_docs, non-decreasing.
    metrics : str or iterable of str, default ``("ndcg@10",)``
        Metric names (see the module docstring), e.g. ``["ndcg@10", "map", "err@10"]``; one string is one
        name.
    per_query : bool, default False
        If True, return float64 arrays with one value per query (NaN where skipped) instead of means.
    gain : {"exp", "linear"}, default "exp"
        Gain of a label in ``dcg``, ``ndcg`` and ``mean_ndcg``: 2^rel - 1 or rel (see the module
        docstring).
    discount : {"log2", "jk"}, default "log2"
        Position discount of ``dcg``, ``ndcg`` and ``mean_ndcg`` (see the module docstring).
    empty : float or "skip", default 0.0
        Value of a query without a relevant document (see the module docstring) and, for the
        ``expected_*`` metrics, of a query without a good document; ``"skip"``: NaN, left out of the mean.
        ``dcg`` is never empty; ``r1``, ``r2`` and ``expected_disagreement`` give NaN to a query without
        a critical pair whatever ``empty`` is.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores (see the module docstring); the pair and ``expected_*``
        metrics do not depend on it.
    rel_threshold : int, default 1
        Lowest relevant label for ``map``, ``p@k``, ``mrr`` and ``wta``'s emptiness test.
    max_grade : int, default 4
        Top grade of ``err@k``'s scale (4 as gdeval and RankLib); larger labels are an error.
    good : "max" or int, default "max"
        Which documents are good for ``expected_ap|prot|coverage``: the query's top label (the RankBoost
        paper) or labels ``>= good``.

    Returns
    -------
    dict
        Metric name -> mean over the queries that are not skipped (float; NaN if all are skipped),
        or -> per-query float64 array with ``per_query=True``.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics is empty")
    specs = [parse_metric(n) for n in names]
    sorted_only = all(spec.kind == "sorted" for spec in specs)
    fast = _int32_inputs(y, scores, qptr) if sorted_only else None
    if fast is None:
        yf, sf, qp = _check_inputs(y, scores, qptr)
        top = float(yf.max()) if yf.size and any(s.base == "err" for s in specs) else -1.0  # err@k's only
    else:  # int32 labels (lrank's data sets): checked in one pass, read by the kernel as they are
        yf, sf, qp, top = fast
    g = _option(gain, _GAINS, "gain")
    d = _option(discount, _DISCOUNTS, "discount")
    t = _option(ties, _TIES, "ties")
    e = _empty_value(empty)
    thr = float(rel_threshold)
    _check_max_grade(specs, top, max_grade)

    if sorted_only:  # one fused pass per query, nothing stored globally
        codes = np.array([spec.code for spec in specs], dtype=np.int64)
        ks = np.array([spec.k for spec in specs], dtype=np.int64)
        # the checks let through integer labels 0 <= y < LABEL_BOUND only: the ideal is counted
        table = _k.evaluate_sorted(sf, yf, qp, t, codes, ks, g, d, e, thr, float(max_grade), LABEL_BOUND,
                                   parallel=_parallel(sf.size))
        return {spec.name: (table[j].copy() if per_query else _mean(table[j]))
                for j, spec in enumerate(specs)}

    order = _rank_order(sf, yf, qp, t)
    y_sorted = yf[order]
    ideal = _k.ideal_labels(yf, qp)
    s_sorted: np.ndarray | None = None
    pair_cache: tuple[np.ndarray, np.ndarray] | None = None
    exp_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    out: dict[str, Any] = {}
    for spec in specs:
        if spec.kind == "sorted":
            vals = _k.query_metric(y_sorted, ideal, qp, spec.code, spec.k, g, d, e, thr, float(max_grade))
        else:
            if s_sorted is None:
                s_sorted = sf[order]
            if spec.kind == "pairs":
                if pair_cache is None:
                    pair_cache = _k.pair_losses(s_sorted, y_sorted, qp)
                vals = pair_cache[spec.code]
            elif spec.kind == "disagreement":
                vals = _k.expected_disagreement(s_sorted, y_sorted, ideal, qp)
            else:
                if exp_cache is None:
                    good_mask = _good_mask(y_sorted, ideal, qp, good)
                    exp_cache = _k.expected_precisions(s_sorted, good_mask, qp, e)
                vals = exp_cache[spec.code]
        out[spec.name] = vals.copy() if per_query else _mean(vals)
    return out


class Evaluator:
    """Repeated evaluation of one set of labels and queries on new scores (e.g. every boosting step).

    ``Evaluator(y, qptr, metrics, **options)(scores)`` returns exactly (bit for bit) what
    ``evaluate(y, scores, qptr, metrics, **options)`` returns. The labels, the query offsets and the
    options are checked once, here; what depends on them only (the ideal labels and ideal DCGs, the gains,
    the discounts, the documents with a nonzero label, scratch memory) is computed once too. A call then
    checks the scores and ranks only the documents with a nonzero label (the others add nothing to any
    metric): their ranks are counted within the buckets of the score-bucketing sort of `evaluate`, with
    the same tie rule (about 2.5x faster than `evaluate` on LETOR-sized queries, MeanNDCG).

    ``ev(scores)`` returns `evaluate`'s dict of means, ``ev.score(scores)`` the first metric's mean as
    one float, ``ev.per_query(scores)`` the ``(n_metrics, n_queries)`` table of per-query values.

    Parameters
    ----------
    y : array-like of int, shape (n_docs,)
        Relevance labels, as for `evaluate`.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets, as for `evaluate`.
    metrics : str or iterable of str, default ``("ndcg@10",)``
        Metric names that `evaluate` computes from the ranking's labels alone: ``ndcg[@k]``, ``dcg[@k]``,
        ``mean_ndcg``, ``map``, ``err[@k]``, ``p@k``, ``mrr``, ``wta`` (not the pair or expectation
        metrics, which need the scores).
    gain : {"exp", "linear"}, default "exp"
        As for `evaluate`.
    discount : {"log2", "jk"}, default "log2"
        As for `evaluate`.
    empty : float or "skip", default 0.0
        As for `evaluate`.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        As for `evaluate`.
    rel_threshold : int, default 1
        As for `evaluate`.
    max_grade : int, default 4
        As for `evaluate`; checked here against the largest label.

    Raises
    ------
    ValueError
        For bad labels or offsets, an unknown or unsupported metric name or a bad option; the message
        names the parameter.

    Examples
    --------
    >>> import numpy as np
    >>> y, qptr = np.array([2, 0, 1, 0]), np.array([0, 2, 4])
    >>> ev = Evaluator(y, qptr, ["mean_ndcg"], discount="jk")
    >>> ev(np.array([0.1, 0.5, 0.3, 0.2])) == evaluate(y, [0.1, 0.5, 0.3, 0.2], qptr, ["mean_ndcg"],
    ...                                               discount="jk")
    True
    """

    def __init__(
        self,
        y: Any,
        qptr: Any,
        metrics: str | Iterable[str] = ("ndcg@10",),
        *,
        gain: str = "exp",
        discount: str = "log2",
        empty: float | str = 0.0,
        ties: str = "stable",
        rel_threshold: int = 1,
        max_grade: int = 4,
    ) -> None:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
        if not names:
            raise ValueError("metrics is empty")
        try:
            specs = [parse_metric(n) for n in names]
        except ValueError as exc:
            raise ValueError(f"metrics: {exc}") from None
        for spec in specs:
            if spec.kind != "sorted":
                raise ValueError(f"metrics: Evaluator does not compute {spec.name!r} (it needs the scores, "
                                 "not only the ranking); use evaluate")
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(f"y must be 1-d, got shape {y_arr.shape}")
        yf, _, qp = _check_inputs(y_arr, np.zeros(y_arr.shape[0]), qptr)
        self._gain = _option(gain, _GAINS, "gain")
        disc = _option(discount, _DISCOUNTS, "discount")
        self._ties = _option(ties, _TIES, "ties")
        self._empty = _empty_value(empty)
        self._thr = float(rel_threshold)
        self._max_grade = float(max_grade)
        _check_max_grade(specs, float(yf.max()) if yf.size else -1.0, max_grade)
        self.specs = specs
        self.n_docs = int(yf.size)
        self._y, self._qptr = yf, qp
        self._codes = np.array([s.code for s in specs], dtype=np.int64)
        self._ks = np.array([s.k for s in specs], dtype=np.int64)
        mmax = int(np.diff(qp).max()) if qp.size > 1 else 0
        self._tables = _fixed_tables(yf, qp, self._ties, self._gain, disc)
        # ys, gs (per document); key, idx, tk, tidx, cnt, pos (per position of the longest query, see
        # _k.evaluate_fixed; cnt also _k.place_merged's, at least 256 wide); todo (a mark per query)
        ints = np.int64
        wide = max(2 * mmax + 1, 256)
        self._scratch = (np.empty(yf.size), np.empty(yf.size), np.empty(mmax), np.empty(mmax, dtype=ints),
                         np.empty(mmax), np.empty(mmax, dtype=ints), np.empty(wide, dtype=ints),
                         np.empty(mmax, dtype=ints), np.empty(qp.size - 1, dtype=ints))
        # MeanNDCG alone (BoostingTree's measure) has its own kernel: a fit compiles one metric's code path
        self._mean_only = bool((self._codes == _k.MEAN_NDCG).all())

    def per_query(self, scores: Any) -> np.ndarray:
        """Every metric of every query, shape ``(n_metrics, n_queries)`` (row ``j``: ``metrics[j]``; NaN
        where skipped), as ``evaluate(..., per_query=True)``; a fresh array.

        Parameters
        ----------
        scores : array-like of shape (n_docs,)
            Ranking scores of the documents of ``y``, numeric; higher is ranked higher.

        Returns
        -------
        ndarray of shape (n_metrics, n_queries)
            Row ``j``: the per-query float64 values of ``metrics[j]``.

        Raises
        ------
        ValueError
            If ``scores`` is not a finite-or-infinite numeric 1-d array of ``n_docs`` entries (NaN is an
            error, as in `evaluate`).
        """
        s = np.asarray(scores)
        if s.ndim != 1 or s.shape[0] != self.n_docs:
            raise ValueError(f"scores must have shape ({self.n_docs},) like the labels, got {s.shape}")
        if s.dtype != np.float64:
            if s.dtype.kind not in "iufb":
                raise ValueError(f"scores must be numeric, got dtype {s.dtype}")
            s = s.astype(np.float64)
        elif not s.flags.c_contiguous:
            s = np.ascontiguousarray(s)
        out = np.empty((self._codes.size, self._qptr.size - 1))
        marked = self._fill(s, out, True)
        if marked > 0:  # queries whose scores need a sort (_k.place_merged): placed, then the metrics
            ys, gs, key, idx, tk, tidx, cnt, pos, todo = self._scratch
            _k.place_merged(s, self._y, self._qptr, self._ties, self._tables[2], ys, gs, key, idx, tk, tidx,
                            pos, np.empty_like(pos), cnt, todo)
            marked = self._fill(s, out, False)
        if marked < 0:
            raise _nan_scores_error(np.isnan(s))
        return out

    def _fill(self, s: np.ndarray, out: np.ndarray, place: bool) -> int:
        """One call of ``_k.evaluate_fixed`` or, for MeanNDCG alone, ``_k.evaluate_fixed_mean``."""
        if self._mean_only:
            return _k.evaluate_fixed_mean(s, self._y, self._qptr, self._ties, self._empty, self._tables,
                                          self._scratch, out, place)
        return _k.evaluate_fixed(s, self._y, self._qptr, self._ties, self._codes, self._ks, self._gain,
                                 self._empty, self._thr, self._max_grade, self._tables, self._scratch, out,
                                 place)

    def __call__(self, scores: Any) -> dict[str, float]:
        """Metric name -> mean over the queries not skipped: ``evaluate(y, scores, qptr, metrics, ...)``."""
        table = self.per_query(scores)
        return {spec.name: _mean_fast(table[j]) for j, spec in enumerate(self.specs)}

    def score(self, scores: Any) -> float:
        """The first metric's mean (the one float a training loop reads), as ``self(scores)[metrics[0]]``.

        Parameters
        ----------
        scores : array-like of shape (n_docs,)
            Ranking scores of the documents of ``y``, as for `per_query`.

        Returns
        -------
        float
            The mean over the queries not skipped (NaN if all are).
        """
        return _mean_fast(self.per_query(scores)[0])


def training_measure(y: Any, qptr: Any, metric: str, **options: Any) -> Callable[[Any], float]:
    """A function ``scores -> float`` giving ``evaluate(y, scores, qptr, [metric], **options)[metric]`` bit
    for bit: an `Evaluator`'s ``score`` where the metric is one the Evaluator computes (labels and
    queries checked once, each call ~2.5x faster), else `evaluate` itself. A boosting step's training
    measure ``f`` (BoostingTree, EXP3.P, the standard variant) is one call per step.

    Parameters
    ----------
    y : array-like of int, shape (n_docs,)
        Relevance labels, as for `evaluate`.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets, as for `evaluate`.
    metric : str
        One metric name `evaluate` knows.
    **options
        `evaluate`'s keyword options (``gain``, ``discount``, ``empty``, ``ties``, ``rel_threshold``,
        ``max_grade``, ``good``; not ``per_query``). Checked here where an `Evaluator` computes the
        metric (which ignores ``good``), at each call otherwise.

    Returns
    -------
    callable
        ``f(scores) -> float``.
    """
    opts = _evaluator_options(metric, options)
    if opts is not None:
        return Evaluator(y, qptr, [metric], **opts).score
    return functools.partial(_evaluate_one, y=y, qptr=qptr, metric=metric, options=options)  # picklable


def per_query_measure(y: Any, qptr: Any, metric: str, **options: Any) -> Callable[[Any], np.ndarray]:
    """A function ``scores -> values`` giving ``evaluate(y, scores, qptr, [metric], per_query=True,
    **options)[metric]`` bit for bit, as a float64 array of one value per query (NaN where skipped): an
    `Evaluator`'s first ``per_query`` row where the metric is one the Evaluator computes, else `evaluate`.
    For a loop that scores many rankings of one labelled set (AdaRank's candidates and rounds): the
    labels are checked once and only the Evaluator's kernels compile.

    Parameters
    ----------
    y : array-like of int, shape (n_docs,)
        Relevance labels, as for `evaluate`.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets, as for `evaluate`.
    metric : str
        One metric name `evaluate` knows.
    **options
        `evaluate`'s keyword options (``gain``, ``discount``, ``empty``, ``ties``, ``rel_threshold``,
        ``max_grade``, ``good``; not ``per_query``). Checked here where an `Evaluator` computes the
        metric (which ignores ``good``), at each call otherwise.

    Returns
    -------
    callable
        ``f(scores) -> ndarray`` of shape ``(n_queries,)``, a fresh array each call.
    """
    opts = _evaluator_options(metric, options)
    if opts is not None:
        return functools.partial(_evaluator_row, Evaluator(y, qptr, [metric], **opts))  # picklable
    return functools.partial(_evaluate_rows, y=y, qptr=qptr, metric=metric, options=options)


def _evaluator_options(metric: str, options: dict) -> dict | None:
    """``options`` for an `Evaluator` of ``metric`` (without ``good``, which only the ``expected_*``
    metrics read), or None where only `evaluate` computes the metric (pair and expectation metrics)."""
    if parse_metric(metric).kind != "sorted":
        return None
    return {k: v for k, v in options.items() if k != "good"}


def _evaluate_one(scores: Any, *, y: Any, qptr: Any, metric: str, options: dict) -> float:
    """`training_measure`'s fallback: one metric's mean by `evaluate`."""
    return float(evaluate(y, scores, qptr, [metric], **options)[metric])


def _evaluator_row(ev: Evaluator, scores: Any) -> np.ndarray:
    """`per_query_measure` by an `Evaluator` of one metric."""
    return ev.per_query(scores)[0]


def _evaluate_rows(scores: Any, *, y: Any, qptr: Any, metric: str, options: dict) -> np.ndarray:
    """`per_query_measure`'s fallback: one metric's per-query values by `evaluate`."""
    values = evaluate(y, scores, qptr, [metric], per_query=True, **options)[metric]
    return np.asarray(values, dtype=np.float64)


def _fixed_tables(labels: np.ndarray, qptr: np.ndarray, ties: int, gain: int, disc: int) -> tuple:
    """What ``_k.evaluate_fixed`` reads of the (float64) labels, computed once: ``(ideal, icum, gdoc,
    tkey, rel, rptr, dtab)``. Plain Python around one small kernel (compile time: no second sort compiled).

    ``ideal`` holds the values of ``_k.ideal_labels`` (each query's labels in decreasing order);
    ``icum[a + i]`` the ideal DCG of a query's top ``i + 1`` positions summed as ``_k.query_metric``'s
    MeanNDCG sums it; ``gdoc`` every document's gain; ``tkey`` the tie key among equal scores
    (``-label`` pessimistic, ``label`` optimistic, 0 stable); ``rel`` the rows with a nonzero label in
    document order, query ``q``'s at ``rel[rptr[q]:rptr[q + 1]]``; ``dtab`` the discounts of the
    longest query's positions (``_k.fixed_gains``').
    """
    ideal, icum, gdoc, dtab = _ideal_gains(labels, qptr, gain, disc)
    sign = 0.0 if ties == _k.TIES_STABLE else (-1.0 if ties == _k.TIES_PESSIMISTIC else 1.0)
    tkey = sign * labels + 0.0  # stable: zeros (+0.0, not -0.0)
    rel = np.flatnonzero(labels != 0.0).astype(np.int64)
    rptr = np.searchsorted(rel, qptr).astype(np.int64)
    return ideal, icum, gdoc, np.ascontiguousarray(tkey, dtype=np.float64), rel, rptr, dtab


def _ideal_gains(labels: np.ndarray, qptr: np.ndarray, gain: int, disc: int) -> tuple:
    """``(ideal, icum, gdoc, dtab)`` of the (float64) labels: each query's labels in decreasing order (the
    values of ``_k.ideal_labels``, by one stable NumPy sort), and ``_k.fixed_gains``' cumulative ideal
    DCGs, document gains and discount table. One small kernel: `Evaluator` and `ideal_dcg` share it, so
    neither compiles a sort of its own."""
    sizes = np.diff(qptr)
    qid = np.repeat(np.arange(qptr.size - 1), sizes)
    ideal = np.ascontiguousarray(labels[np.lexsort((-labels, qid))])
    icum, gdoc, dtab = _k.fixed_gains(labels, ideal, qptr, gain, disc)  # its arrays made in NumPy
    return ideal, icum, gdoc, dtab


def _mean_fast(row: np.ndarray) -> float:
    """:func:`_mean` of a contiguous row, bit for bit: without a NaN its copy ``vals[ok]`` holds the same
    values and ``np.mean`` is this sum (pairwise) over the count; a NaN sum means a skipped query."""
    v = float(np.add.reduce(row)) / row.size if row.size else float("nan")
    return v if v == v else _mean(row)


def _mean(vals: np.ndarray) -> float:
    ok = ~np.isnan(vals)
    if not ok.any():
        return float("nan")
    return float(np.mean(vals[ok]))


def _one(name: str, y: Any, scores: Any, qptr: Any, **kw: Any) -> np.ndarray:
    return evaluate(y, scores, qptr, [name], per_query=True, **kw)[name]


def _check_k(k: Any) -> int:
    """``k`` of the per-metric functions: None (every position) is 0, else a positive integer (0 is refused,
    as ``"ndcg@0"`` is)."""
    if k is None:
        return 0
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= _K_MAX:
        raise ValueError(f"k must be a positive integer (at most 2**63 - 1) or None for every position, "
                         f"got {k!r}")
    return int(k)


def _cut(base: str, k: int | None) -> str:
    kk = _check_k(k)
    return base if kk == 0 else f"{base}@{kk}"


# ---------------------------------------------------------------------------------------------------
# per-metric functions (each returns one float64 value per query)
# ---------------------------------------------------------------------------------------------------
def ndcg(y: Any, scores: Any, qptr: Any, k: int | None = 10, *, gain: str = "exp", discount: str = "log2",
         empty: float | str = 0.0, ties: str = "stable") -> np.ndarray:
    """NDCG@k per query (``k=None``: all positions): DCG@k / ideal DCG@k (BoostingTree Sec. 4.1).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    k : int or None, default 10
        Cut-off: a positive integer, or None for every position. A query shorter than ``k`` uses all its
        documents (the ideal DCG is cut at the same depth).
    gain : {"exp", "linear"}, default "exp"
        Gain of a label: 2^rel - 1 or rel.
    discount : {"log2", "jk"}, default "log2"
        Discount of 1-based position i: 1/log2(i+1), or Jarvelin & Kekalainen's 1 for i = 1 and 1/log2(i)
        after.
    empty : float or "skip", default 0.0
        Value of a query whose labels are all 0 (or that has no document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one(_cut("ndcg", k), y, scores, qptr, gain=gain, discount=discount, empty=empty, ties=ties)


def dcg(y: Any, scores: Any, qptr: Any, k: int | None = 10, *, gain: str = "exp", discount: str = "log2",
        ties: str = "stable") -> np.ndarray:
    """DCG@k per query (unnormalised; never empty).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    k : int or None, default 10
        Cut-off: a positive integer, or None for every position. A query shorter than ``k`` uses all its
        documents.
    gain : {"exp", "linear"}, default "exp"
        Gain of a label: 2^rel - 1 or rel.
    discount : {"log2", "jk"}, default "log2"
        Discount of 1-based position i: 1/log2(i+1), or Jarvelin & Kekalainen's 1 for i = 1 and 1/log2(i)
        after.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query (0 for a query without a document).
    """
    return _one(_cut("dcg", k), y, scores, qptr, gain=gain, discount=discount, ties=ties)


def mean_ndcg(y: Any, scores: Any, qptr: Any, *, gain: str = "exp", discount: str = "log2",
              empty: float | str = 0.0, ties: str = "stable") -> np.ndarray:
    """MeanNDCG per query: (1/n_q) sum_{k=1}^{n_q} NDCG@k (LETOR 4.0; BoostingTree Sec. 4.1).

    The LETOR 4.0 script and the BoostingTree paper's MQ2007 numbers use ``discount="jk"``.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    gain : {"exp", "linear"}, default "exp"
        Gain of a label: 2^rel - 1 or rel.
    discount : {"log2", "jk"}, default "log2"
        Discount of 1-based position i: 1/log2(i+1), or Jarvelin & Kekalainen's 1 for i = 1 and 1/log2(i)
        after.
    empty : float or "skip", default 0.0
        Value of a query whose labels are all 0 (or that has no document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("mean_ndcg", y, scores, qptr, gain=gain, discount=discount, empty=empty, ties=ties)


def average_precision(y: Any, scores: Any, qptr: Any, *, rel_threshold: int = 1, empty: float | str = 0.0,
                      ties: str = "stable") -> np.ndarray:
    """Average precision per query (labels ``>= rel_threshold`` are relevant); its mean is MAP.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    rel_threshold : int, default 1
        Lowest relevant label.
    empty : float or "skip", default 0.0
        Value of a query without a label ``>= rel_threshold`` (or without a document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("map", y, scores, qptr, rel_threshold=rel_threshold, empty=empty, ties=ties)


def err(y: Any, scores: Any, qptr: Any, k: int | None = 10, *, max_grade: int = 4, empty: float | str = 0.0,
        ties: str = "stable") -> np.ndarray:
    """ERR@k per query: sum_r (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^max_grade (gdeval).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    k : int or None, default 10
        Cut-off: a positive integer, or None for every position. A query shorter than ``k`` uses all its
        documents.
    max_grade : int, default 4
        Top grade of the scale (4 as gdeval and RankLib); a label above it is an error.
    empty : float or "skip", default 0.0
        Value of a query whose labels are all 0 (or that has no document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one(_cut("err", k), y, scores, qptr, max_grade=max_grade, empty=empty, ties=ties)


def precision(y: Any, scores: Any, qptr: Any, k: int = 10, *, rel_threshold: int = 1,
              empty: float | str = 0.0, ties: str = "stable") -> np.ndarray:
    """P@k per query: relevant documents among the top k, divided by k.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    k : int, default 10
        Cut-off, a positive integer (None is an error). A query shorter than ``k`` is still divided by
        ``k``.
    rel_threshold : int, default 1
        Lowest relevant label.
    empty : float or "skip", default 0.0
        Value of a query without a label ``>= rel_threshold`` (or without a document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    if k is None:
        raise ValueError("precision needs a cut-off k")
    return _one(_cut("p", k), y, scores, qptr, rel_threshold=rel_threshold, empty=empty, ties=ties)


def reciprocal_rank(y: Any, scores: Any, qptr: Any, *, rel_threshold: int = 1, empty: float | str = 0.0,
                    ties: str = "stable") -> np.ndarray:
    """Reciprocal rank of the first relevant document per query; its mean is MRR.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    rel_threshold : int, default 1
        Lowest relevant label.
    empty : float or "skip", default 0.0
        Value of a query without a label ``>= rel_threshold`` (or without a document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("mrr", y, scores, qptr, rel_threshold=rel_threshold, empty=empty, ties=ties)


def wta(y: Any, scores: Any, qptr: Any, *, rel_threshold: int = 1, empty: float | str = 0.0,
        ties: str = "stable") -> np.ndarray:
    """Winner takes all per query: 1 if the top-ranked document has the query's maximum label, else 0.

    A query whose maximum label is below ``rel_threshold`` gets ``empty``.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    rel_threshold : int, default 1
        A query needs a label ``>= rel_threshold`` to be scored.
    empty : float or "skip", default 0.0
        Value of a query without a label ``>= rel_threshold`` (or without a document); ``"skip"``: NaN.
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("wta", y, scores, qptr, rel_threshold=rel_threshold, empty=empty, ties=ties)


def r1(y: Any, scores: Any, qptr: Any) -> np.ndarray:
    """RankBoost+ Eq. 3 per query: fraction of critical pairs with h(hi) <= h(lo) (NaN: no pairs).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query; NaN for a query without a critical pair (all labels equal, or fewer
        than two documents).
    """
    return _one("r1", y, scores, qptr)


def r2(y: Any, scores: Any, qptr: Any) -> np.ndarray:
    """RankBoost+ Eq. 4 per query: misordered critical pairs plus half the tied ones (NaN: no pairs).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query; NaN for a query without a critical pair (all labels equal, or fewer
        than two documents).
    """
    return _one("r2", y, scores, qptr)


def expected_disagreement(y: Any, scores: Any, qptr: Any) -> np.ndarray:
    """RankBoost Sec. 6.2.4: expected fraction of ordered pairs misordered under random tie-breaking.

    Equal to `r2`, by a different kernel.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query; NaN for a query without a ordered pair (all labels equal, or fewer
        than two documents).
    """
    return _one("expected_disagreement", y, scores, qptr)


def expected_ap(y: Any, scores: Any, qptr: Any, *, good: str | int = "max",
                empty: float | str = 0.0) -> np.ndarray:
    """E[AP] per query under random tie-breaking: (1/K) sum_k k sum_i Pr[rank(t_k) = i] / i (Eq. 22).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    good : "max" or int, default "max"
        Which documents are good: those with the query's highest label, or those with a label ``>= good``.
    empty : float or "skip", default 0.0
        Value of a query without a good document (with ``good="max"``: only a query without documents);
        ``"skip"``: NaN.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("expected_ap", y, scores, qptr, good=good, empty=empty)


def expected_prot(y: Any, scores: Any, qptr: Any, *, good: str | int = "max",
                  empty: float | str = 0.0) -> np.ndarray:
    """E[PROT] per query: sum_i Pr[rank(t_1) = i] / i (RankBoost Sec. 6.2.4, Eq. 22).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    good : "max" or int, default "max"
        Which documents are good: those with the query's highest label, or those with a label ``>= good``.
    empty : float or "skip", default 0.0
        Value of a query without a good document (with ``good="max"``: only a query without documents);
        ``"skip"``: NaN.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("expected_prot", y, scores, qptr, good=good, empty=empty)


def expected_coverage(y: Any, scores: Any, qptr: Any, *, good: str | int = "max",
                      empty: float | str = 0.0) -> np.ndarray:
    """E[coverage] per query: sum_i Pr[rank(t_K) = i] K / i (precision of the last good document).

    The paper's text defines coverage as 1/rank(t_K) but calls it "the precision of the last good
    movie" and takes the expectation of K/rank(t_K); we follow the latter.

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    good : "max" or int, default "max"
        Which documents are good: those with the query's highest label, or those with a label ``>= good``.
    empty : float or "skip", default 0.0
        Value of a query without a good document (with ``good="max"``: only a query without documents);
        ``"skip"``: NaN.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    return _one("expected_coverage", y, scores, qptr, good=good, empty=empty)


def random_guessing(n_items: int, n_good: int) -> dict[str, float]:
    """Expected AP, PROT, coverage and disagreement of random guessing (all ``n_items`` tied).

    Computed from Eq. 22 with one tie group (R = r = 0, Q = n_items, q = n_good); the disagreement of
    a ranking that ties everything is 1/2 whenever there is an ordered pair.

    Parameters
    ----------
    n_items : int
        Number of documents, all tied; at least 1.
    n_good : int
        Number of good documents, ``1 <= n_good <= n_items``.

    Returns
    -------
    dict
        ``{"ap": ..., "prot": ..., "coverage": ..., "disagreement": ...}`` (floats; ``"disagreement"`` is
        NaN when ``n_good == n_items``: no ordered pair).
    """
    for v, name in ((n_items, "n_items"), (n_good, "n_good")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
    if n_items < 1 or not 1 <= n_good <= n_items:
        raise ValueError(f"need n_items >= 1 and 1 <= n_good <= n_items, got {n_items}, {n_good}")
    y = np.zeros(n_items, dtype=np.float64)
    y[:n_good] = 1.0
    s = np.zeros(n_items, dtype=np.float64)
    qp = np.array([0, n_items], dtype=np.int64)
    res = evaluate(y, s, qp, ["expected_ap", "expected_prot", "expected_coverage", "expected_disagreement"],
                   per_query=True)
    return {
        "ap": float(res["expected_ap"][0]),
        "prot": float(res["expected_prot"][0]),
        "coverage": float(res["expected_coverage"][0]),
        "disagreement": float(res["expected_disagreement"][0]),
    }


def ideal_dcg(
    y: Any, qptr: Any, k: int | None = 10, *, gain: str = "exp", discount: str = "log2"
) -> np.ndarray:
    """Ideal (maximum) DCG@k of every query (``k`` None: every position; else a positive integer); 0 for a
    query without a positive label.

    The ideal DCG of a query's top ``min(k, n_q)`` positions as `evaluate`'s NDCG divides by it (the same
    bits): read from the cumulative ideal DCGs of `Evaluator`'s label tables (`_ideal_gains`).

    Parameters
    ----------
    y : array-like of shape (n_docs,)
        Relevance labels: integers ``0 <= y < LABEL_BOUND`` (31); others raise ``ValueError``.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    k : int or None, default 10
        Cut-off: a positive integer, or None for every position.
    gain : {"exp", "linear"}, default "exp"
        Gain of a label: 2^rel - 1 or rel.
    discount : {"log2", "jk"}, default "log2"
        Discount of 1-based position i: 1/log2(i+1), or Jarvelin & Kekalainen's 1 for i = 1 and 1/log2(i)
        after.

    Returns
    -------
    ndarray of shape (n_queries,)
        One float64 value per query.
    """
    yf, _, qp = _check_inputs(y, np.zeros(np.asarray(y).shape[0]), qptr)
    kk = _check_k(k)
    g, d = _option(gain, _GAINS, "gain"), _option(discount, _DISCOUNTS, "discount")
    _, icum, _, _ = _ideal_gains(yf, qp, g, d)
    m = np.diff(qp)
    cut = m if kk <= 0 else np.minimum(m, kk)
    out = np.zeros(m.size)
    has = cut > 0
    out[has] = icum[qp[:-1][has] + cut[has] - 1]  # the sum of the top cut positions, in rank order
    return out


def rank_order(scores: Any, qptr: Any, y: Any = None, *, ties: str = "stable") -> np.ndarray:
    """Row indices of each query's documents in decreasing score order (global indices, per query).

    ``y`` is needed only for ``ties="pessimistic"`` / ``"optimistic"``.

    Parameters
    ----------
    scores : array-like of shape (n_docs,)
        Ranking scores; higher is ranked higher. NaN is an error.
    qptr : array-like of int, shape (n_queries + 1,)
        CSR query offsets: query ``q`` owns rows ``qptr[q]:qptr[q+1]``.
    y : array-like of shape (n_docs,) or None, default None
        Relevance labels, checked as in `evaluate` when given; None: no labels (only ``ties="stable"``).
    ties : {"stable", "pessimistic", "optimistic"}, default "stable"
        Order of documents with equal scores: their row order, lowest label first, or highest label first.

    Returns
    -------
    ndarray of shape (n_docs,)
        int64 row indices: entries ``qptr[q]:qptr[q+1]`` are query ``q``'s rows from the highest score
        down.
    """
    s = np.asarray(scores)
    t = _option(ties, _TIES, "ties")  # an unknown value is named before the labels are asked for
    if y is None:
        if ties != "stable":
            raise ValueError(f"ties={ties!r} needs the labels y")
        y = np.zeros(s.shape[0])
    yf, sf, qp = _check_inputs(y, s, qptr)
    return _rank_order(sf, yf, qp, t)


def metric_names() -> Sequence[str]:
    """The base metric names ``evaluate`` understands.

    Returns
    -------
    tuple of str
        ``"ndcg"``, ``"dcg"``, ... ``"expected_coverage"``, without cut-offs (``"p"`` is only valid with
        one: ``"p@10"``).
    """
    return tuple(_METRICS)
