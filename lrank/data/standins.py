"""Stand-in files in each real download's official layout, for rehearsing the paper profile offline.

The data sets of the paper profile (MSLR-WEB10K, LETOR 4.0 MQ2007 / MQ2008, LETOR 3.0 OHSUMED / TD2003 /
HP2003, Yahoo! LTR) cannot be downloaded on every machine. `write_standins(root)` writes small files with
the real downloads' names, folder structure, file format, feature counts and label ranges, where the
fetchers of `lrank.data.fetch` expect them after extraction (``root/downloads/<folder>/<layout>``), so that
``LRANK_DATA=root`` runs every paper-profile loader, fold and branch on them:

==============  =============================================================================================
MSLR-WEB10K     ``mslr-web10k/Fold1..5/{train,vali,test}.txt``: 136 features, labels 0-4, raw values, every
                feature listed, no comment
MQ2007, MQ2008  ``mq2007/MQ2007/Fold1..5/{train,vali,test}.txt`` (LETOR 4.0): 46 features, labels 0-2,
                values normalised per query, ``#docid = GX... inc = ... prob = ...``
OHSUMED         ``ohsumed/OHSUMED/QueryLevelNorm/Fold1..5/{train,vali,test}.txt`` (LETOR 3.0): 45 features,
                labels 0-2, ``#docid = N``
TD2003, HP2003  ``letor3-gov/Gov/QueryLevelNorm/2003_{td,hp}_dataset/Fold1..5/...`` (LETOR 3.0): 64
                features, labels 0/1, ``#docid = G..-..-.......``
Yahoo! LTR      ``yahoo-ltr/set{1,2}.{train,valid,test}.txt``: 700 feature ids (519 used in set 1, 596 in
                set 2), labels 0-4, values in [0, 1], only non-zero features listed, no comment
==============  =============================================================================================

As in the real releases, the five folds rotate five parts of the queries (fold ``k`` trains on parts
``k, k+1, k+2``, validates on ``k+3`` and tests on ``k+4``, modulo 5). Values come from
`lrank.data.make_letor_like` (a latent relevance behind the labels), so the experiments have something to
learn; every file is seeded and the same seed writes the same bytes.

Each folder gets ``STANDIN.txt`` (what wrote it) and ``SHA256SUMS`` (the files' sha256, which the loaders
verify as they verify a first download's record). The loaders never take a stand-in for the real data: with
``STANDIN.txt`` present the registry's checksums of the real files are not applied, every loaded set says
``provenance["standin"] = True``, and the paper profile refuses the folder (`lrank.data.fetch`).
`prepare(root)` also links the real data sets that every machine can fetch (the MSLR sample and
MovieLens-100K, from PyPI) into ``root``, so that ``LRANK_DATA=root`` serves every notebook.
``python -m lrank standins DIR`` does that from the command line.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lrank.data.fetch import REGISTRY, STANDIN_MARKER, Dataset

__all__ = ["SPECS", "StandinSpec", "REAL_SETS", "write_standin", "write_standins", "link_real", "prepare"]

#: Real data sets that every machine can fetch (from PyPI); `prepare` links them into the stand-in root.
REAL_SETS: tuple[str, ...] = ("mslr-sample", "movielens-100k")


@dataclass(frozen=True)
class StandinSpec:
    """How the stand-in of one registry data set is written.

    Attributes
    ----------
    name : str
        The `lrank.data.fetch.REGISTRY` key; the layout, folder, folds and feature count come from there.
    n_grades : int
        Labels ``0..n_grades-1`` (the real set's range).
    queries : tuple of int
        Queries per part: five parts rotated into the five folds (LETOR, MSLR), or per split of each set
        (Yahoo!: ``train, valid, test`` of set 1, then of set 2).
    docs_per_query : (int, int)
        Documents per query, drawn uniformly in this range.
    values : {"raw", "query", "unit"}
        ``raw`` as MSLR (rounded, unnormalised), ``query``: min-max per query and feature (LETOR's
        QueryLevelNorm), ``unit``: min-max per feature over the set (Yahoo!'s [0, 1]).
    comment : {"letor4", "ohsumed", "gov", None}
        The ``#docid`` comment of the real release, if it has one.
    used_features : tuple of int, optional
        Yahoo!: how many feature ids each set uses (the others never appear).
    missing_rate : float
        Share of values omitted from a line (read back as 0, as a sparse real file).
    qid_start : int
        First query id (the real files' ids are not 1..n).
    """

    name: str
    n_grades: int
    queries: tuple[int, ...]
    docs_per_query: tuple[int, int]
    values: str
    comment: str | None = None
    used_features: tuple[int, ...] | None = None
    missing_rate: float = 0.0
    qid_start: int = 1


#: The stand-ins, one per data set of the paper profile (sizes: a few hundred documents per fold).
SPECS: dict[str, StandinSpec] = {s.name: s for s in [
    StandinSpec("mslr-web10k", 5, (8,) * 5, (10, 40), "raw", qid_start=1),
    StandinSpec("mq2007", 3, (8,) * 5, (10, 40), "query", "letor4", qid_start=10002),
    StandinSpec("mq2008", 3, (6,) * 5, (5, 30), "query", "letor4", qid_start=10032),
    StandinSpec("ohsumed", 3, (6,) * 5, (20, 60), "query", "ohsumed", qid_start=1),
    StandinSpec("td2003", 2, (5,) * 5, (30, 80), "query", "gov", qid_start=1),
    StandinSpec("hp2003", 2, (6,) * 5, (20, 60), "query", "gov", qid_start=1),
    StandinSpec("yahoo-ltr", 5, (30, 6, 12, 8, 4, 6), (5, 30), "unit", used_features=(519, 596),
                missing_rate=0.3, qid_start=1),
]}

_SPLITS = ("train", "valid", "test")


def _seed(name: str, random_state: int) -> int:
    """A seed per data set (stable across Python runs: no ``hash()``)."""
    return int.from_bytes(hashlib.sha256(f"{name}:{random_state}".encode()).digest()[:4], "little")


def _values(X: np.ndarray, qptr: np.ndarray, how: str) -> np.ndarray:
    if how == "raw":  # MSLR: unnormalised, shifted to >= 0, rounded as the release prints them
        return np.round(np.nan_to_num(X - np.nanmin(X, axis=0), nan=0.0) * 10.0, 6)
    if how == "unit":
        lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
        return np.round(np.where(hi > lo, (X - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0), 6)
    out = np.zeros_like(X)
    for a, b in zip(qptr[:-1], qptr[1:]):
        block = X[a:b]
        lo, hi = block.min(axis=0), block.max(axis=0)
        out[a:b] = np.where(hi > lo, (block - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0)
    return np.round(out, 6)


def _comment(kind: str | None, rng: np.random.Generator) -> str:
    if kind is None:
        return ""
    if kind == "letor4":
        a, b, c = rng.integers(0, 300), rng.integers(0, 100), rng.integers(0, 10**7)
        inc, prob = rng.random(), rng.random() * 0.3
        return f" #docid = GX{a:03d}-{b:02d}-{c:07d} inc = {inc:.16g} prob = {prob:.6f}"
    if kind == "ohsumed":
        return f" #docid = {rng.integers(1, 350_000)}"
    return f" #docid = G{rng.integers(0, 50):02d}-{rng.integers(0, 100):02d}-{rng.integers(0, 10**7):07d}"


def _part_lines(spec: StandinSpec, ds: Dataset, n_queries: int, qid0: int, rng_seed: int,
                listed: np.ndarray | None = None) -> tuple[list[str], int]:
    """The lines of ``n_queries`` queries with ids from ``qid0``; ``listed``: the feature ids a sparse set
    uses (the others never appear)."""
    from lrank.data.generators import make_letor_like

    n_features = int(ds.n_features)
    d = make_letor_like(n_queries=n_queries, docs_per_query=spec.docs_per_query, n_features=n_features,
                        n_grades=spec.n_grades, random_state=rng_seed)
    X = _values(d.X.astype(np.float64), d.qptr, spec.values)
    rng = np.random.default_rng(rng_seed)
    sparse = listed is not None
    keep = np.ones(X.shape, bool) if spec.missing_rate == 0 else rng.random(X.shape) >= spec.missing_rate
    lines = []
    qid = np.repeat(np.arange(qid0, qid0 + n_queries), np.diff(d.qptr))
    for i in range(d.n_docs):
        cols = np.flatnonzero(listed & keep[i] & (X[i] != 0)) if sparse else np.arange(n_features)
        feats = " ".join(f"{j + 1}:{X[i, j]:.6g}" if spec.values == "raw" else f"{j + 1}:{X[i, j]:.6f}"
                         for j in cols)
        lines.append(f"{int(d.y[i])} qid:{qid[i]} {feats}{_comment(spec.comment, rng)}\n")
    return lines, qid0 + n_queries


def _write(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(lines)
    os.replace(tmp, path)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_standin(name: str, root: str | os.PathLike, random_state: int = 0) -> list[Path]:
    """Write the stand-in of one data set under ``root/downloads/<folder>/`` (see the module docstring).

    Parameters
    ----------
    name : str
        A key of `SPECS` (the registry names of the paper profile's data sets).
    root : path-like
        The stand-in data root (the ``LRANK_DATA`` of a rehearsal).
    random_state : int
        Seed; the same seed writes the same bytes.

    Returns
    -------
    list of Path
        The files written (the fold files; ``STANDIN.txt`` and ``SHA256SUMS`` beside them).
    """
    if name not in SPECS:
        raise KeyError(f"no stand-in for {name!r}; stand-ins exist for {', '.join(SPECS)}")
    spec, ds = SPECS[name], REGISTRY[name]
    folder = Path(root) / "downloads" / (ds.folder or ds.name)
    seed = _seed(name, random_state)
    files: dict[str, list[str]] = {}
    qid = spec.qid_start
    if name == "yahoo-ltr":  # two sets, one split each of train / valid / test
        for si, s in enumerate(ds.folds):
            listed = np.zeros(int(ds.n_features), bool)  # the feature ids set s uses
            pick = np.random.default_rng(seed + 100 * si).choice(listed.size, spec.used_features[si],
                                                                 replace=False)
            listed[pick] = True
            for k, split in enumerate(_SPLITS):
                lines, qid = _part_lines(spec, ds, spec.queries[3 * si + k], qid, seed + 10 * si + k, listed)
                files[ds.layout.format(fold=s, split=ds.split_names[split])] = lines
    else:  # five parts rotated into the five folds, as the LETOR and MSLR releases
        parts = []
        for p, nq in enumerate(spec.queries):
            lines, qid = _part_lines(spec, ds, nq, qid, seed + p)
            parts.append(lines)
        n = len(parts)
        for k in ds.folds:
            first = k - 1
            chosen = {"train": [(first + j) % n for j in range(n - 2)], "valid": [(first + n - 2) % n],
                      "test": [(first + n - 1) % n]}
            for split, idx in chosen.items():
                rel = ds.layout.format(fold=k, split=ds.split_names[split])
                files[rel] = [line for i in idx for line in parts[i]]
    written = []
    for rel, lines in files.items():
        _write(folder / rel, lines)
        written.append(folder / rel)
    sharing = [n for n in SPECS if (REGISTRY[n].folder or n) == (ds.folder or ds.name)]
    (folder / STANDIN_MARKER).write_text(
        f"Stand-in files for {', '.join(sharing)}, NOT the real data: written by lrank.data.standins "
        f"(make_letor_like, random_state={random_state}) in the layout of the real download, for rehearsing "
        f"the paper profile. Delete this folder before fetching the real data (python -m lrank fetch "
        f"{' '.join(sharing)}).\n", encoding="utf-8")
    sums = {p.relative_to(folder).as_posix(): _sha256(p) for p in written}
    old = folder / "SHA256SUMS"
    if old.is_file():  # a folder shared by two data sets (letor3-gov): keep the other's record
        for line in old.read_text().splitlines():
            if line.strip():
                digest, rel = line.split(None, 1)
                sums.setdefault(rel.strip(), digest)
    (folder / "SHA256SUMS").write_text("".join(f"{d}  {r}\n" for r, d in sorted(sums.items())))
    return written


def write_standins(root: str | os.PathLike, names: Sequence[str] | None = None, random_state: int = 0
                   ) -> dict[str, list[Path]]:
    """Write the stand-ins of ``names`` (default: every data set in `SPECS`) under ``root``."""
    names = list(names or SPECS)
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        raise KeyError(f"no stand-in for {unknown}; stand-ins exist for {', '.join(SPECS)}")
    return {n: write_standin(n, root, random_state) for n in names}


def link_real(root: str | os.PathLike, names: Sequence[str] = REAL_SETS,
              source: str | os.PathLike | None = None) -> dict[str, Path]:
    """Make the real data sets ``names`` available under ``root``: fetched (if needed) into ``source``
    (default: the current data root, `lrank.paths.data_dir`), then linked (or copied where links are not
    possible) as ``root/downloads/<folder>``."""
    from lrank.data.fetch import fetch
    from lrank.paths import data_dir

    src_root = Path(source) if source is not None else data_dir()
    out = {}
    for name in names:
        ds = REGISTRY[name]
        sub = ds.folder or ds.name
        old = os.environ.get("LRANK_DATA")
        os.environ["LRANK_DATA"] = str(src_root)
        try:
            fetch(name)
        finally:
            if old is None:
                os.environ.pop("LRANK_DATA", None)
            else:
                os.environ["LRANK_DATA"] = old
        src, dst = (src_root / "downloads" / sub).resolve(), Path(root) / "downloads" / sub
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.is_symlink() or dst.is_file():
            dst.unlink()
        elif dst.is_dir():
            shutil.rmtree(dst)
        try:
            dst.symlink_to(src, target_is_directory=True)
        except OSError:
            shutil.copytree(src, dst)
        out[name] = dst
    return out


def prepare(root: str | os.PathLike, random_state: int = 0, real: bool = True) -> Path:
    """A complete rehearsal data root: every stand-in, and (``real``) the real sets of `REAL_SETS` linked
    in. Returns ``root`` (absolute); point ``LRANK_DATA`` at it."""
    root = Path(root).resolve()
    write_standins(root, random_state=random_state)
    if real:
        link_real(root)
    return root
