"""``import lrank`` exposes every estimator, lazily: the import itself loads neither numpy nor a model."""

import subprocess
import sys

import lrank
import lrank.models


def test_every_estimator_is_importable_from_lrank():
    for name in lrank.models._WHERE:
        assert getattr(lrank, name) is getattr(lrank.models, name), name
    assert set(lrank.models._WHERE) <= set(lrank.__all__) and set(lrank.__all__) <= set(dir(lrank))
    from lrank import LambdaMART, RegressionTree  # noqa: F401 - the names users type

    try:
        lrank.NoSuchEstimator  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchEstimator" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_import_lrank_loads_nothing_heavy():
    code = ("import sys, lrank; "
            "print(sorted(m for m in ('numpy', 'numba', 'lrank.models.gbrt') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
