"""Every number a notebook recorded in this run equals its golden value (tests/golden/<notebook>.json).

The golden files are written only by ``python -m lrank accept`` (or ``reproduce --accept``), which
prints the differences; never by hand. Each entry holds the value, its extras (n, p_value, ...) and
the tolerance ``tol`` it was recorded with; the paper's printed values are not pinned here.
"""

import json
import re

import pytest

from lrank import results
from lrank.paths import notebooks_dir, repo_dir

GOLDEN = repo_dir() / "tests" / "golden"
BOOKS = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]*.ipynb"))


def _code(nb: str) -> str:
    cells = json.loads((notebooks_dir() / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _records(nb: str) -> bool:
    return bool(re.search(r"\brecord\(", _code(nb)))


@pytest.mark.parametrize("nb", [b for b in BOOKS if _records(b) or (GOLDEN / f"{b}.json").is_file()])
def test_recorded_numbers_equal_golden(nb, fresh_results):
    golden_path = GOLDEN / f"{nb}.json"
    if not golden_path.is_file():
        pytest.fail(f"no golden file {golden_path}: pin the numbers with python -m lrank accept",
                    pytrace=False)
    fresh = fresh_results(nb)
    golden = json.loads(golden_path.read_text(encoding="utf-8"))
    diff = results.compare_to_golden(fresh, golden)
    where = results.load_meta(nb).get("written_on", {})
    assert not diff, (f"{nb}: {len(diff)} difference(s) from {golden_path.name} (this run: numba for "
                      f"{where.get('numba_cpu')}, numpy paths {where.get('numpy_simd')}):\n"
                      + "\n".join(diff[:60]))


def test_compare_to_golden_catches_changes():
    golden = {"a": {"value": 1.0, "tol": 1e-9}, "b": {"value": [1, 2], "tol": 0},
              "c": {"value": "HELD", "n": 43, "p_value": 0.01, "tol": 1e-6}}
    same = {"a": {"value": 1.0 + 1e-12}, "b": {"value": [1, 2]},
            "c": {"value": "HELD", "n": 43, "p_value": 0.0100001, "paper": "x"}}
    assert results.compare_to_golden(same, golden) == []
    assert results.compare_to_golden({**same, "a": {"value": 1.001}}, golden)
    assert results.compare_to_golden({**same, "b": {"value": [1, 3]}}, golden)
    assert results.compare_to_golden({**same, "c": {**same["c"], "value": "UNDECIDED"}}, golden)
    assert results.compare_to_golden({**same, "c": {**same["c"], "n": 42}}, golden)
    assert results.compare_to_golden({**same, "d": {"value": 1}}, golden)  # not in the golden file
    assert results.compare_to_golden({k: v for k, v in same.items() if k != "a"}, golden)  # missing
    assert results.compare_to_golden({**same, "b": {"value": [True, 2]}}, golden)  # bool is not int
