"""Where the points of a sweep run: in this process, in local processes, or on a Dask cluster.

A runner is called with the :class:`~pecli.sweeps.point.SweepJob` and the points ``(index, values)``
to run, and yields ``(index, row)`` as the points finish, in whatever order they finish: each point is
one call of :func:`~pecli.sweeps.point.run_point`, the same function wherever it runs, so the rows are
the same whatever ran them. No runner schedules anything itself: the local one hands the points to
:class:`concurrent.futures.ProcessPoolExecutor`, the cluster one to ``dask.distributed``. Both keep a
bounded window of points in flight, so that a grid of a million points is not a million futures.
"""

from __future__ import annotations

import os

import signal
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from pecli.errors import ConfigError, PecliError
from pecli.sweeps.point import SweepJob, error_row, error_text, run_point

Points = Iterable[tuple[int, dict[str, Any]]]
Rows = Iterator[tuple[int, dict[str, Any]]]
#: Points in flight per worker: enough to keep each busy while the finished rows are written.
IN_FLIGHT_PER_WORKER = 4
#: Seconds to wait for a Dask scheduler to answer before giving up.
CONNECT_SECONDS = 10
#: Seconds more for the handshake after a connection, past which :func:`connect` gives up whatever holds it.
HANDSHAKE_GRACE = 2


def run_one(job: Any, point: dict[str, Any]) -> dict[str, Any]:
    """One point of any job: its own ``run(point)`` where it has one (a GGUF collection,
    :mod:`pecli.sweeps.gguf_collection`), else a sweep's :func:`run_point`."""
    run = getattr(job, "run", None)
    return run(point) if run is not None else run_point(job, point)


def in_process(job: SweepJob, points: Points) -> Rows:
    """Run the points one after the other in this process (``--jobs 1``)."""
    for index, point in points:
        yield index, run_one(job, point)


@dataclass(frozen=True)
class Threads:
    """Run the points on ``threads`` threads of this process: for points that wait on the network (remote
    GGUF files), not on the processor."""

    threads: int

    def __call__(self, job: Any, points: Points) -> Rows:
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="pecli-point")
        try:
            yield from as_finished(
                lambda point: pool.submit(run_one, job, point),
                lambda futures: wait(futures, return_when=FIRST_COMPLETED).done,
                points, IN_FLIGHT_PER_WORKER * self.threads,
                lambda error, point: error_row(job.head(point), error_text(error)),
            )
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # a point in flight ends within its own timeout
            raise
        pool.shutdown(wait=True)


@dataclass(frozen=True)
class LocalProcesses:
    """Run the points in ``jobs`` local processes (``--jobs N``).

    On Linux, when this process runs no other thread, the workers are forked from it (they start at once,
    pecli imported); otherwise (a progress bar's thread, which a fork would copy mid-step) from a fresh
    server process (``forkserver``), or spawned where there is none. A worker ignores Ctrl-C: this process
    stops the sweep, cancels the points not started and ends the workers.
    """

    jobs: int

    def __call__(self, job: SweepJob, points: Points) -> Rows:
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        def failed(error: BaseException, point: dict[str, Any]) -> dict[str, Any]:
            if isinstance(error, BrokenProcessPool):
                raise PecliError("a worker process died while running a point (out of memory?); the rows written "
                                 "so far are kept: run the same command again to resume") from None
            return error_row(job.head(point), f"worker: {error_text(error)}")

        context = _context()
        # A forked worker's parent is this process: named before the fork, so that a worker whose parent
        # died before it ran its initializer notices (under fork- and spawn-servers the parent is theirs).
        parent = os.getpid() if context.get_start_method() == "fork" else None
        pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context, initializer=_worker_signals,
                                   initargs=(parent,))
        try:
            yield from as_finished(
                lambda point: pool.submit(run_one, job, point),
                lambda futures: wait(futures, return_when=FIRST_COMPLETED).done,
                points, IN_FLIGHT_PER_WORKER * self.jobs, failed,
            )
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)


def _context() -> Any:
    import multiprocessing
    import sys
    import threading

    if sys.platform.startswith("linux") and threading.active_count() == 1:
        # Nothing else runs in this process (no progress bar): a fork copies this one thread, with pecli
        # already imported, and the workers start at once.
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["pecli.sweeps.point"])  # each worker starts with pecli imported
        return context
    return multiprocessing.get_context("spawn")


def _worker_signals(parent: int | None = None) -> None:
    """A worker ignores Ctrl-C (this process stops the sweep) and ends quietly on SIGTERM (a forked worker
    would otherwise inherit pecli's handler, which turns SIGTERM into an exception); it dies with its
    parent (:func:`die_with_parent`), so that a sweep killed outright (SIGKILL) leaves no idle worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


#: Seconds between two looks at the parent, where the kernel cannot be asked to signal its death.
PARENT_POLL_SECONDS = 1.0


def die_with_parent(parent: int | None = None) -> None:
    """End this process when its parent ends, however it ends.

    On Linux the kernel sends SIGKILL to the process when its parent dies (``prctl(PR_SET_PDEATHSIG)``);
    a worker of the ``forkserver`` start method is the server's child, and the server ends with pecli,
    so the chain holds. Elsewhere a daemon thread looks at the parent every :data:`PARENT_POLL_SECONDS`
    and ends the process once it has changed (the orphan was adopted). ``parent``: the pid the parent had
    before this process started (None: the one it has now).
    """
    import sys

    parent = os.getppid() if parent is None else parent
    if sys.platform.startswith("linux") and _set_parent_death_signal(signal.SIGKILL):
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)
        return
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="pecli-parent-watch", daemon=True).start()


def _set_parent_death_signal(signum: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, signum)``; False when libc or the call is not there."""
    import ctypes
    import ctypes.util

    PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stop(pool: Any) -> None:
    """Cancel the points not started and end the workers now (the sweep was interrupted or failed)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # shutdown() forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()


@dataclass(frozen=True)
class DaskCluster:
    """Send the points to the Dask scheduler at ``address`` (``--cluster tcp://HOST:8786``).

    Each point is one task, :func:`run_point` with the job and the point's values; the workers need
    pecli (and any file the options name, such as ``--weights``) where they run. A task that fails on
    the worker's side (a worker lost, pecli missing there) becomes the point's error row.
    """

    address: str

    def __call__(self, job: SweepJob, points: Points) -> Rows:
        distributed = require_dask()
        client = connect(self.address)

        def wait_some(futures: list[Any]) -> Any:
            with client.as_current():  # wait() asks for the current client; this one is nobody's default
                return distributed.wait(futures, return_when="FIRST_COMPLETED").done

        try:
            window = IN_FLIGHT_PER_WORKER * max(1, sum(client.nthreads().values()))
            yield from as_finished(
                lambda point: client.submit(run_one, job, point, pure=False), wait_some, points, window,
                lambda error, point: error_row(job.head(point), f"worker: {error_text(error)}"),
            )
        finally:
            client.close()


def require_dask() -> Any:
    """``dask.distributed``, or a one-line error saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ConfigError("cluster", "needs dask.distributed, which is not installed: pip install 'pecli[dask]'") from None
    return distributed


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address``, or a one-line error within about
    :data:`CONNECT_SECONDS` + :data:`HANDSHAKE_GRACE` seconds, whatever listens there.

    ``Client(timeout=…)`` bounds the connection, not always the handshake after it: a server that
    accepts and never speaks Dask's protocol (an HTTP server, a bare listener) could hold it forever.
    And a failed client hangs again while it closes. So the address is probed first (:func:`probe`: is
    anything listening, does it speak first as a scheduler does), then the client is made in a helper
    thread that this one waits for with its own deadline; past it, the thread (a daemon, stuck in a
    read) is left behind and the command ends with the error.
    """
    import threading

    probe(address)
    outcome: dict[str, Any] = {}

    def attempt() -> None:
        try:
            outcome["client"] = _client_class()(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except BaseException as error:  # noqa: BLE001 - said below, in one line, whatever it is
            outcome["error"] = error

    helper = threading.Thread(target=attempt, name="pecli-dask-connect", daemon=True)
    helper.start()
    helper.join(CONNECT_SECONDS + HANDSHAKE_GRACE)
    if helper.is_alive():
        raise ConfigError("cluster", f"nothing at {address} answered as a Dask scheduler within "
                                     f"{CONNECT_SECONDS + HANDSHAKE_GRACE} s (is it a scheduler's address and port?)")
    if "error" in outcome:
        error = outcome["error"]
        if not isinstance(error, Exception):
            raise error  # Ctrl-C, SystemExit: as they are
        raise ConfigError("cluster", f"cannot reach a Dask scheduler at {address}: {error_text(error)}") from None
    return outcome["client"]


def _client_class() -> type:
    """``distributed.Client``, except that one whose connection failed does not try to close it again
    when collected (which waits twice the timeout, then prints a traceback at exit)."""
    from distributed import Client

    class Connecting(Client):
        def __del__(self) -> None:
            if getattr(self, "status", None) == "running":
                super().__del__()

    return Connecting


#: Address schemes of Dask's communications that pecli can reach without a security configuration.
ADDRESS_SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")


#: Seconds a scheduler has to send its first bytes once connected (it sends its handshake at once).
HANDSHAKE_SECONDS = 5
#: Largest first message of a scheduler's handshake (a few hundred bytes in practice).
MAX_HANDSHAKE_BYTES = 1 << 20


def probe(address: str) -> None:
    """Refuse, in one line and within :data:`CONNECT_SECONDS` + :data:`HANDSHAKE_SECONDS`, an address
    where no scheduler can be: malformed (:func:`check_address`), nothing listening, or (``tcp://``)
    a listener that does not open with a Dask handshake.

    A Dask scheduler writes its handshake as soon as it accepts a connection (``distributed.comm.core``,
    ``on_connection``): over TCP an 8-byte little-endian length, then that many bytes. An HTTP server
    or a bare listener waits for the client to speak first, so silence tells them apart.
    """
    import socket
    import struct

    scheme, host, port = check_address(address)
    if scheme not in ("tcp", "tls", "ws", "wss"):
        return
    try:
        connection = socket.create_connection((host, port), timeout=CONNECT_SECONDS)
    except OSError as error:
        raise ConfigError("cluster", f"cannot reach a Dask scheduler at {address}: {error.strerror or error_text(error)}") from None
    with connection:
        if scheme in ("ws", "wss"):  # the client speaks first there (an HTTP upgrade): its own deadline bounds it
            return
        connection.settimeout(HANDSHAKE_SECONDS)
        if scheme == "tls":
            connection = _tls_probe(connection, address)
            if connection is None:
                return
        head = b""
        try:
            while len(head) < 8:
                chunk = connection.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
        except OSError:  # the timeout, or a reset
            pass
    if len(head) < 8:
        raise ConfigError("cluster", f"{address} accepted the connection but sent no Dask handshake within "
                                     f"{HANDSHAKE_SECONDS} s: is it a Dask scheduler's port?")
    (length,) = struct.unpack("<Q", head)
    if not 0 < length <= MAX_HANDSHAKE_BYTES:
        raise ConfigError("cluster", f"{address} answered, but not with a Dask handshake: is it a Dask scheduler's port?")


def _tls_probe(connection: Any, address: str) -> Any:
    """The connection wrapped in TLS (nothing verified: only to hear whether a scheduler speaks), or None
    when the server refuses this bare client (it asks for a certificate: the client, configured by Dask,
    may have one); a server silent through the TLS handshake is refused."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        return context.wrap_socket(connection)
    except ssl.SSLError as error:
        if "ALERT" in str(getattr(error, "reason", "")):  # a TLS server that wants more of a client than this
            return None
        raise ConfigError("cluster", f"{address} does not speak TLS ({getattr(error, 'reason', None) or error_text(error)}): "
                                     "is it a Dask scheduler's port?") from None
    except OSError:  # the timeout, or a reset
        raise ConfigError("cluster", f"{address} accepted the connection but did not complete a TLS handshake within "
                                     f"{HANDSHAKE_SECONDS} s: is it a Dask scheduler's port?") from None


def check_address(address: str) -> tuple[str, str, int]:
    """The scheme, host and port of ``address``; refused at once when it names no place a scheduler
    could be: a malformed address, an unknown scheme, a port outside 1–65535."""
    from distributed.comm.addressing import parse_address, parse_host_port

    expected = "expected a scheduler address such as tcp://HOST:8786"
    try:
        scheme, location = parse_address(address, strict=True)
        host, port = parse_host_port(location) if scheme != "inproc" else (location, 1)
    except (ValueError, TypeError) as error:
        raise ConfigError("cluster", f"{expected}, got {address!r} ({error_text(error)})") from None
    if scheme not in ADDRESS_SCHEMES:
        raise ConfigError("cluster", f"{expected}, got {address!r} (unknown scheme {scheme}://; "
                                     f"known: {', '.join(ADDRESS_SCHEMES)})")
    if not host or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError("cluster", f"{expected}, got {address!r} (a port from 1 to 65535, and a host)")
    return scheme, host, port


def as_finished(
    submit: Callable[[dict[str, Any]], Any], wait_some: Callable[[list[Any]], Iterable[Any]], points: Points,
    window: int, failed: Callable[[BaseException, dict[str, Any]], dict[str, Any]],
) -> Rows:
    """Keep ``window`` points in flight through ``submit`` (which returns a future); yield ``(index,
    row)`` as ``wait_some`` reports futures done, a future that raised becoming ``failed(error, point)``."""
    from asyncio import CancelledError  # Dask's cancelled futures raise it: a BaseException, not an Exception

    pending: dict[Any, tuple[int, dict[str, Any]]] = {}
    source = iter(points)

    def refill() -> None:
        for index, point in source:
            pending[submit(point)] = (index, point)
            if len(pending) >= window:
                return

    refill()
    while pending:
        done = sorted(wait_some(list(pending)), key=lambda future: pending[future][0])
        for future in done:
            index, point = pending.pop(future)
            try:
                row = future.result()
            except (Exception, CancelledError) as error:
                row = failed(error, point)
            yield index, row
        refill()


__all__ = ["DaskCluster", "LocalProcesses", "Threads", "as_finished", "check_address", "connect", "in_process", "probe", "require_dask",
           "run_one"]
