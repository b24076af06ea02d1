"""Model files are data, never code: `load_model` resolves only the classes of an allow-list, refuses a
damaged or foreign file with one message naming it, and `save_model` never destroys the previous model."""

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lrank.data import make_letor_like
from lrank.models._base import MODEL_CLASSES, ModelFileError, load_model
from lrank.models.rankboost import RankBoost


@pytest.fixture(scope="module")
def data():
    return make_letor_like(n_queries=5, docs_per_query=(4, 8), n_features=3, random_state=0)


@pytest.fixture()
def saved(data, tmp_path):
    return RankBoost(n_estimators=3).fit(data).save_model(tmp_path / "good.npz")


def _contents(path: Path) -> tuple[dict, dict]:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(str(arrays.pop("__header__"))), arrays


def _write(path: Path, header: dict, arrays: dict) -> Path:
    np.savez(path, __header__=np.array(json.dumps(header)), **arrays)
    return path


# ------------------------------------------------------------------------------------ no code runs
def _shell(marker: Path) -> str:
    return f"touch {marker}"


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("where", ["class", "namedtuple", "estimator", "object"])
@pytest.mark.parametrize("target, kwargs", [
    ("lrank.paths:os.system", lambda cmd: {"command": cmd}),
    ("lrank.data.fetch:subprocess.run", lambda cmd: {"args": cmd, "shell": True}),
    ("lrank.models._base:importlib.import_module", lambda cmd: {"name": "this"}),
])
def test_a_model_file_never_runs_code(saved, tmp_path, where, target, kwargs, version):
    """A header naming a function (through any lrank module's imports) anywhere in the file is refused
    before anything is called: the marker file the command would create never appears (also in a file
    of format version 1, which is upgraded as it loads)."""
    marker = tmp_path / "pwned"
    header, arrays = _contents(saved)
    header["format_version"] = version
    params = {"__dict__": [[k, v] for k, v in kwargs(_shell(marker)).items()]}
    if where == "class":
        header["class"], header["params"], header["fitted"] = target, params, {}
    elif where == "namedtuple":
        header["fitted"]["evil_"] = {"__namedtuple__": target, "fields": kwargs(_shell(marker))}
    elif where == "estimator":
        header["fitted"]["evil_"] = {"__estimator__": target, "params": params, "state": {"__dict__": []}}
    else:
        header["fitted"]["evil_"] = {"__object__": target, "state": params}
    bad = _write(tmp_path / "evil.npz", header, arrays)
    with pytest.raises(ModelFileError) as err:
        load_model(bad)
    msg = str(err.value)
    assert str(bad) in msg and repr(target) in msg and "not an lrank model class" in msg
    assert not marker.exists()


def test_every_class_a_model_file_names_is_on_the_allow_list_and_is_a_class():
    import importlib

    for name in MODEL_CLASSES:
        mod, _, qual = name.partition(":")
        assert mod.startswith("lrank.") and "." not in qual, name
        assert isinstance(getattr(importlib.import_module(mod), qual), type), name


def test_saving_a_class_off_the_allow_list_is_refused(data, tmp_path):
    """A new lrank class inside a model must be added to MODEL_CLASSES: saving says so, rather than
    writing a file that no lrank could load."""
    from lrank.weak.stumps import ScaledFeatures

    est = RankBoost(n_estimators=2).fit(data)
    est.stray_ = ScaledFeatures(data.X)
    with pytest.raises(TypeError, match="MODEL_CLASSES"):
        est.save_model(tmp_path / "stray.npz")
    assert not list(tmp_path.glob("*stray*"))


def test_np_load_never_allows_pickles():
    """Every np.load in the package passes allow_pickle=False (a pickle inside an .npz runs code)."""
    root = Path(__file__).resolve().parents[2] / "lrank"
    calls = []
    for py in root.rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        for m in re.finditer(r"\bnp\.load\(", text):
            depth, i = 1, m.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            calls.append((py.name, text[m.start():i]))
    assert calls
    bad = [c for c in calls if "allow_pickle=False" not in c[1]]
    assert not bad, bad


# ----------------------------------------------------------------------------- damaged files
def _truncated(saved, tmp_path):
    p = tmp_path / "truncated.npz"
    b = saved.read_bytes()
    p.write_bytes(b[: len(b) // 2])
    return p


def _flipped(saved, tmp_path):
    """A bit flipped inside a compressed member: the zip is readable, the member is not."""
    p = tmp_path / "flipped.npz"
    b = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as z:
        info = max(z.infolist(), key=lambda i: i.compress_size)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    b[start + info.compress_size // 2] ^= 0xFF
    p.write_bytes(bytes(b))
    return p


def _header_text(text, name):
    def damage(saved, tmp_path):
        _, arrays = _contents(saved)
        p = tmp_path / name
        np.savez(p, __header__=np.array(text), **arrays)
        return p

    damage.__name__ = f"_header_{name}"
    return damage


_header_not_json = _header_text("{not json", "notjson.npz")
_header_a_list = _header_text("[1, 2]", "list.npz")


def _header_missing_class(saved, tmp_path):
    header, arrays = _contents(saved)
    del header["class"]
    return _write(tmp_path / "noclass.npz", header, arrays)


def _array_missing(saved, tmp_path):
    header, arrays = _contents(saved)
    arrays.pop(sorted(arrays)[0])
    return _write(tmp_path / "noarray.npz", header, arrays)


def _empty(saved, tmp_path):
    p = tmp_path / "empty.npz"
    p.write_bytes(b"")
    return p


def _text(saved, tmp_path):
    p = tmp_path / "text.npz"
    p.write_text("hello")
    return p


def _plain_npz(saved, tmp_path):
    p = tmp_path / "plain.npz"
    np.savez(p, a=np.arange(3))
    return p


@pytest.mark.parametrize("damage", [_truncated, _flipped, _header_not_json, _header_missing_class,
                                    _array_missing, _empty, _text, _plain_npz, _header_a_list])
def test_a_damaged_model_file_is_one_clear_error(saved, tmp_path, damage):
    bad = damage(saved, tmp_path)
    with pytest.raises(ModelFileError) as err:
        load_model(bad)
    assert str(err.value).startswith(f"{bad} is not an lrank model file: "), str(err.value)
    assert isinstance(err.value, ValueError)


def _pickle(saved, tmp_path):
    import pickle

    p = tmp_path / "pickled.npz"
    p.write_bytes(pickle.dumps({"model": [1, 2, 3]}))
    return p


def _object_array(saved, tmp_path):
    header, arrays = _contents(saved)
    arrays[sorted(arrays)[0]] = np.array([{"a": 1}, None], dtype=object)
    return _write(tmp_path / "objects.npz", header, arrays)


@pytest.mark.parametrize("damage, says", [
    (_pickle, "a Python pickle, not an .npz archive; lrank never writes pickles into a model file and never "
              "unpickles one (unpickling can run code)"),
    (_object_array, "it holds pickled Python objects; lrank never writes pickles"),
    (_text, "not an .npz archive (its first bytes are b'hello')"),
    (_empty, "not an .npz archive (its first bytes are b'')")])
def test_a_file_with_pickles_is_refused_without_suggesting_to_unpickle_it(saved, tmp_path, damage, says):
    """numpy's own error for a pickle says the file can be loaded with ``allow_pickle=True``: the model file
    error says instead what the file is and that lrank never unpickles one."""
    bad = damage(saved, tmp_path)
    with pytest.raises(ModelFileError) as err:
        load_model(bad)
    msg = str(err.value)
    assert msg.startswith(f"{bad} is not an lrank model file: ") and says in msg, msg
    assert "allow_pickle" not in msg, msg


def test_a_missing_model_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model file at"):
        load_model(tmp_path / "nothing.npz")
    with pytest.raises(FileNotFoundError, match="no model file at"):
        load_model(tmp_path / "nothing.json")


def test_the_name_given_to_save_model_loads(data, tmp_path):
    """save_model("m.json") writes m.json.npz (numpy's convention); load_model("m.json") used to answer
    "no model file at m.json". It now reads the file save_model wrote; an existing m.json wins."""
    est = RankBoost(n_estimators=3).fit(data)
    written = est.save_model(tmp_path / "m.json")
    assert written == tmp_path / "m.json.npz"
    for loader in (load_model, RankBoost.load_model):
        back = loader(tmp_path / "m.json")
        np.testing.assert_array_equal(back.predict(data.X), est.predict(data.X))
    (tmp_path / "m.json").write_text("{}")
    with pytest.raises(ModelFileError, match=r"m\.json is not an lrank model file"):
        load_model(tmp_path / "m.json")


# ------------------------------------------------------------------------------ atomic saving
def test_a_save_that_cannot_be_written_names_the_file_asked_for(data, tmp_path, monkeypatch):
    """Into a folder that does not exist, or on a full disk, the error used to name the temporary file beside
    the target (``.m.npz.80287b739705.tmp``); it names the file asked for, and leaves nothing behind."""
    est = RankBoost(n_estimators=3).fit(data)
    with pytest.raises(FileNotFoundError, match=r"cannot save the model to .*absent.m\.npz: there is no "):
        est.save_model(tmp_path / "absent" / "m.npz")

    def disk_full(fh, **arrays):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", disk_full)
    with pytest.raises(OSError, match=r"cannot save the model to .*m\.npz: No space left on device") as exc:
        est.save_model(tmp_path / "m.npz")
    assert ".tmp" not in str(exc.value) and exc.value.errno == 28
    assert list(tmp_path.iterdir()) == []

    def no_errno(fh, **arrays):  # an OSError raised without an errno keeps its message
        raise OSError("stale file handle on the share")

    monkeypatch.setattr(np, "savez_compressed", no_errno)
    with pytest.raises(OSError, match=r"cannot save the model to .*m\.npz: stale file handle on the share"):
        est.save_model(tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_save_keeps_the_previous_model(data, tmp_path, monkeypatch):
    est = RankBoost(n_estimators=3).fit(data)
    path = est.save_model(tmp_path / "model.npz")
    before = path.read_bytes()
    real = np.savez_compressed

    def dies_midway(fh, **arrays):
        real(fh, **arrays)
        fh.truncate(fh.tell() // 2)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", dies_midway)
    with pytest.raises(OSError, match="No space left"):
        RankBoost(n_estimators=5).fit(data).save_model(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"], "a temporary file was left behind"
    monkeypatch.undo()
    np.testing.assert_array_equal(load_model(path).predict(data.X), est.predict(data.X))


def test_a_save_replaces_the_file_and_keeps_the_usual_permissions(data, tmp_path):
    import os
    import stat

    path = tmp_path / "m.npz"
    path.write_bytes(b"old")
    RankBoost(n_estimators=2).fit(data).save_model(path)
    assert load_model(path).n_iter_ == 2
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


# ------------------------------------------------------------------------ files of format version 1
V1 = Path(__file__).resolve().parents[1] / "golden" / "models_v1"


@pytest.mark.parametrize("name", sorted(p.stem for p in V1.glob("*.npz")))
def test_a_version_1_model_file_loads_and_predicts_what_it_predicted(name, tmp_path):
    """Model files written by lrank before the tree engine (format version 1, commit c846023: NDCGBoost's
    ``FeatureTree``, BoostingTree's ``lrank.weak.tree.RegressionTree``, ``bin_strategy``) load and give
    the predictions recorded when they were written, and save again as version 2.

    Each was fitted on ``make_letor_like(n_queries=12, docs_per_query=(5, 15), n_features=6, n_grades=3,
    missing_rate=0.05, random_state=3)`` (n_estimators 3-5; the tree models with 4 leaves and
    min_child_samples 2, BoostingTree with random_state 0).
    """
    d = make_letor_like(n_queries=12, docs_per_query=(5, 15), n_features=6, n_grades=3, missing_rate=0.05,
                        random_state=3)
    want = np.load(V1 / f"{name}.pred.npy")
    model = load_model(V1 / f"{name}.npz")
    # leaf sums and alphas are added in one order: only the last bits of a foreign CPU's exp/log differ
    np.testing.assert_allclose(model.predict(d.X), want, rtol=1e-12, atol=1e-12)
    again = load_model(model.save_model(tmp_path / "again.npz"))
    assert _contents(tmp_path / "again.npz")[0]["format_version"] == 2
    np.testing.assert_array_equal(again.predict(d.X), model.predict(d.X))


def test_a_version_1_file_has_the_classes_it_needs():
    """The recorded version-1 files hold each tree class the upgrade knows (so the test above covers
    both conversions and the parameter rename)."""
    text = " ".join(_contents(p)[0].__repr__() for p in V1.glob("*.npz"))
    for name in ("lrank.models.ndcgboost:FeatureTree", "lrank.weak.tree:RegressionTree", "bin_strategy"):
        assert name in text
