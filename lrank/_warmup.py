"""Compile (or load from numba's on-disk cache) every kernel: each ``lrank._kernels`` module's ``warmup``."""

from __future__ import annotations

import importlib
import pkgutil

import lrank._kernels as kernels


def kernel_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(kernels.__path__) if not m.name.startswith("_"))


def run() -> list[str]:
    """Call ``warmup()`` of every kernel module that defines one; returns their names."""
    done = []
    for name in kernel_modules():
        mod = importlib.import_module(f"lrank._kernels.{name}")
        fn = getattr(mod, "warmup", None)
        if fn is not None:
            fn()
            done.append(name)
    return done
