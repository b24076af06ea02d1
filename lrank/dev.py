"""The two commands of a fresh machine, with nothing but Python >= 3.11 and pip.

    python3.11 -m lrank.dev reproduce   # set up .venv, fetch the MSLR sample, rerun every notebook (quick)
    python3.11 -m lrank.dev test        # set up .venv, run unit tests, notebooks under nbval, result tests

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


def _run(cmd: list[str], ok: tuple[int, ...] = (0,)) -> int:
    _say(" ".join(str(c) for c in cmd))
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", OMP_WAIT_POLICY="passive",
               MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1")
    rc = subprocess.call([str(c) for c in cmd], cwd=REPO, env=env)
    if rc not in ok:
        _say(f"failed with exit code {rc}")
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


def test() -> None:
    ensure_venv()
    _run([PY, "-m", "numba", "-s"], ok=tuple(range(256)))
    _run([PY, "-m", "lrank", "fetch", "mslr-sample"])
    # Tier 1: unit, kernel-vs-reference and oracle tests (exit code 5, "no tests", is a failure).
    _run([PY, "-m", "pytest", "-p", "no:cacheprovider", "tests", "--ignore=tests/results", "-q"])
    # Tiers 2-3: every notebook in the quick profile under nbval; it writes the recorded numbers ...
    _run([PY, "-m", "pytest", "-p", "no:cacheprovider", *NBVAL, "notebooks", "-q"])
    # ... which the result tests then assert.
    _run([PY, "-m", "pytest", "-p", "no:cacheprovider", "tests/results", "-q"], ok=(0, 5))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("test", "reproduce", "setup"):
        print(__doc__)
        return 2
    os.environ.setdefault("LRANK_PROFILE", "quick")
    if args[0] == "test":
        test()
    elif args[0] == "reproduce":
        reproduce(args[1] if len(args) > 1 else "quick")
    else:
        ensure_venv()
    return 0


if __name__ == "__main__":
    sys.exit(main())
