"""core/collector: the collector paused for a burst of long-lived objects."""

from __future__ import annotations

import gc

from core.collector import collector_paused


def test_a_plan_heap_ends_in_the_oldest_generation_still_collectable():
    gc.collect()
    frozen_before = gc.get_freeze_count()
    with collector_paused(frozen=False):
        assert not gc.isenabled()
        heap = [[] for _ in range(20_000)]
    assert gc.isenabled() and gc.get_freeze_count() == frozen_before
    assert len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1)) < len(heap)


def test_imported_modules_are_frozen_out_of_sight():
    gc.collect()
    frozen_before = gc.get_freeze_count()
    try:
        with collector_paused(frozen=True):
            kept = [[] for _ in range(1_000)]
        assert gc.get_freeze_count() >= frozen_before + len(kept)
    finally:
        gc.unfreeze()  # the rest of the session's objects back to the collector


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with collector_paused(frozen=False):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
