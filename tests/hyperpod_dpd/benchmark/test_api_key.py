"""`benchmark run` against an endpoint that wants the traffic split's API key: aiperf sends it
(`Authorization: Bearer <key>`, from HYPERPOD_DPD_API_KEY), never on a command line nor in a file
it writes; without it the run stops at once saying which variable to set, and how."""

from __future__ import annotations

import pytest

from core import api_key
from hyperpod_dpd.benchmark.loadgen import KEYED_START, LoadRun, command
from hyperpod_dpd.benchmark.scenario import Scenario, StopRule
from hyperpod_dpd.cli import main
from tests.hyperpod_dpd.benchmark.conftest import results_of

KEY = "k3y" + "0123456789abcdefghijklmnopqrstuvwxyz0123456789"[:45]


def _load(tmp_path, key):
    return LoadRun("http://x", tmp_path, "m", Scenario(8, 2), [1], StopRule(requests=1),
                   tmp_path / "a", key)  # fmt: skip


def test_the_key_goes_to_aiperf_through_its_environment_not_its_command_line(tmp_path):
    argv, env = command(_load(tmp_path, KEY), tmp_path / "venv")
    assert argv[:3] == [str(tmp_path / "venv" / "bin" / "python"), "-c", KEYED_START]
    assert argv[3] == "profile" and KEY not in " ".join(argv)
    assert env[api_key.ENV] == KEY
    assert KEY not in repr(_load(tmp_path, KEY))
    # Without a key: aiperf's own script, and no key inherited from the caller's environment.
    argv, env = command(_load(tmp_path, None), tmp_path / "venv")
    assert argv[0].endswith("/bin/aiperf") and api_key.ENV not in env


@pytest.mark.xdist_group("aiperf")  # it starts aiperf: not beside a measuring test
def test_a_run_with_the_key_is_served_and_writes_it_nowhere(
    fake_server, tokenizer, tmp_path, monkeypatch
):
    server = fake_server(key=KEY)
    monkeypatch.setenv(api_key.ENV, KEY)
    out = tmp_path / "keyed"
    code = main(["benchmark", "run", "--target", server.url, "--tokenizer", str(tokenizer),
                 "--scenario", "D(32,4)", "--concurrency", "1", "--requests", "3",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    level = results_of(out)["levels"]["1"]
    assert level["errors"] == 0 and level["requests"] == 3
    leaked = [p for p in out.rglob("*") if p.is_file() and KEY in p.read_text(errors="replace")]
    assert leaked == []


def test_without_the_key_the_run_stops_saying_how_to_get_it(
    fake_server, tokenizer, tmp_path, monkeypatch, capsys
):
    server = fake_server(key=KEY)
    monkeypatch.delenv(api_key.ENV, raising=False)
    code = main(["benchmark", "run", "--target", server.url, "--tokenizer", str(tokenizer),
                 "--scenario", "D(32,4)", "--requests", "1", "--out", str(tmp_path / "o")])  # fmt: skip
    err = capsys.readouterr()
    said = err.out + err.err
    assert code != 0 and f"answered 401: it wants an API key: none set in {api_key.ENV}" in said
    assert f"export {api_key.ENV}=$(pulumi stack output trafficApiKey --show-secrets" in said
