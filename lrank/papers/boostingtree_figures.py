"""BoostingTree (Kocsis, György, Bán 2013): the figures and tables of notebook ``03_boostingtree``.

Every algorithm is drawn with `lrank.plots.algo_style` (its colour and marker across the book), legends sit
outside the data, and each figure returns with one generated sentence saying what to see (rendered from
the numbers, never typed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lrank.plots import algo_style, legend_outside

__all__ = ["bold_markdown", "fig8", "fig9", "fig10", "fig11", "fig12", "table3_by_fold"]


def bold_markdown(df: pd.DataFrame) -> str:
    """A Table 2 frame (`lrank.papers.boostingtree.table2_frame`, selected cells as ``**n**``) as Markdown, so
    the selected cells render bold instead of showing their asterisks."""
    return df.to_markdown(index=False)


def table3_by_fold(full_len: pd.DataFrame, algos: Sequence[str], n_split: int = 5) -> pd.DataFrame:
    """Test MeanNDCG per fold position (1..``n_split``, averaged over the fold seeds) and its average."""
    d = full_len.assign(split=(full_len["fold"] - 1) % n_split + 1)
    t = d.groupby(["algorithm", "split"])["mean_ndcg"].mean().unstack("split").reindex(list(algos))
    t.columns = [f"Fold{c}" for c in t.columns]
    t["average"] = t.mean(axis=1)
    return t


def _int_ticks(ax: plt.Axes, values: Sequence[float]) -> None:
    """Log x axis ticked at the maximum lengths that were run, labelled as integers."""
    vals = [int(v) for v in values]
    ax.set_xscale("log")
    ax.set_xticks(vals, [str(v) for v in vals])
    ax.minorticks_off()


def _row_legend(axes: Sequence[plt.Axes]) -> None:
    """One legend for a row of panels, outside the last one, with every panel's lines."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    axes[-1].legend(
        handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=7
    )


def _base_of(name: str) -> str:
    return name.split("(")[-1].rstrip(")") if "(" in name else name


def fig8(
    full_len: pd.DataFrame, algos: Sequence[str], ks: Sequence[str]
) -> tuple[plt.Figure, pd.DataFrame, str]:
    """Fig. 8: mean test NDCG@k (k = 1..10) per algorithm; returns the figure, the values and a sentence."""
    ndcgk = full_len.groupby("algorithm")[list(ks)].mean().reindex(list(algos))
    fig, ax = plt.subplots(figsize=(6.4, 3.8), constrained_layout=True)
    for name, row in ndcgk.iterrows():
        ax.plot(
            range(1, len(ks) + 1),
            row.values,
            ms=4,
            label=name,
            ls="-" if "Boosting" in name else ("--" if "EXP3" in name else ":"),
            **algo_style(name),
        )
    ax.set(xlabel="k", ylabel="test NDCG@k (JK discount)", xticks=range(1, len(ks) + 1))
    legend_outside(ax, fontsize=8)
    top = ndcgk.mean(axis=1)
    sentence = (
        f"Averaged over k, {top.idxmax()} is highest ({top.max():.4f}) and {top.idxmin()} lowest "
        f"({top.min():.4f}); the paper's Fig. 8 has the BoostingTree curves on top and EXP3.P(LambdaMART) "
        f"at the bottom, which {'matches' if top.idxmin() == 'EXP3.P(LambdaMART)' else 'does not match'} "
        "ours at the bottom."
    )
    return fig, ndcgk, sentence


def fig9(curve: pd.DataFrame, short_max: int) -> tuple[plt.Figure, str]:
    """Fig. 9: test MeanNDCG against the maximum number of stumps, one panel per base algorithm."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.6), sharey=True, constrained_layout=True)
    for ax, base in zip(axes, ("LambdaMART", "NDCGBoost")):
        for name in curve.columns:
            if _base_of(name) == base:
                ax.plot(curve.index, curve[name], ms=4, label=name, **algo_style(name))
        ax.axvspan(curve.index.min(), short_max, color="0.92", zorder=0)
        ax.set(xlabel="maximum number of stumps L", title=base)
        _int_ticks(ax, curve.index)
    _row_legend(axes)
    axes[0].set_ylabel("test MeanNDCG")
    short = curve[curve.index <= short_max].mean()
    lead = [
        b
        for b in ("LambdaMART", "NDCGBoost")
        if short[f"BoostingTree({b})"] > max(short[b], short[f"EXP3.P({b})"])
    ]
    sentence = (
        f"In the shaded part (L <= {short_max}) BoostingTree's mean is above both other variants for "
        f"{', '.join(lead) if lead else 'neither base'}; the paper's Fig. 9 shows it ahead for both bases "
        "below 100 stumps. The tests are in the claims below."
    )
    return fig, sentence


def _style(name: str) -> dict:
    """The book's style of the algorithm, ignoring a leaf-count suffix ("NDCGBoost-16" draws as NDCGBoost)."""
    return algo_style(re.sub(r"-\d+", "", name))


def _curve_panels(ax: plt.Axes, curve: pd.DataFrame, unlimited: pd.Series, names: Sequence[str]) -> None:
    for name in names:
        st = _style(name)
        ax.plot(curve.index, curve[name], ms=4, label=name, **st)
        ax.axhline(unlimited[name], color=st["color"], ls=":", lw=1.2)


def fig10(yperq: pd.DataFrame, bases: Sequence[str]) -> tuple[plt.Figure, pd.DataFrame, str]:
    """Fig. 10: test NDCG@10 against the maximum number of trees; each unlimited model is a dotted line."""
    lim = yperq[yperq["max_length"].notna()].groupby(["max_length", "algorithm"])["ndcg@10"].mean().unstack()
    unl = yperq[yperq["max_length"].isna()].groupby("algorithm")["ndcg@10"].mean()
    fig, axes = plt.subplots(
        1, len(bases), figsize=(5.2 * len(bases), 3.6), sharey=True, constrained_layout=True
    )
    for ax, base in zip(np.atleast_1d(axes), bases):
        _curve_panels(ax, lim, unl, [base, f"EXP3.P({base})", f"BoostingTree({base})"])
        ax.set(xlabel="maximum number of trees L", title=base)
        _int_ticks(ax, lim.index)
    _row_legend(list(np.atleast_1d(axes)))
    np.atleast_1d(axes)[0].set_ylabel("test NDCG@10 (log2)")
    gaps = {b: float(lim[f"BoostingTree({b})"].iloc[0] - lim[b].iloc[0]) for b in bases}
    sentence = (
        "Dotted lines: the unlimited models. At L = 1 BoostingTree minus the standard variant is "
        + ", ".join(f"{g:+.4f} ({b})" for b, g in gaps.items())
        + "; the paper's Fig. 10 has BoostingTree clearly ahead for small models."
    )
    table = pd.concat([lim, unl.to_frame("unlimited").T])
    return fig, table, sentence


def fig11(cper: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame, str]:
    """Fig. 11: chess, test NDCG@10 against the maximum number of trees (rows: sets, columns: bases)."""
    lim = cper[cper["max_length"].notna()].groupby(["set", "max_length", "algorithm"])["ndcg@10"].mean()
    unl = cper[cper["max_length"].isna()].groupby(["set", "algorithm"])["ndcg@10"].mean()
    sets = list(dict.fromkeys(cper["set"]))
    fig, axes = plt.subplots(
        len(sets), 2, figsize=(10, 3.0 * len(sets)), sharey="row", sharex=True, constrained_layout=True
    )
    for i, sname in enumerate(sets):
        for j, base in enumerate(("LambdaMART", "NDCGBoost")):
            ax = axes[i, j]
            _curve_panels(
                ax,
                lim.loc[sname].unstack(),
                unl.loc[sname],
                [base, f"EXP3.P({base})", f"BoostingTree({base})"],
            )
            ax.set(title=f"{sname}, {base}")
            _int_ticks(ax, lim.loc[sname].index.get_level_values("max_length").unique())
            if i == len(sets) - 1:
                ax.set_xlabel("maximum number of trees L")
        _row_legend(axes[i])
        axes[i, 0].set_ylabel("test NDCG@10")
    short = lim[lim.index.get_level_values("max_length") <= 5].groupby("algorithm").mean()
    gap = {b: float(short[b] - short[f"EXP3.P({b})"]) for b in ("LambdaMART", "NDCGBoost")}
    sentence = (
        "Dotted lines: the unlimited models. For at most 5 trees the standard variant is ahead of EXP3.P by "
        + ", ".join(f"{g:+.4f} ({b})" for b, g in gap.items())
        + " (both sets); the paper's Fig. 11 shows EXP3.P far below, most of all for small models."
    )
    table = lim.unstack("max_length")
    table["unlimited"] = unl
    return fig, table, sentence


def fig12(H: pd.DataFrame, n_grid: int = 40) -> tuple[plt.Figure, str]:
    """Fig. 12: round length and best leaf-model length against t_r, per data set the mean over its
    BoostingTree fits with their min / max (as the paper draws it), with sqrt(t_r), Eq. (3) and
    t_r / ln t_r."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    t_max = float(H["t"].max())
    groups = list(dict.fromkeys(H["data"]))
    colours = ("#0072B2", "#D55E00", "#009E73")
    for k, g in enumerate(groups):
        runs = [h for _, h in H[H["data"] == g].groupby(["run", "fold"])]
        t_lo, t_hi = max(2.0, max(h["t"].min() for h in runs)), min(h["t"].max() for h in runs)
        grid = np.geomspace(t_lo, t_hi, n_grid)
        for ax, col in zip(axes, ("round_length", "best_length")):
            ys = np.array([np.interp(grid, h["t"], h[col]) for h in runs])
            ax.plot(grid, ys.mean(0), color=colours[k % 3], label=f"{g} (mean of {len(runs)} fits)")
            ax.fill_between(
                grid, ys.min(0), ys.max(0), color=colours[k % 3], alpha=0.2, lw=0, label=f"{g} min-max"
            )
    tt = np.geomspace(2, t_max, 100)
    axes[0].plot(tt, np.sqrt(tt), "k--", label="sqrt(t_r)")
    axes[0].plot(tt, np.log(tt), "k:", label="ln t_r")
    axes[1].plot(tt, (np.sqrt(2 * tt + 7) - 1) / 2, "k--", label="Eq. (3) bound")
    axes[1].plot(tt, tt / np.log(tt), "k:", label="t_r / ln t_r")
    axes[0].set(xlabel="generated models $t_r$", ylabel="round length", xscale="log", yscale="log")
    axes[1].set(
        xlabel="generated models $t_r$", ylabel="best leaf-model length $l_{I_r}$", xscale="log", yscale="log"
    )
    _row_legend(axes)
    fin = H.groupby(["run", "fold"]).tail(1)
    ratio = float((fin["best_length"] / np.sqrt(fin["t"])).mean())
    sentence = (
        f"At the last round l_I / sqrt(t_r) averages {ratio:.2f} over the {len(fin)} fits: the best model "
        f"grows {'faster' if ratio > 1 else 'slower'} than sqrt(t_r), as the paper's Fig. 12 reports "
        "(its t_r / ln t_r is an asymptotic rate our short runs cannot show)."
    )
    return fig, sentence
