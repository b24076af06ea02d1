"""What ``00_index`` shows, built from the claims registry: findings per paper, reading order, every claim.

The index notebook only calls these functions; everything it renders comes from the registry the
paper notebooks wrote (:func:`lrank.claims.load`, ``figures/claims.csv``) and, when stored, from the
per-seed registries of the seed-stability run (``figures/seeds/seed-<k>/claims.csv``, written by
``python -m lrank reproduce --only NN --seeds 1-4``). A paper whose notebook has not written its rows
yet is listed as "not yet in the registry"; nothing is cut: the claims table has every row.

Links point to the deciding cell of each claim: ``<notebook>.ipynb#<anchor>`` where the notebook put
``<a id="<anchor>"></a>`` (``anchor = lrank.claims.anchor_of(id)``); the book (``python -m lrank
site``) rewrites them to its pages.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import pandas as pd

from lrank import catalog, claims
from lrank.paths import figures_dir

#: The order to read the notebooks in, and why (notebook stem, one line).
READING_ORDER: tuple[tuple[str, str], ...] = (
    ("01_rankboost", "start here: RankBoost's pairwise boosting, its loss bounds and weak learners, on which "
                     "every later paper builds"),
    ("05_rankboost_plus", "its direct sequel: RankBoost+ changes how each round's weak ranker is weighted, "
                          "on the machinery of 01"),
    ("02_adarank", "listwise boosting that optimises an IR measure (MAP, NDCG) directly, against RankBoost, "
                   "Ranking SVM and BM25"),
    ("04_tree_fitting", "how the regression trees of MART, McRank and LambdaMART are fitted, and what the "
                        "fitting rule changes"),
    ("03_boostingtree", "choosing weak learners in parallel with a bandit over boosting runs (LambdaMART, "
                        "NDCGBoost), on LETOR-style data and chess"),
    ("06_benchmarks", "how fast the package is against LightGBM, XGBoost, scikit-learn and plain NumPy "
                      "(no paper claim)"),
)
FRAGILE = "FRAGILE"
#: kinds of claim in the order one of each verdict is picked as a paper's highlight
_IMPORTANCE = ("protocol", "speed", "narrative", "exact", "derivation")
_COLOURS = {claims.HELD: "#d9f0d3", claims.NOT_HELD: "#f4cccc", claims.UNDECIDED: "#fff2cc",
            claims.NOT_COMPARABLE: "#e0e0e0", claims.NOT_TESTABLE: "#eeeeee"}


def _text(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return str(x)


def _num(x: Any, fmt: str = ".2g") -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(v) else format(v, fmt)


def load_registry(path: str | Path | None = None) -> pd.DataFrame:
    """The registry (:func:`lrank.claims.load`), or an empty table with its columns when none was written.

    Parameters
    ----------
    path : str or pathlib.Path or None, default None
        The registry's CSV file; None: ``<figures>/claims.csv`` of the active profile (``$LRANK_PROFILE``,
        else ``quick``).

    Returns
    -------
    pandas.DataFrame
        One row per claim or finding; with no rows (columns ``lrank.claims.COLUMNS``) when the file is
        absent.
    """
    try:
        return claims.load(path)
    except FileNotFoundError:
        return pd.DataFrame(columns=list(claims.COLUMNS))


def seed_verdicts(root: str | Path | None = None, seeds: range | list[int] = range(5)) -> pd.DataFrame:
    """Verdict of every claim under each stored seed: index (notebook, id), one column ``seed_<k>`` each.

    Reads ``<root>/seed-<k>/claims.csv`` (default root ``<figures>/seeds``); absent seeds are left out
    (an empty table when none is stored). Keyed by notebook and id, since ids are unique per notebook.

    Parameters
    ----------
    root : str or pathlib.Path or None, default None
        The folder holding one ``seed-<k>/claims.csv`` per seed; None: ``<figures>/seeds`` of the active
        profile.
    seeds : iterable of int, optional
        The seeds to look for; ``range(5)`` (seeds 0 to 4) by default.

    Returns
    -------
    pandas.DataFrame
        Index (notebook, id) over every claim and finding of the stored seeds, one column ``seed_<k>``
        per stored seed in the order of ``seeds``: that seed's verdict, NaN where its registry lacks the
        row or the row has no verdict (a finding).
    """
    root = Path(root) if root is not None else figures_dir() / "seeds"
    cols = {}
    for k in seeds:
        p = root / f"seed-{k}" / "claims.csv"
        if p.is_file():
            df = claims.load(p)
            cols[f"seed_{k}"] = df.set_index(["notebook", "id"])["verdict"]
    return pd.DataFrame(cols)


def with_seeds(df: pd.DataFrame, seeds: pd.DataFrame) -> pd.DataFrame:
    """Add ``seeds_agree`` ("k/m") and ``fragile`` to the registry ``df`` from :func:`seed_verdicts`.

    The stored run counts as the seed it was run with when that seed's registry is not stored
    separately (``seed_0``), so "5/5" means all five seeds agree. A decided verdict (HELD, NOT HELD) that
    any seed turns into another verdict is fragile. Claims absent from every seed, and findings (no
    verdict), get ``""``.

    Parameters
    ----------
    df : pandas.DataFrame
        The registry (:func:`load_registry`); its ``notebook``, ``id`` and ``verdict`` columns are read.
    seeds : pandas.DataFrame
        The verdicts per seed from :func:`seed_verdicts` (may be empty: then every row gets ``""``).

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` with ``seeds_agree`` (str: ``"k/m"``, k of the m verdicts equal to the stored
        one, m counting every stored seed with a verdict for the claim and, when ``seed_0`` has none,
        the stored run; or ``""``) and ``fragile`` (bool; False where ``seeds_agree`` is ``""``).
    """
    out = df.copy()
    agree, fragile = [], []
    for nb, cid, v in zip(out["notebook"], out["id"], out["verdict"]):
        key = (nb, cid)
        if _text(v) and seeds.shape[1] and key in seeds.index:  # findings carry no verdict
            row = seeds.loc[key].dropna()
            verdicts = list(row) if "seed_0" in row.index else [v, *row]
            k = sum(x == v for x in verdicts)
            agree.append(f"{k}/{len(verdicts)}")
            fragile.append(bool(v in (claims.HELD, claims.NOT_HELD) and k < len(verdicts)))
        else:
            agree.append("")
            fragile.append(False)
    out["seeds_agree"], out["fragile"] = agree, fragile
    return out


def paper_counts(df: pd.DataFrame) -> pd.DataFrame:
    """One row per paper of the catalogue: its notebook, claims (findings excluded), each verdict's count,
    findings, and ``status`` ("in the registry" or "not yet in the registry").

    Parameters
    ----------
    df : pandas.DataFrame
        The registry (:func:`load_registry`); rows of notebooks that are not in ``lrank.catalog.PAPERS``
        are not counted.

    Returns
    -------
    pandas.DataFrame
        In the catalogue's order, columns ``paper`` (short name), ``notebook``, ``claims``, one count per
        verdict of ``lrank.claims.VERDICTS`` (named by the verdict), ``findings`` and ``status``.
    """
    rows = []
    for p in catalog.PAPERS:
        mine = df[df["notebook"] == p["notebook"]]
        paper_claims = mine[mine["kind"] != "finding"]
        row = {"paper": p["short"], "notebook": p["notebook"], "claims": len(paper_claims)}
        row.update({v: int((paper_claims["verdict"] == v).sum()) for v in claims.VERDICTS})
        row["findings"] = int((mine["kind"] == "finding").sum())
        row["status"] = "in the registry" if len(mine) else "not yet in the registry"
        rows.append(row)
    return pd.DataFrame(rows)


def highlights(df: pd.DataFrame, notebook: str, width: int = 160) -> list[str]:
    """The most important claim of each verdict in one notebook's rows, one Markdown line each.

    Most important: the kind of claim first (protocol, speed, narrative, exact, derivation: the papers'
    experimental statements before their worked examples), then the smallest adjusted p, then the
    registry's order. The sentence is shortened to ``width`` characters here only; the table has it all.

    Parameters
    ----------
    df : pandas.DataFrame
        The registry (:func:`load_registry`).
    notebook : str
        The notebook's stem (``"01_rankboost"``); only its rows are read, findings excluded.
    width : int, default 160
        The longest sentence shown, in characters: a longer one is cut to ``width - 1`` characters and
        "…" (runs of whitespace are first collapsed to one space).

    Returns
    -------
    list of str
        One line per verdict the notebook's claims have, in the order of ``lrank.claims.VERDICTS``: the
        verdict and its count, the location linked to ``<notebook>.ipynb#<anchor>``, the sentence, and
        the adjusted p and n when both are numbers. Empty when the notebook has no claim.
    """
    mine = df[(df["notebook"] == notebook) & (df["kind"] != "finding")].copy()
    if mine.empty:
        return []
    mine["_rank"] = mine["kind"].map(lambda k: _IMPORTANCE.index(k) if k in _IMPORTANCE else len(_IMPORTANCE))
    mine["_p"] = pd.to_numeric(mine["p_adj"], errors="coerce").fillna(2.0)
    mine["_order"] = range(len(mine))
    out = []
    for v in claims.VERDICTS:
        rows = mine[mine["verdict"] == v].sort_values(["_rank", "_p", "_order"])
        if rows.empty:
            continue
        r = rows.iloc[0]
        sentence = " ".join(_text(r["sentence"]).split())
        if len(sentence) > width:
            sentence = sentence[: width - 1].rstrip() + "…"
        link = f"{notebook}.ipynb#{_text(r['anchor']) or claims.anchor_of(r['id'])}"
        extra = f"; p_adj = {_num(r['p_adj'])}, n = {int(r['n'])} {_text(r['unit'])}" \
            if _num(r["p_adj"]) and _num(r["n"]) else ""
        out.append(f"**{v}** ({len(rows)}): [{_text(r['location'])}]({link}), “{sentence}”{extra}")
    return out


def summary_markdown(df: pd.DataFrame) -> str:
    """Per paper: the verdict counts of its claims (findings excluded) and one line per verdict.

    Parameters
    ----------
    df : pandas.DataFrame
        The registry (:func:`load_registry`).

    Returns
    -------
    str
        A Markdown list, one item per paper of the catalogue (with the number of its findings; a paper
        without rows is "not yet in the registry"), the lines of :func:`highlights` as its sub-items.
    """
    lines = []
    for r in paper_counts(df).to_dict("records"):
        head = f"**{r['paper']}** ([{r['notebook']}]({r['notebook']}.ipynb))"
        if r["status"] != "in the registry":
            lines.append(f"* {head}: not yet in the registry (its notebook has not written its claims).")
            continue
        counts = ", ".join(f"{r[v]} {v}" for v in claims.VERDICTS if r[v])
        f = r["findings"]
        finds = f"; {f} finding{'s' if f != 1 else ''} besides" if f else ""
        lines.append(f"* {head}: {r['claims']} claims: {counts}{finds}.")
        lines += [f"    * {h}" for h in highlights(df, r["notebook"])]
    return "\n".join(lines)


def reading_order_markdown() -> str:
    """The reading order as a numbered Markdown list with links.

    Returns
    -------
    str
        One item per entry of ``READING_ORDER``: the notebook linked to ``<notebook>.ipynb`` and why to
        read it there.
    """
    return "\n".join(f"{i}. [{nb}]({nb}.ipynb): {why}." for i, (nb, why) in enumerate(READING_ORDER, 1))


def legend_markdown(with_fragile: bool = True) -> str:
    """The verdict words and what each means (``lrank.claims.VERDICT_LEGEND``).

    Parameters
    ----------
    with_fragile : bool, default True
        Also explain the ``FRAGILE`` mark (a decided verdict that a stored seed contradicts; see
        :func:`with_seeds`).

    Returns
    -------
    str
        A Markdown list, one item per verdict of ``lrank.claims.VERDICTS`` (then one for ``FRAGILE``).
    """
    lines = [f"* **{v}**: {claims.VERDICT_LEGEND[v]}." for v in claims.VERDICTS]
    if with_fragile:
        lines.append(f"* **{FRAGILE}** (beside HELD or NOT HELD): at least one of the stored seeds gives "
                     "another verdict; *seeds* says how many of them agree with the verdict shown.")
    return "\n".join(lines)


def seed_summary(df: pd.DataFrame) -> str:
    """One sentence on the seed-stability run (``df`` from :func:`with_seeds`).

    Parameters
    ----------
    df : pandas.DataFrame
        The registry with the columns :func:`with_seeds` adds. Without ``seeds_agree``, or when it is
        empty on every row, the sentence says that no seed-stability run is stored.

    Returns
    -------
    str
        Markdown: the notebooks rerun, how many claims (findings excluded) were rerun with every stored
        seed, and how many of their decided verdicts (HELD, NOT HELD) are ``FRAGILE``, with the share.
    """
    if "seeds_agree" not in df or not (df["seeds_agree"] != "").any():
        return ("No seed-stability run is stored yet (`python -m lrank reproduce --only NN --seeds 1-4` "
                "writes `figures/seeds/`): the *seeds* column is empty.")
    paper = df[df["kind"] != "finding"]
    rerun = paper[paper["seeds_agree"] != ""]
    decided = rerun[rerun["verdict"].isin([claims.HELD, claims.NOT_HELD])]
    n_frag = int(decided["fragile"].sum())
    share = f" ({100 * n_frag / len(decided):.0f}%)" if len(decided) else ""
    nbs = ", ".join(dict.fromkeys(rerun["notebook"]))
    return (f"Seed stability ({nbs}): {len(rerun)} claims rerun with every stored seed; {n_frag} of "
            f"{len(decided)} decided verdicts{share} are {FRAGILE}.")


_TABLE_COLUMNS = ("#", "paper", "claim (the paper's sentence)", "where", "data", "n", "p", "p adj.",
                  "verdict", "seeds", "reason")


def claims_table_html(df: pd.DataFrame, findings: bool = False) -> str:
    """Every row of the registry (paper claims, or with ``findings=True`` only the findings) as one HTML
    table: the sentence linked to its deciding cell, data kind, n, p, adjusted p, verdict, seed
    agreement and reason. Never truncated.

    Parameters
    ----------
    df : pandas.DataFrame
        The registry (:func:`load_registry`), with the columns of :func:`with_seeds` or without them
        (then the *seeds* cells are empty and no verdict is marked ``FRAGILE``).
    findings : bool, default False
        False: the paper's claims; True: only the findings, without the *p adj.* and *verdict* columns.

    Returns
    -------
    str
        The HTML table (class ``lrank-claims``), one row per selected row of ``df`` in its order, the
        verdict cell coloured by its verdict.
    """
    rows = df[(df["kind"] == "finding") == findings]
    cols = [c for c in _TABLE_COLUMNS if not (findings and c in ("p adj.", "verdict"))]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for i, r in enumerate(rows.to_dict("records"), 1):
        anchor = _text(r.get("anchor")) or claims.anchor_of(r["id"])
        href = html.escape(f"{r['notebook']}.ipynb#{anchor}")
        verdict = _text(r["verdict"])
        frag = bool(r.get("fragile", False))
        data = _text(r["data_kind"]) + (f": {_text(r['data'])}" if _text(r["data"]) else "")
        n = f"{int(float(r['n']))} {_text(r['unit'])}" if _num(r["n"]) else ""
        claim = (f'<a href="{href}">{html.escape(_text(r["sentence"]))}</a><br>'
                 f'<code>{html.escape(r["id"])}</code> ({html.escape(r["kind"])})')
        cells = {
            "#": str(i), "paper": html.escape(_text(r["paper"])),
            "claim (the paper's sentence)": claim,
            "where": html.escape(_text(r["location"])), "data": html.escape(data), "n": html.escape(n),
            "p": _num(r["p"]), "p adj.": _num(r["p_adj"]),
            "verdict": html.escape(verdict) + (f"<br><b>{FRAGILE}</b>" if frag else ""),
            "seeds": html.escape(_text(r.get("seeds_agree", ""))), "reason": html.escape(_text(r["reason"])),
        }
        style = f' style="background:{_COLOURS[verdict]}"' if verdict in _COLOURS else ""
        body.append("<tr>" + "".join(f"<td{style if c == 'verdict' else ''}>{cells[c]}</td>" for c in cols)
                    + "</tr>")
    return (f'<table class="lrank-claims"><thead><tr>{head}</tr></thead><tbody>'
            + "\n".join(body) + "</tbody></table>")


def _importable(name: str) -> bool:
    import importlib

    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def modules_table_html() -> str:
    """Papers → notebooks → the ``lrank`` modules that implement them (a module not importable is marked).

    Returns
    -------
    str
        An HTML table, one row per paper of ``lrank.catalog.PAPERS``: its short name, its notebook
        (linked to ``<notebook>.ipynb``, or marked "(missing)" when the file is absent) and its modules.
    """
    from lrank.paths import notebooks_dir

    rows = []
    for p in catalog.PAPERS:
        present = (notebooks_dir() / f"{p['notebook']}.ipynb").is_file()
        nb = (f'<a href="{p["notebook"]}.ipynb">{p["notebook"]}</a>' if present
              else f"{p['notebook']} (missing)")
        mods = ", ".join(f"<code>{m}</code>{'' if _importable(m) else ' (missing)'}" for m in p["modules"])
        rows.append(f"<tr><td>{html.escape(p['short'])}</td><td>{nb}</td><td>{mods}</td></tr>")
    return ("<table><thead><tr><th>paper</th><th>notebook</th><th>modules</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def artifacts_table_html(profile: str | None = None) -> str:
    """Every artifact in ``<figures>`` (from its caption file): its files, the notebook that saved it
    (from the notebooks' results) and its caption.

    Parameters
    ----------
    profile : {"quick", "paper", "rehearsal"} or None, default None
        Whose figures folder and notebook results are read; None: the active profile
        (``$LRANK_PROFILE``, else ``quick``). Another name raises ``lrank.paths.ProfileError``.

    Returns
    -------
    str
        ``<p>N artifacts.</p>`` and an HTML table, one row per ``<name>.caption.txt``: the name, links to
        its other files (relative to the notebooks folder), the notebook whose results list it (empty
        when none does) and the caption.
    """
    import os

    from lrank import results
    from lrank.paths import notebooks_dir

    fig_dir = figures_dir(profile)
    owner = {}
    for nb in sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]*.ipynb")):
        arts = results.load_meta(nb, profile).get("artifacts", {})
        owner.update({a: nb for a in arts.get("figures", []) + arts.get("tables", [])})
    rows = []
    for cap in sorted(fig_dir.glob("*.caption.txt")):
        name = cap.name.removesuffix(".caption.txt")
        files = sorted(p for p in fig_dir.glob(name + ".*") if not p.name.endswith(".caption.txt"))
        links = " ".join(f'<a href="{html.escape(os.path.relpath(p, notebooks_dir()))}">{p.suffix[1:]}</a>'
                         for p in files)
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{links}</td><td>{owner.get(name, '')}</td>"
                    f"<td>{html.escape(cap.read_text(encoding='utf-8').strip())}</td></tr>")
    return (f"<p>{len(rows)} artifacts.</p><table><thead><tr><th>artifact</th><th>files</th><th>notebook</th>"
            "<th>caption</th></tr></thead><tbody>" + "\n".join(rows) + "</tbody></table>")
