"""The warnings a job's thread logs (a file cut short, several audio streams, samples that are not
numbers), handed to the job so its client reads what the CLI would print.

`notices(on_notice)` is a context: while it is open, every WARNING or worse that any `engine`
logger emits *in the calling thread* is passed to `on_notice(message)` (other jobs' threads are
not heard). The records still reach the server's own log.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class _ThreadNotices(logging.Handler):
    def __init__(self, on_notice: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.thread, self.on_notice = threading.get_ident(), on_notice

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.on_notice(record.getMessage())


@contextmanager
def notices(on_notice: Callable[[str], None]) -> Iterator[None]:
    handler = _ThreadNotices(on_notice)
    logger = logging.getLogger("engine")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
