"""One real simulator (engine.Session) for every `advise` a test process runs in process, where
each command would otherwise start its own: started at the first config the answer cache
(tests/support/simulator_cache.py) does not hold, ended with the suite (tests/conftest.py).

A start (importing aisimulate, then loading each GPU's kernel tables at its first config) costs
about 1.7 s of CPU, more than a dozen answers; on a cold cache each command that missed paid it
again. Sharing it changes no answer: a config's answer depends on the config alone, which the
cache already relies on when one command's answers come from others'. The tests that judge the
process itself (its progress, its end, an interrupt) run a Session of their own or a subprocess
(tests/hyperpod_dpd/advise/test_engine.py, test_interrupt.py).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any


class SharedSimulator:
    def __init__(self, real: type) -> None:
        self.real = real
        self.starts = 0
        self._session: Any = None
        self._held: contextlib.ExitStack | None = None

    def simulate(self, configs: list[dict[str, Any]]) -> dict[str, Any]:
        if self._session is None:
            held = contextlib.ExitStack()
            # Its progress lines to this process's stderr: a test's captured one ends with the
            # test, and the simulator outlives it.
            with contextlib.redirect_stderr(sys.__stderr__ or sys.stderr):
                self._session = held.enter_context(self.real())
            self._held = held
            self.starts += 1
        try:
            return self._session.simulate(configs)
        except BaseException:
            # Failed or interrupted mid-request: its answer may still be on the way, so the
            # next request would read it. This one ends; the next config starts another.
            self.close(*sys.exc_info())
            raise

    def close(self, *exc: Any) -> None:
        """End the simulator (as its Session ends: on an error or interrupt `exc`, at once)."""
        held, self._session, self._held = self._held, None, None
        if held is not None:
            held.__exit__(*(exc or (None, None, None)))
