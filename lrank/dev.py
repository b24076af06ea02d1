"""The two commands of a fresh machine, with nothing but Python >= 3.11 and pip.

    python3.11 -m lrank.dev reproduce   # set up .venv, fetch the MSLR sample, rerun every notebook (quick)
    python3.11 -m lrank.dev test        # set up .venv, then the CI tiers (below)
    python3.11 -m lrank.dev test unit notebooks   # only some tiers
    python3.11 -m lrank.dev mutate [MUTATION [NOTEBOOK]]   # a wrong constant turns the golden test red
                                        # (default: rankboost-alpha on 02_adarank; names in MUTATIONS)

The tiers of ``test`` (DESIGN "CI, in tiers"), each timed:

1. ``unit``: ``pytest tests`` (not the result and browser tests); exit code 5 ("no tests") fails.
2. ``kernel``: ``NUMBA_DISABLE_JIT=1 pytest -m kernel`` over the test files that mark kernel-vs-reference
   tests with ``@pytest.mark.kernel`` (said loudly and skipped while no file marks one).
3. ``notebooks``: every notebook once under nbval (``--nbval-lax``, the sanitiser) in the quick
   profile with ``LRANK_OUTPUT_DIR`` a temporary folder, so figures and recorded results go there.
4. ``results``: ``pytest tests/results`` on the results of *this* run: the per-notebook checks and
   the golden comparison (``tests/golden/``, rewritten only by ``python -m lrank accept``).
5. ``browser``: each stored notebook opened in JupyterLab in headless Chromium (skipped, loudly,
   without Debian's ``chromium`` + ``chromium-driver``).
6. ``git``: ``git status --porcelain`` is what it was before the tiers (running the tests changes
   no tracked file).
7. ``rehearsal``: ``python -m lrank reproduce --profile rehearsal``: every notebook through the paper
   profile's code path on stand-in files with the budgets scaled down (`lrank.papers.budgets`), the
   stand-ins and figures in the run's temporary folder; needs Stockfish (Debian ``stockfish``) for the chess
   sets. Runs before ``git``.

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
PYTEST = ["-m", "pytest", "-p", "no:cacheprovider", "-q"]


def notebook_order() -> list[str]:
    """The notebooks in the order the tiers run them: 00_index last (it reads the others' results)."""
    books = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))
    return [b for b in books if "/00" not in b] + [b for b in books if "/00" in b]


_KERNEL_MARK = r"^\s*(@pytest\.mark\.kernel\b|pytestmark\s*=.*\bmark\.kernel\b)"


def kernel_test_files() -> list[str]:
    """Test files that mark tests with ``@pytest.mark.kernel`` (decorator or module ``pytestmark``)."""
    import re

    return sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests").glob("test_*.py")
                  if re.search(_KERNEL_MARK, p.read_text(encoding="utf-8"), re.M))


def _git_status() -> str | None:
    if not (REPO / ".git").exists():
        return None
    try:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def test(tiers: list[str] | None = None) -> None:
    """Run the CI tiers (all by default) and print each one's wall time."""
    import shutil
    import tempfile
    import time

    tiers = list(tiers or TIERS)
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise SystemExit(f"unknown tier(s) {unknown}; tiers are {', '.join(TIERS)}")
    ensure_venv()
    _run([PY, "-m", "numba", "-s"], ok=tuple(range(256)))
    _run([PY, "-m", "lrank", "fetch", "mslr-sample"])
    before = _git_status()
    out = Path(os.environ.get("LRANK_TEST_OUTPUT") or tempfile.mkdtemp(prefix="lrank-test-"))
    env = {"LRANK_OUTPUT_DIR": str(out), "LRANK_PROFILE": "quick"}
    _say(f"figures and recorded results of this run go to {out}")
    times: dict[str, float] = {}
    for tier in TIERS:
        if tier not in tiers:
            continue
        t0 = time.perf_counter()
        _say(f"== tier {tier}")
        if tier == "unit":
            _run([PY, *PYTEST, "tests", "--ignore=tests/results", "--ignore=tests/browser"], env=env)
        elif tier == "kernel":
            files = kernel_test_files()
            if not files:
                _say("!! kernel tier: no test file marks @pytest.mark.kernel yet; SKIPPED")
            else:
                _run([PY, *PYTEST, "-m", "kernel", *files], env={**env, "NUMBA_DISABLE_JIT": "1"})
        elif tier == "notebooks":
            _run([PY, *PYTEST, *NBVAL, *notebook_order()], env=env)
        elif tier == "results":
            _run([PY, *PYTEST, "tests/results"], env=env)
        elif tier == "browser":
            _run([PY, *PYTEST, "-rs", "tests/browser"], env={**env, "LRANK_SCREENSHOTS": str(out / "shots")})
        elif tier == "rehearsal":  # the paper profile's code path on stand-ins, into the run's folder
            _run([PY, "-m", "lrank", "reproduce", "--profile", "rehearsal", "--data-root",
                  str(out / "standins")], env=env)
        elif tier == "git":
            after = _git_status()
            if before is None:
                _say("not a git checkout: git-clean check skipped")
            elif after != before:
                changed = sorted(set(after.splitlines()) ^ set(before.splitlines()))
                _say("the tests changed the checkout:\n  " + "\n  ".join(changed))
                raise SystemExit(1)
        times[tier] = time.perf_counter() - t0
        _say(f"tier {tier}: {times[tier]:.0f} s")
    _say("wall time per tier: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items())
         + f"; total {sum(times.values()):.0f} s")
    if "LRANK_TEST_OUTPUT" not in os.environ:
        shutil.rmtree(out, ignore_errors=True)


MUTATIONS = {
    # name: (file, the line as it is, the line mutated, what it changes)
    "rankboost-alpha": ("lrank/models/rankboost.py",
                        "return 0.5 * float(np.log((1.0 + r) / (1.0 - r)))",
                        "return 0.45 * float(np.log((1.0 + r) / (1.0 - r)))",
                        "RankBoost's third alpha (Eq. 6) 1/2 ln((1+r)/(1-r)) -> 0.45 ln(...)"),
    "adarank-tie-order": ("lrank/_kernels/adarank.py", "if allowed[c] and phi[c] > best_phi:",
                          "if allowed[c] and phi[c] >= best_phi:",
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
        return run([str(PY), "-m", "papermill", str(nb), str(work / "out.ipynb"), "-k", "python3", "--cwd",
                    str(nb.parent), "--no-progress-bar"])

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


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("test", "reproduce", "setup", "mutate"):
        print(__doc__)
        return 2
    os.environ.setdefault("LRANK_PROFILE", "quick")
    if args[0] == "test":
        test(args[1:] or None)
    elif args[0] == "reproduce":
        reproduce(args[1] if len(args) > 1 else "quick")
    elif args[0] == "mutate":
        ensure_venv()
        return mutate(*args[1:3])
    else:
        ensure_venv()
    return 0


if __name__ == "__main__":
    sys.exit(main())
