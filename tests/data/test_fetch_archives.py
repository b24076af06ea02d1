"""Every fetcher end to end against a local stand-in of its real download: an archive in the real one's
format (zip / rar / tar.gz / wheel) and layout, with files of the real feature counts and labels, served
over loopback HTTP to the real downloader (pooch) or from a local folder to the real ``pip download``;
checksum checks, extraction, the trust-on-first-use record and the missing-RAR-reader message."""

import dataclasses
import hashlib
import importlib
import io
import re
import shutil
import sys
import tarfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lrank.data.generators import make_letor_like

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import loopback  # noqa: E402
from rar_archive import write_rar  # noqa: E402

F = importlib.import_module("lrank.data.fetch")
#: (features, largest label, comment style) of each real data set
SHAPES = {"mslr-web10k": (136, 4, None), "mq2007": (46, 2, "letor4"), "mq2008": (46, 2, "letor4"),
          "ohsumed": (45, 2, "letor3"), "hp2003": (64, 1, "letor3"), "td2003": (64, 1, "letor3"),
          "yahoo-ltr": (700, 4, None)}
LETOR_SETS = ["mslr-web10k", "mq2007", "mq2008", "ohsumed", "hp2003", "td2003"]


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def letor_text(n_features: int, top: int, comment: str | None, seed: int, n_queries: int = 3) -> bytes:
    """LETOR lines as the real files write them: every feature listed, ``#docid`` comments in LETOR 3.0
    and 4.0 (``#docid = GX... inc = ... prob = ...`` in 4.0), none in MSLR-WEB10K."""
    d = make_letor_like(n_queries=n_queries, docs_per_query=(3, 6), n_features=n_features, n_grades=top + 1,
                        random_state=seed)
    qid = d.doc_qid() + 1000 * seed
    lines = []
    for i in range(d.n_docs):
        feats = " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(d.X[i]))
        line = f"{int(d.y[i])} qid:{qid[i]} {feats}"
        if comment == "letor4":
            line += f" #docid = GX{seed:03d}-{i:02d}-{7 * i:07d} inc = 0.0119881 prob = 0.139842"
        elif comment == "letor3":
            line += f" #docid = G{seed:02d}-{i:02d}-{3 * i:07d}"
        lines.append(line + "\n")
    return "".join(lines).encode()


def standin_files(name: str, seed: int = 0) -> dict[str, bytes]:
    """Every file of the data set's download, at its path inside the archive (= in its folder)."""
    spec = F.REGISTRY[name]
    n, top, comment = SHAPES[name]
    return {spec.layout.format(fold=fold, split=stem): letor_text(n, top, comment, seed + 10 * fold + i)
            for fold in spec.folds for i, stem in enumerate(spec.split_names.values())}


def write_archive(path: Path, files: dict[str, bytes]) -> Path:
    """``files`` as an archive in the format its name says (.zip or .whl, .rar, else .tar.gz)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".rar":
        return write_rar(path, files)
    if path.suffix in (".zip", ".whl"):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for rel, b in files.items():
                zf.writestr(rel, b)
        return path
    with tarfile.open(path, "w:gz") as tf:
        for rel, b in files.items():
            info = tarfile.TarInfo(rel)
            info.size = len(b)
            tf.addfile(info, io.BytesIO(b))
    return path


#: a static file server on 127.0.0.1 (loopback only), stopped after the test: ``(folder, base URL)``
http_root = pytest.fixture(loopback.http_root)


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_DATA", str(tmp_path / "lrank_data"))
    monkeypatch.setattr(F, "_download", F._download)  # the real pooch downloader
    return tmp_path / "lrank_data"


@pytest.fixture
def requests(monkeypatch):
    """Counts real downloads (pooch.retrieve calls)."""
    import pooch

    seen = []
    real = pooch.retrieve
    monkeypatch.setattr(pooch, "retrieve", lambda url, **kw: (seen.append(url), real(url, **kw))[1])
    return seen


def serve(name, http_root, monkeypatch, files, checksums=False):
    """Write the stand-in archive of ``name`` into the server's folder and point the registry at it. The
    first URL of a data set with two (MSLR-WEB10K: OneDrive, then Microsoft) answers 404 to exercise the
    fallback. ``checksums``: the registry's sha256 (archive, files) become the stand-in's."""
    root, base = http_root
    spec = F.REGISTRY[name]
    archive = write_archive(root / spec.archive, files)
    urls = (f"{base}/{spec.archive}",) if len(spec.urls) == 1 else (f"{base}/gone/{spec.archive}",
                                                                    f"{base}/{spec.archive}")
    new = dataclasses.replace(spec, urls=urls)
    if checksums:
        new = dataclasses.replace(new, archive_sha256=_sha(archive.read_bytes()),
                                  files=tuple(dataclasses.replace(f, sha256=_sha(files[f.path]))
                                              for f in spec.files))
    monkeypatch.setitem(F.REGISTRY, name, new)
    return archive


@pytest.mark.parametrize("name", LETOR_SETS)
def test_letor_fetcher_end_to_end(name, data_root, http_root, monkeypatch, requests):
    spec = F.REGISTRY[name]
    known = spec.archive_sha256 is not None  # MSLR-WEB10K: checksums in the registry; LETOR 3.0/4.0: none
    assert spec.archive.endswith({"mslr-web10k": ".zip", "ohsumed": ".zip"}.get(name, ".rar"))
    files = standin_files(name)
    if name in ("hp2003", "td2003"):  # one Gov.rar holds both
        other = "td2003" if name == "hp2003" else "hp2003"
        files.update(standin_files(other, seed=7))
    archive = serve(name, http_root, monkeypatch, files, checksums=known)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = F.fetch(name)
    told = [w for w in caught if issubclass(w.category, F.UnverifiedDownloadWarning)]
    if known:
        assert not told and len(requests) == 2  # 404 first, then the second URL
    else:
        assert len(told) == 1 and len(requests) == 1
        msg = str(told[0].message)
        assert f"{spec.archive} came over plain http" in msg and _sha(archive.read_bytes()) in msg
        assert "no checksum is published" in msg and "trust on first use" in msg
    n_features, top, _ = SHAPES[name]
    for fold in spec.folds:
        f = ds.fold(fold)
        for part, split in zip(f, ("train", "valid", "test")):
            rel = spec.layout.format(fold=fold, split=spec.split_names[split])
            assert part.n_features == n_features and 0 <= part.y.min() and part.y.max() <= top
            assert part.provenance["sha256"] == _sha(files[rel]) and part.provenance["dataset"] == name
    sums = F._read_sums(spec.directory)
    if known:
        assert not sums  # every checksum is in the registry: nothing trusted on first use
    else:
        assert sums[spec.archive] == _sha(archive.read_bytes())
        own = [spec.layout.format(fold=k, split=s) for k in spec.folds for s in spec.split_names.values()]
        assert {rel: sums[rel] for rel in own} == {rel: _sha(files[rel]) for rel in own}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.fetch(name).fold(spec.folds[-1])  # present: no download, no warning
    n_requests = len(requests)
    assert n_requests == (2 if known else 1)
    # an edited extracted file is caught on load
    p = ds.path(2, "test")
    p.write_bytes(p.read_bytes().replace(b"qid:", b"qid:9", 1))
    with pytest.raises(F.ChecksumError, match=re.escape(p.relative_to(spec.directory).as_posix())):
        ds.fold(2)
    # a different archive on the server: a forced download is refused against the registry / the record
    write_archive(archive, {**files, next(iter(files)): letor_text(n_features, top, None, 99)})
    with pytest.raises(F.ChecksumError, match="expected" if known else "the archive first used here had"):
        F.fetch(name, force=True)
    assert len(requests) > n_requests


def test_hp2003_and_td2003_share_one_download(data_root, http_root, monkeypatch, requests):
    files = {**standin_files("hp2003"), **standin_files("td2003", seed=5)}
    serve("hp2003", http_root, monkeypatch, files)
    serve("td2003", http_root, monkeypatch, files)
    with pytest.warns(F.UnverifiedDownloadWarning):
        hp = F.fetch("hp2003")
    td = F.fetch("td2003")  # Gov.rar is already there, recorded: no second download, no second warning
    assert len(requests) == 1 and hp.root == td.root
    assert td.fold(3).test.n_features == hp.fold(3).test.n_features == 64
    assert td.fold(3).test.provenance["sha256"] != hp.fold(3).test.provenance["sha256"]


def test_no_rar_reader_names_what_to_install(data_root, http_root, monkeypatch):
    serve("mq2008", http_root, monkeypatch, standin_files("mq2008"))
    monkeypatch.setitem(sys.modules, "libarchive", None)  # the package (or its C library) is missing
    monkeypatch.setattr(F.shutil, "which", lambda tool: None)  # and no command-line tool on PATH
    with pytest.warns(F.UnverifiedDownloadWarning), pytest.raises(F.FetchError) as err:
        F.fetch("mq2008")
    msg = str(err.value)
    assert "cannot extract" in msg and "MQ2008.rar" in msg and "no RAR reader here" in msg
    assert "apt-get install libarchive13" in msg and "brew install libarchive" in msg
    assert "apt-get install libarchive-tools, which gives bsdtar, or unar" in msg
    assert str(F.REGISTRY["mq2008"].directory) in msg  # where to extract it by hand


@pytest.mark.parametrize("tool", F._RAR_TOOLS)
def test_rar_command_line_readers(tool, tmp_path, monkeypatch):
    """The command-line fallbacks, where the tool is installed (none is required: libarchive reads RAR):
    bsdtar and unar (the ones the message recommends) extract the stand-in; any tool either extracts
    every file or fails with its name and why, never 'succeeds' having extracted nothing."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed here")
    files = standin_files("mq2007")
    archive = write_rar(tmp_path / "MQ2007.rar", files)
    monkeypatch.setitem(sys.modules, "libarchive", None)
    monkeypatch.setattr(F, "_RAR_TOOLS", (tool,))
    try:
        F._extract(archive, tmp_path / "out")
    except F.FetchError as exc:
        assert tool not in ("bsdtar", "unar"), str(exc)
        assert re.search(rf"; {tool}: (exit code [1-9]|exit code 0 but nothing extracted)", str(exc))
        return
    for rel, b in files.items():
        assert (tmp_path / "out" / rel).read_bytes() == b
    assert not list((tmp_path / "out").glob(".lrank-extract-*"))


def test_a_rar_member_outside_the_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "_RAR_TOOLS", ())
    archive = write_rar(tmp_path / "evil.rar", {"../outside.txt": b"x", "ok/in.txt": b"y"})
    with pytest.raises(F.FetchError, match="would be written outside"):
        F._extract(archive, tmp_path / "dest")
    assert not (tmp_path / "outside.txt").exists()


def test_rar_archives_are_read_in_process(tmp_path, monkeypatch):
    """libarchive (through libarchive-c, a dependency) extracts the RAR stand-in: folders, names with
    WinRAR's separators, contents byte for byte; no command-line tool needed."""
    monkeypatch.setattr(F, "_RAR_TOOLS", ())
    files = standin_files("td2003")
    archive = write_rar(tmp_path / "Gov.rar", files)
    F._extract(archive, tmp_path / "out")
    for rel, b in files.items():
        assert (tmp_path / "out" / rel).read_bytes() == b


# ------------------------------------------------------------------------------ pip sources
BACKEND = '''import os
def get_requires_for_build_wheel(config_settings=None):
    return []
def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    os.makedirs(os.path.join(metadata_directory, "rankeval-0.8.2.dist-info"))
    with open(os.path.join(metadata_directory, "rankeval-0.8.2.dist-info", "METADATA"), "w") as fh:
        fh.write("Metadata-Version: 2.1\\nName: rankeval\\nVersion: 0.8.2\\n")
    return "rankeval-0.8.2.dist-info"
'''


@pytest.fixture
def local_pypi(tmp_path, monkeypatch):
    """A folder that the real ``pip download`` takes distributions from (no index, no network)."""
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    return links


def test_mslr_sample_through_pip_download_then_the_url(data_root, local_pypi, http_root, monkeypatch):
    """The rankeval sdist (tar.gz, members under rankeval/test/data/) fetched by the real ``pip download``
    from a local folder, then, with pip failing, from its PyPI URL (here the loopback server)."""
    spec = F.REGISTRY["mslr-sample"]
    members = {f.member: letor_text(136, 4, None, seed) for seed, f in enumerate(spec.files)}
    sdist = {**members, "rankeval-0.8.2/PKG-INFO": b"Metadata-Version: 2.1\nName: rankeval\nVersion: 0.8.2\n",
             "rankeval-0.8.2/standin_backend.py": BACKEND.encode(),
             "rankeval-0.8.2/pyproject.toml": b'[build-system]\nrequires = []\n'
                                              b'build-backend = "standin_backend"\nbackend-path = ["."]\n'}
    tar = write_archive(local_pypi / spec.archive, sdist)
    new = dataclasses.replace(spec, archive_sha256=_sha(tar.read_bytes()),
                              files=tuple(dataclasses.replace(f, sha256=_sha(members[f.member]))
                                          for f in spec.files))
    monkeypatch.setitem(F.REGISTRY, "mslr-sample", new)
    train, test = F.fetch("mslr-sample")
    assert train.n_features == test.n_features == 136 and train.provenance["pip"] == "rankeval==0.8.2"
    assert not list(new.directory.glob(".lrank-fetch-*"))
    # pip cannot get it (empty folder): the sdist's URL, through pooch; then a wrong archive is refused
    shutil.move(tar, http_root[0] / tar.name)
    by_url = dataclasses.replace(new, urls=(f"{http_root[1]}/{tar.name}",))
    monkeypatch.setitem(F.REGISTRY, "mslr-sample", by_url)
    train2, _ = F.fetch("mslr-sample", force=True)
    assert np.array_equal(train2.X, train.X)
    write_archive(http_root[0] / tar.name, {**sdist, spec.files[0].member: b"0 qid:1 1:0.5\n"})
    with pytest.raises(F.ChecksumError, match="rankeval-0.8.2.tar.gz has sha256"):
        F.fetch("mslr-sample", force=True)


def test_movielens_grouplens_zip_then_the_wheel_through_pip(data_root, local_pypi, http_root, monkeypatch):
    """GroupLens' zip (sha256 and md5 checked) over the loopback server; when it is gone, the recbole
    wheel through the real ``pip download --only-binary`` from a local folder."""
    ratings = b"1\t1\t5\t881250949\n2\t3\t4\t881250949\n"
    spec = F.REGISTRY["movielens-100k"]
    z = write_archive(http_root[0] / "ml-100k.zip", {"ml-100k/u.data": ratings, "ml-100k/README": b"x"})
    body = z.read_bytes()
    new = dataclasses.replace(spec, urls=(f"{http_root[1]}/ml-100k.zip",), archive_sha256=_sha(body),
                              archive_md5=hashlib.md5(body).hexdigest())
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", new)
    R = F.fetch("movielens-100k")
    assert R[0, 0] == 5 and R[1, 2] == 4
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", dataclasses.replace(new, archive_md5="0" * 32))
    with pytest.raises(F.ChecksumError, match="wrong md5"):
        F.fetch("movielens-100k", force=True)
    # the zip is gone: the wheel from the local folder through pip
    z.unlink()
    inter = b"user_id:token\titem_id:token\trating:float\ttimestamp:float\n1\t2\t3\t881250949\n"
    whl = local_pypi / spec.pip_fallback.filename
    info = "recbole-1.2.1.dist-info/"
    write_archive(whl, {spec.pip_fallback.files[0].member: inter, "recbole/__init__.py": b"",
                        info + "METADATA": b"Metadata-Version: 2.1\nName: recbole\nVersion: 1.2.1\n",
                        info + "WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
                        info + "RECORD": b""})
    pkg = dataclasses.replace(spec.pip_fallback, sha256=_sha(whl.read_bytes()),
                              files=(dataclasses.replace(spec.pip_fallback.files[0], sha256=_sha(inter)),))
    monkeypatch.setitem(F.REGISTRY, "movielens-100k", dataclasses.replace(new, pip_fallback=pkg))
    shutil.rmtree(new.directory)
    R = F.fetch("movielens-100k")
    assert R[0, 1] == 3 and int((~np.isnan(R)).sum()) == 1
    assert (new.directory / "ml-100k.inter").read_bytes() == inter


def test_yahoo_placed_by_hand_is_recorded_then_verified(data_root):
    """The manual data set: the files placed by hand in its folder load (700 features) and their sha256
    is recorded at first load, then verified."""
    spec = F.REGISTRY["yahoo-ltr"]
    spec.directory.mkdir(parents=True)
    for rel, b in standin_files("yahoo-ltr").items():
        (spec.directory / rel).write_bytes(b)
    ds = F.fetch("yahoo-ltr")
    fold = ds.fold(1)
    assert fold.train.n_features == 700 and fold.valid.n_queries == 3
    assert set(F._read_sums(spec.directory)) == {"set1.train.txt", "set1.valid.txt", "set1.test.txt"}
    (spec.directory / "set1.test.txt").write_bytes(letor_text(700, 4, None, 42))
    with pytest.raises(F.ChecksumError, match="set1.test.txt"):
        ds.fold(1)


# ------------------------------------------------------------------------------ folds left on disk
@pytest.fixture
def mq2008_on_disk(data_root):
    """MQ2008's stand-in files placed by hand in its folder (as after extraction)."""
    spec = F.REGISTRY["mq2008"]
    for rel, b in standin_files("mq2008").items():
        (spec.directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (spec.directory / rel).write_bytes(b)
    return F.fetch("mq2008")


def test_fold_files_load_one_fold_where_the_job_runs(mq2008_on_disk, monkeypatch):
    """FoldFiles: the same data as `fold(k)` (validation left out when asked), fingerprinted by the files'
    sha256; the tree-fitting protocol on them equals the protocol on loaded folds and never holds two
    folds at once; dataset_stats reads them one at a time."""
    import gc
    import weakref

    from lrank.experiments.jobs import fingerprint
    from lrank.papers import tree_fitting as tf

    ds = mq2008_on_disk
    refs = [ds.fold_files(k, ("train", "test")) for k in ds.folds]
    loaded = [F.Fold(ds.fold(k).train, None, ds.fold(k).test) for k in ds.folds]
    for ref, fold in zip(refs, loaded):
        got = ref.load()
        assert got.valid is None and np.array_equal(got.train.X, fold.train.X)
        assert np.array_equal(got.test.y, fold.test.y)
    assert fingerprint(refs[0]) == fingerprint(ds.fold_files(1, ("train", "test"))) != fingerprint(refs[1])
    assert fingerprint(refs[0]) != fingerprint(ds.fold_files(1))
    with pytest.raises(ValueError, match="folds"):
        ds.fold_files(6)
    live, most = weakref.WeakSet(), [0]
    real = F.FoldFiles.load

    def counting(self):
        gc.collect()
        most[0] = max(most[0], len(live))  # folds loaded before and still alive
        fold = real(self)
        live.add(fold.train)
        return fold

    monkeypatch.setattr(F.FoldFiles, "load", counting)
    kw = dict(leaves=(4,), rates=(0.1,), criteria=("se",))
    on_disk = tf.run_protocol({"MQ": refs}, {"LambdaMART": 2, "McRank": 2}, **kw)
    assert most[0] == 0  # one fold in memory at a time
    in_memory = tf.run_protocol({"MQ": loaded}, {"LambdaMART": 2, "McRank": 2}, **kw)
    for a, b in zip(on_disk, in_memory):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert tf.dataset_stats(refs, "MQ") == tf.dataset_stats(loaded, "MQ")
    assert most[0] == 0


def test_a_fold_on_disk_changed_after_a_checkpoint_runs_again(mq2008_on_disk, tmp_path):
    """The checkpoint of a job on a FoldFiles is keyed by the files' recorded sha256."""
    from lrank.experiments import cross_validate
    from lrank.models.gbrt import LambdaMART

    ds = mq2008_on_disk
    refs = [ds.fold_files(k) for k in (1, 2)]
    make = lambda: LambdaMART(n_estimators=2, num_leaves=4, min_child_samples=2)  # noqa: E731
    ck = tmp_path / "ck"
    first = cross_validate(make, folds=refs, metrics=["ndcg@3"], checkpoint=ck)
    again = cross_validate(make, folds=refs, metrics=["ndcg@3"], checkpoint=ck)
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    p = ds.path(2, "test")  # new contents, and its record: a new download of the data set
    p.write_bytes(letor_text(46, 2, "letor4", 77))
    F._record_sum(ds.root, p.relative_to(ds.root).as_posix(), F.sha256_of(p))
    changed = cross_validate(make, folds=refs, metrics=["ndcg@3"], checkpoint=ck)
    assert changed[changed.fold == 0].equals(first[first.fold == 0])
    assert not np.array_equal(changed[changed.fold == 1]["value"], first[first.fold == 1]["value"])
    assert len(list(ck.rglob("*.npz"))) == 3  # fold 1 from its checkpoint, fold 2 ran again
