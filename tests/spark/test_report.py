"""The HTML report: self-contained, escaped, and its charts render in headless Chromium."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from pelctl.spark.results import Analysis
from tests.support.tools import need_binary

pytestmark = pytest.mark.spark

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def test_report_is_self_contained(result: Analysis) -> None:
    from pelctl.spark.report import html_report

    text = html_report(result)
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert text.count("<svg") == 7  # the time series and six panels
    assert not re.search(r"<script|<link|<img|@import|url\(", text, re.I)
    urls = set(re.findall(r"https?://[^\s\"'<>]+", text))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched
    assert "+100.0 entries/hour" in text


def test_report_escapes_names(result: Analysis) -> None:
    from pelctl.spark.report import html_report

    groups = (replace(result.groups[0], stream="<script>alert(1)</script>"), *result.groups[1:])
    consumers = (replace(result.consumers[0], consumer='"><img src=x>'), *result.consumers[1:])
    text = html_report(replace(result, groups=groups, consumers=consumers))
    assert "<script>" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_report_without_data() -> None:
    from pelctl.spark import results as r
    from pelctl.spark.report import html_report

    empty = r.Analysis(
        input=r.Input("snapshots", path="/x"),
        settings=r.Settings(
            stuck_min_idle_ms=300_000,
            dead_after_ms=300_000,
            poison_min_deliveries=5,
            top=20,
            accuracy=10_000,
            since_ms=None,
        ),
        totals=r.Totals(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, None),
        groups=(),
        consumers=(),
        stuck_consumer_count=0,
        delivery_buckets=(),
        poison=r.Poison(5, 0, (), ()),
        dead_consumers=(),
        dead_consumer_count=0,
        liveness_unknown_consumers=(),
        dlq_stats=r.DlqStats(0, {}, {}, ()),
        trends=r.NO_TRENDS,
        duration_s=0.0,
    )
    text = html_report(empty)
    assert text.count("no data") == 7
    assert "<script" not in text


def _png_pixels(path: Path) -> tuple[int, int, list[tuple[int, int, int]]]:
    """A minimal PNG decoder (8-bit RGB/RGBA, no interlace): enough to count colours."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and color in (2, 6) and interlace == 0
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        pixels.extend(tuple(line[x * bpp : x * bpp + 3]) for x in range(width))  # type: ignore[misc]
        prev = line
    return width, height, pixels


def test_report_renders_charts_in_headless_chromium(result: Analysis, tmp_path: Path) -> None:
    need_binary("chromium")
    from pelctl.spark.report import PALETTE, html_report

    page = tmp_path / "report.html"
    page.write_text(html_report(result), encoding="utf-8")
    shot = tmp_path / "report.png"
    # Half scale: a 600x800 image of the 1200x1600 page, so the pure-Python decode is quick.
    proc = subprocess.run(
        [
            "chromium",
            *CHROMIUM_FLAGS,
            f"--screenshot={shot}",
            "--window-size=1200,1600",
            "--force-device-scale-factor=0.5",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shot.exists(), proc.stderr[-2000:]
    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (600, 800)
    counts = Counter(pixels)

    def rgb(hex_color: str) -> tuple[int, int, int]:
        return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]

    # Bars in each chart colour: pending/p50 (blue), deliveries/p90 (amber), stuck/p99 (red),
    # growth (green). Hundreds of pixels each, not a blank page.
    for color in PALETTE[:4]:
        assert counts[rgb(color)] > 80, (color, counts[rgb(color)])
    assert counts[(255, 255, 255)] < 0.9 * width * height
