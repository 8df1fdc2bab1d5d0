"""`hyperpod-dpd demo`, run: the two loops the docs invite a newcomer to try, offline, each step
the command a user would type (printed as it runs), each stand-in stopped whatever happens.

1. The benchmark (docs/benchmark.md, "Try it without GPUs"): two fake OpenAI-compatible servers
   on free ports (one colocated: decode slowed while a prompt prefills; one disaggregated: a KV
   transfer before the first token), each awaited until it answers GET /v1/models, a
   `benchmark run` against each, `benchmark compare`.
2. The canary (docs/canary.md): a real Prometheus serving recorded series of the canary stack's
   pods (hyperpod_dpd/demo/vllm_traffic.py, backfilled with promtool), once with a healthy
   candidate and once with a failing one, and `hyperpod-dpd canary` on each: promote, then
   rollback.

Every server runs in a process group of its own and is stopped (hyperpod_dpd/shared/children.py)
when the demo ends, fails or is interrupted (Ctrl-C, SIGTERM): nothing is left listening. The
output directory is the demo's own and is rewritten whole on each run, so it runs twice in a row.
The parser is hyperpod_dpd/cli/demo.py.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK, UsageProblem
from hyperpod_dpd.demo.prometheus import PrometheusError, free_port, serve_backfill, tools
from hyperpod_dpd.demo.vllm_traffic import Minute, decode_minute, openmetrics, pod, prefill_minute
from hyperpod_dpd.shared import children
from hyperpod_dpd.shared.output_dirs import claim, clear

OUTPUTS = ("benchmark", "canary")  # what the demo writes in its directory
READY_SECONDS = 120  # a fake server's start, its venv built already (make demo builds it first)
TOKENIZER = "hyperpod_dpd/benchmark/word_tokenizer"
SCENARIO = "D(1024,32)"
# The dev stack's DPD endpoint: its two p5.48xlarge (8 GPUs each), as `make plan` prices them.
HOURLY_COST, GPUS = "110.08", "16"
# (label, the fake server's flags): the two shapes docs/benchmark.md explains, on the server's
# default prefill and decode. The transfer is a fifth of the first token, so DPD's later first
# token stands clear of the tens of ms a busy machine adds to either run's (30 ms let a loaded
# run measure DPD's first token 0.2% sooner).
SERVERS = (("colocated", ("--interference", "5")), ("dpd", ("--transfer-ms", "100")))
# The canary's scenarios: (baseline minute, candidate prefill minute, candidate decode minute),
# and the verdict each must get. The failing candidate fails 2% of its requests and its first
# tokens come later (the docs' example).
MINUTES = 40
CANARY = {
    "healthy": ((Minute(), prefill_minute(), decode_minute()), "promote"),
    "failing": (
        (Minute(errors=1), prefill_minute(), decode_minute(errors=12, ttft_le=0.5)),
        "rollback",
    ),
}
VERDICT_OF_EXIT = {0: "promote", 1: "rollback", 4: "hold"}


class DemoFailed(Exception):
    """A step of the demo did not do what it should: says which."""


def run(args: argparse.Namespace, project_dir: Path) -> int:
    out = args.out or project_dir / "build" / "demo"
    if args.only in (None, "canary"):
        try:
            tools()  # before anything starts: a missing Prometheus is said first
        except PrometheusError as exc:
            raise UsageProblem(str(exc)) from None
    demo = Demo(project_dir, out, args.concurrency, args.duration)
    if args.dry_run:
        demo.dry_run(args.only)
        return EXIT_OK
    claim(out, OUTPUTS, "`hyperpod-dpd demo`")
    clear(out, OUTPUTS)
    results = []
    try:
        with _sigterm_as_interrupt():
            if args.only in (None, "benchmark"):
                results.append(demo.benchmark())
            if args.only in (None, "canary"):
                results.append(demo.canary())
    except DemoFailed as exc:
        print(f"demo: FAILED: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except PrometheusError as exc:
        raise UsageProblem(str(exc)) from None
    print("\ndemo: done, nothing left running")
    for line in results:
        print(f"  {line}")
    return EXIT_OK


class Demo:
    def __init__(self, project_dir: Path, out: Path, concurrency: str, duration: str) -> None:
        self.project_dir, self.out = project_dir, out
        self.concurrency, self.duration = concurrency, duration
        script = Path(sys.executable).parent / "hyperpod-dpd"
        try:  # the console script as the README runs it: .venv/bin/hyperpod-dpd
            self.shown = str(script.relative_to(project_dir)) if script.exists() else None
        except ValueError:
            self.shown = None
        self.shown = self.shown or "hyperpod-dpd"

    # --- the benchmark ---------------------------------------------------------------------

    def dry_run(self, only: str | None) -> None:
        """The commands the demo would run (ports chosen when it runs), nothing started."""
        if only in (None, "benchmark"):
            out = self.out / "benchmark"
            for i, (_label, flags) in enumerate(SERVERS, 1):
                self._show([*_server_argv(f"PORT{i}", flags), "&"])
            for i, (label, _) in enumerate(SERVERS, 1):
                self._show(self._run_argv(f"http://127.0.0.1:PORT{i}", out / label, label))
            self._show(_compare_argv(out))
        if only in (None, "canary"):
            for _ in CANARY:
                self._show(_canary_argv("http://127.0.0.1:PROMETHEUS_PORT"))

    def benchmark(self) -> str:
        out = self.out / "benchmark"
        out.mkdir()
        self._say("the benchmark: a colocated and a disaggregated fake server, loaded and compared")
        with self._servers(out) as urls:
            for label, url in urls.items():
                self._cli(*self._run_argv(url, out / label, label))
        self._cli(*_compare_argv(out))
        return f"benchmark: {self._path(out / 'report' / 'report.md')} (and its charts)"

    def _run_argv(self, url: str, out: Path, label: str) -> list[str]:
        return [
            "benchmark", "run", "--target", url, "--tokenizer", TOKENIZER, "--scenario", SCENARIO,
            "--concurrency", self.concurrency, "--duration", self.duration,
            "--gpus", GPUS, "--hourly-cost", HOURLY_COST, "--out", str(out), "--label", label,
        ]  # fmt: skip

    @contextmanager
    def _servers(self, out: Path) -> Iterator[dict[str, str]]:
        """The fake servers, each on a free port, answering; stopped on leaving."""
        started: list[subprocess.Popen] = []
        try:
            urls = {}
            for label, flags in SERVERS:
                port = free_port()
                argv = _server_argv(str(port), flags)
                self._show([*argv, "&"])
                log = (out / f"fake-server-{label}.log").open("w")
                started.append(children.start(self._argv(argv), cwd=self.project_dir,
                                              stdout=log, stderr=subprocess.STDOUT))  # fmt: skip
                log.close()
                urls[label] = f"http://127.0.0.1:{port}"
            for (label, url), proc in zip(urls.items(), started, strict=True):
                self._await(url, proc, out / f"fake-server-{label}.log")
                print(f"demo: {label} fake server ready on {url}", flush=True)
            yield urls
        finally:
            for proc in started:
                children.stop(proc)

    def _await(self, url: str, proc: subprocess.Popen, log: Path) -> None:
        """Until the server answers GET /v1/models (its process still running)."""
        deadline = time.monotonic() + READY_SECONDS
        while True:
            if proc.poll() is not None:
                raise DemoFailed(f"the fake server for {url} exited ({proc.returncode}): "
                                 f"{log.read_text()[-2000:]}")  # fmt: skip
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise DemoFailed(f"the fake server for {url} did not answer in {READY_SECONDS} s")
            time.sleep(0.2)

    # --- the canary ------------------------------------------------------------------------

    def canary(self) -> str:
        from settings.stack_file import read_stack

        self._say("the canary: Pulumi.canary.yaml's candidate judged on recorded series, "
                  "healthy then failing")  # fmt: skip
        settings = read_stack(self.project_dir, "canary").settings
        endpoints = settings.endpoints
        verdicts = []
        for scenario, ((base, prefill, decode), expected) in CANARY.items():
            pods = [
                pod(endpoints["baseline"].name, "colocated", base,
                    namespace=endpoints["baseline"].namespace),
                pod(endpoints["candidate"].name, "prefill", prefill,
                    namespace=endpoints["candidate"].namespace),
                pod(endpoints["candidate"].name, "decode", decode,
                    namespace=endpoints["candidate"].namespace),
            ]  # fmt: skip
            where = self.out / "canary" / scenario
            where.mkdir(parents=True)
            series = openmetrics(pods, int(time.time()) - MINUTES * 60, MINUTES)
            print(f"\ndemo: a Prometheus with {MINUTES} minutes of a {scenario} candidate's "
                  "series (promtool tsdb create-blocks-from openmetrics)", flush=True)  # fmt: skip
            server = serve_backfill(where, series)
            try:
                code = self._cli(*_canary_argv(server.url), check=False)
            finally:
                server.stop()
            verdict = VERDICT_OF_EXIT.get(code)
            if verdict != expected:
                raise DemoFailed(f"the {scenario} candidate got {verdict or f'exit {code}'}, "
                                 f"not {expected}")  # fmt: skip
            verdicts.append(f"{scenario} candidate: {verdict} (exit {code})")
        return "canary: " + "; ".join(verdicts)

    # --- running the commands --------------------------------------------------------------

    def _argv(self, argv: list[str]) -> list[str]:
        return [sys.executable, "-m", "hyperpod_dpd.cli", *argv]

    def _show(self, argv: list[str]) -> None:
        shown = " ".join(a if a == "&" else shlex.quote(self._path(a)) for a in argv)
        print(f"\n$ {self.shown} {shown}", flush=True)

    def _cli(self, *argv: str, check: bool = True) -> int:
        """Run `hyperpod-dpd argv` as a user would, its output passed through."""
        self._show(list(argv))
        with children.owned(self._argv(list(argv)), cwd=self.project_dir) as proc:
            code = proc.wait()
        if check and code != EXIT_OK:
            raise DemoFailed(f"`hyperpod-dpd {' '.join(argv[:2])}` exited {code}")
        return code

    def _path(self, text: str | Path) -> str:
        """A path under the project as the project-relative path a user would type."""
        path = Path(text)
        if path.is_absolute() and path.is_relative_to(self.project_dir):
            return str(path.relative_to(self.project_dir))
        return str(text)

    def _say(self, what: str) -> None:
        print(f"\ndemo: {what}", flush=True)


def _server_argv(port: str, flags: tuple[str, ...]) -> list[str]:
    return ["benchmark", "fake-server", "--port", port, *flags]


def _compare_argv(out: Path) -> list[str]:
    runs = [str(out / label) for label, _ in SERVERS]
    return ["benchmark", "compare", *runs, "--out", str(out / "report")]


def _canary_argv(prometheus_url: str) -> list[str]:
    return ["canary", "--stack", "canary", "--endpoint", "candidate",
            "--prometheus-url", prometheus_url]  # fmt: skip


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI runner's cancel, `kill`) ends the demo as Ctrl-C does: its servers are
    stopped on the way out instead of left running."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
