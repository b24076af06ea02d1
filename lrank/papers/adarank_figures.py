"""Xu & Li (2007), AdaRank: notebook 02's figures, the sentence printed under each, and its recorded numbers.

Every figure function returns ``(fig, sentence)``: the sentence says what to see, rendered from the
numbers drawn, and whether it matches the paper's statement. Colours and markers come from
`lrank.plots.algo_style` (the same in every notebook). `record_protocol` records the protocol's tables
with `lrank.results.record` (experimental numbers, pinned by the golden test).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd

from lrank import plots, results
from lrank.papers.adarank import ADARANKS, NB, ProtocolResult

EXPERIMENTAL = 1e-6  # tolerance of the recorded experimental numbers (deterministic runs)


def _bars(ax: plt.Axes, table: pd.DataFrame, labels: list[str]) -> None:
    """One group of bars per column of ``table``, one bar per row (method), in the method's colour."""
    xs = np.arange(table.shape[1])
    w = 0.8 / table.shape[0]
    for j, method in enumerate(table.index):
        st = plots.algo_style(method)
        ax.bar(xs + (j - (table.shape[0] - 1) / 2) * w, table.loc[method].to_numpy(), w, label=method,
               color=st["color"], hatch="//" if "continuing" in method else None, edgecolor="white")
    ax.set_xticks(xs, labels)


def fig2(table: pd.DataFrame, title: str) -> tuple[plt.Figure, str]:
    """Fig. 2 / 5: test MAP and NDCG@1..10 of every method (bars), legend outside."""
    fig, ax = plt.subplots(figsize=(10, 3.8), layout="constrained")
    _bars(ax, table, ["MAP"] + [f"N@{k}" for k in range(1, 11)])
    ax.set_ylabel("test value (mean over folds)")
    ax.set_title(title)
    plots.legend_outside(ax, fontsize=8)
    best = table.idxmax(axis=0)
    wins = {m: int((best == m).sum()) for m in table.index}
    ada = [m for m in table.index if m in ADARANKS]
    n_ada = sum(wins[m] for m in ada)
    sentence = (f"The highest bar of the {table.shape[1]} measures belongs to "
                + ", ".join(f"{m} in {k}" for m, k in wins.items() if k)
                + f". The paper's Fig. 2 has AdaRank.MAP or AdaRank.NDCG highest in every measure; here the "
                f"printed AdaRanks are highest in {n_ada} of {table.shape[1]}, so the figure "
                + ("matches" if n_ada == table.shape[1] else "does not match") + " the paper's picture.")
    return fig, sentence


def fig6(table: pd.DataFrame) -> tuple[plt.Figure, str]:
    """Fig. 6: error rates on d-n, d-p, p-n test pairs."""
    fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
    _bars(ax, table, list(table.columns))
    ax.set_ylabel("error rate on test pairs")
    plots.legend_outside(ax, fontsize=8)
    base = table.loc[["Ranking SVM", "RankBoost"], ["d-n", "d-p"]].min()
    fewer = [(a, k) for a in ADARANKS for k in ("d-n", "d-p") if table.loc[a, k] < base[k]]
    sentence = (f"AdaRank has fewer errors than both Ranking SVM and RankBoost in {len(fewer)} of the 4 "
                "(AdaRank, d-n / d-p) bars; the paper's Fig. 6 shows fewer in all 4, so this "
                + ("matches" if len(fewer) == 4 else "does not match") + " it.")
    return fig, sentence


def fig7(counts: pd.Series) -> tuple[plt.Figure, str]:
    """Fig. 7: training queries of trial 1 by number of document pairs."""
    fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
    ax.bar(np.arange(len(counts)), counts.to_numpy(), color="#7F7F7F")
    ax.set_xticks(np.arange(len(counts)), list(counts.index))
    ax.set_xlabel("number of document pairs")
    ax.set_ylabel("training queries")
    big = counts.idxmax()
    sentence = (f"Most training queries ({int(counts.max())} of {int(counts.sum())}) fall in group {big}; "
                f"{int((counts > 0).sum())} of the {len(counts)} groups are occupied, so the number of pairs "
                "varies from query to query, as in the paper's Fig. 7.")
    return fig, sentence


def fig8(table: pd.DataFrame, overall: float) -> tuple[plt.Figure, str]:
    """Fig. 8: mean test MAP difference AdaRank.MAP - RankBoost per query group."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    vals = table["MAP difference"].to_numpy(dtype=float)
    xs = np.arange(len(vals))
    ax.bar(xs, np.nan_to_num(vals), color=plots.algo_style("AdaRank.MAP")["color"])
    ax.set_xticks(xs, [f"{g}\n(n={int(n)})" for g, n in zip(table.index, table["test queries"])])
    ax.axhline(0.0, color="k", lw=0.8)
    ax.axhline(overall, color="k", lw=1, ls="--", label="mean over all test queries")
    ax.set_ylabel("MAP(AdaRank.MAP) - MAP(RankBoost)")
    plots.legend_outside(ax, fontsize=8)
    few = table.iloc[:3]["MAP difference"].dropna()
    sentence = ("The bars of the groups with fewer than 3,000 pairs are "
                + ", ".join(f"{v:+.3f}" for v in few) + "; the mean over all test queries is "
                                                        f"{overall:+.3f}. "
                "The paper's Fig. 8 has AdaRank.MAP above RankBoost in these groups; here "
                + ("it is" if (few > 0).all() else "it is not") + " above in all of them.")
    return fig, sentence


def fig910(tab: pd.DataFrame, metric: str) -> tuple[plt.Figure, str]:
    """Fig. 9 / 10: training measure per trial when trained with MAP or NDCG@5."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    _bars(ax, tab.T, [str(t) for t in tab.index])
    ax.set_xlabel("trial")
    ax.set_ylabel(f"training {metric.upper()}")
    plots.legend_outside(ax, fontsize=8)
    own = "AdaRank.MAP" if metric == "map" else "AdaRank.NDCG"
    other = next(m for m in tab.columns if m != own)
    k = int((tab[own] > tab[other]).sum())
    sentence = (f"{own}, trained with the measure shown, is higher in {k} of {len(tab)} trials; the paper's "
                "figure has it higher in every trial, so this "
                + ("matches" if k == len(tab) else "does not match")
                + " it.")
    return fig, sentence


def fig11(models: dict[str, Any]) -> tuple[plt.Figure, str]:
    """Fig. 11: training MAP per round with Theorem 1's bound (left) and the bound's factor (right)."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    parts = []
    for label, model in models.items():
        h = model.history_
        st = plots.algo_style("AdaRank.MAP" + (" (continuing)" if "continuing" in label else ""))
        ax.plot(h.index, h["train_map"], color=st["color"], label=f"training MAP, {label}")
        ax.plot(h.index, h["valid_map"], color=st["color"], ls="--", label=f"validation MAP, {label}")
        ax.plot(h.index, h["bound"].clip(lower=-0.25), color=st["color"], ls=":", label="Theorem 1 bound, "
                                                                                        f"{label}")
        ax2.plot(h.index, h["bound_factor"], color=st["color"], label=label)
        tm = h["train_map"]
        parts.append(f"{label}: training MAP {tm.iloc[0]:.3f} after round 1, highest {tm.max():.3f} at round "
                     f"{int(tm.idxmax())}, {int((tm.diff() > 0).sum())} of {len(tm) - 1} rounds raise it")
    ax.set_ylim(-0.27, None)
    ax.set_xlabel("round t")
    ax.set_ylabel("MAP")
    ax.set_title("MAP per round and the Theorem 1 bound (clipped at -0.25)", fontsize=9)
    ax2.axhline(1.0, color="k", lw=1)
    ax2.set_yscale("log")
    plain = mticker.FuncFormatter(lambda v, _: f"{v:g}")  # 1.2, not 1.2 x 10^0
    ax2.yaxis.set_major_formatter(plain)
    ax2.yaxis.set_minor_formatter(plain)
    ax2.set_xlabel("round t")
    ax2.set_ylabel(r"$e^{-\delta^t_{\min}}\sqrt{1-\varphi(t)^2}$")
    ax2.set_title("Theorem 1's factor per round (progress guaranteed below 1)", fontsize=9)
    plots.legend_outside(ax2, fontsize=7)
    h, lab = ax.get_legend_handles_labels()
    ax.legend(h, lab, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    sentence = ("; ".join(parts) + ". The paper's Fig. 11 rises steadily to a peak; a curve that stays flat "
                "after its first rounds does not.")
    return fig, sentence


def record_protocol(res: ProtocolResult, fig2_tables: dict[str, pd.DataFrame], fig6_t: pd.DataFrame,
                    fig7_c: pd.Series, fig8_t: pd.DataFrame, fig910_t: pd.DataFrame) -> None:
    """Record the protocol's tables (experimental numbers; counts exact)."""
    def rec(name: str, value: Any, tol: float = EXPERIMENTAL, kind: str = "experimental") -> None:
        results.record(NB, name, value, tol=tol, kind=kind)

    for name, table in fig2_tables.items():
        slug = name.lower().replace(" ", "_")
        for method in table.index:
            rec(f"fig2_{slug}_{method}", {m: float(v) for m, v in table.loc[method].items()})
    for method, row in fig6_t.iterrows():
        rec(f"fig6_{method}", {k: float(v) for k, v in row.items()})
    rec("fig7_counts", fig7_c.tolist(), tol=0, kind="exact")
    rec("fig7_n_train_queries", int(res.folds[0].train.n_queries), tol=0, kind="exact")
    rec("fig8_mean_diff", [None if np.isnan(v) else float(v) for v in fig8_t["MAP difference"]])
    rec("fig8_test_queries", fig8_t["test queries"].tolist(), tol=0, kind="exact")
    for (metric, method) in fig910_t.columns:
        rec(f"fig910_{method}_train_{metric}", fig910_t[(metric, method)].tolist())
    for method, g in res.rounds.groupby("method"):
        if method.startswith("AdaRank") and "[" not in method:
            rec(f"rounds_{method}", g["T"].tolist(), tol=0, kind="exact")


def first_rounds(res: ProtocolResult) -> pd.DataFrame:
    """Per AdaRank fit of the printed and continuing variants: rounds kept, features chosen (1-based),
    and whether the first is the data's BM25 column."""
    bm25 = res.experiment.bm25
    rows = []
    for fold, name, model in res.models:
        if "[" in name:
            continue
        feats = model.history_["feature"].to_numpy()[: model.n_iter_]
        rows.append({"fold": fold, "method": name, "rounds kept": int(model.n_iter_),
                     "first feature": int(feats[0]) + 1 if len(feats) else None,
                     "first is BM25": bool(len(feats) and feats[0] == bm25),
                     "distinct features": len(set(feats.tolist()))})
    return pd.DataFrame(rows)


def same_as_bm25(res: ProtocolResult, method: str = "AdaRank.MAP") -> tuple[int, int]:
    """(test query evaluations where ``method``'s MAP equals BM25's to 1e-12, all test query evaluations):
    every query once per repetition, so the two rankers are compared where they were both tested."""
    pq = res.per_query[(res.per_query["split"] == "test") & (res.per_query["metric"] == "map")]
    v = pq.pivot_table(index=["fold", "query"], columns="method", values="value")
    return int((v[method] - v["BM25"]).abs().le(1e-12).sum()), len(v)


def bm25_phrase(fr: pd.DataFrame, res: ProtocolResult) -> str:
    """Whether the printed AdaRank.MAP is BM25 on this data, in words rendered from `first_rounds`."""
    m = fr[fr["method"] == "AdaRank.MAP"]
    k, n = int(m["first is BM25"].sum()), len(m)
    same, total = same_as_bm25(res)
    if k == n:
        head = f"AdaRank.MAP as printed is BM25 here: its first round picks the BM25 column in all {n} folds"
    elif 2 * k > n:
        head = (f"AdaRank.MAP as printed is mostly BM25 here: its first round picks the BM25 column in "
                f"{k} of {n} folds")
    else:
        top = int(m["first feature"].mode().iloc[0])
        head = (f"AdaRank.MAP as printed is not BM25 here: its first round picks the BM25 column in {k} of "
                f"{n} "
                f"folds and feature {top} (1-based) in {int((m['first feature'] == top).sum())}")
    return (f"{head}; it keeps {m['rounds kept'].min()}-{m['rounds kept'].max()} rounds, and its test MAP "
            f"equals BM25's on {same} of {total} test query evaluations")


def bm25_sentence(fr: pd.DataFrame, res: ProtocolResult) -> str:
    """What the printed AdaRank.MAP picks, rendered from `first_rounds`."""
    e = res.experiment
    m = fr[fr["method"] == "AdaRank.MAP"]
    c = fr[fr["method"] == "AdaRank.MAP (continuing)"]
    col = e.data.feature_names[e.bm25] if e.data.feature_names is not None else f"f{e.bm25 + 1}"
    same, total = same_as_bm25(res)
    return (f"**What the printed algorithm picks.** {bm25_phrase(fr, res)} (the BM25 column is feature "
            f"{e.bm25 + 1}, `{col}`; at most {m['distinct features'].max()} distinct features per fold). "
            + ("Its comparisons with BM25 therefore compare a ranker with itself on many queries. "
               if 2 * same > total else "")
            + f"The continuing variant keeps {c['rounds kept'].min()}-{c['rounds kept'].max()} rounds and up "
              "to "
            f"{c['distinct features'].max()} distinct features.")


__all__ = ["bm25_phrase", "bm25_sentence", "fig11", "fig2", "fig6", "fig7", "fig8", "fig910", "first_rounds",
           "record_protocol", "same_as_bm25"]
