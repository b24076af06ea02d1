"""Checked numbers of each notebook, recorded as JSON that tests read after the notebook ran.

``record("05_rankboost_plus", "prop1_R1_h1", 16/19, paper=16/19, tol=1e-9)`` adds an entry to
``<figures>/results/05_rankboost_plus.json``. A paper's printed value is stored only as ``paper``;
``tol`` is the absolute tolerance the notebook asks for: exact for ints, bools and strings, ``1e-9``
for floats unless given.

The precision policy (what the golden files ``tests/golden/<notebook>.json`` pin; they are written only
by ``python -m lrank accept``, which applies it, see :func:`policy_tol`):

* **exact** numbers (``record(..., kind="exact")``; by default every value without a float: ints,
  bools, strings) do not depend on the CPU: a worked example, a count, a verdict, a sympy identity. They
  are pinned at the tolerance they were recorded with (``1e-9`` for floats, ``0`` otherwise).
* **experimental** numbers (by default every value holding a float, unless recorded as exact) come out
  of long floating-point computations whose last bits differ between CPUs. ``python -m lrank.dev
  spread`` reruns every notebook under emulated CPUs (numpy without its AVX-512 or AVX2 paths, numba
  code for other x86-64 CPUs) and stores how far each name moved in ``tests/golden/spread/``; ``accept``
  pins each at ``max(recorded tol, TOL_FLOOR, TOL_MARGIN * measured spread)`` and writes where that
  came from into the entry (``tol_basis``). An int, bool or string that differs between CPUs gets no
  tolerance: ``spread`` reports it, and the code must make that choice CPU-independent.

Each results file also holds a ``_meta`` entry (not a recorded number): the sha256 of the package
sources (``lrank/``) and of the notebook's cells (sources only, so storing outputs does not change it)
that wrote it, the artifacts the notebook saved (``save_figure`` / ``save_table``), and where the run
was made (:func:`written_on`: the CPU numba compiled for, numpy's SIMD paths in use, the versions), which
is what to compare first when a number moves between machines. Tests refuse results whose hashes differ
from the current code (:func:`freshness`).
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


#: package files that compute no recorded number: the test runner and the book (its Sphinx configuration
#: and builder, which format stored notebooks and never run them); editing them leaves results fresh
_NOT_HASHED = ("dev.py", "site.py")
_NOT_HASHED_DIRS = ("_book",)


def hashed_sources() -> list[Path]:
    """The files :func:`lrank_sha256` covers: every ``.py`` and ``.json`` under ``lrank/`` but the test
    runner and the book builder (``dev.py``, ``site.py``, ``_book/``)."""
    root = Path(__file__).resolve().parent
    return [p for p in sorted(root.rglob("*"))
            if p.suffix in (".py", ".json") and "__pycache__" not in p.parts and p.is_file()
            and p.relative_to(root).as_posix() not in _NOT_HASHED
            and p.relative_to(root).parts[0] not in _NOT_HASHED_DIRS]


def lrank_sha256() -> str:
    """sha256 over the package sources (:func:`hashed_sources`, path and bytes)."""
    if not _lrank_hash:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for p in hashed_sources():
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
        _lrank_hash.append(h.hexdigest())
    return _lrank_hash[0]


def notebook_sha256(notebook: str) -> str | None:
    """sha256 of a notebook's cell types and sources.

    Outputs, metadata and an injected-parameters cell do not count, so storing the notebook cleaned
    after its run (:func:`lrank.site.clean_notebook`) keeps the hash.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``; the file read is ``notebooks/<notebook>.ipynb``.

    Returns
    -------
    str or None
        The hex digest; ``None`` when ``notebooks/<notebook>.ipynb`` does not exist (e.g. records made
        outside a notebook).
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
    """``<figures>/results/<notebook>.json`` (``LRANK_OUTPUT_DIR`` moves it).

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``.
    profile : str or None, default None
        The profile whose results these are (``"quick"``, ``"paper"`` or ``"rehearsal"``); None: the
        active one (``LRANK_PROFILE``, else ``"quick"``).

    Returns
    -------
    Path
        The results file; it need not exist, but its folder is created.
    """
    return results_dir(profile) / f"{notebook}.json"


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def written_on() -> dict[str, Any]:
    """Where this process computes: the CPU numba compiles for (``NUMBA_CPU_NAME`` when set, else the
    host's, as LLVM names it), numpy's dispatched SIMD targets that are on (``NPY_DISABLE_CPU_FEATURES``
    turns some off), the machine and the Python, numpy and numba versions. The last bits of long float
    computations depend on the first two (see ``tol_basis`` above)."""
    import platform
    import sys

    import llvmlite.binding as llvm
    import numba
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return {"numba_cpu": numba.config.CPU_NAME or llvm.get_host_cpu_name(),
            "numpy_simd": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)],
            "machine": platform.machine(), "python": sys.version.split()[0], "numpy": np.__version__,
            "numba": numba.__version__}


def _meta(data: dict, notebook: str) -> dict:
    meta = data.setdefault(META, {})
    if "lrank_sha256" not in meta:  # hashed once per run (at reset), not at every record
        meta["lrank_sha256"] = lrank_sha256()
    if "notebook_sha256" not in meta:
        meta["notebook_sha256"] = notebook_sha256(notebook)
    if "written_on" not in meta:
        meta["written_on"] = written_on()
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
           tol: float | None = None, kind: str | None = None, **extra: Any) -> Any:
    """Record ``value`` (and the paper's printed value, if any) under ``name``; returns ``value``.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``.
    name : str
        The number's name, not empty and not ``"_meta"``; unique within the notebook (a second record
        replaces the first).
    value : Any
        What the code computed: a number, bool, string, or lists/dicts of them (NumPy converted).
    paper : Any, optional
        The paper's printed value, stored as ``paper`` (never compared by the golden test).
    profile : str or None, default None
        The profile whose results file gets the entry (``"quick"``, ``"paper"`` or ``"rehearsal"``);
        None: the active one (``LRANK_PROFILE``, else ``"quick"``).
    tol : float, optional
        Absolute tolerance of the golden comparison for every number in ``value`` and ``extra``;
        default 0 (exact) for ints, bools and strings, ``1e-9`` when ``value`` holds a float. For an
        experimental number this is the smallest tolerance of its golden entry (module docstring).
    kind : {"exact", "experimental"}, optional
        What the number is (module docstring); by default ``"experimental"`` when ``value`` holds a
        float, else ``"exact"``. Stored with the entry when given.
    **extra : Any
        More fields stored with the entry (``n=``, ``p_value=``, ...); pinned by the golden test too.

    Returns
    -------
    Any
        ``value`` itself (not its stored JSON form), so a notebook can record a number where it computes it.
    """
    if not name or name == META:
        raise ValueError(f"name must be a non-empty string other than {META!r}, got {name!r}")
    if tol is not None and (not isinstance(tol, (int, float)) or not tol >= 0):
        raise ValueError(f"tol must be a non-negative number, got {tol!r}")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    path = results_path(notebook, profile)
    data = _read(path)
    _meta(data, notebook)
    _current[:] = [notebook]
    entry = {"value": _plain(value)}
    if paper is not None:
        entry["paper"] = _plain(paper)
    entry.update({k: _plain(v) for k, v in extra.items()})
    if kind is not None:
        entry["kind"] = kind
    entry["tol"] = float(tol) if tol is not None else _default_tol(entry["value"])
    data[name] = entry
    _write(path, data)
    return value


def note_artifact(kind: str, name: str, profile: str | None = None) -> None:
    """Add a saved artifact (``kind`` "figures" or "tables") to the current notebook's ``_meta``.

    Called by :func:`lrank.plots.save_figure` / ``save_table``; does nothing before a notebook has
    called :func:`reset` or :func:`record` in this process.

    Parameters
    ----------
    kind : {"figures", "tables"}
        The list of ``_meta["artifacts"]`` the name goes to (another string starts a list of that name).
    name : str
        The artifact's name as saved; a name already in the list is not added again.
    profile : str or None, default None
        The profile of the current notebook's results (``"quick"``, ``"paper"`` or ``"rehearsal"``);
        None: the active one (``LRANK_PROFILE``, else ``"quick"``).
    """
    if not _current:
        return
    path = results_path(_current[0], profile)
    data = _read(path)
    names = _meta(data, _current[0])["artifacts"].setdefault(kind, [])
    if name not in names:
        names.append(name)
        _write(path, data)


def note_overlaps(figure: str, found: list[str], profile: str | None = None) -> None:
    """Record the overprinted text of a saved figure (:func:`lrank.plots.overlaps`) in ``_meta``.

    ``_meta["overlaps"][figure]`` is the list (empty when the figure reads cleanly), so a test can
    tell a checked clean figure from one never checked. Does nothing before :func:`reset` or
    :func:`record` in this process, like :func:`note_artifact`.

    Parameters
    ----------
    figure : str
        The saved figure's name; a second call for it replaces the first list.
    found : list of str
        The overprinted texts found (each stored as ``str``); empty when the figure reads cleanly.
    profile : str or None, default None
        The profile of the current notebook's results (``"quick"``, ``"paper"`` or ``"rehearsal"``);
        None: the active one (``LRANK_PROFILE``, else ``"quick"``).
    """
    if not _current:
        return
    path = results_path(_current[0], profile)
    data = _read(path)
    _meta(data, _current[0]).setdefault("overlaps", {})[figure] = [str(x) for x in found]
    _write(path, data)


def load(notebook: str, profile: str | None = None) -> dict:
    """All recorded entries of a notebook (``{}`` when it has not run); ``_meta`` left out.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``.
    profile : str or None, default None
        The profile whose results these are (``"quick"``, ``"paper"`` or ``"rehearsal"``); None: the
        active one (``LRANK_PROFILE``, else ``"quick"``).

    Returns
    -------
    dict
        Name to entry: ``{"value": ..., "tol": ...}`` with ``paper``, ``kind`` and the extras when recorded.
    """
    data = _read(results_path(notebook, profile))
    data.pop(META, None)
    return data


def load_meta(notebook: str, profile: str | None = None) -> dict:
    """The ``_meta`` entry of a notebook's results (hashes, artifacts, `written_on`); ``{}`` when absent.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``.
    profile : str or None, default None
        The profile whose results these are (``"quick"``, ``"paper"`` or ``"rehearsal"``); None: the
        active one (``LRANK_PROFILE``, else ``"quick"``).

    Returns
    -------
    dict
        ``lrank_sha256``, ``notebook_sha256``, ``written_on``, ``artifacts`` (``{"figures": [...],
        "tables": [...]}``) and, once a figure was checked, ``overlaps``.
    """
    return _read(results_path(notebook, profile)).get(META, {})


def freshness(notebook: str, profile: str | None = None) -> str | None:
    """``None`` when the notebook's results exist and come from the current code and notebook.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``.
    profile : str or None, default None
        The profile whose results these are (``"quick"``, ``"paper"`` or ``"rehearsal"``); None: the
        active one (``LRANK_PROFILE``, else ``"quick"``).

    Returns
    -------
    str or None
        ``None`` when fresh, otherwise a sentence saying what is wrong (absent, written by other package
        sources, or by another version of the notebook).
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

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``; it becomes the current notebook of this process
        (:func:`note_artifact`).
    profile : str or None, default None
        The profile whose results these are (``"quick"``, ``"paper"`` or ``"rehearsal"``); None: the
        active one (``LRANK_PROFILE``, else ``"quick"``).
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
    """What a golden file pins of a results entry: everything but the paper's value (``accept`` then
    sets ``tol`` and ``tol_basis`` by :func:`policy_tol`).

    Parameters
    ----------
    entry : dict
        One recorded entry (a value of :func:`load`); not changed.

    Returns
    -------
    dict
        A shallow copy of ``entry`` without ``paper``.
    """
    return {k: v for k, v in entry.items() if k != "paper"}


def compare_to_golden(fresh: dict, golden: dict) -> list[str]:
    """Differences between fresh results and a golden file, one sentence each (empty: they agree).

    Every field of every entry (``value`` and the extras) is compared within the golden's ``tol``;
    a name present on one side only is a difference.

    Parameters
    ----------
    fresh : dict
        The entries of this run (:func:`load`), name to entry; their ``paper`` is ignored.
    golden : dict
        The golden file's entries (``tests/golden/<notebook>.json``), name to entry, each with its ``tol``
        (absolute; missing: 0) that applies to every field and number of the entry.

    Returns
    -------
    list of str
        One sentence per difference, by name and then field (empty when they agree).
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
            if key in ("tol", "tol_basis"):
                continue
            if key not in g or key not in f or not _compare(g[key], f[key], tol):
                out.append(f"{name}.{key}: golden {_short(g.get(key))} -> this run {_short(f.get(key))}"
                           f" (tol {tol:g})")
    return out


def _short(v: Any, n: int = 120) -> str:
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= n else s[: n - 3] + "..."


# ----------------------------------------------------------------------------------- precision policy
#: the kinds of recorded numbers (``record(..., kind=)``); see :func:`policy_tol`
KINDS = ("exact", "experimental")
#: the smallest tolerance of an experimental number (absolute): what a last-bit difference of a long
#: floating-point computation cannot reach (a value that moved under no emulated CPU is pinned this close)
TOL_FLOOR = 1e-9
#: the measured spread is multiplied by this: the emulated CPUs are a sample of the machines a reader has
#: (OpenBLAS and libm are not emulated); a tie flipped by another machine moves a mean by about as much
TOL_MARGIN = 10.0


def kind_of(entry: dict) -> str:
    """An entry's kind: as recorded (``kind=``), else ``"exact"`` when its value holds no float (ints,
    bools and strings compare exactly), else ``"experimental"``.

    Parameters
    ----------
    entry : dict
        A recorded or golden entry (``value`` and, when recorded with one, ``kind``).

    Returns
    -------
    str
        ``"exact"`` or ``"experimental"``.
    """
    if entry.get("kind") in KINDS:
        return entry["kind"]
    return "experimental" if any(isinstance(x, float) for x in _leaves(entry.get("value"))) else "exact"


def _fields(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k not in ("paper", "tol", "tol_basis")}


def _spread_of(values: list[Any]) -> tuple[float, bool]:
    """(largest max - min over the numeric leaves, whether a non-float leaf or the structure differs)."""
    first = values[0]
    if all(isinstance(v, dict) for v in values):
        if any(v.keys() != first.keys() for v in values):
            return 0.0, True
        parts = [_spread_of([v[k] for v in values]) for k in first]
        return max((p[0] for p in parts), default=0.0), any(p[1] for p in parts)
    if all(isinstance(v, list) for v in values):
        if any(len(v) != len(first) for v in values):
            return 0.0, True
        parts = [_spread_of([v[i] for v in values]) for i in range(len(first))]
        return max((p[0] for p in parts), default=0.0), any(p[1] for p in parts)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        # non-finite floats are stored as strings ("nan", "inf": _plain), so these are finite
        spread = float(max(values) - min(values))
        if all(isinstance(v, float) for v in values):
            return spread, False
        return spread, any(v != first for v in values)  # an int that moved: a count changed
    return 0.0, any(type(v) is not type(first) or v != first for v in values)


def measure_spread(runs: dict[str, dict]) -> dict[str, dict]:
    """Per recorded name, how far one notebook's numbers move between CPU configurations.

    Parameters
    ----------
    runs : dict of str to dict
        A configuration name to that run's entries (:func:`load`), at least one; the first is the
        reference.

    Returns
    -------
    dict
        ``{name: {"spread": S, "moved_in": [...], "discrete_in": [...]}}`` for every name of any run:
        ``S`` the largest max - min over the configurations of any number in the entry (value and
        extras; an int that moved counts too), ``moved_in`` the configurations where the entry differs
        from the reference at all, ``discrete_in`` those where an int, bool or string, a list's length or
        a dict's keys differ (no tolerance covers those). A name missing from some runs counts as
        discrete there.
    """
    configs = list(runs)
    ref = configs[0]
    out = {}
    for name in sorted(set().union(*(set(r) for r in runs.values()))):
        have = [c for c in configs if name in runs[c]]
        entries = [_fields(runs[c][name]) for c in have]
        spread, _ = _spread_of(entries) if len(entries) > 1 else (0.0, False)
        moved, discrete = [], [c for c in configs if name not in runs[c]]
        if name in runs[ref]:
            base = _fields(runs[ref][name])
            for c in have[1:] if have[0] == ref else have:
                if c == ref:
                    continue
                s, d = _spread_of([base, _fields(runs[c][name])])
                if s or d:
                    moved.append(c)
                if d:
                    discrete.append(c)
        out[name] = {"spread": spread, "moved_in": moved, "discrete_in": sorted(set(discrete))}
    return out


def policy_tol(entry: dict, measured: dict | None, n_configs: int = 0) -> tuple[float, str]:
    """The golden tolerance of a recorded entry and the sentence that says where it comes from.

    * ``exact`` (``record(..., kind="exact")``, or a value without floats): the tolerance it was recorded
      with (``1e-9`` for floats by default, ``0`` for ints, bools and strings). A measured spread above
      it is reported, never absorbed: an exact item must not depend on the CPU.
    * ``experimental`` (a value holding floats, unless recorded as exact): ``max(recorded tol,
      TOL_FLOOR, TOL_MARGIN * spread)``, the spread measured by ``python -m lrank.dev spread`` over
      ``n_configs`` emulated CPU configurations (``tests/golden/spread/``). A name not measured keeps
      ``max(recorded tol, TOL_FLOOR)``.

    Parameters
    ----------
    entry : dict
        The fresh entry (a value of :func:`load`): its ``tol`` (missing: 0) and its kind (:func:`kind_of`).
    measured : dict or None
        The name's measured spread (a value of :func:`load_spread`; its ``"spread"``, missing: 0); None:
        not measured.
    n_configs : int, default 0
        How many CPU configurations the spread was measured over; only named in the sentence (0: not
        named).

    Returns
    -------
    tol : float
        The absolute tolerance the golden file pins.
    basis : str
        Where it comes from (stored as ``tol_basis``); an exact entry whose measured spread exceeds its
        tolerance says ``EXCEEDS``.
    """
    recorded = float(entry.get("tol", 0) or 0)
    kind = kind_of(entry)
    spread = None if measured is None else float(measured.get("spread", 0.0))
    over = f" over {n_configs} CPU configurations" if n_configs else ""
    if kind == "exact":
        basis = f"exact: recorded tol {recorded:g}"
        if spread:
            basis += f" (measured spread {spread:.3g}{over} EXCEEDS it)" if spread > recorded else \
                f" (measured spread {spread:.3g}{over})"
        return recorded, basis
    floor = max(recorded, TOL_FLOOR)
    if spread is None:
        return floor, f"experimental, spread not measured (python -m lrank.dev spread): floor {floor:g}"
    tol = max(floor, TOL_MARGIN * spread)
    if spread == 0:
        return tol, f"experimental: did not move{over}; floor {floor:g}"
    return tol, (f"experimental: spread {spread:.3g}{over} x margin {TOL_MARGIN:g}" if tol > floor else
                 f"experimental: spread {spread:.3g}{over} x margin {TOL_MARGIN:g} below the floor {floor:g}")


def spread_dir() -> Path:
    """``tests/golden/spread``: the measured spread of every recorded number, one JSON per notebook."""
    from lrank.paths import repo_dir

    return repo_dir() / "tests" / "golden" / "spread"


def load_spread(notebook: str) -> tuple[dict, dict]:
    """(per-name spreads, ``_meta``) of a notebook; empty when never measured.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_rankboost"``; read from ``tests/golden/spread/<notebook>.json``
        (:func:`spread_dir`).

    Returns
    -------
    spreads : dict
        Name to ``{"spread": ..., "moved_in": [...], "discrete_in": [...]}`` (:func:`measure_spread`).
    meta : dict
        The measurement's ``_meta``: ``configurations``, ``reference``, the hashes, ``machine`` and
        ``checked_cells_differing`` (:func:`collect_spread`).
    """
    data = _read(spread_dir() / f"{notebook}.json")
    meta = data.pop(META, {})
    return data, meta


def checked_cell_texts(path: Path, sanitize: Path | None = None) -> dict[int, str]:
    """The text output of every cell nbval compares in ``path`` (a ``nbval-check-output`` tag or a
    ``# NBVAL_CHECK_OUTPUT`` comment), through the sanitiser's regexes (``tests/nbval_sanitize.cfg``).

    Parameters
    ----------
    path : Path
        A notebook file (nbformat 4 JSON).
    sanitize : Path or None, default None
        nbval's sanitiser configuration: every section's ``regex`` is replaced by its ``replace``, in
        file order. None or a missing file: the texts as stored.

    Returns
    -------
    dict of int to str
        By index of the cell among all cells (Markdown cells count), the text of its outputs joined:
        streams, ``text/plain`` results and errors as ``ename: evalue``.
    """
    import configparser
    import re

    subs = []
    if sanitize is not None and sanitize.is_file():
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(sanitize, encoding="utf-8")
        subs = [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]
    out = {}
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        tags = cell.get("metadata", {}).get("tags", [])
        if "nbval-check-output" not in tags and not re.search(r"^\s*#\s*NBVAL_CHECK_OUTPUT\s*$", src, re.M):
            continue
        text = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                text.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
            elif "text/plain" in o.get("data", {}):
                t = o["data"]["text/plain"]
                text.append("".join(t) if isinstance(t, list) else t)
            elif o.get("output_type") == "error":
                text.append(f"{o.get('ename')}: {o.get('evalue')}")
        joined = "".join(text)
        for rx, rep in subs:
            joined = rx.sub(rep, joined)
        out[i] = joined
    return out


def _relative(spread: float, runs: list[dict]) -> float:
    scale = max((abs(x) for e in runs for x in _leaves(_fields(e))
                 if isinstance(x, (int, float)) and not isinstance(x, bool)), default=0.0)
    return spread / scale if scale else (0.0 if spread == 0 else math.inf)


def spread_table(notebook: str, runs: dict[str, dict], columns: list[str] | None = None) -> list[str]:
    """Markdown rows: every name of one notebook that moved under some configuration, with its move
    (max ``|difference|`` from the reference run, and relative to the entry's largest number) per
    configuration; a discrete change shows the reference and the other value.

    Parameters
    ----------
    notebook : str
        The notebook's stem, the first column.
    runs : dict of str to dict
        A configuration name to that run's entries (:func:`load`); the first is the reference.
    columns : list of str or None, default None
        The configurations of the table's columns, in order (a table over several notebooks has the same
        columns for each; a column whose run is absent from ``runs`` reads ``no run``). None: every
        configuration of ``runs`` but the reference.

    Returns
    -------
    list of str
        One row ``| notebook | name | ... |`` per moved name, without a header; a column reads ``0``
        where the name did not move, ``missing`` where that run or the reference lacks it.
    """
    configs = list(runs)
    ref = configs[0]
    columns = configs[1:] if columns is None else list(columns)
    rows = []
    for name, m in measure_spread(runs).items():
        if not m["moved_in"] and not m["discrete_in"]:
            continue
        cells = []
        for c in columns:
            if c not in runs:
                cells.append("no run")
                continue
            if c not in m["moved_in"] and c not in m["discrete_in"]:
                cells.append("0")
                continue
            if name not in runs[c] or name not in runs[ref]:
                cells.append("missing")
                continue
            pair = [runs[ref][name], runs[c][name]]
            s, d = _spread_of([_fields(e) for e in pair])
            cell = f"{s:.2g} ({_relative(s, pair):.1e} rel)" if s else ""
            if d and not s:
                cell = f"{_short(pair[0].get('value'), 24)} -> {_short(pair[1].get('value'), 24)}"
            elif d:
                cell += " discrete"
            cells.append(cell)
        rows.append(f"| {notebook} | {name} | " + " | ".join(cells) + " |")
    return rows


def collect_spread(work: Path, configs: list[str], notebooks: list[str], environments: dict | None = None,
                   allow_stale: bool = False, table: Path | None = None, write: bool = True) -> int:
    """Measure the spread of every recorded number from runs of the notebooks under CPU configurations.

    ``work/<config>/figures/results/<notebook>.json`` and ``work/<config>/notebooks/<notebook>.ipynb`` are
    one run per configuration (``python -m lrank.dev spread`` makes them; ``configs[0]`` is the
    reference, this machine as it is). Writes ``tests/golden/spread/<notebook>.json`` (the spread per
    name, the configurations, the checked notebook cells whose text differs between them), prints what
    moved, and with ``table`` writes a Markdown table of every moved name per configuration. Runs written
    by other package sources or another notebook version are refused unless ``allow_stale``.

    Parameters
    ----------
    work : Path
        The folder holding one subfolder of runs per configuration.
    configs : list of str
        The configurations' names (subfolders of ``work``); the first is the reference. A notebook is
        measured when the reference and at least one other run are there.
    notebooks : list of str
        The notebooks' stems.
    environments : dict or None, default None
        Configuration name to the environment variables that emulate it, stored in the spread file's
        ``_meta["configurations"]``; None: stored as ``{}``.
    allow_stale : bool, default False
        Measure runs whose ``lrank_sha256`` or ``notebook_sha256`` differ from the current code too.
    table : Path or None, default None
        Where to write the Markdown table (:func:`spread_table` rows under a header); None: no table.
    write : bool, default True
        Write ``tests/golden/spread/<notebook>.json``; False only prints (and writes ``table``).

    Returns
    -------
    int
        1 when a run is missing or refused, else 0.
    """
    import platform

    from lrank.paths import repo_dir

    sanitize = repo_dir() / "tests" / "nbval_sanitize.cfg"
    status = 0
    lines = ["| notebook | name | " + " | ".join(configs[1:]) + " |",
             "| --- | --- | " + " | ".join("---" for _ in configs[1:]) + " |"]
    for nb in notebooks:
        runs, texts = {}, {}
        for c in configs:
            path = work / c / "figures" / "results" / f"{nb}.json"
            if not path.is_file():
                print(f"!! {nb}: no results of configuration {c} ({path})")
                status = 1
                continue
            data = _read(path)
            meta = data.pop(META, {})
            want = {"lrank_sha256": lrank_sha256(), "notebook_sha256": notebook_sha256(nb)}
            stale = [k for k in want if meta.get(k) != want[k]]
            if stale and not allow_stale:
                print(f"!! {nb}: the run of configuration {c} was written by other code ({', '.join(stale)})")
                status = 1
                continue
            runs[c] = data
            ipynb = work / c / "notebooks" / f"{nb}.ipynb"
            if ipynb.is_file():
                texts[c] = checked_cell_texts(ipynb, sanitize)
        if configs[0] not in runs or len(runs) < 2:
            continue
        spread = measure_spread(runs)
        cells = []
        for i, t in texts.get(configs[0], {}).items():
            differ = [c for c in texts if c != configs[0] and texts[c].get(i) != t]
            if differ:
                other = texts[differ[0]].get(i) or ""
                first = next((a + " | " + b for a, b in zip(t.splitlines(), other.splitlines()) if a != b),
                             "(lengths differ)")
                cells.append({"cell": i, "differs_in": differ, "first_difference": first[:200]})
        moved = {k: v for k, v in spread.items() if v["moved_in"]}
        discrete = {k: v for k, v in spread.items() if v["discrete_in"]}
        print(f"== {nb}: {len(spread)} names over {len(runs)} configurations; {len(moved)} moved, "
              f"{len(discrete)} with a discrete change; {len(cells)} checked cell(s) print differently")
        for k, v in sorted(moved.items(), key=lambda kv: -kv[1]["spread"])[:15]:
            print(f"   {k}: spread {v['spread']:.3g} in {', '.join(v['moved_in'])}"
                  + (f"; DISCRETE in {', '.join(v['discrete_in'])}" if v["discrete_in"] else ""))
        for c in cells:
            print(f"   checked cell {c['cell']} differs in {', '.join(c['differs_in'])}: "
                  f"{c['first_difference']}")
        lines += spread_table(nb, runs, configs[1:])  # the header's columns, whichever runs were read
        if write:
            out = {META: {"configurations": {c: (environments or {}).get(c, {}) for c in runs},
                          "reference": configs[0], "lrank_sha256": lrank_sha256(),
                          "notebook_sha256": notebook_sha256(nb), "machine": platform.machine(),
                          "checked_cells_differing": cells}, **spread}
            spread_dir().mkdir(parents=True, exist_ok=True)
            _write(spread_dir() / f"{nb}.json", out)
    if table is not None:
        table.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"table of the moved names: {table}")
    return status
