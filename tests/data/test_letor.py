"""LETOR reader: errors that name file and line, round trip, the sha256-keyed binary cache."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lrank.data.letor as letor
from lrank.data import LetorFormatError, RankingData, load_letor, save_letor
from lrank.data.generators import make_letor_like


@pytest.fixture(autouse=True)
def data_root(tmp_path, monkeypatch):
    root = tmp_path / "lrank_data"
    monkeypatch.setenv("LRANK_DATA", str(root))
    return root


GOOD = "2 qid:10 1:0.5 2:0.25 # docid = a\n0 qid:10 1:0.1 2:0.75\n1 qid:11 2:1.5\n"


#: (file text, the line at fault, what the message says)
BAD_FILES = [
        ("1 qid:1 1:0.5\n0 qid:1 1:0.2 garbage\n", 2, "not 'label qid:ID"),  # malformed line
        ("1 qid:1 1:0.5\nnan qid:1 1:0.2\n", 2, "label is nan; labels must be finite integers in 0..30"),
        ("1 qid:1 1:0.5\n1.5 qid:1 1:0.2\n", 2, "label is 1.5; labels must be finite integers"),  # fractional
        ("a qid:1 1:0.5\n", 1, "label 'a' is not a number"),
        ("1 qid:1 1:0.5\n0 qid:2 1:0.2\n0 qid:1 1:0.3\n", 3, "qid 1 reappears"),  # non-contiguous qid
        ("1 qid:1 1:0.5\n0 qid:1 2:0.5 1:0.1\n", 2, "feature indices must increase"),  # decreasing
        ("1 qid:1 1:0.5 1:0.7\n", 1, "feature indices must increase"),  # repeated index
        ("1 qid:1 0:0.5\n", 1, "start at 1"),  # zero-based index
        ("1 qid:1 1:0.5\n0 1:0.2\n", 2, "not 'label qid:ID"),  # no qid
        ("1 qid:x 1:0.5\n", 1, "qid 'x' is not an integer"),
        ("1 qid:1 1:nan\n", 1, "NaN or infinite"),
        ("1 qid:1 1:inf\n", 1, "NaN or infinite"),
        ("# header\n\n1 qid:1 1:0.5\n1 qid:1 1:0.5\n0.5 qid:1 1:0.2\n", 5, "label is 0.5"),  # comments
        ("1 qid:1 1:0.5\n-1 qid:1 1:0.2\n", 2, "label is -1.0; labels must be non-negative"),
        ("1 qid:1 1:0.5\n31 qid:1 1:0.2\n", 2, "label is 31.0; labels must be below 31"),
        ("1 qid:1 1:0.5\n3000000000 qid:1 1:0.2\n", 2, "label is 3000000000.0; labels must be below 31"),
        ("1 qid:1 1:0.5\n1099511627776 qid:1 1:0.2\n", 2, "label is 1099511627776.0; labels must be below"),
        ("1 qid:1 1:0.5\n0 qid:99999999999999999999 1:0.2\n", 2,
         "qid 99999999999999999999 does not fit in 64 bits"),  # beyond int64: was a raw OverflowError
        ("1 qid:1 1:0.5\n0 qid:-99999999999999999999 1:0.2\n", 2, "does not fit in 64 bits"),
]


@pytest.mark.parametrize("text, line, match", BAD_FILES)
def test_errors_name_file_and_line(tmp_path, text, line, match):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(LetorFormatError, match=match) as err:
        load_letor(p)
    assert f"{p}:{line}:" in str(err.value)


@pytest.mark.parametrize("text", ["", "# nothing but a comment\n\n"])
def test_empty_file(tmp_path, text):
    p = tmp_path / "empty.txt"
    p.write_text(text)
    with pytest.raises(LetorFormatError, match="no documents"):
        load_letor(p)


def test_too_many_features(tmp_path):
    p = tmp_path / "wide.txt"
    p.write_text("1 qid:1 1:0.5 7:1\n")
    with pytest.raises(LetorFormatError, match="exceeds n_features=5"):
        load_letor(p, n_features=5)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_letor(tmp_path / "nope.txt")


def test_reads_sparse_lines_and_comments(tmp_path):
    p = tmp_path / "good.txt"
    p.write_text(GOOD)
    d = load_letor(p)
    assert d.n_queries == 2 and d.qid.tolist() == [10, 11] and d.y.tolist() == [2, 0, 1]
    np.testing.assert_array_equal(d.X, np.array([[0.5, 0.25], [0.1, 0.75], [0.0, 1.5]], np.float32))
    assert load_letor(p, n_features=4).n_features == 4
    assert d.provenance["sha256"] == letor.sha256_of(p)


def test_round_trip(tmp_path):
    d = make_letor_like(n_queries=7, docs_per_query=(1, 9), n_features=6, n_grades=5, random_state=0)
    p = tmp_path / "rt.txt"
    save_letor(d, p)
    e = load_letor(p, n_features=6)
    np.testing.assert_array_equal(e.X, d.X)  # %.9g round-trips float32 exactly
    np.testing.assert_array_equal(e.y, d.y)
    np.testing.assert_array_equal(e.qptr, d.qptr)
    np.testing.assert_array_equal(e.qid, d.qid)


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz", ".txt.bz2"])
def test_round_trip_keeps_docids_and_comments_and_compresses(tmp_path, suffix):
    """docids and comments used to be dropped (TREC runs from a saved file fell back to d<i> ids), and a
    ``.gz`` name got plain text that load_letor could not read."""
    d = make_letor_like(n_queries=3, docs_per_query=4, n_features=3, random_state=0)
    with_ids = RankingData(d.X, d.y, d.qptr, qid=d.qid, docids=[f"GX{i:03d}-12" for i in range(d.n_docs)])
    p = tmp_path / f"ids{suffix}"
    save_letor(with_ids, p)
    e = load_letor(p, n_features=3)
    np.testing.assert_array_equal(e.docids, with_ids.docids)
    np.testing.assert_array_equal(e.X, d.X)
    if suffix == ".txt.gz":  # no time stamp in the header: same data, same bytes
        first = p.read_bytes()
        save_letor(with_ids, p)
        assert p.read_bytes() == first
    comments = [f"docid = GX{i:03d} inc = 1 prob = 0.{i} # more" for i in range(d.n_docs)]
    with_comments = RankingData(d.X, d.y, d.qptr, qid=d.qid, comments=comments)
    save_letor(with_comments, tmp_path / "c.txt")
    e = load_letor(tmp_path / "c.txt", n_features=3)
    assert list(e.comments) == comments and list(e.docids) == [f"GX{i:03d}" for i in range(d.n_docs)]
    with pytest.raises(ValueError, match=r"docids\[2\] is 'a b'"):
        save_letor(RankingData(d.X, d.y, d.qptr, docids=["x", "y", "a b"] + ["z"] * (d.n_docs - 3)),
                   tmp_path / "bad.txt")
    with pytest.raises(ValueError, match=r"comments\[0\] holds a line break"):
        save_letor(RankingData(d.X, d.y, d.qptr, comments=["a\nb"] + [""] * (d.n_docs - 1)),
                   tmp_path / "b.txt")


def test_save_refuses_missing_values(tmp_path):
    d = make_letor_like(n_queries=2, docs_per_query=3, n_features=3, missing_rate=0.5, random_state=0)
    with pytest.raises(ValueError, match="missing values"):
        save_letor(d, tmp_path / "x.txt")


def test_cache_hit_returns_identical_arrays_without_parsing(tmp_path, data_root, monkeypatch):
    p = tmp_path / "c.txt"
    save_letor(make_letor_like(n_queries=5, docs_per_query=4, n_features=3, random_state=1), p)
    a = load_letor(p)
    assert len(list((data_root / "cache").glob("letor-v*.npz"))) == 1

    def boom(*args, **kwargs):
        raise AssertionError("parsed again although cached")

    monkeypatch.setattr(letor, "_parse", boom)
    b = load_letor(p)
    assert a.X.tobytes() == b.X.tobytes() and a.y.tobytes() == b.y.tobytes()
    assert a.qptr.tobytes() == b.qptr.tobytes() and a.qid.tobytes() == b.qid.tobytes()
    assert a.X.dtype == b.X.dtype == np.float32 and b.y.dtype == np.int32
    with pytest.raises(AssertionError, match="parsed again"):
        load_letor(p, cache=False)


def test_edited_file_is_reparsed(tmp_path, data_root):
    p = tmp_path / "e.txt"
    p.write_text(GOOD)
    a = load_letor(p)
    p.write_text(GOOD + "3 qid:12 1:9\n")  # new content, new sha256
    b = load_letor(p)
    assert b.n_docs == a.n_docs + 1 and b.y[-1] == 3
    assert b.provenance["sha256"] != a.provenance["sha256"]
    assert len(list((data_root / "cache").glob("letor-v*.npz"))) == 2


def test_damaged_cache_is_reparsed(tmp_path, data_root):
    p = tmp_path / "d.txt"
    p.write_text(GOOD)
    a = load_letor(p)
    (cfile,) = (data_root / "cache").glob("letor-v*.npz")
    cfile.write_bytes(b"not an npz")
    with pytest.warns(letor.LetorCacheWarning, match="damaged LETOR cache"):
        b = load_letor(p)
    assert a.X.tobytes() == b.X.tobytes()


def test_expected_sha256(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text(GOOD)
    assert isinstance(load_letor(p, expected_sha256=letor.sha256_of(p)), RankingData)
    with pytest.raises(LetorFormatError, match="does not match the expected"):
        load_letor(p, expected_sha256="0" * 64)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    n_features=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_round_trip_property(tmp_path, sizes, n_features, seed):
    """Finite float32 values (ties, zeros, negatives, extremes) and integral labels survive a round trip."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    pool = np.array([0.0, -0.0, 1.0, -2.5, 1e-30, 3.4e38, -3.4e38, 0.1], dtype=np.float32)
    X = np.where(rng.random((n, n_features)) < 0.5, rng.choice(pool, (n, n_features)),
                 rng.standard_normal((n, n_features)).astype(np.float32))
    y = rng.integers(0, 5, n)
    qid = rng.choice(10**6, size=len(sizes), replace=False)
    d = RankingData(X, y, np.r_[0, np.cumsum(sizes)], qid=qid)
    p = tmp_path / f"p{seed}-{n}-{n_features}.txt"
    save_letor(d, p)
    e = load_letor(p, n_features=n_features, cache=False)
    np.testing.assert_array_equal(e.X, d.X)
    np.testing.assert_array_equal(e.y, d.y)
    np.testing.assert_array_equal(e.qptr, d.qptr)
    np.testing.assert_array_equal(e.qid, d.qid)


def test_huge_feature_index_is_refused_before_allocating(tmp_path, monkeypatch):
    """Issue 14.2: ``100000000:1`` in a two-line file built a dense 2 x 1e8 matrix (8 GB peak)."""
    import lrank.data.letor as L

    p = tmp_path / "huge.txt"
    p.write_text("1 qid:1 1:0.5\n0 qid:1 2:0.1 100000000:1\n")
    allocated = []
    real = L._check_dense_size
    monkeypatch.setattr(L, "_check_dense_size", lambda *a: (real(*a), allocated.append(True)))
    with pytest.raises(LetorFormatError) as err:
        load_letor(p, cache=False)
    msg = str(err.value)
    assert msg.startswith(f"{p}:2: feature index 100000000 makes the dense feature matrix 2 x 100,000,000")
    assert "763 MiB" in msg and "only 3 values are stored" in msg and "max_dense_bytes=None" in msg
    assert not allocated  # refused inside the check, nothing dense was built
    p.write_text("1 qid:1 1:0.5\n0 qid:1 2:0.1 1000000000:1\n")
    with pytest.raises(LetorFormatError, match=r":2: feature index 1000000000 .* = 7.45 GiB, more than "
                                               r"max_dense_bytes=2,147,483,648"):
        load_letor(p, cache=False)


def test_dense_size_limit_is_a_parameter(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("1 qid:1 1:0.5 3:1\n0 qid:1 2:0.1 4:1\n")
    with pytest.raises(LetorFormatError, match=r":2: feature index 4 .* 2 x 4 float32 = 3.05e-05 MiB, "
                                               r"more than max_dense_bytes=16"):
        load_letor(p, cache=False, max_dense_bytes=16)
    assert load_letor(p, cache=False, max_dense_bytes=32).X.shape == (2, 4)
    assert load_letor(p, cache=False, max_dense_bytes=None).n_features == 4


def _compress(path, text, suffix):
    import bz2
    import gzip

    opener = {".gz": gzip.open, ".bz2": bz2.open}[suffix]
    p = path.with_name(path.name + suffix)
    with opener(p, "wt", encoding="utf-8") as fh:
        fh.write(text)
    return p


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
@pytest.mark.parametrize("text, line, match", BAD_FILES)
def test_compressed_files_get_the_same_file_line_errors(tmp_path, suffix, text, line, match):
    """The error paths read .gz / .bz2 files decompressed (they read the compressed bytes as text: an
    IndexError instead of the message)."""
    p = _compress(tmp_path / "bad.txt", text, suffix)
    with pytest.raises(LetorFormatError, match=match) as err:
        load_letor(p)
    assert f"{p}:{line}:" in str(err.value)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed_files_huge_index_names_the_line(tmp_path, suffix):
    p = _compress(tmp_path / "huge.txt", "1 qid:1 1:0.5\n0 qid:1 2:0.1 100000000:1\n", suffix)
    with pytest.raises(LetorFormatError) as err:
        load_letor(p, cache=False)
    assert str(err.value).startswith(f"{p}:2: feature index 100000000 makes the dense feature matrix")


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed_files_load_as_the_text(tmp_path, suffix):
    plain = tmp_path / "plain.txt"
    plain.write_text(GOOD)
    a = load_letor(plain, cache=False)
    b = load_letor(_compress(tmp_path / "c.txt", GOOD, suffix), cache=False)
    assert a.X.tobytes() == b.X.tobytes() and a.y.tolist() == b.y.tolist()
    assert a.qid.tolist() == b.qid.tolist()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "missing_entry"])
def test_a_damaged_cache_warns_and_is_parsed_and_rewritten(tmp_path, data_root, damage):
    """A damaged cache file raised BadZipFile (no path) on every later load: it is detected, reported,
    parsed again from the source and rewritten."""
    p = tmp_path / "d.txt"
    p.write_text(GOOD)
    a = load_letor(p)
    (cfile,) = (data_root / "cache").glob("letor-v*.npz")
    good = cfile.read_bytes()
    if damage == "truncate":
        cfile.write_bytes(good[: len(good) // 2])
    elif damage == "garbage":
        cfile.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    elif damage == "flip":
        b = bytearray(good)
        b[len(b) // 3] ^= 0xFF
        cfile.write_bytes(bytes(b))
    else:
        with np.load(cfile, allow_pickle=False) as z:
            kept = {k: z[k] for k in z.files if k != "y"}
        np.savez(cfile, **kept)
    said = f"damaged LETOR cache {re.escape(str(cfile))}.*parsing {re.escape(str(p))}"
    with pytest.warns(UserWarning, match=said):
        b = load_letor(p)
    assert a.X.tobytes() == b.X.tobytes() and a.y.tobytes() == b.y.tobytes()
    assert cfile.read_bytes() == good  # rewritten
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_letor(p)  # and trusted again, silently


def test_an_edited_cache_is_not_trusted(tmp_path, data_root):
    """A cache file whose arrays were edited (a valid .npz) was returned under the source's sha256: the
    cache records the sha256 of its own arrays and is parsed again when they differ."""
    p = tmp_path / "e.txt"
    p.write_text(GOOD)
    a = load_letor(p)
    (cfile,) = (data_root / "cache").glob("letor-v*.npz")
    with np.load(cfile, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["X"] = arrays["X"].copy()
    arrays["X"][0, 0] = 123.0
    np.savez(cfile, **arrays)
    with pytest.warns(UserWarning, match="damaged LETOR cache .*do not match the checksum"):
        b = load_letor(p)
    assert a.X.tobytes() == b.X.tobytes() and b.X[0, 0] == 0.5


def test_a_read_only_data_folder_still_returns_the_data(tmp_path, data_root, monkeypatch):
    """LRANK_DATA not writable: the cache cannot be written, the parse succeeded: warn, return the data."""
    p = tmp_path / "r.txt"
    p.write_text(GOOD)

    def no_write(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(data_root / "cache"))

    monkeypatch.setattr(letor.tempfile, "mkstemp", no_write)
    monkeypatch.setattr(letor.Path, "mkdir", no_write)
    with pytest.warns(UserWarning, match="could not write the LETOR cache .*Permission denied"):
        d = load_letor(p)
    assert d.n_docs == 3 and d.y.tolist() == [2, 0, 1]


@pytest.mark.skipif(__import__("os").geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_data_folder_for_real(tmp_path, data_root):
    import os
    import stat

    p = tmp_path / "r.txt"
    p.write_text(GOOD)
    data_root.mkdir()
    os.chmod(data_root, stat.S_IREAD | stat.S_IEXEC)
    try:
        with pytest.warns(UserWarning, match="could not write the LETOR cache"):
            assert load_letor(p).n_docs == 3
    finally:
        os.chmod(data_root, stat.S_IRWXU)


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_byte_order_mark_is_skipped(tmp_path, suffix):
    """A UTF-8 BOM (Windows editors) was read as part of the first label: "label '\\ufeff2'"."""
    text = "\ufeff" + GOOD
    if suffix:
        p = _compress(tmp_path / "bom.txt", text, suffix)
    else:
        p = tmp_path / "bom.txt"
        p.write_text(text, encoding="utf-8")
    d = load_letor(p, cache=False)
    assert d.y.tolist() == [2, 0, 1] and d.n_docs == 3
    bad = tmp_path / "bom_bad.txt"
    bad.write_text("\ufeff1 qid:1 1:0.5\n0.5 qid:1 1:0.2\n", encoding="utf-8")
    with pytest.raises(LetorFormatError, match=f"{re.escape(str(bad))}:2: label is 0.5"):
        load_letor(bad, cache=False)
    first = tmp_path / "bom_first.txt"
    first.write_text("\ufeffx qid:1 1:0.5\n", encoding="utf-8")
    with pytest.raises(LetorFormatError, match=":1: label 'x' is not a number"):
        load_letor(first, cache=False)
