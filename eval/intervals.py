"""95 % percentile-bootstrap intervals of metrics computed over a list of items.

Items are resampled with replacement ``resamples`` times (seeded: the same items give the
same interval); each resample's metrics come from the caller's ``compute``. A metric that is
undefined (None) in more than half of the resamples, a class that is rarely drawn, gets no
interval rather than one built from the few resamples where it exists.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

Item = TypeVar("Item")

BOOTSTRAP_RESAMPLES = 1000
INTERVAL_SEED = 0


def bootstrap_intervals(items: Sequence[Item], compute: Callable[[Sequence[Item]], Mapping[str, float | None]],
                        resamples: int = BOOTSTRAP_RESAMPLES, seed: int = INTERVAL_SEED) -> dict[str, tuple[float, float] | None]:
    """The 2.5th and 97.5th percentiles of each metric of ``compute`` over resamples of ``items``."""
    rng = random.Random(seed)
    drawn: dict[str, list[float]] = {name: [] for name in compute(items)}
    for _ in range(resamples if items else 0):
        for name, value in compute([items[rng.randrange(len(items))] for _ in items]).items():
            if value is not None:
                drawn[name].append(value)
    intervals: dict[str, tuple[float, float] | None] = {}
    for name, values in drawn.items():
        values.sort()
        intervals[name] = ((values[int(0.025 * len(values))], values[min(len(values) - 1, int(0.975 * len(values)))])
                           if values and len(values) >= resamples / 2 else None)
    return intervals
