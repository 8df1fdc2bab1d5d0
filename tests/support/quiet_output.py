"""The suite's output stays readable: a test whose captured output (stdout, stderr, log records)
holds noise a fake server or the async runtime printed fails, naming the line, instead of the
noise piling up in every failure report and in the log of a run (56 tracebacks of
"Future exception was never retrieved" and 805 access lines in one run once).

What counts as noise: a server's access log line, a socketserver traceback for a request, an
asyncio future or task whose failure nobody read. Each is fixed where it is printed: a fake
server's handler without a log (tests/support/quiet_http.py, log_message, tests/checkpoint/s3server.py),
the failure handed to its caller marked as read (hyperpod_dpd/plan/engine.py).
"""

from __future__ import annotations

import re

import pytest

NOISE = {
    "an access log line of a server": re.compile(
        r'"(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ HTTP/\d(?:\.\d)?" \d{3}\b'
    ),
    "a traceback socketserver printed for a request": re.compile(
        r"Exception occurred during processing of request from"
    ),
    "an asyncio failure nobody read": re.compile(r"(?:Future|Task) exception was never retrieved"),
}


def noise_in(sections: list[tuple[str, str]]) -> list[str]:
    """Each noisy line of the captured `sections` ((title, text) as pytest reports them), with
    what it is and where it was captured."""
    found = []
    for title, text in sections:
        for what, pattern in NOISE.items():
            match = pattern.search(text)
            if match:
                start = text.rfind("\n", 0, match.start()) + 1
                end = text.find("\n", match.end())
                line = text[start : end if end >= 0 else len(text)]
                found.append(f"{what} ({title}): {line[:200]}")
    return found


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.passed:  # the sections of this phase (the report carries the earlier ones too)
        noisy = noise_in([(t, text) for t, text in report.sections if t.endswith(report.when)])
        if noisy:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} passed but printed noise (tests/support/quiet_output.py):\n  "
                + "\n  ".join(noisy)
                + "\nSilence it where it is printed (a fake server's log_message or handle_error, "
                "a future's failure read), not by capturing it."
            )
    return report
