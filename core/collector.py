"""The cyclic garbage collector, paused while a burst of long-lived objects is built.

Imports of large packages (boto3, the Pulumi SDKs) and a plan's heap create hundreds of thousands
of objects that the collector would rescan at every pass for nothing; left in the youngest
generation when it is back on, they are scanned whole at the next allocation (0.4 s a plan on
2 cores).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, frozen: bool) -> Iterator[None]:
    """The collector off inside the block; on leaving, what it allocated leaves the young
    generations and the collector is as it was. `frozen`: out of the collector's sight for good
    (imported modules, which are never garbage); otherwise moved to the oldest generation and
    collected there as anything long-lived is (a plan's heap, garbage among it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if not frozen:
            gc.unfreeze()
        if was_enabled:
            gc.enable()
