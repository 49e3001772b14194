"""The one bucketing rule: ``[lo, hi)`` buckets between sorted edges.

Every count by idle time, age or deliveries (``pelctl histogram``, the dashboard's
aggregates, inspect's idle thresholds) puts a value in a bucket with this rule, so they can
never disagree on an edge: bucket ``i`` holds ``edges[i-1] <= value < edges[i]``; ``0`` is
below the first edge, ``len(edges)`` at or above the last (the open bucket). A value exactly
on an edge belongs to the bucket that starts there.

The rule is :func:`bisect.bisect_right`, called through C-level ``map``/``partial`` so a
million-row PEL is bucketed without a Python call per row.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter

_idle_of = itemgetter(2)  # a raw XPENDING row: [id, consumer, idle-ms, deliveries]


def bucket_finder(edges: Sequence[int]) -> Callable[[int], int]:
    """``value -> index`` of the ``[lo, hi)`` bucket holding ``value`` (see the module)."""
    return partial(bisect_right, edges)


def count_idle(page: list, edges: Sequence[int], counter: Counter[int]) -> None:
    """Count each raw ``XPENDING`` row of ``page`` by idle time: ``counter[i]`` gets the rows
    with ``edges[i-1] <= idle < edges[i]`` (``i = 0`` below the first edge, ``i =
    len(edges)`` at or above the last)."""
    counter.update(map(bucket_finder(edges), map(_idle_of, page)))
