"""What one command may spend on the network: time, server-asked waiting, and bytes.

A hostile or broken server can answer slowly (a byte every few seconds), forever (an endless
body, endless pages), or ask for long waits (Retry-After: 100000 on every read). Each read of a
command draws on one `Budget`: its deadline bounds every request and every wait between tries,
the waits add up to at most `max_wait`, and the bytes read add up to at most `max_bytes`. Past a
bound the read fails with `OverBudget` (the caller reports the command incomplete), never hangs.
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

__all__ = ["Budget", "OverBudget"]


class OverBudget(KubeDataError):
    """A bound of the command's Budget was reached; the message names it and its setting."""


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
        """OverBudget once the deadline has passed."""
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
        """Count `size` more bytes read; OverBudget past `max_bytes`."""
        self.read += size
        if self.read > self.max_bytes:
            raise OverBudget(
                f"the answers add up to over {self.max_bytes} bytes, more than any cluster's "
                "audit reads"
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
