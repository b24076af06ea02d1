"""The stored notebooks as a reader meets them: clean, figures inline, no typed-in computed numbers.

These tests read the committed files only (``notebooks/*.ipynb`` and the results JSON that
``python -m lrank reproduce`` stored beside the figures); they run nothing.
"""

import copy
import json
import re

import pytest

from lrank.paths import notebooks_dir, repo_dir
from lrank.site import clean_notebook, error_outputs, image_outputs

BOOKS = sorted(notebooks_dir().glob("[0-9][0-9]*.ipynb"))
IDS = [p.stem for p in BOOKS]
STORED_RESULTS = repo_dir() / "figures" / "results"


def _nb(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _papermill_like():
    """An executed notebook as papermill leaves it (timestamps, injected cell, counts out of order)."""
    meta = {"papermill": {"duration": 0.1, "start_time": "2026-11-22T03:16:42", "status": "completed"},
            "execution": {"iopub.status.idle": "2026-11-22T03:16:43Z"}, "tags": []}
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"papermill": {"duration": 7.3, "parameters": {"PROFILE": "quick"}},
                     "kernelspec": {"name": "python3", "display_name": "Python 3 (lrank)",
                                    "language": "python"},
                     "language_info": {"name": "python", "version": "3.11.7"}},
        "cells": [
            {"cell_type": "markdown", "id": "m", "metadata": copy.deepcopy(meta), "source": "# title"},
            {"cell_type": "code", "id": "p", "metadata": {**copy.deepcopy(meta), "tags": ["parameters"]},
             "execution_count": 7, "outputs": [], "source": "PROFILE = 'quick'"},
            {"cell_type": "code", "id": "i", "metadata": {"tags": ["injected-parameters"]},
             "execution_count": 8, "outputs": [], "source": "# Parameters\nPROFILE = 'quick'"},
            {"cell_type": "code", "id": "c", "metadata": copy.deepcopy(meta), "execution_count": 12,
             "outputs": [{"output_type": "execute_result", "execution_count": 12, "metadata": {},
                          "data": {"text/plain": "2"}}], "source": "1 + 1"},
            {"cell_type": "code", "id": "u", "metadata": {}, "execution_count": None, "outputs": [],
             "source": "# not run"},
        ],
    }


def test_clean_notebook_removes_run_noise_and_is_idempotent():
    raw = _papermill_like()
    clean = clean_notebook(raw)
    text = json.dumps(clean)
    assert "papermill" not in text and "iopub" not in text and "injected-parameters" not in text
    assert "3.11.7" not in text  # no interpreter version in the stored metadata
    code = [c for c in clean["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == [1, 2, None]
    assert code[1]["outputs"][0]["execution_count"] == 2
    assert code[0]["metadata"] == {"tags": ["parameters"]}
    assert clean_notebook(clean) == clean
    assert raw["cells"][2]["metadata"]["tags"] == ["injected-parameters"]  # the input is not modified


def test_a_stream_is_stored_alike_whether_or_not_the_kernel_cut_it():
    # the kernel cuts a stream into messages by timing: a joined run must be stored as an uncut one is
    text = "a 1\nb 2\nlast"
    whole = {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}
    cut = [{"output_type": "stream", "name": "stdout", "text": "a 1\nb"},
           {"output_type": "stream", "name": "stdout", "text": " 2\nlast"}]
    nbs = [{"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "id": "c", "metadata": {}, "execution_count": 1, "source": "",
                       "outputs": outs}]} for outs in ([whole], cut, [dict(whole, text=text)])]
    cleaned = [json.dumps(clean_notebook(nb), sort_keys=True) for nb in nbs]
    assert cleaned[0] == cleaned[1] == cleaned[2]
    assert clean_notebook(nbs[1])["cells"][0]["outputs"][0]["text"] == ["a 1\n", "b 2\n", "last"]


@pytest.mark.parametrize("path", BOOKS, ids=IDS)
def test_stored_notebook_is_clean(path):
    nb = _nb(path)
    assert clean_notebook(nb) == nb, \
        f"{path.name} holds run noise (papermill metadata, timestamps, injected cell, execution " \
        "counts out of order): store it with python -m lrank reproduce"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and "parameters" in code[0].get("metadata", {}).get("tags", []), \
        f"{path.name}: the first code cell must be tagged 'parameters'"
    assert not any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
    assert error_outputs(nb) == 0, f"{path.name} stores an error output"
    assert all(c.get("execution_count") is not None for c in code), f"{path.name} has cells that never ran"
    shown_paths = [i for i, c in enumerate(nb["cells"], 1)
                   if c["cell_type"] == "code" and "PosixPath(" in json.dumps(c.get("outputs", []))]
    assert not shown_paths, \
        f"{path.name}: cells {shown_paths} display a returned Path (an absolute path of this checkout); " \
        "end them with ';'"


_LITERAL_FIGURE = re.compile(r"save_figure\(\s*\w+\s*,\s*[\"']([\w.\-]+)[\"']")


def _figures_written(stem: str, nb: dict) -> tuple[list[str], int]:
    """Figure names this notebook writes (the run's artifact list, else literal names in the code)."""
    stored = STORED_RESULTS / f"{stem}.json"
    meta = json.loads(stored.read_text(encoding="utf-8")).get("_meta", {}) if stored.is_file() else {}
    code = "\n".join(_src(c) for c in nb["cells"] if c["cell_type"] == "code")
    calls = code.count("save_figure(")
    if "artifacts" in meta:
        return meta["artifacts"]["figures"], calls
    return sorted(set(_LITERAL_FIGURE.findall(code))), calls


@pytest.mark.parametrize("path", BOOKS, ids=IDS)
def test_every_saved_figure_is_shown_inline(path):
    nb = _nb(path)
    written, calls = _figures_written(path.stem, nb)
    shown = image_outputs(nb)
    if calls:
        assert shown, f"{path.name} saves figures but stores no image output " \
                      "(rerun python -m lrank reproduce)"
    missing = [f for f in written if f not in shown]
    assert not missing, f"{path.name}: figures written to figures/ but not shown inline: {missing}"
    assert len(shown) >= len(written)


_TIMING = re.compile(r"\b(time_s|select_s|step_s|fit_s)\b|perf_counter|process_time|\btime\.time\(|"
                     r"\btimeit\b|^\s*%%?time\b", re.M)


@pytest.mark.parametrize("path", BOOKS, ids=IDS)
def test_notebook_times_nothing(path):
    """Speed is measured by ``python -m lrank bench``, never in a notebook: a notebook that showed a
    duration measured while it ran would store run noise (and a figure that changes on every run). A
    notebook reads the stored measurement instead (``figures/benchmarks.csv`` or a benchmark's side file)."""
    hits = [f"cell {i}: {m.group(0)}" for i, c in enumerate(_nb(path)["cells"]) if c["cell_type"] == "code"
            for m in _TIMING.finditer(_src(c))]
    assert not hits, f"{path.name} times its own run ({hits}); move the timing into lrank/benchmarks/ " \
                     "and read the stored result"


# ---------------------------------------------------------------- computed numbers typed into prose
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])")


def _numbers(entry_value) -> list:
    if isinstance(entry_value, dict):
        return [x for v in entry_value.values() for x in _numbers(v)]
    if isinstance(entry_value, list):
        return [x for v in entry_value for x in _numbers(v)]
    if isinstance(entry_value, bool) or not isinstance(entry_value, (int, float)):
        return []
    return [entry_value]


def _matches(token: str, value: float) -> bool:
    """True when ``token`` as typed is ``value`` shown to the token's digits."""
    t = float(token)
    if "." not in token:
        return float(value).is_integer() and int(value) == int(t)
    decimals = len(token.split(".")[1])
    significant = len(token.replace(".", "").lstrip("0"))
    if significant < 2:  # "0.5": only the exact value counts, a rounded one is too common
        return value == t
    return abs(value - t) <= 0.5 * 10 ** -decimals + 1e-12


def prose_numbers(markdown: str) -> list[str]:
    """Numbers in markdown that could be computed: with a decimal point, or of three digits or more."""
    text = re.sub(r"`[^`]*`", " ", markdown)  # code spans hold names and literals, not results
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    text = re.sub(r"(?:Secs?\.|Sections?|§)\s*\d+(?:\.\d+)*", " ", text)  # section numbers: "Sec. 2.3"
    out = []
    for whole, frac in _NUMBER.findall(text):
        token = whole.replace(",", "") + (frac or "")
        if frac or len(token) >= 3:
            out.append(token)
    return out


def budget_numbers(notebook: str | None) -> list[float]:
    """The settings of ``notebook`` in `lrank.papers.budgets` (every profile): inputs the code cells read
    with ``budget(...)`` instead of typing them, so prose may quote them like a literal."""
    from lrank.papers.budgets import BUDGETS

    return [x for (name, _), b in BUDGETS.items() if name == notebook
            for values in (b.paper, b.quick, b.rehearsal) for x in _numbers(dict(values))]


def typed_in_numbers(nb: dict, recorded: dict, notebook: str | None = None) -> list[str]:
    """Markdown numbers that equal a value the notebook recorded.

    Allowed: a printed paper value (``paper=``), and a number typed as a literal in the notebook's code
    (a setting such as 200 rounds or a fraction of 0.25, an input rather than a result).
    """
    literals = {float(m) for c in nb["cells"] if c["cell_type"] == "code"
                for m in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?(?![\w.])", _src(c).replace("_", ""))}
    literals |= {float(x) for x in budget_numbers(notebook)}
    values = [x for e in recorded.values() for k, v in e.items() if k not in ("paper", "tol")
              for x in _numbers(v)]
    papers = [x for e in recorded.values() for x in _numbers(e.get("paper"))]
    hits = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for token in prose_numbers(_src(cell)):
            if any(_matches(token, p) for p in papers) or float(token) in literals:
                continue  # the paper's printed number may be quoted; a setting typed in the code too
            if any(_matches(token, v) for v in values):
                hits.append(f"cell {i}: {token}")
    return hits


def test_prose_scan_finds_typed_in_numbers():
    recorded = {"ndcg": {"value": 0.4523}, "n": {"value": 86}, "wins": {"value": {"a": 1234}},
                "prop1": {"value": 16 / 19, "paper": 0.842}, "flag": {"value": True}}
    nb = {"cells": [{"cell_type": "markdown", "source": "NDCG 0.452 on 86 queries, 1,234 wins in 2007"},
                    {"cell_type": "markdown", "source": "the paper prints 0.842; `0.452` is code; Eq. 22"},
                    {"cell_type": "markdown", "source": "T = 300 rounds (a setting in the code)"},
                    {"cell_type": "code", "source": "T = 300\nx = 0.4523 * 0"}]}
    recorded["rounds"] = {"value": 300}
    assert typed_in_numbers(nb, recorded) == ["cell 0: 0.452", "cell 0: 1234"]
    recorded["rank"] = {"value": 2.31}
    nb["cells"].append({"cell_type": "markdown", "source": "Sec. 2.3 and Section 2.3 cite; rank 2.3"})
    assert typed_in_numbers(nb, recorded) == ["cell 0: 0.452", "cell 0: 1234", "cell 4: 2.3"]


@pytest.mark.parametrize("path", BOOKS, ids=IDS)
def test_markdown_holds_no_recorded_number(path):
    stored = STORED_RESULTS / f"{path.stem}.json"
    if not stored.is_file():
        pytest.skip(f"{path.stem} records no numbers")
    recorded = {k: v for k, v in json.loads(stored.read_text(encoding="utf-8")).items() if k != "_meta"}
    hits = typed_in_numbers(_nb(path), recorded, path.stem)
    assert not hits, f"{path.name}: markdown cells hold numbers the run records (render them from " \
                     f"lrank.results with IPython.display.Markdown): {hits}"


# ---------------------------------------------------------------- figures inline, no backend forced
def test_importing_lrank_plots_forces_no_backend():
    import subprocess
    import sys

    code = ("import matplotlib, lrank.plots; "
            "print(matplotlib.rcParams._get_backend_or_none())")
    env = {k: v for k, v in __import__("os").environ.items() if k != "MPLBACKEND"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "None"  # matplotlib chooses (Agg without a display, inline in a kernel)


def test_save_figure_outside_a_kernel_only_saves(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from lrank import plots, results

    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    results.reset("zz_plots")
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    png = plots.save_figure(fig, "zz_fig", "test figure (synthetic)")
    assert png.is_file() and png.with_suffix(".pdf").is_file()
    assert plt.fignum_exists(fig.number)  # not closed: nothing was displayed
    assert results.load_meta("zz_plots")["artifacts"]["figures"] == ["zz_fig"]
    plt.close(fig)


def test_save_figure_in_a_kernel_shows_the_saved_png_once(tmp_path):
    import base64
    import os

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import matplotlib.pyplot as plt\nfrom lrank import plots, results\nresults.reset('zz_kernel')\n"
        "fig, ax = plt.subplots()\nax.plot([0, 1])\n"
        "_ = plots.save_figure(fig, 'zz_inline', 'caption (synthetic)')\nplt.show()")]
    env = dict(os.environ, LRANK_OUTPUT_DIR=str(tmp_path))
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=120)
    old = dict(os.environ)
    os.environ.update(env)
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    images = image_outputs(nb)
    assert images == ["zz_inline"]  # shown once (closed after display, so plt.show adds nothing)
    data = next(o for o in nb.cells[0].outputs if "image/png" in o.get("data", {}))["data"]["image/png"]
    assert base64.b64decode(data) == (tmp_path / "figures" / "zz_inline.png").read_bytes()


# ---------------------------------------------------------------- the results store
def test_record_keeps_tol_meta_and_refuses_stale(tmp_path, monkeypatch):
    import lrank.paths
    from lrank import results

    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path / "out"))
    books = tmp_path / "notebooks"
    books.mkdir()
    nb = _papermill_like()
    (books / "zz.ipynb").write_text(json.dumps(nb))
    monkeypatch.setattr(results, "notebooks_dir", lambda: books)
    monkeypatch.setattr(lrank.paths, "notebooks_dir", lambda: books)
    results.reset("zz")
    results.record("zz", "count", 3)
    results.record("zz", "mean", 0.25, paper=0.3)
    results.record("zz", "means", {"a": [1, 2.5]})
    results.record("zz", "verdict_x", "HELD", n=43, p_value=0.01, tol=1e-6)
    rec = results.load("zz")
    assert [rec[k]["tol"] for k in ("count", "mean", "means", "verdict_x")] == [0, 1e-9, 1e-9, 1e-6]
    assert rec["mean"]["paper"] == 0.3 and "_meta" not in rec
    with pytest.raises(ValueError, match="tol"):
        results.record("zz", "bad", 1.0, tol=-1)
    assert results.freshness("zz") is None
    # storing the notebook cleaned (injected cell gone, outputs renumbered) keeps it fresh ...
    (books / "zz.ipynb").write_text(json.dumps(clean_notebook(nb)))
    assert results.freshness("zz") is None
    # ... editing a cell's source makes the results stale
    nb["cells"][3]["source"] = "1 + 2"
    (books / "zz.ipynb").write_text(json.dumps(nb))
    assert "another version" in results.freshness("zz")
    assert "no results" in results.freshness("yy")
    nb["cells"][3]["source"] = "1 + 1"
    (books / "zz.ipynb").write_text(json.dumps(nb))
    assert results.freshness("zz") is None
    monkeypatch.setattr(results, "_lrank_hash", ["sources changed since the run"])
    assert "other lrank sources" in results.freshness("zz")


def test_static_site_export(tmp_path):
    from lrank.site import export_site

    books = [p for p in BOOKS if p.stem.startswith(("00", "06"))]
    index = export_site(tmp_path, books)
    text = index.read_text()
    for p in books:
        assert f'href="{p.stem}.html"' in text and (tmp_path / f"{p.stem}.html").is_file()
        assert not re.search(r'href="\d\d[\w.\-]*\.ipynb"', (tmp_path / f"{p.stem}.html").read_text())


def test_clean_notebook_joins_the_cuts_of_a_stream():
    """Consecutive outputs of one stream (where the kernel cut stdout depends on timing) become one;
    a different stream or an output in between keeps them apart."""
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "print()", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
        {"output_type": "stream", "name": "stdout", "text": "c\n"},
        {"output_type": "stream", "name": "stderr", "text": "w\n"},
        {"output_type": "stream", "name": "stdout", "text": "d\n"},
        {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}},
        {"output_type": "stream", "name": "stdout", "text": "e\n"},
    ]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    outs = clean_notebook(nb)["cells"][0]["outputs"]
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in outs] == [
        ("stream", "stdout", ["a\n", "b\n", "c\n"]), ("stream", "stderr", ["w\n"]),
        ("stream", "stdout", ["d\n"]), ("display_data", None, None), ("stream", "stdout", ["e\n"])]
    assert clean_notebook(clean_notebook(nb)) == clean_notebook(nb)
    assert len(nb["cells"][0]["outputs"]) == 6  # the input is not modified
