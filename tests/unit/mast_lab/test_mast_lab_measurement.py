from __future__ import annotations

from mast_lab import measurement as m


def stream(n: int, interval: float = 0.01) -> list[tuple[int, float]]:
    return [(i, 100.0 + i * interval) for i in range(n)]


def test_no_loss() -> None:
    sent = stream(100)
    got = {s: t + 0.001 for s, t in sent}
    loss = m.loss(sent, got, 0.01)
    assert (loss.lost, loss.window_s, loss.window_start) == (0, 0.0, None)


def test_longest_run_is_the_window() -> None:
    sent = stream(300)
    lost = set(range(50, 53)) | set(range(100, 150))
    got = {s: t for s, t in sent if s not in lost}
    loss = m.loss(sent, got, 0.01)
    assert loss.lost == 53
    assert abs(loss.window_s - 0.5) < 1e-9
    assert loss.window_start == sent[100][1]


def test_loss_at_the_tail_counts_one_interval_per_packet() -> None:
    sent = stream(10)
    got = {s: t for s, t in sent if s < 7}
    assert abs(m.loss(sent, got, 0.01).window_s - 0.03) < 1e-9


def test_parsers_skip_torn_lines() -> None:
    assert m.parse_sent(["1 2.5", "2 2.6 101", "3", "x y", ""]) == [(1, 2.5), (2, 2.6)]
    assert m.parse_received(["1 2.5 2.6", "1 2.5 2.9", "2 2.6"]) == {1: 2.6}
    samples = m.parse_path(["1.0 5 0", "1.1 6", "1.2 a 0"])
    assert samples == [m.PathSample(1.0, 5, 0)]


def path(rates: list[tuple[float, int, int]], step: float = 0.01) -> list[m.PathSample]:
    """rates: (until time, direct pps, tunnel pps) segments from t=0."""
    out, d, tu, t = [], 0.0, 0.0, 0.0
    for until, dr, tr in rates:
        while t < until:
            out.append(m.PathSample(round(t, 4), int(d), int(tu)))
            d += dr * step
            tu += tr * step
            t += step
    return out


def test_path_switch_times() -> None:
    samples = path([(2.0, 100, 10), (5.0, 10, 110), (8.0, 110, 10)])
    tunnel = m.path_in_use(samples, after=2.0, path="tunnel", window=0.3, min_packets=21)
    assert tunnel is not None and 2.0 <= tunnel < 2.1
    direct = m.path_in_use(samples, after=5.0, path="direct", window=0.3, min_packets=21)
    assert direct is not None and 5.0 <= direct < 5.1
    assert (
        m.path_in_use(samples, after=2.0, path="direct", window=0.3, min_packets=21, until=5.0)
        is None
    )


def test_a_burst_is_not_a_path() -> None:
    samples = path([(1.0, 10, 0)])
    samples += [m.PathSample(1.0 + i * 0.01, samples[-1].direct_tx + 8, 0) for i in range(1, 50)]
    assert m.path_in_use(samples, after=0.5, path="direct", window=0.3, min_packets=21) is None


def test_missing_interface_counter_is_ignored() -> None:
    samples = [m.PathSample(i * 0.01, -1, -1) for i in range(100)]
    assert m.path_in_use(samples, after=0, path="tunnel", window=0.3, min_packets=5) is None
