"""Shared fixtures of pecli's tests.

- ``runner``: Typer's CliRunner with ``NO_COLOR=1`` and ``COLUMNS=100``, so Rich output is plain and
  the same on every machine;
- ``invoke``: run ``pecli ARGS…`` in-process through that runner (exceptions are not swallowed: a bug
  in a command shows its traceback in the test report instead of a silent exit code 1);
- ``run_pecli``: run the installed pecli in a subprocess, as ``sys.executable -m pecli`` so that it
  works in whatever virtual environment runs the tests; returns the CompletedProcess (text mode);
- ``run_main``: what the console script runs (``pecli.cli.run``, with its one-line errors and exit codes) in
  this process, in a fresh temporary folder; returns a CompletedProcess like ``run_pecli``'s, for tests
  where a new interpreter adds nothing but its start-up;
- ``unrendered``: ``plot`` draws its figure without rendering it (for tests of what surrounds the file);
- ``REPO``, ``SAMPLE_CONFIGS``, ``HF_CONFIGS``: paths of the checkout.

Typer turns an app into its click command on every ``CliRunner.invoke`` and every run of the console entry
(about 20 ms for pecli's commands, hundreds of times in the suite): :func:`click_command_built_once` keeps
that command per app for as long as the registries its options come from are unchanged.

After collection, what every test process holds for the whole run is set aside from the cycle
collector, whose young collections are made rarer (:func:`pytest_collection_finish`): about 1.5 s of
collector time per worker at Python's defaults. Until then (importing the test modules, building the
items) the collector is paused: what is made then lives for the whole run, and the full collections it
started there (about 0.25 s per process) freed nothing. The xdist controller, which collects nothing, sets
its start-up aside when its session starts.

Every test process does its BLAS work on one thread (:func:`one_blas_thread`): the suite runs in parallel
processes (``-n auto``, pytest-xdist), one per core, and a BLAS thread pool in each of them spins against
the others for the same cores.

Under ``-n`` (xdist) without a ``--dist`` of one's own, the tests go to the workers a file at a time (as
``--dist loadfile`` would), so that what a file's tests share through per-process caches (the base bound
per (context, dim), matplotlib's caches, the click commands) is computed once rather than in every
worker; files that share a costly cache go together (:data:`SAME_WORKER`), and the heaviest units are
handed out first (:data:`HEAVIEST_FIRST`) so that no worker ends the run alone with a long one while the
other idles: :func:`pytest_xdist_make_scheduler`.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

#: Whether the cycle collector ran when this file was loaded: it is paused until the test items are built
#: (:func:`pytest_collection_finish`), then runs as it did.
COLLECTOR_WAS_ON = gc.isenabled()
gc.disable()

import pytest  # noqa: E402 - after the collector's pause, which covers the imports below
from typer.testing import CliRunner  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE_CONFIGS = REPO / "sample_configs"
HF_CONFIGS = SAMPLE_CONFIGS / "hf"
TEST_ENV = {"NO_COLOR": "1", "COLUMNS": "100"}


def assert_refused(done, *words: str) -> None:
    """``done`` (a finished run: return code and stderr) was refused as bad input: exit 2 and one line
    ``pecli: error: …`` holding each of ``words``, no traceback, no internal error."""
    assert done.returncode == 2, (done.returncode, done.stderr[:500])
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pecli: error: "), done.stderr[:500]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[:500]
    for word in words:
        assert word in done.stderr, done.stderr[:500]
# Compiled modules are kept (an environment may say not to): the pecli processes the tests start then
# load pecli's modules compiled once, not from source each time.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Plain text whatever terminal the caller's environment claims: Rich styles its output (bold, dim, even under
# NO_COLOR) when FORCE_COLOR is set, as some CI services set it, or TTY_COMPATIBLE.
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    os.environ.pop(_name, None)
# No test touches the network: a model id (--model, also from the fuzzer) is looked up in the cache only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# No test reads the base bounds an earlier run kept (pecli/wavelengths/base_bound.py) unless it says so: the tests of
# one run share a folder of their own (made by the first process, the others inherit it), so that a bound
# is searched once per run instead of once per process.
if "PECLI_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["PECLI_CACHE_DIR"] = tempfile.mkdtemp(prefix="pecli-tests-")
    atexit.register(shutil.rmtree, os.environ["PECLI_CACHE_DIR"], True)


#: Test files run by one worker, file name → the unit they form: those that compute the same base bounds
#: (Men et al.; a few tenths of a second each, cached per process for each (context, dim)), and those
#: that draw figures (the first figure of a process costs about a second more: matplotlib, its fonts,
#: the mathtext parser, the PDF backend).
SAME_WORKER = {
    **{name: "base-bound files"
       for name in ("test_wavelengths.py", "test_base_bound.py", "test_model_lengths.py", "test_models_hub.py")},
    **{name: "figure files"
       for name in ("test_plot.py", "test_sample_configs.py", "test_grid_positions.py", "test_models_rope.py",
                    "test_models_tables.py", "test_library.py")},
    # those that parse pecli's source (tests/pecli_source.py: once per process)
    **{name: "source files" for name in ("test_contract.py", "test_layers.py")},
}
#: Units of work (files, or the groups above) from the heaviest down, a few seconds each on two cores:
#: handed out before the others (which follow in xdist's order). Only the order changes with this list.
#: Ordered by the CPU seconds of each unit, its children's included, measured in one run of the suite (test_sweep:
#: its pools' start-up and waits).
HEAVIEST_FIRST = (
    "figure files", "base-bound files", "tests/test_docs.py", "tests/test_fuzz.py", "tests/test_help.py",
    "tests/test_readability.py", "tests/test_notebook.py", "tests/test_engines_fixtures.py",
    "tests/test_engines_llama_cpp.py", "tests/test_verify_dtypes.py", "tests/test_bad_input.py", "tests/test_hostile3.py",
    "tests/test_hostile4_config.py", "tests/test_config_class_defaults.py", "tests/test_encode_streaming.py",
    "tests/test_gguf_remote.py", "tests/test_numbers.py", "tests/test_new_user.py", "tests/test_gguf.py",
    "tests/test_extend.py", "tests/test_scaled_extrapolation.py", "tests/test_sweep.py", "tests/test_rope_scaling.py",
)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: without it the suite runs in one process
def pytest_xdist_make_scheduler(config, log):
    """xdist's scheduler when ``-n`` is given without ``--dist``: files as units (``loadfile``),
    :data:`SAME_WORKER` files together, :data:`HEAVIEST_FIRST`. An explicit ``--dist`` is obeyed."""
    if config.getvalue("dist") != "load" or _dist_given(config):
        return None
    from collections import OrderedDict

    from xdist.scheduler import LoadFileScheduling

    class HeaviestFirst(OrderedDict):
        """xdist's queue of units, whose next unit (``popitem(last=False)``) is the heaviest one left."""

        def popitem(self, last: bool = True):
            if last:
                return super().popitem(last=True)
            rank = {unit: index for index, unit in enumerate(HEAVIEST_FIRST)}
            unit = min(self, key=lambda name: rank.get(name, len(rank)))  # ties: xdist's own order
            return unit, self.pop(unit)

    class SharedCachesScheduling(LoadFileScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.workqueue = HeaviestFirst()

        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return SAME_WORKER.get(path.rsplit("/", 1)[-1], path)

    return SharedCachesScheduling(config, log)


def _dist_given(config) -> bool:
    """Whether the command line or ``PYTEST_ADDOPTS`` chose a ``--dist`` mode (``-n`` alone means "load")."""
    words = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    return any(word in ("--dist", "--distload", "-d") or word.startswith("--dist=") for word in words)


#: Objects a test process makes before its cycle collector runs a young collection (Python's default: 700).
#: The suite's processes make millions of short-lived objects (Rich's segments, click contexts, arrays'
#: wrappers); at the default the collector ran about 2,000 times per worker, each time also walking the
#: objects that live for the whole run. Garbage is still collected, only in fewer, larger batches.
YOUNG_COLLECTION_THRESHOLD = 50_000


def pytest_collection_finish(session):
    """What lives after collection (modules, the test items, their parameters) lives for the whole run:
    collected once, then set aside from the collector's walks (:func:`gc.freeze`), and young
    collections made rarer (:data:`YOUNG_COLLECTION_THRESHOLD`); the collector, paused while this file
    and the test modules loaded, runs again. Nothing a test makes is frozen, and a test that needs its
    garbage gone calls :func:`gc.collect` as before."""
    _set_aside_what_lives()


def pytest_sessionstart(session):
    """The xdist controller collects no test (its workers do): its start-up is set aside as it starts."""
    if session.config.pluginmanager.getplugin("dsession") is not None:
        _set_aside_what_lives()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """pytest ends a run with two full collections (its unraisable-exception check, at unconfigure and again at
    cleanup); after the first, which frees every test's garbage and reports what it raised, what still lives is
    set aside, so that the second walks only what was made since (up to 0.4 s on a worker holding 700,000
    objects)."""
    gc.freeze()


def _set_aside_what_lives() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    if COLLECTOR_WAS_ON:
        gc.enable()


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the [test] extra installs it; without it BLAS keeps its default threads
        yield
        return
    import numpy  # noqa: F401 - BLAS is loaded, so that the limit finds it

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _registries() -> tuple:
    from pecli.analysis.registry import ANALYSES
    from pecli.schemes import SCHEMES
    from pecli.schemes.scaling.registry import SCALINGS

    return tuple(tuple(registry.items()) for registry in (SCHEMES, SCALINGS, ANALYSES))


@pytest.fixture(scope="session", autouse=True)
def click_command_built_once():
    """Each app converted to its click command once (``CliRunner.invoke`` and the console entry's
    :func:`pecli.cli.run`), for as long as the registries its options come from are unchanged."""
    import typer.main
    import typer.testing

    import pecli.cli

    convert, build_app = typer.main.get_command, pecli.cli.build_app
    built: dict[int, tuple] = {}  # id(app) → (app, the registries then, its click command)
    apps: dict[str, tuple] = {}  # "app" → (the registries then, the app)

    def cached(app):
        registries = _registries()
        entry = built.get(id(app))
        if entry is None or entry[0] is not app or entry[1] != registries:
            entry = built[id(app)] = (app, registries, convert(app))  # the app is held: its id stays its own
        return entry[2]

    def cached_app():
        registries = _registries()
        if "app" not in apps or apps["app"][0] != registries:
            apps["app"] = (registries, build_app())
        return apps["app"][1]

    patches = [(typer.main, "get_command", cached), (pecli.cli, "build_app", cached_app)]
    if getattr(typer.testing, "_get_command", None) is convert:  # Typer's CliRunner converts through its own name
        patches.append((typer.testing, "_get_command", cached))
    for module, name, function in patches:
        setattr(module, name, function)
    yield
    for module, name, _ in patches:
        setattr(module, name, convert if name != "build_app" else build_app)


@pytest.fixture(scope="session")
def pecli_app():
    """The whole Typer app, built once (its options follow the registries when they change)."""
    from pecli.cli import app

    return app


@pytest.fixture
def unrendered(monkeypatch: pytest.MonkeyPatch) -> bytes:
    """``plot`` builds its figure but does not render it, and writes the bytes returned instead: for tests
    of what surrounds the file (options, JSON, overwriting, inputs) of kinds that other tests render.
    Rendering is most of a plot's time."""
    from pecli.render import figures

    marker = b"figure drawn, not rendered"
    monkeypatch.setattr(figures, "save_figure", lambda figure, stream, fmt: stream.write(marker))
    return marker


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env=TEST_ENV)


@pytest.fixture
def invoke(runner: CliRunner, pecli_app) -> Callable[..., object]:
    """``invoke("encode", "--dim", "8", input=None)`` → click's Result (stdout, stderr, exit_code)."""
    app = pecli_app

    def _invoke(*args: str, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)

    return _invoke


def pecli_subprocess(*args: str, cwd: str | os.PathLike | None = None, input: str | None = None,
                     timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m pecli ARGS…`` with the interpreter running the tests."""
    env = {**os.environ, **TEST_ENV}
    env.pop("PECLI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "pecli", *map(str, args)],
        cwd=cwd, input=input, capture_output=True, text=True, env=env, timeout=timeout,
    )


#: Environment of a child whose address space is limited: BLAS and OpenMP on one thread, so that what the
#: child reserves does not grow with the machine's cores (a thread pool reserves memory per thread).
ONE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: The address space of a limited child, unless a test says otherwise: several times what a pecli command
#: reserves (about 200 MiB), a small share of what a run that ignores its memory guards would take.
CHILD_ADDRESS_SPACE = 1 << 30


def limited_python(code: str, *args: str, limit: int = CHILD_ADDRESS_SPACE, cwd: str | os.PathLike | None = None,
                   env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -c CODE ARGS…`` with its address space limited to ``limit`` bytes (``RLIMIT_AS``).

    A test that a command bounds its memory runs it here: past the limit an allocation fails (pecli
    says "out of memory", the library raises MemoryError), whatever the machine, instead of the test
    weighing a process against a threshold.
    """
    prelude = ("import resource\n"
               "hard = resource.getrlimit(resource.RLIMIT_AS)[1]\n"
               f"soft = {int(limit)} if hard == resource.RLIM_INFINITY else min({int(limit)}, hard)\n"
               "resource.setrlimit(resource.RLIMIT_AS, (soft, hard))\n")
    full = {**os.environ, **TEST_ENV, **ONE_THREAD_ENV, **(env or {})}
    full.pop("PECLI_DEBUG", None)
    return subprocess.run([sys.executable, "-c", prelude + code, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, env=full, timeout=timeout)


def limited_pecli(*args: str, limit: int = CHILD_ADDRESS_SPACE, cwd: str | os.PathLike | None = None,
                  env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m pecli ARGS…`` with its address space limited (:func:`limited_python`)."""
    code = "import runpy, sys\nsys.argv = ['pecli', *sys.argv[1:]]\nrunpy.run_module('pecli', run_name='__main__')\n"
    return limited_python(code, *args, limit=limit, cwd=cwd, env=env, timeout=timeout)


@pytest.fixture
def run_pecli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess]:
    """``run_pecli("encode", "--dim", "-3")``, run in a fresh temporary folder unless ``cwd`` is given."""

    def _run(*args: str, cwd: str | os.PathLike | None = None, input: str | None = None):
        return pecli_subprocess(*args, cwd=cwd or tmp_path, input=input)

    return _run


@pytest.fixture
def run_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess]:
    """``run_main("encode", "--dim", "-3")`` → CompletedProcess(returncode, stdout, stderr), in-process."""
    import contextlib
    import io

    from pecli.cli import run

    for name, value in TEST_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PECLI_DEBUG", raising=False)

    def _run(*args: str, cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd or tmp_path)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run([str(a) for a in args] or ["--help"])
        return subprocess.CompletedProcess(["pecli", *map(str, args)], code, out.getvalue(), err.getvalue())

    return _run
