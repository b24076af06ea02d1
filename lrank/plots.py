"""One figure style, and the two ways an artifact leaves a notebook: `save_figure` and `save_table`.

Every artifact carries a caption: which paper artifact it regenerates, the data it used (real /
substitute / synthetic), the profile, and every deviation from the paper's protocol. The caption is
written beside the artifact (``<name>.caption.txt``) and into the Markdown table.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from lrank.paths import figures_dir  # noqa: E402

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


def use_style() -> None:
    """Apply lrank's figure style to matplotlib's global settings."""
    plt.rcParams.update(STYLE)


def _check(name: str, caption: str) -> None:
    if not name or "/" in name or name.endswith((".png", ".pdf", ".csv", ".md")):
        raise ValueError(f"name must be a bare artifact name like 'rankboost_fig8', got {name!r}")
    if not caption or not caption.strip():
        raise ValueError("every artifact needs a caption (artifact, data used, profile, deviations)")


def save_figure(fig: plt.Figure, name: str, caption: str, profile: str | None = None) -> Path:
    """Save ``fig`` as ``<figures>/<name>.png`` and ``.pdf`` with deterministic metadata.

    Returns the PNG path. ``caption`` is written to ``<name>.caption.txt``.
    """
    _check(name, caption)
    d = figures_dir(profile)
    png = d / f"{name}.png"
    fig.savefig(png, metadata={"Software": None}, bbox_inches="tight")
    fig.savefig(d / f"{name}.pdf", metadata={"CreationDate": None, "ModDate": None, "Producer": None,
                                             "Creator": None}, bbox_inches="tight")
    (d / f"{name}.caption.txt").write_text(caption.strip() + "\n", encoding="utf-8")
    return png


def save_table(df: pd.DataFrame, name: str, caption: str, profile: str | None = None,
               floatfmt: str = ".4f", index: bool = True) -> Path:
    """Save ``df`` as ``<figures>/<name>.csv`` and ``<name>.md`` (caption line, then the table)."""
    _check(name, caption)
    d = figures_dir(profile)
    csv = d / f"{name}.csv"
    df.to_csv(csv, index=index, float_format="%.10g")
    md = df.to_markdown(index=index, floatfmt=floatfmt)
    (d / f"{name}.md").write_text(f"{caption.strip()}\n\n{md}\n", encoding="utf-8")
    (d / f"{name}.caption.txt").write_text(caption.strip() + "\n", encoding="utf-8")
    return csv
