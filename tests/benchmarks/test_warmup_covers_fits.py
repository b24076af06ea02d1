"""After ``python -m lrank warmup`` a first fit compiles nothing (issue 15.5).

In a new process, `lrank._warmup.run` runs every kernel module's ``warmup``; then every estimator of the
start-up benchmark fits the MSLR sample as that benchmark fits it (3 rounds), and LambdaMART once more
with ``n_jobs=2`` (the parallel kernels), then MART, McRank and LambdaMART (one thread and two) with
``subsample=0.5`` (the sampled trees of bagging), then LambdaMART with ``n_jobs=2`` on a generated set above
the documents from which the lambdas run on several threads (with every query longer than ``k``, and
within it), while every kernel signature that joins a dispatcher is recorded. All of it twice: with numba
on one thread and on two (where the parallel twins take their threaded branches). Any signature that joins
during the fits is one a fit uses that no ``warmup`` put in memory: a user who ran ``warmup`` would wait
for it (a compilation, or at best a load from the cache).

What is recorded is `numba.core.dispatcher.Dispatcher.add_overload`, through which every signature
joins a dispatcher, compiled or loaded from the cache alike. So the processes use the test session's own
cache, warm or cold, and the test does not depend on what the cache already holds: it fails the same way
whether a missing signature would be compiled or loaded. (Recording numba's compile events instead,
which fire only on a compilation, needs a cache holding nothing but what ``warmup`` compiled: a private,
empty one, which costs a whole cold compilation, about 4 minutes on 2 cores, on top of the session's.)
A kernel that ``warmup`` loads from the cache does not load the kernels it calls (they are compiled into
it): were a fit to call such a kernel directly, it would be reported too, which is what a user pays.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_SCRIPT = r"""
import json
import importlib
import numpy as np
from numba.core.dispatcher import Dispatcher
from lrank._warmup import run
from lrank.benchmarks import _timing as T
from lrank.benchmarks.startup import ESTIMATORS
from lrank.data import fetch

warmed = sorted(run())
compiled = []
_add_overload = Dispatcher.add_overload


def _joins(self, cres):  # every signature that joins a dispatcher: compiled, or loaded from the cache
    f = self.py_func
    compiled.append(f"{f.__module__}.{f.__qualname__}{tuple(cres.signature.args)}")
    return _add_overload(self, cres)


Dispatcher.add_overload = _joins
train, _ = fetch("mslr-sample")
out = {}
for label, mod, name, _, task, base, _ in ESTIMATORS:
    data = train.subset([int(np.argmax(train.n_critical_pairs()))]) if task == "largest" else train
    cls = getattr(importlib.import_module(mod), name)
    kw = T.kwargs_for(cls, n_estimators=3)
    if base != "-":
        bmod, bname = base.split(":")
        kw["base"] = getattr(importlib.import_module(bmod), bname)()
    del compiled[:]
    T.fit(cls(**kw), data)
    out[label] = list(compiled)
from lrank.models.gbrt import LambdaMART  # the parallel twins (n_jobs != 1)
del compiled[:]
T.fit(LambdaMART(**T.kwargs_for(LambdaMART, n_estimators=3), n_jobs=2), train)
out["LambdaMART n_jobs=2"] = list(compiled)
from lrank.models.gbrt import MART, McRank  # bagging: the sampled trees' specialisations
for label, cls, kw in [("MART subsample=0.5", MART, {}), ("McRank subsample=0.5", McRank, {}),
                       ("LambdaMART subsample=0.5", LambdaMART, {}),
                       ("LambdaMART subsample=0.5 colsample_bytree=0.5", LambdaMART,
                        {"colsample_bytree": 0.5}),
                       ("LambdaMART n_jobs=2 subsample=0.5", LambdaMART, {"n_jobs": 2})]:
    del compiled[:]
    T.fit(cls(**T.kwargs_for(cls, n_estimators=3), subsample=0.5, **kw), train)
    out[label] = list(compiled)
from lrank.data.generators import make_letor_like  # the parallel lambdas (from PARALLEL_MIN_LAMBDA_DOCS)
from lrank.models.gbrt import PARALLEL_MIN_LAMBDA_DOCS

for label, n_q, n_d in [("LambdaMART n_jobs=2, parallel lambdas", 450, 120),    # queries longer than k
                        ("LambdaMART n_jobs=2, parallel lambdas, queries within k", 6500, 8)]:
    big = make_letor_like(n_queries=n_q, docs_per_query=n_d, n_features=6, random_state=0)
    assert big.n_docs >= PARALLEL_MIN_LAMBDA_DOCS, big.n_docs
    del compiled[:]
    T.fit(LambdaMART(**T.kwargs_for(LambdaMART, n_estimators=2), n_jobs=2, ndcg_at=10), big)
    out[label] = list(compiled)
print("RESULT " + json.dumps({"warmed": warmed, "fits": out}))
"""


_BAGGED = ["MART subsample=0.5", "McRank subsample=0.5", "LambdaMART subsample=0.5",
           "LambdaMART subsample=0.5 colsample_bytree=0.5", "LambdaMART n_jobs=2 subsample=0.5"]
_PARALLEL = ["LambdaMART n_jobs=2, parallel lambdas",
             "LambdaMART n_jobs=2, parallel lambdas, queries within k"]


def _run_after_warmup(threads: str) -> dict:
    """The script's record with numba on ``threads`` threads: ``warmed`` (the modules whose ``warmup`` ran)
    and ``fits`` (label -> signatures that joined a dispatcher during that fit)."""
    env = {**os.environ, "NUMBA_NUM_THREADS": threads}  # the session's cache (NUMBA_CACHE_DIR as it is)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def test_a_fit_after_warmup_compiles_nothing():
    """One test, not one per label: pytest-xdist would hand tests of one module fixture to both workers.
    Every offending label is named in the failure."""
    import numba

    from lrank._warmup import kernel_modules
    from lrank.benchmarks.startup import ESTIMATORS

    if numba.config.DISABLE_JIT:
        pytest.skip("NUMBA_DISABLE_JIT: nothing compiles")
    from lrank.data import fetch

    try:
        fetch("mslr-sample")
    except Exception as exc:  # noqa: BLE001 - no network and no cached copy
        pytest.skip(f"the MSLR sample is not available here: {exc}")
    compiled = {}
    for threads in ("1", "2"):
        done = _run_after_warmup(threads)
        assert set(done["warmed"]) <= set(kernel_modules()) and {"pairs", "binning"} <= set(done["warmed"])
        out = done["fits"]
        assert list(out) == [e[0] for e in ESTIMATORS] + ["LambdaMART n_jobs=2", *_BAGGED, *_PARALLEL]
        compiled.update({f"{label} ({threads} thread(s))": out[label] for label in out if out[label]})
    assert not compiled, f"joined a dispatcher after warmup (compiled or loaded from the cache): {compiled}"
