"""A GGUF file on a web server or on the Hugging Face Hub, read by byte ranges: the header, then the
position tensors' bytes, never the weights.

Where ``--gguf`` names a file (:func:`is_remote`):

- ``https://…`` or ``http://…``: any server that answers HTTP range requests, read through fsspec's
  HTTP file system (aiohttp);
- ``hf://ORG/REPO/PATH.gguf`` or ``ORG/REPO:PATH.gguf``, with ``@REVISION`` after the repository
  (``hf://ORG/REPO@v1/PATH.gguf``, ``ORG/REPO@v1:PATH.gguf``): the Hub's file at its ``resolve`` URL
  (``huggingface_hub.hf_hub_url``, on ``HF_ENDPOINT`` when it is set), with the token huggingface_hub
  finds (``HF_TOKEN``, ``hf auth login``: ``huggingface_hub.utils.build_hf_headers``), read over the same
  range requests. (``HfFileSystem``'s own reads retry with back-off and take whatever body the server
  sends; the bounds below hold only where every byte comes through one reader.)

:class:`RemoteFile` is a :class:`~pecli.models.gguf_header.Source`: the header walk asks for the bytes
it needs, and they are fetched in growing ranges (1 MiB, then half as much again as is held: a Llama 3
header of 9 MB takes six requests and 10 MB), then each position tensor's bytes by one range of its own.
First of all the last byte the ``Content-Length`` claims is asked for: a server whose file is shorter
answers 416, and one that ignores ranges answers with the whole file — both refused before anything is
trusted. Bounded: a header over :data:`MAX_HEADER_BYTES` is refused, every request has
:data:`TIMEOUT_SECONDS`, redirects are at most aiohttp's 10. Whatever goes wrong — a 404, a server that
does not serve ranges, a redirect loop, a timeout, a body shorter than its ``Content-Length`` or than the
range asked for — is one :class:`~pecli.errors.ConfigError` line (key ``gguf``) naming the file.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pecli.errors import ConfigError

#: The largest header read (a Llama 3 header, 128k tokens and 280k merges, is 9 MB; Gemma 3's 262k tokens 5 MB).
MAX_HEADER_BYTES = 64 << 20
#: The first range of a header; each next one adds half of what is held (at least this much).
FIRST_BYTES = 1 << 20
#: Seconds a request may take, from its connection to its last byte.
TIMEOUT_SECONDS = 30.0
#: The extra that installs the remote readers (fsspec, aiohttp, huggingface_hub).
REMOTE_EXTRA = "pecli[remote]"
#: ``ORG/REPO[@REVISION]:PATH.gguf``: a Hub file beside ``--model ORG/REPO``.
HUB_SHORT = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<revision>[^:/\s]+))?:(?P<path>[^:\s][^:]*\.gguf)")
#: ``hf://ORG/REPO[@REVISION]/PATH``.
HUB_URL = re.compile(r"hf://(?:models/)?(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<revision>[^/\s]+))?(?:/(?P<path>.*))?")


#: The forms ``--gguf`` reads, said when a location is none of them.
FORMS = ("a local path, http(s)://HOST/PATH.gguf, hf://ORG/REPO[@REVISION]/FILE.gguf or "
         "ORG/REPO[@REVISION]:FILE.gguf")
#: A URL's scheme (RFC 3986: a letter, then letters, digits, ``+``, ``-``, ``.``).
URL_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


def check_location(location: str) -> None:
    """Refuse, in one :class:`~pecli.errors.ConfigError` line (key ``gguf``), a location that is a URL pecli
    does not read (``ftp://``, ``file://``, …: not a local path either) or an HTTP URL without a host or with a
    port no URL can have; a local file of that name that exists is read as it is."""
    scheme = URL_SCHEME.match(location)
    if scheme is None or os.path.exists(location):
        return
    word = scheme["scheme"].lower()
    if word == "file":
        raise ConfigError("gguf", f"{location}: give the file's path itself, not a file:// URL ({FORMS})")
    if word not in ("http", "https", "hf"):
        raise ConfigError("gguf", f"{location}: pecli does not read {word}:// URLs; give {FORMS}")
    if word == "hf":
        return
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(location)
    except ValueError as error:  # urllib's own refusal: "Invalid IPv6 URL" for an unclosed "[", and the like
        raise ConfigError("gguf", f"{location}: is no URL ({error}); give http(s)://HOST/PATH.gguf") from None
    if not parts.hostname:
        raise ConfigError("gguf", f"{location}: names no host; give http(s)://HOST/PATH.gguf")
    try:
        parts.port
    except ValueError:
        given = parts.netloc.rpartition(":")[2]
        raise ConfigError("gguf", f"{location}: port {given} is not a port number (0–65535)") from None


def is_remote(location: str) -> bool:
    """Whether ``location`` names a file on a server or on the Hub rather than a local path (a local file
    named like ``ORG/REPO:FILE.gguf`` that exists stays local)."""
    if location.startswith(("http://", "https://", "hf://")):
        return True
    return HUB_SHORT.fullmatch(location) is not None and not os.path.exists(location)


def hub_parts(location: str) -> tuple[str, str | None, str]:
    """``(repository, revision or None, path in the repository)`` of a Hub location (``path`` may be empty
    for ``hf://ORG/REPO``)."""
    found = HUB_SHORT.fullmatch(location) or HUB_URL.fullmatch(location)
    if found is None:
        raise ConfigError("gguf", f"{location}: expected hf://ORG/REPO[@REVISION]/FILE.gguf or "
                          "ORG/REPO[@REVISION]:FILE.gguf")
    return found["repo"], found["revision"], found["path"] or ""


def http_location(location: str) -> tuple[str, dict[str, str]]:
    """The URL a location is read from and the headers to send (a Hub token)."""
    if location.startswith(("http://", "https://")):
        return location, {}
    _require("huggingface_hub")
    from huggingface_hub import constants, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    from pecli.models.sources.hub_reach import hub_endpoint

    if constants.HF_HUB_OFFLINE:
        raise ConfigError("gguf", f"cannot read {location}: HF_HUB_OFFLINE is set (a Hub file is read from the Hub; "
                          "give a downloaded file's path)")
    repo, revision, path = hub_parts(location)
    if not path.endswith(".gguf"):
        raise ConfigError("gguf", f"{location} names no .gguf file in {repo}")
    url = hf_hub_url(repo, path, revision=revision, endpoint=hub_endpoint())
    return url, build_hf_headers(library_name="pecli")


def _require(module: str) -> Any:
    from pecli.extras import optional_import

    return optional_import(module, "a remote --gguf", REMOTE_EXTRA)


def http_filesystem(headers: dict[str, str]) -> Any:
    """fsspec's HTTP file system with pecli's timeout on every request and ``headers`` on each."""
    _require("aiohttp")
    fsspec_http = _require("fsspec.implementations.http")
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS, sock_connect=TIMEOUT_SECONDS, sock_read=TIMEOUT_SECONDS)
    return fsspec_http.HTTPFileSystem(client_kwargs={"timeout": timeout}, headers=headers, skip_instance_cache=True)


class RemoteFile:
    """A GGUF file read by byte ranges (a :class:`~pecli.models.gguf_header.Source`; use as a context
    manager). ``fetched``: the bytes received so far. Opening it, and every read, raises
    :class:`~pecli.errors.ConfigError` (key ``gguf``) as the module says."""

    def __init__(self, location: str) -> None:
        self.name = location
        self.fetched = 0
        self._held = bytearray()
        url, headers = http_location(location)
        with self._said():
            self._fs = http_filesystem(headers)
            info = self._fs.info(url)
            size = info.get("size")
            if not size:
                raise ConfigError("gguf", f"cannot read {location}: the server gives no Content-Length, so its "
                                  "ranges cannot be checked")
            if info.get("partial", True) is False:
                raise ConfigError("gguf", f"cannot read {location}: the server does not serve byte ranges "
                                  "(Accept-Ranges: none); download the file and give its path")
            self.size = int(size)
            self._handle = self._fs.open(url, "rb", block_size=FIRST_BYTES, cache_type="none", size=self.size)
        # the last byte the Content-Length claims: a server whose file is shorter answers 416 (refused here),
        # before any tensor is trusted to lie within it
        self.read(self.size - 1, 1)

    def prefix(self, end: int) -> bytearray:
        """The file's first bytes, at least ``end`` of them (a header's walk asks as it goes)."""
        held = len(self._held)
        if end <= held:
            return self._held
        if end > MAX_HEADER_BYTES:
            raise ConfigError("gguf", f"cannot read {self.name}: its header runs past {MAX_HEADER_BYTES >> 20} MiB "
                              "(pecli reads at most that much of a remote file's header)")
        want = min(self.size, MAX_HEADER_BYTES, max(end, held + max(FIRST_BYTES, held // 2)))
        self._held += self.read(held, want - held)
        return self._held

    def read(self, start: int, count: int) -> bytes:
        """Bytes ``[start, start + count)``, by one range request; refused unless all of them come."""
        if count <= 0:
            return b""
        with self._said():
            self._handle.seek(start)
            out = self._handle.read(count)
        self.fetched += len(out)
        if len(out) != count:
            raise ConfigError("gguf", f"cannot read {self.name}: asked for bytes {start:,}–{start + count - 1:,}, "
                              f"got {len(out):,} (the file is shorter than the {self.size:,} bytes its "
                              "Content-Length says, or the transfer was cut)")
        return out

    def _said(self) -> "_OneLine":
        return _OneLine(self.name)

    def __enter__(self) -> "RemoteFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            try:
                handle.close()
            except Exception:  # noqa: BLE001 - closing a read-only handle; nothing to keep
                pass


class _OneLine:
    """Turns whatever the HTTP stack raises into one ConfigError line naming the file."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: BaseException | None, trace: Any) -> bool:
        if error is None or isinstance(error, ConfigError) or not isinstance(error, Exception):
            return False
        raise ConfigError("gguf", f"cannot read {self.name}: {reason(error)}") from None


def reason(error: BaseException) -> str:
    """One line for a failed request (aiohttp's, asyncio's and fsspec's exceptions)."""
    import asyncio

    if isinstance(error, FileNotFoundError) and error.__cause__ is not None:
        error = error.__cause__  # fsspec's info says every failure as "not found": its cause says which
    name = type(error).__name__
    status = getattr(error, "status", None)
    if isinstance(error, FileNotFoundError) or status == 404:
        return "not found (HTTP 404)"
    if name == "TooManyRedirects":
        return "too many redirects (a redirect loop?)"
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
        return f"no answer within {TIMEOUT_SECONDS:g} s"
    if name == "ClientPayloadError" or "ContentLengthError" in repr(error):
        return "the transfer was cut before the bytes its Content-Length promised"
    if isinstance(error, ValueError) and "support range requests" in str(error):  # fsspec's words
        return "the server does not serve byte ranges (it answered a range with the whole file); download it"
    if isinstance(status, int):
        return f"HTTP {status} {getattr(error, 'message', '') or ''}".strip()
    text = " ".join(str(error).split()) or name
    return text if len(text) <= 160 else text[:157] + "…"


__all__ = ["MAX_HEADER_BYTES", "RemoteFile", "check_location", "hub_parts", "is_remote"]
