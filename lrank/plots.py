"""One figure style, and the two ways an artifact leaves a notebook: `save_figure` and `save_table`.

No matplotlib backend is forced: without a display matplotlib picks Agg by itself, and in a
notebook the figure is shown inline by `save_figure` (an ``image/png`` output of the very PNG saved
to ``figures/``, tagged with the artifact name in its metadata) and then closed so it is not shown
twice. `save_table(..., show=True)` shows its table as HTML under its caption. Outside an IPython
kernel both only save.

Every artifact carries a caption: which paper artifact it regenerates, the data it used (real /
substitute / synthetic), the profile, and every deviation from the paper's protocol. The caption is
written beside the artifact (``<name>.caption.txt``) and into the Markdown table.

Every figure is checked for overprinted text before it is saved: :func:`overlaps` lists the pairs of
tick labels, axis labels, titles and legends whose drawn boxes overlap, and `save_figure` records that
list in the notebook's results (``_meta["overlaps"]``), which the results tests require to be empty.
Call ``plots.overlaps(fig)`` while drawing a figure to see the problems it would record.
"""

from __future__ import annotations

import struct
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.legend import Legend
from matplotlib.text import Annotation, Text

from lrank import results
from lrank.paths import figures_dir

STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "svg.hashsalt": "lrank",
}


#: columns of a stored table read as text (the benchmark page and its side files): a short commit id of
#: digits and one ``e`` (``836e026``) would otherwise be read as a number (8.36e+28)
TEXT_COLUMNS = {"commit": str, "profile": str}


def read_table(path: str | Path, **kwargs) -> pd.DataFrame:
    """A stored table (``figures/*.csv``: the benchmark page ``python -m lrank bench`` writes and its side
    files) as a DataFrame, its :data:`TEXT_COLUMNS` as text; ``kwargs`` go to ``pandas.read_csv``.

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.
    **kwargs
        Passed to ``pandas.read_csv``; a ``dtype`` must be a dict, merged over :data:`TEXT_COLUMNS` (it may
        override them).

    Returns
    -------
    pandas.DataFrame
        The table.
    """
    return pd.read_csv(path, dtype={**TEXT_COLUMNS, **kwargs.pop("dtype", {})}, **kwargs)


#: One colour and marker per algorithm, the same in every notebook and figure (Okabe-Ito's colour-blind
#: safe colours first). Look names up with :func:`algo_style`; a name not listed gets a stable
#: fallback (the same name always gets the same style) so a new variant never breaks a figure.
PALETTE: dict[str, tuple[str, str]] = {
    # RankBoost (Freund et al.) and its baselines
    "RankBoost": ("#0072B2", "o"), "WeakLearn.2": ("#56B4E9", "v"), "WeakLearn.3": ("#0072B2", "o"),
    "WeakLearn.2.cum": ("#009E73", "^"), "WeakLearn.3.cum": ("#E69F00", "s"),
    "Regression": ("#CC79A7", "D"), "NN": ("#D55E00", "P"), "VSIM": ("#009E73", "X"),
    "random": ("#7F7F7F", "."), "best single feature": ("#000000", "*"),
    # AdaRank and its baselines
    "AdaRank.MAP": ("#E69F00", "s"), "AdaRank.NDCG": ("#D55E00", "D"), "BM25": ("#7F7F7F", "x"),
    "Ranking SVM": ("#CC79A7", "^"), "AdaRank.MAP (continuing)": ("#F0C060", "s"),
    "AdaRank.NDCG (continuing)": ("#E8A080", "D"),
    # BoostingTree and gradient-boosted trees
    "BoostingTree(LambdaMART)": ("#009E73", "o"), "BoostingTree(NDCGBoost)": ("#56B4E9", "s"),
    "EXP3.P(LambdaMART)": ("#D55E00", "v"), "EXP3.P(NDCGBoost)": ("#CC79A7", "^"),
    "LambdaMART": ("#000000", "D"), "NDCGBoost": ("#0072B2", "P"), "MART": ("#E69F00", "X"),
    "McRank": ("#CC79A7", "h"), "SE": ("#0072B2", "o"), "OLE": ("#D55E00", "s"),
    # RankBoost+ (Connamacher et al.)
    "Rb-d": ("#D55E00", "v"), "Rb-c": ("#0072B2", "s"), "Rb+": ("#009E73", "o"),
    "Optimal Rb+": ("#000000", "D"), "Efficient Rb+": ("#009E73", "o"),
    # peers in the benchmarks
    "lrank": ("#009E73", "o"), "LightGBM": ("#0072B2", "s"), "XGBoost": ("#D55E00", "^"),
    "CatBoost": ("#E69F00", "D"), "scikit-learn": ("#CC79A7", "v"), "NumPy": ("#7F7F7F", "x"),
}
_FALLBACK_COLOURS = ("#332288", "#117733", "#44AA99", "#88CCEE", "#DDCC77", "#AA4499", "#882255", "#999933")
_FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "h")


def algo_style(name: str) -> dict:
    """``color`` and ``marker`` of an algorithm (``PALETTE``; a stable fallback for other names).

    Use as ``ax.plot(x, y, label=name, **algo_style(name))``.

    Parameters
    ----------
    name : str
        The algorithm's name as it appears in legends (``"AdaRank.MAP"``); case and spelling must match a
        ``PALETTE`` key, else the fallback (picked from the CRC-32 of the name) applies.

    Returns
    -------
    dict
        ``{"color": hex colour, "marker": matplotlib marker}``.
    """
    if name in PALETTE:
        colour, marker = PALETTE[name]
    else:
        import zlib

        h = zlib.crc32(name.encode())
        colour, marker = _FALLBACK_COLOURS[h % len(_FALLBACK_COLOURS)], _FALLBACK_MARKERS[(h // 8) % 8]
    return {"color": colour, "marker": marker}


def legend_outside(ax: plt.Axes, **kw) -> None:
    """Put the legend of ``ax`` to the right of the axes, outside the data.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes whose labelled artists make the legend.
    **kw
        Passed to ``ax.legend``; they override the defaults ``loc="upper left"``,
        ``bbox_to_anchor=(1.01, 1.0)`` and ``borderaxespad=0.0``.
    """
    kw = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, **kw}
    ax.legend(**kw)


def _drawn_ticklabels(axis) -> list:
    """The tick labels ``axis`` draws (ticks inside the view interval, visible, non-empty)."""
    try:
        ticks = axis._update_ticks()  # what Axis.draw draws (private, stable since matplotlib 3.1)
    except AttributeError:  # pragma: no cover - a future matplotlib: every tick, a superset
        ticks = axis.get_major_ticks() + axis.get_minor_ticks()
    return [lab for t in ticks for lab in (t.label1, t.label2)
            if lab.get_visible() and lab.get_text().strip()]


def _text_boxes(fig: plt.Figure, renderer) -> list[tuple[str, object]]:
    """(description, window extent) of every tick label, axis label, title, text and legend of ``fig``."""
    out: list[tuple[str, object]] = []

    def add(what: str, artist) -> None:
        if artist is None or not artist.get_visible():
            return
        if hasattr(artist, "get_text") and not artist.get_text().strip():
            return
        # an annotation's own extent includes its arrow: only its text can overprint
        box = (Text.get_window_extent(artist, renderer) if isinstance(artist, Annotation)
               else artist.get_window_extent(renderer))
        if isinstance(artist, Legend) and not artist.get_frame_on():
            # no frame is drawn: the padding around the entries is empty, only the entries can overprint
            inner = getattr(artist, "_legend_box", None)
            box = inner.get_window_extent(renderer) if inner is not None else box
        out.append((what, box))

    for i, ax in enumerate(fig.get_axes()):
        if not ax.get_visible():
            continue
        where = f"axes {i}" + (f" ({ax.get_title()!r})" if ax.get_title() else "")
        if ax.axison:
            for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                if not axis.get_visible():
                    continue
                for lab in _drawn_ticklabels(axis):
                    add(f"{where} {name} tick label {lab.get_text()!r}", lab)
                add(f"{where} {name} label {axis.label.get_text()!r}", axis.label)
                add(f"{where} {name} offset text {axis.get_offset_text().get_text()!r}",
                    axis.get_offset_text())
        for title in (ax.title, ax._left_title, ax._right_title):
            add(f"{where} title {title.get_text()!r}", title)
        for t in ax.texts:  # labels written with ax.text / ax.annotate (e.g. a critical-difference diagram's)
            add(f"{where} text {t.get_text()!r}", t)
        add(f"{where} legend", ax.get_legend())
    for j, leg in enumerate(fig.legends):
        add(f"figure legend {j}", leg)
    sup = [getattr(fig, a, None) for a in ("_suptitle", "_supxlabel", "_supylabel")]
    for t in fig.texts:
        if not any(t is x for x in sup):  # fig.texts holds the suptitle and sup-labels too
            add(f"figure text {t.get_text()!r}", t)
    for attr in ("_suptitle", "_supxlabel", "_supylabel"):
        t = getattr(fig, attr, None)
        if t is not None:
            add(f"figure {attr.lstrip('_')} {t.get_text()!r}", t)
    return out


def overlaps(fig: plt.Figure, tol: float = 1.0) -> list[str]:
    """Pairs of text boxes of ``fig`` that overprint each other (empty when the figure reads cleanly).

    Lays the figure out as it will be drawn (``Figure.draw_without_rendering``), then compares the
    drawn boxes (renderer extents) of every tick label, axis label, axis offset text, title, text label
    (``ax.text`` / ``ax.annotate``, ``fig.text``), legend and figure-level title/label pairwise. Two
    boxes overlap when they share more than ``tol`` pixels in both directions (at the figure's dpi; the
    default forgives glyph boxes that merely touch).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, fully drawn (call this where you would call ``save_figure``).
    tol : float, default 1.0
        Pixels two boxes may share in each direction before they count as overlapping; >= 0 (else
        ``ValueError``).

    Returns
    -------
    list of str
        One sentence per overlapping pair, e.g. ``"axes 0 x tick label 'Rb+' overlaps axes 0 x tick
        label 'Rb-c'"``, in drawing order.
    """
    if tol < 0:
        raise ValueError(f"tol must be >= 0 pixels, got {tol!r}")
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer") else fig._get_renderer()
    boxes = _text_boxes(fig, renderer)
    if len(boxes) < 2:
        return []
    ext = np.array([[b.x0, b.y0, b.x1, b.y1] for _, b in boxes], dtype=np.float64)
    w = np.minimum(ext[:, None, 2], ext[None, :, 2]) - np.maximum(ext[:, None, 0], ext[None, :, 0])
    h = np.minimum(ext[:, None, 3], ext[None, :, 3]) - np.maximum(ext[:, None, 1], ext[None, :, 1])
    hit = np.triu((w > tol) & (h > tol), k=1)
    return [f"{boxes[i][0]} overlaps {boxes[j][0]}" for i, j in zip(*np.nonzero(hit))]


def use_style() -> None:
    """Apply lrank's figure style to matplotlib's global settings."""
    plt.rcParams.update(STYLE)


def _check(name: str, caption: str) -> None:
    if not name or "/" in name or name.endswith((".png", ".pdf", ".csv", ".md")):
        raise ValueError(f"name must be a bare artifact name like 'rankboost_fig8', got {name!r}")
    if not caption or not caption.strip():
        raise ValueError("every artifact needs a caption (artifact, data used, profile, deviations)")


def in_kernel() -> bool:
    """True inside an IPython kernel (a notebook, nbval, papermill), False in a plain interpreter."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def _png_width(png: bytes) -> int:
    return struct.unpack(">I", png[16:20])[0]  # IHDR width


def save_figure(fig: plt.Figure, name: str, caption: str, profile: str | None = None) -> Path:
    """Save ``fig`` as ``<figures>/<name>.png`` and ``.pdf`` with deterministic metadata.

    In an IPython kernel the saved PNG is also displayed in the current cell (output metadata
    ``{"lrank": {"figure": name}}``) with its caption, and the figure is closed. Returns the PNG path.
    ``caption`` is written to ``<name>.caption.txt``. Overprinted text (:func:`overlaps`) is recorded
    in the notebook's results under ``_meta["overlaps"][name]`` (an empty list when there is none).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The finished figure.
    name : str
        The artifact's bare name (``"rankboost_fig8"``): no ``/`` and no ``.png``, ``.pdf``, ``.csv`` or
        ``.md`` ending.
    caption : str
        Which paper artifact it regenerates, the data used, the profile and every deviation from the
        paper's protocol; must not be blank.
    profile : str or None, default None
        The profile whose figures folder is written (``"quick"``, ``"paper"``, ``"rehearsal"``); None: the
        active profile (``$LRANK_PROFILE``, else ``"quick"``).

    Returns
    -------
    pathlib.Path
        The path of the PNG.

    Raises
    ------
    ValueError
        When ``name`` is not a bare name or ``caption`` is blank.
    """
    _check(name, caption)
    results.note_overlaps(name, overlaps(fig), profile)
    d = figures_dir(profile)
    png = d / f"{name}.png"
    fig.savefig(png, metadata={"Software": None}, bbox_inches="tight")
    fig.savefig(d / f"{name}.pdf", metadata={"CreationDate": None, "ModDate": None, "Producer": None,
                                             "Creator": None}, bbox_inches="tight")
    (d / f"{name}.caption.txt").write_text(caption.strip() + "\n", encoding="utf-8")
    results.note_artifact("figures", name, profile)
    if in_kernel():
        from IPython.display import Image, Markdown, display

        data = png.read_bytes()
        # shown at the figure's screen size (figure.dpi), not the file's savefig.dpi
        width = round(_png_width(data) * fig.dpi / plt.rcParams["savefig.dpi"]) \
            if isinstance(plt.rcParams["savefig.dpi"], (int, float)) else None
        display(Image(data=data, format="png", width=width, metadata={"lrank": {"figure": name}}))
        display(Markdown(f"*{name}*: {caption.strip()}"))
        plt.close(fig)
    return png


def save_table(df: pd.DataFrame, name: str, caption: str, profile: str | None = None,
               floatfmt: str = ".4f", index: bool = True, show: bool = False) -> Path:
    """Save ``df`` as ``<figures>/<name>.csv`` and ``<name>.md`` (caption line, then the table).

    With ``show=True`` in an IPython kernel the table is also displayed as HTML under its caption
    (off by default: the paper notebooks show their tables with ``display(df)`` themselves).
    ``caption`` is also written to ``<name>.caption.txt``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    name : str
        The artifact's bare name: no ``/`` and no ``.png``, ``.pdf``, ``.csv`` or ``.md`` ending.
    caption : str
        Which paper artifact it regenerates, the data used, the profile and every deviation from the
        paper's protocol; must not be blank.
    profile : str or None, default None
        The profile whose figures folder is written; None: the active profile.
    floatfmt : str, default ".4f"
        Format of floats in the Markdown table and the HTML display (the CSV keeps 10 significant
        digits).
    index : bool, default True
        Whether the index of ``df`` is written (CSV, Markdown and HTML).
    show : bool, default False
        Display the table in an IPython kernel (nothing outside one).

    Returns
    -------
    pathlib.Path
        The path of the CSV.

    Raises
    ------
    ValueError
        When ``name`` is not a bare name or ``caption`` is blank.
    """
    _check(name, caption)
    d = figures_dir(profile)
    csv = d / f"{name}.csv"
    df.to_csv(csv, index=index, float_format="%.10g")
    md = df.to_markdown(index=index, floatfmt=floatfmt)
    (d / f"{name}.md").write_text(f"{caption.strip()}\n\n{md}\n", encoding="utf-8")
    (d / f"{name}.caption.txt").write_text(caption.strip() + "\n", encoding="utf-8")
    results.note_artifact("tables", name, profile)
    if show and in_kernel():
        from IPython.display import HTML, display

        display(HTML(f"<p><em>{name}</em>: {_escape(caption.strip())}</p>"
                     + df.to_html(index=index, float_format=lambda v: format(v, floatfmt),
                                  na_rep="", border=0, classes="lrank-table")))
    return csv


def _escape(text: str) -> str:
    import html

    return html.escape(text)
