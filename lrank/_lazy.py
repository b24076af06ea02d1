"""Lazy package attributes: ``import lrank.models`` stays instant; a class's module loads on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_getattr(package: str, where: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports ``package.<where[name]>`` and returns its ``name``."""

    def __getattr__(name: str) -> object:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
