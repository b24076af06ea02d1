"""The two commands of a fresh machine, with nothing but Python >= 3.11 and pip.

    python3.11 -m lrank.dev reproduce   # set up .venv, fetch the MSLR sample, rerun every notebook (quick)
    python3.11 -m lrank.dev test        # set up .venv, then the CI tiers (below)
    python3.11 -m lrank.dev test unit notebooks   # only some tiers
    python3.11 -m lrank.dev mutate [MUTATION [NOTEBOOK]]   # a wrong constant turns the golden test red
                                        # (default: rankboost-alpha on 02_adarank; names in MUTATIONS)

The tiers of ``test``, each timed:

1. ``unit``: ``pytest tests`` (not the result and browser tests); exit code 5 ("no tests") fails. The
   unit, kernel and notebooks tiers run on `test_workers` pytest-xdist workers (one per CPU, at most 4;
   ``--dist worksteal`` in the unit and kernel tiers, see `_xdist`).
2. ``kernel``: ``NUMBA_DISABLE_JIT=1 pytest -m kernel`` over the test files that mark kernel-vs-reference
   tests with ``@pytest.mark.kernel`` (said loudly and skipped while no file marks one).
3. ``notebooks``: every notebook once under nbval (``--nbval-lax``, the sanitiser) in the quick
   profile with ``LRANK_OUTPUT_DIR`` a temporary folder, so figures and recorded results go there; one
   notebook per worker (``--dist loadfile``: its cells in order, in one kernel), `LONGEST_NOTEBOOKS`
   handed out first, 00_index after the others.
4. ``results``: ``pytest tests/results`` on the results of *this* run: the per-notebook checks and
   the golden comparison (``tests/golden/``, rewritten only by ``python -m lrank accept``).
5. ``browser``: each stored notebook opened in JupyterLab in headless Chromium, and the book built with
   Sphinx (``python -m lrank site``, nitpicky) and every page of it opened there too (skipped, loudly,
   without Debian's ``chromium`` + ``chromium-driver``; the book's build and link checks run regardless),
   the two test files on two workers.
6. ``git``: ``git status --porcelain`` is what it was before the tiers (running the tests changes
   no tracked file).
7. ``rehearsal``: ``python -m lrank reproduce --profile rehearsal``: every notebook through the paper
   profile's code path on stand-in files with the budgets scaled down (`lrank.papers.budgets`), the
   stand-ins and figures in the run's temporary folder; needs Stockfish (Debian ``stockfish``) for the chess
   sets. Runs before ``git``; with ``--foreign``/``--foreign-ci`` it runs alongside the emulated-CPU tiers
   (one core each), its output printed when it ends.

Standard library only: this runs before any dependency is installed. The virtual environment is
``.venv`` in the checkout (``LRANK_VENV`` overrides); it is created and filled from ``pyproject.toml``
when missing or when ``pyproject.toml`` changed since the last install.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("LRANK_VENV", REPO / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
NBVAL = ["--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]


def _say(msg: str) -> None:
    print(f"[lrank.dev] {msg}", flush=True)


def _run(cmd: list[str], ok: tuple[int, ...] = (0,), env: dict | None = None) -> int:
    _say(" ".join(str(c) for c in cmd))
    # PYTHONHASHSEED as `python -m lrank reproduce` sets it for the notebooks' kernels (NOTEBOOK_HASH_SEED
    # there; this module imports nothing of lrank): set iteration order, hence figures, as stored
    full = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", OMP_WAIT_POLICY="passive",
                PYDEVD_DISABLE_FILE_VALIDATION="1", PYTHONHASHSEED="0", **(env or {}))
    rc = subprocess.call([str(c) for c in cmd], cwd=REPO, env=full)
    if rc not in ok:
        _say(f"failed with exit code {rc}" + (" (no tests collected)" if rc == 5 else ""))
        raise SystemExit(rc or 1)
    return rc


def ensure_venv(extras: str = "dev") -> None:
    """Create ``.venv`` and install ``lrank[extras]`` when missing or when pyproject.toml changed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before the venv exists
        raise SystemExit(f"lrank needs Python >= 3.11, this is {sys.version.split()[0]}")
    stamp = VENV / f".lrank-installed-{extras}"
    want = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == want and PY.exists():
        return
    if not PY.exists():
        _say(f"creating the virtual environment {VENV}")
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    _run([PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    _run([PY, "-m", "pip", "install", "--quiet", "-e", f".[{extras}]"])
    _run([PY, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3",
          "--display-name", "Python 3 (lrank)"])
    stamp.write_text(want + "\n")


def reproduce(profile: str = "quick") -> None:
    ensure_venv()
    _run([PY, "-m", "lrank", "fetch", "mslr-sample"])
    _run([PY, "-m", "lrank", "reproduce", "--profile", profile])


TIERS = ("unit", "kernel", "notebooks", "results", "browser", "rehearsal", "git")
#: the tiers that run a second time under an emulated CPU (``test --foreign``)
FOREIGN_TIERS = ("unit", "notebooks", "results")
#: pytest's arguments in every tier; ``--durations`` lists each tier's slowest tests (a notebook's slowest
#: cells) in the log, which is where CI's time goes
PYTEST = ["-m", "pytest", "-p", "no:cacheprovider", "-q", "--durations=25"]


def test_workers() -> int:
    """pytest-xdist workers of the unit, kernel and notebooks tiers: one per CPU this process may use, at
    most 4 (``LRANK_TEST_WORKERS`` overrides; 1 runs in one process). Most unit tests run one thread, so
    two workers on two cores halve that tier; the notebooks' long cells already use both cores."""
    env = os.environ.get("LRANK_TEST_WORKERS")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise SystemExit(f"LRANK_TEST_WORKERS must be a positive integer, got {env!r}")
        return int(env)
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, n))


def _xdist(n_items: int = 2, dist: str = "worksteal") -> list[str]:
    """pytest-xdist's arguments for `test_workers` workers (none for one worker or one item).

    The unit and kernel tiers use ``--dist worksteal``: each worker starts on a contiguous share of the
    tests, and one that runs out takes half of what another has not started. With ``--dist load`` a worker
    that asked late was handed the next run of consecutive tests whole: the unit tier's 20 grower-oracle
    tests (about 6 minutes of numba compilation on a cold cache) went to one worker while the other
    finished three minutes earlier and waited.
    """
    w = min(test_workers(), n_items)
    return ["-n", str(w), "--dist", dist] if w > 1 else []

# numpy's dispatch targets above its x86-64 baseline (numpy 2.4: X86_V2 baseline; X86_V3 = AVX2 + FMA3,
# X86_V4 and AVX512_* = AVX-512); ``python -c "import numpy; numpy.show_runtime()"`` lists them
_NPY_NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
_NPY_NO_AVX2 = "X86_V3 " + _NPY_NO_AVX512

#: Emulated CPU configurations (x86-64): name -> (environment, what it stands for). numpy's SIMD
#: dispatch and numba's code generation change with them; OpenBLAS and libm do not (OPENBLAS_CORETYPE is
#: never touched: some OpenBLAS builds compute wrong results under a forced core type).
CPU_CONFIGS: dict[str, tuple[dict[str, str], str]] = {
    "native": ({}, "this machine as it is"),
    "npy-avx2": ({"NPY_DISABLE_CPU_FEATURES": _NPY_NO_AVX512},
                 "numpy without its AVX-512 paths (the AVX2 + FMA paths of most laptops)"),
    "npy-sse": ({"NPY_DISABLE_CPU_FEATURES": _NPY_NO_AVX2},
                "numpy on its SSE4.2 baseline (no AVX2, FMA or AVX-512 paths)"),
    "numba-generic": ({"NUMBA_CPU_NAME": "generic"},
                      "numba code for a generic x86-64 CPU (no FMA, no AVX: no fused multiply-adds)"),
    "haswell": ({"NPY_DISABLE_CPU_FEATURES": _NPY_NO_AVX512, "NUMBA_CPU_NAME": "haswell",
                 "NUMBA_CPU_FEATURES": ""},
                "an AVX2 + FMA machine without AVX-512 (Intel Haswell to Alder Lake, AMD Zen 1-3): numpy "
                "without AVX-512, numba for Haswell"),
    "generic": ({"NPY_DISABLE_CPU_FEATURES": _NPY_NO_AVX2, "NUMBA_CPU_NAME": "generic"},
                "the farthest: numpy on its baseline and numba for a generic x86-64"),
}
#: what ``test --foreign`` emulates unless told otherwise
FOREIGN_DEFAULT = ("generic",)
#: What CI (``.ci/run``: ``test --foreign-ci``) runs a second time under ``FOREIGN_DEFAULT``, to stay
#: within its time budget (2 cores; times in the README): the notebook whose numbers moved most under
#: emulated CPUs before its choices were made tolerance-stable (01: RankBoost's stumps and the Regression
#: baseline) and the unit tests that pin recorded runs or near-tie choices (among them McRank's and
#: LambdaMART's tree splits, `tests/trees/test_tree_ties.py`, which kept 04 here until CI's time ran short:
#: 04 runs under emulation in ``test --foreign`` and ``spread``).
CI_FOREIGN = {
    "notebooks": ("01_rankboost",),
    "unit": ("tests/models/test_rankboost_plus_speed.py", "tests/baselines/test_baselines_collaborative.py",
             "tests/trees/test_tree_ties.py", "tests/kernels/test_lambdas.py",
             "tests/test_precision_policy.py"),
}


def notebook_order() -> list[str]:
    """The notebooks in the order the tiers run them: 00_index last (it reads the others' results)."""
    books = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))
    return [b for b in books if "/00" not in b] + [b for b in books if "/00" in b]


#: The notebooks the ``notebooks`` tier hands to a worker first, in this order; the rest follow in file
#: order on whichever worker is free. On 2 cores notebook 05 alone bounds the tier (its RankBoost+ task runs,
#: one cell, take about 840 s under nbval): pytest-xdist's own order (most cells first) started it only after
#: 01 or 03 had finished, so the tier lasted their time plus its own.
LONGEST_NOTEBOOKS = ("05_rankboost_plus",)

_KERNEL_MARK = r"^\s*(@pytest\.mark\.kernel\b|pytestmark\s*=.*\bmark\.kernel\b)"


def kernel_test_files() -> list[str]:
    """Test files that mark tests with ``@pytest.mark.kernel`` (decorator or module ``pytestmark``)."""
    import re

    return sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py")
                  if p.parent.name not in ("results", "browser")
                  and re.search(_KERNEL_MARK, p.read_text(encoding="utf-8"), re.M))


def _git_status() -> str | None:
    if not (REPO / ".git").exists():
        return None
    try:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


_COUNT = r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b"


def pytest_counts(text: str) -> dict[str, int]:
    """The counts of pytest's closing summary line (``3 passed, 1 failed, 2 skipped in 4.0s``)."""
    import re

    for line in reversed(text.splitlines()):
        if re.search(r"\b(passed|failed|errors?|skipped|deselected|no tests ran)\b", line) and \
                re.search(r"\bin [\d.]+s\b", line):
            return {("error" if k.startswith("error") else k): int(n) for n, k in re.findall(_COUNT, line)}
    return {}


class TierResult:
    """One tier's outcome: ``status`` ("passed", "FAILED", "skipped"), pytest's counts, wall time, note."""

    def __init__(self, name: str, status: str, seconds: float, counts: dict | None = None, note: str = ""):
        self.name, self.status, self.seconds, self.note = name, status, seconds, note
        self.counts = counts or {}

    def row(self) -> str:
        counts = ", ".join(f"{v} {k}" for k, v in self.counts.items()) or "-"
        return f"{self.name:<24} {self.status:<8} {counts:<44} {self.seconds:7.0f} s  {self.note}"


def _pytest_tier(args: list[str], env: dict) -> tuple[int, dict[str, int]]:
    """Run ``python -m pytest ARGS``, its output streamed as it comes; exit code and closing counts."""
    cmd = [str(PY), *PYTEST, *args]
    _say(" ".join(cmd))
    full = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", OMP_WAIT_POLICY="passive",
                PYDEVD_DISABLE_FILE_VALIDATION="1", PYTHONHASHSEED="0", **env)
    tail: list[str] = []
    with subprocess.Popen(cmd, cwd=REPO, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            tail = (tail + [line])[-200:]
        rc = proc.wait()
    sys.stdout.flush()
    return rc, pytest_counts("".join(tail))


def _rehearsal_tier(out: Path, log: Path | None = None) -> int:
    """``python -m lrank reproduce --profile rehearsal`` with stand-ins and figures in ``out``; exit code.

    Its output goes to ``log`` when given (it then runs alongside other tiers), else to this stdout."""
    cmd = [str(PY), "-m", "lrank", "reproduce", "--profile", "rehearsal", "--data-root",
           str(out / "standins")]
    _say(" ".join(cmd) + (f"  (output to {log})" if log else ""))
    env = dict(os.environ, LRANK_OUTPUT_DIR=str(out), OMP_WAIT_POLICY="passive")
    if log is None:
        return subprocess.run(cmd, cwd=REPO, env=env).returncode
    with open(log, "w", encoding="utf-8") as f:
        return subprocess.run(cmd, cwd=REPO, env=env, stdout=f, stderr=subprocess.STDOUT).returncode


class _Alongside:
    """The rehearsal tier run in a thread while the emulated-CPU tiers run.

    The rehearsal runs its notebooks one after another, about one core busy; the foreign notebooks tier
    is one nbval process as well. On two cores the two side by side take about the time of the longer,
    not the sum. Its output is printed when it has finished, and its row keeps its place in the summary
    table."""

    def __init__(self, out: Path, name: str):
        import threading
        import time

        self.name, self.log, self.rc = name, out / "rehearsal.log", 1
        self.t0 = time.perf_counter()
        self.seconds = 0.0

        def run() -> None:
            try:
                self.rc = _rehearsal_tier(out, self.log)
            finally:
                self.seconds = time.perf_counter() - self.t0

        self.thread = threading.Thread(target=run, name=name, daemon=True)
        self.thread.start()

    def join(self) -> TierResult:
        self.thread.join()
        if self.log.exists():
            _say(f"== tier {self.name}: its output ({self.log})")
            sys.stdout.write(self.log.read_text(encoding="utf-8", errors="replace"))
        status = "FAILED" if self.rc else "passed"
        _say(f"tier {self.name}: {status} in {self.seconds:.0f} s (alongside the emulated-CPU tiers)")
        return TierResult(self.name, status, self.seconds, note=(f"exit code {self.rc}; " if self.rc else "")
                          + "alongside the emulated-CPU tiers")


def _tier_args(tier: str, out: Path, config: str, notebooks: list[str], unit: list[str] | None,
               ) -> tuple[list[str] | None, dict[str, str], str]:
    """pytest arguments and environment of one tier (``None``: not a pytest tier)."""
    env = {"LRANK_OUTPUT_DIR": str(out), "LRANK_PROFILE": "quick", **CPU_CONFIGS[config][0]}
    if tier == "unit":
        return ([*_xdist(), *unit] if unit else [*_xdist(), "tests", "--ignore=tests/results",
                                                  "--ignore=tests/browser"]), env, ""
    if tier == "kernel":
        files = kernel_test_files()
        if not files:
            return None, env, "no test file marks @pytest.mark.kernel yet"
        return [*_xdist(), "-m", "kernel", *files], {**env, "NUMBA_DISABLE_JIT": "1"}, ""
    if tier == "notebooks":  # each notebook on one worker, its cells in order; 00_index after (`test`)
        first = [b for b in notebooks if Path(b).stem in LONGEST_NOTEBOOKS]
        books = [*first, *(b for b in notebooks if b not in first)]
        xd = _xdist(len(books), "loadfile")
        return [*xd, *(["--no-loadscope-reorder"] if xd else []), *NBVAL, *books], env, ""
    if tier == "results":
        if len(notebooks) == len(notebook_order()):
            return ["tests/results"], env, ""
        stems = [Path(b).stem for b in notebooks]  # the result tests of the notebooks that ran
        return ["tests/results", "-k", " or ".join(stems)], env, f"only {', '.join(stems)}"
    if tier == "browser":  # JupyterLab's pages and the book's: each test file on a worker
        shots = {"LRANK_SCREENSHOTS": str(out / "shots")}  # <notebook>.png and <page>.html.png: no clash
        return [*_xdist(2, "loadfile"), "-rs", "tests/browser"], {**env, **shots}, ""
    raise ValueError(tier)


def test(tiers: list[str] | None = None, foreign: tuple[str, ...] = (), ci_foreign: bool = False,
         foreign_only: bool = False) -> int:
    """Run the test tiers (all by default), every one even when an earlier one failed.

    Then, for each configuration in ``foreign`` (names of :data:`CPU_CONFIGS`), the unit, notebooks and
    results tiers again under that emulated CPU, against the same stored outputs and goldens (with
    ``ci_foreign``, only the tests and notebooks of :data:`CI_FOREIGN`). Prints a summary table of every
    tier (status, pytest's counts, wall time) and returns 1 when any tier failed, else 0. With
    ``foreign_only`` the native tiers are left out (they are what CI runs; a long run of every emulated
    configuration need not repeat them).
    """
    import shutil
    import tempfile
    import time

    tiers = list(tiers or TIERS)
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise SystemExit(f"unknown tier(s) {unknown}; tiers are {', '.join(TIERS)}")
    bad = [c for c in foreign if c not in CPU_CONFIGS or c == "native"]
    if bad:
        raise SystemExit(f"--foreign: unknown CPU configuration(s) {bad}; known: "
                         f"{', '.join(c for c in CPU_CONFIGS if c != 'native')}")
    if foreign and not _x86_64():
        raise SystemExit(f"--foreign emulates other x86-64 CPUs (numpy's x86 dispatch targets, numba's x86 "
                         f"CPU names); this machine is {platform_machine()}")
    ensure_venv()
    _run([PY, "-m", "numba", "-s"], ok=tuple(range(256)))
    _run([PY, "-m", "lrank", "fetch", "mslr-sample"], ok=tuple(range(256)))
    before = _git_status()
    out = Path(os.environ.get("LRANK_TEST_OUTPUT") or tempfile.mkdtemp(prefix="lrank-test-"))
    _say(f"figures and recorded results of this run go to {out}")
    plan = [] if foreign_only else [(t, "native") for t in TIERS if t in tiers and t != "git"]
    plan += [(t, c) for c in foreign for t in FOREIGN_TIERS if t in tiers]
    done: list[TierResult] = []
    alongside: tuple[int, _Alongside] | None = None  # (its row's place in `done`, the running tier)
    t_start = time.perf_counter()
    for i, (tier, config) in enumerate(plan):
        name = tier if config == "native" else f"{tier}@{config}"
        sub = out if config == "native" else out / f"foreign-{config}"
        books = notebook_order()
        unit = None
        if config != "native" and ci_foreign:
            books = [b for b in books if Path(b).stem in CI_FOREIGN["notebooks"]]
            unit = list(CI_FOREIGN["unit"])
        _say(f"== tier {name}" + (f" ({CPU_CONFIGS[config][1]}: {CPU_CONFIGS[config][0]})"
                                   if config != "native" else ""))
        t0 = time.perf_counter()
        if tier == "rehearsal" and any(c != "native" for _, c in plan[i + 1:]):
            alongside = (len(done), _Alongside(out, name))  # joined before the git tier
            continue
        if tier == "rehearsal":  # the paper profile's code path on stand-ins, into the run's folder
            rc = _rehearsal_tier(out)
            status = "FAILED" if rc else "passed"
            done.append(TierResult(name, status, time.perf_counter() - t0,
                                   note=f"exit code {rc}" if rc else ""))
            _say(f"tier {name}: {status} in {done[-1].seconds:.0f} s")
            continue
        # 00_index reads the others' results: the others first (on the workers), then it alone
        last = [b for b in books if "/00" in b] if tier == "notebooks" and len(books) > 1 else []
        args, env, note = _tier_args(tier, sub, config, [b for b in books if b not in last], unit)
        if args is None:
            _say(f"!! tier {name}: {note}; SKIPPED")
            done.append(TierResult(name, "skipped", time.perf_counter() - t0, note=note))
            continue
        rc, counts = _pytest_tier(args, env)
        if last:
            rc_last, counts_last = _pytest_tier([*NBVAL, *last], env)
            rc = rc or rc_last
            keys = dict.fromkeys([*counts, *counts_last])  # in pytest's order
            counts = {k: counts.get(k, 0) + counts_last.get(k, 0) for k in keys}
        failed = rc != 0 or (tier != "browser" and not counts.get("passed"))
        if rc == 5:
            note = (note + "; " if note else "") + "no tests collected (exit code 5)"
        elif rc and not counts:
            note = (note + "; " if note else "") + f"exit code {rc}"
        skipped_all = tier == "browser" and rc == 0 and not counts.get("passed") and counts.get("skipped")
        status = "skipped" if skipped_all else ("FAILED" if failed else "passed")
        done.append(TierResult(name, status, time.perf_counter() - t0, counts, note))
        _say(f"tier {name}: {status} in {done[-1].seconds:.0f} s")
    if alongside is not None:
        done.insert(alongside[0], alongside[1].join())
    if "git" in tiers and not foreign_only:
        t0 = time.perf_counter()
        after, note, status = _git_status(), "", "passed"
        if before is None:
            status, note = "skipped", "not a git checkout"
        elif after != before:
            changed = sorted(set(after.splitlines()) ^ set(before.splitlines()))
            status, note = "FAILED", "the tests changed the checkout: " + "; ".join(changed[:5])
            _say("the tests changed the checkout:\n  " + "\n  ".join(changed))
        done.append(TierResult("git", status, time.perf_counter() - t0, note=note))
    total = time.perf_counter() - t_start  # wall time: the rehearsal may overlap other tiers
    failed = [r.name for r in done if r.status == "FAILED"]
    print("\n" + "=" * 100)
    print(f"{'tier':<24} {'status':<8} {'counts':<44} {'time':>9}")
    for r in done:
        print(r.row())
    print(f"{'total':<24} {'FAILED' if failed else 'passed':<8} {'':<44} {total:7.0f} s")
    print("=" * 100, flush=True)
    if failed:
        _say(f"{len(failed)} tier(s) failed: {', '.join(failed)}")
    if "LRANK_TEST_OUTPUT" not in os.environ:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failed else 0


#: the configurations ``spread`` measures by default (every entry of CPU_CONFIGS but the reference)
SPREAD_DEFAULT = ("npy-avx2", "npy-sse", "numba-generic", "haswell", "generic")


def _papermill(nb: str | Path, out: str | Path, cwd: str | Path) -> list[str]:
    """The command that runs one notebook with papermill (python3 kernel, working directory ``cwd``) into
    ``out``, its kernel started as ``python -m lrank reproduce`` starts it (encrypted sockets where pyzmq
    has CurveZMQ, so no plain-text warning per notebook); exit code 1 with the cell's traceback if a cell
    fails."""
    code = ("import sys, papermill; from lrank.__main__ import _kernel_options; "
            "papermill.execute_notebook(sys.argv[1], sys.argv[2], kernel_name='python3', cwd=sys.argv[3], "
            "progress_bar=False, log_output=False, **_kernel_options())")
    return [str(PY), "-c", code, str(nb), str(out), str(cwd)]


def spread(configs: tuple[str, ...] = SPREAD_DEFAULT, only: list[str] | None = None, keep: str | None = None,
           table: str | None = None, allow_stale: bool = False) -> int:
    """Measure how far every recorded number moves between CPUs; write ``tests/golden/spread/``.

    Runs every notebook (quick profile, papermill) natively and under each emulated configuration of
    ``configs`` (:data:`CPU_CONFIGS`), each run into its own folder (``keep``, else a temporary one that
    is removed afterwards; with ``keep`` a notebook already run there is not rerun), then
    :func:`lrank.results.collect_spread` writes the spread of every recorded name, which ``python -m
    lrank accept`` turns into the golden tolerances. Takes 1 + len(configs) runs of every notebook.
    """
    import shutil
    import tempfile

    bad = [c for c in configs if c not in CPU_CONFIGS or c == "native"]
    if bad:
        raise SystemExit(f"spread: unknown CPU configuration(s) {bad}; known: {', '.join(CPU_CONFIGS)}")
    if not _x86_64():
        raise SystemExit(f"spread emulates other x86-64 CPUs; this machine is {platform_machine()}")
    ensure_venv()
    _run([PY, "-m", "lrank", "fetch", "mslr-sample"])
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="lrank-spread-"))
    books = notebook_order()
    if only:
        books = [b for b in books if any(o in Path(b).stem for o in only)]
        if not books:
            raise SystemExit(f"spread: no notebook matches {only}")
    failed = []
    for config in ("native", *configs):
        env_cpu = CPU_CONFIGS[config][0]
        for nb in books:
            out = work / config / "notebooks" / Path(nb).name
            if out.is_file():
                _say(f"{config} {nb}: already run in {out.parent}")
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            running = out.with_name(f".{out.stem}.running.ipynb")
            _say(f"{config} ({env_cpu}): {nb}")
            env = dict(os.environ, LRANK_OUTPUT_DIR=str(work / config), LRANK_PROFILE="quick",
                       OMP_WAIT_POLICY="passive", PYTHONHASHSEED="0", PYDEVD_DISABLE_FILE_VALIDATION="1",
                       **env_cpu)
            rc = subprocess.call(_papermill(nb, running, "notebooks"), cwd=REPO, env=env)
            if rc:
                failed.append(f"{nb} under {config}")
                _say(f"!! {nb} failed under {config} (exit code {rc}); its run is in {running}")
            else:
                os.replace(running, out)
    stems = [Path(b).stem for b in books]
    cfgs = ["native", *configs]
    code = ("import json, sys; from pathlib import Path; from lrank.results import collect_spread; "
            "a = json.loads(sys.argv[1]); sys.exit(collect_spread(Path(a['work']), a['configs'], "
            "a['notebooks'], a['env'], a['allow_stale'], Path(a['table']) if a['table'] else None))")
    import json

    arg = json.dumps({"work": str(work), "configs": cfgs, "notebooks": stems, "allow_stale": allow_stale,
                      "env": {c: CPU_CONFIGS[c][0] for c in cfgs}, "table": table})
    rc = _run([PY, "-c", code, arg], ok=(0, 1))
    if failed:
        _say("notebooks that failed: " + "; ".join(failed))
    if not keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    elif failed:
        _say(f"the runs are kept in {work}")
    return 1 if (rc or failed) else 0


def platform_machine() -> str:
    import platform

    return platform.machine()


def _x86_64() -> bool:
    return platform_machine().lower() in ("x86_64", "amd64")


MUTATIONS = {
    # name: (file, the line as it is, the line mutated, what it changes)
    "rankboost-alpha": ("lrank/models/rankboost.py",
                        "return 0.5 * float(np.log((1.0 + r) / (1.0 - r)))",
                        "return 0.45 * float(np.log((1.0 + r) / (1.0 - r)))",
                        "RankBoost's third alpha (Eq. 6) 1/2 ln((1+r)/(1-r)) -> 0.45 ln(...)"),
    "adarank-tie-order": ("lrank/_kernels/adarank.py",
                          "for c in range(phi.size):  # the lowest index within TIE_TOL of the best",
                          "for c in range(phi.size - 1, -1, -1):  # the lowest index within TIE_TOL of the "
                          "best",
                          "AdaRank's weak-ranker tie order: ties to the highest candidate, not the lowest"),
    "adarank-alpha": ("lrank/models/adarank.py", "alpha = 0.5 * math.log(num / den)  # Fig. 1: alpha_t",
                      "alpha = 0.45 * math.log(num / den)  # Fig. 1: alpha_t",
                      "AdaRank's alpha_t = 1/2 ln(...) -> 0.45 ln(...)"),
    "ndcg-discount": ("lrank/_kernels/metrics.py", "return 1.0 / math.log2(pos + 1.0)",
                      "return 1.0 / math.log2(pos + 1.5)", "the NDCG discount 1/log2(i+1) -> 1/log2(i+1.5)"),
    "rankboost-eps": ("lrank/models/rankboost.py", "eps = 1.0 / (2.0 * m) if m else 0.0",
                      "eps = 1.0 / (4.0 * m) if m else 0.0",
                      "RankBoost's alpha smoothing eps = 1/(2m) -> 1/(4m)"),
}


def mutate(mutation: str = "rankboost-alpha", notebook: str = "02_adarank") -> int:
    """Demonstrate that the golden test catches a wrong kernel constant.

    Copies the tracked files of the checkout to a temporary folder; there runs ``notebook`` once,
    pins its numbers (``python -m lrank accept``) and runs its golden test (must pass); then applies
    ``mutation`` (one line of one kernel or model file, :data:`MUTATIONS`), reruns the notebook and the
    golden test, which must fail. Returns 0 when the mutant was killed (the golden test went red, or the
    notebook's own checks stopped it first, which the notebooks tier of CI reports the same way), 1 when
    it survived.
    """
    import shutil
    import tempfile

    if mutation not in MUTATIONS:
        raise SystemExit(f"unknown mutation {mutation!r}; known: {', '.join(MUTATIONS)}")
    path, old, new, what = MUTATIONS[mutation]
    work = Path(tempfile.mkdtemp(prefix="lrank-mutate-"))
    repo = work / "repo"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / rel)
    if (REPO / "data").is_dir():  # fetched data (not tracked) is read from the checkout's data folder
        os.environ.setdefault("LRANK_DATA", str(REPO / "data"))
    env = dict(os.environ, LRANK_OUTPUT_DIR=str(work / "out"), LRANK_PROFILE="quick", PYTHONPATH=str(repo),
               OMP_WAIT_POLICY="passive", PYTHONHASHSEED="0")
    nb = repo / "notebooks" / f"{notebook}.ipynb"
    golden_test = [str(PY), *PYTEST, "tests/results/test_golden.py", "-k", notebook]

    def run(cmd: list[str]) -> int:
        _say(" ".join(cmd))
        return subprocess.call(cmd, cwd=repo, env=env)

    def run_notebook() -> int:
        return run(_papermill(nb, work / "out.ipynb", nb.parent))

    _say(f"copy of the checkout in {repo}; step 1: {notebook} unchanged, its numbers pinned")
    if run_notebook():
        raise SystemExit(f"{notebook} failed to run unchanged in {repo}")
    env_accept = [str(PY), "-m", "lrank", "accept", "--only", notebook]
    if run(env_accept) or run(golden_test):
        _say("the golden test fails on the unchanged copy: no demonstration possible")
        return 1
    target = repo / path
    text = target.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise SystemExit(f"mutation {mutation!r}: {old!r} not found exactly once in {path}")
    target.write_text(text.replace(old, new), encoding="utf-8")
    _say(f"step 2: mutation {mutation}: {what} ({path}); rerun {notebook}")
    if run_notebook():
        _say(f"mutant killed: {notebook}'s own checks failed with {what} (the notebooks tier goes red)")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    rc = run(golden_test)
    shutil.rmtree(work, ignore_errors=True)
    if rc == 0:
        _say(f"MUTANT SURVIVED: the golden test of {notebook} passed with {what}")
        return 1
    _say(f"mutant killed: the golden test of {notebook} failed with {what} (exit {rc})")
    return 0


def _configs(text: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(",") if c.strip())


def main(argv: list[str] | None = None) -> int:
    import argparse

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("test", "reproduce", "setup", "mutate", "spread"):
        print(__doc__)
        return 2
    os.environ.setdefault("LRANK_PROFILE", "quick")
    if args[0] == "test":
        p = argparse.ArgumentParser(prog="python -m lrank.dev test")
        p.add_argument("tiers", nargs="*", help=f"tiers to run (default all): {', '.join(TIERS)}")
        p.add_argument("--foreign", nargs="?", const=",".join(FOREIGN_DEFAULT), default="", metavar="CONFIGS",
                       help="then run the unit, notebooks and results tiers again under emulated CPU "
                            f"configuration(s) (comma-separated; default {','.join(FOREIGN_DEFAULT)}; known: "
                            f"{', '.join(c for c in CPU_CONFIGS if c != 'native')})")
        p.add_argument("--foreign-ci", action="store_true",
                       help="as --foreign, only the unit tests and notebooks of CI_FOREIGN (CI runs this)")
        p.add_argument("--foreign-only", action="store_true",
                       help="with --foreign: only the emulated runs, not the native tiers before them")
        a = p.parse_args(args[1:])
        foreign = _configs(a.foreign) or (FOREIGN_DEFAULT if a.foreign_ci else ())
        if a.foreign_only and not foreign:
            p.error("--foreign-only needs --foreign CONFIGS (or --foreign-ci)")
        return test(a.tiers or None, foreign=foreign, ci_foreign=a.foreign_ci, foreign_only=a.foreign_only)
    if args[0] == "spread":
        p = argparse.ArgumentParser(prog="python -m lrank.dev spread")
        p.add_argument("--configs", default=",".join(SPREAD_DEFAULT), help="emulated CPU configurations "
                       f"(comma-separated; default {','.join(SPREAD_DEFAULT)})")
        p.add_argument("--only", nargs="+", help="only the notebooks whose name contains one of these")
        p.add_argument("--keep", help="run into this folder and keep it (notebooks run there are reused)")
        p.add_argument("--table", help="also write a Markdown table of every moved name per configuration")
        p.add_argument("--allow-stale", action="store_true", help="accept runs written by other code")
        a = p.parse_args(args[1:])
        return spread(_configs(a.configs), a.only, a.keep, a.table, a.allow_stale)
    if args[0] == "reproduce":
        reproduce(args[1] if len(args) > 1 else "quick")
    elif args[0] == "mutate":
        ensure_venv()
        return mutate(*args[1:3])
    else:
        ensure_venv()
    return 0


if __name__ == "__main__":
    sys.exit(main())
