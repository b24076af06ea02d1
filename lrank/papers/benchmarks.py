"""The benchmark notebook's (06) plumbing: the stored run read with each row's status, kind and target, one
chart per kind of number, and the complete table.

A row of ``figures/benchmarks.csv`` holds one of four kinds of number, which never share an axis:

* ``time ratio``: a ratio of two times (by default reference time / lrank time, above 1 = lrank
  faster; the row's ``ratio_kind`` says when lower is better, e.g. a slowdown or a share);
* ``memory ratio``: peak memory of lrank over the reference's (lower is better);
* ``seconds``: a time in seconds (a first fit with a cold compilation cache, compilation alone);
* ``NDCG difference``: mean test NDCG@10 of lrank minus the reference's (0 = equal quality).
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from lrank.paths import profile as active_profile

#: The kinds of number a row of the stored run holds, one chart each.
KINDS = ("time ratio", "memory ratio", "seconds", "NDCG difference")
_A = {"time ratio": "a time ratio", "memory ratio": "a memory ratio", "seconds": "a time in seconds",
      "NDCG difference": "an NDCG difference"}
_PLURAL = {"time ratio": "time ratios", "memory ratio": "memory ratios", "seconds": "rows in seconds",
           "NDCG difference": "NDCG differences"}
STATUS_COLOURS = {"met": "#009E73", "missed": "#D55E00", "undecided": "#E69F00", "report": "#9e9e9e"}
#: how the page names the statuses a row gets besides met, missed, undecided and report: ``error`` (the row
#: could not be measured: a peer library or a data set missing, a module that failed; no number) and
#: ``invalid`` (a per-iteration difference lost in timer noise); neither is ever counted as met
_STATUS_WORDS = {"invalid": "invalid", "error": "not measured"}
_OTHER_COLOUR = "#555555"


def target_value(text: object) -> tuple[str | None, float]:
    """``(">=" or "<=", number)`` from a target text such as ``">= 20x faster"`` or ``"5-10x"`` (its lower
    end); ``(None, nan)`` for a report-only target (in parentheses) or one without a number.

    A number counts only right after a comparison or as a range's lower end: ``"20x faster"`` or
    ``"ours <= LightGBM's"`` also give ``(None, nan)``.

    Parameters
    ----------
    text : object
        The row's ``target`` cell: a string, or None or NaN (an empty cell), read as ``""``.

    Returns
    -------
    direction : {">=", "<="} or None
        The first comparison followed by a number (``">"`` read as ``">="``, ``"<"`` as ``"<="``), else
        ``">="`` for a range ``"a-bx"``; None when there is neither.
    value : float
        That number, or the range's lower end; NaN when ``direction`` is None.
    """
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    if text.startswith("("):
        return None, math.nan
    m = re.search(r"(>=|<=|>|<)\s*([0-9]*\.?[0-9]+)", text)
    if m:
        return (">=" if m.group(1).startswith(">") else "<="), float(m.group(2))
    m = re.search(r"([0-9]*\.?[0-9]+)\s*-\s*[0-9]*\.?[0-9]+\s*x", text)
    return (">=", float(m.group(1))) if m else (None, math.nan)


def status_of(row: pd.Series) -> str:
    """The row's ``status`` column when it has one; otherwise ``report`` for a report-only target, else
    ``met`` / ``missed`` from the ``met`` column.

    Parameters
    ----------
    row : pandas.Series
        One row of the stored run; its ``status``, ``target`` and ``met`` cells are read (each may be
        absent).

    Returns
    -------
    str
        A non-blank ``status`` stripped and lower-cased (any that starts with "report" as ``"report"``);
        else ``"report"`` when :func:`target_value` finds no direction in ``target``, ``"met"`` when
        ``met`` reads as true (``True``, ``1``, ``"yes"`` or ``"met"``), otherwise ``"missed"``.
    """
    s = row.get("status")
    if isinstance(s, str) and s.strip():
        s = s.strip().lower()
        return "report" if s.startswith("report") else s
    direction, _ = target_value(row.get("target"))
    if direction is None:
        return "report"
    met = row.get("met")
    if isinstance(met, (bool, int, float, np.bool_, np.integer, np.floating)):  # 1.0 from a float column
        return "met" if met == met and bool(met) else "missed"                  # NaN: not met
    return "met" if str(met).strip().lower() in ("true", "1", "yes", "met") else "missed"


def kind_of(ratio_kind: object) -> str:
    """Which of :data:`KINDS` a row's ``ratio_kind`` text describes (empty: the default time ratio).

    Parameters
    ----------
    ratio_kind : object
        The row's ``ratio_kind`` cell; anything but a string (None, NaN: an empty cell) reads as ``""``.

    Returns
    -------
    str
        ``"NDCG difference"`` when the text contains "NDCG" or "difference"; else ``"memory ratio"``
        when it contains "MB" or "memory" (any case); else ``"seconds"`` when it starts with "seconds" or
        "cold seconds"; else ``"time ratio"``.
    """
    text = "" if not isinstance(ratio_kind, str) else ratio_kind
    if "NDCG" in text or "difference" in text:
        return "NDCG difference"
    if "MB" in text or "memory" in text.lower():
        return "memory ratio"
    if text.startswith(("cold seconds", "seconds")):
        return "seconds"
    return "time ratio"


def read_run(path: str | Path) -> pd.DataFrame:
    """The stored run with ``status``, ``kind``, ``lower_is_better``, ``target_direction`` and
    ``target_value`` added (an empty table when the file is absent).

    Parameters
    ----------
    path : str or pathlib.Path
        The run's CSV (``figures/benchmarks.csv``, written by ``python -m lrank bench``), read with
        :func:`lrank.plots.read_table`.

    Returns
    -------
    pandas.DataFrame
        The file's rows and columns, ``status`` set by :func:`status_of` (replacing the file's),
        ``target_direction`` and ``target_value`` by :func:`target_value`, ``kind`` by :func:`kind_of`,
        and ``lower_is_better`` (bool: the target's direction is ``"<="``; without a direction, the
        ``ratio_kind`` says "lower is" or "slowdown"). When the file is absent: no rows, columns
        ``module``, ``benchmark``, ``ratio``, ``status`` and ``kind`` only.
    """
    from lrank.plots import read_table

    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=["module", "benchmark", "ratio", "status", "kind"])
    df = read_table(path)
    df["status"] = [status_of(r) for _, r in df.iterrows()]
    parsed = [target_value(t) for t in df["target"]] if "target" in df else [(None, math.nan)] * len(df)
    df["target_direction"] = [p[0] for p in parsed]
    df["target_value"] = [p[1] for p in parsed]
    rk = df["ratio_kind"] if "ratio_kind" in df else pd.Series([None] * len(df), index=df.index)
    df["kind"] = [kind_of(k) for k in rk]
    df["lower_is_better"] = [(d == "<=") if isinstance(d, str)  # the target says; else the ratio's kind
                             else ("lower is" in str(k) or "slowdown" in str(k))
                             for d, k in zip(df["target_direction"], rk)]
    return df


def counts_markdown(df: pd.DataFrame) -> str:
    """One line: how many rows, how many met / missed / report-only (and undecided, invalid or not measured
    where there are such rows, so that the counts add up), and how many of each kind.

    Parameters
    ----------
    df : pandas.DataFrame
        The run from :func:`read_run`.

    Returns
    -------
    str
        The Markdown line; when ``df`` has no rows, a sentence saying which command writes the run.
    """
    if not len(df):
        return "No stored benchmark run: `python -m lrank bench` writes `figures/benchmarks.csv`."
    st = df["status"].value_counts()
    kinds = df["kind"].value_counts()
    named = ("met", "missed", "undecided", "report", *_STATUS_WORDS)
    order = named + tuple(sorted(s for s in st.index if s not in named))
    return (f"**{len(df)} rows** from `figures/benchmarks.csv`: "
            + ", ".join(f"{st.get(s, 0)} {_STATUS_WORDS.get(s, s)}" for s in order
                        if s in ("met", "missed", "report") or st.get(s, 0)) + "; "
            + ", ".join(f"{n} {_PLURAL[k] if n != 1 else k}" for k in KINDS if (n := kinds.get(k, 0))) + ".")


def _label(row: pd.Series, width: int = 96) -> str:
    text = f"{row['module']}: {row['benchmark']}"
    return text if len(text) <= width else text[: width - 1] + "…"


def _bars(ax, rows: pd.DataFrame, log: bool) -> None:
    from matplotlib.patches import Patch

    y = np.arange(len(rows))[::-1]
    colours = [STATUS_COLOURS.get(s, _OTHER_COLOUR) for s in rows["status"]]
    ax.barh(y, rows["ratio"].astype(float), color=colours, height=0.7)
    has = rows["target_value"].notna().to_numpy()
    tv = rows["target_value"].to_numpy(dtype=float)
    ax.scatter(tv[has], y[has], marker="|", s=160, color="black", zorder=3)
    if log:
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", lw=0.6, ls=":")
    ax.set_yticks(y, [_label(r) for _, r in rows.iterrows()], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    handles = [Patch(color=c, label=s) for s, c in STATUS_COLOURS.items()]
    others = sorted(set(rows["status"]) - set(STATUS_COLOURS))  # an invalid row drawn: say what its grey is
    handles += [Patch(color=_OTHER_COLOUR, label=" / ".join(others))] if others else []
    handles.append(ax.scatter([], [], marker="|", s=160, color="black", label="target"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)


_XLABEL = {
    "memory ratio": "peak memory, lrank / reference (below 1: lrank uses less)",
    "seconds": "seconds (first fit in a new process or compilation alone)",
    "NDCG difference": "mean test NDCG@10, lrank minus reference (0: equal quality)",
}


def chart(df: pd.DataFrame, kind: str):
    """The figure of one kind of number (``None`` when the run has no such row): one bar per row, coloured
    by status, the target as a black tick. Time ratios get two panels, higher-is-better and
    lower-is-better, on log axes; NDCG differences a linear axis around 0.

    Parameters
    ----------
    df : pandas.DataFrame
        The run from :func:`read_run`; rows of ``kind`` whose ``ratio`` is not a number are not drawn.
    kind : {"time ratio", "memory ratio", "seconds", "NDCG difference"}
        Which kind of number (one of :data:`KINDS`).

    Returns
    -------
    matplotlib.figure.Figure or None
        The figure, neither saved nor closed; None when no row of ``kind`` has a number. Memory ratios
        and seconds are drawn on a log axis when every number is positive; NDCG differences get a
        shaded band of plus or minus the largest target.

    Raises
    ------
    ValueError
        When ``kind`` is not one of :data:`KINDS`.
    """
    import matplotlib.pyplot as plt

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rows = df[(df["kind"] == kind) & pd.to_numeric(df["ratio"], errors="coerce").notna()]
    if not len(rows):
        return None
    if kind == "time ratio":
        parts = [("higher is better: reference time / lrank time unless the row says otherwise",
                  rows[~rows["lower_is_better"].astype(bool)]),
                 ("lower is better: slowdowns, shares and growth (ours / reference)",
                  rows[rows["lower_is_better"].astype(bool)])]
        parts = [(t, p) for t, p in parts if len(p)]
        heights = [len(p) + 2.5 for _, p in parts]
        fig, axes = plt.subplots(len(parts), 1, figsize=(11.0, 0.24 * sum(heights) + 0.6),
                                 gridspec_kw={"height_ratios": heights}, layout="constrained", squeeze=False)
        for ax, (title, p) in zip(axes[:, 0], parts):
            _bars(ax, p, log=True)
            ax.set_title(title, fontsize=9, loc="left")
            ax.set_xlabel("time ratio (log scale)")
        return fig
    fig, ax = plt.subplots(figsize=(11.0, 0.24 * (len(rows) + 2.5) + 0.6), layout="constrained")
    _bars(ax, rows, log=kind != "NDCG difference" and bool((rows["ratio"].astype(float) > 0).all()))
    if kind == "NDCG difference":
        ax.axvline(0.0, color="black", lw=0.6, ls=":")
        band = rows["target_value"].dropna()
        if len(band):
            ax.axvspan(-band.max(), band.max(), color="#009E73", alpha=0.12, lw=0)
    ax.set_xlabel(_XLABEL[kind])
    return fig


TABLE_COLUMNS = ("module", "benchmark", "kind", "ratio", "ratio_kind", "target", "status", "timing",
                 "threads", "ours_s", "reference", "reference_s", "load", "notes")


def table_html(df: pd.DataFrame, columns: tuple[str, ...] = TABLE_COLUMNS) -> str:
    """Every row of the run as one HTML table (numbers to 4 significant digits); never truncated.

    Parameters
    ----------
    df : pandas.DataFrame
        The run from :func:`read_run`.
    columns : tuple of str, optional
        The columns to show, in this order; those ``df`` lacks are left out. By default
        ``TABLE_COLUMNS``: ``module``, ``benchmark``, ``kind``, ``ratio``, ``ratio_kind``, ``target``,
        ``status``, ``timing``, ``threads``, ``ours_s``, ``reference``, ``reference_s``, ``load`` and
        ``notes``.

    Returns
    -------
    str
        The HTML table (class ``lrank-table``): floats to 4 significant digits, NaN and None as empty
        cells, anything else as escaped text.
    """
    cols = [c for c in columns if c in df.columns]

    def cell(v: object) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else f"{v:.4g}"
        return html.escape("" if v is None else str(v))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "\n".join("<tr>" + "".join(f"<td>{cell(r[c])}</td>" for c in cols) + "</tr>"
                     for _, r in df.iterrows())
    return f'<table class="lrank-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


#: why a row is undecided, read from its notes (`lrank.benchmarks.time_to_accuracy._rows`): a row whose notes
#: say lrank reaches the peer's best (met on the timed fold split) and give the other fold splits was made
#: undecided by those splits; any other undecided row by its paired test
_REACHED, _SPLIT = "lrank reaches it at tree", "on the other fold splits"
_UNDECIDED = {False: "the paired test cannot tell",
              True: "met on the timed fold split, lrank's best below the peer's on another fold split"}


def _row_names(rows: pd.DataFrame) -> pd.Series:
    """``"module: benchmark"`` of each row (aligned with ``rows``), with the thread count added where that
    name is shared (a benchmark measured on 1 and 2 threads is two rows), and then the reference where it is
    still shared (one benchmark timed against two peers), so that a sentence never names one row twice."""
    base = rows["module"].astype(str) + ": " + rows["benchmark"].astype(str)
    if "threads" in rows:
        threads = pd.to_numeric(rows["threads"], errors="coerce")
        shared = base.duplicated(keep=False) & threads.notna()
        n = threads.where(shared, 0).astype(int).astype(str)
        base = base.where(~shared, base + ", " + n + " thread" + np.where(n == "1", "", "s"))
    if "reference" in rows:  # one benchmark against two peers (gbrt's per-tree rows): name the peer too
        shared = base.duplicated(keep=False)
        base = base.where(~shared, base + " (vs " + rows["reference"].astype(str) + ")")
    return base


def what_to_see(df: pd.DataFrame, kind: str) -> str:
    """One sentence under a chart: how many of its rows meet, miss or only report a target (and how many are
    undecided, invalid or could not be measured, so that the counts add up to the rows), naming misses,
    undecided rows (grouped by why they are undecided), invalid rows and rows not measured (with why).

    Parameters
    ----------
    df : pandas.DataFrame
        The run from :func:`read_run`.
    kind : {"time ratio", "memory ratio", "seconds", "NDCG difference"}
        The chart's kind of number (one of :data:`KINDS`); only rows of that kind are counted.

    Returns
    -------
    str
        The sentence, in Markdown. Rows are named ``"module: benchmark"``, with the thread count and then
        the reference added where that name is shared; a missed row with its number and target, a row
        not measured with the start of its notes.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rows = df[df["kind"] == kind]
    st = rows["status"].value_counts()
    label = _row_names(rows)
    is_missed = (rows["status"] == "missed").to_numpy()
    missed = rows[is_missed]
    names = "; ".join(f"{name} ({float(r['ratio']):.3g} against {r['target']})"
                      for name, (_, r) in zip(label[is_missed], missed.iterrows()))
    is_undecided = (rows["status"] == "undecided").to_numpy()
    undecided = rows[is_undecided]
    notes = undecided["notes"].fillna("").astype(str) if "notes" in undecided else [""] * len(undecided)
    why = [_UNDECIDED[_SPLIT in n and _REACHED in n] for n in notes]
    named = list(label[is_undecided])
    open_ = "".join(f". Undecided ({w}): " + "; ".join(x for x, v in zip(named, why) if v == w)
                    for w in _UNDECIDED.values() if w in why)
    parts = [f"{st.get('met', 0)} met the target", f"{st.get('missed', 0)} missed it"]
    parts += [f"{n} {w}" for s, w in (("undecided", "undecided"), ("invalid", "invalid"),
                                      ("error", "not measured (no number, not drawn)"))
              if (n := st.get(s, 0))]
    parts.append(f"{st.get('report', 0)} report without one")
    return (f"Of the {len(rows)} {_PLURAL[kind] if len(rows) != 1 else kind}: "
            + ", ".join(parts[:-1]) + " and " + parts[-1]
            + (f". Missed: {names}" if names else "") + open_
            + _named(rows, label, "invalid", "Invalid (a per-iteration time lost in timer noise)", why=False)
            + _named(rows, label, "error", "Not measured", why=True) + ".")


def _named(rows: pd.DataFrame, label: pd.Series, status: str, head: str, why: bool) -> str:
    """``". <head>: name; ..."`` for the rows of ``status`` (``""`` when there is none); with ``why``, each
    name followed by the start of the row's notes in parentheses (an error row's notes say why it could not
    be measured)."""
    is_s = (rows["status"] == status).to_numpy()
    if not is_s.any():
        return ""
    notes = rows["notes"].fillna("").astype(str) if why and "notes" in rows else pd.Series([""] * len(rows))
    short = [n if len(n) <= 120 else n[:119] + "…" for n in notes[is_s]]
    return f". {head}: " + "; ".join(f"{name} ({w})" if w else name for name, w in zip(label[is_s], short))


def save_chart(df: pd.DataFrame, kind: str, profile: str | None = None):
    """Draw :func:`chart` for ``kind``, save it as ``benchmarks_<kind>`` with its caption (shown inline in a
    notebook) and return the PNG path (``None`` when the run has no row of that kind).

    Parameters
    ----------
    df : pandas.DataFrame
        The run from :func:`read_run`.
    kind : {"time ratio", "memory ratio", "seconds", "NDCG difference"}
        Which chart (one of :data:`KINDS`); the figure is named ``benchmarks_<kind>``, spaces as
        underscores and lower case (``benchmarks_time_ratio``, ``benchmarks_ndcg_difference``).
    profile : {"quick", "paper", "rehearsal"} or None, default None
        The profile whose figures folder and notebook results receive the figure
        (:func:`lrank.plots.save_figure`); None: the active profile (``$LRANK_PROFILE``, else ``quick``).
        The caption names it (for None, the active one).

    Returns
    -------
    pathlib.Path or None
        The saved PNG (its PDF and ``.caption.txt`` beside it); None, with nothing saved, when
        :func:`chart` draws nothing.

    Raises
    ------
    ValueError
        When ``kind`` is not one of :data:`KINDS` (from :func:`chart`).
    """
    from lrank import plots

    fig = chart(df, kind)
    if fig is None:
        return None
    n = int((df["kind"] == kind).sum())
    caption = (f"Benchmarks, {_PLURAL[kind]}: the {n} rows of figures/benchmarks.csv whose number is "
               f"{_A[kind]} (the stored run of python -m lrank bench on this machine; real MSLR sample and "
               "synthetic LETOR-like data as each row says), one bar per row: green met, red missed, amber "
               "undecided, grey report-only; black tick: the row's target. Timings are machine-dependent; "
               f"profile of this notebook: {profile or active_profile()}.")
    return plots.save_figure(fig, "benchmarks_" + kind.replace(" ", "_").lower(), caption, profile)
