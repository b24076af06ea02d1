"""A static file server on 127.0.0.1 (loopback only) for the fetch tests: the real downloader, no network."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # no request log on stderr
        pass


@contextlib.contextmanager
def serve_folder(root: Path) -> Iterator[str]:
    """Serve ``root`` over HTTP on a free loopback port; yields the base URL; stopped on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """``(folder, base URL)``: the fetch tests' ``http_root`` fixture (``pytest.fixture(http_root)``)."""
    root = tmp_path / "www"
    root.mkdir()
    with serve_folder(root) as base:
        yield root, base
