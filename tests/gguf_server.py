"""A web server on 127.0.0.1 for the remote GGUF tests and benchmark: byte ranges as RFC 9110 says, the
bytes it sent counted, and the ways a server goes wrong, one URL prefix each.

``/ok/NAME``        ranges (206, ``Content-Range``), HEAD with ``Content-Length``
``/norange/NAME``   ignores ``Range``: 200 and the whole file
``/loop/NAME``      302 to itself
``/lying/NAME``     a ``Content-Length`` (HEAD) twice the file's; a range past the end is 416
``/cut/NAME``       promises the range, sends half of it and closes
``/slow/NAME``      answers after :attr:`GgufServer.delay` seconds
``/api/models/ORG/REPO/tree/REV`` and ``/ORG/REPO/resolve/REV/NAME``: the Hub's listing and files
(``HF_ENDPOINT=http://127.0.0.1:PORT``); the repository ``ORG/REPO`` holds every file served.

``/stats``: ``{"sent": …, "requests": …}``. Anything else is 404. ``files``: name → local path.
``python tests/gguf_server.py FOLDER`` serves every file of FOLDER and prints its address (the benchmark's
server, in a process of its own).
"""

from __future__ import annotations

import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

RANGE = re.compile(r"bytes=(\d+)-(\d*)")


class GgufServer:
    """Serves ``files`` until :meth:`stop`; ``sent`` counts the body bytes written, ``requests`` the requests."""

    def __init__(self, files: dict[str, str], delay: float = 2.0) -> None:
        self.files, self.delay, self.sent, self.requests = dict(files), delay, 0, 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                server._answer(self, head=True)

            def do_GET(self) -> None:
                server._answer(self, head=False)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def reset(self) -> None:
        with self._lock:
            self.sent = self.requests = 0

    def _count(self, count: int) -> None:
        with self._lock:
            self.sent += count

    def _answer(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        with self._lock:
            self.requests += 1
        path = unquote(urlparse(handler.path).path)
        if path == "/stats":
            stats = json.dumps({"sent": self.sent, "requests": self.requests}).encode()
            return _send(handler, 200, stats, {"Content-Type": "application/json"}, head)
        tree = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)(/.*)?", path)
        if tree:
            listing = [{"type": "file", "path": name, "size": os.path.getsize(local), "oid": "0" * 40}
                       for name, local in sorted(self.files.items())]
            return _send(handler, 200, json.dumps(listing).encode(), {"Content-Type": "application/json"}, head)
        resolve = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        kind, _, name = path.lstrip("/").partition("/")
        if resolve:
            kind, name = "ok", resolve[3]
        local = self.files.get(name)
        if local is None or kind not in ("ok", "norange", "loop", "lying", "cut", "slow"):
            return _send(handler, 404, b"not found", {}, head)
        if kind == "loop":
            return _send(handler, 302, b"", {"Location": handler.path}, head)
        if kind == "slow":
            self._stopping.wait(self.delay)
        size = os.path.getsize(local)
        claimed = 2 * size if kind == "lying" else size
        asked = RANGE.fullmatch(handler.headers.get("Range", "")) if kind != "norange" else None
        if head:
            return _send(handler, 200, b"", {"Content-Length": str(claimed), "Accept-Ranges": "bytes"}, True,
                         length=claimed)
        if asked is None:
            start, end, status = 0, size, 200
        else:
            start = int(asked[1])
            end = min(int(asked[2]) + 1 if asked[2] else size, size)
            if start >= size:
                return _send(handler, 416, b"", {"Content-Range": f"bytes */{size}"}, False)
            status = 206
        headers = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
        handler.send_response(status)
        for key, value in {**headers, "Content-Length": str(end - start)}.items():
            handler.send_header(key, value)
        handler.end_headers()
        stop = start + (end - start) // 2 if kind == "cut" else end
        try:
            with open(local, "rb") as stream:
                stream.seek(start)
                at = start
                while at < stop and not self._stopping.is_set():
                    chunk = stream.read(min(1 << 20, stop - at))
                    handler.wfile.write(chunk)
                    self._count(len(chunk))
                    at += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            return
        if kind == "cut":
            handler.close_connection = True


def _send(handler, status: int, body: bytes, headers: dict, head: bool, length: int | None = None) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    if "Content-Length" not in headers:
        handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.end_headers()
    if not head and body:
        handler.wfile.write(body)



if __name__ == "__main__":
    import sys

    folder = sys.argv[1]
    served = GgufServer({name: os.path.join(folder, name) for name in os.listdir(folder)})
    print(served.url, flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin
    finally:
        served.stop()
