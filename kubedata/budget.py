"""What one command may spend on the network: time, server-asked waiting, and bytes.

A hostile or broken server can answer slowly (a byte every few seconds), forever (an endless
body, endless pages), or ask for long waits (Retry-After: 100000 on every read). Each read of a
command draws on one `Budget`: its deadline bounds every request and every wait between tries,
the waits add up to at most `max_wait`, and the bytes read add up to at most `max_bytes`. Past a
bound the read fails with `OverBudget` (the caller reports the command incomplete), never hangs.
The bytes bound is final (`OverReadBudget`): once it is reached every later read is refused
before it is sent, so a caller cannot fall back to reading the same bytes one object at a time.
Where a client cannot check the deadline between reads (a response's status line and headers,
trickled a byte at a time, are read inside the HTTP library), `cutoff` cuts the connection when
the deadline passes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kubedata.errors import KubeDataError
from kubedata.quantity import canonical_quantity

__all__ = ["Budget", "OverBudget", "OverReadBudget"]


class OverBudget(KubeDataError):
    """A bound of the command's Budget was reached; the message names it and its setting."""


class OverReadBudget(OverBudget):
    """The bytes bound was reached: final for the command (every later read is refused too), so
    callers let it end the command rather than retry or read what is left piece by piece."""


@dataclass
class Budget:
    seconds: float
    """The command's deadline for network reads, from its start."""
    max_wait: float
    """Seconds of waiting between tries (backoff and Retry-After) the command may spend."""
    max_bytes: int
    """Bytes of response bodies the command may read."""
    setting: str = ""
    """How the user changes `seconds`, for messages ("" when it is fixed)."""
    bytes_setting: str = ""
    """How the user changes `max_bytes`, for messages ("" when it is fixed)."""
    clock: Callable[[], float] = time.monotonic
    sleeper: Callable[[float], None] = time.sleep
    waited: float = 0.0
    read: int = 0
    end: float = field(init=False)

    def __post_init__(self) -> None:
        self.end = self.clock() + self.seconds

    def _seconds(self) -> str:
        return f"{self.seconds:g} s" + (f" ({self.setting})" if self.setting else "")

    def remaining(self) -> float:
        return self.end - self.clock()

    def check(self) -> None:
        """OverReadBudget once the bytes are spent; OverBudget once the deadline has passed."""
        if self.read > self.max_bytes:
            raise self._over_bytes()
        if self.remaining() <= 0:
            raise OverBudget(f"the deadline of {self._seconds()} passed before it was read")

    def timeout(self, cap: float) -> float:
        """A per-request timeout: `cap`, or less as the deadline nears."""
        self.check()
        return max(0.001, min(cap, self.remaining()))

    def sleep(self, seconds: float) -> None:
        """Wait between tries, if the deadline and the waiting budget allow it."""
        if self.waited + seconds > self.max_wait:
            raise OverBudget(
                f"the server asked for {self.waited + seconds:g} s of waiting in all, over the "
                f"{self.max_wait:g} s this command may wait"
            )
        if seconds >= self.remaining():
            raise OverBudget(
                f"waiting {seconds:g} s more would pass the deadline of {self._seconds()}"
            )
        self.waited += seconds
        self.sleeper(seconds)

    def take(self, size: int) -> None:
        """Count `size` more bytes read; OverReadBudget past `max_bytes`."""
        self.read += size
        if self.read > self.max_bytes:
            raise self._over_bytes()

    def _over_bytes(self) -> OverReadBudget:
        size = canonical_quantity(self.max_bytes)
        if not self.bytes_setting:
            return OverReadBudget(
                f"the answers add up to over {size} bytes, more than this command may read"
            )
        return OverReadBudget(
            f"the answers add up to over {size} bytes ({self.bytes_setting} {size}), so the "
            f"rest was not read: rerun with a larger {self.bytes_setting} (e.g. "
            f"{canonical_quantity(2 * self.max_bytes)})"
        )

    @contextmanager
    def cutoff(self, cut: Callable[[], None], what: str) -> Iterator[None]:
        """Run one blocking exchange (`what`, for the message) within the deadline: when it
        passes, `cut` is called from a timer thread (it shuts the connection, so the blocked read
        returns) and the exchange ends with OverBudget, whatever error the cut caused."""
        self.check()
        passed = threading.Event()

        def fire() -> None:
            passed.set()
            cut()

        timer = threading.Timer(self.remaining(), fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        except Exception:
            if not passed.is_set():
                raise
        finally:
            timer.cancel()
        if passed.is_set():
            raise OverBudget(f"the deadline of {self._seconds()} passed before {what} ended")
