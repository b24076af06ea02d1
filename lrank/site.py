"""Notebooks as a reader meets them: cleaned when stored, exported as static HTML, checked in a browser.

* :func:`clean_notebook` removes run noise from an executed notebook (papermill's per-cell metadata,
  timestamps and durations, the injected-parameters cell, kernel-version metadata) and numbers the
  executed cells 1..n; ``python -m lrank reproduce`` applies it to every notebook it writes.
* :func:`export_site` writes every notebook as HTML with an index page (``python -m lrank site``).
* :func:`browser_check` serves JupyterLab on localhost (a random free port and token), opens each
  notebook in headless Chromium through Selenium and Debian's ``chromedriver``, counts the rendered
  images and error outputs, and saves one screenshot per notebook (``python -m lrank site --check``).
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                 "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                 "pygments_lexer": "ipython3"}
_NOISY_CELL_METADATA = ("papermill", "execution", "ExecuteTime", "collapsed", "scrolled")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1400,1800")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _text(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def _lines(text: str | list[str]) -> list[str]:
    """A stream's text as nbformat stores it: a list of lines, each with its newline."""
    return _text(text).splitlines(keepends=True)


def clean_notebook(nb: dict) -> dict:
    """A copy of an executed notebook (nbformat 4 as a dict) without run noise.

    Removes the ``injected-parameters`` cell, papermill's notebook and cell metadata (timestamps,
    durations, status), ``execution`` timing metadata and empty tag lists; fixes the kernelspec and
    language metadata to version-free values; joins consecutive outputs of one stream (stdout, stderr:
    the kernel's cuts depend on timing) and stores every stream's text as a list of lines; numbers the
    executed code cells 1..n in order (their ``execute_result`` outputs likewise); gives cells without an
    id a deterministic one (nbformat 4.5 and later). Idempotent.

    Parameters
    ----------
    nb : dict
        The notebook as read from its ``.ipynb`` (``json.loads``); not changed.

    Returns
    -------
    dict
        The cleaned copy.
    """
    nb = copy.deepcopy(dict(nb))
    meta = {k: v for k, v in nb.get("metadata", {}).items() if k not in ("papermill", "widgets")}
    meta["kernelspec"] = dict(KERNELSPEC)
    meta["language_info"] = dict(LANGUAGE_INFO)
    nb["metadata"] = meta
    cells = []
    count = 0
    for cell in nb.get("cells", []):
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags:
            continue
        cell = dict(cell)
        cmeta = {k: v for k, v in cell.get("metadata", {}).items() if k not in _NOISY_CELL_METADATA}
        if not cmeta.get("tags"):
            cmeta.pop("tags", None)
        cell["metadata"] = cmeta
        if "id" not in cell and nb.get("nbformat_minor", 0) >= 5:
            cell["id"] = hashlib.sha256(f"{len(cells)}\0{_source(cell)}".encode()).hexdigest()[:12]
        if cell.get("cell_type") == "code":
            outputs = []
            for out in cell.get("outputs", []):
                out = dict(out)
                if "transient" in out:
                    out.pop("transient")
                last = outputs[-1] if outputs else {}
                if (out.get("output_type") == "stream" and last.get("output_type") == "stream"
                        and out.get("name") == last.get("name")):
                    # where the kernel cut a stream into messages depends on timing: one output per run
                    # of a stream, as nbval compares them
                    last["text"] = _text(last.get("text", "")) + _text(out.get("text", ""))
                    continue
                outputs.append(out)
            for out in outputs:  # one stored form whether or not the stream was cut (a joined run is
                # a string, an uncut one nbformat's list of lines)
                if out.get("output_type") == "stream":
                    out["text"] = _lines(out.get("text", ""))
            ran = cell.get("execution_count") is not None or bool(outputs)
            if ran:
                count += 1
                cell["execution_count"] = count
                for out in outputs:
                    if out.get("output_type") == "execute_result":
                        out["execution_count"] = count
            else:
                cell["execution_count"] = None
            cell["outputs"] = outputs
        cells.append(cell)
    nb["cells"] = cells
    return nb


def clean_file(path: Path) -> bool:
    """Clean a stored notebook in place (:func:`clean_notebook`); True when the file changed.

    Parameters
    ----------
    path : Path
        The ``.ipynb`` file. It is rewritten (JSON indented by 1, sorted keys, non-ASCII kept, final
        newline) only when that text differs from the file's.

    Returns
    -------
    bool
        Whether the file was rewritten.
    """
    text = Path(path).read_text(encoding="utf-8")
    nb = clean_notebook(json.loads(text))
    new = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if new != text:
        Path(path).write_text(new, encoding="utf-8")
        return True
    return False


def image_outputs(nb: dict) -> list[str]:
    """The figure names of a notebook's stored ``image/png`` outputs (``""`` for an unnamed image).

    Parameters
    ----------
    nb : dict
        The notebook as read from its ``.ipynb`` (nbformat 4).

    Returns
    -------
    list of str
        One per ``image/png`` output of a code cell, in order: the name :func:`lrank.plots.save_figure`
        stored in its metadata (``metadata["image/png"]["lrank"]["figure"]``), else ``""``.
    """
    names = []
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if "image/png" in out.get("data", {}):
                md = out.get("metadata", {}).get("image/png", {})
                names.append(md.get("lrank", {}).get("figure", ""))
    return names


def error_outputs(nb: dict) -> int:
    """How many stored outputs are errors (``output_type == "error"``).

    Parameters
    ----------
    nb : dict
        The notebook as read from its ``.ipynb`` (nbformat 4).

    Returns
    -------
    int
        The number of error outputs over all cells.
    """
    return sum(out.get("output_type") == "error" for cell in nb.get("cells", [])
               for out in cell.get("outputs", []))


# --------------------------------------------------------------------------- static HTML export
def export_site(out: Path, notebooks: list[Path]) -> Path:
    """Export ``notebooks`` to ``out/<stem>.html`` with ``jupyter nbconvert`` and write ``out/index.html``.

    The export uses the stored outputs (nothing is executed).

    Parameters
    ----------
    out : Path
        The output folder (created). The ``figures`` folder beside the notebooks' folder (that of the
        first notebook) is copied to ``out/figures``, without ``results`` and ``paper``, and the pages'
        links to other notebooks and to ``../figures/`` are rewritten to the export.
    notebooks : list of Path
        The stored notebooks, in the index's order.

    Returns
    -------
    Path
        ``out/index.html``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output-dir", str(out),
           *[str(p) for p in notebooks]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"nbconvert failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    # links between notebooks and to ../figures/ work in the export too
    figures = Path(notebooks[0]).resolve().parent.parent / "figures" if notebooks else None
    if figures is not None and figures.is_dir():
        shutil.copytree(figures, out / "figures", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("results", "paper"))
    for p in notebooks:
        page = out / f"{p.stem}.html"
        text = page.read_text(encoding="utf-8")
        text = re.sub(r'href="(\d\d[\w.\-]*)\.ipynb"', r'href="\1.html"', text)
        page.write_text(text.replace('href="../figures/', 'href="figures/'), encoding="utf-8")
    rows = []
    for p in notebooks:
        nb = json.loads(p.read_text(encoding="utf-8"))
        title = next((_source(c).lstrip("# ").splitlines()[0] for c in nb["cells"]
                      if c["cell_type"] == "markdown" and _source(c).strip()), p.stem)
        rows.append(f'<li><a href="{html.escape(p.stem)}.html">{html.escape(p.stem)}</a>: '
                    f"{html.escape(title)} ({len(image_outputs(nb))} figures)</li>")
    index = out / "index.html"
    index.write_text("<!doctype html><meta charset='utf-8'><title>lrank notebooks</title>"
                     "<h1>lrank notebooks</h1><p>Static export of the stored notebooks (quick profile)."
                     f"</p><ul>{''.join(rows)}</ul>\n", encoding="utf-8")
    return index


# --------------------------------------------------------------------------- browser check
def find_chromium() -> tuple[str, str] | None:
    """Paths of Debian's ``chromium`` and ``chromedriver``, or None when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser and driver:
        return browser, driver
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lab_settings(folder: Path) -> None:
    """JupyterLab user settings for a deterministic check: every cell rendered, no news pop-ups."""
    nb_dir = folder / "@jupyterlab" / "notebook-extension"
    nb_dir.mkdir(parents=True, exist_ok=True)
    (nb_dir / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    doc_dir = folder / "@jupyterlab" / "docmanager-extension"  # never write the notebook back
    doc_dir.mkdir(parents=True, exist_ok=True)
    (doc_dir / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    app_dir = folder / "@jupyterlab" / "apputils-extension"
    app_dir.mkdir(parents=True, exist_ok=True)
    (app_dir / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))


# Counts inside the panel of the current tab named arguments[0] (the notebook's file name), so that a
# panel left from an earlier notebook is never counted.
_COUNT_JS = """
const tab = Array.from(document.querySelectorAll('.lm-DockPanel .lm-TabBar-tab.lm-mod-current')).find(
    t => t.querySelector('.lm-TabBar-tabLabel')?.innerText.trim() === arguments[0]);
if (!tab) return null;
const panel = document.getElementById(tab.getAttribute('data-id'));
const nb = panel && panel.querySelector('.jp-Notebook');
if (!nb) return null;
const q = (s) => nb.querySelectorAll(s).length;
// JupyterLab renders an error output with the stderr renderer: recognise it by its traceback
const err = Array.from(nb.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')).filter(
    e => /Traceback \\(most recent call last\\)|^\\w*(Error|Exception)\\b.*:/m.test(e.innerText));
return {cells: q('.jp-Cell'), images: q('.jp-OutputArea-output img'), errors: err.length};
"""


def browser_check(notebooks: list[Path], root: Path, shots: Path, timeout: float = 120.0,
                  log=print) -> list[dict[str, Any]]:
    """Open each notebook in JupyterLab in headless Chromium and compare what renders with what is stored.

    Parameters
    ----------
    notebooks : list of Path
        Notebook files under ``root``.
    root : Path
        The folder JupyterLab serves (the checkout).
    shots : Path
        Folder for one screenshot per notebook (``<stem>.png``).
    timeout : float, default 120.0
        Seconds to wait for one notebook to render (also the driver's page-load timeout).
    log : callable, optional
        Called with one line per notebook (its verdict, counts and screenshot); default `print`.

    Returns
    -------
    list of dict
        Per notebook: ``notebook``, ``cells``, ``stored_images``, ``rendered_images``, ``errors``
        (rendered error outputs), ``screenshot``, ``ok`` (rendered == stored images, no error, and
        some image when the notebook calls ``save_figure``), ``problem`` (why not ok, else "").
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if found is None:
        raise RuntimeError("the browser check needs Debian's chromium and chromium-driver "
                           "(apt-get install -y chromium chromium-driver)")
    browser, driver_path = found
    shots = Path(shots)
    shots.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="lrank-browser-"))
    settings = work / "settings"
    _lab_settings(settings)
    port, token = _free_port(), hashlib.sha256(os.urandom(16)).hexdigest()[:32]
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(work / "config"), JUPYTER_RUNTIME_DIR=str(work / "rt"),
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(work / "ws"))
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={work / 'ws'}",
         "--ServerApp.open_browser=False", *(["--allow-root"] if _is_root() else [])],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=open(work / "server.log", "w"))
    base = f"http://127.0.0.1:{port}"
    results: list[dict[str, Any]] = []
    drv = None
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
                break
            except OSError as exc:
                if server.poll() is not None:
                    log_text = (work / "server.log").read_text()[-2000:]
                    raise RuntimeError("jupyter lab exited:\n" + log_text) from exc
                time.sleep(0.2)
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for flag in CHROMIUM_FLAGS:
            opts.add_argument(flag)
        opts.add_argument(f"--user-data-dir={work / 'chromium'}")
        drv = webdriver.Chrome(service=Service(driver_path), options=opts)
        drv.set_page_load_timeout(timeout)
        for index, path in enumerate(notebooks):
            nb = json.loads(Path(path).read_text(encoding="utf-8"))
            stored = len(image_outputs(nb))
            rel = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
            # A workspace of its own, reset, per notebook: JupyterLab restores the tabs of a shared one
            drv.get(f"{base}/lab/workspaces/check-{index}/tree/{rel}?reset&token={token}")
            t0, counts, last, stable = time.monotonic(), None, None, 0
            while time.monotonic() - t0 < timeout:
                counts = drv.execute_script(_COUNT_JS, Path(path).name)
                if counts and counts["cells"] == len(nb["cells"]) and counts["images"] >= stored:
                    stable = stable + 1 if counts == last else 0
                    if stable >= 3:
                        break
                last = counts
                time.sleep(0.5)
            counts = counts or {"cells": 0, "images": 0, "errors": 0}
            shot = shots / f"{Path(path).stem}.png"
            drv.execute_script("const i = document.querySelector("
                               "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img');"
                               "if (i) i.scrollIntoView({block: 'center'});")
            time.sleep(0.5)
            drv.save_screenshot(str(shot))
            ok = (counts["images"] == stored and counts["errors"] == 0 and error_outputs(nb) == 0
                  and (stored > 0 or not _saves_figures(nb)))
            if ok:
                problem = ""
            elif error_outputs(nb):
                problem = "the stored notebook has an error output"
            elif counts["errors"]:
                problem = f"{counts['errors']} error outputs rendered"
            elif counts["images"] != stored:
                problem = f"{counts['images']} images rendered, {stored} stored"
            else:
                problem = "calls save_figure but stores no image (rerun python -m lrank reproduce)"
            row = {"notebook": Path(path).stem, "cells": counts["cells"], "stored_images": stored,
                   "rendered_images": counts["images"], "errors": counts["errors"],
                   "screenshot": str(shot), "ok": ok, "problem": problem}
            log(f"{'ok    ' if ok else 'FAILED'} {row['notebook']}: {row['rendered_images']} of {stored} "
                f"images rendered, {row['errors']} errors, {row['cells']} cells "
                f"({time.monotonic() - t0:.0f} s) -> {shot}" + (f"; {problem}" if problem else ""))
            results.append(row)
            drv.get("about:blank")
            _shutdown_kernels(base, token)
    finally:
        if drv is not None:
            drv.quit()
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)
    return results


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _saves_figures(nb: dict) -> bool:
    return any("save_figure(" in _source(c) for c in nb.get("cells", []) if c.get("cell_type") == "code")


def _shutdown_kernels(base: str, token: str) -> None:
    try:
        with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=5) as r:
            sessions = json.loads(r.read())
        for s in sessions:
            req = urllib.request.Request(f"{base}/api/sessions/{s['id']}?token={token}", method="DELETE")
            urllib.request.urlopen(req, timeout=10).close()
    except OSError:
        pass


# --------------------------------------------------------------------------- the Sphinx book
BOOK_CONFIG = Path(__file__).resolve().parent / "_book"


_ANCHOR_LINE = re.compile(r'^[ \t]*(?:<a id="[\w\-.]+"></a>[ \t]*)+$', re.M)


def figure_label(name: str) -> str:
    """The book's label of a saved figure, which is also the element id of the figure on its page.

    Parameters
    ----------
    name : str
        The figure's name as saved (``rankboost_fig5``).

    Returns
    -------
    str
        ``fig-`` and the name with hyphens (``fig-rankboost-fig5``), for ``{numref}`` and links.
    """
    return "fig-" + name.replace("_", "-")


_FIGURE_LINK = re.compile(r"\[([^\]]*)\]\((?:\d\d_[\w\-]*\.ipynb)?#(fig-[\w\-]+)\)")
# what is not prose: code spans, maths, links, roles
_NOT_PROSE = re.compile(r"(`+)[^`]*?\1|\$\$.*?\$\$|\$[^$\n]*\$|\[[^\]]*\]\([^)]*\)|\{\w+\}`[^`]*`", re.S)
# "Fig. 5", "Table 2"; not the range "Fig. 5-7"
_PAPER_FIGURE = re.compile(r"\b(?:Fig\.|Table) \d+\b(?![\-\u2013]\d)")
# a table's title as the notebooks display it above the table: one line "**Table 2** (what it shows)"; not
# the sentence saying what to see in a figure
_TABLE_TITLE = re.compile(r"\*\*(?!What to see)[^*\n]+\*\*[^\n]*")


def _numbered_references(text: str, shown: set[str], own: dict[str, str]) -> str:
    """A markdown cell's text with numbered references ({numref}) to the book's figures.

    * a link to a figure, ``[text](#fig-...)`` or ``[text](NN_name.ipynb#fig-...)``, becomes
      ``{numref}`text (Fig. %s) <fig-...>``` (a link to a figure that is not shown stays, and the build
      warns about it);
    * a figure named in code, ```name``` of a figure in ``shown``, is followed by ``({numref}`fig-...`)``;
    * the first "Fig. N" or "Table N" of the cell's prose (outside headings, code, maths and links) naming
      the paper's figure or table that this chapter reproduces (``own``: "Fig. N" to its label, from saved
      names ``<paper>_figN``, "Table N" to the label of the table titled so) is followed by
      "(here {numref}`...`)".
    """
    labels = {figure_label(n) for n in shown}

    def link(m: re.Match) -> str:
        words, label = m.group(1).replace("`", "").strip(), m.group(2)
        if label not in labels:
            return m.group(0)
        return f"{{numref}}`{words} (Fig. %s) <{label}>`" if words else f"{{numref}}`{label}`"

    text = _FIGURE_LINK.sub(link, text)
    if shown:
        names = "|".join(re.escape(n) for n in sorted(shown, key=len, reverse=True))
        text = re.sub(rf"`({names})`(?![^\[\n]*\]\()",
                      lambda m: f"{m.group(0)} ({{numref}}`{figure_label(m.group(1))}`)", text)
    done = set(re.findall(r"<(fig-[\w\-]+)>`|\{numref\}`(fig-[\w\-]+)`", text))
    done = {a or b for a, b in done}

    def paper(m: re.Match) -> str:
        label = own.get(m.group(0))
        if label is None or label in done:
            return m.group(0)
        done.add(label)
        return f"{m.group(0)} (here {{numref}}`{label}`)"

    lines = []
    for line in text.split("\n"):
        if not line.lstrip().startswith("#"):
            parts, last = [], 0
            for m in _NOT_PROSE.finditer(line):
                parts += [_PAPER_FIGURE.sub(paper, line[last:m.start()]), m.group(0)]
                last = m.end()
            line = "".join(parts) + _PAPER_FIGURE.sub(paper, line[last:])
        lines.append(line)
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    # TableFigure subclasses docutils' figure, and docutils comes with the book's extra dependencies: the
    # class is made on first use (the book's configuration), at module level so that Sphinx can pickle it
    if name == "TableFigure":
        from docutils import nodes

        class TableFigure(nodes.figure):
            """A figure of the book whose content is a table (an HTML output): Sphinx numbers it as a
            table."""

        TableFigure.__qualname__ = "TableFigure"
        globals()["TableFigure"] = TableFigure
        return TableFigure
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _book_tables(nb: dict, stem: str) -> dict[tuple[int, int], tuple[str, str]]:
    """The tables of a notebook the book numbers: an HTML table output right after a one-line Markdown
    title ``**...** ...``, by (cell, output) index of the table, with its title and label
    (``tab-<notebook>-tableN`` for a title "Table N", else ``tab-<notebook>-<k>``)."""
    found, k = {}, 0
    for i, cell in enumerate(nb.get("cells", [])):
        outs = cell.get("outputs", []) if cell.get("cell_type") == "code" else []
        for j in range(1, len(outs)):
            title = _text(outs[j - 1].get("data", {}).get("text/markdown", "")).strip()
            html_out = _text(outs[j].get("data", {}).get("text/html", ""))
            if _TABLE_TITLE.fullmatch(title) and "<table" in html_out:
                k += 1
                number = re.match(r"\*\*Table (\d+)\*\*", title)
                tag = f"table{number.group(1)}" if number else str(k)
                found[i, j] = (title, f"tab-{stem.replace('_', '-')}-{tag}")
    labels = [label for _, label in found.values()]
    return {key: v for key, v in found.items() if labels.count(v[1]) == 1}  # a title used twice: unnumbered


def _book_notebook(nb: dict, figures: Path, shown: set[str] | None = None, stem: str = "notebook") -> dict:
    """A copy of a stored notebook prepared for the book; the stored file is not changed.

    * each saved figure shown by a code cell gets a cell of its own with myst-nb's figure metadata
      (``_split_at_figures``), so the book numbers it and pages can refer to it as ``fig-<name>``;
    * anchors alone on their line in a markdown cell (``<a id="claim-..."></a>``, which a notebook puts
      before each deciding cell) become MyST targets ``(claim-...)=``, so links to them are checked. The
      book's configuration keeps them page-local (two chapters may both have ``summary`` or
      ``claim-thm1``): the page's element id is the notebook's, its global label ``<chapter>-<name>``;
    * a table under a one-line title (``_book_tables``) gets a cell of its own with myst-nb's figure
      metadata (class ``lrank-table``, which the book's configuration numbers as a table), the title as
      its caption;
    * links to figures and names of figures become numbered references (``_numbered_references``; ``shown``:
      the names of the figures the book shows, by default this notebook's);
    * each derived formula a code cell shows (``display(Math(...))``: a ``text/latex`` output) becomes a
      numbered display equation labelled ``eq-<chapter>-<k>`` (``_numbered_equations``).
    """
    nb = copy.deepcopy(nb)
    mine = [n for n in image_outputs(nb) if n]
    shown = set(mine) if shown is None else set(shown)
    own = {f"Fig. {m.group(1)}": figure_label(n) for n in mine if (m := re.search(r"_fig(\d+)$", n))}
    tables = _book_tables(nb, stem)
    own |= {f"Table {m.group(1)}": label for title, label in tables.values()
            if (m := re.match(r"\*\*Table (\d+)\*\*", title))}
    cells, counter = [], [0]
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            text = _ANCHOR_LINE.sub(
                lambda m: "\n".join(f"({a})=" for a in re.findall(r'<a id="([\w\-.]+)">', m.group(0))),
                _source(cell))
            cell["source"] = _numbered_references(text, shown, own)
        if cell.get("cell_type") == "code":
            _numbered_equations(cell, stem, counter)
            cells += _split_at_figures(cell, figures, {j: t for (c, j), t in tables.items() if c == i})
        else:
            cells.append(cell)
    nb["cells"] = cells
    return nb


_MATH_OUTPUT = re.compile(r"^\s*\$(?:\\displaystyle\s*)?(.*?)\$\s*$", re.S)


def equation_label(stem: str, k: int) -> str:
    """The book's label of the ``k``-th derived formula (1-based) of chapter ``stem``: ``eq-<stem>-<k>``.

    Parameters
    ----------
    stem : str
        The chapter's notebook stem (``01_rankboost``); its underscores become hyphens in the label.
    k : int
        The formula's number within the chapter, from 1.

    Returns
    -------
    str
        The label, e.g. ``eq-01-rankboost-3``.
    """
    return f"eq-{stem.replace('_', '-')}-{k}"


def _numbered_equations(cell: dict, stem: str, counter: list[int]) -> None:
    """Turn a code cell's ``text/latex`` outputs (``display(Math(...))``, one ``$...$`` each) into
    numbered MyST display equations ``$$ ... $$ (eq-<chapter>-<k>)``, in place; ``counter`` holds the
    chapter's count so far. Outputs of another shape are left as they are."""
    for out in cell.get("outputs", []):
        data = out.get("data") or {}
        m = _MATH_OUTPUT.match(_text(data.get("text/latex", "")))
        if not m or "$" in m.group(1):
            continue
        counter[0] += 1
        out["data"] = {"text/markdown": f"$$\n{m.group(1).strip()}\n$$ ({equation_label(stem, counter[0])})"}


def _split_at_figures(cell: dict, figures: Path,
                      tables: dict[int, tuple[str, str]] | None = None) -> list[dict]:
    """A code cell as the book shows it: each saved figure in a cell of its own (myst-nb's figure metadata
    applies to every output of a cell), with its caption from ``<figures>/<name>.caption.txt`` and the
    label ``fig-<name>``; the Markdown caption line `save_figure` displays under it is dropped (the
    numbered caption says it). Likewise each table of ``tables`` (output index: title, label), captioned
    by its title (the Markdown output above it is dropped)."""
    tables = tables or {}
    groups: list[dict] = [dict(cell, outputs=[])]
    for j, out in enumerate(cell.get("outputs", [])):
        if j + 1 in tables:
            continue  # the title of a table, its caption in the book
        if j in tables:
            title, label = tables[j]
            table = {"caption": title, "name": label, "classes": "lrank-table", "caption_before": True}
            groups.append({"cell_type": "code", "execution_count": None, "source": f"# {label}",
                           "outputs": [out],
                           "metadata": {"tags": ["remove-input"], "mystnb": {"figure": table}}})
            groups.append({"cell_type": "code", "execution_count": None, "source": f"# after {label}",
                           "outputs": [], "metadata": {"tags": ["remove-input"]}})
            continue
        meta = out.get("metadata") or {}
        name = ((meta.get("image/png") or meta).get("lrank") or {}).get("figure")  # IPython nests it by type
        if name and "image/png" in out.get("data", {}):
            cap = figures / f"{name}.caption.txt"
            caption = cap.read_text(encoding="utf-8").strip() if cap.is_file() else name
            figure = {"caption": " ".join(caption.split()), "name": figure_label(name)}
            # (myst-nb skips a cell without source: these carry a comment, hidden with their input)
            groups.append({"cell_type": "code", "execution_count": None, "source": f"# {name}",
                           "outputs": [out],
                           "metadata": {"tags": ["remove-input"], "mystnb": {"figure": figure}}})
            groups.append({"cell_type": "code", "execution_count": None, "source": f"# after {name}",
                           "outputs": [], "metadata": {"tags": ["remove-input"]}, "_after": name})
            continue
        md = _text(out.get("data", {}).get("text/markdown", ""))
        if groups[-1].get("_after") and md.startswith(f"*{groups[-1]['_after']}*:"):
            continue
        groups[-1]["outputs"].append(out)
    for k, g in enumerate(groups):
        g.pop("_after", None)
        if k and "id" in cell:
            g["id"] = f"{cell['id']}-{k}"
    return [g for i, g in enumerate(groups) if i == 0 or g["outputs"]]


def cli_page() -> str:
    """The book's command-line page (MyST): the RankLib correspondence of `lrank.cli` and, for every
    command, its ``--help`` as printed at 79 columns."""
    import argparse

    from lrank.__main__ import build_parser

    width = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "81"  # argparse wraps at COLUMNS - 2
    try:
        parser = build_parser(prog="lrank")
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parts = ["# Command line", "",
                 "`lrank COMMAND` (the console script the package installs) and `python -m lrank COMMAND` "
                 "are the same program. The first group of commands regenerates the notebooks, the book and "
                 "the benchmark page; `train`, `rank`, `eval` and `compare` work like RankLib and trec_eval "
                 "on LETOR / SVMlight files and TREC runs. Each section below is the command's `--help`.",
                 "", "```{eval-rst}", ".. automodule:: lrank.cli", "```", "",
                 "## lrank", "", "```text", parser.format_help().rstrip(), "```"]
        for name, p in sub.choices.items():
            parts += ["", f"## {name}", "", "```text", p.format_help().rstrip(), "```"]
    finally:
        if width is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = width
    return "\n".join(parts) + "\n"


def build_book(out: Path, notebooks: list[Path], jobs: int = 1) -> tuple[Path, list[str]]:
    """Build the book with Sphinx (myst-nb, sphinx-book-theme, sphinxcontrib-bibtex) into ``out/html``.

    Copies the book's configuration (``lrank/_book``: ``conf.py``, the front page, the API page from the
    docstrings, the bibliography ``references.bib``), writes the command-line page (`cli_page`) and copies
    the stored ``notebooks`` (prepared by ``_book_notebook``) into ``out/src`` and runs ``sphinx-build -n``
    on the stored outputs
    (``nb_execution_mode = "off"``: nothing is executed; nitpicky: every unresolved reference warns).
    Figures, and tables shown under a one-line title, are numbered across the book; links to figures,
    their names and a chapter's "Fig. N"/"Table N" of its paper become numbered references.
    Links ``<notebook>.ipynb#anchor`` in rendered outputs are rewritten to the chapter pages, the
    artifacts in ``figures/`` are copied beside them (the index links to them) and each chapter's
    download button gives the notebook as stored.

    Parameters
    ----------
    out : Path
        The build folder: ``out/src`` (the Sphinx sources, recreated), ``out/doctrees``, ``out/html`` and
        ``out/warnings.txt``.
    notebooks : list of Path
        The stored notebooks; the ``figures`` folder beside their folder (that of the first) supplies
        captions and artifacts.
    jobs : int, default 1
        Parallel processes of ``sphinx-build`` (its ``-j``).

    Returns
    -------
    index : Path
        ``out/html/index.html``.
    warnings : list of str
        Every warning of the build, one per line (the book is strict when this is empty).
    """
    out = Path(out)
    src = out / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(BOOK_CONFIG, src, ignore=shutil.ignore_patterns("__pycache__"))
    (src / "cli.md").write_text(cli_page(), encoding="utf-8")
    figures = Path(notebooks[0]).resolve().parent.parent / "figures" if notebooks else Path("figures")
    stored = {Path(p).name: json.loads(Path(p).read_text(encoding="utf-8")) for p in notebooks}
    shown = {n for nb in stored.values() for n in image_outputs(nb) if n}  # what {numref} can refer to
    for name, nb in stored.items():
        book_nb = _book_notebook(nb, figures, shown, stem=Path(name).stem)
        (src / name).write_text(json.dumps(book_nb), encoding="utf-8")
    html_dir, log = out / "html", out / "warnings.txt"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-n", "-j", str(jobs), "-E",
           "-d", str(out / "doctrees"), "-w", str(log), str(src), str(html_dir)]
    env = dict(os.environ, LRANK_REPO=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"sphinx-build failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
    warnings = [w for w in log.read_text(encoding="utf-8").splitlines() if "WARNING" in w or "ERROR" in w]
    if figures.is_dir():  # the artifacts the index links to (../figures/... beside the notebooks)
        shutil.copytree(figures, html_dir / "figures", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("results", "paper", "rehearsal", "seeds"))
    for p in notebooks:  # the download button gives the notebook as stored, not the book's copy
        shutil.copyfile(p, html_dir / "_sources" / Path(p).name)
    for page in html_dir.glob("[0-9][0-9]*.html"):
        text = page.read_text(encoding="utf-8")
        new = re.sub(r'href="(\d\d[\w\-]*)\.ipynb(#[^"]*)?"', r'href="\1.html\2"', text)
        new = new.replace('href="../figures/', 'href="figures/')
        if new != text:
            page.write_text(new, encoding="utf-8")
    return html_dir / "index.html", warnings


def broken_links(html_dir: Path) -> list[str]:
    """Internal links of the built book that lead nowhere: a page that does not exist, or an anchor
    (``#id``) that the target page does not define. One line per broken link (empty when none).

    Parameters
    ----------
    html_dir : Path
        The built book (``out/html`` of :func:`build_book`); pages under ``_static`` and ``_sources`` are
        not read, links with a scheme (``http:``, ``mailto:``, ...) are not followed.

    Returns
    -------
    list of str
        ``<page>: <href> (no such file)`` or ``<page>: <href> (no id '<id>' in <target>)``, page by page.
    """
    html_dir = Path(html_dir)
    ids: dict[Path, set[str]] = {}

    def ids_of(page: Path) -> set[str]:
        if page not in ids:
            ids[page] = set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))
        return ids[page]

    out = []
    for page in sorted(html_dir.rglob("*.html")):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        for href in re.findall(r'href="([^"]+)"', page.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.\-]*:", href, re.I) or href.startswith("//"):
                continue  # external (http:, mailto:, data:): not the book's own
            path, _, frag = href.partition("#")
            rel = urllib.request.url2pathname(path.split("?")[0])
            target = (page.parent / rel).resolve() if path else page
            if not target.exists():
                out.append(f"{page.relative_to(html_dir)}: {href} (no such file)")
            elif frag and target.suffix == ".html" and frag not in ids_of(target):
                out.append(f"{page.relative_to(html_dir)}: {href} (no id {frag!r} in {target.name})")
    return out


_SETTLED_JS = """
if (document.readyState !== 'complete') return false;
const H = window.MathJax && window.MathJax.Hub;
return !H || (H.queue && H.queue.running === 0 && H.queue.pending === 0 && !!document.fonts
              && document.fonts.status === 'loaded');
"""
_BOOK_PAGE_JS = """
const imgs = Array.from(document.querySelectorAll('article img, main img'));
return {images: imgs.length, broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
        // MathML variants a browser does not draw (MathJax 2 would ask for its unshipped TeX fonts)
        variants: Array.from(document.querySelectorAll('math [mathvariant]')).map(
            e => e.getAttribute('mathvariant')).filter(v => v !== 'normal')};
"""


def book_check(html_dir: Path, shots: Path, query: str = "RankBoost",
               timeout: float = 60.0) -> dict[str, Any]:
    """Open every page of the built book in headless Chromium over a local HTTP server.

    Parameters
    ----------
    html_dir : Path
        The built book (``out/html`` of :func:`build_book`); its top-level ``*.html`` pages are opened.
    shots : Path
        Folder (created) for one screenshot per page (``<page>.png``).
    query : str, default "RankBoost"
        What to search for on the book's search page.
    timeout : float, default 60.0
        Seconds: the page-load timeout, and how long to wait for a page to settle (MathJax done) and for
        search results.

    Returns
    -------
    dict
        ``{"pages": {page: {"errors": [console errors], "images": n, "broken": [srcs], "variants":
        [mathvariants]}}, "search_hits": n}``: the console errors (level SEVERE, the browser's own
        ``/favicon.ico`` request left out), images, images that did not load and MathML ``mathvariant``
        values other than "normal" (which browsers do not draw) of each page, and how many results the
        book's search page lists for ``query`` (0 when none appear within ``timeout``).
    """
    import functools
    import http.server
    import threading

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if found is None:
        raise RuntimeError("the book check needs Debian's chromium and chromium-driver")
    html_dir, shots = Path(html_dir), Path(shots)
    shots.mkdir(parents=True, exist_ok=True)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(html_dir))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", _free_port()), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    opts = webdriver.ChromeOptions()
    opts.binary_location = found[0]
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='lrank-book-')}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(found[1]), options=opts)
    drv.set_page_load_timeout(timeout)
    pages: dict[str, Any] = {}
    try:
        for page in sorted(p.relative_to(html_dir).as_posix() for p in html_dir.glob("*.html")):
            drv.get(f"{base}/{page}")
            t0 = time.monotonic()
            while not drv.execute_script(_SETTLED_JS) and time.monotonic() - t0 < timeout:
                time.sleep(0.2)  # loaded, and MathJax (when the page has maths) done with its fonts
            info = drv.execute_script(_BOOK_PAGE_JS)
            errors = [e["message"] for e in drv.get_log("browser") if e.get("level") == "SEVERE"
                      and "/favicon.ico" not in e["message"]]  # asked for by the browser, not by the page
            drv.save_screenshot(str(shots / (page.replace("/", "_") + ".png")))
            pages[page] = {"errors": errors, **info}
        drv.get(f"{base}/search.html?q={urllib.parse.quote(query)}")
        t0, hits = time.monotonic(), 0
        while time.monotonic() - t0 < timeout:
            hits = drv.execute_script("return document.querySelectorAll('#search-results li, "
                                      "ul.search li').length")
            if hits:
                break
            time.sleep(0.3)
    finally:
        drv.quit()
        httpd.shutdown()
    return {"pages": pages, "search_hits": hits}
