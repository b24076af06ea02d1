"""Every figure this run saved is shown inline in its stored notebook (an image output named after it)."""

import json

import pytest

from lrank import results
from lrank.paths import notebooks_dir
from lrank.site import image_outputs

BOOKS = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]*.ipynb"))


@pytest.mark.parametrize("nb", BOOKS)
def test_stored_notebook_shows_every_figure_this_run_saved(nb, fresh_results):
    if not results.results_path(nb).is_file():
        pytest.skip(f"{nb} records nothing and saves no figure through lrank.results")
    fresh_results(nb)
    saved = results.load_meta(nb)["artifacts"]["figures"]
    stored = json.loads((notebooks_dir() / f"{nb}.ipynb").read_text(encoding="utf-8"))
    shown = image_outputs(stored)
    missing = [f for f in saved if f not in shown]
    assert not missing, f"{nb}: figures saved but not shown inline in the stored notebook: {missing} " \
                        "(rerun python -m lrank reproduce)"
