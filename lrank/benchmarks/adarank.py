"""Benchmark: AdaRank's round with the precomputed feature x query matrix vs re-ranking every feature.

Issue 5's target: after the one-time precomputation, a round costs O(features x queries) plus one
ranking of the combined model; at least 20x faster per round than re-ranking every feature every round
(the way Fig. 1 reads literally, and the paper's own O((k + T) m n log n) count assumes the matrix).

* ours: time per round of `AdaRank.fit` = ``(T(n) - T(1)) / (n - 1)`` without early stopping and with
  ``max_consecutive=1`` (so rounds do not repeat one feature); the reference runs the same n naive
  rounds; the two alternated, medians (:mod:`lrank.benchmarks._timing`);
* reference: one naive round = the metric of every candidate on every query recomputed
  (`feature_query_matrix`, i.e. one sort per feature and query, the metric from lrank.metrics) plus the
  weighted sum and the ranking of ``f_t`` that both variants need;
* the one-time precomputation itself, as a row of its own.

Data: the real MSLR sample (train file, 43 queries, 5,000 documents, 136 features). The machine these
numbers come from may be shared; the ratios are what to read.
"""

from __future__ import annotations

import numpy as np

from lrank.benchmarks import _timing as T


def _data(profile: str):
    from lrank.data import fetch

    try:
        train, _ = fetch("mslr-sample")
        return train, "MSLR sample (real, train file)"
    except Exception:  # pragma: no cover - offline without the sample
        from lrank.data.generators import make_letor_like

        return (make_letor_like(n_queries=43, docs_per_query=116, n_features=136, n_grades=5, random_state=0),
                "make_letor_like(43 queries x 116 docs, 136 features) -- the MSLR sample was not available")


def run(profile: str = "quick") -> list[dict]:
    """Benchmark rows (keys as in `lrank.benchmarks`)."""
    from lrank._kernels.adarank import choose_weak_ranker, warmup
    from lrank.metrics import evaluate
    from lrank.models.adarank import AdaRank
    from lrank.weak.single_feature import SingleFeatureRankers, feature_query_matrix

    warmup()
    data, label = _data(profile)
    n_rounds = 200 if profile == "quick" else 500
    repeats = 3 if profile == "quick" else 5
    metric = "map"

    def fit(n):
        kw = T.kwargs_for(AdaRank, n_estimators=n, early_stopping_rounds=None)
        return T.fit(AdaRank(metric=metric, **kw, max_consecutive=1), data)

    weak = SingleFeatureRankers().fit(data.X)
    H = weak.transform(data.X)
    P = np.full(data.n_queries, 1.0 / data.n_queries)
    f = H[:, 0].copy()

    def naive_round():
        M = feature_query_matrix(H, data.y, data.qptr, metric, {"empty": "skip"})
        c, _, _ = choose_weak_ranker(np.nan_to_num(M), P)
        evaluate(data.y, f + H[:, c], data.qptr, [metric], per_query=True, empty="skip")

    def naive(n):
        for _ in range(n):
            naive_round()

    with T.threads(1):
        t = T.per_iteration(fit, naive, n_rounds, repeats)
        tp = T.alternate(lambda: feature_query_matrix(H, data.y, data.qptr, metric, {"empty": "skip"}),
                         lambda: fit(n_rounds), repeats)
    ours, ratio = t.a, t.ratio
    shape = f"{H.shape[1]} candidates x {data.n_queries} queries, {data.n_docs} documents"
    return [
        T.row(f"AdaRank.MAP time per round ({label}; {shape})", ours,
              "naive round: re-rank every feature on every query (same metric kernels)", t.b,
              target=">= 20x faster per round (issue 5)", ok=ratio >= 20.0, threads=1, repeats=repeats,
              timing=T.WALL, load=t.load,
              notes=f"(T({n_rounds}) - T(1)) / {n_rounds - 1} on both sides; max_consecutive=1"),
        T.row(f"AdaRank one-time feature x query matrix ({label})", tp.a,
              f"one AdaRank fit of {n_rounds} rounds (ours)", tp.b, ratio=tp.a / tp.b,
              ratio_kind="precomputation_s / fit_s", target="(report; paid once per fit)", ok=None,
              threads=1, repeats=repeats, timing=T.WALL, load=tp.load,
              notes="the matrix equals one naive round's work; it is amortised after one round"),
    ]


if __name__ == "__main__":  # pragma: no cover
    import pandas as pd

    print(pd.DataFrame(run()).to_string())
