"""Benchmark: scoring with a fitted LambdaMART against LightGBM's ``Booster.predict``.

Each side fits its own LambdaMART of 100 trees of 31 leaves on the real MSLR sample with the settings of
:mod:`lrank.benchmarks.gbrt` (`lrank.benchmarks.gbrt._ours`, `lrank.benchmarks.gbrt._lgb`) and then
scores the same float64 array, as a user would pass it: lrank casts it to float32 with its checks,
LightGBM converts it to its own layout; each side's whole call is timed. Rows, 1 and 2 threads (the same
on both sides), medians of alternated repeats (:mod:`lrank.benchmarks._timing`):

* a large batch: the sample's 5,000 training documents repeated 40 times (200,000 rows);
* one query: the training query whose size is the median of the sample's, scored ``CALLS`` times in a
  row per timing (a search engine's call: per-call costs, such as the input checks, weigh more here).

These rows are their own module so that ``python -m lrank bench --only predict --into-page`` re-measures
scoring without re-timing the fits of :mod:`lrank.benchmarks.gbrt`. The machine may be shared; the
ratios are what to read.
"""

from __future__ import annotations

import os

from lrank.benchmarks import _timing as T

#: Trees of each side's model.
N_TREES = 100
#: Calls timed together for one query (one call takes well under a millisecond).
CALLS = 200
#: Repeats of the one-query timing per repeat of the large batch's: a repeat lasts about 0.05 s, and a shared
#: machine's hiccups moved a median of 3 such repeats by 20% or more
QUERY_REPEATS = 3


def _models(train, n_trees: int):
    """Each side's fitted LambdaMART (31 leaves, one thread to fit)."""
    from lrank.benchmarks.gbrt import _lgb, _ours

    return _ours("lambdarank", train, 1, leaves=31)(n_trees), _lgb("lambdarank", train, 1, leaves=31)(n_trees)


def _median_query(train):
    """Rows of the training query whose size is the median size (the first such query), as float64."""
    import numpy as np

    sizes = np.diff(train.qptr)
    q = int(np.flatnonzero(sizes == np.sort(sizes)[(sizes.size - 1) // 2])[0])
    return np.ascontiguousarray(train.X[train.qptr[q]:train.qptr[q + 1]], dtype=np.float64)


def run(profile: str = "quick") -> list[dict]:
    import numpy as np

    from lrank.data import fetch

    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    reps = 5  # in both profiles: a repeat takes at most about 1.5 s (LightGBM's 200,000 rows on one thread)
    train, _ = fetch("mslr-sample")
    ours, theirs = _models(train, N_TREES)
    copies = 40
    batches = [(np.tile(np.asarray(train.X, dtype=np.float64), (copies, 1)), 1,
                f"the MSLR sample's {train.n_docs:,} training documents x {copies}")]
    Xq = _median_query(train)
    batches.append((Xq, CALLS, f"one query of the MSLR sample (the median size, {Xq.shape[0]} documents), "
                               f"{CALLS} calls per timing"))
    rows = []
    for X, calls, what in batches:
        for th in T.thread_counts():
            ours.set_params(n_jobs=th)
            with T.threads(th) as th:
                def fa(X=X, calls=calls):
                    for _ in range(calls):
                        ours.predict(X)

                def fb(X=X, calls=calls, th=th):
                    for _ in range(calls):
                        theirs.predict(X, num_threads=th)

                t = T.alternate(fa, fb, reps if calls == 1 else QUERY_REPEATS * reps)
            rows.append(T.row(
                f"LambdaMART predict, {N_TREES} trees of 31 leaves, "
                + (f"{X.shape[0]:,} rows" if calls == 1 else f"one query ({X.shape[0]} rows)"),
                t.a / calls, "LightGBM Booster.predict", t.b / calls, target=">= 1.0", ok=t.ratio >= 1.0,
                threads=th, repeats=t.repeats, timing=T.WALL, load=t.load,
                notes=f"{what}, as float64 (values exact in float32, as stored); seconds per call, whole "
                      f"call each side; CPU-time ratio {t.cpu_ratio:.2f}"))
    return rows


if __name__ == "__main__":  # pragma: no cover
    for row in run():
        print(row)
