"""Benchmark: the first fit of a fresh install (issue 15.5), cold and warm, for every estimator.

Each measurement is a whole new process (``python -c ...``: interpreter start, ``import lrank``, the
MSLR sample from its binary cache, one fit with ``n_jobs=1``) timed from the parent:

* **cold**: ``NUMBA_CACHE_DIR`` points at a new empty folder, so every kernel the fit uses is compiled
  (and nothing else: kernels compile lazily, on first call);
* **warm**: the same folder again, so every kernel loads from numba's cache (parallel kernels are
  cached too; see `lrank._kernels._jit`).

Rows: LambdaMART, MART, McRank (10 trees), RankBoost (10 rounds), RankBoost+ (10 rounds on the
sample's query with the most critical pairs), AdaRank (10 rounds), NDCGBoost (10 iterations) and
BoostingTree over LambdaMART stumps (10 generated models), each on the MSLR sample's training half, and
a first ``lrank.metrics.evaluate`` call (NDCG@10, MAP, ERR@10; report);
targets: cold <= 5 s for LambdaMART and <= 15 s for RankBoost+, and a warm 10-tree LambdaMART
process within 2x of LightGBM's (same data, 10 trees). Two report rows give what caps the cold
LambdaMART row: the same cold fit with LLVM's optimisation off (``NUMBA_OPT=0``; its note gives the
floor under any LLVM level, the warm process plus numba's own typing and lowering) and numba's floor, a
new process compiling as many trivial kernels as a cold LambdaMART fit compiles functions. Cold and warm
alternate per estimator (cold, warm, cold, warm, ...; each cold run gets its own new cache folder);
medians. The notes give
the processes' CPU seconds too (compilation is single-threaded CPU work, so on a loaded host the CPU
figure is the steadier one) and, from numba's compile events in each cold process, how many functions
the fit compiled and the exclusive compile seconds of the largest (a callee's time is not counted in its
caller's; the first function compiled in a process also carries numba's one-off set-up, ~0.5 s), and
how much of the compilation ran inside LLVM (numba's LLVM lock held).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

from lrank.benchmarks import _timing as T

#: exclusive compile seconds per function from numba's compile events (a callee's time is taken out of its
#: caller's); run first in each fit process, the dict ``compiles.seconds`` printed at the end
_LISTENER = """
import time
from collections import defaultdict
from numba.core import event
import numpy as np


class _Compiles(event.Listener):  # exclusive seconds per compiled function (callees' time subtracted)
    def __init__(self):
        self.seconds, self.stack = defaultdict(float), []

    def on_start(self, ev):
        self.stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        t0, inner = self.stack.pop()
        dt = time.perf_counter() - t0
        self.seconds[ev.data["dispatcher"].py_func.__name__] += dt - inner
        if self.stack:
            self.stack[-1][1] += dt


class _Held(event.Listener):  # seconds an event was in progress, nested events counted once
    def __init__(self):
        self.seconds, self.depth, self.t0 = 0.0, 0, 0.0

    def on_start(self, ev):
        if self.depth == 0:
            self.t0 = time.perf_counter()
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.t0


compiles = _Compiles()
event.register("numba:compile", compiles)
llvm = _Held()  # LLVM's share: numba holds its LLVM lock while LLVM optimises and emits machine code
event.register("numba:llvm_lock", llvm)
"""

_FIT = _LISTENER + """
import sys
from lrank.data import fetch
from lrank.benchmarks import _timing as T
import importlib
import inspect
mod, name, n, task, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
cls = getattr(importlib.import_module(mod), name)
train, _ = fetch("mslr-sample")
if task == "largest":
    train = train.subset([int(np.argmax(train.n_critical_pairs()))])
kw = T.kwargs_for(cls, n_estimators=n)
if "random_state" in inspect.signature(cls).parameters:
    kw["random_state"] = 0  # one path, so the same functions compile in every repeat
if base != "-":
    bmod, bname = base.split(":")
    kw["base"] = getattr(importlib.import_module(bmod), bname)()
t_fit = time.perf_counter()
T.fit(cls(**kw), train)
print("FIT", repr(time.perf_counter() - t_fit))
print("COMPILES", repr(dict(compiles.seconds)))
print("LLVM", repr(llvm.seconds))
"""

_EVAL = _LISTENER + """
from lrank.data import fetch
from lrank.metrics import evaluate
train, _ = fetch("mslr-sample")
scores = np.random.default_rng(0).normal(size=train.n_docs)
t_fit = time.perf_counter()
evaluate(train.y, scores, train.qptr, ["ndcg@10", "map", "err@10"])
print("FIT", repr(time.perf_counter() - t_fit))
print("COMPILES", repr(dict(compiles.seconds)))
print("LLVM", repr(llvm.seconds))
"""

_LGB = """
import lightgbm as lgb
from lrank.data import fetch
train, _ = fetch("mslr-sample")
ds = lgb.Dataset(train.X, train.y, group=train.group, params=dict(max_bin=255, verbose=-1))
lgb.train(dict(objective="lambdarank", num_leaves=10, learning_rate=0.1, min_data_in_leaf=20,
               num_threads=1, verbose=-1, lambdarank_truncation_level=10), ds, num_boost_round=10)
"""

_FLOOR = r"""
import sys
import numpy as np
import numba
n = int(sys.argv[1])
x = np.ones(4)
src = "def f(a):\n    s = 0.0\n    for v in a:\n        s += v\n    return s + %d\n"
for i in range(n):  # n distinct trivial kernels (one loop each)
    ns = {}
    exec(src % i, ns)
    numba.njit(ns["f"])(x)
"""

#: distinct functions a cold 10-tree LambdaMART fit compiles (kernels and numba's own overloads; session 4,
#: counted with numba's compile events: 14 functions, one compile each, down from 41 functions and 71
#: compiles at the start of the session; session 5: 15, numba's overload of ``math.ldexp`` for the gains
#: being one, 0.02 s); the floor row uses the count measured by the cold LambdaMART row when it has one
LAMBDAMART_FUNCTIONS = 15

_BT_BASE = "lrank.models.boostingtree:LambdaMARTBase"

#: comma-separated estimator labels (``LambdaMART,MART``; ``evaluate`` for the evaluate row) to run those
#: rows only (development; the page takes every row)
ONLY_ENV = "LRANK_BENCH_STARTUP_ONLY"

#: (label, module, class, rounds, data, base learner "module:Class" or "-", cold target in s or None)
ESTIMATORS = [
    ("LambdaMART", "lrank.models.gbrt", "LambdaMART", 10, "all", "-", 5.0),
    ("MART", "lrank.models.gbrt", "MART", 10, "all", "-", None),
    ("McRank", "lrank.models.gbrt", "McRank", 10, "all", "-", None),
    ("RankBoost", "lrank.models.rankboost", "RankBoost", 10, "all", "-", None),
    ("RankBoost+", "lrank.models.rankboost_plus", "RankBoostPlus", 10, "largest", "-", 15.0),
    ("AdaRank", "lrank.models.adarank", "AdaRank", 10, "all", "-", None),
    ("NDCGBoost", "lrank.models.ndcgboost", "NDCGBoost", 10, "all", "-", None),
    ("BoostingTree(LambdaMART stumps)", "lrank.models.boostingtree", "BoostingTree", 10, "all", _BT_BASE,
     None),
]


def _run(code: str, args: list[str], cache: str, env_extra: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one new process (``env_extra``: as `_run_out`)."""
    wall, cpu, _ = _run_out(code, args, cache, env_extra)
    return wall, cpu


def _run_out(code: str, args: list[str], cache: str, env_extra: dict | None = None
             ) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system) of one new process, and its standard output; ``env_extra``
    adds to (or overrides) its environment."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "OMP_WAIT_POLICY": "passive", "NUMBA_NUM_THREADS": "1",
           **(env_extra or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _compiles(stdout: str) -> dict[str, float]:
    """The fit process's exclusive compile seconds per function (the ``COMPILES`` line of `_FIT`)."""
    import ast

    for line in stdout.splitlines():
        if line.startswith("COMPILES "):
            return ast.literal_eval(line[len("COMPILES "):])
    return {}


def _fit_call(stdout: str) -> float:
    """The fit process's seconds inside its one ``fit`` call (the ``FIT`` line of `_FIT`; nan without one):
    compilation and fitting, without the interpreter's start, the imports and the data."""
    for line in stdout.splitlines():
        if line.startswith("FIT "):
            return float(line[len("FIT "):])
    return float("nan")


def _llvm(stdout: str) -> float:
    """The fit process's seconds inside LLVM (the ``LLVM`` line of `_FIT`; nan without one)."""
    for line in stdout.splitlines():
        if line.startswith("LLVM "):
            return float(line[len("LLVM "):])
    return float("nan")


def compile_summary(runs: list[dict[str, float]], top: int = 6) -> tuple[int, str]:
    """Functions compiled by a cold fit (the most over ``runs``) and their exclusive compile seconds, the
    median over ``runs`` (0 where a run did not compile it), largest first: ``(count, text)``."""
    names = sorted({name for run in runs for name in run})
    med = {name: _median([run.get(name, 0.0) for run in runs]) for name in names}
    ranked = sorted(med.items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{name} {sec:.2f}" for name, sec in ranked[:top])
    if len(ranked) > top:
        text += f", {len(ranked) - top} more {sum(sec for _, sec in ranked[top:]):.2f}"
    count = max((len(run) for run in runs), default=0)
    return count, f"{count} functions compiled, {sum(med.values()):.2f} s exclusive (median): {text}"


def _median(values: list[float]) -> float:
    import numpy as np

    return float(np.median(values))


def run(profile: str = "quick") -> list[dict]:
    """Cold and warm whole-process times of a first fit, per estimator (see the module docstring)."""
    from lrank.data import fetch

    fetch("mslr-sample")  # the binary cache of the sample exists before any timed process
    reps = 3  # medians of three in both profiles (a cold process varies by ~0.5 s between runs)
    rows = []
    lambdamart_functions = LAMBDAMART_FUNCTIONS
    lambdamart_warm = float("nan")
    only = [o.strip() for o in os.environ.get(ONLY_ENV, "").split(",") if o.strip()]
    chosen = [e for e in ESTIMATORS if not only or e[0] in only]
    with tempfile.TemporaryDirectory() as tmp:
        ld = T.settle()
        for label, mod, cls, n, task, base, target in chosen:
            cold, warm, compiled, in_llvm, fit_cold, fit_warm = [], [], [], [], [], []
            for r in range(reps):
                cache = os.path.join(tmp, f"{cls}-{r}")
                args = [mod, cls, str(n), task, base]
                wall, cpu, out = _run_out(_FIT, args, cache)
                cold.append((wall, cpu))
                compiled.append(_compiles(out))
                in_llvm.append(_llvm(out))
                fit_cold.append(_fit_call(out))
                wall, cpu, out = _run_out(_FIT, args, cache)
                warm.append((wall, cpu))
                fit_warm.append(_fit_call(out))
            c, w = _median([x for x, _ in cold]), _median([x for x, _ in warm])
            c_cpu, w_cpu = _median([x for _, x in cold]), _median([x for _, x in warm])
            n_functions, compiled_text = compile_summary(compiled)
            compiled_text += f"; inside LLVM {_median(in_llvm):.2f} s (numba's typing and lowering the rest)"
            if label == "LambdaMART" and n_functions:
                lambdamart_functions = n_functions
            if label == "LambdaMART":
                lambdamart_warm = w
            what = "the largest MSLR-sample query" if task == "largest" else "the MSLR sample (train)"
            rows.append(T.row(
                f"{label}: first fit in a new process, cold numba cache ({n} rounds, {what})", c,
                "the same process with a warm cache", w, ratio=c,
                ratio_kind="cold seconds (ours_s); reference_s = warm seconds",
                target=f"cold <= {target:g} s (issue 15.5)" if target else "(report)",
                ok=None if target is None else c <= target, threads=1, repeats=reps,
                timing="wall of a whole subprocess (python -c), cold/warm alternated, median", load=ld,
                notes="interpreter start + import lrank + sample from its binary cache + one fit "
                      f"(n_jobs=1, random_state=0 where taken); CPU seconds cold {c_cpu:.2f}, warm "
                      f"{w_cpu:.2f}; the fit call alone "
                      f"(compilation + fit, inside the process) cold {_median(fit_cold):.2f} s, warm "
                      f"{_median(fit_warm):.2f} s; cold: {compiled_text}"))
        if any(e[0] == "LambdaMART" for e in chosen):
            rows.append(_against_lightgbm(os.path.join(tmp, "LambdaMART-0"), os.path.join(tmp, "lgb")))
            rows.append(_cold_unoptimised(tmp, reps, lambdamart_warm))
        if not only or "evaluate" in only:
            rows.append(_cold_evaluate(tmp, reps))
        if not only:
            rows.append(_compile_floor(tmp, reps, lambdamart_functions))
    return rows


def _cold_evaluate(tmp: str, repeats: int) -> dict:
    """A first `lrank.metrics.evaluate` call (NDCG@10, MAP, ERR@10 of random scores on the MSLR sample's
    training half) in a new process with an empty numba cache, against the same process with a warm cache,
    alternated: what scoring LightGBM's predictions with lrank costs the first time (report row)."""
    ld = T.settle()
    cold, warm, compiled, in_llvm, call_cold, call_warm = [], [], [], [], [], []
    for r in range(repeats):
        cache = os.path.join(tmp, f"evaluate-{r}")
        wall, cpu, out = _run_out(_EVAL, [], cache)
        cold.append((wall, cpu))
        compiled.append(_compiles(out))
        in_llvm.append(_llvm(out))
        call_cold.append(_fit_call(out))
        wall, cpu, out = _run_out(_EVAL, [], cache)
        warm.append((wall, cpu))
        call_warm.append(_fit_call(out))
    c, w = _median([x for x, _ in cold]), _median([x for x, _ in warm])
    _, compiled_text = compile_summary(compiled)
    return T.row(
        "evaluate(ndcg@10, map, err@10): first call in a new process, cold numba cache (the MSLR sample "
        "(train), random scores)", c, "the same process with a warm cache", w, ratio=c,
        ratio_kind="cold seconds (ours_s); reference_s = warm seconds", target="(report)", ok=None,
        threads=1, repeats=repeats,
        timing="wall of a whole subprocess (python -c), cold/warm alternated, median", load=ld,
        notes=f"interpreter start + import lrank.metrics + sample from its binary cache + one call; CPU "
              f"seconds cold {_median([x for _, x in cold]):.2f}, warm {_median([x for _, x in warm]):.2f}; "
              f"the call alone cold {_median(call_cold):.2f} s, warm {_median(call_warm):.3f} s; cold: "
              f"{compiled_text}; inside LLVM {_median(in_llvm):.2f} s")


def _compile_floor(tmp: str, repeats: int, n: int = LAMBDAMART_FUNCTIONS) -> dict:
    """numba's own floor under the cold LambdaMART row: a new process compiling as many trivial kernels as
    that fit compiles functions, against one compiling none (both import numba and NumPy; alternated)."""
    ld = T.settle()
    ours, base = [], []
    for r in range(max(3, repeats)):
        ours.append(_run(_FLOOR, [str(n)], os.path.join(tmp, f"floor-{r}")))
        base.append(_run(_FLOOR, ["0"], os.path.join(tmp, f"floor0-{r}")))
    o, b = _median([w for w, _ in ours]), _median([w for w, _ in base])
    o_cpu, b_cpu = _median([c for _, c in ours]), _median([c for _, c in base])
    return T.row(
        f"numba's floor: {n} trivial kernels compiled in a new process (a cold LambdaMART fit compiles {n} "
        "functions)", o, "the same process compiling none", b, ratio=o - b,
        ratio_kind="seconds of compilation (ours_s - reference_s)",
        target="(report: what caps the cold LambdaMART row)", ok=None, threads=1, repeats=len(ours),
        timing="wall of a whole subprocess (python -c), alternated, median", load=ld,
        notes=f"CPU seconds {o_cpu:.2f} vs {b_cpu:.2f}: {(o_cpu - b_cpu) / n:.3f} s per trivial kernel, the "
              "first one in a process also paying numba's and LLVM's set-up; real kernels cost 0.2-3 s each")


def _cold_unoptimised(tmp: str, repeats: int, warm: float = float("nan")) -> dict:
    """The cold LambdaMART first fit with LLVM's optimisation off (numba's ``NUMBA_OPT=0``) against the
    same at numba's default level (3), alternated, each in a new empty cache: how much of the cold row
    LLVM's optimisation is, so what a lower level could save (the unoptimised kernels run slower).

    The note also gives the floor under any LLVM level: the warm process (``warm`` seconds: interpreter,
    imports, data, the fit from cached kernels) plus numba's own typing and lowering of the kernels
    (the compile seconds outside LLVM at level 0), which a cold fit pays before LLVM sees any code."""
    ld = T.settle()
    spec = [e for e in ESTIMATORS if e[0] == "LambdaMART"][0]
    args = [spec[1], spec[2], str(spec[3]), spec[4], spec[5]]
    ours, ref, llvm0, comp0 = [], [], [], []
    for r in range(max(3, repeats)):
        wall, cpu, out = _run_out(_FIT, args, os.path.join(tmp, f"opt0-{r}"), {"NUMBA_OPT": "0"})
        ours.append((wall, cpu))
        llvm0.append(_llvm(out))
        comp0.append(sum(_compiles(out).values()))
        ref.append(_run(_FIT, args, os.path.join(tmp, f"opt3-{r}"), {"NUMBA_OPT": "3"}))
    o, b = _median([w for w, _ in ours]), _median([w for w, _ in ref])
    front = _median([c - x for c, x in zip(comp0, llvm0)])
    return T.row(
        "LambdaMART: first fit in a new process, cold cache, LLVM optimisation off (NUMBA_OPT=0)", o,
        "the same at numba's default level (NUMBA_OPT=3)", b, ratio=o,
        ratio_kind="cold seconds (ours_s); reference_s = cold seconds at the default level",
        target="(report: what caps the cold LambdaMART row)", ok=None, threads=1, repeats=len(ours),
        timing="wall of a whole subprocess (python -c), alternated, median", load=ld,
        notes=f"10 trees on the MSLR sample (train), n_jobs=1; at level 0 the fit still compiles for "
              f"{_median(comp0):.2f} s, {_median(llvm0):.2f} s of it inside LLVM (emitting machine code), "
              f"numba's own typing and lowering of the kernels {front:.2f} s; with the warm process "
              f"({warm:.2f} s) that is a floor of {warm + front:.2f} s under a cold fit at any LLVM level "
              f"({'above' if warm + front > 5.0 else 'within'} issue 15.5's 5 s); CPU seconds "
              f"{_median([c for _, c in ours]):.2f} vs {_median([c for _, c in ref]):.2f}")


def _against_lightgbm(warm_cache: str, lgb_cache: str, repeats: int = 3) -> dict:
    """A warm 10-tree LambdaMART process against LightGBM's, alternated (lrank, LightGBM, ...), medians."""
    ld = T.settle()
    spec = [e for e in ESTIMATORS if e[0] == "LambdaMART"][0]
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(_run(_FIT, [spec[1], spec[2], str(spec[3]), spec[4], spec[5]], warm_cache))
        try:
            theirs.append(_run(_LGB, [], lgb_cache))
        except subprocess.CalledProcessError:  # pragma: no cover - LightGBM missing
            theirs.append((float("nan"), float("nan")))
    o, t = _median([w for w, _ in ours]), _median([w for w, _ in theirs])
    o_cpu, t_cpu = _median([c for _, c in ours]), _median([c for _, c in theirs])
    return T.row(
        "LambdaMART 10-tree fit, whole new process, warm cache, vs LightGBM", o,
        "LightGBM lambdarank, 10 trees, whole new process", t,
        target=">= 0.5 (warm within 2x of LightGBM, issue 15.5)", ok=t / o >= 0.5, threads=1,
        repeats=repeats, timing="wall of a whole subprocess (python -c), alternated, median", load=ld,
        notes="both: interpreter start, imports, the sample from lrank's binary cache, 10 trees; "
              f"CPU seconds {o_cpu:.2f} vs {t_cpu:.2f} (CPU ratio {t_cpu / o_cpu:.2f})")


if __name__ == "__main__":  # pragma: no cover
    for row in run():
        print(row)
