"""Progress for long work: a rich progress bar on a terminal, periodic log lines everywhere else.

Under CI, in a notebook log, when stdout is piped, or with ``DIGIRL_NO_PROGRESS=1``, a bar would
either be invisible or flood the log with carriage returns; so there we log one line every
``log_every_s`` seconds (and at the end) instead. Either way long work always shows progress.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Progress", "progress", "progress_enabled"]

log = logging.getLogger("digirl.progress")


def progress_enabled() -> bool:
    """Whether an interactive bar makes sense: stdout is a TTY and neither ``CI`` nor
    ``DIGIRL_NO_PROGRESS`` is set."""
    if os.environ.get("DIGIRL_NO_PROGRESS", "") not in ("", "0") or os.environ.get("CI"):
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False


class Progress:
    """Handle yielded by :func:`progress`: call ``advance()`` as work completes."""

    def __init__(self, total: int | None, description: str, *, bar: Any = None, log_every_s: float = 10.0) -> None:
        self.total = total
        self.description = description
        self.completed = 0
        self._bar = bar
        self._task_id: Any = bar.add_task(description, total=total) if bar is not None else None
        self._log_every_s = log_every_s
        self._t0 = time.monotonic()
        self._last_log = self._t0

    def advance(self, n: int = 1) -> None:
        """Mark ``n`` more units done."""
        self.update(self.completed + n)

    def update(self, completed: int, *, description: str | None = None) -> None:
        """Set the number of units done (and optionally change the description)."""
        self.completed = completed
        if description is not None:
            self.description = description
        if self._bar is not None:
            self._bar.update(self._task_id, completed=completed, description=self.description)
            return
        now = time.monotonic()
        if now - self._last_log >= self._log_every_s:
            self._last_log = now
            log.info("%s", self.status_line())

    def status_line(self) -> str:
        """``"collect: 30/100 (30%) 12.3/s, eta 6s"``-style summary."""
        elapsed = max(time.monotonic() - self._t0, 1e-9)
        rate = self.completed / elapsed
        if self.total:
            pct = 100.0 * self.completed / self.total
            eta = (self.total - self.completed) / rate if rate > 0 else float("inf")
            eta_s = f"{eta:.0f}s" if eta != float("inf") else "?"
            return f"{self.description}: {self.completed}/{self.total} ({pct:.0f}%) {rate:.3g}/s, eta {eta_s}"
        return f"{self.description}: {self.completed} done, {rate:.3g}/s, {elapsed:.0f}s elapsed"

    def _finish(self) -> None:
        if self._bar is None:
            log.info("%s (%.1fs)", self.status_line(), time.monotonic() - self._t0)


@contextmanager
def progress(
    total: int | None,
    description: str,
    *,
    enabled: bool | None = None,
    log_every_s: float = 10.0,
) -> Iterator[Progress]:
    """Show progress of ``total`` units of work (``None``: unknown total).

    ``enabled=None`` decides with :func:`progress_enabled`; ``False`` forces log lines.

    >>> with progress(3, "collect", enabled=False) as p:
    ...     for _ in range(3):
    ...         p.advance()
    """
    use_bar = progress_enabled() if enabled is None else enabled and progress_enabled()
    if not use_bar:
        p = Progress(total, description, log_every_s=log_every_s)
        yield p
        p._finish()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as RichProgress

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with RichProgress(*columns, transient=False) as bar:
        yield Progress(total, description, bar=bar, log_every_s=log_every_s)
