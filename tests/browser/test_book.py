"""The book (``python -m lrank site``) builds offline from the stored notebooks, strictly, and reads well.

Builds the Sphinx book once (nitpicky: every unresolved reference warns) into a temporary folder, then
checks the pages statically (no broken internal link or anchor) and in headless Chromium (every page
loads without a console error, every image loads, search finds "RankBoost"). Needs Debian's chromium
and chromium-driver for the browser part (skipped otherwise, like the notebook check).
"""

import json
import os
import re
import time
import warnings

import pytest

from lrank.paths import notebooks_dir
from lrank.site import book_check, broken_links, build_book, find_chromium

BOOKS = sorted(notebooks_dir().glob("[0-9][0-9]*.ipynb"))

#: Deciding-cell anchors that notebooks being rewritten by their own engineers link to (their summary
#: tables, and so the index) but do not define yet (issue 33: one click from the index to the deciding
#: cell). Reported, not failed, while still missing; once a notebook defines one, the test FAILS until
#: its entry is deleted here, so this list only shrinks. Never add to it.
KNOWN_MISSING_ANCHORS: dict[str, set[str]] = {
}
_KNOWN = {(nb, a) for nb, anchors in KNOWN_MISSING_ANCHORS.items() for a in anchors}

#: Book defects found when notebooks 03-05 landed (issue 33, still open), each matched by a fragment of its
#: warning or console error. Reported, not failed, while present; once one is gone the tests FAIL until
#: its line is deleted here, so this list only shrinks. Never add to it.
KNOWN_DEFECTS: dict[str, str] = {
    "duplicate label summary": "the notebooks' own <a id=\"summary\"> anchors (01, 03, 04) become one global "
                               "MyST label each (lrank.site._book_notebook): namespace them per chapter",
    "duplicate label claim-thm1": "claim ids are unique within a paper only (01 and 04 both have thm1), the "
                                  "book's labels are global: namespace the claim labels per chapter",
    "MathJax_Script-Regular.otf": "04's \\mathcal L asks MathJax 2 for its script font, which "
                                  "jupyter-server-mathjax does not ship (a 404 in the console)",
}


def _known_defect(line: str) -> str | None:
    return next((k for k in KNOWN_DEFECTS if k in line), None)


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    t0 = time.perf_counter()
    index, warnings = build_book(out, BOOKS)
    return {"index": index, "html": index.parent, "warnings": warnings, "seconds": time.perf_counter() - t0}


def _missing_anchor(line: str) -> tuple[str, str] | None:
    """(notebook, anchor) when ``line`` is a warning or broken link about a missing claim anchor."""
    m = re.search(r"no id '(claim-[\w\-]+)' in (\d\d_\w+)\.html", line)  # a broken link, by its target
    if m:
        return m.group(2), m.group(1)
    m = re.search(r"/(\d\d_\w+)\.ipynb:\d+: WARNING: .*?'(claim-[\w\-]+)'", line)  # a build warning
    return (m.group(1), m.group(2)) if m else None


def test_the_book_builds_strictly(book):
    other = [w for w in book["warnings"] if _missing_anchor(w) not in _KNOWN and not _known_defect(w)]
    assert not other, f"{len(other)} warning(s) of the nitpicky build:\n" + "\n".join(other[:30])
    for w in book["warnings"]:
        if _known_defect(w):
            warnings.warn(f"known book defect, still to fix: {w}", stacklevel=1)
    print(f"book built in {book['seconds']:.0f} s")


def test_no_broken_internal_link(book):
    broken = broken_links(book["html"])
    other = [b for b in broken if _missing_anchor(b) not in _KNOWN]
    assert not other, f"{len(other)} broken link(s):\n" + "\n".join(other[:30])
    found = {_missing_anchor(x) for x in broken + book["warnings"]}
    cleared = sorted(_KNOWN - found)
    assert not cleared, f"these anchors exist now: delete them from KNOWN_MISSING_ANCHORS: {cleared}"


def test_chapters_api_bibliography_and_downloads(book):
    html = book["html"]
    for p in BOOKS:
        page = (html / f"{p.stem}.html").read_text(encoding="utf-8")
        assert f'_sources/{p.name}"' in page, f"{p.stem}: no download link to the notebook"
        assert (html / "_sources" / p.name).read_bytes() == p.read_bytes()  # the stored notebook itself
        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
        stored = sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
        assert page.count("<img ") >= stored, f"{p.stem}: {stored} stored images, fewer on the page"
    api = (html / "api.html").read_text(encoding="utf-8")
    assert 'id="lrank.claims.Registry"' in api and 'id="lrank.plots.overlaps"' in api
    refs = (html / "references.html").read_text(encoding="utf-8").lower()  # the style lowercases titles
    for title in ("Combining Preferences", "AdaRank", "BoostingTree", "Regression Tree Fitting", "Rankboost+",
                  "LETOR", "LightGBM"):
        assert title.lower() in refs, title
    chapter = (html / "01_rankboost.html").read_text(encoding="utf-8")
    numbered = re.findall(r'<span class="caption-number">Fig\. (\d+)', chapter)
    assert numbered and numbered[0] == "1", "figures are numbered"


@pytest.fixture(scope="module")
def browsed(book, tmp_path_factory):
    pytest.importorskip("selenium")
    if find_chromium() is None:
        pytest.skip("no chromium/chromedriver here (apt-get install -y chromium chromium-driver)")
    shots = os.environ.get("LRANK_SCREENSHOTS") or tmp_path_factory.mktemp("book-shots")
    return book_check(book["html"], shots)


def test_every_page_loads_without_console_errors_and_every_image_renders(browsed):
    assert len(browsed["pages"]) >= len(BOOKS) + 3  # chapters, front page, API, references, ...
    bad, seen = {}, set()
    for p, r in browsed["pages"].items():
        errors = [e for e in r["errors"] if not _known_defect(e)]
        seen |= {_known_defect(e) for e in r["errors"]} - {None}
        if errors or r["broken"]:
            bad[p] = dict(r, errors=errors)
    assert not bad, bad
    for k in seen:
        warnings.warn(f"known book defect, still to fix: {k}: {KNOWN_DEFECTS[k]}", stacklevel=1)


def test_known_book_defects_are_still_present(book, browsed):
    """The list of known defects only shrinks: a fixed one must leave KNOWN_DEFECTS."""
    text = "\n".join(book["warnings"] + [e for r in browsed["pages"].values() for e in r["errors"]])
    cleared = [k for k in KNOWN_DEFECTS if k not in text]
    assert not cleared, f"fixed now: delete them from KNOWN_DEFECTS: {cleared}"


def test_search_finds_rankboost(browsed):
    assert browsed["search_hits"] > 0
