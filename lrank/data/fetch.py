"""Real data sets: where they come from, their checksums and licences, and how to load them.

``fetch(name)`` downloads a data set into ``$LRANK_DATA/downloads/<folder>/`` (default
``<repo>/data/downloads`` in a checkout, gitignored; ``~/lrank_data/downloads`` for an installed package:
`lrank.paths.data_dir`), verifies its sha256 and returns it loaded:

==================  ============================================================================
``mslr-sample``     ``(train, test)`` `RankingData`: the first 5,000 lines of MSLR-WEB10K Fold1
                    train and test, as shipped inside the PyPI sdist ``rankeval==0.8.2``
``mslr-web10k``     a :class:`LetorDataset` (``.fold(k)`` -> ``Fold(train, valid, test)``)
``mq2007``,         LETOR 4.0, :class:`LetorDataset`
``mq2008``
``ohsumed``,        LETOR 3.0 (QueryLevelNorm), :class:`LetorDataset`
``hp2003``,
``td2003``
``movielens-100k``  the ratings matrix (users x movies, NaN unrated) via ``load_movielens``
``yahoo-ltr``       manual: needs Yahoo!'s licence agreement; a :class:`LetorDataset` once the files
                    are in place
==================  ============================================================================

Checksums: every file is verified on every load. Where the registry knows a file's sha256 it is
checked against it; where no trustworthy checksum could be written down offline (the LETOR 3.0 / 4.0
archives, which Microsoft serves over plain http) the registry says ``None`` and says so, and lrank
records the sha256 of the archive and of each extracted file at first download in ``SHA256SUMS`` next
to them and verifies later loads (and later downloads) against that record, with an
`UnverifiedDownloadWarning` at that first download (trust on first use: it detects corruption, edits
and a changed download, not a wrong first download).

Archives: ``.zip`` and ``.tar.*`` with the standard library; ``.rar`` (LETOR 3.0 / 4.0) with the
libarchive C library through the ``libarchive-c`` package (Debian/Ubuntu: ``libarchive13``; macOS:
``brew install libarchive``), else with ``unrar``, ``unar``, ``7z`` / ``7zz`` or ``bsdtar`` on PATH
(Debian packages ``unrar-free``, ``unar``, ``7zip``, ``libarchive-tools``); the error says so when none
is there.

A download that fails, or a checksum that does not match, raises :class:`FetchError` naming the URL
and the path where the file can be placed by hand.

URL sources are downloaded with pooch (streamed into a temporary folder, moved into place when
complete); PyPI-package sources with ``pip download`` (in its own process group, ended with the
fetch). A SIGTERM during ``fetch`` unwinds: the pip child and its children are ended and temporary
folders (``.lrank-fetch-*``) removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrank.data.container import Fold, RankingData
from lrank.data.letor import load_letor, sha256_of
from lrank.paths import data_dir


class FetchError(RuntimeError):
    """A data set could not be downloaded, extracted or verified; the message says what to do."""


class ChecksumError(FetchError):
    """A file's sha256 is not the expected one."""


class UnverifiedDownloadWarning(UserWarning):
    """An archive without a published checksum was used for the first time: its sha256 is recorded and
    checked from then on (trust on first use), but nothing proved that this first copy is genuine."""


@dataclass(frozen=True)
class DataFile:
    """A file of a data set, relative to its download folder, with its sha256 when known.

    Parameters
    ----------
    path : str
        Where the file is, relative to the data set's folder (``Dataset.directory``), e.g.
        ``"Fold1/train.txt"``.
    sha256 : str or None, default None
        The file's expected sha256 (64 hex digits); None: not known offline, so the sha256 recorded in
        ``SHA256SUMS`` at first download is used, if any.
    member : str or None, default None
        The file's path inside the archive (or distribution), when it differs from ``path``.
    """

    path: str
    sha256: str | None = None
    member: str | None = None  # path inside the archive, when it differs from ``path``


@dataclass(frozen=True)
class PipPackage:
    """A file shipped inside a package on PyPI, obtained with ``pip download`` (a second source).

    Attributes
    ----------
    spec : str
        The pinned requirement, e.g. ``"recbole==1.2.1"``.
    filename : str
        The distribution file ``pip download`` writes (wheel or sdist).
    sha256 : str
        The distribution file's sha256.
    files : tuple of DataFile
        Members to unpack (``member``: path inside the distribution; ``path``: where it goes in the data
        set's folder; ``sha256``: the unpacked file's checksum).
    binary : bool
        A wheel (``--only-binary``) rather than an sdist (``--no-binary``).
    """

    spec: str
    filename: str
    sha256: str
    files: tuple[DataFile, ...]
    binary: bool = True


@dataclass(frozen=True, eq=False)
class Dataset:
    """One registry entry.

    Attributes
    ----------
    name, title : str
    method : {"pip-sdist", "url", "manual"}
        How the archive is obtained.
    urls : tuple of str
        Official download URL(s), tried in order (for ``pip-sdist``: the PyPI file URL, a fallback
        to ``pip download``).
    homepage : str
    archive : str or None
        File name of the downloaded archive in the folder.
    archive_sha256, archive_md5 : str or None
        Expected checksums of the archive (``None``: not known offline, see ``checksum_note``).
    files : tuple of DataFile
        Files used after extraction (with sha256 where known).
    licence : str
    redistributable : bool
        False: never committed to the repository (only downloaded into the gitignored cache).
    citation : str
    kind : {"letor-sample", "letor", "movielens"}
    layout : str or None
        LETOR fold file pattern, e.g. ``"MQ2007/Fold{fold}/{split}.txt"``.
    split_names : dict
        ``{"train": ..., "valid": ..., "test": ...}`` file stems used in ``layout``.
    folds : tuple of int
    n_features : int or None
    quick_substitute : str
        What the quick profile uses instead.
    checksum_note : str
    folder : str
        Sub-folder of ``downloads/`` (data sets that share one archive share a folder).
    pip_spec : str or None
        ``pip download`` requirement for ``pip-sdist``.
    pip_fallback : PipPackage or None
        A second source on PyPI, used when the URL source cannot be had (MovieLens-100K: the ratings
        inside the ``recbole==1.2.1`` wheel).
    """

    name: str
    title: str
    method: str
    urls: tuple[str, ...]
    homepage: str
    archive: str | None
    archive_sha256: str | None
    licence: str
    redistributable: bool
    citation: str
    kind: str
    quick_substitute: str
    checksum_note: str
    archive_md5: str | None = None
    files: tuple[DataFile, ...] = ()
    layout: str | None = None
    split_names: dict = field(default_factory=lambda: {"train": "train", "valid": "vali", "test": "test"})
    folds: tuple[int, ...] = (1, 2, 3, 4, 5)
    n_features: int | None = None
    folder: str = ""
    pip_spec: str | None = None
    pip_fallback: PipPackage | None = None

    @property
    def directory(self) -> Path:
        return data_dir() / "downloads" / (self.folder or self.name)


# Older LETOR releases (2.0, and some LETOR 3.0 copies) name the splits trainingset / validationset /
# testset; LETOR 3.0's QueryLevelNorm folders and LETOR 4.0 use train / vali / test. Both are accepted.
_ALT_SPLITS = {"train": "trainingset", "valid": "validationset", "test": "testset"}
_LETOR_HOME = "https://www.microsoft.com/en-us/research/project/letor-learning-rank-information-retrieval/"
_LETOR_OLD = "http://research.microsoft.com/en-us/um/beijing/projects/letor"
_LETOR4_CITE = "Qin, T., Liu, T.-Y. (2013). Introducing LETOR 4.0 Datasets. arXiv:1306.2597."
_LETOR3_CITE = (
    "Qin, T., Liu, T.-Y., Xu, J., Li, H. (2010). LETOR: A benchmark collection for research on learning "
    "to rank for information retrieval. Information Retrieval 13(4), 346-374."
)
_LETOR_LICENCE = (
    "Microsoft Research LETOR release: free for research use; lrank does not redistribute it "
    "(downloaded into the gitignored cache only)"
)
_NO_SHA_LETOR = (
    "no sha256 is published by Microsoft and none could be verified offline: stored as None; the sha256 of "
    "each extracted file is recorded in SHA256SUMS at first download and checked on every later load"
)
_MQ_SUBSTITUTE = "mslr-sample relabelled to 3 grades, or make_letor_like (stated in each caption)"
_MSLR_FOLDS = {  # per-file sha256 of MSLR-WEB10K as listed by the pytorchltr project's registry
    (1, "train"): "6eb3fae4e1186e1242a6520f53a98abdbcde5b926dd19a28e51239284b1d55dc",
    (1, "test"): "33fe002374a4fce58c4e12863e4eee74745d5672a26f3e4ddacc20ccfe7d6ba0",
    (1, "vali"): "e86fb3fe7e8a5f16479da7ce04f783ae85735f17f66016786c3ffc797dd9d4db",
    (2, "train"): "40e4a2fcc237d9c164cbb6a3f2fa91fe6cf7d46a419d2f73e21cf090285659eb",
    (2, "test"): "44add582ccd674cf63af24d3bf6e1074e87a678db77f00b44c37980a3010917a",
    (2, "vali"): "33fe002374a4fce58c4e12863e4eee74745d5672a26f3e4ddacc20ccfe7d6ba0",
    (3, "train"): "f13005ceb8de0db76c93b02ee4b2bded6f925097d3ab7938931e8d07aa72acd7",
    (3, "test"): "c0a5a3c6bd7790d0b4ff3d5e961d0c8c5f8ff149089ce492540fa63035801b7a",
    (3, "vali"): "44add582ccd674cf63af24d3bf6e1074e87a678db77f00b44c37980a3010917a",
    (4, "train"): "6c1677cf9b2ed491e26ac6b8c8ca7dfae9c1a375e2bce8cba6df36ab67ce5836",
    (4, "test"): "dc6083c24a5f0c03df3c91ad3eed7542694115b998acf046e51432cb7a22b848",
    (4, "vali"): "c0a5a3c6bd7790d0b4ff3d5e961d0c8c5f8ff149089ce492540fa63035801b7a",
    (5, "train"): "4249797a2f0f46bff279973f0fb055d4a78f67f337769eabd56e82332c044794",
    (5, "test"): "e86fb3fe7e8a5f16479da7ce04f783ae85735f17f66016786c3ffc797dd9d4db",
    (5, "vali"): "dc6083c24a5f0c03df3c91ad3eed7542694115b998acf046e51432cb7a22b848",
}


def _letor4(name: str, n_queries: str) -> Dataset:
    """A LETOR 4.0 supervised-ranking set (MQ2007, MQ2008): 5 folds, 46 features, labels 0-2."""
    up = name.upper()
    return Dataset(
        name=name,
        title=f"LETOR 4.0 {up} (supervised ranking, {n_queries} queries, 46 features, labels 0-2)",
        method="url",
        urls=(f"{_LETOR_OLD}/LETOR4.0/Data/{up}.rar",),
        homepage=_LETOR_HOME,
        archive=f"{up}.rar",
        archive_sha256=None,
        layout=f"{up}/Fold{{fold}}/{{split}}.txt",
        licence=_LETOR_LICENCE,
        redistributable=False,
        citation=_LETOR4_CITE,
        kind="letor",
        n_features=46,
        quick_substitute=_MQ_SUBSTITUTE,
        checksum_note=_NO_SHA_LETOR,
    )


def _letor3_gov(task: str, what: str, n_queries: str, quick_substitute: str) -> Dataset:
    """A LETOR 3.0 .Gov 2003 set (HP2003, TD2003), one folder of the shared ``Gov.rar``: QueryLevelNorm, 5
    folds, 64 features, labels 0/1."""
    return Dataset(
        name=f"{task}2003",
        title=(f"LETOR 3.0 .Gov {task.upper()}2003 ({what}), QueryLevelNorm ({n_queries} queries, "
               "64 features, 0/1)"),
        method="url",
        urls=(f"{_LETOR_OLD}/LETOR3.0/Gov.rar",),
        homepage=_LETOR_HOME,
        archive="Gov.rar",
        archive_sha256=None,
        layout=f"Gov/QueryLevelNorm/2003_{task}_dataset/Fold{{fold}}/{{split}}.txt",
        licence=_LETOR_LICENCE,
        redistributable=False,
        citation=_LETOR3_CITE,
        kind="letor",
        n_features=64,
        folder="letor3-gov",
        quick_substitute=quick_substitute,
        checksum_note=_NO_SHA_LETOR,
    )


REGISTRY: dict[str, Dataset] = {
    d.name: d
    for d in [
        Dataset(
            name="mslr-sample",
            title="MSLR-WEB10K Fold1, first 5,000 lines of train and test (rankeval 0.8.2 test data)",
            method="pip-sdist",
            pip_spec="rankeval==0.8.2",
            urls=("https://files.pythonhosted.org/packages/source/r/rankeval/rankeval-0.8.2.tar.gz",),
            homepage="https://pypi.org/project/rankeval/0.8.2/",
            archive="rankeval-0.8.2.tar.gz",
            archive_sha256="c7d71602ab7fe0a0281976c1f0e883cb16431f72e4e946e5fd83790449bb21a9",
            files=(
                DataFile(
                    "msn1.fold1.train.5k.txt",
                    "6d1721de961a35fbaef7085dc5b41e2940f0ddb04bab5f7a8566cf7db4158fa6",
                    "rankeval-0.8.2/rankeval/test/data/msn1.fold1.train.5k.txt",
                ),
                DataFile(
                    "msn1.fold1.test.5k.txt",
                    "13d3c638edd23e482c38f4316c2680c938c2eaedbe096970ab30a48e364463d3",
                    "rankeval-0.8.2/rankeval/test/data/msn1.fold1.test.5k.txt",
                ),
            ),
            licence=(
                "an excerpt of MSLR-WEB10K (Microsoft Research, research use) redistributed by the "
                "rankeval project (ISTI-CNR, MPL 2.0) in its PyPI sdist; lrank fetches it from PyPI and "
                "never commits it"
            ),
            redistributable=False,
            citation=(
                "Qin, T., Liu, T.-Y. (2013). Introducing LETOR 4.0 Datasets. arXiv:1306.2597; "
                "Lucchese, C. et al. (2017). RankEval: An Evaluation and Analysis Framework for "
                "Learning-to-Rank Solutions. SIGIR."
            ),
            kind="letor-sample",
            n_features=136,
            folds=(1,),
            quick_substitute="(is the quick profile's real data)",
            checksum_note="sha256 of the sdist and of both extracted files measured here; verified on load",
        ),
        Dataset(
            name="mslr-web10k",
            title="Microsoft Learning to Rank, MSLR-WEB10K (10,000 queries, 136 features, labels 0-4)",
            method="url",
            urls=(
                "https://api.onedrive.com/v1.0/shares/s!AtsMfWUz5l8nbOIoJ6Ks0bEMp78/root/content",
                "http://research.microsoft.com/en-us/um/beijing/projects/mslr/data/MSLR-WEB10K.zip",
            ),
            homepage="https://www.microsoft.com/en-us/research/project/mslr/",
            archive="MSLR-WEB10K.zip",
            archive_sha256="2902142ea33f18c59414f654212de5063033b707d5c3939556124b1120d3a0ba",
            files=tuple(
                DataFile(f"Fold{f}/{s}.txt", sha) for (f, s), sha in sorted(_MSLR_FOLDS.items())
            ),
            layout="Fold{fold}/{split}.txt",
            licence="Microsoft Research MSLR release: research use; never redistributed here",
            redistributable=False,
            citation=_LETOR4_CITE,
            kind="letor",
            n_features=136,
            quick_substitute="mslr-sample (first 5,000 lines of Fold1 train/test)",
            checksum_note=(
                "zip sha256 (1,234,144,912 bytes) as listed by TensorFlow Datasets and pytorchltr; per-file "
                "sha256 as listed by pytorchltr"
            ),
        ),
        _letor4("mq2007", "1,692"),
        _letor4("mq2008", "784"),
        Dataset(
            name="ohsumed",
            title="LETOR 3.0 OHSUMED, QueryLevelNorm (106 queries, 45 features, labels 0-2)",
            method="url",
            urls=(f"{_LETOR_OLD}/LETOR3.0/OHSUMED.zip",),
            homepage=_LETOR_HOME,
            archive="OHSUMED.zip",
            archive_sha256=None,
            layout="OHSUMED/QueryLevelNorm/Fold{fold}/{split}.txt",
            licence=_LETOR_LICENCE,
            redistributable=False,
            citation=_LETOR3_CITE,
            kind="letor",
            n_features=45,
            quick_substitute="mslr-sample",
            checksum_note=_NO_SHA_LETOR,
        ),
        _letor3_gov("hp", "homepage finding", "150",
                    "a generated meta-search set (RankBoost Table 1), else mslr-sample"),
        _letor3_gov("td", "topic distillation", "50", "mslr-sample"),
        Dataset(
            name="movielens-100k",
            title="MovieLens 100K (943 users, 1,682 movies, 100,000 ratings 1-5)",
            method="url",
            urls=("https://files.grouplens.org/datasets/movielens/ml-100k.zip",),
            homepage="https://grouplens.org/datasets/movielens/100k/",
            archive="ml-100k.zip",
            archive_sha256="50d2a982c66986937beb9ffb3aa76efe955bf3d5c6b761f4e3a7cd717c6a3229",
            archive_md5="0e33842e24a9c977be4e0107933c0723",
            files=(DataFile("ml-100k/u.data"),),
            pip_fallback=PipPackage(
                spec="recbole==1.2.1",
                filename="recbole-1.2.1-py3-none-any.whl",
                sha256="9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407",
                files=(
                    DataFile(
                        "ml-100k.inter",
                        "4edb74e2a81178c2ba9ff381495f754f996c4aea351b1272ca36b43da0935eff",
                        "recbole/dataset_example/ml-100k/ml-100k.inter",
                    ),
                ),
            ),
            licence=(
                "GroupLens usage licence: research use only, with acknowledgement (cite Harper & Konstan "
                "2015); no redistribution without GroupLens' permission, no commercial use. The same "
                "ratings are shipped by the RecBole project (MIT licence for its code) inside its PyPI "
                "wheel recbole==1.2.1; lrank downloads either copy into the gitignored data folder at run "
                "time and never commits or redistributes it"
            ),
            redistributable=False,
            citation=(
                "Harper, F. M., Konstan, J. A. (2015). The MovieLens Datasets: History and Context. ACM TiiS "
                "5(4), 19."
            ),
            kind="movielens",
            folds=(),
            quick_substitute="(is the quick profile's real data: GroupLens zip, else the recbole wheel)",
            checksum_note=(
                "zip sha256 (4,924,029 bytes) as listed by TensorFlow Datasets; md5 as published by "
                "GroupLens (ml-100k.zip.md5); u.data's sha256 recorded at first download. Second source: "
                "the recbole 1.2.1 wheel's sha256 (as on PyPI) and ml-100k.inter's sha256 (1,979,230 "
                "bytes, 100,000 rows), both measured here"
            ),
        ),
        Dataset(
            name="yahoo-ltr",
            title="Yahoo! Learning to Rank Challenge (C14), set 1 and set 2",
            method="manual",
            urls=("https://webscope.sandbox.yahoo.com/catalog.php?datatype=c",),
            homepage="https://webscope.sandbox.yahoo.com/catalog.php?datatype=c",
            archive=None,
            archive_sha256=None,
            layout="set{fold}.{split}.txt",
            split_names={"train": "train", "valid": "valid", "test": "test"},
            folds=(1, 2),
            licence=(
                "Yahoo! Webscope data agreement (research use, no redistribution); must be requested and "
                "accepted by each user; never committed here"
            ),
            redistributable=False,
            citation=(
                "Chapelle, O., Chang, Y. (2011). Yahoo! Learning to Rank Challenge Overview. "
                "JMLR W&CP 14, 1-24."
            ),
            kind="letor",
            n_features=700,
            quick_substitute="mslr-sample",
            checksum_note=(
                "obtained by hand under a licence: sha256 of each file recorded in SHA256SUMS at first load"
            ),
        ),
    ]
}


# ------------------------------------------------------------------------------ download steps
def _download(url: str, dest: Path, timeout: float = 60.0) -> None:
    """Download ``url`` to ``dest`` with pooch (streamed into a temporary folder next to ``dest``,
    moved into place only when complete). Tests monkeypatch this.

    Checksums are verified afterwards by the caller (`_verify`), so a mismatch is a `ChecksumError`
    naming the file, the expected sha256 and where to place a good copy.
    """
    import pooch

    dest = Path(dest)
    _mkdir(dest.parent)
    pooch.get_logger().setLevel("WARNING")  # lrank prints its own one-line messages
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=timeout,
                                      headers={"User-Agent": "lrank-fetch"})
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".lrank-fetch-") as tmp:
        try:
            got = pooch.retrieve(url, known_hash=None, fname=dest.name, path=tmp, downloader=downloader,
                                 progressbar=False)
        except Exception as exc:  # requests' errors, pooch's ValueError for an unknown protocol
            raise OSError(f"{type(exc).__name__}: {exc}") from None
        os.replace(got, dest)


def _pip_command(spec: str, dest_dir: Path, binary: bool = False) -> list[str]:
    """``python -m pip download SPEC --no-deps --no-binary NAME -d DEST`` (``--only-binary`` for a wheel).

    ``--no-binary :all:`` (as first specified) fails here: it also forces rankeval's *build*
    dependencies (numpy, scipy) to be built from source; ``--no-binary rankeval`` makes only
    rankeval itself an sdist, which is what we need.
    """
    project = spec.split("==")[0]
    return [sys.executable, "-m", "pip", "download", spec, "--no-deps",
            "--only-binary" if binary else "--no-binary", project, "-d", str(dest_dir), "--quiet"]


def _run_child(cmd: list[str]) -> subprocess.CompletedProcess:
    """Run ``cmd`` in its own process group; if we are interrupted (SIGTERM, Ctrl-C), end the group.

    pip may start children of its own (an sdist's metadata build); killing the group leaves no orphan.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate()
    except BaseException:
        _end_group(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _end_group(proc: subprocess.Popen) -> None:
    import signal

    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # the leader is gone; make sure nothing of its group is left
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _pip_download(spec: str, dest_dir: Path, binary: bool = False) -> None:
    """Download a distribution from PyPI with pip into ``dest_dir`` (tests monkeypatch this)."""
    cmd = _pip_command(spec, dest_dir, binary)
    res = _run_child(cmd)
    if res.returncode != 0:
        raise OSError(f"{' '.join(cmd)} failed:\n{res.stderr.strip()[-2000:]}")


class _Terminated(SystemExit):
    """SIGTERM arrived during a fetch: unwinds so that temporary folders and children are cleaned."""


def _on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Terminated(128 + signum)


class _CleanupOnSigterm:
    """Within the block, SIGTERM raises `_Terminated` (main thread, default handler only)."""

    def __enter__(self):
        import signal
        import threading

        self.old = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self.old = signal.signal(signal.SIGTERM, _on_sigterm)
        return self

    def __exit__(self, *exc):
        import signal

        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)
        return False


def _md5_of(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def _verify(path: Path, sha256: str | None, what: str, url: str | None = None, md5: str | None = None) -> str:
    digest = sha256_of(path)
    if sha256 is not None and digest != sha256:
        raise ChecksumError(
            f"{what}: {path} has sha256 {digest}, expected {sha256}.\n"
            + (f"Download it again from {url} and place it at {path}, " if url else f"Replace {path}, ")
            + "or delete it and run lrank.data.fetch(..., force=True)."
        )
    if md5 is not None and _md5_of(path) != md5:
        raise ChecksumError(
            f"{what}: {path} has the wrong md5 (expected {md5}); download it again from {url}"
        )
    return digest


def _manual_hint(ds: Dataset, path: Path) -> str:
    return (
        f"Download it by hand from {ds.urls[0]} (home page {ds.homepage}) and place it at {path}, "
        f"then run lrank.data.fetch({ds.name!r}) again."
    )


def _get_archive(ds: Dataset, force: bool) -> Path:
    """The verified archive of ``ds`` in its folder, downloaded if absent (or if ``force``).

    An archive without a registry checksum is trusted on first use: its sha256 is recorded in
    ``SHA256SUMS`` (with a `UnverifiedDownloadWarning` saying so) and every later fetch, including a
    forced new download, must match it.
    """
    assert ds.archive is not None
    path = _mkdir(ds.directory) / ds.archive
    source = None
    if force or not path.is_file():
        errors = []
        done = False
        if ds.method == "pip-sdist":
            try:
                with tempfile.TemporaryDirectory(dir=ds.directory, prefix=".lrank-fetch-") as tmp:
                    _pip_download(ds.pip_spec, Path(tmp))
                    got = Path(tmp) / ds.archive
                    if not got.is_file():
                        raise OSError(f"pip did not produce {ds.archive} (got {sorted(os.listdir(tmp))})")
                    os.replace(got, path)
                    done, source = True, f"pip download {ds.pip_spec}"
            except OSError as exc:
                errors.append(f"pip download {ds.pip_spec}: {exc}")
        if not done:
            for url in ds.urls:
                try:
                    _download(url, path)
                    done, source = True, url
                    break
                except (OSError, ValueError) as exc:
                    errors.append(f"{url}: {exc}")
        if not done:  # never fall back silently on an old archive when a fresh one was asked for
            raise FetchError(
                f"could not download {ds.name}:\n  " + "\n  ".join(errors) + "\n" + _manual_hint(ds, path)
            )
    if ds.archive_sha256 is not None:
        _verify(path, ds.archive_sha256, ds.name, ds.urls[0], ds.archive_md5)
        return path
    recorded = _read_sums(ds.directory).get(ds.archive)
    if recorded is not None:
        digest = sha256_of(path)
        if digest != recorded:
            raise ChecksumError(
                f"{ds.name}: {path} has sha256 {digest}, but the archive first used here had {recorded} "
                f"(recorded in {ds.directory / 'SHA256SUMS'}): a damaged or different download. Delete "
                f"{path} and fetch again; if the publisher really changed the archive, delete its line in "
                "SHA256SUMS first."
            )
        return path
    digest = _verify(path, None, ds.name, md5=ds.archive_md5)
    _record_sum(ds.directory, ds.archive, digest)
    if source is None:
        how = "was placed by hand"
    elif source.startswith("http:"):
        how = f"came over plain http (unencrypted, unauthenticated) from {source}"
    else:
        how = f"was downloaded from {source}"
    warnings.warn(
        f"{ds.name}: {ds.archive} {how} and no checksum is published for it, so nothing proves it is the "
        f"genuine archive. Its sha256 {digest} is now recorded in {ds.directory / 'SHA256SUMS'}; every "
        "later fetch is checked against it (trust on first use).", UnverifiedDownloadWarning, stacklevel=5)
    return path


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


#: command-line RAR readers tried, in order, when the libarchive library cannot be loaded
_RAR_TOOLS = ("unrar", "unar", "7z", "7zz", "bsdtar")


class _NoLibarchive(Exception):
    """The libarchive library (through the libarchive-c package) cannot be loaded here."""


def _rar_command(tool: str, exe: str, archive: Path, dest: Path) -> list[str]:
    """The command line that extracts ``archive`` into ``dest`` with ``tool``."""
    if tool == "unrar":
        return [exe, "x", "-o+", "-inul", str(archive), str(dest) + os.sep]
    if tool == "unar":
        return [exe, "-q", "-f", "-D", "-o", str(dest), str(archive)]
    if tool in ("7z", "7zz"):
        return [exe, "x", "-y", "-bd", f"-o{dest}", str(archive)]
    return [exe, "-xf", str(archive), "-C", str(dest)]


def _extract_with_tool(tool: str, exe: str, archive: Path, dest: Path) -> str | None:
    """Extract ``archive`` into ``dest`` with a command-line tool, through a temporary folder (merged into
    ``dest`` when complete): None when done, else why not (a tool that exits 0 having extracted nothing,
    as unrar-free 0.1 does on RAR 3 archives, is a failure)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".lrank-extract-") as tmp:
        res = subprocess.run(_rar_command(tool, exe, archive, Path(tmp)), capture_output=True)
        if res.returncode != 0:
            text = (res.stderr or res.stdout).decode("utf-8", "replace").strip()
            return f"exit code {res.returncode}: {text[-300:]}"
        got = [p for p in Path(tmp).rglob("*") if p.is_file()]
        if not got:
            return "exit code 0 but nothing extracted (it cannot read this RAR version)"
        for p in got:
            target = dest / p.relative_to(tmp)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(p, target)
    return None


def _extract_with_libarchive(archive: Path, dest: Path) -> None:
    """Extract every regular file and folder of ``archive`` (any format libarchive reads: RAR 4 and 5,
    7z, ...) into ``dest``; a member whose path leaves ``dest`` is refused."""
    try:
        import libarchive
    except Exception as exc:  # noqa: BLE001 - the package or the C library it loads is missing
        raise _NoLibarchive(f"{type(exc).__name__}: {exc}") from None
    root = dest.resolve()
    try:
        with libarchive.file_reader(str(archive)) as entries:
            for entry in entries:
                rel = entry.pathname.replace("\\", "/")
                target = (root / rel).resolve()
                if rel.startswith("/") or not target.is_relative_to(root):
                    raise FetchError(f"{archive}: member {entry.pathname!r} would be written outside {dest}")
                if entry.isdir:
                    target.mkdir(parents=True, exist_ok=True)
                elif entry.isreg:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with open(target, "wb") as fh:
                        for block in entry.get_blocks():
                            fh.write(block)
    except libarchive.ArchiveError as exc:
        raise FetchError(f"cannot extract {archive}: {exc}") from None


def _extract(archive: Path, dest: Path, members: list[str] | None = None) -> None:
    """Extract ``members`` (or everything) of a .tar.gz, .zip or .rar archive into ``dest``."""
    name = archive.name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as tf:
            if members is None:
                tf.extractall(dest, filter="data")
            else:
                for m in members:
                    try:
                        tf.extract(m, dest, filter="data")
                    except KeyError:
                        raise FetchError(f"{archive} has no member {m!r}") from None
        return
    if name.endswith(".zip"):
        if not zipfile.is_zipfile(archive):
            raise FetchError(f"{archive} is not a zip archive (a download that returned a web page?)")
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest, members=members)
        return
    if name.endswith(".rar"):
        with open(archive, "rb") as fh:
            if not fh.read(7).startswith(b"Rar!"):
                raise FetchError(f"{archive} is not a RAR archive (a download that returned a web page?)")
        errors = []
        try:
            _extract_with_libarchive(archive, dest)
            return
        except _NoLibarchive as exc:
            errors.append(f"libarchive: {exc}")
        for tool in _RAR_TOOLS:
            exe = shutil.which(tool)
            if exe is not None:
                err = _extract_with_tool(tool, exe, archive, dest)
                if err is None:
                    return
                errors.append(f"{tool}: {err}")
        raise FetchError(
            f"cannot extract {archive}: no RAR reader here ({'; '.join(errors)}). lrank reads RAR through "
            "the libarchive C library (the Python package libarchive-c, installed with lrank, loads it; "
            "Debian/Ubuntu: apt-get install libarchive13; macOS: brew install libarchive, then set "
            "LIBARCHIVE to its libarchive.dylib), else with one of the command-line tools "
            f"{', '.join(_RAR_TOOLS)} on PATH (Debian/Ubuntu: apt-get install libarchive-tools, which "
            "gives bsdtar, or unar; Debian's 7zip and old unrar-free cannot read RAR 3). Install one, or "
            f"extract the archive by hand into {dest} and run fetch again."
        )
    raise FetchError(f"do not know how to extract {archive}")


# ------------------------------------------------------------------------------ SHA256SUMS
def _read_sums(folder: Path) -> dict[str, str]:
    f = folder / "SHA256SUMS"
    if not f.is_file():
        return {}
    out = {}
    for line in f.read_text().splitlines():
        if line.strip():
            digest, rel = line.split(None, 1)
            out[rel.strip().lstrip("*")] = digest
    return out


def _record_sum(folder: Path, rel: str, digest: str) -> None:
    sums = _read_sums(folder)
    sums[rel] = digest
    (folder / "SHA256SUMS").write_text("".join(f"{d}  {r}\n" for r, d in sorted(sums.items())))


#: A data set folder holding this file has stand-in files (`lrank.data.standins`), not the real download.
STANDIN_MARKER = "STANDIN.txt"


def is_standin(ds: Dataset) -> bool:
    """Whether ``ds``'s folder holds stand-in files written by `lrank.data.standins`.

    Parameters
    ----------
    ds : Dataset
        A registry entry (a value of `REGISTRY`); its folder is ``ds.directory``.

    Returns
    -------
    bool
        True when that folder holds the marker file `STANDIN_MARKER` (``STANDIN.txt``).
    """
    return (ds.directory / STANDIN_MARKER).is_file()


def _expected_sha(ds: Dataset, rel: str) -> str | None:
    if is_standin(ds):  # the stand-in writer's record; the registry's sha256 are the real files'
        return _read_sums(ds.directory).get(rel)
    for f in ds.files:
        if f.path == rel and f.sha256 is not None:
            return f.sha256
    return _read_sums(ds.directory).get(rel)


# ------------------------------------------------------------------------------ loaders
@dataclass
class LetorDataset:
    """A LETOR-style data set on disk: ``fold(k)`` loads ``Fold(train, valid, test)``.

    Every file is verified against the registry's sha256, or against the sha256 recorded at first
    download in ``SHA256SUMS`` when the registry has none.

    Parameters
    ----------
    spec : Dataset
        The registry entry (``REGISTRY[name]``, ``kind="letor"``): folder, file layout, split names,
        folds and checksums. ``name``, ``root`` (the folder) and ``folds`` are read from it.
    """

    spec: Dataset

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def root(self) -> Path:
        return self.spec.directory

    @property
    def folds(self) -> tuple[int, ...]:
        return self.spec.folds

    def path(self, fold: int, split: str) -> Path:
        """File of ``split`` ("train", "valid" or "test") in ``fold``.

        Parameters
        ----------
        fold : int
            Fold number, one of ``folds`` (1-based, as the releases number them).
        split : {"train", "valid", "test"}
            Which file of the fold.

        Returns
        -------
        pathlib.Path
            The file under ``root``, by the registry's layout; the older name (``trainingset``,
            ``validationset``, ``testset``) when only that file exists. It need not exist.

        Raises
        ------
        ValueError
            An unknown fold or split.
        """
        if fold not in self.spec.folds:
            raise ValueError(f"{self.name} has folds {self.spec.folds}, not {fold!r}")
        if split not in ("train", "valid", "test"):
            raise ValueError(f"split must be 'train', 'valid' or 'test', got {split!r}")
        main = self.root / self.spec.layout.format(fold=fold, split=self.spec.split_names[split])
        if not main.is_file():
            alt = self.root / self.spec.layout.format(fold=fold, split=_ALT_SPLITS[split])
            if alt.is_file():
                return alt
        return main

    def load(self, fold: int, split: str) -> RankingData:
        """One split of one fold, checksum verified.

        A file with no known sha256 (neither in the registry nor in ``SHA256SUMS``) has its sha256
        recorded in ``SHA256SUMS`` now and checked on later loads.

        Parameters
        ----------
        fold : int
            Fold number, one of ``folds``.
        split : {"train", "valid", "test"}
            Which file of the fold.

        Returns
        -------
        RankingData
            Its ``provenance`` gains ``dataset``, ``fold``, ``split`` and ``standin``.

        Raises
        ------
        FetchError
            The file is missing, or the folder holds stand-in files and ``LRANK_PROFILE`` is ``paper``.
        ChecksumError
            The file's sha256 is not the registry's or the recorded one.
        ValueError
            An unknown fold or split.
        """
        p = self.path(fold, split)
        rel = p.relative_to(self.root).as_posix()
        if not p.is_file():
            raise FetchError(f"{self.name}: {p} is missing. " + _manual_hint(self.spec, p))
        standin = is_standin(self.spec)
        if standin and os.environ.get("LRANK_PROFILE") == "paper":
            raise FetchError(f"{self.name}: {self.root} holds stand-in files ({STANDIN_MARKER}), not the "
                             "real data; the paper profile needs the real files. Rehearse with --profile "
                             f"rehearsal, or delete {self.root} and run python -m lrank fetch {self.name}.")
        expected = _expected_sha(self.spec, rel)
        if expected is None:  # first use of a file without a registry checksum: record it
            expected = sha256_of(p)
            _record_sum(self.root, rel, expected)
        try:
            data = load_letor(p, n_features=self.spec.n_features, expected_sha256=expected)
        except ValueError as exc:
            if "does not match the expected" in str(exc):
                raise ChecksumError(f"{self.name}: {exc}. " + _manual_hint(self.spec, p)) from None
            raise
        data.provenance.update(dataset=self.name, fold=fold, split=split, standin=standin)
        return data

    def fold(self, fold: int) -> Fold:
        """``Fold(train, valid, test)`` of fold ``fold`` (1-based, as the releases number them).

        Parameters
        ----------
        fold : int
            Fold number, one of ``folds``.

        Returns
        -------
        Fold
            The three splits, each loaded and verified by `load`.
        """
        return Fold(self.load(fold, "train"), self.load(fold, "valid"), self.load(fold, "test"))

    def fold_files(self, fold: int, splits: tuple[str, ...] = ("train", "valid", "test")) -> FoldFiles:
        """Fold ``fold`` left on disk until a job loads it (`FoldFiles.load`): a protocol over the five
        MSLR-WEB10K folds then holds one fold per worker in memory, not all five in the caller.

        Parameters
        ----------
        fold : int
            Fold number, one of ``folds``.
        splits : tuple of str, default ``("train", "valid", "test")``
            The splits ``load()`` will load (each ``"train"``, ``"valid"`` or ``"test"``); the others
            are None in its `Fold`.

        Returns
        -------
        FoldFiles
            Nothing is read yet; the fold number and split names are checked (a ``ValueError``).
        """
        for split in splits:
            self.path(fold, split)  # validates the fold number and the split names
        return FoldFiles(self.name, fold, tuple(splits))

    def __repr__(self) -> str:
        return f"LetorDataset({self.name!r}, root={str(self.root)!r}, folds={self.folds})"


@dataclass(frozen=True)
class FoldFiles:
    """One fold of a registered LETOR-style data set, not yet loaded: ``load()`` gives the `Fold` (a
    split not in ``splits`` is None), checksum verified. Jobs of `lrank.experiments` accept it wherever
    they accept a `Fold` (`as_fold`), so each loads its fold where it runs and lets it go afterwards.
    Its checkpoint fingerprint is the files' sha256 (from the registry or ``SHA256SUMS``), without
    reading them.

    Parameters
    ----------
    dataset : str
        The data set's name, a key of `REGISTRY` (e.g. ``"mslr-web10k"``).
    fold : int
        Fold number (1-based). Not checked here: `LetorDataset.fold_files` checks it and ``splits``.
    splits : tuple of str, default ``("train", "valid", "test")``
        The splits ``load()`` loads (each ``"train"``, ``"valid"`` or ``"test"``).
    """

    dataset: str
    fold: int
    splits: tuple[str, ...] = ("train", "valid", "test")

    def load(self) -> Fold:
        """The `Fold`, loaded from the files (or from lrank's cache of them)."""
        ld = LetorDataset(_spec(self.dataset))
        return Fold(*(ld.load(self.fold, s) if s in self.splits else None
                      for s in ("train", "valid", "test")))

    def __lrank_fingerprint__(self) -> tuple:
        ld = LetorDataset(_spec(self.dataset))
        shas = []
        for split in self.splits:
            p = ld.path(self.fold, split)
            rel = p.relative_to(ld.root).as_posix()
            shas.append(_expected_sha(ld.spec, rel) or (sha256_of(p) if p.is_file() else None))
        return ("FoldFiles", self.dataset, self.fold, self.splits, tuple(shas))


def as_fold(fold: Fold | FoldFiles) -> Fold:
    """``fold`` itself, or the `Fold` a `FoldFiles` loads.

    Parameters
    ----------
    fold : Fold or FoldFiles
        A loaded fold, or one left on disk (loaded now, checksum verified).

    Returns
    -------
    Fold
    """
    return fold.load() if isinstance(fold, FoldFiles) else fold


def _files_present(ds: Dataset, any_source: bool = False) -> bool:
    if ds.kind == "letor":
        ld = LetorDataset(ds)
        return all(ld.path(f, s).is_file() for f in ds.folds for s in ("train", "valid", "test"))
    if any_source and ds.pip_fallback is not None and all(
        (ds.directory / f.path).is_file() for f in ds.pip_fallback.files
    ):
        return True
    return bool(ds.files) and all((ds.directory / f.path).is_file() for f in ds.files)


def _from_pip_package(pkg: PipPackage, folder: Path) -> None:
    """Unpack ``pkg.files`` from the distribution ``pkg.filename``, checksummed, into ``folder``.

    A distribution file already in ``folder`` (placed there by hand) is used as it is; otherwise
    ``pip download`` fetches it into a temporary folder that is removed afterwards.
    """
    _mkdir(folder)
    placed = folder / pkg.filename
    with tempfile.TemporaryDirectory(dir=folder, prefix=".lrank-fetch-") as tmp:
        dist = placed
        if not placed.is_file():
            try:
                _pip_download(pkg.spec, Path(tmp), binary=pkg.binary)
            except OSError as exc:
                raise FetchError(f"pip download {pkg.spec} --no-deps: {exc}") from None
            dist = Path(tmp) / pkg.filename
            if not dist.is_file():
                raise FetchError(f"pip download {pkg.spec} did not produce {pkg.filename} "
                                 f"(got {sorted(os.listdir(tmp))})")
        _verify(dist, pkg.sha256, pkg.spec, f"pip download {pkg.spec} --no-deps")
        try:
            with zipfile.ZipFile(dist) if dist.suffix == ".whl" else tarfile.open(dist) as arc:
                for f in pkg.files:
                    member = f.member or f.path
                    if isinstance(arc, zipfile.ZipFile):
                        payload = arc.read(member)
                    else:
                        fh = arc.extractfile(member)
                        if fh is None:
                            raise KeyError(member)
                        payload = fh.read()
                    out = Path(tmp) / ("m-" + Path(f.path).name)
                    out.write_bytes(payload)
                    _verify(out, f.sha256, f"{pkg.spec}:{member}")
                    os.replace(out, folder / f.path)
        except KeyError as exc:
            raise FetchError(f"{dist} has no member {exc}") from None
        except (zipfile.BadZipFile, tarfile.TarError) as exc:
            raise FetchError(f"{dist} is not a readable {dist.suffix} archive: {exc}") from None


def _movielens_file(ds: Dataset, force: bool) -> Path:
    """The verified ratings file: GroupLens' ``u.data`` (first source) or the wheel's ``.inter``.

    Tries the GroupLens zip, then the PyPI package; raises one `FetchError` naming both sources and
    where to place either file by hand when neither can be had.
    """
    udata = ds.directory / ds.files[0].path
    pkg = ds.pip_fallback
    inter = ds.directory / pkg.files[0].path if pkg else None
    if not force:
        if udata.is_file():
            _verify(udata, _expected_sha(ds, ds.files[0].path), ds.name, ds.urls[0])
            return udata
        if inter is not None and inter.is_file():
            _verify(inter, pkg.files[0].sha256, ds.name, f"pip download {pkg.spec} --no-deps")
            return inter
    errors = []
    try:
        _ensure_extracted(ds, force)
        _verify(udata, _expected_sha(ds, ds.files[0].path), ds.name, ds.urls[0])
        return udata
    except ChecksumError:
        raise
    except FetchError as exc:
        if pkg is None:
            raise
        errors.append(f"1. GroupLens ({ds.urls[0]}): {str(exc).splitlines()[0]}")
    try:
        _from_pip_package(pkg, ds.directory)
        return inter
    except FetchError as exc:
        errors.append(f"2. PyPI ({pkg.spec}, member {pkg.files[0].member}): {str(exc).splitlines()[0]}")
    raise FetchError(
        f"could not get {ds.name} from either source:\n  " + "\n  ".join(errors) + "\n"
        f"Place by hand either GroupLens' {ds.archive} at {ds.directory / ds.archive} (from {ds.urls[0]}) "
        f"or the wheel {pkg.filename} at {ds.directory / pkg.filename} (from `pip download {pkg.spec} "
        f"--no-deps` where PyPI can be reached), then run lrank.data.fetch({ds.name!r}) again."
    )


def _spec(name: str) -> Dataset:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown data set {name!r}; known: {', '.join(REGISTRY)}") from None


def _ensure_extracted(ds: Dataset, force: bool) -> None:
    if not force and _files_present(ds):
        return
    if ds.method == "manual":
        raise FetchError(
            f"{ds.title} cannot be downloaded automatically: its licence ({ds.licence}) requires each user "
            f"to request it and accept Yahoo!'s data agreement at {ds.urls[0]}. Then extract "
            f"'ltrc_yahoo.tar.bz2' and place set1.train.txt, set1.valid.txt, set1.test.txt (and set2.*) "
            f"in {ds.directory}, and run lrank.data.fetch({ds.name!r}) again."
        )
    archive = _get_archive(ds, force)
    members = [f.member or f.path for f in ds.files] if ds.kind == "letor-sample" else None
    if ds.kind == "letor-sample":
        with tempfile.TemporaryDirectory(dir=ds.directory, prefix=".lrank-fetch-") as tmp:
            _extract(archive, Path(tmp), members)
            for f in ds.files:
                os.replace(Path(tmp) / (f.member or f.path), ds.directory / f.path)
    else:
        _extract(archive, ds.directory)
    if not _files_present(ds):
        found = sorted(p.relative_to(ds.directory).as_posix() for p in ds.directory.rglob("*.txt"))[:10]
        raise FetchError(
            f"{ds.name}: extracted {archive}, but the expected files "
            f"({ds.layout or [f.path for f in ds.files]}) are not there; found {found}. "
            f"Place the files by hand under {ds.directory}."
        )
    if ds.kind != "letor-sample":  # record sha256 of files without a registry checksum
        for rel in _required_files(ds):
            if _expected_sha(ds, rel) is None:
                _record_sum(ds.directory, rel, sha256_of(ds.directory / rel))


def _required_files(ds: Dataset) -> list[str]:
    if ds.kind == "letor":
        ld = LetorDataset(ds)
        return [
            ld.path(f, s).relative_to(ds.directory).as_posix()
            for f in ds.folds
            for s in ("train", "valid", "test")
        ]
    return [f.path for f in ds.files]


def fetch(name: str, force: bool = False) -> Any:
    """Download (if needed), verify and load a registered data set.

    Parameters
    ----------
    name : str
        A key of ``REGISTRY``.
    force : bool, default False
        Download and extract again even when the files are present.

    Returns
    -------
    tuple or LetorDataset or ndarray
        ``(train, test)`` RankingData for ``mslr-sample``; a :class:`LetorDataset` for the LETOR-style
        data sets (``.fold(k)``); the ratings matrix (users x movies, float64, NaN unrated) for
        ``movielens-100k``.

    Raises
    ------
    FetchError
        The download failed (the message names the URL and the path to place the file by hand), a
        manual data set is absent, or extraction failed.
    ChecksumError
        A file's sha256 differs from the registry's (or from the one recorded at first download).
    """
    ds = _spec(name)
    with _CleanupOnSigterm():
        return _fetch(ds, force)


def _fetch(ds: Dataset, force: bool) -> Any:
    name = ds.name
    if ds.kind != "movielens":  # MovieLens has two sources, tried in `_movielens_file`
        _ensure_extracted(ds, force)
    if ds.kind == "letor-sample":
        out = []
        for f in ds.files:
            p = ds.directory / f.path
            try:
                d = load_letor(p, n_features=ds.n_features, expected_sha256=f.sha256)
            except ValueError as exc:
                if "does not match the expected" in str(exc):
                    raise ChecksumError(
                        f"{ds.name}: {exc}. Delete it and run lrank.data.fetch({name!r}, force=True)."
                    ) from None
                raise
            d.provenance.update(dataset=name, pip=ds.pip_spec, member=f.member)
            out.append(d)
        return tuple(out)
    if ds.kind == "movielens":
        from lrank.data.movielens import load_movielens

        p = _movielens_file(ds, force)
        return load_movielens(p, n_users=943 if name == "movielens-100k" else None,
                              n_movies=1682 if name == "movielens-100k" else None)
    return LetorDataset(ds)


def load_fold(name: str, fold: int) -> Fold:
    """``Fold(train, valid, test)`` of a LETOR-style data set: ``fetch(name).fold(fold)``.

    For ``mslr-sample`` (which has only train and test) ``valid`` is None.

    Parameters
    ----------
    name : str
        A key of `REGISTRY` naming a LETOR-style data set (``mslr-sample``, ``mslr-web10k``, ``mq2007``,
        ...); downloaded first if absent (`fetch`).
    fold : int
        Fold number (1-based); ``mslr-sample`` has only fold 1.

    Returns
    -------
    Fold

    Raises
    ------
    ValueError
        ``name`` is not LETOR-style (``movielens-100k``), or ``fold`` is not one of its folds.
    KeyError
        An unknown ``name``.
    """
    ds = _spec(name)
    if ds.kind == "letor-sample":
        if fold != 1:
            raise ValueError("mslr-sample holds only Fold1")
        train, test = fetch(name)
        return Fold(train, None, test)
    if ds.kind != "letor":
        raise ValueError(f"{name} is not a LETOR-style data set")
    return fetch(name).fold(fold)


def status():
    """One row per registered data set: present or absent here, what the quick profile uses, licence.

    Presence is checked by file existence only (checksums are verified when a data set is loaded).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset``, ``title``, ``status`` ("present" / "absent" / "manual, absent"),
        ``quick profile uses``, ``licence``, ``redistributable``, ``checksum``, ``path``.
    """
    import pandas as pd

    rows = []
    for ds in REGISTRY.values():
        present = _files_present(ds, any_source=True)
        st = "present" if present else ("manual, absent" if ds.method == "manual" else "absent")
        rows.append(
            {
                "dataset": ds.name,
                "title": ds.title,
                "status": st,
                "quick profile uses": ds.quick_substitute,
                "licence": ds.licence,
                "redistributable": ds.redistributable,
                "checksum": "sha256 in registry" if (ds.archive_sha256 or any(f.sha256 for f in ds.files))
                else "recorded at first download",
                "path": str(ds.directory),
            }
        )
    return pd.DataFrame(rows)
