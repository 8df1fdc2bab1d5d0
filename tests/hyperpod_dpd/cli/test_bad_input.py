"""Command lines as users get them wrong: exit 2 with the flag named, never 3 (a bug)."""

from __future__ import annotations

import pytest

from hyperpod_dpd.cli import main

SHA = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"


def _run(argv, capsys, monkeypatch):
    # No credentials anywhere: a check that needs none must come first.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    try:
        code = main(argv)
    except SystemExit as exited:  # argparse refused a flag's value (its types: core/cli_inputs.py)
        code = exited.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


CASES = {
    "an unwritable --out": (["plan", "--stack", "dev", "--out", "/proc/nope/plan"], "--out"),
    "a kubeconfig that is not YAML": (["verify", "--name", "x", "--kubeconfig", "{kc}"], "kubeconfig"),
    "an --endpoint-url that is not a URL": (
        ["checkpoint", "upload", "--source", "{src}", "--dest", "s3://bucket-a/p",
         "--endpoint-url", "notaurl"],
        "argument --endpoint-url: got 'notaurl'",
    ),
    "a --curl-image digest one hex digit short": (
        ["verify", "--name", "x", "--curl-image", "curlimages/curl:8.11.1@sha256:" + "a" * 63],
        "argument --curl-image: got 'curlimages/curl:8.11.1@sha256:",
    ),
    "a bad revision, before any credentials": (
        ["checkpoint", "upload", "--source", "hf://org/model", "--revision", "main",
         "--dest", "s3://bucket-a/p", "--endpoint-url", "http://127.0.0.1:9"],
        "--revision must be a full 40-hex commit SHA",
    ),
    "a missing local source, before any credentials": (
        ["checkpoint", "upload", "--source", "/nonexistent/ckpt", "--dest", "s3://bucket-a/p",
         "--endpoint-url", "http://127.0.0.1:9"],
        "--source /nonexistent/ckpt: no such directory",
    ),
    "a malformed hf:// source, before any credentials": (
        ["checkpoint", "upload", "--source", "hf://org/model/extra", "--revision", SHA,
         "--dest", "s3://bucket-a/p", "--endpoint-url", "http://127.0.0.1:9"],
        "hf://ORG/NAME",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_exits_2_naming_it(case, tmp_path, capsys, monkeypatch):
    argv, needle = CASES[case]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("a: [unclosed\n")
    source = tmp_path / "ckpt"
    source.mkdir()
    argv = [a.format(kc=kubeconfig, src=source) for a in argv]
    code, output = _run(argv, capsys, monkeypatch)
    assert code == 2, output
    assert needle in output, output
    assert "internal error" not in output and "Traceback" not in output
