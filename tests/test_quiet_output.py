"""The check that keeps the suite's output quiet (tests/support/quiet_output.py) knows the noise it was
written against, as printed, and lets ordinary output through."""

from __future__ import annotations

import pytest

from tests.support.quiet_output import noise_in


@pytest.mark.parametrize(
    ("title", "text"),
    [
        # werkzeug (moto's server), as its handler prints it and as pytest's log capture shows it
        ("Captured stderr call",
         '127.0.0.1 - - [07/Dec/2026 04:58:03] "PUT /ckpt-3/soak/01/config.json HTTP/1.1" 200 -'),
        ("Captured log call",
         'INFO     werkzeug:_internal.py:97 127.0.0.1 - - [07/Dec/2026 04:58:03] "GET /ckpt-3?'
         'uploads&prefix=soak%2F01%2F HTTP/1.1" 200 -'),
        # http.server's default log_message
        ("Captured stderr setup", '127.0.0.1 - - [07/Dec/2026 04:58:03] "GET /metrics HTTP/1.0" 200 -'),
        ("Captured stderr teardown",
         "----------------------------------------\nException occurred during processing of "
         "request from ('127.0.0.1', 43744)\nTraceback (most recent call last):"),
        ("Captured log call",
         "ERROR    asyncio:base_events.py:1785 Future exception was never retrieved\nfuture: "
         "<Future finished exception=DuplicateUrnError('Duplicate resource URN')>"),
        ("Captured stderr call", "Task exception was never retrieved\nfuture: <Task finished>"),
    ],
)  # fmt: skip
def test_the_noise_of_servers_and_unread_futures_is_found(title, text):
    [found] = noise_in([("Captured stdout call", "plan: 312 resources\n"), (title, text)])
    assert f"({title}):" in found


def test_ordinary_output_is_not_noise():
    text = (
        "plan: GET requests to /v1/models answered HTTP/1.1 200 in the verify pod's script\n"
        "curl -sf http://127.0.0.1:8000/health\n"
        "advise: simulating: 14/14 (100%) 1P1D TP8/TP8 at rps 5: 0.47 s\n"
        "Traceback (most recent call last): a test of the CLI's own error output\n"
    )
    assert noise_in([("Captured stdout call", text), ("Captured stderr call", text)]) == []
