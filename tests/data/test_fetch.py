"""fetch(): registry, download steps (monkeypatched: no network), checksums, extraction, loaders, status."""

import dataclasses
import hashlib
import importlib
import io
import re
import shutil
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lrank.data import save_letor
from lrank.data.generators import make_letor_like
from lrank.paths import repo_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import loopback  # noqa: E402

# ``lrank.data.fetch`` is the function (re-exported by lrank.data); the module is reached through importlib
F = importlib.import_module("lrank.data.fetch")
# the LETOR archives here have no registry checksum: their first use warns (tested in test_fetch_archives)
pytestmark = pytest.mark.filterwarnings("ignore::lrank.data.fetch.UnverifiedDownloadWarning")
DOWNLOAD = F._download
MEMBER = "rankeval-0.8.2/rankeval/test/data/msn1.fold1.{}.5k.txt"


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    root = tmp_path / "lrank_data"
    monkeypatch.setenv("LRANK_DATA", str(root))

    def no_network(url, dest, timeout=60.0):
        raise OSError(f"network disabled in tests ({url})")

    def no_pip(spec, dest_dir, binary=False):
        raise OSError("pip disabled in tests")

    monkeypatch.setattr(F, "_download", no_network)
    monkeypatch.setattr(F, "_pip_download", no_pip)
    return root


def _letor_bytes(seed: int, n_queries: int = 4) -> bytes:
    d = make_letor_like(
        n_queries=n_queries, docs_per_query=(3, 6), n_features=5, n_grades=5, random_state=seed
    )

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "f.txt"
        save_letor(d, p)
        return p.read_bytes()


@pytest.fixture
def fake_sample(data_root, monkeypatch, tmp_path):
    """A locally made rankeval-like sdist; the registry entry is pointed at its checksums."""
    train, test = _letor_bytes(1), _letor_bytes(2)
    tar_path = tmp_path / "build" / "rankeval-0.8.2.tar.gz"
    tar_path.parent.mkdir()
    with tarfile.open(tar_path, "w:gz") as tf:
        for split, payload in (("train", train), ("test", test)):
            info = tarfile.TarInfo(MEMBER.format(split))
            info.size = len(payload)
            tf.addfile(info, io.BytesIO(payload))
        info = tarfile.TarInfo("rankeval-0.8.2/PKG-INFO")
        info.size = 3
        tf.addfile(info, io.BytesIO(b"x\n\n"))
    spec = F.REGISTRY["mslr-sample"]
    files = (
        dataclasses.replace(spec.files[0], sha256=_sha(train)),
        dataclasses.replace(spec.files[1], sha256=_sha(test)),
    )
    new = dataclasses.replace(spec, files=files, n_features=5, archive_sha256=_sha(tar_path.read_bytes()))
    monkeypatch.setitem(F.REGISTRY, "mslr-sample", new)
    calls = []

    def fake_pip(spec_, dest_dir, binary=False):
        calls.append(spec_)
        shutil.copy(tar_path, Path(dest_dir) / "rankeval-0.8.2.tar.gz")

    monkeypatch.setattr(F, "_pip_download", fake_pip)
    return {"train": train, "test": test, "calls": calls, "tar": tar_path}


# ------------------------------------------------------------------------------------ registry
def test_registry_entries_are_complete():
    need = {"mslr-sample", "mslr-web10k", "mq2007", "mq2008", "ohsumed", "hp2003", "td2003",
            "movielens-100k", "yahoo-ltr"}
    assert need <= set(F.REGISTRY)
    hexre = re.compile(r"^[0-9a-f]{64}$")
    for name, ds in F.REGISTRY.items():
        assert ds.name == name
        assert ds.urls and all(u.startswith("http") for u in ds.urls), name
        assert ds.licence and ds.citation and ds.quick_substitute and ds.checksum_note, name
        assert ds.method in ("pip-sdist", "url", "manual")
        for sha in [ds.archive_sha256, *(f.sha256 for f in ds.files)]:
            assert sha is None or hexre.match(sha), name
        if ds.archive_sha256 is None and ds.method != "manual":
            assert "None" in ds.checksum_note or "recorded" in ds.checksum_note
        assert not ds.redistributable  # none of these may be committed
    s = F.REGISTRY["mslr-sample"]
    assert s.archive_sha256 == "c7d71602ab7fe0a0281976c1f0e883cb16431f72e4e946e5fd83790449bb21a9"
    assert s.pip_spec == "rankeval==0.8.2"



def test_letor3_gov_sets_are_two_folders_of_one_archive():
    """HP2003 and TD2003 (one helper makes both) differ in name, title, layout and quick substitute only."""
    hp, td = F.REGISTRY["hp2003"], F.REGISTRY["td2003"]
    assert hp.title == ("LETOR 3.0 .Gov HP2003 (homepage finding), QueryLevelNorm (150 queries, 64 features, "
                        "0/1)")
    assert td.title == ("LETOR 3.0 .Gov TD2003 (topic distillation), QueryLevelNorm (50 queries, 64 "
                        "features, 0/1)")
    assert hp.layout == "Gov/QueryLevelNorm/2003_hp_dataset/Fold{fold}/{split}.txt"
    assert td.layout == "Gov/QueryLevelNorm/2003_td_dataset/Fold{fold}/{split}.txt"
    assert hp.quick_substitute == "a generated meta-search set (RankBoost Table 1), else mslr-sample"
    assert td.quick_substitute == "mslr-sample"
    assert (hp.urls, hp.archive, hp.folder, hp.n_features) == (
        ("http://research.microsoft.com/en-us/um/beijing/projects/letor/LETOR3.0/Gov.rar",), "Gov.rar",
        "letor3-gov", 64)
    rest = [{k: v for k, v in dataclasses.asdict(d).items()
             if k not in ("name", "title", "layout", "quick_substitute")} for d in (hp, td)]
    assert rest[0] == rest[1]
    assert rest[0]["citation"] == F.REGISTRY["ohsumed"].citation

def test_data_readme_lists_every_dataset_and_checksum():
    text = (repo_dir() / "data" / "README.md").read_text()
    for name, ds in F.REGISTRY.items():
        assert f"`{name}`" in text, name
        for sha in [ds.archive_sha256, *(f.sha256 for f in ds.files if ds.kind == "letor-sample")]:
            if sha is not None:
                assert sha in text, (name, sha)


def test_unknown_name():
    with pytest.raises(KeyError, match="unknown data set"):
        F.fetch("no-such-data")


# ---------------------------------------------------------------------------------- mslr-sample
def test_mslr_sample_fetch_and_cache(fake_sample, data_root):
    train, test = F.fetch("mslr-sample")
    folder = data_root / "downloads" / "mslr-sample"
    assert (folder / "msn1.fold1.train.5k.txt").read_bytes() == fake_sample["train"]
    assert (folder / "msn1.fold1.test.5k.txt").read_bytes() == fake_sample["test"]
    assert train.n_queries == 4 and test.n_features == 5
    assert train.provenance["dataset"] == "mslr-sample"
    assert train.provenance["sha256"] == _sha(fake_sample["train"])
    assert fake_sample["calls"] == ["rankeval==0.8.2"]
    train2, _ = F.fetch("mslr-sample")  # present: no second download
    assert fake_sample["calls"] == ["rankeval==0.8.2"]
    assert train2.X.tobytes() == train.X.tobytes()
    fold = F.load_fold("mslr-sample", 1)
    assert fold.valid is None and fold.test.n_docs == test.n_docs


def test_mslr_sample_tampered_file_then_force(fake_sample, data_root):
    F.fetch("mslr-sample")
    p = data_root / "downloads" / "mslr-sample" / "msn1.fold1.train.5k.txt"
    p.write_bytes(p.read_bytes().replace(b"qid:", b"qid: ", 0) + b"")
    with open(p, "ab") as fh:
        fh.write(b"0 qid:999 1:0.5\n")
    with pytest.raises(F.ChecksumError, match=re.escape(str(p))):
        F.fetch("mslr-sample")
    train, _ = F.fetch("mslr-sample", force=True)
    assert p.read_bytes() == fake_sample["train"]
    assert len(fake_sample["calls"]) == 2


def test_mslr_sample_bad_archive_checksum(fake_sample, data_root, monkeypatch):
    spec = dataclasses.replace(F.REGISTRY["mslr-sample"], archive_sha256="0" * 64)
    monkeypatch.setitem(F.REGISTRY, "mslr-sample", spec)
    with pytest.raises(F.ChecksumError) as err:
        F.fetch("mslr-sample")
    msg = str(err.value)
    assert "rankeval-0.8.2.tar.gz" in msg and spec.urls[0] in msg


def test_mslr_sample_unreachable(data_root):
    with pytest.raises(F.FetchError) as err:
        F.fetch("mslr-sample")
    msg = str(err.value)
    assert F.REGISTRY["mslr-sample"].urls[0] in msg  # names the URL
    assert str(data_root / "downloads" / "mslr-sample" / "rankeval-0.8.2.tar.gz") in msg  # and the path


def test_mslr_sample_url_fallback(fake_sample, data_root, monkeypatch):
    """When pip is not available the PyPI file URL is used."""

    def broken_pip(spec, dest_dir, binary=False):
        raise OSError("no pip")

    def fake_download(url, dest, timeout=60.0):
        shutil.copy(fake_sample["tar"], dest)

    monkeypatch.setattr(F, "_pip_download", broken_pip)
    monkeypatch.setattr(F, "_download", fake_download)
    train, test = F.fetch("mslr-sample")
    assert train.n_queries == 4


# the real sample where `python -m lrank fetch mslr-sample` put it ($LRANK_DATA, else the repository's data/)
REAL = next(
    (d for d in (F.REGISTRY["mslr-sample"].directory, repo_dir() / "data" / "downloads" / "mslr-sample")
     if (d / "msn1.fold1.train.5k.txt").is_file()),
    repo_dir() / "data" / "downloads" / "mslr-sample",
)


@pytest.mark.skipif(
    not (REAL / "msn1.fold1.train.5k.txt").is_file(), reason="real MSLR sample not fetched here"
)
def test_real_mslr_sample(tmp_path, monkeypatch):
    root = tmp_path / "real"
    (root / "downloads" / "mslr-sample").mkdir(parents=True)
    for f in ("msn1.fold1.train.5k.txt", "msn1.fold1.test.5k.txt"):
        shutil.copy(REAL / f, root / "downloads" / "mslr-sample" / f)
    monkeypatch.setenv("LRANK_DATA", str(root))
    monkeypatch.setattr(F, "_pip_download", lambda *a: pytest.fail("must not download"))
    train, test = F.fetch("mslr-sample")
    for d in (train, test):
        assert d.n_queries == 43 and d.n_docs == 5000 and d.n_features == 136
        assert d.y.min() == 0 and d.y.max() == 4
    assert train.provenance["sha256"] == F.REGISTRY["mslr-sample"].files[0].sha256


# ------------------------------------------------------------------------------- LETOR archives
def _letor_zip(path: Path, layout: str, split_names: dict, folds=(1, 2, 3, 4, 5)) -> dict:
    payloads = {}
    with zipfile.ZipFile(path, "w") as zf:
        for fold in folds:
            for i, (split, stem) in enumerate(split_names.items()):
                b = _letor_bytes(10 * fold + i, n_queries=3)
                rel = layout.format(fold=fold, split=stem)
                zf.writestr(rel, b)
                payloads[(fold, split)] = b
    return payloads


@pytest.fixture
def fake_ohsumed(data_root, monkeypatch, tmp_path):
    spec = dataclasses.replace(F.REGISTRY["ohsumed"], n_features=5)
    monkeypatch.setitem(F.REGISTRY, "ohsumed", spec)
    z = tmp_path / "OHSUMED.zip"
    payloads = _letor_zip(z, spec.layout, spec.split_names)

    def fake_download(url, dest, timeout=60.0):
        assert url == spec.urls[0]
        shutil.copy(z, dest)

    monkeypatch.setattr(F, "_download", fake_download)
    return payloads


def test_letor_archive_fold_and_sums(fake_ohsumed, data_root):
    ds = F.fetch("ohsumed")
    assert isinstance(ds, F.LetorDataset)
    fold = ds.fold(2)
    assert fold.train.n_queries == 3 and fold.valid is not None
    assert fold.test.provenance["dataset"] == "ohsumed" and fold.test.provenance["fold"] == 2
    sums = (ds.root / "SHA256SUMS").read_text()
    rel = "OHSUMED/QueryLevelNorm/Fold2/train.txt"
    assert f"{_sha(fake_ohsumed[(2, 'train')])}  {rel}" in sums
    assert F.load_fold("ohsumed", 3).valid.n_queries == 3
    with pytest.raises(ValueError, match="folds"):
        ds.fold(6)


def test_letor_archive_edited_file_detected(fake_ohsumed, data_root):
    ds = F.fetch("ohsumed")
    p = ds.path(1, "test")
    with open(p, "ab") as fh:
        fh.write(b"0 qid:12345 1:0.5\n")
    with pytest.raises(F.ChecksumError, match="Fold1/test.txt"):
        ds.fold(1)


def test_letor_alternative_split_names(data_root, monkeypatch, tmp_path):
    """LETOR 2.0-style names (trainingset/validationset/testset) are found too."""
    spec = dataclasses.replace(F.REGISTRY["td2003"], n_features=5)
    monkeypatch.setitem(F.REGISTRY, "td2003", spec)
    z = tmp_path / "Gov.rar.zip"
    names = {"train": "trainingset", "valid": "validationset", "test": "testset"}
    _letor_zip(z, spec.layout, names)
    folder = spec.directory
    with zipfile.ZipFile(z) as zf:
        zf.extractall(folder)
    ds = F.fetch("td2003")
    assert ds.path(4, "valid").name == "validationset.txt"
    assert ds.fold(4).valid.n_queries == 3


def test_letor_archive_unreachable_names_url_and_path(data_root):
    with pytest.raises(F.FetchError) as err:
        F.fetch("mq2007")
    msg = str(err.value)
    assert "LETOR4.0/Data/MQ2007.rar" in msg
    assert str(data_root / "downloads" / "mq2007" / "MQ2007.rar") in msg


def test_web_page_instead_of_archive(data_root, monkeypatch):
    def html(url, dest, timeout=60.0):
        Path(dest).write_bytes(b"<html>moved</html>")

    monkeypatch.setattr(F, "_download", html)
    with pytest.raises(F.FetchError, match="not a zip archive"):
        F.fetch("ohsumed")
    with pytest.raises(F.FetchError, match="not a RAR archive"):
        F.fetch("mq2008")


def test_wrong_layout_is_reported(data_root, monkeypatch, tmp_path):
    z = tmp_path / "OHSUMED.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("elsewhere/train.txt", b"1 qid:1 1:0.5\n")
    monkeypatch.setattr(F, "_download", lambda url, dest, timeout=60.0: shutil.copy(z, dest))
    with pytest.raises(F.FetchError, match="elsewhere/train.txt"):
        F.fetch("ohsumed")


def test_manual_yahoo(data_root, monkeypatch):
    with pytest.raises(F.FetchError) as err:
        F.fetch("yahoo-ltr")
    msg = str(err.value)
    assert "licence" in msg and "webscope" in msg and str(data_root / "downloads" / "yahoo-ltr") in msg
    spec = dataclasses.replace(F.REGISTRY["yahoo-ltr"], n_features=5)
    monkeypatch.setitem(F.REGISTRY, "yahoo-ltr", spec)
    folder = data_root / "downloads" / "yahoo-ltr"
    folder.mkdir(parents=True)
    for k in (1, 2):
        for s in ("train", "valid", "test"):
            (folder / f"set{k}.{s}.txt").write_bytes(_letor_bytes(k, n_queries=2))
    fold = F.fetch("yahoo-ltr").fold(1)
    assert fold.train.n_queries == 2


# ------------------------------------------------------------------------------------ movielens
def test_movielens_fetch(data_root, monkeypatch, tmp_path):
    lines = "1\t1\t5\t881250949\n1\t3\t3\t881250949\n2\t2\t4\t881250949\n"
    z = tmp_path / "ml-100k.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("ml-100k/u.data", lines)
    spec = dataclasses.replace(
        F.REGISTRY["movielens-100k"], archive_sha256=_sha(z.read_bytes()), archive_md5=None
    )
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", spec)
    monkeypatch.setattr(F, "_download", lambda url, dest, timeout=60.0: shutil.copy(z, dest))
    R = F.fetch("movielens-100k")
    assert R.shape == (943, 1682) and R[0, 0] == 5 and np.isnan(R[0, 1])
    assert "ml-100k/u.data" in (data_root / "downloads" / "movielens-100k" / "SHA256SUMS").read_text()
    u = data_root / "downloads" / "movielens-100k" / "ml-100k" / "u.data"
    u.write_text(lines + "2\t3\t1\t881250949\n")
    with pytest.raises(F.ChecksumError):
        F.fetch("movielens-100k")


INTER = "recbole/dataset_example/ml-100k/ml-100k.inter"
INTER_TEXT = ("user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
              "1\t1\t5\t881250949\n1\t3\t3\t881250949\n2\t2\t4\t881250949\n")


@pytest.fixture
def fake_wheel(data_root, monkeypatch, tmp_path):
    """A small recbole-like wheel; the registry's fallback is pointed at its checksums."""
    whl = tmp_path / "build" / "recbole-1.2.1-py3-none-any.whl"
    whl.parent.mkdir()
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr(INTER, INTER_TEXT)
        zf.writestr("recbole/__init__.py", "")
    spec = F.REGISTRY["movielens-100k"]
    pkg = dataclasses.replace(
        spec.pip_fallback, sha256=_sha(whl.read_bytes()),
        files=(dataclasses.replace(spec.pip_fallback.files[0], sha256=_sha(INTER_TEXT.encode())),),
    )
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", dataclasses.replace(spec, pip_fallback=pkg))
    calls = []

    def fake_pip(spec_, dest_dir, binary=False):
        calls.append((spec_, binary))
        shutil.copy(whl, Path(dest_dir) / whl.name)

    monkeypatch.setattr(F, "_pip_download", fake_pip)
    return {"wheel": whl, "calls": calls}


def test_movielens_registry_has_both_sources():
    ds = F.REGISTRY["movielens-100k"]
    assert ds.urls[0].startswith("https://files.grouplens.org/")
    pkg = ds.pip_fallback
    assert pkg.spec == "recbole==1.2.1" and pkg.binary
    assert pkg.sha256 == "9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407"
    assert pkg.files[0].member == INTER and pkg.files[0].path == "ml-100k.inter"
    assert re.fullmatch(r"[0-9a-f]{64}", pkg.files[0].sha256)
    assert "no redistribution" in ds.licence and "GroupLens" in ds.licence


def test_movielens_from_the_wheel_when_grouplens_fails(fake_wheel, data_root):
    R = F.fetch("movielens-100k")
    assert R.shape == (943, 1682)  # ML-100K's shape, whatever ids the file holds
    assert R[0, 0] == 5 and R[1, 1] == 4 and int((~np.isnan(R)).sum()) == 3
    folder = data_root / "downloads" / "movielens-100k"
    assert (folder / "ml-100k.inter").read_text() == INTER_TEXT
    assert fake_wheel["calls"] == [("recbole==1.2.1", True)]
    assert not list(folder.glob(".lrank-fetch-*")) and not (folder / fake_wheel["wheel"].name).exists()
    F.fetch("movielens-100k")  # present: no second download
    assert len(fake_wheel["calls"]) == 1
    assert F.status().set_index("dataset").loc["movielens-100k", "status"] == "present"
    (folder / "ml-100k.inter").write_text(INTER_TEXT + "2\t3\t1\t0\n")
    with pytest.raises(F.ChecksumError, match="ml-100k.inter"):
        F.fetch("movielens-100k")


def test_movielens_from_a_wheel_placed_by_hand(fake_wheel, data_root, monkeypatch):
    """Offline: the wheel file given by path (copied into the data folder) is used without pip."""
    folder = data_root / "downloads" / "movielens-100k"
    folder.mkdir(parents=True)
    shutil.copy(fake_wheel["wheel"], folder / fake_wheel["wheel"].name)
    monkeypatch.setattr(F, "_pip_download", lambda *a, **k: pytest.fail("must not run pip"))
    R = F.fetch("movielens-100k")
    assert int((~np.isnan(R)).sum()) == 3


def test_movielens_wrong_wheel_is_refused(fake_wheel, data_root, monkeypatch):
    pkg = dataclasses.replace(F.REGISTRY["movielens-100k"].pip_fallback, sha256="0" * 64)
    monkeypatch.setitem(F.REGISTRY, "movielens-100k",
                        dataclasses.replace(F.REGISTRY["movielens-100k"], pip_fallback=pkg))
    with pytest.raises(F.FetchError, match="recbole-1.2.1-py3-none-any.whl has sha256"):
        F.fetch("movielens-100k")
    assert not (data_root / "downloads" / "movielens-100k" / "ml-100k.inter").exists()


def test_movielens_neither_source_names_both(data_root):
    with pytest.raises(F.FetchError) as err:
        F.fetch("movielens-100k")
    msg = str(err.value)
    folder = data_root / "downloads" / "movielens-100k"
    assert "either source" in msg
    assert "https://files.grouplens.org/datasets/movielens/ml-100k.zip" in msg
    assert "recbole==1.2.1" in msg and INTER in msg
    assert str(folder / "ml-100k.zip") in msg and str(folder / "recbole-1.2.1-py3-none-any.whl") in msg


REAL_WHEEL = Path("/work/cache/recbole-1.2.1-py3-none-any.whl")  # a local copy where one exists


@pytest.mark.skipif(not REAL_WHEEL.is_file(), reason="no local copy of the recbole 1.2.1 wheel")
def test_movielens_from_the_real_wheel(data_root, monkeypatch):
    def from_path(spec, dest_dir, binary=False):
        assert spec == "recbole==1.2.1" and binary
        shutil.copy(REAL_WHEEL, Path(dest_dir) / REAL_WHEEL.name)

    monkeypatch.setattr(F, "_pip_download", from_path)
    R = F.fetch("movielens-100k")
    assert R.shape == (943, 1682) and int((~np.isnan(R)).sum()) == 100_000
    assert np.nansum(R) == 352_986  # sum of u.data's ratings
    from lrank.data import movielens_tasks

    tasks = movielens_tasks(R)
    assert (tasks.n_eligible, len(tasks), tasks.without_features) == (364, 360, [181, 405, 655, 782])


# --------------------------------------------------------------------------------------- status
def test_status(fake_sample, data_root):
    st = F.status()
    assert list(st["dataset"]) == list(F.REGISTRY)
    assert {"dataset", "status", "quick profile uses", "licence", "redistributable"} <= set(st.columns)
    assert set(st["status"]) <= {"present", "absent", "manual, absent"}
    assert st.set_index("dataset").loc["mslr-sample", "status"] == "absent"
    F.fetch("mslr-sample")
    assert F.status().set_index("dataset").loc["mslr-sample", "status"] == "present"


# ------------------------------------------------------------------------------- download steps
def test_pip_download_command(monkeypatch, tmp_path):
    """Only rankeval itself is forced to an sdist (``--no-binary :all:`` would build scipy)."""
    cmd = F._pip_command("rankeval==0.8.2", tmp_path)
    assert cmd[1:4] == ["-m", "pip", "download"] and "rankeval==0.8.2" in cmd
    assert cmd[cmd.index("--no-binary") + 1] == "rankeval" and "--no-deps" in cmd
    assert cmd[cmd.index("-d") + 1] == str(tmp_path)
    wheel = F._pip_command("recbole==1.2.1", tmp_path, binary=True)
    assert wheel[wheel.index("--only-binary") + 1] == "recbole" and "--no-binary" not in wheel
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('no network'); sys.exit(1)"]
    monkeypatch.setattr(F, "_pip_command", lambda *a, **k: failing)
    with pytest.raises(OSError, match="no network"):
        F._pip_download("rankeval==0.8.2", tmp_path)


#: a static file server on 127.0.0.1 (loopback only), stopped after the test: ``(folder, base URL)``
http_root = pytest.fixture(loopback.http_root)


def test_download_through_pooch(http_root, tmp_path, monkeypatch):
    """The real downloader (pooch) against a local HTTP server: no network."""
    import pooch

    calls = []
    real_retrieve = pooch.retrieve
    monkeypatch.setattr(pooch, "retrieve", lambda url, **kw: (calls.append(url), real_retrieve(url, **kw))[1])
    root, base = http_root
    (root / "src.bin").write_bytes(b"abc" * 100_000)
    dest = tmp_path / "sub" / "dest.bin"
    F._download(f"{base}/src.bin", dest)
    assert dest.read_bytes() == (root / "src.bin").read_bytes()
    with pytest.raises(OSError, match="404"):
        F._download(f"{base}/missing.bin", tmp_path / "x.bin")
    assert not list(tmp_path.glob("x.bin*")) and not list(tmp_path.glob(".lrank-fetch-*"))
    assert calls == [f"{base}/src.bin", f"{base}/missing.bin"]
    assert "urllib" not in Path(F.__file__).read_text()  # the hand-written downloader is gone


def test_fetch_over_http_with_checksums(http_root, data_root, monkeypatch, tmp_path):
    """A URL source end to end through pooch: download, sha256 check, extraction, load."""
    root, base = http_root
    lines = "1\t1\t5\t881250949\n2\t2\t4\t881250949\n"
    with zipfile.ZipFile(root / "ml-100k.zip", "w") as zf:
        zf.writestr("ml-100k/u.data", lines)
    spec = dataclasses.replace(F.REGISTRY["movielens-100k"], urls=(f"{base}/ml-100k.zip",),
                               archive_sha256=_sha((root / "ml-100k.zip").read_bytes()), archive_md5=None)
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", spec)
    monkeypatch.setattr(F, "_download", DOWNLOAD)  # the real one, undoing data_root's stub
    R = F.fetch("movielens-100k")
    assert R[0, 0] == 5 and R[1, 1] == 4
    bad = dataclasses.replace(spec, archive_sha256="0" * 64)
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", bad)
    with pytest.raises(F.ChecksumError, match="ml-100k.zip has sha256"):
        F.fetch("movielens-100k", force=True)


def test_force_without_network_is_an_error(fake_sample, data_root, monkeypatch):
    F.fetch("mslr-sample")

    def no_pip(spec, dest_dir, binary=False):
        raise OSError("pip disabled in tests")

    monkeypatch.setattr(F, "_pip_download", no_pip)
    F.fetch("mslr-sample")  # present: fine without network
    with pytest.raises(F.FetchError, match="could not download mslr-sample"):
        F.fetch("mslr-sample", force=True)
