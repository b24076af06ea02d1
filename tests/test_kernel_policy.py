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


#: kernel modules whose kernels still allocate or call min / max / int (compiled only by paths a first fit of
#: the start-up estimators does not take: ``evaluate``'s kernels, the column trees and the parallel split
#: search of 1M-document sets)
ALLOCATING = {"metrics"}
_ALLOCATORS = {"zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like",
               "array", "arange", "copy", "concatenate", "stack"}


def _allocations(path: pathlib.Path) -> list[str]:
    """``kernel: call`` for every NumPy allocation, ``.copy()`` / ``.astype()`` and builtin ``min`` / ``max``
    / ``int`` inside a function decorated with ``njit`` (bare or called)."""
    found = []
    for node in ast.parse(path.read_text()).body:
        decorators = [d.func if isinstance(d, ast.Call) else d for d in getattr(node, "decorator_list", [])]
        if not isinstance(node, ast.FunctionDef) or all(getattr(d, "id", "") != "njit" for d in decorators):
            continue
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "np" \
                    and f.attr in _ALLOCATORS:
                found.append(f"{node.name}: np.{f.attr}")
            elif isinstance(f, ast.Name) and f.id in ("min", "max", "int"):
                found.append(f"{node.name}: {f.id}()")
            elif isinstance(f, ast.Attribute) and f.attr in ("copy", "astype"):
                found.append(f"{node.name}: .{f.attr}()")
    return found


@pytest.mark.parametrize("module", sorted(p.stem for p in KERNELS.glob("*.py") if p.stem not in ALLOCATING))
def test_kernels_allocate_nothing(module):
    # issue 15.5: a kernel that allocates compiles numba's np.zeros / np.empty implementations (one per dtype
    # and shape, ~0.03-0.2 s each) into a first fit, and min / max / int on scalars compile numba's
    # builtins; the validating Python functions allocate in NumPy instead, the kernels use selects
    assert _allocations(KERNELS / f"{module}.py") == []


@pytest.mark.parametrize("module", sorted(ALLOCATING))
def test_the_allocating_list_is_current(module):
    # a module that no longer allocates leaves ALLOCATING, so that the test above guards it
    assert _allocations(KERNELS / f"{module}.py"), f"{module} allocates nothing now: drop it from ALLOCATING"
