"""Hostile input, round three: the doors of sweep, inspect config, completion and the library.

Every refused case is exit 2 with one line (the CLI) or a ValueError/TypeError naming the argument (the
library), reached before the work or the allocation the input implies: the CLI cases that could allocate
run in a child whose address space is limited (``RLIMIT_AS``: past it an allocation fails, whatever the
machine), the network cases against listeners the test starts on 127.0.0.1 and stops.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import TEST_ENV, assert_refused, limited_pecli, limited_python

#: A YAML "billion laughs" of 300 bytes: 9⁶ ≈ 531,441 strings once its aliases are expanded.
BOMB = ('[&a ["x","x","x","x","x","x","x","x","x"], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], '
        '&c [*b,*b,*b,*b,*b,*b,*b,*b,*b], &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], &e [*d,*d,*d,*d,*d,*d,*d,*d,*d], '
        '&f [*e,*e,*e,*e,*e,*e,*e,*e,*e]]')
DEEP = "[" * 3000 + "]" * 3000  # deep enough for PyYAML's composer to recurse past Python's limit
LLAMA = {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256,
         "rope_theta": 10000.0}


def child(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m pecli ARGS`` in a child whose address space is limited (:func:`conftest.limited_pecli`):
    a case that allocates what its input implies fails there ("out of memory") on any machine."""
    return limited_pecli(*args, cwd=cwd, env=env, timeout=timeout)


#: How long a call may block before a test calls it a hang: a bound on waiting (a loaded machine is
#: slow), never a measure of speed.
HANG_SECONDS = 120


def without_hanging(call):
    """``call()``'s result (or its exception), failing the test if it is still blocked after
    :data:`HANG_SECONDS` (it is left to end on a daemon thread)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # noqa: BLE001 - re-raised on the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_SECONDS)
    if thread.is_alive():
        pytest.fail(f"still blocked after {HANG_SECONDS} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# -- sweep's rows file ---------------------------------------------------------------------------------
SWEEP = ("sweep", "uniqueness", "--grid", "base=1e4,2e4,3e4", "--length", "16", "--dim", "8", "--jobs", "1", "-q")


def test_a_row_cut_inside_its_last_field_is_run_again(run_main, tmp_path):
    assert run_main(*SWEEP, "-o", "whole.csv").returncode == 0
    whole = (tmp_path / "whole.csv").read_bytes()
    quoted = whole.rindex(b'"[')  # the last row ends with a quoted list (min_distance_pair), then numbers
    assert whole.endswith(b'",16,0,0.0\n') and whole.rindex(b"\n", 0, -1) < quoted
    for cut in (quoted + 3, len(whole) - 3):  # inside the quotes ("[0, ), inside the last number (0.)
        (tmp_path / "cut.csv").write_bytes(whole[:cut])
        done = run_main(*SWEEP, "-o", "cut.csv")
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "cut.csv").read_bytes() == whole


def test_whole_csv_records_leave_out_a_cut_record():
    from pecli.sweeps.files import whole_csv_records

    assert whole_csv_records(b'a,b\n1,"x\ny"\n') == ([["a", "b"], ["1", "x\ny"]], 12)  # a quoted new line
    assert whole_csv_records(b'a,b\n1,"{""p"": [17, ') == ([["a", "b"]], 4)
    assert whole_csv_records(b'a,b\n1,"x\n') == ([["a", "b"]], 4)  # ends with a new line, inside quotes
    assert whole_csv_records(b"a,b\n1,2") == ([["a", "b"]], 4)


def test_a_large_file_that_is_not_this_sweeps_is_refused_from_its_head(tmp_path):
    with open(tmp_path / "other.csv", "wb") as out:  # 4 GiB, sparse: read whole, past the child's address space
        out.write(b"x,sweep,verdict\n")
        out.write(b"1,abc,pass\n" * 1000)
        out.truncate(4 << 30)
    done = child(*SWEEP, "-o", "other.csv", cwd=tmp_path)
    assert_refused(done, "holds another sweep (its grid: x; this one's: base)")


def test_a_file_of_this_sweep_too_large_to_resume_is_refused_from_its_size(run_main, tmp_path):
    assert run_main(*SWEEP, "-o", "rows.csv").returncode == 0
    with open(tmp_path / "rows.csv", "ab") as out:  # 2 MB of rows of points outside this grid
        out.write(b"5.0,x,pass,,pass,colliding_pairs,False,0,float64,,1.0,\"[0, 1]\",16,0,0.0\n" * 30000)
    done = run_main(*SWEEP, "-o", "rows.csv", "--max-memory", "16M")
    assert_refused(done, "rows.csv holds", "over the budget of 16.0 MiB")


# -- sweep --cluster: every wait bounded -------------------------------------------------------------
#: The tests of --cluster need its client, dask.distributed (pecli[dask], which the test extra installs).
needs_distributed = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                       reason="the dask extra (dask.distributed) is not installed")


class Listener:
    """A plain socket server on 127.0.0.1 that accepts and never answers (``http=False``) or answers
    whatever it reads with an HTTP response (``http=True``); stopped by :meth:`close`."""

    def __init__(self, http: bool) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.http, self.accepted, self.stopping = http, [], False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(0.1)
        while not self.stopping:
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.accepted.append(connection)
            if self.http:
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self.stopping = True
        self.thread.join()
        for connection in self.accepted:
            connection.close()
        self.server.close()


@pytest.fixture
def listener(request):
    server = Listener(http=request.param)
    yield server
    server.close()


@needs_distributed
@pytest.mark.parametrize("listener, scheme, words", [
    (False, "tcp", "sent no Dask handshake within 0.25 s"),
    (True, "tcp", "not with a Dask handshake"),
    (False, "tls", "did not complete a TLS handshake within 0.25 s"),
    (True, "tls", "does not speak TLS"),
], indirect=["listener"])
def test_cluster_refuses_a_listener_that_is_not_a_scheduler(monkeypatch, listener, scheme, words):
    from pecli.errors import ConfigError
    from pecli.sweeps import runners

    monkeypatch.setattr(runners, "HANDSHAKE_SECONDS", 0.25)  # the rule, not the default's wait, is under test
    with pytest.raises(ConfigError, match="cluster: ") as refused:
        without_hanging(lambda: runners.connect(f"{scheme}://127.0.0.1:{listener.port}"))
    assert words in str(refused.value)  # the words name the bound that ended the wait (within 0.25 s)
    assert listener.accepted  # it did connect: the refusal came from what the listener (did not) say


@needs_distributed
@pytest.mark.parametrize("listener", [False, True], indirect=True)
def test_cluster_bounds_a_websocket_connection_too(monkeypatch, listener):
    from pecli.errors import ConfigError
    from pecli.sweeps import runners

    monkeypatch.setattr(runners, "CONNECT_SECONDS", 0.25)
    with pytest.raises(ConfigError, match=f"cluster: .*ws://127.0.0.1:{listener.port}"):
        without_hanging(lambda: runners.connect(f"ws://127.0.0.1:{listener.port}"))


@needs_distributed
@pytest.mark.parametrize("address, words", [
    ("tcp://127.0.0.1:99999", "a port from 1 to 65535"),
    ("tcp://127.0.0.1:0", "a port from 1 to 65535"),
    ("tcp://127.0.0.1", "missing port"),
    ("gopher://127.0.0.1:70", "unknown scheme gopher://"),
])
def test_cluster_refuses_a_malformed_address_at_once(run_main, address, words):
    assert_refused(without_hanging(lambda: run_main(*SWEEP[:-3], "--cluster", address, "-q")), words)


@needs_distributed
def test_cluster_refuses_a_closed_port_at_once(run_main):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]  # closed when the block ends: nothing listens there any more
    assert_refused(without_hanging(lambda: run_main(*SWEEP[:-3], "--cluster", f"tls://127.0.0.1:{port}", "-q")),
                   "cannot reach")


# -- sweep --jobs: no worker outlives the sweep ---------------------------------------------------------
def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_sweep_leaves_no_worker_behind(tmp_path):
    env = {**os.environ, **TEST_ENV}
    env.pop("PECLI_DEBUG", None)
    sweep = subprocess.Popen(
        [sys.executable, "-m", "pecli", "sweep", "uniqueness", "--grid", "base=1e4,2e4,3e4,4e4,5e4,6e4,7e4,8e4",
         "--grid", "dim=64,128,256", "--length", "40000", "--jobs", "2", "-o", "rows.csv", "-q"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a speed: a loaded machine starts them late
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < deadline and sweep.poll() is None:
            workers = children_of(sweep.pid)
            time.sleep(0.05)
        assert len(workers) >= 2, "the sweep never started its workers"
    finally:
        sweep.kill()
        sweep.wait()
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in workers if alive(pid)]
    for pid in left:  # never leave them to the next test
        os.kill(pid, signal.SIGKILL)
    assert not left


# -- YAML in --grid and --positions ------------------------------------------------------------------
@pytest.mark.parametrize("args, words", [
    (("sweep", "uniqueness", "--grid", f"grid={BOMB}"), "aliases"),
    (("sweep", "uniqueness", "--grid", f"base={DEEP}"), "nested too deeply"),
    (("encode", "--positions", BOMB), "aliases"),
    (("encode", "--positions", "[" * 200 + "]" * 200), "nested more than 64 levels"),
])
def test_grid_and_positions_parse_yaml_with_the_guard(tmp_path, args, words):
    assert_refused(child(*args, cwd=tmp_path), words)


# -- a billion layers --------------------------------------------------------------------------------
@pytest.fixture
def billion(tmp_path) -> Path:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "num_hidden_layers": 1e9, "num_attention_heads": 32, '
                    '"hidden_size": 4096, "rope_theta": 10000}')
    return path


@pytest.mark.parametrize("command", [("inspect", "config"), ("encode", "--length", "8"), ("check", "uniqueness")])
def test_a_billion_layers_are_refused_before_the_plan(tmp_path, billion, command):
    assert_refused(child(*command, "--hf-config", str(billion), cwd=tmp_path), "num_hidden_layers", "at most 65,536 layers")


def test_a_billion_layers_on_a_completion_tab(tmp_path, billion):
    env = {"_PECLI_COMPLETE": "complete_bash", "COMP_WORDS": f"pecli check --hf-config {billion} --layer-group ",
           "COMP_CWORD": "5"}
    done = child(cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "", "")


def test_the_library_refuses_a_billion_layers(billion):
    import pecli
    from pecli.errors import ConfigError

    for config in (str(billion), json.loads(billion.read_text()), {"text_config": {"n_layers": 10**9}}):
        with pytest.raises(ConfigError, match="at most 65,536 layers"):
            pecli.model_plan(config)


def test_the_layer_bound_reads_nested_configs():
    from pecli.errors import ConfigError
    from pecli.models.limits import MAX_LAYERS, check_config_sizes

    check_config_sizes({"num_hidden_layers": MAX_LAYERS, "text_config": {"num_layers": 2}}, "c")  # at the bound: fine
    for bad in ({"num_hidden_layers": MAX_LAYERS + 1}, {"thinker_config": {"text_config": {"n_layer": 1e12}}},
                {"num_decoder_layers": float("nan")}):
        with pytest.raises(ConfigError, match="hf_config: "):
            check_config_sizes(bad, "c")


# -- inspect config refuses what every other command refuses ------------------------------------------
@pytest.mark.parametrize("extra, words", [
    ('"rope_theta": NaN', "base: must be finite"),
    ('"rope_theta": Infinity', "base: must be finite"),
    ('"partial_rotary_factor": 0', "partial_rotary_factor: must be > 0"),
    ('"partial_rotary_factor": 1.5', "partial_rotary_factor: must be <= 1"),
    ('"partial_rotary_factor": NaN', "partial_rotary_factor: must be finite"),
    ('"head_dim": 1000000000', "dim: must be <= "),
])
def test_inspect_config_validates_the_groups(run_main, tmp_path, extra, words):
    text = json.dumps(LLAMA)[:-1] + ", " + extra + "}"
    (tmp_path / "config.json").write_text(text)
    assert_refused(run_main("inspect", "config", "--hf-config", "config.json"), words, "layer group all")
    assert_refused(run_main("encode", "--hf-config", "config.json", "--length", "4"), words.split(":")[0])


def test_inspect_config_validates_each_layer_types_block(run_main, tmp_path):
    types = ["sliding_attention", "full_attention"]
    config = {**LLAMA, "model_type": "gemma3_text", "head_dim": 64, "layer_types": types,
              "rope_parameters": {"full_attention": {"rope_type": "nosuch", "rope_theta": 1e6},
                                  "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}
    del config["rope_theta"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert_refused(run_main("inspect", "config", "--hf-config", "config.json"), "nosuch", "layer group full_attention")


def test_the_library_model_plan_refuses_a_base_of_nan():
    import pecli
    from pecli.errors import ConfigError

    with pytest.raises(ConfigError, match="base: must be finite"):
        pecli.model_plan({**LLAMA, "rope_theta": float("nan")})


# -- sweep --metric ------------------------------------------------------------------------------------
def test_an_unknown_metric_is_one_line(run_main):
    done = run_main(*SWEEP, "--metric", "nosuch")
    assert_refused(done, "metric: no column 'nosuch'", "min_distance", "the sweep ran: 3 points")


# -- completion --------------------------------------------------------------------------------------
def complete(monkeypatch, capsys, words: str, cword: str) -> tuple[int, list[str], str]:
    from pecli.cli import run

    monkeypatch.setenv("_PECLI_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", cword)
    try:
        code = run([])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out.split(), err


@pytest.mark.parametrize("cword", ["x", "", "3.5", "1e3"])
def test_completion_with_a_cword_that_is_not_a_number_offers_nothing(monkeypatch, capsys, cword):
    assert complete(monkeypatch, capsys, "pecli check --scheme ro", cword) == (0, [], "")


def test_completion_with_an_option_given_twice_says_nothing(monkeypatch, capsys):
    line = "pecli check --hf-config a.json --hf-config b.json --layer-group "
    assert complete(monkeypatch, capsys, line, "7") == (0, [], "")


@pytest.mark.parametrize("line, expected", [
    ("pecli sweep ", ["uniqueness", "distinguishability", "composability", "relativity", "extrapolation",
                      "precision", "all"]),
    ("pecli check ", ["uniqueness", "distinguishability", "composability", "relativity", "extrapolation",
                      "precision", "all", "layout"]),
    ("pecli verify --scheme ", ["rope", "alibi", "sinusoidal", "t5", "mrope"]),
    ("pecli inspect --scheme ", ["rope", "rope-nd", "mrope"]),
])
def test_completion_offers_only_what_the_command_takes(monkeypatch, capsys, line, expected):
    code, offered, err = complete(monkeypatch, capsys, line, str(len(line.split(" ")) - 1))
    assert (code, offered, err) == (0, expected, "")


# -- the library ---------------------------------------------------------------------------------------
#: Library calls over the memory budget: each refused with a ValueError naming the argument, before it
#: allocates what it would need.
OVER_BUDGET = [
    ('pecli.encode("rope", range(2**40))', "positions"),
    ('pecli.encode("alibi", range(10**5), heads=64)', "positions"),  # (64, L, L) float64: 4.7 TiB
    ('pecli.encode("t5", range(10**5), max_memory="4G")', "positions"),  # (L, L) buckets: 75 GiB
    ('pecli.encode("rope", range(10**6), dim=128, max_memory="64M")', "positions"),  # 1 GB of cos
    ('pecli.encode("rope", range(3 * 10**7), dim=128, max_memory="4G")', "positions"),  # 28.6 GiB; the range listed: 1.4 GB
    ('pecli.check(pecli.build_scheme("rope"), "uniqueness", length=2**40)', "length"),
    ('pecli.check("rope", "uniqueness", length=10**8, max_memory="1G")', "length"),
]


def test_the_library_refuses_work_over_the_memory_budget(tmp_path):
    # In a child whose address space is limited to 1 GiB: a call that allocated before refusing would
    # raise MemoryError there instead of the ValueError.
    code = ("import json, sys\nimport pecli\nfound = {}\n"
            "for call in json.loads(sys.argv[1]):\n"
            "    try:\n        eval(call, {'pecli': pecli})\n        found[call] = 'no error'\n"
            "    except (ValueError, MemoryError) as error:\n        found[call] = f'{type(error).__name__}: {error}'\n"
            "print(json.dumps(found))\n")
    done = limited_python(code, json.dumps([call for call, _ in OVER_BUDGET]), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for call, argument in OVER_BUDGET:
        assert re.match(f"^ValueError: {argument}: .* over the budget of", found[call]), (call, found[call])


def test_the_library_checks_a_scheme_given_by_name():
    import pecli

    report = pecli.check("rope", "uniqueness", length=32)
    assert report.scheme == "rope" and report.length == 32 and report[0].verdict == "pass"
    with pytest.raises(TypeError, match="scheme"):
        pecli.check(42, "uniqueness")
    with pytest.raises(ValueError, match="prop must be one of"):
        pecli.check("rope", "nosuch")


@pytest.mark.parametrize("grid, error", [({"base": []}, ValueError), ({"base": 5}, TypeError), ({"base": "1e4"}, TypeError),
                                         ([("base", [1])], TypeError)])
def test_the_library_sweep_refuses_a_grid_without_values(grid, error):
    from pecli.sweeps import sweep

    with pytest.raises(error, match="grid"):
        sweep("uniqueness", grid, scheme="rope", length=16)
