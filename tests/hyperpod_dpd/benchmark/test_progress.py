"""What a user follows of aiperf's console (lines as aiperf 0.13.0 prints them, paths shortened)."""

from __future__ import annotations

from hyperpod_dpd.benchmark.loadgen import Progress

TABLE_ROW = "│  Effective Prefill Concurrency (requests) │     0.42 │  0.00 │     1.00 │     1.00 │"
CACHE = (
    "03:44:50.082 WARNING  Token usage is reported but no prompt-cache read tokens were seen "
    "(usage.prompt_tokens_details.cached_tokens absent). (usage.py:88)"
)


def _level(c: int, elapsed: str) -> list[str]:
    return [
        f"03:44:46.942 INFO     Record metrics export enabled: /o/aiperf/concurrency_{c}/"
        "profile_export.jsonl (record_export_jsonl_writer.py:62)",
        "03:44:49.993 NOTICE   Phase profiling (profiling) started | phase_index=0 | "
        "profiling_index=0 | target: 3 requests (runner.py:660)",
        CACHE,
        CACHE,
        "03:44:50.206 NOTICE   Phase profiling (profiling) complete | completed=3, cancelled=0, "
        f"errors=1 | sessions: completed=3, cancelled=0 | elapsed={elapsed}s (runner.py:1226)",
        "03:44:50.208 INFO     Received CREDIT_PHASE_COMPLETE message, Phase complete: "
        "PhaseRecordsStats(phase=CreditPhase.PROFILING, final_request_errors=1)",
        TABLE_ROW,
    ]


def _shown(progress: Progress, lines: list[str]) -> list[str]:
    return [s for s in map(progress.line, lines) if s]


def test_a_sweep_shows_each_level_once_with_its_counts_and_each_warning_once():
    summary = [f"JSON Export: /o/aiperf/concurrency_{c}/profile_export_aiperf.json" for c in (1, 2)]
    lines = _level(1, "0.21") + _level(2, "0.14") + summary
    assert _shown(Progress([1, 2]), lines) == [
        "concurrency 1: started",
        "warning: Token usage is reported but no prompt-cache read tokens were seen "
        "(usage.prompt_tokens_details.cached_tokens absent).",
        "concurrency 1: 3 requests in 0.21 s, 1 errors, 0 cancelled",
        "concurrency 2: started",
        "concurrency 2: 3 requests in 0.14 s, 1 errors, 0 cancelled",
    ]


def test_a_single_level_is_named_by_the_run_not_by_a_directory():
    lines = [line.replace("/concurrency_8/", "/") for line in _level(8, "3.0")]
    shown = _shown(Progress([8]), lines)
    assert shown[0] == "concurrency 8: started"
    assert shown[-1] == "concurrency 8: 3 requests in 3 s, 1 errors, 0 cancelled"
