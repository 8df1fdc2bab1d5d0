"""Every flag of every command, given hostile values, ends in exit 0, 1 or 2 and no traceback.

The test walks the argparse tree itself, so a flag added later is covered without editing it.
Each command gets the fewest other arguments that let it run and fail fast past its flags
(no AWS profile, no kubeconfig, no network): what is judged is that nothing a user can type
reaches an internal error (exit 3) or a Python traceback.
"""

from __future__ import annotations

import argparse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperpod_dpd.cli
from hyperpod_dpd.cli import main, parser
from tests.conftest import ROOT

# Commands that hand the process to another program (os.execve): not run in-process.
NOT_RUN = {("benchmark", "fake-server")}


def _walk(p: argparse.ArgumentParser, path: tuple[str, ...]):
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))
        elif action.dest != "help" and action.nargs != 0 and path not in NOT_RUN:
            yield path, action


FLAGS = sorted(
    ((path, action) for path, action in _walk(parser(), ())),
    key=lambda item: (item[0], item[1].dest),
)


def _base(path: tuple[str, ...], tmp) -> list[str]:
    """Other arguments of the command: valid, and such that it stops soon after its flags."""
    ckpt = tmp / "ckpt"
    ckpt.mkdir(exist_ok=True)
    return {
        ("plan",): ["--stack", "dev", "--project-dir", str(ROOT), "--out", str(tmp / "plan")],
        ("preflight",): ["--stack", "dev", "--project-dir", str(ROOT)],
        ("policy-config",): ["--stack", "dev", "--project-dir", str(ROOT)],
        ("policy-pack",): ["--no-venv", "--out", str(tmp / "pack")],
        ("checkpoint", "upload"): ["--source", str(ckpt), "--dest", "s3://bucket-a/p"],
        ("checkpoint", "verify"): ["--dest", "s3://bucket-a/p"],
        ("diff",): [str(tmp / "a"), str(tmp / "b")],
        ("verify",): ["--name", "x"],
        ("benchmark", "run"): ["--out", str(tmp / "run")],
        ("benchmark", "compare"): [str(tmp / "a"), str(tmp / "b"), "--out", str(tmp / "r")],
        ("pulumi-yaml",): ["--check"],
        ("demo",): ["--dry-run", "--out", str(tmp / "demo")],  # the demo runs for minutes
    }.get(path, [])


def _argv(path, action, value, tmp) -> list[str]:
    base = _base(path, tmp)
    if not action.option_strings:  # a positional: the hostile value in its place
        positional = [a for a in base if not a.startswith("--")][:1]
        rest = [a for a in base if a not in positional]
        return [*path, value, *rest] if action.nargs != "+" else [*path, value, value, *rest]
    flag = action.option_strings[-1]
    base = [a for i, a in enumerate(base) if a != flag and (i == 0 or base[i - 1] != flag)]
    return [*path, *base, flag, value]


def _hostile(tmp) -> list[str]:
    binary = tmp / "binary"
    binary.write_bytes(bytes(range(256)) * 4)
    a_dir = tmp / "a-dir"
    a_dir.mkdir(exist_ok=True)
    return [
        str(tmp / "nonexistent" / "x"), str(a_dir), str(binary), "/proc", "/proc/self/status", "",
        "not-a-url", "http://[::1", "nan", "inf", "-inf", "-1", "-0.5", "0", "x" * 5000,
        "\udcff\udcfe-not-utf8", "../../etc/passwd", "nul\x00byte",
    ]  # fmt: skip


@pytest.fixture(autouse=True, scope="module")
def _one_command_line():
    """The command line built once for this module's 1,330 runs of main, as each process of the
    console script builds it once: building it was half their CPU (3.7 ms a build). Parsing
    leaves a parser as it was, and nothing here changes what building it reads."""
    built = parser()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hyperpod_dpd.cli, "parser", lambda: built)
        yield


@pytest.mark.long
@pytest.mark.parametrize(
    ("path", "action"), FLAGS, ids=[f"{' '.join(p)} {a.dest}" for p, a in FLAGS]
)
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_hostile_value_never_reaches_a_traceback(
    path, action, data, tmp_path_factory, capsys, monkeypatch
):
    tmp = tmp_path_factory.mktemp("hostile")
    # Files no command writes, the same for every example: the providers' SDKs read these
    # variables, so a plan's program run is reused only under the same ones (tests/conftest.py
    # provider_environment), and a path of each example's own made every example run it again.
    nowhere = tmp_path_factory.getbasetemp() / "nowhere"
    if path[0] in ("preflight", "checkpoint"):  # they ask AWS: no profile, no network
        monkeypatch.setenv("AWS_PROFILE", "hyperpod-dpd-no-such-profile")
        monkeypatch.setenv("AWS_CONFIG_FILE", str(nowhere / "no-aws-config"))
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(nowhere / "no-aws-credentials"))
    monkeypatch.setenv("KUBECONFIG", str(nowhere / "no-kubeconfig"))
    # Every path a command may write lands in this example's own directory: relative ones
    # (`../../etc/passwd` included) resolve below it, and drawn text never starts with "/". As
    # root (CI), a shared path such as /nonexistent/x would be made, then raced for by the other
    # workers, and the next example would find it there.
    cwd = tmp / "cwd" / "deeper"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    drawn = st.text(max_size=40).filter(lambda text: not text.startswith("/"))
    value = data.draw(st.sampled_from(_hostile(tmp)) | drawn, label="value")
    argv = _argv(path, action, value, tmp)
    try:
        code = main(argv)
    except SystemExit as exited:  # argparse's own refusal (exit 2) or --help (0)
        code = exited.code
    captured = capsys.readouterr()
    output = captured.out + captured.err
    shown = [a if len(a) < 60 else a[:30] + f"...({len(a)} chars)" for a in argv]
    assert code in (0, 1, 2), f"{shown} -> exit {code}: {output[-400:]}"
    assert "Traceback" not in output and "internal error" not in output, output[-400:]
