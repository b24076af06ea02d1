"""One fastmath policy in one place; every kernel module compiles through lrank._kernels._jit."""

import ast
import pathlib

import pytest

import lrank
from lrank._kernels._jit import FASTMATH, njit

KERNELS = pathlib.Path(lrank.__file__).parent / "_kernels"


def test_fastmath_policy_keeps_nan_and_inf():
    assert "nnan" not in FASTMATH and "ninf" not in FASTMATH and "fast" not in FASTMATH


def test_no_kernel_hard_codes_fastmath_or_uses_numba_directly():
    for path in sorted(KERNELS.glob("*.py")):
        if path.name == "_jit.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "fastmath":
                pytest.fail(f"{path.name} hard-codes fastmath=")
            if isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") and \
                    isinstance(node.value, ast.Name) and node.value.id == "numba":
                pytest.fail(f"{path.name} calls numba.{node.attr} directly; use lrank._kernels._jit.njit")


def test_njit_rejects_fastmath():
    with pytest.raises(TypeError):
        njit(fastmath=True)


def test_warmup_compiles_every_kernel_module():
    from lrank._warmup import kernel_modules, run

    done = run()
    assert set(done) <= set(kernel_modules())
    assert "pairs" in done and "binning" in done
