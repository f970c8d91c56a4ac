"""What ``progress=`` means in the public API: progress of long Rust calls, and a tqdm bar.

The long calls of the core (reading and tokenizing a corpus, counting, estimation, ARPA and
binary reading and writing, scoring) report a *stage* (``"counting n-grams"``, ``"estimating"``,
``"writing ARPA"``...) and the units of that stage done of a total (0 when unknown). The
calling thread polls them every 20 ms, so a callback costs nothing per token. ``progress=``
takes:

- ``False`` (default): nothing is reported;
- ``True``: a :mod:`tqdm` bar on stderr, one per stage;
- a callable ``progress(stage: str, done: int, total: int)``, called at each poll and once at the
  end of the call (from the calling thread, holding the GIL). An exception it raises stops the
  call and is raised by it, as Ctrl-C is; raised by that last call, once the work is done, it
  still is raised, but an output file the call wrote is already in place, whole.

The same polling makes every long call interruptible: Ctrl-C raises :class:`KeyboardInterrupt`
within a fraction of a second, and an output that was being written is left as it was.

>>> seen = []
>>> with reporter(lambda stage, done, total: seen.append(stage)) as report:
...     report("counting n-grams", 1, 2)
>>> seen
['counting n-grams']
>>> with reporter(False) as report:
...     report is None
True
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import IO, TypeAlias

from fastppl.errors import InvalidTypeError

#: A progress callback: ``callback(stage, done, total)``.
ProgressCallback: TypeAlias = Callable[[str, int, int], object]
#: What ``progress=`` accepts.
Progress: TypeAlias = bool | ProgressCallback


class ProgressBar:
    """A :mod:`tqdm` bar per stage of a long call, on ``file`` (stderr by default).

    Args:
        label: a prefix for the stage names (e.g. the step of a command line).
        file: where to draw the bars.
    """

    def __init__(self, label: str = "", file: IO[str] | None = None) -> None:
        self._label = label
        self._file = file if file is not None else sys.stderr
        self._stage: str | None = None
        self._bar = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        from tqdm import tqdm

        if stage != self._stage:
            self.close()
            self._stage = stage
            desc = f"{self._label}: {stage}" if self._label else stage
            self._bar = tqdm(
                total=total or None,
                desc=desc,
                file=self._file,
                unit_scale=True,
                leave=False,
                dynamic_ncols=True,
            )
        bar = self._bar
        assert bar is not None
        if total and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    def close(self) -> None:
        """Closes the current bar (if any)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self._stage = None


@contextlib.contextmanager
def reporter(progress: Progress | None) -> Iterator[ProgressCallback | None]:
    """The callback the core gets for ``progress`` (None for no progress), closed afterwards.

    Raises:
        InvalidTypeError: ``progress`` is neither a bool nor a callable.
    """
    if progress is None or progress is False:
        yield None
    elif progress is True:
        bar = ProgressBar()
        try:
            yield bar
        finally:
            bar.close()
    elif callable(progress):
        yield progress
    else:
        raise InvalidTypeError(
            f"progress must be True, False or a callable (stage, done, total), got {progress!r}"
        )
