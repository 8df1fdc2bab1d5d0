"""The fake server's flags as `hyperpod-dpd benchmark fake-server` hands them on."""

from __future__ import annotations

import argparse

from hyperpod_dpd.benchmark.fake_timings import Timings, add_arguments, argv_of


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_the_flags_given_reach_the_server_unchanged():
    args = _parse(["--port", "8101", "--interference", "3", "--transfer-ms", "30"])
    again = _parse(argv_of(args))
    assert vars(again) == vars(args)
    assert again.port == 8101 and again.interference == 3.0 and again.transfer_ms == 30.0
    assert again.tpot_ms == Timings.tpot_ms  # unset flags keep the documented defaults


def test_time_to_first_token_grows_with_the_prompt_and_the_transfer():
    t = Timings(first_token_ms=50, prefill_ms_per_token=0.2, transfer_ms=30)
    assert t.ttft_ms(1024) == 50 + 0.2 * 1024 + 30
    assert t.ttft_ms(2048) - t.ttft_ms(1024) == 0.2 * 1024
