"""What the end-to-end tests of `hyperpod-dpd verify` share: the `fake` cluster (FakeKube
serving the recorded healthy deployment, for a test to break), the `verify` fixture that
runs the command against it through a kubeconfig and returns its exit code and output
(`Result`), the command's parser (`parse`), every check in the documented order
(`ALL_CHECKS`) and `failed_only` (the run failed on exactly one check)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from hyperpod_dpd.cli.verify import register, run
from hyperpod_dpd.verify.results import FAIL
from tests.hyperpod_dpd.verify.fake_kube import NAME, NAMESPACE, FakeKube

ROOT = Path(__file__).resolve().parents[3]
ALL_CHECKS = [
    "endpoint ready",
    "endpoint is DPD",
    "prefill pods",
    "decode pods",
    "router pod",
    "router service",
    "rendered worker env",
    "decoders newer than prefillers",
    "workers guarded",
    "prefill role 'sender'",
    "decode role 'receiver'",
    "short prompt answered",
    "long prompt answered",
    "short prompt -> decoder only",
    "long prompt -> prefill + decode",
    "KV cache received",
    "KV transfer throughput",
    "decoder PD buffer",
]

# The checks that need the prompts: skipped when none are sent.
PROMPT_CHECKS = ALL_CHECKS[ALL_CHECKS.index("short prompt answered") :]


@pytest.fixture
def fake():
    kube = FakeKube()
    with kube.serving():
        yield kube


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hyperpod-dpd")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["verify", *argv])


class Result:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    @property
    def json(self) -> dict:
        return json.loads(self.out)

    def check(self, name: str) -> dict:
        return next(c for c in self.json["checks"] if c["name"] == name)

    def results(self) -> dict[str, str]:
        return {c["name"]: c["result"] for c in self.json["checks"]}


@pytest.fixture
def verify(fake, tmp_path, capsys):
    kubeconfig = fake.kubeconfig(tmp_path)

    def _run(
        *extra: str,
        fmt: str = "json",
        target: tuple[str, ...] | None = None,
        project: Path = ROOT,
    ) -> Result:
        where = target if target is not None else ("--name", NAME, "--namespace", NAMESPACE)
        argv = [
            "--kubeconfig",
            str(kubeconfig),
            *where,
            "--poll-interval",
            "0.01",
            "--timeout",
            "10",
            "--api-timeout",
            "5",
            "--format",
            fmt,
            *extra,
        ]
        code = run(parse(argv), project)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


def failed_only(result: Result, name: str) -> dict:
    """The run failed on exactly this check."""
    assert result.code == 1
    failed = [c["name"] for c in result.json["checks"] if c["result"] == FAIL]
    assert failed == [name]
    return result.check(name)
