"""`hyperpod-dpd verify` on bad input, exit 2 with the reason (in text or JSON): an endpoint
not found, an unknown stack, no endpoint given, no kubeconfig, an API server that does
not answer or refuses the credentials; and the default kubeconfig found through
$KUBECONFIG."""

from __future__ import annotations

import socket

import pytest

from hyperpod_dpd.cli.verify import run
from tests.hyperpod_dpd.verify.conftest import ROOT, parse
from tests.hyperpod_dpd.verify.fake_kube import NAME, NAMESPACE


def test_endpoint_not_found(fake, verify):
    result = verify(fmt="text", target=("--name", "nope", "--namespace", NAMESPACE))
    assert result.code == 2
    assert "InferenceEndpointConfig nope not found in namespace inference" in result.err


def test_endpoint_not_found_json(fake, verify):
    result = verify(target=("--name", "nope"))
    assert result.code == 2
    assert result.json["exitCode"] == 2
    assert "not found in namespace default" in result.json["error"]


def test_unknown_stack(fake, verify):
    result = verify(fmt="text", target=("--stack", "staging"))
    assert result.code == 2
    assert "Pulumi.staging.yaml" in result.err


def test_no_endpoint_given(fake, verify):
    result = verify(fmt="text", target=())
    assert result.code == 2
    assert "--stack STACK, or --name NAME" in result.err


def test_no_kubeconfig(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert run(parse(["--name", NAME]), ROOT) == 2
    assert f"$KUBECONFIG ({tmp_path / 'missing'}) does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content", [bytes(range(256)), b"just: some yaml\n", b"[1, 2"], ids=["binary", "yaml", "broken"]
)
def test_a_kubeconfig_flag_naming_no_kubeconfig_is_refused_naming_the_flag(
    tmp_path, monkeypatch, capsys, content
):
    """The file --kubeconfig names is judged as the flag's value; one $KUBECONFIG finds is not."""
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    assert run(parse(["--kubeconfig", str(path), "--name", NAME]), ROOT) == 2
    assert f"--kubeconfig {path}" in capsys.readouterr().err
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert run(parse(["--name", NAME]), ROOT) == 2
    err = capsys.readouterr().err
    assert f"kubeconfig {path}" in err and "--kubeconfig {path}" not in err


def test_default_kubeconfig_is_found_through_KUBECONFIG(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{fake.kubeconfig(tmp_path)}")
    code = run(parse(["--name", NAME, "--namespace", NAMESPACE, "--no-prompts"]), ROOT)
    assert code == 0, capsys.readouterr().out


def test_unreachable_api_server(tmp_path, capsys):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    argv = ["--kubeconfig", str(kubeconfig), "--name", NAME, "--api-timeout", "2"]
    assert run(parse(argv), ROOT) == 2
    assert f"no answer from http://127.0.0.1:{port}" in capsys.readouterr().err


def test_wrong_credentials(fake, tmp_path, capsys):
    kubeconfig = fake.kubeconfig(tmp_path)
    kubeconfig.write_text(kubeconfig.read_text().replace("fake-token-for-tests", "stale"))
    assert run(parse(["--kubeconfig", str(kubeconfig), "--name", NAME]), ROOT) == 2
    assert "cannot read the endpoint: get inferenceendpointconfig: HTTP 401" in (
        capsys.readouterr().err
    )
