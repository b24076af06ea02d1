"""Each stored notebook opened in JupyterLab in headless Chromium shows its figures and no error.

Runs when Debian's ``chromium`` and ``chromium-driver`` and the ``selenium`` package are present (skips
otherwise; ``.ci/run`` installs the browser). Screenshots go to ``$LRANK_SCREENSHOTS`` (else a
temporary folder).
"""

import json
import os

import pytest

from lrank.paths import notebooks_dir, repo_dir
from lrank.site import browser_check, find_chromium

BOOKS = sorted(notebooks_dir().glob("[0-9][0-9]*.ipynb"))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    pytest.importorskip("selenium")
    if find_chromium() is None:
        pytest.skip("no chromium/chromedriver here (apt-get install -y chromium chromium-driver)")
    shots = os.environ.get("LRANK_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots")
    return {r["notebook"]: r for r in browser_check(BOOKS, repo_dir(), shots)}


@pytest.mark.parametrize("path", BOOKS, ids=[p.stem for p in BOOKS])
def test_notebook_renders_its_figures_without_error(rendered, path):
    r = rendered[path.stem]
    assert r["errors"] == 0, f"{path.name}: {r['errors']} error outputs rendered"
    # counted in this notebook's own panel, not in one JupyterLab restored from an earlier notebook
    assert r["cells"] == len(json.loads(path.read_text(encoding="utf-8"))["cells"]), r
    assert r["rendered_images"] == r["stored_images"], r
    assert r["ok"], f"{path.name}: {r['problem']} (screenshot {r['screenshot']})"
