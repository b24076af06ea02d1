"""Result tests read the JSON that *this* run's notebooks recorded (lrank.results) and assert the numbers.

The test command runs the notebooks with ``LRANK_OUTPUT_DIR`` set to a temporary folder and these tests
read the results there. A test module names its notebook in ``NB``; the ``rec`` fixture gives that
notebook's records and FAILS (never skips, never reads old numbers) when they are absent or were
written by other code or another version of the notebook: run ``python -m lrank.dev test notebooks
results``, or ``python -m lrank reproduce`` to refresh the stored results.
"""

import pytest

from lrank import results


def _fresh_results(nb: str) -> dict:
    """The notebook's records of this run; fails the test when absent or stale."""
    problem = results.freshness(nb)
    if problem:
        pytest.fail(f"{problem}. Run the notebooks first: python -m lrank.dev test notebooks results "
                    "(or python -m lrank reproduce)", pytrace=False)
    return results.load(nb)


@pytest.fixture(scope="session")
def fresh_results():
    """``fresh_results(nb)``: the notebook's records of this run; fails when absent or stale."""
    return _fresh_results


@pytest.fixture(scope="module")
def rec(request):
    return _fresh_results(request.module.NB)
