"""One timing discipline for every benchmark row (issue 12 item 4).

* Two sides are timed **alternately** in one process, A, B, A, B, ..., and each side's figure is the
  **median** of at least three repeats (:func:`alternate`, :func:`per_iteration`), so both sides see the
  same load on a shared machine.
* Both sides run on the **same number of threads**; :func:`threads` pins numba's thread count for a
  block (LightGBM / XGBoost take theirs as a parameter). When one side cannot use the threads the other
  uses, the row compares CPU time instead (``timing="cpu"``).
* Per-iteration figures are ``(T(n) - T(1)) / (n - 1)`` with the **same n** on both sides.
* :func:`row` builds the row: ``status`` is ``met`` / ``missed`` against the issue's target,
  ``undecided`` where the row's own paired test cannot tell (never counted as met), or ``report`` for rows
  without a target (never counted as met); ``threads``, ``repeats``, ``timing``
  (``"wall, alternated, median"`` or ``"cpu, ..."``) and ``load`` (the 1-minute load average before the
  block) say how the row was measured.
* :func:`settle` starts each block on a quiet machine: it waits, up to ``LRANK_BENCH_SETTLE`` seconds
  (``python -m lrank bench --settle``; default 0, no wait), until the 1-minute load average is below 1
  (the acceptance condition of the benchmark page), and returns the load the row reports.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

#: new contract name -> older names still used by some estimators during the renaming
_ALIASES = {
    "n_estimators": ("n_trees", "n_rounds", "n_iter", "n_sequences"),
    "num_leaves": ("max_leaves",),
    "min_child_samples": ("min_data_in_leaf",),
    "min_child_weight": ("min_sum_hessian_in_leaf",),
    "early_stopping_rounds": ("early_stopping",),
}


def kwargs_for(cls_or_fn, **kw) -> dict:
    """``kw`` under the parameter names ``cls_or_fn`` accepts (contract names first, then old aliases).

    Raises ``TypeError`` naming the parameter when neither the name nor an alias is accepted.
    """
    params = inspect.signature(cls_or_fn).parameters
    out = {}
    for name, value in kw.items():
        for cand in (name, *_ALIASES.get(name, ())):
            if cand in params:
                out[cand] = value
                break
        else:
            raise TypeError(f"{getattr(cls_or_fn, '__name__', cls_or_fn)} takes no parameter {name!r}")
    return out


def load() -> float:
    """The 1-minute load average (NaN where the OS has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return float("nan")


SETTLE_ENV = "LRANK_BENCH_SETTLE"


def settle(below: float = 1.0, poll: float = 5.0) -> float:
    """Wait until the 1-minute load average is below ``below``, at most ``LRANK_BENCH_SETTLE`` seconds
    (unset or 0: no wait); returns the load average then (the one a row reports as "before the block").

    The average decays with a one-minute time constant: after a two-thread block (load ~2) it takes
    ~45 s to fall below 1 on an otherwise idle machine. The load is compared as a row reports it (two
    decimals), so that a row never shows ``1.0`` for a load of 0.996 that was let through.
    """
    try:
        budget = float(os.environ.get(SETTLE_ENV, "0") or 0)
    except ValueError:
        got = os.environ[SETTLE_ENV]
        raise ValueError(f"{SETTLE_ENV} must be a number of seconds, got {got!r}") from None
    deadline = time.monotonic() + max(0.0, budget)
    ld = load()
    while not round(ld, 2) < below and time.monotonic() < deadline:
        time.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        ld = load()
    return ld


def thread_counts() -> tuple[int, ...]:
    """The thread counts a benchmark measures by default: 1 and 2 where numba has two or more threads,
    else 1."""
    import numba

    return (1, 2) if numba.config.NUMBA_NUM_THREADS >= 2 else (1,)


@contextlib.contextmanager
def threads(n: int) -> Iterator[int]:
    """Run the block on ``n`` numba threads (capped by ``NUMBA_NUM_THREADS``); yields the count used."""
    import numba

    old = numba.get_num_threads()
    n = max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(old)


@dataclass
class Timing:
    """Medians of alternated repeats: wall (``a``, ``b``) and process CPU (``a_cpu``, ``b_cpu``) seconds."""

    a: float
    b: float
    a_cpu: float
    b_cpu: float
    repeats: int
    load: float

    @property
    def ratio(self) -> float:
        """``b / a`` (wall)."""
        return self.b / self.a

    @property
    def cpu_ratio(self) -> float:
        """``b_cpu / a_cpu``."""
        return self.b_cpu / self.a_cpu


def _clock(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and process-CPU seconds of one call of ``fn``, Python's garbage collected first (untimed), so
    that a collection of the other side's garbage does not land in this side's time (AdaRank's row: one
    round's fit took 0.074 s instead of 0.038 s after the naive side's 200 rounds, which hid the
    per-round difference; session 16)."""
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def median_seconds(fn: Callable[[], object], calls: int = 5, warmup: bool = False) -> float:
    """Median wall seconds of ``calls`` calls of ``fn`` (after one untimed call with ``warmup``)."""
    if warmup:
        fn()
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def alternate(fa: Callable[[], object], fb: Callable[[], object], repeats: int = 5,
              warmup: bool = True) -> Timing:
    """Time ``fa`` and ``fb`` alternately (A, B, A, B, ...), ``repeats`` times each; medians."""
    repeats = max(3, int(repeats))
    ld = settle()
    if warmup:
        fa(), fb()
    ta, tb = [], []
    for _ in range(repeats):
        ta.append(_clock(fa))
        tb.append(_clock(fb))
    a, b = np.median(np.array(ta), axis=0), np.median(np.array(tb), axis=0)
    return Timing(float(a[0]), float(b[0]), float(a[1]), float(b[1]), repeats, ld)


def per_iteration_once(fit_a: Callable[[int], object], fit_b: Callable[[int], object],
                       n: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """One alternated repeat of `per_iteration`: ``(wall, CPU)`` seconds per iteration of each side,
    ``(T(n) - T(1)) / (n - 1)``, A(1), A(n), then B(1), B(n). A benchmark that repeats across new
    processes calls it once per process (after a warm-up fit of each side) and takes the median over at
    least 3 processes."""
    out = []
    for fit in (fit_a, fit_b):
        w1, c1 = _clock(lambda fit=fit: fit(1))
        wn, cn = _clock(lambda fit=fit: fit(n))
        out.append((max(wn - w1, 1e-9) / (n - 1), max(cn - c1, 1e-9) / (n - 1)))
    return out[0], out[1]


def per_iteration(fit_a: Callable[[int], object], fit_b: Callable[[int], object], n: int,
                  repeats: int = 3, warmup: bool = True) -> Timing:
    """Seconds per iteration of two fitters at the same ``n``: ``(T(n) - T(1)) / (n - 1)`` per repeat,
    the two sides alternated (A(1), A(n), B(1), B(n), ...; `per_iteration_once`), medians over repeats."""
    repeats = max(3, int(repeats))
    ld = settle()
    if warmup:
        fit_a(2), fit_b(2)
    da, db = [], []
    for _ in range(repeats):
        a, b = per_iteration_once(fit_a, fit_b, n)
        da.append(a)
        db.append(b)
    a, b = np.median(np.array(da), axis=0), np.median(np.array(db), axis=0)
    return Timing(float(a[0]), float(b[0]), float(a[1]), float(b[1]), repeats, ld)


def row(benchmark: str, ours_s: float, reference: str, reference_s: float, *, target: str,
        ok: bool | None, threads: int | str, repeats: int, timing: str, load: float, notes: str = "",
        ratio: float | None = None, ratio_kind: str | None = None, status: str | None = None) -> dict:
    """One benchmark row; ``ok=None`` marks a report-only row (``status="report"``). ``status="undecided"``
    (a row's own statistical test could not tell) overrides the met / missed of ``ok``."""
    if status not in (None, "undecided"):
        raise ValueError(f"status must be None or 'undecided', got {status!r}")
    status = status or ("report" if ok is None else ("met" if ok else "missed"))
    if timing.startswith(("wall", "process")) and min(ours_s, reference_s) <= 1e-8:
        status = "invalid"  # a per-iteration difference lost in timer noise: never counted as met
    return {"benchmark": benchmark, "ours_s": float(ours_s), "reference": reference,
            "reference_s": float(reference_s),
            "ratio": float(reference_s / ours_s if ratio is None else ratio), "ratio_kind": ratio_kind,
            "target": target, "status": status, "met": status == "met", "threads": threads,
            "repeats": int(repeats), "timing": timing, "load": round(float(load), 2), "notes": notes}


WALL = "wall, alternated A/B, median"
CPU = "process CPU, alternated A/B, median"


def fit(model, data):
    """``model.fit`` on a ``RankingData``: the contract's ``fit(X, y, group=)``, or ``fit(data)`` for an
    estimator not yet converted to it."""
    try:
        return model.fit(data.X, data.y, group=data.group)
    except TypeError:
        return model.fit(data)
