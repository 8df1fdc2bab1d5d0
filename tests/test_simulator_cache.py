"""The suite's cache of aisimulate's answers (tests/support/simulator_cache.py): an answer is reused only
for the same input to the same simulator, and the caller gets its own ids back."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.simulator_cache import cached, cached_session


class Simulator:
    """A stand-in for engine.simulate that counts what it is asked (the real one is run by the
    advise tests, through the cache)."""

    def __init__(self):
        self.asked: list[list[str]] = []

    def __call__(self, configs, venv=None):
        self.asked.append([c["label"] for c in configs])
        results = [
            {"id": c["id"], "summary": {"median_tpot_ms": c["config"]["tp"] * 1.5}}
            if c["config"]["tp"] < 16
            else {"id": c["id"], "error": "no KV budget"}
            for c in configs
        ]
        return {"engine": {"name": "aisimulate", "version": "0.13.0"}, "results": results}


def _configs(*tps: int, prefix: str = "") -> list[dict]:
    return [{"id": f"{prefix}{i}@0", "label": f"TP{tp}", "config": {"tp": tp}}
            for i, tp in enumerate(tps)]  # fmt: skip


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A simulator program and an advise lock of the test's own, as the cache's keys read them."""
    program, lock = tmp_path / "simulate.py", tmp_path / "requirements-advise.txt"
    program.write_text("print('v1')\n")
    lock.write_text("aisimulate==0.13.0 --hash=sha256:00\n")
    monkeypatch.setattr("hyperpod_dpd.advise.engine.PROGRAM", program)
    monkeypatch.setattr("hyperpod_dpd.advise.engine.REQUIREMENTS", lock)
    return program, lock


@pytest.mark.usefixtures("inputs")
def test_only_configs_never_asked_for_reach_the_simulator(tmp_path):
    real = Simulator()
    simulate = cached(real, tmp_path / "cache")
    first = simulate(_configs(4, 8, 16))
    again = simulate(_configs(8, 2, 4, prefix="x"))
    assert real.asked == [["TP4", "TP8", "TP16"], ["TP2"]]
    assert [r["id"] for r in again["results"]] == ["x0@0", "x1@0", "x2@0"]  # its own ids
    assert again["results"][0]["summary"] == first["results"][1]["summary"]
    assert first["results"][2]["error"] == "no KV budget"  # a refusal is an answer too
    assert again["engine"] == first["engine"]
    simulate(_configs(16))
    assert len(real.asked) == 2  # the refusal was kept


def test_a_changed_simulator_or_lock_asks_again(inputs, tmp_path):
    program, lock = inputs
    real = Simulator()
    cached(real, tmp_path / "cache")(_configs(4))
    program.write_text("print('v2')\n")
    cached(real, tmp_path / "cache")(_configs(4))
    lock.write_text("aisimulate==0.13.1 --hash=sha256:01\n")
    cached(real, tmp_path / "cache")(_configs(4))
    assert real.asked == [["TP4"]] * 3


@pytest.mark.usefixtures("inputs")
def test_a_trace_is_known_by_its_content_not_its_path(tmp_path):
    real = Simulator()
    simulate = cached(real, tmp_path / "cache")

    def traced(name: str, text: str) -> list[dict]:
        (tmp_path / name).write_text(text)
        [config] = _configs(8)
        config["config"]["traffic"] = {"source": {"paths": [str(tmp_path / name)]}}
        config["label"] = name
        return [config]

    simulate(traced("a.jsonl", '{"input_length": 10}\n'))
    simulate(traced("b.jsonl", '{"input_length": 10}\n'))  # same requests, other file
    simulate(traced("c.jsonl", '{"input_length": 99}\n'))
    assert real.asked == [["a.jsonl"], ["c.jsonl"]]


@pytest.mark.usefixtures("inputs")
def test_a_venv_of_the_callers_is_not_answered_from_the_cache(tmp_path):
    real = Simulator()
    simulate = cached(real, tmp_path / "cache")
    simulate(_configs(4))
    simulate(_configs(4), tmp_path / "other-venv")
    assert real.asked == [["TP4"], ["TP4"]]


class Session:
    """A stand-in for engine.Session that counts the simulators started and what each is asked;
    a config {"tp": 0} fails the request, as a simulator that died would."""

    started: ClassVar[list[Session]] = []

    def __init__(self, venv=None):
        self.simulator = Simulator()
        self.venv = venv
        self.ended = None

    def __enter__(self):
        Session.started.append(self)
        return self

    def simulate(self, configs):
        if any(c["config"]["tp"] == 0 for c in configs):
            raise RuntimeError("the simulator exited 1")
        return self.simulator(configs)

    def __exit__(self, *exc):
        self.ended = exc[0] or "closed"


@pytest.fixture
def sessions(tmp_path, monkeypatch):
    """A CachedSession class over the stand-in, its shared simulator closed at the end."""
    monkeypatch.setattr(Session, "started", [])
    cached = cached_session(Session, tmp_path / "cache")
    yield cached
    cached.SHARED.close()


@pytest.mark.usefixtures("inputs")
def test_a_session_starts_a_simulator_only_for_a_config_never_asked_for(sessions):
    with sessions() as session:
        session.simulate(_configs(4, 8))
        session.simulate(_configs(8, 2))  # one simulator for the whole command
        assert session.engine == {"name": "aisimulate", "version": "0.13.0"}
    [first] = Session.started
    assert first.simulator.asked == [["TP4", "TP8"], ["TP2"]]
    with sessions() as session:
        again = session.simulate(_configs(2, 4, prefix="x"))
    assert len(Session.started) == 1  # all known: none started
    assert [r["id"] for r in again["results"]] == ["x0@0", "x1@0"]
    assert session.engine == {"name": "aisimulate", "version": "0.13.0"}


@pytest.mark.usefixtures("inputs")
def test_the_commands_share_one_simulator_until_the_suite_ends(sessions):
    """A cold cache paid a simulator's start (its import and kernel tables) once per command
    that missed: every command now asks the one the first miss started."""
    with sessions() as session:
        session.simulate(_configs(4))
    with sessions() as session:
        session.simulate(_configs(2))
    [shared] = Session.started
    assert shared.simulator.asked == [["TP4"], ["TP2"]] and shared.ended is None
    sessions.SHARED.close()
    assert shared.ended == "closed"  # its stdin closed: it exits after its last answer


@pytest.mark.usefixtures("inputs")
def test_a_failed_request_ends_the_shared_simulator_and_the_next_starts_another(sessions):
    """Its answer to a request that failed or was interrupted may still come: the next command
    must not read it as its own."""
    with pytest.raises(RuntimeError), sessions() as session:
        session.simulate(_configs(0))
    [failed] = Session.started
    assert failed.ended is RuntimeError
    with sessions() as session:
        answer = session.simulate(_configs(8))
    assert len(Session.started) == 2 and answer["results"][0]["summary"]


@pytest.mark.usefixtures("inputs")
def test_a_session_in_a_venv_of_its_own_has_a_simulator_of_its_own(sessions, tmp_path):
    venv = tmp_path / "other-venv"
    with sessions(venv) as session:
        session.simulate(_configs(4))
    [own] = Session.started
    assert own.venv == venv and own.ended == "closed"  # ended with its command
