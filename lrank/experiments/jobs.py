"""Checkpointed job runs: the one loop under every long experiment of lrank.

`run_jobs` runs a list of independent jobs (one fit on one fold, one task of a grid) through joblib,
on a Dask cluster when a scheduler is named (`lrank.experiments.grid.dask_backend`), with a tqdm bar
that shows the jobs done, the jobs still to run and an ETA. With checkpoints on, every finished job is
written to its own file as soon as it returns, so that a run that was interrupted (Ctrl-C, a killed
process, a machine that went away) and is started again with the same command runs only the jobs that
had not finished and returns results identical, bit for bit, to those of an uninterrupted run.

When checkpoints are on
-----------------------
``checkpoint=`` of every function that takes it (`run_grid`, `cross_validate`, the protocol runners of
`lrank.papers`):

* ``None`` (the default): ``$LRANK_CHECKPOINTS`` decides: ``0`` / ``off`` / ``false`` / ``no`` turn
  them off, ``1`` / ``on`` / ``true`` / ``yes`` turn them on in the default folder, any other value is
  the folder to use. Unset: **on for every profile but the quick one** (``$LRANK_PROFILE``, which
  ``python -m lrank reproduce --profile paper`` and the notebooks set), off for the quick profile, the
  test tiers and any other use of the library. The quick profile's stored results and the tests' runs
  never read a checkpoint unless asked.
* ``False``: off; ``True``: on in the default folder; a path: on, in that folder.

The default folder is ``<output root>/checkpoints/<profile>`` (``$LRANK_OUTPUT_DIR``, default the
checkout, where ``checkpoints/`` is ignored by git).

What a checkpoint is keyed by
-----------------------------
One file per job, ``<folder>/<label>/<digest>.npz``; the digest is a sha256 over the job's key (task,
algorithm, fold, seed, ...), the label of the loop, the sha256 of lrank's sources
(`lrank.results.lrank_sha256`), and a fingerprint of everything the job computes from: its data
(the bytes of every array), the estimator (class and parameters), rounds, metrics and options. A
checkpoint is used only when all of these are equal, so a changed parameter, other data (the stand-ins
instead of the real files) or any edit of lrank's code runs the job again. Old files are never read
again and can be deleted with the folder.

A file holds the job's result in the model files' format (``.npz``: arrays as entries, everything else
as one JSON header; no pickle, nothing in it runs code) and is written to a temporary name and renamed,
so a run killed while writing leaves no partial checkpoint. A file that cannot be read is reported and
its job run again.

Failures
--------
A job that raises does not stop the others: every other job runs (and is checkpointed), then
`JobError` names each failed job by its key (task, algorithm, fold, seed) with its error and the
traceback from the worker. ``JobError.results`` holds every finished job's result (None for the failed
ones); with checkpoints on, the same command started again runs only the failed jobs.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Environment variable that turns checkpoints on / off or names their folder (see the module docstring).
CHECKPOINT_ENV = "LRANK_CHECKPOINTS"
FORMAT = "lrank-checkpoint"
FORMAT_VERSION = 1
_OFF = ("0", "off", "false", "no")
_ON = ("1", "on", "true", "yes")


@dataclass(frozen=True)
class Job:
    """One job: ``key`` names it (task, algorithm, fold, seed, ...: JSON-able values), ``args`` are
    the positional arguments of the job function."""

    key: Mapping[str, Any]
    args: tuple = field(default_factory=tuple)


class JobError(RuntimeError):
    """Jobs failed; the others finished. ``failures``: ``(key, error text)`` per failed job, in job
    order; ``results``: every job's result in job order (None where it failed)."""

    def __init__(self, message: str, failures: list, results: list) -> None:
        super().__init__(message)
        self.failures = failures
        self.results = results


# ------------------------------------------------------------------------------ where checkpoints go
def checkpoint_folder(checkpoint: bool | str | os.PathLike | None = None) -> Path | None:
    """The folder checkpoints go to, or None when they are off (see the module docstring).

    Parameters
    ----------
    checkpoint : bool, path or None
        ``None``: ``$LRANK_CHECKPOINTS``, else on unless the profile (``$LRANK_PROFILE``) is quick;
        ``False``: off; ``True``: the default folder; a path: that folder.

    Returns
    -------
    pathlib.Path or None
    """
    if checkpoint is None:
        env = os.environ.get(CHECKPOINT_ENV, "").strip()
        if env.lower() in _OFF:
            return None
        if env.lower() in _ON:
            checkpoint = True
        elif env:
            checkpoint = env
        else:
            checkpoint = os.environ.get("LRANK_PROFILE", "quick") != "quick"
    if checkpoint is False:
        return None
    if checkpoint is True:
        from lrank.paths import output_root

        return output_root() / "checkpoints" / os.environ.get("LRANK_PROFILE", "quick")
    if isinstance(checkpoint, (str, os.PathLike)):
        return Path(checkpoint).expanduser().resolve()
    raise TypeError(f"checkpoint must be None, True, False or a folder, got {checkpoint!r}")


# ------------------------------------------------------------------------------ fingerprints
def fingerprint(*objs: Any, memo: dict | None = None) -> str:
    """sha256 of what ``objs`` compute from: arrays by bytes, dtype and shape; `RankingData` by its
    arrays; estimators by class and parameters; functions by code, defaults and closure values; numbers
    exactly; containers item by item; an object with ``__lrank_fingerprint__()`` by what that returns
    (a fold on disk: its files' sha256). ``memo`` (id -> digest) saves hashing the same array twice.

    Raises
    ------
    TypeError
        For an object without a stable description (its repr shows a memory address).
    """
    h = hashlib.sha256()
    memo = {} if memo is None else memo
    for obj in objs:
        _feed(h, obj, memo)
    return h.hexdigest()


def _feed(h: Any, obj: Any, memo: dict) -> None:  # noqa: C901 - one branch per kind of value
    from sklearn.base import BaseEstimator

    from lrank.data.container import RankingData

    def tag(t: str) -> None:
        h.update(t.encode() + b"\0")

    if obj is None or isinstance(obj, (bool, str, bytes)):
        tag(f"{type(obj).__name__}:{obj!r}")
    elif isinstance(obj, (int, np.integer)):
        tag(f"int:{int(obj)}")
    elif isinstance(obj, (float, np.floating)):
        tag(f"float:{float(obj).hex()}")
    elif isinstance(obj, np.ndarray):
        key = id(obj)
        if key not in memo:
            a = np.ascontiguousarray(obj)
            if a.dtype.kind == "O":
                sub = hashlib.sha256()
                for x in a.ravel().tolist():
                    _feed(sub, x, memo)
                body = sub.hexdigest()
            else:
                body = hashlib.sha256(a.view(np.uint8).reshape(-1) if a.size else b"").hexdigest()
            memo[key] = (obj, f"array:{a.dtype.str}:{a.shape}:{body}")  # obj kept: its id stays unique
        tag(memo[key][1])
    elif hasattr(obj, "__lrank_fingerprint__"):  # e.g. a fold left on disk (lrank.data.fetch.FoldFiles)
        tag(f"{type(obj).__module__}.{type(obj).__qualname__}")
        _feed(h, obj.__lrank_fingerprint__(), memo)
    elif isinstance(obj, RankingData):
        tag("RankingData")
        for a in (obj.X, obj.y, obj.qptr, obj.qid):
            _feed(h, a, memo)
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):
        tag(f"namedtuple:{type(obj).__qualname__}:{len(obj)}")
        for x in obj:
            _feed(h, x, memo)
    elif isinstance(obj, (list, tuple)):
        tag(f"{type(obj).__name__}:{len(obj)}")
        for x in obj:
            _feed(h, x, memo)
    elif isinstance(obj, (set, frozenset)):
        tag(f"set:{len(obj)}")
        for d in sorted(fingerprint(x, memo=memo) for x in obj):
            tag(d)
    elif isinstance(obj, Mapping):
        tag(f"dict:{len(obj)}")
        for k in sorted(obj, key=repr):
            _feed(h, k, memo)
            _feed(h, obj[k], memo)
    elif isinstance(obj, BaseEstimator):
        tag(f"estimator:{type(obj).__module__}:{type(obj).__qualname__}")
        _feed(h, obj.get_params(deep=False), memo)
    elif isinstance(obj, type):
        tag(f"type:{obj.__module__}:{obj.__qualname__}")
    elif callable(obj) and hasattr(obj, "__code__"):
        tag(f"function:{obj.__module__}:{obj.__qualname__}")
        _feed_code(h, obj.__code__, memo)
        _feed(h, obj.__defaults__, memo)
        _feed(h, obj.__kwdefaults__, memo)
        cells = obj.__closure__ or ()
        _feed(h, [c.cell_contents for c in cells], memo)
    elif hasattr(obj, "to_numpy") and hasattr(obj, "columns"):  # a DataFrame
        tag(f"DataFrame:{list(map(str, obj.columns))}")
        for c in obj.columns:
            _feed(h, obj[c].to_numpy(), memo)
        _feed(h, obj.index.to_numpy(), memo)
    else:
        text = repr(obj)
        if " at 0x" in text:
            raise TypeError(f"cannot fingerprint {type(obj).__module__}.{type(obj).__qualname__} for a "
                            f"checkpoint: its repr ({text[:80]}) names a memory address, not what it "
                            "computes")
        tag(f"repr:{type(obj).__module__}.{type(obj).__qualname__}:{text}")


def _feed_code(h: Any, code: Any, memo: dict) -> None:
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            _feed_code(h, c, memo)
        else:
            _feed(h, c, memo)


# ------------------------------------------------------------------------------ checkpoint files
def _digest(label: str, key: Mapping[str, Any], job_fp: str) -> str:
    from lrank.results import lrank_sha256

    text = json.dumps({"label": label, "key": _plain_key(key), "job": job_fp, "lrank": lrank_sha256()},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _plain_key(key: Mapping[str, Any]) -> dict:
    out = {}
    for k, v in key.items():
        if isinstance(v, np.generic):
            v = v.item()
        out[str(k)] = v if v is None or isinstance(v, (bool, int, float, str)) else repr(v)
    return out


def describe(key: Mapping[str, Any]) -> str:
    """``task='a', algorithm='x', fold=2, seed=0``: a job's key as it appears in messages."""
    return ", ".join(f"{k}={v!r}" for k, v in _plain_key(key).items())


def _write(path: Path, label: str, key: Mapping[str, Any], value: Any) -> bool:
    """Write ``value`` to ``path`` (temporary name, then renamed); False when it has no file form."""
    from lrank.models._base import _encode

    arrays: dict[str, np.ndarray] = {}
    try:
        header = {"format": FORMAT, "format_version": FORMAT_VERSION, "label": label,
                  "key": _plain_key(key), "result": _encode(value, arrays, "result")}
        text = json.dumps(header)
    except (TypeError, ValueError) as exc:
        warnings.warn(f"{label}: the result of job {describe(key)} cannot be checkpointed ({exc}); it will "
                      "run again after an interruption", RuntimeWarning, stacklevel=3)
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # not *.npz: never taken for a checkpoint
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            np.savez(fh, __header__=np.array(text), **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, a read-only folder: the run goes on, this job is not kept
        warnings.warn(f"{label}: cannot write the checkpoint of job {describe(key)} to {path} ({exc}); it "
                      "will run again after an interruption", RuntimeWarning, stacklevel=3)
        return False
    finally:
        if tmp.exists():
            tmp.unlink()
    return True


_MISSING = object()


def _read(path: Path, label: str, key: Mapping[str, Any]) -> Any:
    """The checkpointed result at ``path``, or `_MISSING` (absent, unreadable: reported, run again)."""
    from lrank.models._base import _decode, _resolve

    if not path.is_file():
        return _MISSING
    try:
        with np.load(path, allow_pickle=False) as npz:
            header = json.loads(str(npz["__header__"]))
            arrays = {k: npz[k] for k in npz.files if k != "__header__"}
        if header.get("format") != FORMAT or header.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"format {header.get('format')!r} {header.get('format_version')!r}")
        if header.get("key") != _plain_key(key) or header.get("label") != label:
            raise ValueError(f"it holds job {header.get('label')}: {header.get('key')}")

        def resolve(name: Any, kind: type) -> type:  # the model-file allow-list: a checkpoint is data too
            cls = _resolve(name)
            if cls is None or not issubclass(cls, kind):
                raise ValueError(f"it names the class {name!r}, which is not an lrank model class")
            return cls

        return _decode(header["result"], arrays, resolve)
    except Exception as exc:  # noqa: BLE001 - any damage: the job runs again, never a wrong result
        warnings.warn(f"{label}: checkpoint {path} of job {describe(key)} is unreadable "
                      f"({type(exc).__name__}: {exc}); the job runs again", RuntimeWarning, stacklevel=3)
        return _MISSING


# ------------------------------------------------------------------------------ running
def _call(i: int, func: Callable, args: tuple) -> tuple[int, bool, Any]:
    """Run one job in a worker: ``(i, True, result)``, or ``(i, False, (error, traceback text))``."""
    try:
        return i, True, func(*args)
    except Exception as exc:  # noqa: BLE001 - reported with the job's key by run_jobs
        text = traceback.format_exc()
        try:
            pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an error that cannot travel back from a worker
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        return i, False, (exc, text)


def run_jobs(func: Callable, jobs: Sequence[Job], *, label: str,
             checkpoint: bool | str | os.PathLike | None = None, n_jobs: int = 1, scheduler: Any = None,
             verbose: bool | None = None, desc: str | None = None,
             fingerprint_args: Callable[[Job], tuple] | None = None) -> list:
    """``[func(*job.args) for job in jobs]``, in parallel, checkpointed, with a progress bar.

    Parameters
    ----------
    func : callable
        The job function (importable: it travels to worker processes and Dask workers).
    jobs : sequence of Job
    label : str
        Names the loop (checkpoints go to ``<folder>/<label>/``; messages start with it).
    checkpoint : None, bool or path
        See the module docstring (default: on for the paper profile only).
    n_jobs : int
        Local parallel jobs (joblib); with a Dask ``scheduler`` every worker of the cluster takes jobs.
    scheduler : str, distributed.Client or None
        As in `lrank.experiments.run_grid` (default ``$LRANK_DASK_SCHEDULER``).
    verbose : bool, optional
        Show the tqdm bar (jobs done, to go, from checkpoints, ETA); default (None): for every profile
        but the quick one, as checkpoints (a long run shows its progress; stored quick outputs stay clean).
    desc : str, optional
        The bar's title (default ``label``).
    fingerprint_args : callable, optional
        ``job -> values`` that stand for ``job.args`` in the checkpoint's key (default ``job.args``),
        e.g. an estimator made by a factory instead of the factory.

    Returns
    -------
    list
        The results in job order, whatever order the jobs finished in and wherever they ran.

    Raises
    ------
    JobError
        Some jobs raised: each is named by its key; the others' results are in ``.results``.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    from lrank.experiments.grid import dask_backend

    jobs = list(jobs)
    folder = checkpoint_folder(checkpoint)
    results: list = [_MISSING] * len(jobs)
    paths: list[Path | None] = [None] * len(jobs)
    if folder is not None:
        memo: dict = {}
        fp = fingerprint_args or (lambda job: job.args)
        name = (getattr(func, "__module__", ""), getattr(func, "__qualname__", repr(func)))
        for i, job in enumerate(jobs):
            try:
                job_fp = fingerprint(*name, fp(job), memo=memo)
            except TypeError as exc:
                raise TypeError(f"{label}: job {describe(job.key)}: {exc}; pass checkpoint=False (or set "
                                f"{CHECKPOINT_ENV}=0) to run without checkpoints") from None
            paths[i] = folder / label / f"{_digest(label, job.key, job_fp)}.npz"
            results[i] = _read(paths[i], label, job.key)
        memo.clear()
    todo = [i for i, r in enumerate(results) if r is _MISSING]
    restored = len(jobs) - len(todo)
    failures: list[tuple[int, Any]] = []

    def state(done: int) -> str:
        return (f"{len(jobs) - done} to go" + (f", {restored} from checkpoints" if restored else "")
                + (f", {len(failures)} failed" if failures else ""))

    if verbose is None:
        verbose = os.environ.get("LRANK_PROFILE", "quick") != "quick"
    bar = tqdm(total=len(jobs), initial=restored, disable=not verbose, desc=desc or label, unit="job",
               postfix=state(restored), bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                                   "jobs done [{elapsed}<{remaining}{postfix}]")
    try:
        if todo:
            with dask_backend(scheduler) as client:
                par = Parallel(n_jobs=-1 if client is not None else n_jobs, return_as="generator_unordered")
                for i, ok, value in par(delayed(_call)(i, func, jobs[i].args) for i in todo):
                    if ok:
                        results[i] = value
                        if paths[i] is not None:
                            _write(paths[i], label, jobs[i].key, value)
                    else:
                        failures.append((i, value))
                    bar.set_postfix_str(state(bar.n + 1), refresh=False)
                    bar.update()
    finally:
        bar.close()
    if failures:
        failures.sort(key=lambda f: f[0])
        lines = [f"{label}: {len(failures)} of {len(jobs)} jobs failed"
                 + (f" (the {len(jobs) - len(failures)} others are checkpointed in {folder / label}; "
                    "the same command runs only the failed ones)" if folder is not None else
                    " (the others' results are in this error's .results; checkpoint=True keeps them "
                    "across runs)")]
        for i, (exc, _) in failures[:10]:
            lines.append(f"  job {describe(jobs[i].key)}: {type(exc).__name__}: {exc}")
        if len(failures) > 10:
            lines.append(f"  ... and {len(failures) - 10} more")
        i0, (exc0, tb0) = failures[0]
        lines.append(f"traceback of the first failed job ({describe(jobs[i0].key)}):\n{tb0.rstrip()}")
        raise JobError("\n".join(lines),
                       [(dict(jobs[i].key), f"{type(e).__name__}: {e}") for i, (e, _) in failures],
                       [None if r is _MISSING else r for r in results]) from exc0
    return results
