"""The cyclic garbage collector paused while a batch of long-lived objects is made."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc(pause: bool = True, promote: bool = False) -> Iterator[None]:
    """Pause the cyclic GC (unless asked not to); leave it as the caller had it.

    `promote`: on the way out, move every tracked object to the oldest generation without
    scanning it (`gc.freeze()` then `gc.unfreeze()`). Everything made during the pause is young,
    and the next collections would scan it all as such: for a large batch of long-lived objects
    (an audit's decoded live state) that costs what the pause saved. Skipped when objects are
    frozen already: that frozen set is someone else's to thaw.
    """
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if promote and pause and was_enabled and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
