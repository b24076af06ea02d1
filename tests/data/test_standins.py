"""Stand-in files (`lrank.data.standins`): each real download's layout, read by the real fetchers."""

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lrank.data import standins
from lrank.data.fetch import REGISTRY, STANDIN_MARKER, ChecksumError, FetchError, fetch

LETOR_SETS = ["mslr-web10k", "mq2007", "mq2008", "ohsumed", "td2003", "hp2003"]
#: the real releases' features and label ranges (the registry's titles say the same)
REAL_SHAPE = {"mslr-web10k": (136, 5), "mq2007": (46, 3), "mq2008": (46, 3), "ohsumed": (45, 3),
              "td2003": (64, 2), "hp2003": (64, 2), "yahoo-ltr": (700, 5)}


def _ids(data):
    return set(np.asarray(data.qid).tolist())


@pytest.mark.parametrize("name", LETOR_SETS)
def test_letor_layouts_load_through_the_fetchers_as_five_rotating_folds(rehearsal, name):
    ds = REGISTRY[name]
    for k in ds.folds:  # the exact file names the fetcher looks for
        for split in ("train", "valid", "test"):
            assert (rehearsal / "downloads" / (ds.folder or name) / ds.layout.format(
                fold=k, split=ds.split_names[split])).is_file()
    data = fetch(name)
    folds = [data.fold(k) for k in ds.folds]
    n_features, n_grades = REAL_SHAPE[name]
    every = _ids(folds[0].train) | _ids(folds[0].valid) | _ids(folds[0].test)
    for k, f in enumerate(folds):
        assert f.train.n_features == f.valid.n_features == f.test.n_features == n_features
        parts = [_ids(f.train), _ids(f.valid), _ids(f.test)]
        assert parts[0] | parts[1] | parts[2] == every and sum(map(len, parts)) == len(every)
        ys = np.concatenate([f.train.y, f.valid.y, f.test.y])
        assert set(np.unique(ys)) == set(range(n_grades))
        assert all(x.provenance["standin"] is True for x in f)
        nxt = folds[(k + 1) % len(folds)]
        assert _ids(nxt.valid) == parts[2]  # LETOR's rotation: fold k+1 validates on fold k's test part
    assert len(every) == sum(standins.SPECS[name].queries)


@pytest.mark.parametrize("name, comment", [("mslr-web10k", None), ("mq2007", "#docid = GX"),
                                           ("ohsumed", "#docid = "), ("td2003", "#docid = G"),
                                           ("yahoo-ltr", None)])
def test_comments_as_in_the_real_files(rehearsal, name, comment):
    ds = REGISTRY[name]
    path = rehearsal / "downloads" / (ds.folder or name) / ds.layout.format(
        fold=1, split=ds.split_names["train"])
    lines = path.read_text().splitlines()
    assert lines and all(line.split()[1].startswith("qid:") for line in lines)
    if comment is None:
        assert not any("#" in line for line in lines)
    else:
        assert all(comment in line for line in lines)


def test_yahoo_has_two_sets_of_three_splits_with_their_feature_ids(rehearsal):
    ya = fetch("yahoo-ltr")
    assert ya.folds == (1, 2)
    used = []
    for s in ya.folds:
        f = ya.fold(s)
        assert f.train.n_features == 700
        assert f.train.n_queries == standins.SPECS["yahoo-ltr"].queries[3 * s - 3]
        used.append(np.flatnonzero(np.concatenate([x.X for x in f]).any(axis=0)).size)
    assert used == [519, 596]  # as the real set 1 and set 2
    assert f.train.X.max() <= 1.0 and f.train.X.min() >= 0.0


def test_same_seed_same_bytes_other_seed_other_values(tmp_path, standin_root):
    standins.write_standin("mq2008", tmp_path / "a")
    standins.write_standin("mq2008", tmp_path / "b", random_state=1)
    sums = {k: (Path(k) / "downloads/mq2008/SHA256SUMS").read_text()
            for k in (standin_root, tmp_path / "a", tmp_path / "b")}
    assert sums[standin_root] == sums[tmp_path / "a"] != sums[tmp_path / "b"]


def test_an_edited_standin_fails_its_checksum(tmp_path, monkeypatch):
    standins.write_standin("ohsumed", tmp_path)
    monkeypatch.setenv("LRANK_DATA", str(tmp_path))
    f = tmp_path / "downloads/ohsumed/OHSUMED/QueryLevelNorm/Fold2/test.txt"
    f.write_text(f.read_text() + "\n")  # one byte more
    fetch("ohsumed").load(1, "train")  # untouched files load
    with pytest.raises(ChecksumError, match="does not match"):
        fetch("ohsumed").load(2, "test")


def test_registry_checksums_of_the_real_files_apply_without_the_marker(tmp_path, monkeypatch):
    """The marker alone lifts MSLR-WEB10K's registry sha256 (which no stand-in can match)."""
    standins.write_standin("mslr-web10k", tmp_path)
    monkeypatch.setenv("LRANK_DATA", str(tmp_path))
    fetch("mslr-web10k").load(1, "test")
    (tmp_path / "downloads/mslr-web10k" / STANDIN_MARKER).unlink()
    with pytest.raises(ChecksumError):
        fetch("mslr-web10k").load(1, "test")


def test_the_paper_profile_refuses_standins(rehearsal, monkeypatch):
    monkeypatch.setenv("LRANK_PROFILE", "paper")
    with pytest.raises(FetchError, match="stand-in files .* the paper profile needs the real files"):
        fetch("mq2007").fold(1)


def test_unknown_names_are_refused(tmp_path):
    with pytest.raises(KeyError, match="stand-ins exist for"):
        standins.write_standins(tmp_path, ["mslr-web30k"])
    with pytest.raises(KeyError, match="no stand-in for 'movielens-100k'"):
        standins.write_standin("movielens-100k", tmp_path)


def test_link_real_fetches_into_the_source_and_links(tmp_path, monkeypatch):
    import importlib

    fetch_mod = importlib.import_module("lrank.data.fetch")  # the module (lrank.data.fetch is the function)

    src = tmp_path / "src"
    (src / "downloads" / "mslr-sample").mkdir(parents=True)
    (src / "downloads" / "mslr-sample" / "x.txt").write_text("x")
    seen = []
    monkeypatch.setattr(fetch_mod, "fetch", lambda name: seen.append((name, fetch_mod.data_dir())))
    monkeypatch.setenv("LRANK_DATA", str(tmp_path / "elsewhere"))
    out = standins.link_real(tmp_path / "root", ["mslr-sample"], source=src)
    assert seen == [("mslr-sample", src.resolve())]  # fetched into the source data root
    assert (out["mslr-sample"] / "x.txt").read_text() == "x"
    assert str(fetch_mod.data_dir()) == str((tmp_path / "elsewhere").resolve())  # LRANK_DATA restored


def test_cli_writes_the_standins(tmp_path):
    r = subprocess.run([sys.executable, "-m", "lrank", "standins", str(tmp_path), "--only", "hp2003",
                        "td2003", "--no-real"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "hp2003: 15 stand-in files" in r.stdout and f"LRANK_DATA={tmp_path}" in r.stdout
    marker = (tmp_path / "downloads/letor3-gov" / STANDIN_MARKER).read_text()
    assert "NOT the real data" in marker and "td2003" in marker and "hp2003" in marker
    digest = hashlib.sha256((tmp_path / "downloads/letor3-gov/Gov/QueryLevelNorm/2003_hp_dataset/Fold1/"
                             "train.txt").read_bytes()).hexdigest()
    assert digest in (tmp_path / "downloads/letor3-gov/SHA256SUMS").read_text()
    bad = subprocess.run([sys.executable, "-m", "lrank", "standins", str(tmp_path), "--only", "nope",
                          "--no-real"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and "no stand-in for ['nope']" in bad.stderr
