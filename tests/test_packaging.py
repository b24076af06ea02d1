"""environment.yml names the same packages and versions as pyproject.toml; the CLI answers."""

import pathlib
import re
import subprocess
import sys
import tomllib

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
# conda-forge spells three packages differently from PyPI
CONDA_TO_PIP = {"dask": "dask[distributed]", "distributed": "dask[distributed]",
                "jupyter_client": "jupyter-client"}


def _pyproject_pins() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in meta["optional-dependencies"].values():
        reqs += extra
    pins = {}
    for r in reqs:
        name, version = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([\w.]+)", r).groups()
        pins[name.lower()] = version
    return pins


def _environment_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "conda-forge" in env["channels"]
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for p in dep["pip"]:
                if p.startswith("-e"):
                    continue
                name, version = p.split("==")
                pins[name.lower()] = version
        elif dep.startswith("python="):
            assert dep == "python=3.11"
        elif "=" in dep:
            name, version = dep.split("=")
            pins[CONDA_TO_PIP.get(name, name).lower()] = version
    return pins


def test_every_dependency_is_pinned_exactly():
    assert all(v for v in _pyproject_pins().values())


def test_environment_yml_matches_pyproject():
    assert _environment_pins() == _pyproject_pins()


def test_the_licence_is_an_spdx_expression_setuptools_accepts():
    """PEP 639: ``project.license`` is an SPDX expression string. setuptools warns that the older table
    form (``{ text = ... }``) stops building after 2027-02-18, and a build backend that reads the string form
    (setuptools >= 77) is required."""
    from packaging.licenses import canonicalize_license_expression
    from packaging.requirements import Requirement

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    licence = meta["project"]["license"]
    assert isinstance(licence, str), f"project.license must be an SPDX string, got {licence!r}"
    assert canonicalize_license_expression(licence) == licence
    backend = {Requirement(r).name: Requirement(r) for r in meta["build-system"]["requires"]}["setuptools"]
    assert not backend.specifier.contains("76.9"), f"setuptools before 77 cannot read it: {backend}"


def test_environment_installs_lrank_itself():
    assert "-e ." in (ROOT / "environment.yml").read_text()


def test_cli_help_and_info():
    out = subprocess.run([sys.executable, "-m", "lrank", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for command in ("reproduce", "accept", "site", "fetch", "info", "bench"):
        assert command in out.stdout
    out = subprocess.run([sys.executable, "-m", "lrank", "info"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "numba threads" in out.stdout


def test_info_says_how_to_get_absent_data(tmp_path):
    """With an empty data root every data set is absent: info prints the one fetch command for the
    downloadable ones, and points the by-hand ones (Yahoo!) to fetch's instructions."""
    import os

    from lrank.data.fetch import REGISTRY

    env = dict(os.environ, LRANK_DATA=str(tmp_path / "data"), LRANK_OUTPUT_DIR=str(tmp_path / "out"))
    out = subprocess.run([sys.executable, "-m", "lrank", "info"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "out").exists(), "info names the output folder; it creates nothing"
    auto = [n for n, ds in REGISTRY.items() if ds.method != "manual"]
    assert f"to download the absent ones: python -m lrank fetch {' '.join(auto)}" in out.stdout
    assert "yahoo-ltr cannot be downloaded for you: python -m lrank fetch yahoo-ltr says how" in out.stdout


def test_import_is_light():
    code = "import sys, lrank; print('numba' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_readme_library_example_runs():
    from lrank.data.fetch import status

    st = status()
    if st.loc[st["dataset"] == "mslr-sample", "status"].iloc[0] != "present":
        import pytest

        pytest.skip("the MSLR sample is not fetched here (python -m lrank fetch mslr-sample)")
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Three lines of lrank\s+```python\n(.*?)```", text, re.S).group(1)
    assert len([line for line in block.splitlines() if line.strip()]) == 3
    out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "ndcg@10" in out.stdout



def test_readme_api_example_runs_as_written(tmp_path):
    """The "API at a glance" block runs as printed (its names defined in the block, the estimator and
    `load_model` imported from `lrank` itself) and its reloaded model scores as the fitted one."""
    from lrank.data.fetch import status

    st = status()
    if st.loc[st["dataset"] == "mslr-sample", "status"].iloc[0] != "present":
        import pytest

        pytest.skip("the MSLR sample is not fetched here (python -m lrank fetch mslr-sample)")
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## API at a glance.*?```python\n(.*?)```", text, re.S).group(1)
    assert "from lrank import LambdaMART, load_model" in block
    check = block + "assert model.score(test) == load_model('lambdamart.npz').score(test)\n"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    best, ndcg = out.stdout.split()
    assert 0 <= int(best) < 500 and 0.0 < float(ndcg) <= 1.0
    assert (tmp_path / "lambdamart.npz").is_file()
    # the next block (GridSearchCV under metadata routing) continues this one and runs as printed
    routed = re.search(r"## API at a glance.*?```python\n.*?```.*?```python\n(.*?)```", text, re.S).group(1)
    assert "set_score_request(qid=True)" in routed
    out = subprocess.run([sys.executable, "-c", block + routed], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "learning_rate" in out.stdout.splitlines()[-1]

def test_reproduce_outside_a_checkout_fails_with_a_message(tmp_path, monkeypatch):
    import pytest

    import lrank.paths
    from lrank.__main__ import _notebooks

    monkeypatch.setattr(lrank.paths, "notebooks_dir", lambda: tmp_path)
    with pytest.raises(SystemExit, match="no notebooks in"):
        _notebooks(None)


def test_dev_tiers_run_the_index_last_and_find_kernel_tests():
    from lrank import dev

    order = dev.notebook_order()
    assert order and order[-1].endswith("00_index.ipynb") and order == sorted(order[:-1]) + order[-1:]
    for f in dev.kernel_test_files():
        assert re.search(dev._KERNEL_MARK, (ROOT / f).read_text(), re.M)
    assert "tests/test_packaging.py" not in dev.kernel_test_files()  # naming the mark is not using it
    assert dev.TIERS == ("unit", "kernel", "notebooks", "results", "browser", "rehearsal", "git")


def test_dev_mutations_apply_to_the_current_sources():
    """Each documented mutation still finds its line exactly once (else `mutate` could not run)."""
    from lrank import dev

    for name, (path, old, new, _) in dev.MUTATIONS.items():
        assert (ROOT / path).read_text().count(old) == 1, f"mutation {name}: {old!r} not in {path}"
        assert old != new
