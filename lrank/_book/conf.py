"""Sphinx configuration of the lrank book (``python -m lrank site`` copies this folder and the stored
notebooks into a build folder and runs ``sphinx-build`` there; nothing is executed)."""

import os
import re
import sys

import jupyter_server_mathjax

project = "lrank"
author = "the lrank authors"
copyright = "the lrank authors"  # noqa: A001
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax",
              "sphinxcontrib.bibtex"]
root_doc = "index"
# numpydoc's `name` is a cross-reference: it links where the API reference documents the name (see
# _unlisted_name_as_code for the others)
default_role = "py:obj"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "sphinx_book_theme"
html_title = "lrank: boosting for learning to rank"
html_theme_options = {"use_download_button": True, "show_toc_level": 2}
# MathJax from PyPI (jupyter-server-mathjax ships MathJax 2.7): the book needs no network to show maths
html_static_path = [os.path.join(os.path.dirname(jupyter_server_mathjax.__file__), "static"), "_static"]
# letters of TeX's alphabets (\mathcal L, ...) as Unicode letters drawn from the shipped STIX-Web fonts: see
# lrank-math.js (MathJax's own fonts for them are not shipped)
html_css_files = ["lrank-math.css"]
mathjax_path = "MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
# rendered as MathML, which browsers draw natively: MathJax 2's HTML-CSS output probes web fonts through an
# "about:blank" font that Chromium reports as a console error
mathjax2_config = {"menuSettings": {"renderer": "NativeMML"}, "showMathMenu": False, "messageStyle": "none",
                   # what Sphinx and myst-nb configure for MathJax 3, in MathJax 2's words
                   "tex2jax": {"processClass": "tex2jax_process|mathjax_process|math|output_area",
                               "ignoreClass": "tex2jax_ignore|mathjax_ignore|document"},
                   "HTML-CSS": {"availableFonts": ["STIX-Web"], "preferredFont": "STIX-Web",
                                "webFont": "STIX-Web", "imageFont": None}}  # the only fonts shipped
# a fixed light mode: the theme logs an error for an unset mode on a first visit
html_context = {"default_mode": "light"}
# the notebooks are stored with their outputs: the book shows them, never runs them
nb_execution_mode = "off"
nb_render_markdown_format = "myst"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
numfig = True
math_numfig = True
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
nitpicky = True
# Offline build (no intersphinx): types of other libraries cannot resolve; every lrank name must.
# RankingData is documented where users import it (lrank.RankingData); its annotations name the pairs' type
# unqualified
nitpick_ignore = [("py:class", "CriticalPairs")]
nitpick_ignore_regex = [
    ("py:class", r"(numpy|np|pandas|pd|matplotlib|plt|scipy|sklearn|collections|typing|pathlib|numba)\..*"),
    ("py:class", r"(array-like|array_like|optional|callable|ndarray|DataFrames?|Series|Path|Any|Figure"
                 r"|Axes|sequence|iterable|mapping|int|float|str|bool|None|object|bytes|type|absolute|shape)"),
    # numpydoc type fields that are prose, not names: shapes "(n_docs,)", choices "{"max", ...}", numbers
    ("py:class", r"n_\w+( \+ 1)?|\d+|\".*\"|'.*'|\{.*|.*\}|.* .*"),
]
sys.path.insert(0, os.path.abspath(os.environ.get("LRANK_REPO", "..")))


# --------------------------------------------------------------------------- page-local labels
# A chapter's own anchors (its claims' "claim-..." targets, its "summary") are named per notebook, and two
# notebooks may use the same name (claim ids are unique within a paper only). Sphinx's labels are global:
# the label a chapter registers for the book is "<chapter>-<name>" (e.g. "01_rankboost-claim-thm1", for
# {ref} and {numref} from other pages), while the element id stays the notebook's ("claim-thm1", where
# "01_rankboost.html#claim-thm1" leads) and the chapter's own links "[...](#claim-thm1)" still resolve, and
# warn when their target is missing. Figures, tables and equations ("fig-", "tab-", "eq-") are numbered
# across the book and keep their global names.
BOOK_WIDE_LABELS = ("fig-", "tab-", "eq-")


def _chapter(docname: str) -> bool:
    return bool(re.match(r"\d\d_", docname))


def _local_labels_out(document, docname: str) -> None:
    """Rename the chapter's own labels to "<docname>-<name>" while Sphinx's domains collect them."""
    renamed = {}
    for name, explicit in list(document.nametypes.items()):
        if explicit and not name.startswith(BOOK_WIDE_LABELS) and document.nameids.get(name):
            new = f"{docname}-{name}"
            document.nametypes[new] = document.nametypes.pop(name)
            document.nameids[new] = document.nameids.pop(name)
            renamed[new] = name
    document.lrank_local_labels = renamed


def _local_labels_back(document) -> None:
    """The chapter's names again, for its own "#name" links (resolved by MyST after the domains)."""
    for new, name in getattr(document, "lrank_local_labels", {}).items():
        document.nametypes[name] = document.nametypes.pop(new)
        document.nameids[name] = document.nameids.pop(new)


# --------------------------------------------------------------------------- figures named in HTML outputs
# A table cell of an HTML output (the index's table of artifacts) that holds just the name of a figure the
# book shows gets a numbered reference to it, like {numref} in Markdown: "Fig. 12: adarank_fig10".
_NAME_CELL = re.compile(r"<td>(\w+)</td>")


def _figures_in_html_outputs(app, doctree, docname: str) -> None:
    from docutils import nodes

    from lrank.site import figure_label

    std = app.env.domains.standard_domain
    for raw in list(doctree.findall(nodes.raw)):
        if "html" not in raw.get("format", "").split():
            continue

        def cell(m: re.Match) -> str:
            label = figure_label(m.group(1))
            if label not in std.labels:
                return m.group(0)
            doc, labelid, _ = std.labels[label]
            number = app.env.toc_fignumbers.get(doc, {}).get("figure", {}).get(labelid)
            if not number:
                return m.group(0)
            uri = app.builder.get_relative_uri(docname, doc) + "#" + labelid
            return (f'<td><a class="reference internal" href="{uri}"><span class="std std-numref">'
                    f'Fig. {".".join(map(str, number))}</span></a>: {m.group(1)}</td>')

        text = _NAME_CELL.sub(cell, raw.astext())
        if text != raw.astext():
            raw.replace_self(nodes.raw("", text, format=raw["format"], classes=raw.get("classes", [])))


# --------------------------------------------------------------------------- numbered tables
# myst-nb captions outputs only as figures: lrank.site gives a table output (under its one-line title) the
# figure metadata with the class "lrank-table", and the book turns that figure into a table figure, which
# Sphinx numbers as a table ("Table 3", {numref} to its "tab-..." label).
def _table_figures(document) -> None:
    from docutils import nodes

    from lrank.site import TableFigure

    for node in list(document.findall(nodes.figure)):
        if "lrank-table" in node["classes"]:
            node.__class__ = TableFigure  # in place: the document's ids keep pointing at it


def _no_mail_links(document) -> None:
    """A docstring's "NDCG@10" is text: docutils links any bare ``word@word`` as an e-mail address
    ("mailto:NDCG@10"), and nothing the book documents is one."""
    from docutils import nodes

    for ref in list(document.findall(nodes.reference)):
        if ref.get("refuri", "").startswith("mailto:"):
            ref.replace_self(nodes.Text(ref.astext()))


def _unlisted_name_as_code(app, env, node, contnode):
    """A `name` (the default role, ``py:obj``) that the API reference does not document (a private module,
    a parameter, an internal helper) is shown as code, as before links: only explicit roles must resolve."""
    if node.get("refdomain") == "py" and node.get("reftype") == "obj":
        return contnode
    return None


def _prose_not_type(app, what, name, obj, options, lines):
    """A constant's doc comment (``#:``) whose first line holds prose, a colon, then more prose keeps that
    colon as prose: napoleon reads ``text: more`` on a constant's first line as ``type: description``, and
    the nitpicky build then looks the prose up as a class. (Runs before napoleon.)"""
    if what in ("data", "attribute") and lines:
        head, sep, tail = lines[0].partition(": ")
        if sep and " " in head.strip():
            lines[0] = f"{head} - {tail}"


def setup(app):
    app.connect("autodoc-process-docstring", _prose_not_type, priority=100)
    from sphinx.transforms import SphinxTransform
    from sphinx.transforms.references import SphinxDomains
    from sphinx.writers.html5 import HTML5Translator

    class TablesNumbered(SphinxTransform):
        default_priority = SphinxDomains.default_priority - 2

        def apply(self, **kwargs):
            _table_figures(self.document)

    from lrank.site import TableFigure

    app.add_enumerable_node(TableFigure, "table",
                            html=(HTML5Translator.visit_figure, HTML5Translator.depart_figure))
    app.add_transform(TablesNumbered)

    class NoMailLinks(SphinxTransform):
        default_priority = SphinxDomains.default_priority

        def apply(self, **kwargs):
            _no_mail_links(self.document)

    app.add_transform(NoMailLinks)

    class LocalLabelsOut(SphinxTransform):
        default_priority = SphinxDomains.default_priority - 1

        def apply(self, **kwargs):
            docname = self.env.current_document.docname
            if _chapter(docname):
                _local_labels_out(self.document, docname)

    class LocalLabelsBack(SphinxTransform):
        default_priority = SphinxDomains.default_priority + 1

        def apply(self, **kwargs):
            _local_labels_back(self.document)

    with open(os.path.join(app.confdir, "lrank-math.js"), encoding="utf-8") as f:
        app.add_js_file(None, type="text/x-mathjax-config", body=f.read())
    app.connect("doctree-resolved", _figures_in_html_outputs)
    app.connect("missing-reference", _unlisted_name_as_code)
    app.add_transform(LocalLabelsOut)
    app.add_transform(LocalLabelsBack)
    return {"parallel_read_safe": True}
