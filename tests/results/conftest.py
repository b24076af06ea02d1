"""Result tests read the JSON that the notebooks recorded (lrank.results) and assert the numbers.

A test module names its notebook in ``NB``; the ``rec`` fixture gives that notebook's records and skips
the module when the notebook has not run.
"""

import pytest

from lrank import results


@pytest.fixture(scope="module")
def rec(request):
    nb = request.module.NB
    r = results.load(nb)
    if not r:
        pytest.skip(f"{nb} has not run (no recorded results)")
    return r
