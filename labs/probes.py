"""Traffic probes the failover scenario runs inside lab nodes (`python -m mast_lab.probes ...`).

Every probe logs with CLOCK_MONOTONIC timestamps (the same clock in every namespace of the
machine), so the scenario can line up the sender's, the receiver's and the router's views.
Probes stop on SIGTERM and write their summary before exiting.
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from types import FrameType

_stop = False
# UDP stream payload: sequence number and the sender's monotonic send time.
STREAM = struct.Struct("!Qd")


def _on_term(signum: int, frame: FrameType | None) -> None:
    global _stop
    _stop = True


def udp_send(to: str, port: int, rate: float, out: Path) -> int:
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    interval = 1.0 / rate
    seq = 0
    start = time.monotonic()
    with out.open("w", buffering=1) as log:
        while not _stop:
            now = time.monotonic()
            try:
                sock.sendto(STREAM.pack(seq, now), (to, port))
                log.write(f"{seq} {now:.6f}\n")
            except OSError as exc:  # no route during the outage: the packet is lost, go on
                log.write(f"{seq} {now:.6f} {exc.errno}\n")
            seq += 1
            # Schedule against the start time so that a slow iteration does not lower the rate.
            delay = start + seq * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    return 0


def udp_recv(bind: str, port: int, out: Path) -> int:
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.bind((bind, port))
    sock.settimeout(0.2)
    with out.open("w", buffering=1) as log:
        while not _stop:
            try:
                data = sock.recv(64)
            except TimeoutError:
                continue
            if len(data) != STREAM.size:
                continue
            seq, sent = STREAM.unpack(data)
            log.write(f"{seq} {sent:.6f} {time.monotonic():.6f}\n")
    return 0


def tcp_server(bind: str, port: int, out: Path) -> int:
    """Echo every line of one connection back; summary: lines echoed and how it ended."""
    srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((bind, port))
    srv.listen(1)
    srv.settimeout(0.2)
    summary: dict[str, object] = {"accepted": False, "lines": 0, "end": "stopped"}
    conn = None
    while not _stop and conn is None:
        try:
            conn, peer = srv.accept()
            summary["accepted"] = True
            summary["peer"] = peer[0]
        except TimeoutError:
            continue
    if conn is not None:
        conn.settimeout(0.2)
        buf = b""
        while not _stop:
            try:
                data = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError as exc:
                summary["end"] = f"error: {exc}"
                break
            if not data:
                summary["end"] = "closed by peer"
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                conn.sendall(line + b"\n")
                summary["lines"] = int(str(summary["lines"])) + 1
    out.write_text(json.dumps(summary))
    return 0


def tcp_client(to: str, port: int, rate: float, out: Path) -> int:
    """Send a numbered line every 1/rate s on one connection; check every echo comes back."""
    summary: dict[str, object] = {"connected": False, "sent": 0, "echoed": 0, "error": None}
    events: list[tuple[float, int]] = []
    try:
        sock = socket.create_connection((to, port), timeout=10)
    except OSError as exc:
        summary["error"] = f"connect: {exc}"
        out.write_text(json.dumps(summary))
        return 1
    summary["connected"] = True
    summary["connected_at"] = time.monotonic()
    sock.setblocking(False)
    interval = 1.0 / rate
    sent = echoed = 0
    buf = b""
    next_send = time.monotonic()
    drain_until: float | None = None
    try:
        while True:
            now = time.monotonic()
            if _stop and drain_until is None:
                drain_until = now + 10  # let the last retransmissions arrive
            if drain_until is not None and (echoed >= sent or now > drain_until):
                break
            if drain_until is None and now >= next_send:
                try:
                    sock.sendall(f"{sent}\n".encode())
                    sent += 1
                except BlockingIOError:
                    pass  # send buffer full during the outage: TCP is still retransmitting
                next_send += interval
            try:
                data = sock.recv(65536)
                if not data:
                    summary["error"] = "closed by server"
                    break
                buf += data
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if int(line) != echoed:
                        summary["error"] = f"echo {int(line)} out of order, expected {echoed}"
                    echoed += 1
                    events.append((time.monotonic(), echoed))
            except BlockingIOError:
                pass
            time.sleep(min(0.005, max(0.0, next_send - time.monotonic())))
    except OSError as exc:
        summary["error"] = f"{type(exc).__name__}: {exc}"
    summary["sent"] = sent
    summary["echoed"] = echoed
    # The longest time without an echo while the connection was open: TCP's own outage view.
    stalls = [b[0] - a[0] for a, b in itertools.pairwise(events)]
    summary["longest_stall_s"] = max(stalls, default=0.0)
    summary["echo_times"] = [round(t, 4) for t, _ in events[:: max(1, len(events) // 2000)]]
    out.write_text(json.dumps(summary))
    return 0


def path_watch(direct: str, tunnel: str, interval: float, out: Path) -> int:
    """Log the provider router's transmit counters on the direct link and the backup tunnel."""

    def tx(ifname: str) -> int:
        try:
            return int(Path(f"/sys/class/net/{ifname}/statistics/tx_packets").read_text())
        except (OSError, ValueError):
            return -1

    with out.open("w", buffering=1) as log:
        while not _stop:
            log.write(f"{time.monotonic():.6f} {tx(direct)} {tx(tunnel)}\n")
            time.sleep(interval)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mast_lab.probes", description=__doc__)
    sub = parser.add_subparsers(dest="probe", required=True)
    for name in ("udp-send", "tcp-client"):
        p = sub.add_parser(name)
        p.add_argument("--to", required=True)
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--rate", type=float, default=100.0)
        p.add_argument("--out", type=Path, required=True)
    for name in ("udp-recv", "tcp-server"):
        p = sub.add_parser(name)
        p.add_argument("--bind", default="::")
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("path-watch")
    p.add_argument("--direct", required=True)
    p.add_argument("--tunnel", required=True)
    p.add_argument("--interval", type=float, default=0.01)
    p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)
    if args.probe == "udp-send":
        return udp_send(args.to, args.port, args.rate, args.out)
    if args.probe == "udp-recv":
        return udp_recv(args.bind, args.port, args.out)
    if args.probe == "tcp-server":
        return tcp_server(args.bind, args.port, args.out)
    if args.probe == "tcp-client":
        return tcp_client(args.to, args.port, args.rate, args.out)
    return path_watch(args.direct, args.tunnel, args.interval, args.out)


if __name__ == "__main__":
    sys.exit(main())
