"""``python -m lrank reproduce | fetch | info | bench``."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path


def _notebooks(only: list[str] | None) -> list[Path]:
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
    return books


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Run the notebooks in order with papermill; quick outputs are stored in place."""
    import papermill as pm
    from tqdm import tqdm

    from lrank.paths import figures_dir

    os.environ["LRANK_PROFILE"] = args.profile
    if getattr(args, "scheduler", None):  # the notebooks' run_grid calls read it (lrank.experiments)
        os.environ["LRANK_DASK_SCHEDULER"] = args.scheduler
    books = _notebooks(args.only)
    out_dir = None if args.profile == "quick" else figures_dir("paper") / "notebooks"
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    bar = tqdm(books, desc="notebooks", unit="nb")
    for nb in bar:
        bar.set_postfix_str(nb.stem)
        out = nb if out_dir is None else out_dir / nb.name
        t0 = time.perf_counter()
        try:
            pm.execute_notebook(
                str(nb), str(out), kernel_name="python3", parameters={"PROFILE": args.profile},
                cwd=str(nb.parent), progress_bar=False, log_output=False,
            )
        except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
            failed.append(nb.stem)
            first = str(exc).splitlines()[0] if str(exc) else ""
            tqdm.write(f"FAILED {nb.stem}: {type(exc).__name__}: {first}")
            if not args.keep_going:
                break
        else:
            tqdm.write(f"ok     {nb.stem}  ({time.perf_counter() - t0:.0f} s) -> {out}")
    print(f"artifacts in {figures_dir(args.profile)}")
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


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
    from lrank._kernels._jit import cache_dir

    folder, reason = cache_dir()
    print(f"numba kernel cache {folder} ({reason}; NUMBA_CACHE_DIR overrides)")
    print(f"profile {profile()}, data {data_dir()}, figures {figures_dir()}")
    try:
        from lrank.data.fetch import status
    except ImportError:
        print("data status: fetch registry not available")
    else:
        st = status()
        print(st[["dataset", "status", "path"]].to_string(index=False))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import pandas as pd

    from lrank import benchmarks
    from lrank.paths import figures_dir

    names = [n for n in benchmarks.modules() if not args.only or any(o in n for o in args.only)]
    rows = []
    for name in names:
        print(f"== {name}", flush=True)
        for row in benchmarks.load(name).run(args.profile):
            row = {"module": name, **row}
            rows.append(row)
            print("   " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                    for k, v in row.items()), flush=True)
    df = pd.DataFrame(rows)
    stem = "benchmarks" if not args.only else "benchmarks_" + "_".join(args.only)
    out = figures_dir("quick") / f"{stem}.md"
    import numba

    header = (f"Benchmarks ({args.profile} profile), measured in one process per row on "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, numba "
              f"{numba.__version__}, NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, "
              f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}. "
              "ratio = reference time / lrank time unless the row says otherwise.")
    out.write_text(header + "\n\n" + (df.to_markdown(index=False, floatfmt=".4g") if len(df) else "(no rows)")
                   + "\n", encoding="utf-8")
    df.to_csv(out.with_suffix(".csv"), index=False)
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lrank", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("reproduce", help="run every notebook with papermill and regenerate the artifacts")
    p.add_argument("--profile", choices=("quick", "paper"), default="quick")
    p.add_argument("--only", nargs="*", help="run only notebooks whose name contains one of these")
    p.add_argument("--keep-going", action="store_true", help="run the remaining notebooks after a failure")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address for the notebooks' task grids "
                        "(default: $LRANK_DASK_SCHEDULER)")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("fetch", help="download and verify a data set into $LRANK_DATA")
    p.add_argument("names", nargs="+")
    p.add_argument("--force", action="store_true", help="download again even when present")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("info", help="versions, numba threading layer, data status")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("bench", help="run the benchmarks and write figures/benchmarks.md")
    p.add_argument("--profile", choices=("quick", "paper"), default="quick")
    p.add_argument("--only", nargs="*", help="run only benchmark modules whose name contains one of these")
    p.set_defaults(func=cmd_bench)

    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
