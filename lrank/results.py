"""Checked numbers of each notebook, recorded as JSON that tests read after the notebook ran.

``record("05_rankboost_plus", "prop1_R1_h1", 16/19, paper=16/19, tol=1e-9)`` adds an entry to
``<figures>/results/05_rankboost_plus.json``. A paper's printed value is stored only as ``paper``;
``tol`` is the absolute tolerance of the golden comparison (``tests/golden/<notebook>.json``, written
only by ``python -m lrank accept``): exact for ints, bools and strings, ``1e-9`` for floats unless given.

Each results file also holds a ``_meta`` entry (not a recorded number): the sha256 of the package
sources (``lrank/``) and of the notebook's cells (sources only, so storing outputs does not change it)
that wrote it, and the artifacts the notebook saved (``save_figure`` / ``save_table``). Tests refuse
results whose hashes differ from the current code (:func:`freshness`).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from lrank.paths import notebooks_dir, results_dir

META = "_meta"
DEFAULT_FLOAT_TOL = 1e-9
_current: list[str] = []  # the notebook whose results were last reset or recorded (for the artifact list)
_lrank_hash: list[str] = []


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return _plain(v.item())
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def lrank_sha256() -> str:
    """sha256 over the package sources (every ``.py`` and ``.json`` under ``lrank/``, path and bytes)."""
    if not _lrank_hash:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".json") and "__pycache__" not in p.parts and p.is_file():
                h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
        _lrank_hash.append(h.hexdigest())
    return _lrank_hash[0]


def notebook_sha256(notebook: str) -> str | None:
    """sha256 of a notebook's cell types and sources.

    Outputs, metadata and an injected-parameters cell do not count, so storing the notebook cleaned
    after its run (:func:`lrank.site.clean_notebook`) keeps the hash.

    ``None`` when ``notebooks/<notebook>.ipynb`` does not exist (e.g. records made outside a notebook).
    """
    path = notebooks_dir() / f"{notebook}.ipynb"
    if not path.is_file():
        return None
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    src = [[c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"]]
           for c in cells  # papermill's injected cell is run noise that storing removes (lrank.site)
           if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]
    return hashlib.sha256(json.dumps(src, ensure_ascii=False).encode()).hexdigest()


def results_path(notebook: str, profile: str | None = None) -> Path:
    """``<figures>/results/<notebook>.json`` (``LRANK_OUTPUT_DIR`` moves it)."""
    return results_dir(profile) / f"{notebook}.json"


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _meta(data: dict, notebook: str) -> dict:
    meta = data.setdefault(META, {})
    if "lrank_sha256" not in meta:  # hashed once per run (at reset), not at every record
        meta["lrank_sha256"] = lrank_sha256()
    if "notebook_sha256" not in meta:
        meta["notebook_sha256"] = notebook_sha256(notebook)
    meta.setdefault("artifacts", {"figures": [], "tables": []})
    return meta


def _default_tol(value: Any) -> float:
    if isinstance(value, float):
        return DEFAULT_FLOAT_TOL
    if isinstance(value, (list, dict)):
        leaves = _leaves(value)
        return DEFAULT_FLOAT_TOL if any(isinstance(x, float) for x in leaves) else 0
    return 0


def _leaves(v: Any) -> list:
    if isinstance(v, dict):
        return [x for k in v for x in _leaves(v[k])]
    if isinstance(v, list):
        return [x for item in v for x in _leaves(item)]
    return [v]


def record(notebook: str, name: str, value: Any, paper: Any = None, profile: str | None = None,
           tol: float | None = None, **extra: Any) -> Any:
    """Record ``value`` (and the paper's printed value, if any) under ``name``; returns ``value``.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``.
    name : str
        The number's name; unique within the notebook (a second record replaces the first).
    value : Any
        What the code computed: a number, bool, string, or lists/dicts of them (NumPy converted).
    paper : Any, optional
        The paper's printed value, stored as ``paper`` (never compared by the golden test).
    tol : float, optional
        Absolute tolerance of the golden comparison for every number in ``value`` and ``extra``;
        default 0 (exact) for ints, bools and strings, ``1e-9`` when ``value`` holds a float.
    **extra
        More fields stored with the entry (``n=``, ``p_value=``, ...); pinned by the golden test too.
    """
    if not name or name == META:
        raise ValueError(f"name must be a non-empty string other than {META!r}, got {name!r}")
    if tol is not None and (not isinstance(tol, (int, float)) or not tol >= 0):
        raise ValueError(f"tol must be a non-negative number, got {tol!r}")
    path = results_path(notebook, profile)
    data = _read(path)
    _meta(data, notebook)
    _current[:] = [notebook]
    entry = {"value": _plain(value)}
    if paper is not None:
        entry["paper"] = _plain(paper)
    entry.update({k: _plain(v) for k, v in extra.items()})
    entry["tol"] = float(tol) if tol is not None else _default_tol(entry["value"])
    data[name] = entry
    _write(path, data)
    return value


def note_artifact(kind: str, name: str, profile: str | None = None) -> None:
    """Add a saved artifact (``kind`` "figures" or "tables") to the current notebook's ``_meta``.

    Called by :func:`lrank.plots.save_figure` / ``save_table``; does nothing before a notebook has
    called :func:`reset` or :func:`record` in this process.
    """
    if not _current:
        return
    path = results_path(_current[0], profile)
    data = _read(path)
    names = _meta(data, _current[0])["artifacts"].setdefault(kind, [])
    if name not in names:
        names.append(name)
        _write(path, data)


def load(notebook: str, profile: str | None = None) -> dict:
    """All recorded entries of a notebook (``{}`` when it has not run); ``_meta`` left out."""
    data = _read(results_path(notebook, profile))
    data.pop(META, None)
    return data


def load_meta(notebook: str, profile: str | None = None) -> dict:
    """The ``_meta`` entry of a notebook's results (hashes, artifacts); ``{}`` when absent."""
    return _read(results_path(notebook, profile)).get(META, {})


def freshness(notebook: str, profile: str | None = None) -> str | None:
    """``None`` when the notebook's results exist and come from the current code and notebook.

    Otherwise a sentence saying what is wrong (absent, written by other package sources, or by
    another version of the notebook).
    """
    path = results_path(notebook, profile)
    if not path.is_file():
        return f"no results for {notebook} at {path}"
    meta = _read(path).get(META, {})
    if meta.get("lrank_sha256") != lrank_sha256():
        return f"{path} was written by other lrank sources (stale): rerun the notebook"
    if meta.get("notebook_sha256") != notebook_sha256(notebook):
        return f"{path} was written by another version of notebooks/{notebook}.ipynb (stale)"
    return None


def reset(notebook: str, profile: str | None = None) -> None:
    """Forget a notebook's recorded numbers (its setup cell calls this, so a rerun starts clean).

    Also starts the notebook's ``_meta`` (hashes of the current code and notebook, no artifacts).
    """
    path = results_path(notebook, profile)
    if path.is_file():
        path.unlink()
    data: dict = {}
    _meta(data, notebook)
    _write(path, data)
    _current[:] = [notebook]


def _compare(old: Any, new: Any, tol: float) -> bool:
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_compare(old[k], new[k], tol) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_compare(a, b, tol) for a, b in zip(old, new))
    if isinstance(old, bool) or isinstance(new, bool):
        return old is new
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return old == new or abs(old - new) <= tol
    return type(old) is type(new) and old == new


def golden_entry(entry: dict) -> dict:
    """What a golden file pins of a results entry: everything but the paper's value."""
    return {k: v for k, v in entry.items() if k != "paper"}


def compare_to_golden(fresh: dict, golden: dict) -> list[str]:
    """Differences between fresh results and a golden file, one sentence each (empty: they agree).

    Every field of every entry (``value`` and the extras) is compared within the golden's ``tol``;
    a name present on one side only is a difference.
    """
    out = []
    for name in sorted(set(fresh) | set(golden)):
        if name not in golden:
            out.append(f"{name}: recorded but not in the golden file (accept it: python -m lrank accept)")
            continue
        if name not in fresh:
            out.append(f"{name}: in the golden file but not recorded by this run")
            continue
        g, f = golden[name], golden_entry(fresh[name])
        tol = float(g.get("tol", 0) or 0)
        for key in sorted(set(g) | set(f)):
            if key == "tol":
                continue
            if key not in g or key not in f or not _compare(g[key], f[key], tol):
                out.append(f"{name}.{key}: golden {_short(g.get(key))} -> this run {_short(f.get(key))}"
                           f" (tol {tol:g})")
    return out


def _short(v: Any, n: int = 120) -> str:
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= n else s[: n - 3] + "..."
