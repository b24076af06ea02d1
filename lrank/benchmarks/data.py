"""Benchmark: :func:`lrank.data.load_letor` against the bare scikit-learn parser it wraps.

Issue 2's target: ``load_letor`` on the MSLR sample (Fold1 train, 5,000 lines, 136 features) within
1.5x of the bare ``sklearn.datasets.load_svmlight_file(path, query_id=True)`` call, both in this
process, best of several repeats. ``load_letor`` adds the sha256 of the file, the label / query
checks and the dense float32 matrix; the cold run (``cache=False``) pays all of that. The cached run
(binary ``.npz`` keyed by the sha256) is reported as a second row.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from lrank.benchmarks import _timing as T


def _sample_file(tmp: Path) -> tuple[Path, str]:
    """The real MSLR sample train file if it can be had, else a generated file of the same shape."""
    from lrank.data import fetch as fetch_fn
    from lrank.data.fetch import REGISTRY, FetchError

    spec = REGISTRY["mslr-sample"]
    path = spec.directory / spec.files[0].path
    if not path.is_file():
        try:
            fetch_fn("mslr-sample")
        except (FetchError, OSError):
            pass
    if path.is_file():
        return path, "real MSLR sample (msn1.fold1.train.5k.txt, 5,000 lines, 136 features)"
    from lrank.data import save_letor
    from lrank.data.generators import make_letor_like

    d = make_letor_like(n_queries=43, docs_per_query=116, n_features=136, n_grades=5, random_state=0)
    p = tmp / "synthetic.txt"
    save_letor(d, p)
    return p, "substitute: make_letor_like(43 x 116 docs, 136 features) written as LETOR (no real sample)"


def run(profile: str = "quick") -> list[dict]:
    """Two rows: cold ``load_letor`` and cached ``load_letor``, each against bare ``load_svmlight_file``."""
    from sklearn.datasets import load_svmlight_file

    from lrank.data import load_letor

    repeats = 5 if profile == "quick" else 15
    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get("LRANK_DATA")
        path, what = _sample_file(Path(tmp))
        os.environ["LRANK_DATA"] = tmp  # cache files of this benchmark go to a throw-away folder
        try:
            def bare():
                return load_svmlight_file(str(path), query_id=True, dtype=np.float32, zero_based=False)

            def cold():
                return load_letor(path, cache=False)

            def cached():
                return load_letor(path, cache=True)

            cached()  # writes the cache file
            with T.threads(1):
                tc = T.alternate(cold, bare, repeats)  # warms the page cache and imports first
                tk = T.alternate(cached, bare, repeats)
        finally:
            if old is None:
                os.environ.pop("LRANK_DATA", None)
            else:
                os.environ["LRANK_DATA"] = old
    common = dict(reference="sklearn.datasets.load_svmlight_file(query_id=True)",
                  ratio_kind="ours_s / reference_s (slowdown; lower is better)", threads=1, repeats=repeats,
                  timing=T.WALL)
    return [
        T.row("load_letor, cold (cache=False), MSLR sample train", ours_s=tc.a, reference_s=tc.b,
              ratio=tc.a / tc.b, target="<= 1.5x the bare parser (issue 2)", ok=tc.a <= 1.5 * tc.b,
              load=tc.load, notes=f"{what}; includes sha256, validation, dense float32", **common),
        T.row("load_letor, cached (.npz keyed by sha256), MSLR sample train", ours_s=tk.a, reference_s=tk.b,
              ratio=tk.a / tk.b, target="(report; faster than parsing)", ok=None, load=tk.load,
              notes=f"{what}; sha256 of the text + np.load", **common),
    ]


if __name__ == "__main__":  # pragma: no cover
    for row in run():
        print(row)
