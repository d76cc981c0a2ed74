"""``.npz`` archives written by ``pecli encode`` are the same bytes whenever and wherever they are written:
every member is dated the ZIP epoch, 1980-01-01 00:00:00, not the local time of the run."""

from __future__ import annotations

import zipfile

import numpy as np

from conftest import limited_pecli


def test_two_runs_in_other_time_zones_write_the_same_bytes(tmp_path):
    # Local times 26 hours apart (UTC−12 and UTC+14): a local-time stamp would differ in its date.
    args = ("encode", "--scheme", "rope", "--dim", "8", "--length", "300", "--dtype", "float32")
    paths = []
    for zone in ("Etc/GMT+12", "Etc/GMT-14"):
        path = tmp_path / f"{zone.replace('/', '_')}.npz"
        result = limited_pecli(*args, "--out", path, env={"TZ": zone})
        assert result.returncode == 0, result.stderr
        paths.append(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    with zipfile.ZipFile(paths[0]) as archive:
        assert archive.testzip() is None
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    with np.load(paths[0]) as archive:  # read back: cos of p·θ_0 = p (θ_0 = 1) in the first column
        assert archive["cos"].shape == (300, 8)
        np.testing.assert_allclose(archive["cos"][:, 0], np.cos(np.arange(300.0)), rtol=0, atol=2e-7)
