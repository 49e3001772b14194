""":class:`pelctl.core.health.HealthCount`, the one aggregation of a PEL walk (inspect's
``pel_health`` and the exporter's PELs read whole), on raw rows: the counts, and the
longest-idle rows it keeps across pages (the exporter re-reads them between walks)."""

from __future__ import annotations

import random

from pelctl.core.health import IDLE_THRESHOLDS_MS, HealthCount


def rows(idles: list[int], deliveries: int = 1) -> list[list]:
    return [[f"{i}-0".encode(), b"c", idle, deliveries] for i, idle in enumerate(idles)]


def test_counts_across_pages() -> None:
    h = HealthCount()
    h.add(rows([10, 70_000, 700_000]))
    h.add(rows([4_000_000], deliveries=6))
    result = h.result()
    assert result.thresholds_ms == IDLE_THRESHOLDS_MS
    assert (result.counts, result.scanned, result.poison) == ((3, 2, 1), 4, 1)
    assert result.longest is not None and result.longest.idle_ms == 4_000_000


def test_keeps_the_longest_idle_rows_with_their_delivery_time() -> None:
    rng = random.Random(7)
    idles = [rng.randrange(0, 10_000_000) for _ in range(5_000)]
    h = HealthCount(keep=5)
    now = 1_000_000_000
    for start in range(0, len(idles), 700):  # pages of 700, each read 1 s after the last
        page = [
            [f"{start + i}-0".encode(), b"c", idle, 1]
            for i, idle in enumerate(idles[start : start + 700])
        ]
        h.add(page, now + start // 700 * 1_000)
    kept = h.longest()
    assert len(kept) == 5
    delivered = sorted((now + i // 700 * 1_000 - idle, i) for i, idle in enumerate(idles))[:5]
    assert [at for at, _row in kept] == [at for at, _i in delivered]
    assert [row[0] for _at, row in kept] == [f"{i}-0".encode() for _at, i in delivered]


def test_nothing_kept_by_default() -> None:
    h = HealthCount()
    h.add(rows([1, 2, 3]))
    assert h.longest() == []
