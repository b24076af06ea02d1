"""The benchmark modules stay runnable: every name they import exists (their imports sit inside ``run``,
so a renamed kernel or helper is otherwise found only when ``python -m lrank bench`` runs)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect

import pytest

from lrank import benchmarks

NAMES = benchmarks.modules()


def _imports(module) -> list[tuple[str, str]]:
    tree = ast.parse(inspect.getsource(module))
    return [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module and node.module.startswith("lrank") for alias in node.names]


@pytest.mark.parametrize("name", NAMES)
def test_benchmark_module_imports_resolve(name):
    module = benchmarks.load(name)
    assert callable(getattr(module, "run", None)), f"lrank.benchmarks.{name} has no run(profile)"
    missing = [f"from {mod} import {attr}" for mod, attr in _imports(module)
               if not hasattr(importlib.import_module(mod), attr)
               and importlib.util.find_spec(f"{mod}.{attr}") is None]
    assert not missing, f"lrank.benchmarks.{name}: {missing} no longer resolve"

