"""Serial, a Dask LocalCluster, and a real `dask scheduler` + `dask worker` on 127.0.0.1 give the
same series and the same per-snapshot AS tables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from mast_common.waiting import wait_for
from rib_analysis.history import command
from rib_analysis.history.synth import random_series, write_series

DASK = Path(sys.executable).parent / "dask"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive") / "route-views.synth"
    write_series(root, random_series(5, providers=30, stubs=400, change_rate=0.05, seed=7))
    return root


def run(archive: Path, out: Path, scheduler: str) -> dict[str, Any]:
    rc = command.main([str(archive), "-o", str(out), "--scheduler", scheduler, "--workers", "2"])
    assert rc == 0
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    assert data["run"]["decoded"] == 5 and data["run"]["mode"] == scheduler
    return data


def same_results(a: Path, b: Path) -> None:
    ja, jb = (json.loads((d / "report.json").read_text()) for d in (a, b))
    assert ja["series"] == jb["series"]
    assert [s["sha256"] for s in ja["snapshots"]] == [s["sha256"] for s in jb["snapshots"]]
    ta, tb = (pq.read_table(d / "parquet" / "as_table.parquet").to_pylist() for d in (a, b))
    assert ta == tb and len(ta) > 5 * 400


@pytest.fixture(scope="module")
def serial(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial")
    data = run(archive, out, "serial")
    assert len(data["series"]["provider_changes"]) == 4
    assert sum(c["additions"] + c["deletions"] for c in data["series"]["provider_changes"]) > 0
    return out


def test_local_cluster_matches_serial(archive: Path, serial: Path, tmp_path: Path) -> None:
    run(archive, tmp_path, "local")
    same_results(serial, tmp_path)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`dask scheduler` and one `dask worker` on loopback, as subprocesses; always stopped."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs: list[subprocess.Popen[bytes]] = []
    logs = [(tmp_path / "scheduler.log").open("wb"), (tmp_path / "worker.log").open("wb")]
    try:
        procs.append(
            subprocess.Popen(
                [
                    str(DASK),
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(sched_file),
                ],
                stdout=logs[0],
                stderr=subprocess.STDOUT,
                cwd=tmp_path,
                env=env,
                start_new_session=True,
            )
        )
        address = wait_for(
            lambda: sched_file.exists() and json.loads(sched_file.read_text())["address"],
            timeout=60,
            what="the dask scheduler's address file",
        )
        procs.append(
            subprocess.Popen(
                [
                    str(DASK),
                    "worker",
                    "--scheduler-file",
                    str(sched_file),
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--local-directory",
                    str(tmp_path / "w"),
                    "--death-timeout",
                    "60",
                ],
                stdout=logs[1],
                stderr=subprocess.STDOUT,
                cwd=tmp_path,
                env=env,
                start_new_session=True,
            )
        )
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=90)
        yield str(address)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        for f in logs:
            f.close()


def test_external_scheduler_matches_serial(
    archive: Path, serial: Path, tmp_path: Path, dask_cluster: str
) -> None:
    assert dask_cluster.startswith("tcp://127.0.0.1:")
    out = tmp_path / "out"
    run(archive, out, dask_cluster)
    same_results(serial, out)


def test_unreachable_scheduler_exit_69(
    archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc = command.main(
        [
            str(archive),
            "-o",
            str(tmp_path),
            "--scheduler",
            f"tcp://127.0.0.1:{port}",
            "--connect-timeout",
            "3",
        ]
    )
    assert rc == 69
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err


def test_bad_dump_on_a_worker_is_exit_65(
    tmp_path: Path, dask_cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The classifier's error travels back from the worker: file and offset named, no traceback."""
    import gzip

    (path,) = write_series(tmp_path / "rv", random_series(1, providers=5, stubs=20, seed=1))
    raw = bytearray(gzip.decompress(path.read_bytes()))
    first_rib = 12 + int.from_bytes(raw[8:12], "big")
    raw[first_rib + 12 + 4] = 200  # an IPv4 prefix length of 200
    bad = tmp_path / "rib.20110105.0000.mrt"
    bad.write_bytes(bytes(raw))
    rc = command.main([str(bad), "-o", str(tmp_path / "out"), "--scheduler", dask_cluster])
    err = capsys.readouterr().err
    assert rc == 65, err
    assert str(bad) in err and "offset" in err and "Traceback" not in err
