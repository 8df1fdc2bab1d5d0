"""aiperf, the load generator, in its own venv: the command line for a run and where it writes.

aiperf (NVIDIA, PyPI `aiperf`) streams OpenAI-compatible chat completions at fixed concurrency
and computes every latency metric and percentile itself; nothing here measures or does metric
maths. Why aiperf and not genai-bench (the article's tool): both were run against the same local
server (docs/benchmark.md#is-dpd-worth-it-for-my-traffic); aiperf reports inter-token latency per chunk,
takes the duration in seconds and counts input tokens exactly with a local tokenizer.

With an API key (the traffic split's, core/api_key.py), aiperf sends it as `Authorization: Bearer
<key>` (its `--api-key`). The key never sits on a command line (which `ps` shows to anyone on the
machine): aiperf is started as `python -c START <flags>`, which takes the key from the
environment and hands it to aiperf's own command line parser in memory; aiperf passes it to its
workers through their environment and leaves it out of every file it writes.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from core import api_key
from hyperpod_dpd.benchmark.scenario import Scenario, StopRule
from hyperpod_dpd.shared import children
from hyperpod_dpd.shared.venvs import foreign_env, venv_from

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements-loadtest.txt"
VENV = ROOT / "build" / "loadtest-venv"


def loadtest_venv(venv: Path = VENV, requirements: Path = REQUIREMENTS) -> Path:
    """`venv` holding exactly `requirements`, built on first use and rebuilt when it changes."""
    return venv_from(requirements, venv)


@dataclass(frozen=True)
class LoadRun:
    target: str  # an OpenAI-compatible base URL (http://host:port) or its /v1/chat/completions
    tokenizer: Path  # a directory, or the directory of a tokenizer.json
    model: str
    scenario: Scenario
    levels: list[int]
    stop: StopRule
    artifacts: Path
    key: str | None = field(default=None, repr=False)  # sent as Authorization: Bearer <key>

    def base_url(self) -> str:
        return base_url(self.target)


def base_url(target: str) -> str:
    """The server's root: `target` without the OpenAI path it may carry."""
    url = target.rstrip("/")
    for suffix in ("/v1/chat/completions", "/chat/completions", "/v1"):
        url = url.removesuffix(suffix)
    return url


def aiperf_argv(run: LoadRun, venv: Path) -> list[str]:
    """aiperf's command line for `run`: streaming chat, fixed lengths, every level in one
    sweep (one start-up for all levels)."""
    s = run.scenario
    argv = [
        str(venv / "bin" / "aiperf"), "profile",
        "--model", run.model, "--url", run.base_url(), "--endpoint-type", "chat", "--streaming",
        "--tokenizer", str(run.tokenizer),
        "--isl", str(s.input_tokens), "--isl-stddev", "0",
        "--osl", str(s.output_tokens), "--osl-stddev", "0",
        # Every response exactly OUT tokens long (vLLM honours ignore_eos), as genai-bench does.
        "--extra-inputs", "ignore_eos:true", "--extra-inputs", f"min_tokens:{s.output_tokens}",
        "--concurrency", ",".join(str(c) for c in run.levels),
        "--artifact-dir", str(run.artifacts), "--ui-type", "none",
        "--random-seed", "0",
        # Every request's prompt its own from the first token. A run by --duration draws its
        # prompts from 100 entries (aiperf's --num-dataset-entries) and sends them again once
        # it has sent 100, and vLLM's automatic prefix caching, on by default (vllm-project/vllm
        # tests/v1/engine/test_engine_args.py, test_prefix_caching_from_cli), answers what it
        # has seen from its cache: no prefill, a first token too early in either mode. A marker
        # of its own at token 0 of each (ai-dynamo/aiperf docs/reference/cache-bust.md); aiperf
        # takes the marker's mean token count out of --isl, so a prompt stays within a few
        # tokens of ISL.
        "--cache-bust", "first_turn_prefix",
        # No DCGM or Prometheus scraping: neither is reachable from where this runs (a laptop,
        # a Job beside the router), and probing for them costs each level seconds.
        "--no-gpu-telemetry", "--no-server-metrics",
    ]  # fmt: skip
    if run.stop.duration is not None:
        argv += ["--benchmark-duration", f"{run.stop.duration:g}"]
    else:
        argv += ["--request-count", str(run.stop.requests)]
    return argv


# aiperf's own console script, run by the venv's Python: the key, if any, taken from the
# environment and appended to aiperf's flags in memory (and out of the environment its workers
# inherit: aiperf hands them the key itself).
START = f"""\
import os, sys
from aiperf.cli import app
sys.argv[0] = "aiperf"
key = os.environ.pop({api_key.ENV!r}, None)
if key:
    sys.argv += ["--api-key", key]
sys.exit(app())
"""
# Before START, for a run of one level where processes start by fork (Linux): the tokenizer's
# code imported before aiperf forks its services. aiperf's dataset manager, record processor
# and tokenizer check each import transformers after the fork; imported once before it, they
# share it (bench/aiperf_start.py measures it). A sweep gains nothing: aiperf runs each of its
# levels in an interpreter of its own (aiperf/orchestrator/local_executor.py, `python -m
# aiperf.orchestrator.subprocess_runner`), nor does a platform where processes spawn (macOS).
# Transformers' advice that PyTorch is missing (a tokenizer needs none) is kept out of
# aiperf's log, as the services' own imports keep it out.
PRELOAD = """\
import multiprocessing, os
if multiprocessing.get_all_start_methods()[0] == "fork":
    ours = "TRANSFORMERS_NO_ADVISORY_WARNINGS" not in os.environ
    os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"
    import tokenizers, transformers.models.auto.tokenization_auto
    from transformers import PreTrainedTokenizerFast
    if ours:
        del os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"]
"""


def command(run: LoadRun, venv: Path) -> tuple[list[str], dict[str, str]]:
    """How to start aiperf for `run`: its command line and environment (the key, if any, in
    the environment only)."""
    argv, env = aiperf_argv(run, venv), foreign_env()
    env.pop(api_key.ENV, None)
    if run.key:
        env[api_key.ENV] = run.key
    program = PRELOAD + START if len(run.levels) == 1 else START
    return [str(venv / "bin" / "python"), "-c", program, *argv[1:]], env


def export_of(artifacts: Path, level: int, levels: list[int]) -> Path:
    """Where aiperf left a level's summary: `concurrency_<c>/` in a sweep, the top otherwise."""
    if len(levels) > 1:
        return artifacts / f"concurrency_{level}" / "profile_export_aiperf.json"
    return artifacts / "profile_export_aiperf.json"


_LEVEL_DIR = re.compile(r"/concurrency_(\d+)/")
_PHASE_DONE = re.compile(
    r"Phase profiling \(profiling\) complete \| completed=(\d+), cancelled=(\d+), "
    r"errors=(\d+).*elapsed=([\d.]+)s"
)
_PROBLEM = re.compile(r"^\S+\s+(WARNING|ERROR|CRITICAL)\s+(.*?)(?:\s+\(\S+\.py:\d+\))?$")


@dataclass
class Progress:
    """What of aiperf's console a user follows (the rest is in aiperf.log): each level's start
    and end with its counts, and each distinct warning or error once. aiperf's own tables are
    left out: the summary of results.json follows the run."""

    levels: list[int]
    level: int | None = None
    started: set[int] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)

    def line(self, text: str) -> str | None:
        # Each level's exports are named on its start, and all of them again in the summary.
        if (m := _LEVEL_DIR.search(text)) and int(m[1]) not in self.started:
            self.level = int(m[1])
            self.started.add(self.level)
            return f"concurrency {self.level}: started"
        if self.level is None and "Phase profiling (profiling) started" in text:
            self.level = self.levels[0]  # a single level: aiperf names no directory for it
            self.started.add(self.level)
            return f"concurrency {self.level}: started"
        if m := _PHASE_DONE.search(text):
            completed, cancelled, errors, elapsed = m.groups()
            return (f"concurrency {self.level}: {completed} requests in {float(elapsed):g} s, "
                    f"{errors} errors, {cancelled} cancelled")  # fmt: skip
        if (m := _PROBLEM.match(text.strip())) and m[2] not in self.seen:
            self.seen.add(m[2])
            return f"{m[1].lower()}: {m[2]}"
        return None


# How long aiperf gets to answer SIGINT (it writes what it measured, then exits: within a second
# here) before SIGTERM ends it. aiperf 0.13 leaves a SIGINT unanswered while its services start
# (one sent 3-4 s after its start ran on for over 40 s here; SIGTERM then ended it at once): a
# Ctrl-C in that window waits this long, not longer.
AIPERF_GRACE_SECONDS = 10


def run_aiperf(run: LoadRun, venv: Path, log: Path) -> subprocess.CompletedProcess:
    """Run aiperf; its console goes to `log`, and its progress (Progress) to our stderr."""
    argv, env = command(run, venv)
    # aiperf leaves its dataset's memory-mapped files (aiperf_mmap_<id>/,
    # aiperf/dataset/memory_map_utils.py) and its sockets' directory in the system temp
    # directory after every run: both go to one directory of ours there, removed when the run
    # ends, however it ends. Its path is no longer than aiperf's own default for its sockets
    # (a Unix socket's path may have 107 characters: a long TMPDIR, as macOS gives, must not
    # break a run that works without this).
    scratch = tempfile.TemporaryDirectory(prefix="aiperf-")
    env["AIPERF_DATASET_MMAP_BASE_PATH"] = scratch.name
    with scratch:
        return _run([*argv, "--zmq-ipc-path", scratch.name], env, run, log)


def _run(argv: list[str], env: dict[str, str], run: LoadRun, log: Path):
    # Not HF_HUB_OFFLINE: with it aiperf 0.13 looks a tokenizer up only in the hub's cache and
    # fails on a local directory (aiperf/common/tokenizer.py, _from_pretrained_local). Without
    # it, an absolute path is taken as local and never resolved against a hub (resolve_alias);
    # tokenizer_dir() always hands aiperf an absolute directory.
    with log.open("w") as out:
        proc = children.start(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        try:
            assert proc.stdout is not None
            progress = Progress(run.levels)
            for line in proc.stdout:
                out.write(line)
                if shown := progress.line(line):
                    print(f"  aiperf: {shown}", file=sys.stderr)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): aiperf and its workers must not run on alone.
            children.stop(proc, grace=AIPERF_GRACE_SECONDS)
            raise
        return subprocess.CompletedProcess(proc.args, proc.wait())
