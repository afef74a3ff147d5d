"""Progress of long jobs (matches, training, warm start): one policy for every command.

On a terminal, :func:`progress_bar` is a tqdm bar that redraws in place. When the stream is not a
terminal (a log file, a pipe, a batch job), redrawing would write a status many times a second, so
it is a :class:`ProgressLines` instead: a plain line, with the count, percent done, rate and ETA,
at most every :data:`LINE_SECONDS` seconds or each :data:`LINE_FRACTION` of the total (never more
than once per :data:`MIN_LINE_SECONDS`), and a last line when the job closes, so a log still shows
how a long job moves. :func:`progress_write` prints a message without breaking a bar.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import IO, Any

#: seconds between two progress lines when the stream is not a terminal
LINE_SECONDS = 30.0
#: share of the total that also earns a progress line (every 10%)
LINE_FRACTION = 0.1
#: the least seconds between two progress lines (the last line at close excepted)
MIN_LINE_SECONDS = 1.0


def is_terminal(file: Any) -> bool:
    """Whether ``file`` (a text stream) is an interactive terminal; False for files, pipes and
    streams without ``isatty``."""
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _clock(seconds: float) -> str:
    s = max(int(seconds), 0)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class ProgressLines:
    """The part of tqdm's interface that the commands use (``update``, ``set_postfix``,
    ``close``, ``n``, ``total``), printed as plain lines for a log.

    A line reads ``"<desc>: 300/1,000 deal (30%)  12.5 deal/s  elapsed 0:00:24  ETA 0:00:56  k=v"``:
    counts in ``unit``, the rate (units per second since the bar began, from ``initial``), the
    elapsed time and the time left (h:mm:ss), then the fields of :meth:`set_postfix`.

    Args:
        total: the count at which the job is done (``None``: unknown; no percent or ETA then).
        desc: what is counted, the line's prefix (default ``"progress"``).
        unit: name of one count (``"deal"``, ``"step"``).
        initial: the count already done when the bar begins (a resumed job).
        file: the text stream to write to (default ``sys.stderr``).
        every_s: seconds between lines (default :data:`LINE_SECONDS`).
        every_fraction: share of ``total`` that also earns a line (default :data:`LINE_FRACTION`).
        clock: the time source in seconds (default ``time.monotonic``).
    Raises:
        ValueError: a negative ``total`` or ``initial``, or ``every_s`` / ``every_fraction`` not
            positive.
    """

    def __init__(self, total: int | float | None = None, desc: str | None = None, unit: str = "it", initial: int | float = 0,
                 file: IO[str] | None = None, every_s: float = LINE_SECONDS, every_fraction: float = LINE_FRACTION,
                 clock: Any = time.monotonic) -> None:
        if total is not None and total < 0:
            raise ValueError(f"total must be >= 0 or None, got {total!r}")
        if initial < 0:
            raise ValueError(f"initial must be >= 0, got {initial!r}")
        if not every_s > 0 or not every_fraction > 0:
            raise ValueError(f"every_s and every_fraction must be > 0, got {every_s!r} and {every_fraction!r}")
        self.total, self.desc, self.unit = total, desc or "progress", unit
        self.n = self._start_n = initial
        self.file = file
        self.every_s, self.every_fraction = float(every_s), float(every_fraction)
        self._clock = clock
        self._start = self._last = clock()
        self._last_n = initial
        self._postfix = ""
        self._closed = False
        #: lines written so far
        self.lines = 0

    def update(self, n: int | float = 1) -> None:
        """Count ``n`` more; write a line when it is due."""
        self.n += n
        now = self._clock()
        if now - self._last < MIN_LINE_SECONDS:
            return
        step = self.every_fraction * self.total if self.total else None
        if now - self._last >= self.every_s or (step is not None and self.n - self._last_n >= step):
            self._write(now)

    def set_postfix(self, ordered_dict: Mapping[str, Any] | None = None, refresh: bool = True, **fields: Any) -> None:
        """Fields shown at the end of the next line (``refresh`` is accepted for tqdm's sake:
        lines are written only when due)."""
        items = {**(ordered_dict or {}), **fields}
        self._postfix = "  ".join(f"{k}={v}" for k, v in items.items())

    def close(self) -> None:
        """Write the last line (if anything was counted since the last one); later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        if self.n != self._last_n or self.lines == 0:
            self._write(self._clock())

    def line(self, now: float | None = None) -> str:
        """The progress line as of ``now`` (default: the clock's time)."""
        now = self._clock() if now is None else now
        elapsed = max(now - self._start, 0.0)
        rate = (self.n - self._start_n) / elapsed if elapsed > 0 else 0.0
        count = f"{self.n:,}" if self.total is None else f"{self.n:,}/{self.total:,}"
        parts = [f"{self.desc}: {count} {self.unit}" + (f" ({100 * self.n / self.total:.0f}%)" if self.total else ""),
                 f"{rate:,.1f} {self.unit}/s", f"elapsed {_clock(elapsed)}"]
        if self.total is not None:
            parts.append(f"ETA {_clock((self.total - self.n) / rate)}" if rate > 0 else "ETA ?")
        if self._postfix:
            parts.append(self._postfix)
        return "  ".join(parts)

    def _write(self, now: float) -> None:
        file = sys.stderr if self.file is None else self.file
        print(self.line(now), file=file, flush=True)
        self._last, self._last_n = now, self.n
        self.lines += 1

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress_bar(total: int | float | None = None, desc: str | None = None, unit: str = "it", initial: int | float = 0,
                 file: IO[str] | None = None, disable: bool = False, **tqdm_options: Any) -> Any:
    """The progress display of a job that counts to ``total``.

    Args:
        total, desc, unit, initial: as tqdm (and :class:`ProgressLines`) take them.
        file: the text stream (default ``sys.stderr``).
        disable: show nothing (the object still takes ``update`` / ``set_postfix`` / ``close``).
        **tqdm_options: more options of the terminal bar (``dynamic_ncols``, ``mininterval``,
            ``unit_scale``, ``smoothing`` …); unused for plain lines.
    Returns:
        a ``tqdm`` bar when ``file`` is a terminal (or ``disable``), else :class:`ProgressLines`
        (at most a line per :data:`LINE_SECONDS` or per :data:`LINE_FRACTION` of ``total``).
    """
    stream = sys.stderr if file is None else file
    if disable or is_terminal(stream):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, initial=initial, file=stream, disable=disable, **tqdm_options)
    return ProgressLines(total=total, desc=desc, unit=unit, initial=initial, file=file)


def progress_write(message: str, file: IO[str] | None = None) -> None:
    """Print ``message`` (a line, to ``file``, default stdout) without breaking a terminal
    progress bar (``tqdm.write``)."""
    from tqdm import tqdm

    tqdm.write(message, file=file)
