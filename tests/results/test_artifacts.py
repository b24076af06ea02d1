"""Every figure this run saved is shown inline in its stored notebook (an image output named after it)."""

import json

import pytest

from lrank import results
from lrank.paths import notebooks_dir
from lrank.site import image_outputs

BOOKS = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]*.ipynb"))


@pytest.mark.parametrize("nb", BOOKS)
def test_stored_notebook_shows_every_figure_this_run_saved(nb, fresh_results):
    cells = json.loads((notebooks_dir() / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    if "save_figure(" not in code:
        pytest.skip(f"{nb} saves no figure")
    fresh_results(nb)  # fails when this run did not write the notebook's results
    saved = results.load_meta(nb)["artifacts"]["figures"]
    stored = json.loads((notebooks_dir() / f"{nb}.ipynb").read_text(encoding="utf-8"))
    shown = image_outputs(stored)
    missing = [f for f in saved if f not in shown]
    assert not missing, f"{nb}: figures saved but not shown inline in the stored notebook: {missing} " \
                        "(rerun python -m lrank reproduce)"
