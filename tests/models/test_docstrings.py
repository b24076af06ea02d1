"""Every ranker's ``help()`` lists every parameter it takes, with the default it really has."""

import ast
import inspect
import re

import pytest

import lrank

ESTIMATORS = sorted(n for n in lrank.__all__ if inspect.isclass(getattr(lrank, n, None))
                    and hasattr(getattr(lrank, n), "get_params"))


def _parameter_lines(cls: type) -> dict[str, str]:
    """name -> type line of the Parameters section of ``cls``'s docstring."""
    doc = inspect.getdoc(cls) or ""
    assert "\nParameters\n----------\n" in doc, f"{cls.__name__} has no Parameters section"
    body = doc.split("\nParameters\n----------\n", 1)[1]
    body = re.split(r"\n\S[^\n]*\n-{3,}\n", body, maxsplit=1)[0]  # up to the next section
    entries = {}
    for line in body.splitlines():
        m = re.match(r"^(\w+(?:, \w+)*) : (.*)$", line)
        if m:
            for name in m.group(1).split(", "):
                entries[name] = m.group(2)
    return entries


@pytest.mark.parametrize("name", ESTIMATORS)
def test_every_parameter_is_documented_with_its_real_default(name):
    cls = getattr(lrank, name)
    signature = inspect.signature(cls)
    entries = _parameter_lines(cls)
    missing = [p for p in signature.parameters if p not in entries]
    assert not missing, f"{name}: parameters without an entry in the docstring: {missing}"
    assert not set(entries) - set(signature.parameters), f"{name}: entries that are not parameters"
    for p, type_line in entries.items():
        said = re.search(r"default (.+)$", type_line)
        if said:
            assert ast.literal_eval(said.group(1)) == signature.parameters[p].default, (name, p, type_line)


def test_the_tree_ensembles_share_one_text_and_keep_their_own_defaults():
    """MART, McRank and LambdaMART list the parameters they share from one text; LambdaMART's own
    criterion entry (default "rwse") replaces the shared one (default "se"), which is not listed twice."""
    doc = inspect.getdoc(lrank.LambdaMART)
    assert doc.count("\ncriterion : ") == 1
    assert 'criterion : {"se", "wse", "rwse", "ole"}, default "rwse"' in doc
    shared = _parameter_lines(lrank.MART)
    assert _parameter_lines(lrank.McRank) == {"n_classes": "int or None, default None", **shared}
    assert inspect.getdoc(lrank.MART).count("\nParameters\n") == 1


def test_the_rankers_import_without_docstrings():
    """``python -OO`` strips docstrings: the shared-parameter text is then skipped, not an ImportError."""
    import subprocess
    import sys

    code = "from lrank import LambdaMART, MART; assert LambdaMART.__doc__ is None; print(MART().num_leaves)"
    out = subprocess.run([sys.executable, "-OO", "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "10", out.stderr
