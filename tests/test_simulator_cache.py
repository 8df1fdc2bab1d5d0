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
    """A stand-in for engine.Session that counts the simulators started and what each is asked."""

    started: ClassVar[list[Session]] = []

    def __init__(self, venv=None):
        self.simulator = Simulator()
        self.ended = False

    def __enter__(self):
        Session.started.append(self)
        return self

    def simulate(self, configs):
        return self.simulator(configs)

    def __exit__(self, *exc):
        self.ended = True


@pytest.mark.usefixtures("inputs")
def test_a_session_starts_a_simulator_only_for_a_config_never_asked_for(tmp_path, monkeypatch):
    monkeypatch.setattr(Session, "started", [])
    cached = cached_session(Session, tmp_path / "cache")
    with cached() as session:
        session.simulate(_configs(4, 8))
        session.simulate(_configs(8, 2))  # one simulator for the whole command
        assert session.engine == {"name": "aisimulate", "version": "0.13.0"}
    [first] = Session.started
    assert first.simulator.asked == [["TP4", "TP8"], ["TP2"]] and first.ended
    with cached() as session:
        again = session.simulate(_configs(2, 4, prefix="x"))
    assert len(Session.started) == 1  # all known: none started
    assert [r["id"] for r in again["results"]] == ["x0@0", "x1@0"]
    assert session.engine == {"name": "aisimulate", "version": "0.13.0"}
