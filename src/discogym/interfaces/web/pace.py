"""A person's game at a frame rate, paced by the server: the page sends one call a frame on its clock, and the
server holds the game to the frame rate, keeping the times between frames for the episode's runtime sidecar (a late
frame, from a slow page or network, shows there as a longer interval).

The pace is a bucket of frames that fills at the frame rate and holds at most :data:`BANKED` + 1 frames (it starts
with one). A page faster than the frame rate is held to one frame a period; a page on its own clock is never held
because one of its frames came late: the next may then come up to a period early, and no sooner than half a period
after it. Over any stretch of time a game has at most two frames more than the frame rate allows."""

import asyncio
import time
from typing import Any

DEFAULT_FRAME_RATE = 8  # frames a second when the view names none (autumn's default)
BANKED = 1.0  # frames a game may keep in hand after a late one


class FramePace:
    """The pace of one game: a server's event loop awaits :meth:`held` before each frame, so that no thread sleeps
    through the wait, and :meth:`tick` notes the frame as it runs. Not safe for concurrent use (a game's lock
    holds)."""

    def __init__(self, frame_rate: int) -> None:
        self.period = 1.0 / max(1, frame_rate)
        self.intervals: list[float] = []
        self._last: float | None = None
        self._banked = 0.0  # frames in the bucket right after the last frame, 0 to BANKED

    @classmethod
    def of_view(cls, view: dict[str, Any] | None) -> "FramePace":
        """The pace of the game whose first view is ``view`` (its ``frame_rate``)."""
        rate = (view or {}).get("frame_rate", DEFAULT_FRAME_RATE)
        return cls(int(rate) if isinstance(rate, int | float) else DEFAULT_FRAME_RATE)

    def early(self) -> float:
        """Seconds until the next frame may run (0 when it may run now)."""
        if self._last is None:
            return 0.0
        ready = self._last + self.period * max(1.0 - self._banked, 0.5)
        return max(0.0, ready - time.monotonic())

    async def held(self) -> None:
        """Wait without a thread until the next frame may run."""
        while (early := self.early()) > 0:
            await asyncio.sleep(early)

    def tick(self) -> None:
        """The frame runs now (after :meth:`held`): note the time since the previous frame."""
        now = time.monotonic()
        if self._last is not None:
            self.intervals.append(round(now - self._last, 4))
            filled = self._banked + (now - self._last) / self.period - 1.0
            self._banked = min(BANKED, max(0.0, filled))
        self._last = now
