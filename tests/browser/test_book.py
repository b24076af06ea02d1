"""The book (``python -m lrank site``) builds offline from the stored notebooks, strictly, and reads well.

Builds the Sphinx book once (nitpicky: every unresolved reference warns) into a temporary folder, then
checks the pages statically (no broken internal link or anchor; numbered figures and tables, and numbered
references to them that show the caption's number) and in headless Chromium (every page loads without a
console error, every image loads, search finds "RankBoost"). A small two-chapter book built here tests
what the stored notebooks may not show today (page-local anchors, missing anchors reported, numbered
references, TeX alphabets). Needs Debian's chromium and chromium-driver for the browser part (skipped
otherwise, like the notebook check).
"""

import json
import os
import re
import time
import warnings

import pytest

from lrank.paths import notebooks_dir
from lrank.site import KERNELSPEC, LANGUAGE_INFO, book_check, broken_links, build_book, find_chromium

BOOKS = sorted(notebooks_dir().glob("[0-9][0-9]*.ipynb"))

#: Deciding-cell anchors that notebooks being rewritten by their own engineers link to (their summary
#: tables, and so the index) but do not define yet (issue 33: one click from the index to the deciding
#: cell). Reported, not failed, while still missing; once a notebook defines one, the test FAILS until
#: its entry is deleted here, so this list only shrinks. Never add to it.
KNOWN_MISSING_ANCHORS: dict[str, set[str]] = {
}
_KNOWN = {(nb, a) for nb, anchors in KNOWN_MISSING_ANCHORS.items() for a in anchors}

#: Book defects found when notebooks 03-05 landed (issue 33), each matched by a fragment of its warning or
#: console error. Reported, not failed, while present; once one is gone the tests FAIL until its line is
#: deleted here, so this list only shrinks. Never add to it. (Emptied: the duplicate labels "summary" and
#: "claim-thm1" by page-local labels, 04's MathJax_Script-Regular.otf by Unicode letters, see below.)
KNOWN_DEFECTS: dict[str, str] = {
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
    import lrank  # every ranker is in the API reference, with its parameters

    rankers = [n for n in lrank.__all__ if hasattr(getattr(lrank, n, None), "get_params")]
    assert all(f'id="lrank.{n}"' in api for n in rankers) and 'id="lrank.load_model"' in api
    mart = api[api.index('id="lrank.MART"'):api.index('id="lrank.McRank"')]
    assert "min_child_samples" in mart and "colsample_bytree" in mart  # the shared parameters, listed
    assert 'href="mailto:' not in api and "NDCG&#64;10" in api  # "NDCG@10" is text, not an e-mail link
    # numpydoc's `evaluate` links to what it names where the reference documents it (else it is code)
    assert 'href="#lrank.metrics.evaluate" title="lrank.metrics.evaluate"><code class="xref py py-obj' in api
    assert "<cite>" not in api
    cli = (html / "cli.html").read_text(encoding="utf-8")  # every command's --help, with its examples
    from lrank.__main__ import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    assert all(f'id="{name}"' in cli for name in commands), "a command without its section"
    assert "lrank train --ranker lambdamart --train train.txt" in cli and "--early-stopping-rounds" in cli
    assert '<span class="pre">-ranker</span> <span class="pre">2</span>' in cli  # lrank.cli's RankLib table
    refs = (html / "references.html").read_text(encoding="utf-8").lower()  # the style lowercases titles
    for title in ("Combining Preferences", "AdaRank", "BoostingTree", "Regression Tree Fitting", "Rankboost+",
                  "LETOR", "LightGBM",
                  # the data sets and statistics the notebooks name
                  "OHSUMED", "EachMovie", "RankEval", "SymPy", "SciPy", "Individual Comparisons by Ranking",
                  "Sequentially Rejective", "The Use of Ranks", "Statistical Comparisons of Classifiers"):
        assert title.lower() in refs, title
    chapter = (html / "01_rankboost.html").read_text(encoding="utf-8")
    numbered = re.findall(r'<span class="caption-number">Fig\. (\d+)', chapter)
    assert numbered and numbered[0] == "1", "figures are numbered"


def _needs_tex_fonts(variants: list[str]) -> list[str]:
    """The MathML variants for which MathJax 2 (NativeMML) asks for its own TeX fonts, which are not shipped
    (browsers draw no mathvariant; "bold", "italic" and the like MathJax styles with CSS)."""
    return [v for v in variants if re.search(r"script|fraktur|double-struck", v)]


_NUMREF = re.compile(r'<a class="reference internal" href="([\w.]*)#((?:fig|tab)-[\w\-]+)">'
                     r'<span class="std std-numref">[^<]*?(?:Fig\.|Table) (\d+)\)?</span>')
_FIGURE = re.compile(r'<figure[^>]* id="((?:fig|tab)-[\w\-]+)">.*?'
                     r'<span class="caption-number">(?:Fig\.|Table) (\d+) </span>', re.S)


def _numbered_references(html_dir) -> tuple[dict[str, list[tuple[str, str, int]]], dict[str, int]]:
    """Per page, its numbered references to figures and tables (target page, label, number shown); and the
    number in the caption of each figure and table of the book, by label."""
    refs, numbers = {}, {}
    for page in sorted(html_dir.glob("[0-9][0-9]*.html")):
        text = page.read_text(encoding="utf-8")
        refs[page.name] = [(target or page.name, label, int(n)) for target, label, n in _NUMREF.findall(text)]
        numbers |= {label: int(n) for label, n in _FIGURE.findall(text)}
    return refs, numbers


def test_chapters_refer_to_their_figures_by_number(book):
    """Each chapter that reproduces a figure of its paper ("<paper>_figN") refers to it by the book's number
    where its text names the paper's figure, and every number shown is the one under the figure."""
    refs, numbers = _numbered_references(book["html"])
    for p in BOOKS:
        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
        names = [o["metadata"]["image/png"]["lrank"]["figure"] for c in cells for o in c.get("outputs", [])
                 if "lrank" in (o.get("metadata") or {}).get("image/png", {})]
        if any(re.search(r"_fig\d+$", n) for n in names):
            assert refs[f"{p.stem}.html"], f"{p.stem}: no numbered reference to its figures"
    for page, rs in refs.items():
        for target, label, n in rs:
            assert label in numbers, f"{page}: a reference to {label}, which the book does not show"
            assert n == numbers[label], f"{page}: {label} is shown as Fig. {n}, its caption: {numbers[label]}"
            assert (book["html"] / target).read_text(encoding="utf-8").count(f'id="{label}"') == 1
    # the index's table of artifacts leads to every figure of the book, by its number
    assert {label for _, label, _ in refs["00_index.html"]} == {k for k in numbers if k.startswith("fig-")}


def test_tables_under_a_title_are_numbered(book):
    """A table shown under a one-line bold title is a numbered table captioned by it, and a chapter's "Table
    N" refers to the table titled "Table N" by number."""
    refs, numbers = _numbered_references(book["html"])
    five = (book["html"] / "05_rankboost_plus.html").read_text(encoding="utf-8")
    for n in (1, 2, 3, 4):
        label = f"tab-05-rankboost-plus-table{n}"
        assert label in numbers, f"05's Table {n} is not numbered"
    assert re.search(r'<span class="caption-number">Table \d+ </span><span class="caption-text">'
                     r'<strong>Table 1</strong> \(average rank', five)
    assert {label for _, label, _ in refs["05_rankboost_plus.html"]} >= {"tab-05-rankboost-plus-table1"}
    tables = [k for k in numbers if k.startswith("tab-")]
    assert sorted(numbers[k] for k in tables) == list(range(1, len(tables) + 1))  # numbered across the book


def test_derived_formulas_are_numbered_equations(book):
    """Every formula a chapter derives and shows (``display(Math(...))``) is a numbered display equation
    of its page, labelled eq-<chapter>-<k>, k = 1..n in the order shown; none is left as a raw output."""
    total = 0
    for path in BOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        n = sum("text/latex" in (o.get("data") or {}) for c in nb["cells"] for o in c.get("outputs", []))
        page = (book["html"] / f"{path.stem}.html").read_text(encoding="utf-8")
        stem = path.stem.replace("_", "-")
        ids = re.findall(rf'id="equation-eq-{stem}-(\d+)"', page)
        assert [int(k) for k in ids] == list(range(1, n + 1)), f"{path.stem}: equations {ids}, expected {n}"
        assert len(re.findall(r'<span class="eqno">\((\d+)\)', page)) == n, path.stem
        total += n
    assert total >= 10  # the chapters' derivations show their results (21 formulas when written)


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
        if errors or r["broken"] or _needs_tex_fonts(r["variants"]):
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


# --------------------------------------------------------------------------- a small book of its own
# Two chapters made here with what the real ones have in common (claim ids and a "summary" anchor used by
# both, same-page links to them, a link into the other chapter, the index's links in HTML outputs) and the
# faults the checks must catch, so that they are tested whatever the stored notebooks hold today.
def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _html_output(html: str) -> dict:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "display(HTML(table))",
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"text/html": html}}]}


# a 1x1 PNG
_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _figure_output(name: str) -> dict:
    return {"cell_type": "code", "execution_count": 2, "metadata": {},
            "source": f"save_figure(fig, {name!r})",
            "outputs": [{"output_type": "display_data", "data": {"image/png": _PNG, "text/plain": "<Figure>"},
                         "metadata": {"image/png": {"lrank": {"figure": name}}}}]}


def _tables_output() -> dict:
    table = "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>"
    outs = [("text/markdown", "**Table 2** (the paper's second table)"), ("text/html", table),
            ("text/markdown", "**What to see.** A sentence on the figure above, then a table."),
            ("text/html", table),
            ("text/html", table)]  # a table without a title
    return {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": "display(t2)",
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {k: v, "text/plain": ""}}
                        for k, v in outs]}


def _chapter(title: str, links: str, cells: list[dict] = ()) -> dict:
    text = (f"# {title}\n\n{links}\n\n<a id=\"claim-thm1\"></a>\n## Theorem 1\n\nThe loss $\\mathcal L$ over "
            "$\\mathbb R$, its gradient $\\mathfrak g$.\n\n<a id=\"summary\"></a>\n## Summary\n\nDone.\n")
    meta = {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": [_md(text), *cells]}


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    nbs = tmp_path_factory.mktemp("mini") / "notebooks"
    nbs.mkdir()
    (nbs / "01_rankboost.ipynb").write_text(json.dumps(_chapter(
        "One", "[the theorem](#claim-thm1), [the summary](#summary); the paper's Fig. 5, Fig. 4, Fig. 5; "
               "its Table 2, Table 1",
        [_figure_output("rankboost_fig2"), _figure_output("rankboost_fig5"), _tables_output()])))
    (nbs / "04_tree_fitting.ipynb").write_text(json.dumps(_chapter(
        "Four", "[the theorem](#claim-thm1), [one's theorem](01_rankboost.ipynb#claim-thm1), "
                "[missing here](#claim-gone), [missing there](01_rankboost.ipynb#claim-nope); "
                "[one's curve](01_rankboost.ipynb#fig-rankboost-fig5), saved as `rankboost_fig2`, "
                "and Fig. 5 of this paper (not shown here); [no curve](#fig-nothing)",
        [_html_output('<a href="01_rankboost.ipynb#summary">ok</a> '
                      '<a href="01_rankboost.ipynb#claim-none">x</a>'
                      "<table><tr><td>rankboost_fig2</td><td>rankboost_fig9</td></tr></table>")])))
    index, warns = build_book(nbs.parent / "book", sorted(nbs.glob("*.ipynb")))
    # the front page's table of contents names the chapters this small book leaves out
    return {"html": index.parent, "warnings": [w for w in warns if "nonexisting document" not in w]}


def test_chapter_labels_are_page_local_and_every_link_is_checked(mini):
    """Two chapters may use one anchor name ("summary", "claim-thm1"): no duplicate label, each page keeps
    the element ids its links name, and a link to an anchor that is missing is still reported, by the
    build (Markdown links) and by broken_links (links in outputs)."""
    html, warns = mini["html"], mini["warnings"]
    assert not [w for w in warns if "duplicate label" in w], warns
    for page in ("01_rankboost.html", "04_tree_fitting.html"):
        text = (html / page).read_text(encoding="utf-8")
        assert 'id="claim-thm1"' in text and 'id="summary"' in text, page
        assert 'class="reference internal" href="#claim-thm1"' in text, page
    four = (html / "04_tree_fitting.html").read_text(encoding="utf-8")
    assert 'href="01_rankboost.html#claim-thm1"' in four and 'href="01_rankboost.html#summary"' in four
    where = r"04_tree_fitting\.ipynb:\d+: WARNING: .*?'((?:claim|fig)-\w+)'"
    missing = sorted(re.findall(where, "\n".join(warns)))
    assert missing == ["claim-gone", "claim-nope", "fig-nothing"], warns
    assert len(warns) == 3, warns
    broken = broken_links(html)
    there = sorted(re.findall(r"no id '([\w\-]+)' in 01_rankboost", "\n".join(broken)))
    assert there == ["claim-none", "claim-nope"], broken
    assert len(broken) == 4, broken  # and #claim-gone, #fig-nothing on their own page


def test_links_and_names_of_figures_become_numbered_references(mini):
    """A link to a figure, a figure's name (in Markdown code, or alone in a table cell of an HTML output),
    and the first "Fig. N" of a cell naming the paper's figure the chapter reproduces are numbered
    references (with the book's number, to the figure); a "Fig. N" that the chapter does not reproduce, and
    a name that is no figure of the book, are left as they are."""
    refs, numbers = _numbered_references(mini["html"])
    assert numbers == {"fig-rankboost-fig2": 1, "fig-rankboost-fig5": 2, "tab-01-rankboost-table2": 1}
    assert refs["01_rankboost.html"] == [("01_rankboost.html", "fig-rankboost-fig5", 2),  # the first Fig. 5
                                         ("01_rankboost.html", "tab-01-rankboost-table2", 1)]  # not Table 1
    one = (mini["html"] / "01_rankboost.html").read_text(encoding="utf-8")
    assert one.count('class="caption-number">Table') == 1 and "What to see." in one  # one titled table
    assert sorted(refs["04_tree_fitting.html"]) == [("01_rankboost.html", "fig-rankboost-fig2", 1),
                                                    ("01_rankboost.html", "fig-rankboost-fig2", 1),  # table
                                                    ("01_rankboost.html", "fig-rankboost-fig5", 2)]
    four = (mini["html"] / "04_tree_fitting.html").read_text(encoding="utf-8")
    assert "one’s curve (Fig. 2)" in four or "one's curve (Fig. 2)" in four
    assert "<td>rankboost_fig9</td>" in four


def test_tex_alphabets_render_without_unshipped_fonts(mini, tmp_path_factory):
    """\\mathcal, \\mathbb, \\mathfrak letters are drawn as Unicode letters from the shipped fonts: no request
    for MathJax's TeX fonts (a console error), no mathvariant the browser would not draw."""
    pytest.importorskip("selenium")
    if find_chromium() is None:
        pytest.skip("no chromium/chromedriver here (apt-get install -y chromium chromium-driver)")
    page = book_check(mini["html"], tmp_path_factory.mktemp("mini-shots"))["pages"]["01_rankboost.html"]
    assert page["errors"] == [] and not _needs_tex_fonts(page["variants"]), page
    text = (mini["html"] / "01_rankboost.html").read_text(encoding="utf-8")
    assert "\\mathcal L" in text  # the TeX is on the page; the browser turned it into letters
