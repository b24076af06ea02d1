"""Every public function, class and method of the modules the book's API page documents has a numpydoc
Parameters section naming each of its parameters, and any default it writes is the one it really has.

(The rankers have their own, stricter test: ``tests/models/test_docstrings.py``.)
"""

import ast
import dataclasses
import importlib
import inspect
import re

import pytest

MODULES = ["lrank.metrics", "lrank.stats", "lrank.io.trec", "lrank.io.lightgbm", "lrank.data.container",
           "lrank.data.fetch", "lrank.data.letor", "lrank.data.generators", "lrank.claims", "lrank.plots",
           "lrank.results", "lrank.papers.index", "lrank.papers.benchmarks", "lrank.site"]

_SECTION = re.compile(r"\n(\S[^\n]*)\n-{3,}\n")


def documented(doc: str, sections: tuple[str, ...] = ("Parameters",)) -> dict[str, str] | None:
    """name -> type line of the entries of the first of ``sections`` in a numpydoc docstring (None: none)."""
    parts = _SECTION.split("\n" + doc)
    bodies = {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    body = next((bodies[s] for s in sections if s in bodies), None)
    if body is None:
        return None
    entries = {}
    for line in body.splitlines():
        m = re.match(r"^(\*{0,2}\w+(?:, \*{0,2}\w+)*)(?: : (.*))?$", line)
        if m:
            for name in m.group(1).split(", "):
                entries[name.lstrip("*")] = m.group(2) or ""
    return entries


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # imported from elsewhere: checked where it is defined
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj, ("Parameters",)
        elif inspect.isclass(obj):
            fields = ("Parameters", "Attributes") if dataclasses.is_dataclass(obj) else ("Parameters",)
            yield f"{module.__name__}.{name}", obj, fields
            for attr, member in vars(obj).items():
                if isinstance(member, (classmethod, staticmethod)):
                    member = member.__func__  # RankingData.from_qid, .concat, ...
                if not attr.startswith("_") and inspect.isfunction(member):
                    yield f"{module.__name__}.{name}.{attr}", member, ("Parameters",)


def _cases():
    out = []
    for m in MODULES:
        for qualname, obj, sections in _public(importlib.import_module(m)):
            try:
                signature = inspect.signature(obj)
            except (TypeError, ValueError):
                continue
            params = [p for p in signature.parameters.values() if p.name not in ("self", "cls")]
            if params:
                out.append(pytest.param(obj, params, sections, id=qualname))
    return out


@pytest.mark.parametrize("obj, params, sections", _cases())
def test_every_parameter_is_documented(obj, params, sections):
    entries = documented(inspect.getdoc(obj) or "", sections)
    assert entries is not None, f"no {' or '.join(sections)} section"
    missing = [p.name for p in params if p.name not in entries]
    assert not missing, f"parameters without an entry: {missing}"
    for p in params:
        said = re.search(r"default:? (.+)$", entries[p.name])
        if said and p.default is not inspect.Parameter.empty:
            try:
                written = ast.literal_eval(said.group(1).strip("` "))
            except (ValueError, SyntaxError):
                continue  # prose ("default: the estimator's"), not a literal
            assert written == p.default, f"{p.name}: docstring says default {written!r}, it is {p.default!r}"


def test_the_check_fails_on_a_missing_entry():
    def f(a, b=1):
        """Do.

        Parameters
        ----------
        a : int
            A.
        """

    assert documented(inspect.getdoc(f)) == {"a": "int"}
    assert documented("Do.") is None
