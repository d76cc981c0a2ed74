"""``diff`` over many GGUF files with bad members: each is an ``unreadable`` row with its reason, exit 1, as
docs/commands/diff.md says ("a row per file: same, different …, or unreadable with the reason. Exit 0 only when
every file is the same; 1 otherwise") — a missing file, a URL pecli does not read, a bad port and a URL urllib
refuses alike. The same location alone is exit 2, one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = str(Path(__file__).parent.parent / "sample_configs/hf/meta-llama--llama-3.1-8b.json")
BAD = {
    "ftp://x/y.gguf": "ftp://x/y.gguf: pecli does not read ftp:// URLs; give a local path",
    "missing.gguf": "No such file or directory",
    "http://h:99999/x.gguf": "http://h:99999/x.gguf: port 99999 is not a port number (0–65535)",
    "http://[bad/y.gguf": "http://[bad/y.gguf: is no URL (Invalid IPv6 URL); give http(s)://HOST/PATH.gguf",
}


def test_every_bad_member_of_many_is_an_unreadable_row(run_main):
    pytest.importorskip("gguf")
    args = [part for location in BAD for part in ("--gguf", location)]
    done = run_main("diff", "--hf-config", CONFIG, *args, "--json")
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["counts"] == {"same": 0, "different": 0, "unreadable": 4} and answer["same"] is False
    for row in answer["rows"]:
        assert row["verdict"] == "unreadable" and row["error"].startswith(BAD[row["file"]]), row


@pytest.mark.parametrize("location", ["http://[bad/y.gguf", "https://[::1/x.gguf"])
def test_a_url_urllib_refuses_alone_is_exit_2(run_main, location):
    # urlsplit raises ValueError("Invalid IPv6 URL"): it was exit 3, "internal error"
    done = run_main("diff", "--hf-config", CONFIG, "--gguf", location)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr == f"pecli: error: gguf: {location}: is no URL (Invalid IPv6 URL); give http(s)://HOST/PATH.gguf\n"
    assert run_main("inspect", "--gguf", location).returncode == 2
