"""aisimulate's answers kept by their inputs, for the suite: the advise tests simulate the same
layouts at the same loads again and again (each `advise` a grid of them), and aisimulate is
deterministic (the same config gives the same summary; its Poisson arrivals are seeded).

A config's answer (its summary, or the engine's refusal of that layout) is stored under
build/test-cache/aisimulate/ by the SHA-256 of what decides it: the config itself (a trace file
it names by its content, not its temporary path), the simulator program
(hyperpod_dpd/advise/simulate.py) and the locked advise venv (requirements-advise.txt's pins,
aisimulate's version among them). Change any of them and the answer is computed again. Only the
configs nobody has asked for yet go to the real simulator, in one call, as `advise` sends them;
the parallel workers take turns per config (tests/support/program_runs.py's `exclusive`), so a config is
simulated once per machine, not once per test and worker.

Installed for the tests that run `advise` in process (tests/conftest.py) as engine.Session (one
simulator for a whole command): a session whose every config is known starts no simulator at all
(its start, loading aisimulate and its tables, costs more CPU than most answers); the new configs
of every session go to one real simulator per test process, started at the first of them and
ended with the suite (tests/support/shared_simulator.py). A test that judges the simulator's
process itself (its progress, its failure, an interrupt) runs the command as a subprocess, which
this does not touch, or asks for the real Session (tests/hyperpod_dpd/advise/test_engine.py).
`rm -r build/test-cache` forgets every answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.support.program_runs import exclusive
from tests.support.shared_simulator import SharedSimulator
from tests.support.tool_cache import kept_each

CACHE = ROOT / "build" / "test-cache" / "aisimulate"
Simulate = Callable[..., dict[str, Any]]


def inputs_of_the_simulator(program: Path, requirements: Path) -> str:
    """What, beside a config, decides its answer: the program that runs it and the venv's pins."""
    from hyperpod_dpd.shared.venvs import requirement_set

    pins = sorted(requirement_set(requirements.read_text()))
    return json.dumps([program.read_text(), pins])


def _as_keyed(config: dict[str, Any]) -> dict[str, Any]:
    """`config` with each trace file it names replaced by the file's content hash."""
    source = config.get("traffic", {}).get("source", {})
    if not source.get("paths"):
        return config
    hashed = [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in source["paths"]]
    traffic = {**config["traffic"], "source": {**source, "paths": hashed}}
    return {**config, "traffic": traffic}


def key(config: dict[str, Any], simulator: str) -> str:
    """The cache's name for `config`'s answer from `simulator` (inputs_of_the_simulator)."""
    text = json.dumps([_as_keyed(config), simulator], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def cached(real: Simulate, cache: Path = CACHE) -> Simulate:
    """`real` (hyperpod_dpd.advise.engine.simulate) answering known configs from `cache`."""
    from hyperpod_dpd.advise import engine

    def simulate(configs: list[dict[str, Any]], venv: Path | None = None) -> dict[str, Any]:
        if venv is not None or not configs:  # a venv of the caller's: not what keys describe
            return real(configs, venv)
        cache.mkdir(parents=True, exist_ok=True)
        simulator = inputs_of_the_simulator(engine.PROGRAM, engine.REQUIREMENTS)
        keys = [key(c["config"], simulator) for c in configs]
        with contextlib.ExitStack() as held:
            # Sorted: two workers wanting overlapping configs take their locks in one order.
            for k in sorted(set(keys)):
                held.enter_context(exclusive(cache / f"{k}.lock"))
            by_key = dict(zip(keys, configs, strict=True))

            def simulated(missing: list[str]) -> dict[str, Any]:
                answer = real([by_key[k] for k in missing])
                return {k: {"engine": answer["engine"], "result": result}
                        for k, result in zip(missing, answer["results"], strict=True)}  # fmt: skip

            known = kept_each(cache.name, {k: k for k in by_key}, simulated, lambda _: True,
                              cache.parent)  # fmt: skip
        # Each config with its own id back, whichever call first had it simulated.
        results = [
            {**known[k]["result"], "id": c["id"]} for c, k in zip(configs, keys, strict=True)
        ]
        return {"engine": known[keys[0]]["engine"], "results": results}

    return simulate


def cached_session(real: type, cache: Path = CACHE) -> type:
    """engine.Session (`real`) answering known configs from `cache`, and the others from the
    one real simulator all its sessions share (SHARED: tests/support/shared_simulator.py),
    started only when asked for a config the cache does not hold. A session with a venv of the
    caller's starts a simulator of its own in that venv."""
    shared = SharedSimulator(real)

    class CachedSession:
        REAL = real
        SHARED = shared

        def __init__(self, venv: Path | None = None) -> None:
            self.venv = venv
            self.engine: dict[str, Any] | None = None
            self.started: Any = None  # the real session of its own venv, once one was needed
            self._held = contextlib.ExitStack()
            self._simulate = cached(self._real_simulate, cache)

        def _real_simulate(self, configs: list[dict[str, Any]], venv: Path | None = None):
            if self.venv is None:
                return shared.simulate(configs)
            if self.started is None:
                self.started = self._held.enter_context(real(self.venv))
            return self.started.simulate(configs)

        def __enter__(self) -> CachedSession:
            return self

        def simulate(self, configs: list[dict[str, Any]]) -> dict[str, Any]:
            answer = self._simulate(configs, self.venv)
            self.engine = answer["engine"]
            return answer

        def __exit__(self, *exc: object) -> bool | None:
            return self._held.__exit__(*exc)

    return CachedSession
