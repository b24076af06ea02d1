"""The start-up benchmark's compile accounting (issue 15.5): numba's compile events give each function's
exclusive compile seconds in a cold fit process (a callee's time taken out of its caller's)."""

from __future__ import annotations

import numpy as np
import pytest

from lrank.benchmarks import startup


def test_listener_counts_each_function_once_without_its_callees():
    import numba
    from numba.core import event

    if numba.config.DISABLE_JIT:
        pytest.skip("NUMBA_DISABLE_JIT: nothing compiles")
    ns: dict = {}
    exec(startup._LISTENER, ns)
    compiles = ns["compiles"]
    try:
        @numba.njit
        def inner(a):
            s = 0.0
            for v in a:
                s += v
            return s

        @numba.njit
        def outer(a):
            return inner(a) + 1.0

        assert outer(np.ones(3)) == 4.0
        outer(np.ones(5))  # the same signature: no compile, no event
    finally:
        event.unregister("numba:compile", compiles)
        event.unregister("numba:llvm_lock", ns["llvm"])
    assert set(compiles.seconds) == {"inner", "outer"}
    assert all(s > 0 for s in compiles.seconds.values())
    assert compiles.stack == []
    # LLVM's share: within the compile, nested lock holds counted once
    llvm = ns["llvm"]
    assert llvm.depth == 0
    assert 0 < llvm.seconds < sum(compiles.seconds.values())


def test_llvm_line():
    assert startup._llvm("noise\nLLVM 1.25\nCOMPILES {}\n") == 1.25
    assert np.isnan(startup._llvm("no line"))


def test_compiles_line_and_summary():
    out = "noise\nCOMPILES {'_lambdas': 3.0, '_grow_tree': 1.5, '_tiny': 0.1}\n"
    assert startup._compiles(out) == {"_lambdas": 3.0, "_grow_tree": 1.5, "_tiny": 0.1}
    assert startup._compiles("no line") == {}
    runs = [{"_lambdas": 3.0, "_grow_tree": 1.5, "_tiny": 0.1}, {"_lambdas": 2.0, "_grow_tree": 1.7},
            {"_lambdas": 2.5, "_grow_tree": 1.6, "_tiny": 0.3}]
    count, text = startup.compile_summary(runs, top=2)
    assert count == 3
    assert text == ("3 functions compiled, 4.20 s exclusive (median): _lambdas 2.50, _grow_tree 1.60, "
                    "1 more 0.10")
