"""A person's game at a frame rate, paced by the server: the page sends one call a frame, and the server runs each
no sooner than one frame after the last, keeping the times between frames for the episode's runtime sidecar (a
late frame, from a slow page or network, shows there as a longer interval)."""

import time
from typing import Any

DEFAULT_FRAME_RATE = 8  # frames a second when the view names none (autumn's default)


class FramePace:
    """The pace of one game: :meth:`wait` before each frame. Not safe for concurrent use (a game's lock holds)."""

    def __init__(self, frame_rate: int) -> None:
        self.period = 1.0 / max(1, frame_rate)
        self.intervals: list[float] = []
        self._last: float | None = None

    @classmethod
    def of_view(cls, view: dict[str, Any] | None) -> "FramePace":
        """The pace of the game whose first view is ``view`` (its ``frame_rate``)."""
        rate = (view or {}).get("frame_rate", DEFAULT_FRAME_RATE)
        return cls(int(rate) if isinstance(rate, int | float) else DEFAULT_FRAME_RATE)

    def wait(self) -> None:
        """Hold the caller until one frame period after the previous frame, then note the time between them."""
        now = time.monotonic()
        if self._last is not None:
            early = self._last + self.period - now
            if early > 0:
                time.sleep(early)
                now = time.monotonic()
            self.intervals.append(round(now - self._last, 4))
        self._last = now
