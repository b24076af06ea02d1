"""Issue 15.5: a cold first fit compiles lrank's kernels only, none of numba's own implementations.

A NumPy constructor (``np.empty``, ``np.zeros``), a builtin ``min`` / ``max`` / ``int`` or an array method
called inside a kernel is an ``@overload`` that numba compiles as a function of its own, once per argument
types, in every fresh process with an empty cache (~0.03-0.2 s each). The kernels take their arrays from
the validating Python functions and use selects and casts instead, so the fits below compile no function
outside lrank.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_FITS = """
import json
from numba.core import event

compiled = []


class _Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append((f.__module__, f.__qualname__))


event.register("numba:compile", _Listener())

import numpy as np
from lrank.benchmarks import _timing as T
from lrank.models.adarank import AdaRank
from lrank.models.boostingtree import BoostingTree, LambdaMARTBase
from lrank.models.gbrt import MART, LambdaMART, McRank
from lrank.models.ndcgboost import NDCGBoost

rng = np.random.default_rng(0)
group = np.full(12, 24)
n = int(group.sum())
X = rng.normal(size=(n, 6)).astype(np.float32)
y = rng.integers(0, 5, n)
out = {}
for cls in (LambdaMART, MART, McRank, AdaRank, NDCGBoost, BoostingTree):
    kw = T.kwargs_for(cls, n_estimators=3)
    if cls is BoostingTree:
        kw.update(base=LambdaMARTBase(), random_state=0)
    start = len(compiled)
    cls(**kw).fit(X, y, group=group)
    out[cls.__name__] = compiled[start:]
start = len(compiled)  # OLE: the whole-tree kernel with pair lists (Example 3-4)
LambdaMART(**T.kwargs_for(LambdaMART, n_estimators=3), criterion="ole").fit(X, y, group=group)
out["LambdaMART(ole)"] = compiled[start:]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_cold_first_fit_compiles_no_numba_implementation(tmp_path):
    """In a fresh process with an empty numba cache, first fits of LambdaMART, MART, McRank, AdaRank,
    NDCGBoost, BoostingTree (LambdaMART base) and LambdaMART with the OLE criterion, one after the other
    (each compiles what the earlier ones did not), compile lrank kernels only (on the code of issue 15.5's
    start: ``ol_int``, ``ol_min``, ``ol_max``, ``ol_np_empty``, ``ol_np_zeros``, ... from LambdaMART,
    AdaRank and NDCGBoost; 14 of them from the OLE tree and pair-histogram kernels)."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("NUMBA_DISABLE_JIT")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-c", _FITS], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    fits = json.loads(res.stdout.splitlines()[-1])
    assert fits["LambdaMART"], "the first fit compiles its kernels"
    assert any(q == "_grow" for _, q in fits["LambdaMART(ole)"]), "the OLE fit grows trees of its own layout"
    foreign = {name: [f"{m}:{q}" for m, q in funcs if not m.startswith("lrank.")]
               for name, funcs in fits.items()}
    assert foreign == {name: [] for name in fits}, foreign
