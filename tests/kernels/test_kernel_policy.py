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


#: private kernel functions still called from outside ``lrank._kernels`` (module -> kernel module): each one
#: leaves this list when its callers go through a validating function (or the wrapper moves down); empty:
#: every module outside ``lrank._kernels`` calls the validating functions only
BOUNDARY_PENDING: dict[str, set[str]] = {}


def _private_kernel_uses(path: pathlib.Path) -> set[str]:
    """``module._name`` for every private kernel function ``path`` names (``from lrank._kernels.m import
    _name``, or ``alias._name`` of an imported kernel module)."""
    tree = ast.parse(path.read_text())
    aliases, found = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.endswith("_kernels"):
                aliases.update({a.asname or a.name: a.name for a in node.names})
            elif "_kernels." in node.module:
                found |= {f"{node.module.rsplit('.', 1)[1]}.{a.name}" for a in node.names
                          if a.name.startswith("_")}
        elif isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name.rsplit(".", 1)[1] for a in node.names
                            if "_kernels." in a.name})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and node.attr.startswith("_") and not node.attr.startswith("__"):
            found.add(f"{aliases[node.value.id]}.{node.attr}")
    return found


def test_kernels_are_called_through_their_validating_functions():
    """No module of lrank outside ``_kernels`` calls a private kernel (``_name``): it calls the kernel
    module's validating function. The pending list may only shrink."""
    root = KERNELS.parent
    crossing = {}
    for path in sorted(root.rglob("*.py")):
        if KERNELS in path.parents:
            continue
        uses = _private_kernel_uses(path)
        if uses:
            crossing[path.relative_to(root.parent).as_posix()] = {u.split(".")[0] for u in uses}
    assert crossing == {k: v for k, v in BOUNDARY_PENDING.items() if k in crossing}, crossing
    done = set(BOUNDARY_PENDING) - set(crossing)
    assert not done, f"these modules no longer cross the boundary: drop them from BOUNDARY_PENDING: {done}"
