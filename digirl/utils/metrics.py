"""Run metrics: one JSON line per ``log`` call in ``metrics.jsonl``, mirrored to TensorBoard and W&B.

Every key lives in a namespace (``rollout/``, ``train/``, ``eval/``, ``timing_s/``, ``critic/``,
``data/``, ``system/``) so dashboards group them and typos fail fast. The JSONL file is the source of
truth: it is appended to (resuming a run continues it), flushed on every call, and
:func:`read_metrics` skips a line torn by a crash.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import re
import time
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["METRICS_FILE", "NAMESPACES", "MetricsLogger", "Timer", "check_key", "read_metrics", "timed"]

log = logging.getLogger(__name__)

METRICS_FILE = "metrics.jsonl"
NAMESPACES = ("rollout/", "train/", "eval/", "timing_s/", "critic/", "data/", "system/")
_SECRET_KEY = re.compile(r"(api_key|token|secret|password)$", re.IGNORECASE)


def check_key(key: str) -> None:
    """Raise ``ValueError`` unless ``key`` is ``<namespace>/<name>`` with a known namespace."""
    if not isinstance(key, str) or not key.startswith(NAMESPACES) or key.endswith("/"):
        raise ValueError(
            f"metric key {key!r} must start with one of {', '.join(NAMESPACES)} and name a metric (e.g. 'train/loss_actor')"
        )


def _scrub(d: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a (nested) config dict without secret-looking keys, for W&B."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if _SECRET_KEY.search(str(k)):
            continue
        out[k] = _scrub(v) if isinstance(v, Mapping) else v
    return out


class MetricsLogger:
    """Writes ``run_dir/metrics.jsonl`` and, when available, TensorBoard events and a W&B run.

    ``log({"train/loss": 0.3}, step=10)`` appends ``{"step": 10, "time": <unix s>, "train/loss": 0.3}``.
    TensorBoard is used when the ``tensorboard`` package is importable (else a warning, once);
    W&B only when ``wandb=True`` and it is installed (``WANDB_MODE=offline``/``disabled`` are honoured
    by wandb itself). Pass ``config=config_to_dict(cfg, for_save=True)``; secret-looking keys are
    dropped again before anything reaches W&B.
    """

    def __init__(
        self,
        run_dir: str | Path,
        *,
        tensorboard: bool = True,
        wandb: bool = False,
        wandb_project: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / METRICS_FILE
        self._fh: IO[str] | None = None
        self._warned_nonfinite: set[str] = set()
        self._tb: Any = None
        self._wandb_run: Any = None
        self._closed = False
        if tensorboard:
            self._tb = self._open_tensorboard()
        if wandb:
            self._wandb_run = self._open_wandb(wandb_project, config)

    # ------------------------------------------------------------------ backends
    def _open_tensorboard(self) -> Any:
        if importlib.util.find_spec("tensorboard") is None:
            log.warning("tensorboard is not installed; metrics go to %s only (pip install tensorboard)", self.path)
            return None
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(log_dir=str(self.run_dir / "tb"))

    def _open_wandb(self, project: str | None, config: Mapping[str, Any] | None) -> Any:
        if importlib.util.find_spec("wandb") is None:
            log.warning("wandb=True but wandb is not installed (pip install 'digirl[wandb]'); skipping W&B")
            return None
        import wandb

        return wandb.init(
            project=project or "digirl",
            dir=str(self.run_dir),
            name=self.run_dir.name,
            config=_scrub(config or {}),
            resume="allow",
        )

    # ------------------------------------------------------------------ logging
    def _file(self) -> IO[str]:
        if self._fh is None:
            # A crash may have left a torn last line; start ours on a fresh line so it stays readable.
            needs_newline = False
            if self.path.exists() and self.path.stat().st_size > 0:
                with self.path.open("rb") as fh:
                    fh.seek(-1, 2)
                    needs_newline = fh.read(1) != b"\n"
            self._fh = self.path.open("a", encoding="utf-8")
            if needs_newline:
                self._fh.write("\n")
        return self._fh

    def log(self, metrics: Mapping[str, float], step: int) -> None:
        """Record ``metrics`` at ``step``. Keys must be namespaced; values must be numbers."""
        if self._closed:
            raise RuntimeError("MetricsLogger.log() after close()")
        if isinstance(step, bool) or not isinstance(step, int):
            try:
                step = int(step)  # numpy / 0-d tensor steps
            except (TypeError, ValueError):
                raise ValueError(f"step must be an integer, got {step!r}") from None
        values: dict[str, float] = {}
        for k, v in metrics.items():
            check_key(k)
            try:
                values[k] = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"metric {k!r} must be a number, got {type(v).__name__} {v!r}") from None
        record: dict[str, Any] = {"step": step, "time": round(time.time(), 3)}
        for k, x in values.items():
            if math.isfinite(x):
                record[k] = x
            else:
                if k not in self._warned_nonfinite:
                    self._warned_nonfinite.add(k)
                    log.warning("metric %s is %s at step %d; written as null", k, x, step)
                record[k] = None
        fh = self._file()
        fh.write(json.dumps(record, allow_nan=False) + "\n")
        fh.flush()
        if self._tb is not None:
            for k, x in values.items():
                self._tb.add_scalar(k, x, global_step=step)
            self._tb.flush()
        if self._wandb_run is not None:
            self._wandb_run.log(values, step=step)

    def close(self) -> None:
        """Flush and close every backend. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._fh is not None:
            self._fh.close()
        if self._tb is not None:
            self._tb.close()
        if self._wandb_run is not None:
            self._wandb_run.finish()

    def __enter__(self) -> MetricsLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a ``metrics.jsonl`` (or a run dir holding one), in file order.

    A malformed line (a write torn by a crash) is skipped: silently when it is the last line,
    with a warning naming the line otherwise.
    """
    p = Path(path)
    if p.is_dir():
        p = p / METRICS_FILE
    lines = p.read_text(encoding="utf-8").splitlines()
    out: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise ValueError("not an object")
        except ValueError:
            if i != len(lines) - 1:
                log.warning("%s:%d: skipping a malformed metrics line", p, i + 1)
            continue
        out.append(rec)
    return out


class Timer:
    """Wall-clock stopwatch (``time.perf_counter``); ``elapsed`` is live while running."""

    def __init__(self) -> None:
        self._start: float | None = None
        self._total = 0.0

    def start(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def stop(self) -> float:
        """Stop and return the seconds of this start/stop interval (the total keeps accumulating)."""
        if self._start is None:
            raise RuntimeError("Timer.stop() before start()")
        dt = time.perf_counter() - self._start
        self._total += dt
        self._start = None
        return dt

    @property
    def elapsed(self) -> float:
        running = time.perf_counter() - self._start if self._start is not None else 0.0
        return self._total + running

    def __enter__(self) -> Timer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def timed(metrics: MutableMapping[str, float], key: str) -> Iterator[Timer]:
    """Add the seconds spent in the block to ``metrics[key]`` (a ``timing_s/`` key; repeats add up).

    >>> m: dict[str, float] = {}
    >>> with timed(m, "timing_s/collect"):
    ...     pass
    """
    if not key.startswith("timing_s/"):
        raise ValueError(f"timed() keys live under 'timing_s/', got {key!r}")
    t = Timer().start()
    try:
        yield t
    finally:
        metrics[key] = metrics.get(key, 0.0) + t.stop()
