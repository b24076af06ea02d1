"""``python -m lrank reproduce | accept | site | fetch | standins | info | bench`` and the RankLib-style
``train | rank | eval | compare``."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import textwrap
import time
from pathlib import Path

from lrank.paths import PROFILES, ProfileError


def _notebooks(only: list[str] | None, index_last: bool = True) -> list[Path]:
    """The numbered notebooks; 00_index last (it reads the others' results) unless asked otherwise."""
    from lrank.paths import notebooks_dir

    folder = notebooks_dir()
    books = sorted(folder.glob("[0-9][0-9]*.ipynb"))
    if not books:
        raise SystemExit(
            f"python -m lrank reproduce: no notebooks in {folder} (expected NN_*.ipynb there). The "
            "notebooks live in a source checkout of lrank, next to the package folder; an installed "
            "package has none. Clone the repository and run `python -m lrank reproduce` from it (with "
            "that checkout's lrank on the path, e.g. `pip install -e .`)."
        )
    if only:
        books = [b for b in books if any(o in b.stem for o in only)]
        if not books:
            raise SystemExit(f"no notebook matches {only}")
    if index_last:
        books = [b for b in books if not b.stem.startswith("00")] + [b for b in books
                                                                     if b.stem.startswith("00")]
    return books


#: ``PYTHONHASHSEED`` of every notebook kernel (``reproduce`` here, the notebook tiers in ``lrank.dev``)
NOTEBOOK_HASH_SEED = "0"


def _kernel_options() -> dict:
    """papermill keyword arguments that start each notebook's kernel with CurveZMQ-encrypted sockets when
    pyzmq supports it (``KernelManager.transport_encryption="auto"``: keys are provisioned when the kernel
    spec declares ``curve``, as ipykernel's does). Without them ipykernel warns once per notebook that its
    local TCP sockets carry code and outputs in plain text. Empty when pyzmq was built without Curve (the
    kernel then starts as before, with its warning)."""
    import zmq
    from traitlets.config import Config

    if not zmq.has("curve"):
        return {}
    return {"config": Config({"KernelManager": {"transport_encryption": "auto"}})}


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Run the notebooks with papermill and store them cleaned; quick outputs are stored in place.

    No parameters are injected: the profile reaches each notebook through ``LRANK_PROFILE``, which
    its parameters cell reads, so the stored notebook has no injected-parameters cell. The paper and
    rehearsal profiles store the executed notebooks in ``figures/<profile>/notebooks``. The rehearsal first
    writes the stand-in files (`lrank.data.standins.prepare`) into ``--data-root`` (default
    ``$LRANK_DATA/standins``) and points the notebooks' ``LRANK_DATA`` there; ``--data-root`` alone points
    any profile at another data root.
    """
    import papermill as pm
    from tqdm import tqdm

    from lrank.paths import data_dir, figures_dir
    from lrank.site import clean_file

    if getattr(args, "plan", False):
        from lrank.papers.plan import print_plan

        return print_plan(args.profile, only=args.only, data_root=getattr(args, "data_root", None))
    data_root = getattr(args, "data_root", None)
    if args.profile == "rehearsal":
        from lrank.data.standins import prepare

        t0 = time.perf_counter()
        root = prepare(data_root or data_dir() / "standins")
        print(f"rehearsal data (stand-ins + linked real sets) in {root} ({time.perf_counter() - t0:.0f} s)")
        os.environ["LRANK_DATA"] = str(root)
    elif data_root:
        os.environ["LRANK_DATA"] = str(Path(data_root).resolve())
    os.environ["LRANK_PROFILE"] = args.profile
    # the notebooks' kernels inherit it: string hashing, hence set iteration order, the same in every run
    # (scikit-posthocs' critical-difference bars are drawn in set order: PDF bytes differed run to run)
    os.environ["PYTHONHASHSEED"] = NOTEBOOK_HASH_SEED
    if getattr(args, "scheduler", None):  # the notebooks' run_grid calls read it (lrank.experiments)
        os.environ["LRANK_DASK_SCHEDULER"] = args.scheduler
    books = _notebooks(args.only)
    if getattr(args, "seeds", None):
        return _reproduce_seeds(books, args.seeds, args.profile, args.keep_going)
    out_dir = None if args.profile == "quick" else figures_dir(args.profile) / "notebooks"
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    bar = tqdm(books, desc="notebooks", unit="nb")
    for nb in bar:
        bar.set_postfix_str(nb.stem)
        out = nb if out_dir is None else out_dir / nb.name
        # papermill rewrites its output after every cell: run into a temporary file and move it into place
        # at the end, so that the notebook file itself (which lrank.results hashes while the notebook runs)
        # is never read half-written
        running = out.with_name(f".{out.stem}.running.ipynb")
        t0 = time.perf_counter()
        try:
            pm.execute_notebook(
                str(nb), str(running), kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                log_output=False, **_kernel_options(),
            )
        except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
            failed.append(nb.stem)
            first = str(exc).splitlines()[0] if str(exc) else ""
            tqdm.write(f"FAILED {nb.stem}: {type(exc).__name__}: {first}")
            if not args.keep_going:
                break
        else:
            tqdm.write(f"ok     {nb.stem}  ({time.perf_counter() - t0:.0f} s) -> {out}")
        finally:
            if running.is_file():
                clean_file(running)
                os.replace(running, out)
    print(f"artifacts in {figures_dir(args.profile)}")
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    if getattr(args, "accept", False):
        if args.profile != "quick":
            print("--accept pins the quick profile only; nothing accepted", file=sys.stderr)
            return 1
        return cmd_accept(argparse.Namespace(only=args.only))
    return 0


def _seed_list(text: str) -> list[int]:
    """``"0-4"`` -> [0, 1, 2, 3, 4]; ``"1,3"`` -> [1, 3] (``--seeds``)."""
    bad = argparse.ArgumentTypeError(f"seeds as 0-4 or 1,3 (non-negative integers), got {text!r}")
    seeds: list[int] = []
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise bad from None
    if not seeds or min(seeds) < 0:
        raise bad
    return sorted(set(seeds))


def _reproduce_seeds(books: list[Path], seeds: list[int], profile: str, keep_going: bool) -> int:
    """Rerun each paper notebook with papermill ``-p SEED k`` and keep only its claims registry.

    Each run writes into a scratch output root (``LRANK_OUTPUT_DIR``), so the stored notebooks,
    figures and results are untouched; its ``claims/<notebook>.csv`` is copied to
    ``<figures>/seeds/seed-<k>/claims/`` and ``<figures>/seeds/seed-<k>/claims.csv`` is rebuilt from every
    notebook's rows there (`lrank.claims.combine`). Notebooks without a registry (the index, the
    benchmarks) are skipped.
    """
    import shutil
    import tempfile

    import papermill as pm
    from tqdm import tqdm

    from lrank import claims
    from lrank.paths import figures_dir

    papers = [nb for nb in books if "claims.Registry(" in nb.read_text(encoding="utf-8")]
    if not papers:
        print("--seeds: none of the selected notebooks builds a claims registry", file=sys.stderr)
        return 1
    store = figures_dir(profile) / "seeds"
    failed = []
    bar = tqdm([(k, nb) for k in seeds for nb in papers], desc="seed runs", unit="run")
    saved = os.environ.get("LRANK_OUTPUT_DIR")
    try:
        for k, nb in bar:
            bar.set_postfix_str(f"{nb.stem} SEED={k}")
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix=f"lrank-seed{k}-") as scratch:
                os.environ["LRANK_OUTPUT_DIR"] = scratch  # the kernel inherits it
                try:
                    pm.execute_notebook(str(nb), str(Path(scratch) / nb.name), parameters={"SEED": k},
                                        kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                                        log_output=False, **_kernel_options())
                except Exception as exc:
                    failed.append(f"{nb.stem}@{k}")
                    first = str(exc).splitlines()[0] if str(exc) else ""
                    tqdm.write(f"FAILED {nb.stem} SEED={k}: {type(exc).__name__}: {first}")
                    if not keep_going:
                        break
                    continue
                produced = figures_dir(profile) / "claims" / f"{nb.stem}.csv"  # under the scratch root
                if not produced.is_file():
                    failed.append(f"{nb.stem}@{k}")
                    tqdm.write(f"FAILED {nb.stem} SEED={k}: it wrote no registry ({produced.name})")
                    continue
                dest = store / f"seed-{k}"
                (dest / "claims").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(produced, dest / "claims" / produced.name)
                claims.combine(dest)
            tqdm.write(f"ok     {nb.stem} SEED={k} ({time.perf_counter() - t0:.0f} s) -> {dest}")
    finally:
        if saved is None:
            os.environ.pop("LRANK_OUTPUT_DIR", None)
        else:
            os.environ["LRANK_OUTPUT_DIR"] = saved
    print(f"per-seed registries in {store}")
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


def cmd_standins(args: argparse.Namespace) -> int:
    """Write the stand-in files (and link the real MSLR sample and MovieLens-100K) under DIR."""
    from lrank.data import standins

    root = Path(args.dir).resolve()
    t0 = time.perf_counter()
    try:
        written = standins.write_standins(root, args.only or None, random_state=args.seed)
        linked = standins.link_real(root) if not args.no_real else {}
    except (KeyError, OSError, RuntimeError) as exc:
        print(f"standins: {exc}", file=sys.stderr)
        return 1
    for name, files in written.items():
        folder = root / "downloads" / files[0].relative_to(root / "downloads").parts[0]
        print(f"{name}: {len(files)} stand-in files in {folder}")
    for name, path in linked.items():
        print(f"{name}: the real data linked as {path}")
    print(f"done in {time.perf_counter() - t0:.1f} s; use them with LRANK_DATA={root} (or python -m lrank "
          f"reproduce --profile rehearsal --data-root {root})")
    return 0


def cmd_accept(args: argparse.Namespace) -> int:
    """Rewrite tests/golden/<notebook>.json from the fresh results and print what changed.

    Each entry's tolerance follows the precision policy (`lrank.results.policy_tol`): exact numbers keep
    the tolerance they were recorded with; experimental ones get ``max(recorded tol, floor, margin x the
    spread measured by python -m lrank.dev spread)``, with ``tol_basis`` saying which.
    """
    import json

    from lrank import results
    from lrank.paths import repo_dir

    golden_dir = repo_dir() / "tests" / "golden"
    golden_dir.mkdir(parents=True, exist_ok=True)
    changed = 0
    for nb in _notebooks(args.only, index_last=False):
        entries = results.load(nb.stem, "quick")
        if not entries:
            continue
        stale = results.freshness(nb.stem, "quick")
        if stale:
            print(f"refusing {nb.stem}: {stale}", file=sys.stderr)
            return 1
        path = golden_dir / f"{nb.stem}.json"
        old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        spread, smeta = results.load_spread(nb.stem)
        n_configs = len(smeta.get("configurations", {}))
        new = {}
        for k, v in sorted(entries.items()):
            g = results.golden_entry(v)
            g["tol"], g["tol_basis"] = results.policy_tol(v, spread.get(k), n_configs)
            new[k] = g
        diff = results.compare_to_golden(entries, old) if old else [f"(new golden file, {len(new)} names)"]
        added = sorted(set(new) - set(old))
        removed = sorted(set(old) - set(new))
        n_changed = len({d.split(".")[0] for d in diff if " -> this run " in d})
        widened = [k for k in new if new[k]["tol"] > float(entries[k].get("tol", 0) or 0)]
        unmeasured = [k for k in new if k not in spread and results.kind_of(entries[k]) == "experimental"]
        exceeded = [k for k in new if "EXCEEDS" in new[k]["tol_basis"]]
        unstable = [k for k in new if k in spread and spread[k].get("discrete_in")]
        print(f"== {nb.stem}: {len(new)} names, {len(added)} added, {len(removed)} removed, "
              f"{n_changed} changed; {len(widened)} tolerance(s) widened by the measured spread")
        for d in diff:
            print("   " + d)
        if spread and smeta.get("notebook_sha256") != results.notebook_sha256(nb.stem):
            print(f"   note: the spread of {nb.stem} was measured on another version of the notebook")
        if unmeasured:
            more = " ..." if len(unmeasured) > 8 else ""
            print(f"   {len(unmeasured)} experimental name(s) without a measured spread (floor only; "
                  f"python -m lrank.dev spread): {', '.join(unmeasured[:8])}{more}")
        for k in exceeded:
            print(f"   !! exact {k} moved between CPU configurations: {new[k]['tol_basis']}")
        for k in unstable:
            print(f"   !! {k}: an int, bool or string differs under {', '.join(spread[k]['discrete_in'])}: "
                  "no tolerance covers it")
        if new != old:
            path.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            changed += 1
    print(f"{changed} golden file(s) rewritten in {golden_dir}")
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    """Build the book (Sphinx) from the stored notebooks; --export: the plain nbconvert pages instead;
    --check: the browser check of the notebooks in JupyterLab too."""
    import tempfile
    import time

    from lrank.paths import repo_dir
    from lrank.site import browser_check, build_book, export_site

    books = _notebooks(args.only, index_last=False)
    if args.export:
        index = export_site(Path(args.out) if args.out else repo_dir() / "build" / "site", books)
        print(f"wrote {index}")
    else:
        t0 = time.perf_counter()
        index, warnings = build_book(Path(args.out) if args.out else repo_dir() / "build" / "book", books)
        print(f"wrote {index} in {time.perf_counter() - t0:.0f} s; {len(warnings)} warning(s)")
        for w in warnings:
            print("  " + w)
        if warnings and not args.lenient:
            print("the book is strict: fix the warnings above (or pass --lenient to keep the pages anyway)")
            return 1
    if not args.check:
        return 0
    shots = Path(args.screenshots or tempfile.mkdtemp(prefix="lrank-screenshots-"))
    rows = browser_check(books, repo_dir(), shots)
    bad = [r["notebook"] for r in rows if not r["ok"]]
    print(f"browser check: {len(rows) - len(bad)} of {len(rows)} notebooks ok; screenshots in {shots}")
    return 1 if bad else 0


def _describe(result: object) -> str:
    """One line about what ``fetch`` returned (never a whole matrix)."""
    import numpy as np

    if isinstance(result, np.ndarray):
        return (f"ratings matrix {result.shape[0]} x {result.shape[1]}, "
                f"{int((~np.isnan(result)).sum()):,} rated")
    if isinstance(result, tuple):
        names = ("train", "test") if len(result) == 2 else [str(i) for i in range(len(result))]
        return "; ".join(f"{k}: {_describe(r)}" for k, r in zip(names, result))
    n_q, n_d = getattr(result, "n_queries", None), getattr(result, "n_docs", None)
    if n_q is not None:
        return f"{n_q} queries, {n_d} documents, {result.n_features} features"
    return repr(result)


def cmd_fetch(args: argparse.Namespace) -> int:
    """Fetch each name; a failure prints one message (what, from where, where to put it by hand) and
    the others are still fetched; the exit code is 1 when any failed."""
    from lrank.data.fetch import REGISTRY, FetchError, fetch

    failed = []
    for name in args.names:
        if name not in REGISTRY:
            print(f"{name}: FAILED: unknown data set; known: {', '.join(REGISTRY)}", file=sys.stderr)
            failed.append(name)
            continue
        try:
            result = fetch(name, force=args.force)
        except (FetchError, OSError, ValueError) as exc:
            print(f"{name}: FAILED: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        print(f"{name}: ok: {_describe(result)} in {REGISTRY[name].directory}")
    if failed:
        print(f"fetch failed for {len(failed)} of {len(args.names)}: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _cache_line() -> str:
    """Where numba caches lrank's kernels and why (`lrank._kernels._jit.cache_dir`), as one line."""
    from lrank._kernels._jit import cache_dir

    folder, reason = cache_dir()
    if reason == "NUMBA_CACHE_DIR":
        return f"numba kernel cache {folder} (set by NUMBA_CACHE_DIR)"
    return f"numba kernel cache {folder} ({reason}; NUMBA_CACHE_DIR overrides)"


def cmd_warmup(args: argparse.Namespace) -> int:
    """Compile every kernel (or the modules ``--only`` names) into numba's cache; print where and how long."""
    from lrank._warmup import run

    print(_cache_line())
    t0 = time.perf_counter()
    try:
        seconds = run(args.only or None, progress=True)
    except ValueError as exc:
        print(f"warmup: {exc}", file=sys.stderr)
        return 2
    for name, sec in seconds.items():
        print(f"  {name:16s} {sec:6.1f} s")
    print(f"{len(seconds)} kernel modules compiled or loaded in {time.perf_counter() - t0:.1f} s; first fits "
          "now load their kernels from the cache")
    return 0


def _threading_layer() -> str:
    import numba
    import numpy as np

    @numba.njit(parallel=True)
    def _probe(a):
        s = 0.0
        for i in numba.prange(a.size):
            s += a[i]
        return s

    try:
        _probe(np.ones(4))
        return numba.threading_layer()
    except Exception as exc:  # no threading layer available
        return f"unavailable ({exc})"


def cmd_info(args: argparse.Namespace) -> int:
    import importlib.metadata as md

    import lrank
    from lrank.paths import data_dir, figures_dir, profile

    print(f"lrank {lrank.__version__} at {Path(lrank.__file__).parent}")
    print(f"python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} cpus")
    for pkg in ("numpy", "numba", "llvmlite", "scipy", "scikit-learn", "pandas", "sympy", "matplotlib",
                "joblib", "tqdm", "scikit-posthocs", "papermill", "nbval", "ir-measures", "lightgbm",
                "xgboost", "dask"):
        try:
            v = md.version(pkg)
        except md.PackageNotFoundError:
            v = "not installed"
        print(f"  {pkg:16s} {v}")
    import numba

    print(f"numba threads {numba.config.NUMBA_NUM_THREADS}, threading layer {_threading_layer()}")
    print(_cache_line())
    print(f"profile {profile()}, data {data_dir()}, figures {figures_dir(create=False)}")
    try:
        from lrank.data.fetch import status
    except ImportError:
        print("data status: fetch registry not available")
    else:
        st = status()
        print(st[["dataset", "status", "path"]].to_string(index=False))
        absent = st.loc[st["status"] == "absent", "dataset"].tolist()
        manual = st.loc[st["status"] == "manual, absent", "dataset"].tolist()
        if absent:
            print(f"to download the absent ones: python -m lrank fetch {' '.join(absent)}")
        for name in manual:
            print(f"{name} cannot be downloaded for you: python -m lrank fetch {name} says how to get it")
    return 0


def _merge_page(df, page_md: Path, header: str, args: argparse.Namespace):
    """The rows and header of ``figures/benchmarks.*`` after this run: the stored page's rows that this run
    keeps, with ``df``'s rows put in (a row of the same module and benchmark name is replaced, a new one goes
    after its module's last row; with ``--into-page`` every module keeps its place in the stored page, even
    when all its rows are replaced). ``--into-page`` keeps every stored row and the stored header, adding a
    sentence on the rows it brought; a whole run keeps only the stored rows of another profile (the 1M
    scale rows of ``--profile paper``) and their sentence."""
    import pandas as pd

    from lrank.benchmarks import read_table

    csv = page_md.with_suffix(".csv")
    if not csv.is_file():
        return df, header
    old = read_table(csv)
    if "profile" not in old.columns:
        old["profile"] = "quick"
    placed = list(dict.fromkeys(old["module"]))  # the stored page's module order
    new_keys = set(_row_keys(df))
    keep = [k not in new_keys and (args.into_page or p != args.profile)
            for k, p in zip(_row_keys(old), old["profile"])]
    old = old[keep]
    order = list(dict.fromkeys([*(placed if args.into_page else old["module"]), *df["module"]]))
    merged = pd.concat([old, df], ignore_index=True)
    merged = merged.sort_values("module", key=lambda c: c.map(order.index), kind="stable")
    stored = page_md.read_text(encoding="utf-8").split("\n", 1)[0] if page_md.is_file() else ""
    base, *said = stored.split(" Rows with profile=")
    kept = set(zip(old["profile"], old["module"]))

    def rows_left(x: str) -> bool:
        """A kept row has the sentence's profile and one of its modules, each matched exactly (its key,
        ``<profile> in module(s) <m1, m2>[ on ...]`` before `` come from``, parsed back)."""
        profile, _, modules = x.split(" come from", 1)[0].partition(" in module(s) ")
        return any((profile, m) in kept for m in modules.split(" on ", 1)[0].split(", "))

    said = [" Rows with profile=" + x for x in said if rows_left(x)]
    if not args.into_page:
        return merged.reset_index(drop=True), header + "".join(said)
    run = header.split(", measured", 1)[-1].split(". ratio", 1)[0].strip()
    env = "".join(f"{k}={os.environ[k]} " for k in sorted(os.environ)
                  if k.startswith("LRANK_BENCH_") and k not in ("LRANK_BENCH_SETTLE", "LRANK_BENCH_RESUME"))
    # a run of some thread counts only (LRANK_BENCH_THREADS) says so, and replaces only the sentence of a run
    # of the same counts: the rows of the other counts keep theirs
    counts = os.environ.get("LRANK_BENCH_THREADS", "").strip()
    on = f" on {counts.replace(',', ' and ')} thread{'s' * (counts != '1')}" if counts else ""
    # likewise a run of some of time_to_accuracy's data sets (LRANK_BENCH_TTA) replaces only their sentence
    sets = os.environ.get("LRANK_BENCH_TTA", "").strip()
    on = (f" on data set(s) {sets.replace(',', ', ')}" if sets else "") + on
    modules, only = ", ".join(sorted(set(df["module"]))), " ".join(args.only or [])
    added = (f" Rows with profile={args.profile} in module(s) {modules}{on} come from "
             f"`{env}python -m lrank bench --profile {args.profile} --only {only} --into-page` ({run}).")
    # a sentence goes once the later ones of the same profile and modules ("module(s) tta" is not
    # "module(s) tta, gbrt") cover every data set and thread count it spoke for
    said = _uncovered([*said, added], args.profile)
    return merged.reset_index(drop=True), (base or header) + "".join(said)


def _cells(sentence: str, profile: str) -> tuple[tuple[str, str], set[tuple[str, str]]]:
    """What a page sentence speaks for: its (profile, modules) and the (data set, thread count) cells of its
    run. A run without ``LRANK_BENCH_TTA`` measured every data set of the profile (time_to_accuracy's;
    ``"*"`` for a module without data sets), one without ``LRANK_BENCH_THREADS`` every thread count numba
    has here (1 and 2 on two or more threads)."""
    import re

    from lrank.benchmarks._timing import thread_counts

    key = sentence.split(" come from", 1)[0].removeprefix(" Rows with profile=")
    prof, _, rest = key.partition(" in module(s) ")
    modules = rest.split(" on ", 1)[0]
    sets = re.search(r" on data set\(s\) (.+?)(?= on \d|$)", rest)
    counts = re.search(r" on ([\d ]+(?:and [\d ]+)*) threads?$", rest)
    if sets:
        names = sets.group(1).split(", ")
    elif modules == "time_to_accuracy":
        from lrank.benchmarks.time_to_accuracy import data_sets

        names = list(data_sets(prof or profile))
    else:
        names = ["*"]
    threads = (counts.group(1).replace(" and ", ",").replace(" ", "").split(",") if counts
               else [str(t) for t in thread_counts()])
    return (prof, modules), {(n, t) for n in names for t in threads}


def _uncovered(sentences: list[str], profile: str) -> list[str]:
    """The page's sentences, oldest first, without those whose every cell (`_cells`) a later sentence of the
    same profile and modules covers: after runs of the MSLR rows on 1 thread, then on 2, then on both, only
    the last sentence is left."""
    parsed = [_cells(x, profile) for x in sentences]
    kept = []
    for i, (x, (who, cells)) in enumerate(zip(sentences, parsed)):
        later = set().union(*(c for w, c in parsed[i + 1:] if w == who))
        if cells - later:
            kept.append(x)
    return kept


def _row_keys(df) -> list[tuple]:
    """A page row's identity: its module, its benchmark and its thread count (the same benchmark measured on
    1 and on 2 threads is two rows; a run of one thread count replaces only that count's rows)."""
    def count(t) -> str:  # 2, 2.0 (a CSV column with blanks) and "2" are one count; blank is ""
        if t is None or t != t:
            return ""
        try:
            return str(int(float(t))) if float(t) == int(float(t)) else str(t)
        except (TypeError, ValueError):
            return str(t)

    threads = df["threads"] if "threads" in df.columns else [None] * len(df)
    return [(m, b, count(t)) for m, b, t in zip(df["module"], df["benchmark"], threads)]


def _merge_side(new, path: Path):
    """A side table after an ``--into-page`` run: the stored table's rows whose key (``new.attrs["keys"]``:
    e.g. the data set and thread count) this run did not measure, then the new rows."""
    import pandas as pd

    keys = new.attrs.get("keys")
    if not keys or not path.is_file():
        return new
    old = pd.read_csv(path)
    if not set(keys) <= set(old.columns):
        return new
    measured = set(map(tuple, new[keys].astype(str).to_numpy()))
    kept = old[[k not in measured for k in map(tuple, old[keys].astype(str).to_numpy())]]
    return pd.concat([kept, new], ignore_index=True) if len(kept) else new


def _code_commit() -> str:
    """The checkout's short commit id for the page's ``commit`` column, ``+dirty`` when ``lrank/`` has
    uncommitted changes (the rows then time code no commit holds); ``unknown`` outside a git checkout."""
    import subprocess

    from lrank.paths import repo_dir

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=repo_dir(), capture_output=True, text=True, check=True,
                              timeout=30).stdout.strip()

    try:
        head = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--", "lrank")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def cmd_bench(args: argparse.Namespace) -> int:
    import pandas as pd

    from lrank import benchmarks
    from lrank.paths import figures_dir

    names = [n for n in benchmarks.modules() if not args.only or any(o in n for o in args.only)]
    if args.settle:
        from lrank.benchmarks._timing import SETTLE_ENV

        os.environ[SETTLE_ENV] = str(args.settle)  # read by every timed block (and child processes)
    rows, side = [], {}
    for name in names:
        print(f"== {name}", flush=True)
        try:
            module = benchmarks.load(name)
            for row in module.run(args.profile):
                row = {"module": name, **row}
                rows.append(row)
                print("   " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                        for k, v in row.items()), flush=True)
            side.update(getattr(module, "side_files", dict)())  # tables beside the page, by artifact name
        except Exception as exc:  # one broken module must not lose the others' rows: an error row instead
            rows.append({"module": name, "benchmark": f"(module {name} failed)", "status": "error",
                         "met": False, "notes": f"failed: {type(exc).__name__}: {exc}"})
            print(f"   failed: {type(exc).__name__}: {exc}", flush=True)
    df = pd.DataFrame(rows)
    df["profile"] = args.profile
    commit = _code_commit()
    df["commit"] = commit
    stem = "benchmarks" if not args.only or args.into_page else "benchmarks_" + "_".join(args.only)
    out = figures_dir("quick") / f"{stem}.md"
    for name, table in side.items():  # stored next to the page; a trial run (--only alone) beside its page
        path = out.with_name(f"{name}.csv" if stem == "benchmarks" else f"{stem}_{name}.csv")
        table = table.assign(profile=args.profile, commit=commit)
        (_merge_side(table, path) if args.into_page else table).to_csv(path, index=False)
        print(f"wrote {path}")
    import numba

    header = (f"Benchmarks ({args.profile} profile), measured in one process per row on "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, numba "
              f"{numba.__version__}, NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, "
              f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}. "
              "ratio = reference time / lrank time unless the row says otherwise.")
    if stem == "benchmarks":
        df, header = _merge_page(df, out, header, args)
    out.write_text(header + "\n\n" + benchmarks.page_markdown(df) + "\n", encoding="utf-8")
    df.to_csv(out.with_suffix(".csv"), index=False)
    print(f"wrote {out}")
    errors = [r["benchmark"] for r in rows if r.get("status") == "error"]
    if errors:
        print(f"{len(errors)} benchmark row(s) failed: " + "; ".join(errors), file=sys.stderr)
    return 1 if errors else 0


def _seconds(text: str) -> float:
    """``--settle``'s value: a finite number of seconds, at least 0."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (v >= 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text!r}")
    return v


_EXAMPLES = """\
examples:
  python -m lrank reproduce          # every notebook, figure and table (quick)
  python -m lrank fetch mslr-sample  # download and verify the MSLR sample
  lrank train --ranker lambdamart --train train.txt --validate vali.txt \\
              --save lm.npz
  lrank rank --model lm.npz --input test.txt --run lm.trec --qrels test.qrels
  lrank eval --run lm.trec --qrels test.qrels --metric NDCG@10 --metric MAP
  lrank compare lm.trec rb.trec --qrels test.qrels  # two models' runs

(lrank COMMAND and python -m lrank COMMAND are the same program.)"""


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command, its options and examples.

    Parameters
    ----------
    prog : str, optional
        The program's name in usage lines; default ``lrank`` when run as the console script, else
        ``python -m lrank``.
    """
    from lrank.cli import add_subcommands, command_parser  # RankLib-style train / rank / eval / compare

    parser = argparse.ArgumentParser(
        prog=prog or ("lrank" if Path(sys.argv[0]).name == "lrank" else "python -m lrank"),
        description="Boosting for learning to rank: regenerate the papers' notebooks, figures and tables, "
                    "and train, rank, evaluate and compare rankers on LETOR files. Each command's --help "
                    "lists its options.",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.description = textwrap.fill(parser.description, width=79)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = command_parser(sub, "reproduce", "run every notebook with papermill and regenerate the artifacts", (
        "python -m lrank reproduce                    # every notebook, quick profile",
        "python -m lrank reproduce --only 02 --accept # one notebook; update goldens",
        "python -m lrank reproduce --profile paper --plan"))
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="quick: CI scale, stored in place; paper: the papers' data and budgets "
                        "(figures/paper); rehearsal: the paper profile's code path on stand-in files with "
                        "budgets scaled down (figures/rehearsal)")
    p.add_argument("--data-root", default=None,
                   help="the data root the notebooks read (sets LRANK_DATA); rehearsal: where the stand-ins "
                        "are written (default $LRANK_DATA/standins)")
    p.add_argument("--plan", action="store_true",
                   help="run nothing: print, per notebook and experiment, the data it will use (present or "
                        "the fetch command), the work and the estimated CPU and wall time of the profile")
    p.add_argument("--only", nargs="*", help="run only notebooks whose name contains one of these")
    p.add_argument("--keep-going", action="store_true", help="run the remaining notebooks after a failure")
    p.add_argument("--accept", action="store_true",
                   help="then rewrite tests/golden/ from the fresh results and print the differences")
    p.add_argument("--seeds", type=_seed_list, default=None, metavar="K-M",
                   help="seed-stability run: rerun the paper notebooks with papermill -p SEED k for each "
                        "seed (e.g. 0-4 or 1,3) in a scratch folder and store only their claims registries "
                        "in figures/seeds/seed-<k>/ (stored notebooks and figures untouched)")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address for the notebooks' task grids "
                        "(default: $LRANK_DASK_SCHEDULER)")
    p.set_defaults(func=cmd_reproduce)

    p = command_parser(sub, "accept", "rewrite tests/golden/ from the current results; prints the diff")
    p.add_argument("--only", nargs="*", help="only notebooks whose name contains one of these")
    p.set_defaults(func=cmd_accept)

    p = command_parser(sub, "site", "the book: Sphinx pages of the stored notebooks, API and bibliography "
                       "(--export: plain nbconvert pages; --check: browser check too)",
                       ("python -m lrank site --out build/book",))
    p.add_argument("--out", help="output folder (default build/book, build/site with --export)")
    p.add_argument("--export", action="store_true", help="plain nbconvert HTML pages instead of the book")
    p.add_argument("--lenient", action="store_true", help="exit 0 even when the book build warns")
    p.add_argument("--only", nargs="*", help="only notebooks whose name contains one of these")
    p.add_argument("--check", action="store_true",
                   help="open each notebook in JupyterLab in headless chromium and check its figures")
    p.add_argument("--screenshots", help="folder for the screenshots (default: a new temporary folder)")
    p.set_defaults(func=cmd_site)

    p = command_parser(sub, "fetch", "download and verify a data set into $LRANK_DATA", (
        "python -m lrank fetch mslr-sample movielens-100k",))
    p.add_argument("names", nargs="+", metavar="NAME",
                   help="data set names (python -m lrank info lists every one and whether it is present)")
    p.add_argument("--force", action="store_true", help="download again even when present")
    p.set_defaults(func=cmd_fetch)

    p = command_parser(sub, "standins", "write small stand-in files in each real download's layout (and "
                                        "link the real MSLR sample and MovieLens-100K) under DIR, for "
                                        "LRANK_DATA=DIR",
                       ("python -m lrank standins /tmp/standins --only mq2007",))
    p.add_argument("dir", metavar="DIR", help="folder to write the stand-ins into (created if missing)")
    p.add_argument("--only", nargs="*", help="only these data sets (registry names, e.g. mslr-web10k mq2007)")
    p.add_argument("--seed", type=int, default=0, help="seed of the stand-in values (same seed, same bytes)")
    p.add_argument("--no-real", action="store_true", help="do not fetch and link the real MSLR sample and "
                                                          "MovieLens-100K")
    p.set_defaults(func=cmd_standins)

    p = command_parser(sub, "info", "versions, numba threading layer, data status")
    p.set_defaults(func=cmd_info)

    p = command_parser(sub, "warmup", "compile every numba kernel into the cache once (after an install or "
                                      "an upgrade), so that no fit compiles")
    p.add_argument("--only", nargs="*", help="only these kernel modules (e.g. lambdas trees)")
    p.set_defaults(func=cmd_warmup)

    p = command_parser(sub, "bench", "run the benchmarks and write figures/benchmarks.md (and the side files "
                                     "of some modules, e.g. figures/rankboost_plus_fig1_times.csv)",
                       ("python -m lrank bench --only gbrt",))
    p.add_argument("--profile", choices=("quick", "paper"), default="quick",
                   help="quick: CI-sized data; paper: the page's full-size rows (default %(default)s)")
    p.add_argument("--only", nargs="*", help="run only benchmark modules whose name contains one of these")
    p.add_argument("--into-page", action="store_true",
                   help="put the rows into the stored figures/benchmarks.csv/.md (replacing rows of the "
                        "same module and name) instead of writing figures/benchmarks_<only>.*; e.g. the "
                        "1M-document scale rows: --profile paper --only scale --into-page")
    p.add_argument("--settle", type=_seconds, default=0.0, metavar="SECONDS",
                   help="before each timed block wait up to SECONDS for the 1-minute load average to fall "
                        "below 1 (the page's quiet-machine condition; each row reports its starting load)")
    p.set_defaults(func=cmd_bench)

    add_subcommands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "bench" and args.only:  # a name matching no module ran nothing and wrote a page
        from lrank import benchmarks

        known = benchmarks.modules()
        for o in args.only:
            if not any(o in n for n in known):
                parser.error(f"bench --only: no benchmark module matches {o!r}; known: {', '.join(known)}")
    try:
        return int(args.func(args) or 0)
    except ProfileError as exc:  # a bad LRANK_PROFILE: one line, not a traceback
        print(f"python -m lrank {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
