"""What the connected server can do, detected once per connection from ``INFO``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pelctl.base.errors import NeedsServerVersion

# feature -> (minimum Redis version, description used in error messages)
FEATURES: dict[str, tuple[tuple[int, int], str]] = {
    "xautoclaim": ((6, 2), "XAUTOCLAIM"),
    "xpending_idle": ((6, 2), "XPENDING IDLE"),
    "xinfo_lag": ((7, 0), "XINFO lag / entries-read"),
    "xclaim_drops_deleted": ((7, 0), "XCLAIM dropping deleted entries"),
    "consumer_inactive": ((7, 2), "XINFO CONSUMERS inactive"),
    "xackdel": ((8, 2), "XACKDEL / XDELEX and the KEEPREF / DELREF / ACKED reference policies"),
    "xreadgroup_claim": ((8, 4), "XREADGROUP ... CLAIM"),
    "idmp": ((8, 6), "XADD ... IDMP (idempotent producers)"),
}
# Valkey forked from Redis 7.2.4: it has everything up to 7.2 and none of Redis 8's stream
# additions (as of Valkey 8).
_VALKEY_AS_REDIS = (7, 2)
_LEADING_DIGITS = re.compile(r"\d+", re.ASCII)


@dataclass(frozen=True)
class Capabilities:
    server: str  # "redis" or "valkey"
    version: tuple[int, int, int]
    cluster: bool = False

    @property
    def version_text(self) -> str:
        return ".".join(str(p) for p in self.version)

    @property
    def label(self) -> str:
        return f"{self.server} {self.version_text}"

    def _redis_equivalent(self) -> tuple[int, int]:
        if self.server == "valkey":
            return _VALKEY_AS_REDIS
        return self.version[:2]

    def has(self, feature: str) -> bool:
        needed, _ = FEATURES[feature]
        return self._redis_equivalent() >= needed

    def require(self, feature: str) -> None:
        if not self.has(feature):
            needed, text = FEATURES[feature]
            raise NeedsServerVersion(text, f"Redis {needed[0]}.{needed[1]}+", self.label)

    @property
    def features(self) -> dict[str, bool]:
        return {name: self.has(name) for name in FEATURES}


def _parse_version(text: str) -> tuple[int, int, int]:
    # Leading digits of each part only: "7.2.4-rc1" is 7.2.4, not 7.2.41.
    parts = [
        int(m.group()) if (m := _LEADING_DIGITS.match(p)) else 0
        for p in text.strip().split(".")[:3]
    ]
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


def from_info(info: dict[str, object], cluster: bool = False) -> Capabilities:
    def text(key: str) -> str | None:
        value = info.get(key)
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    valkey_version = text("valkey_version")
    if valkey_version or text("server_name") == "valkey":
        return Capabilities(
            "valkey", _parse_version(valkey_version or text("redis_version") or "0"), cluster
        )
    return Capabilities("redis", _parse_version(text("redis_version") or "0"), cluster)
