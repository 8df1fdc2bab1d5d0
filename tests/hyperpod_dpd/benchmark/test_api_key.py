"""`benchmark run` against an endpoint that wants the traffic split's API key: aiperf sends it
(`Authorization: Bearer <key>`, from HYPERPOD_DPD_API_KEY), never on a command line nor in a file
it writes; without it the run stops at once saying which variable to set, and how.

A real run with the key, served and writing it nowhere, is the in-cluster Job's
(test_job_run.py): the pod takes the key from the stack's Secret into the same variable, and
runs the same code (run.execute) a laptop does."""

from __future__ import annotations

from core import api_key
from hyperpod_dpd.benchmark.loadgen import PRELOAD, START, LoadRun, command
from hyperpod_dpd.benchmark.scenario import Scenario, StopRule
from hyperpod_dpd.cli import main

KEY = "k3y" + "0123456789abcdefghijklmnopqrstuvwxyz0123456789"[:45]


def _load(tmp_path, key):
    return LoadRun("http://x", tmp_path, "m", Scenario(8, 2), [1], StopRule(requests=1),
                   tmp_path / "a", key)  # fmt: skip


def test_the_key_goes_to_aiperf_through_its_environment_not_its_command_line(tmp_path):
    argv, env = command(_load(tmp_path, KEY), tmp_path / "venv")
    assert argv[:2] == [str(tmp_path / "venv" / "bin" / "python"), "-c"]
    assert argv[2].endswith(START) and argv[3] == "profile" and KEY not in " ".join(argv)
    assert env[api_key.ENV] == KEY
    assert KEY not in repr(_load(tmp_path, KEY))
    # Without a key: no key inherited from the caller's environment.
    argv, env = command(_load(tmp_path, None), tmp_path / "venv")
    assert argv[2].endswith(START) and api_key.ENV not in env


def test_the_tokenizer_code_is_imported_first_for_one_level_only(tmp_path):
    """One level runs in aiperf's own process, whose forked services share what it imported;
    a sweep runs each level in an interpreter of its own, where the import would be wasted."""
    one, _ = command(_load(tmp_path, None), tmp_path / "venv")
    sweep = LoadRun("http://x", tmp_path, "m", Scenario(8, 2), [1, 2], StopRule(requests=1),
                    tmp_path / "a")  # fmt: skip
    swept, _ = command(sweep, tmp_path / "venv")
    assert one[2] == PRELOAD + START and swept[2] == START


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
