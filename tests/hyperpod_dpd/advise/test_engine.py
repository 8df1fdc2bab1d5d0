"""The simulator's process (hyperpod_dpd/advise/engine.py, simulate.py --serve): one for a whole
command, answering each request in order, and gone when the command ends, on an error or an
interrupt too (it would otherwise simulate on for tens of seconds after Ctrl-C)."""

from __future__ import annotations

import json

import pytest

from hyperpod_dpd.advise import engine
from hyperpod_dpd.advise.search import Layout, prediction_config
from hyperpod_dpd.advise.targets import target

pytestmark = pytest.mark.long


@pytest.fixture(autouse=True)
def _the_real_simulator(monkeypatch):
    """The process is what these tests judge: not the suite's cache of its answers."""
    monkeypatch.setattr(engine, "Session", getattr(engine.Session, "REAL", engine.Session))


def _config(concurrency: int) -> dict:
    t = target("ml.p5.48xlarge", "llama-3.1-8b")
    traffic = {"source": {"type": "synthetic", "input_tokens": 256, "output_tokens": 16},
               "load": {"type": "concurrency", "concurrency": concurrency},
               "stop": {"requests": 16}}  # fmt: skip
    return {"id": str(concurrency), "label": f"at {concurrency}",
            "config": prediction_config(t, Layout("colocated", 1, 1), traffic)}  # fmt: skip


def test_one_process_answers_each_request_in_order_then_ends():
    with engine.Session() as simulator:
        first = simulator.simulate([_config(1), _config(2)])
        second = simulator.simulate([_config(4)])
        process = simulator.proc
    assert [r["id"] for r in first["results"]] == ["1", "2"]
    assert [r["id"] for r in second["results"]] == ["4"]
    assert "summary" in second["results"][0] and first["engine"]["name"] == "aisimulate"
    assert process.poll() == 0  # it ended with the requests


def test_an_interrupt_ends_the_simulator_at_once():
    """Ctrl-C while it simulates 39 configs (several seconds): gone when the block is left."""
    request = json.dumps({"configs": [_config(c) for c in range(1, 40)]})
    with pytest.raises(KeyboardInterrupt), engine.Session() as simulator:
        simulator.proc.stdin.write(request + "\n")
        simulator.proc.stdin.flush()
        raise KeyboardInterrupt
    assert simulator.proc.poll() is not None  # terminated mid-request, not left simulating


def test_an_interrupt_while_it_starts_ends_the_simulator_too(monkeypatch):
    """Ctrl-C after the simulator started, before the block that stops it has begun (Session
    still setting up): the process is stopped all the same."""
    started = []
    real_start = engine.children.start

    def start(*args, **kwargs):
        started.append(real_start(*args, **kwargs))
        return started[-1]

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine.children, "start", start)
    monkeypatch.setattr(engine, "Progress", interrupted)
    with pytest.raises(KeyboardInterrupt), engine.Session():
        pass
    (proc,) = started
    assert proc.poll() is not None
