"""Run the real Pulumi program offline, under the SDK's mock engine, and record what it declares.

One engine for the offline plan and the tests. Nothing here needs the Pulumi CLI, a provider
plugin or cloud credentials: `pulumi.runtime.set_mocks` replaces the engine, `fakes.py` answers
for the providers, and `RecordingMonitor` keeps every registration as the engine would see it
(camelCase inputs, parent, provider, dependencies), with secret values replaced by "[secret]".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import runpy
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import rpc
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.settings import SETTINGS, get_root_resource
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

import infra
from hyperpod_dpd.plan.fakes import AUTONAMED, FakeCloud
from hyperpod_dpd.plan.wire_values import SECRET, SECRET_SIG, SIG_KEY, sanitize
from infra.charts import offline
from policies.gate import ADVISORY_LOG_PREFIX

# The checkout whose `infra` package the program imports: asset paths are recorded relative to
# it, so plans of two checkouts (a git worktree, a copied stack) compare equal.
CODE_ROOT = Path(infra.__file__).resolve().parents[1]


@dataclass
class RecordedResource:
    """One registration, in the shape of `resources.json`."""

    type: str
    name: str
    urn: str
    parent: str | None
    provider: str | None
    depends_on: list[str]
    protect: bool
    retain_on_delete: bool
    custom: bool
    inputs: dict[str, Any]
    id: str | None = None  # the (fake) provider id: lets tests follow references by id

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "urn": self.urn,
            "parent": self.parent,
            "provider": self.provider,
            "dependsOn": self.depends_on,
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "custom": self.custom,
            "id": self.id,
            "inputs": self.inputs,
        }


class _ProgramLog(logging.Handler):
    """The program's log (pulumi.log) on stderr, as the CLI shows it, less the advisory findings
    the gate logs for `pulumi up` (policies/gate.py): the plan lists those with its violations,
    so a plan would print each twice. Written to the stderr of the moment (tests capture it)."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not message.startswith(ADVISORY_LOG_PREFIX):
            print(f"{record.levelname.lower()}: {message}", file=sys.stderr)


PROGRAM_LOG = logging.getLogger("hyperpod_dpd.program")
PROGRAM_LOG.addHandler(_ProgramLog())
PROGRAM_LOG.propagate = False


@dataclass
class ProgramRun:
    resources: list[RecordedResource]
    outputs: dict[str, Any] = field(default_factory=dict)

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def by_id(self, id_: str) -> RecordedResource:
        (match,) = [r for r in self.resources if r.id == id_]
        return match

    def named(self, name: str) -> RecordedResource:
        matches = [r for r in self.resources if r.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]


class DuplicateUrnError(pulumi.RunError):
    pass


ROOT_STACK_TYPE = "pulumi:pulumi:Stack"


def engine_urn(stack: str, project: str, parent: str, type_: str, name: str) -> str:
    """The URN the engine gives a resource: its type qualified by its parent's whole qualified
    type, the root stack's type never part of it (pulumi sdk/go/common/resource/urn.go, NewURN:
    `if parentType != "" && parentType != RootStackType`). The SDK's mock keeps the parent's last
    type only and the stack's type too, so its URNs differ from a real stack's."""
    if parent:
        qualified = parent.split("::")[2]
        if qualified != ROOT_STACK_TYPE:
            type_ = f"{qualified}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The SDK's mock monitor, keeping each registration's request as the engine receives it, and
    naming each resource with the engine's URN (what `pulumi state`, `--target` and aliases take).
    """

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        return engine_urn(pulumi.get_stack(), pulumi.get_project(), parent, type_, name)

    def __init__(
        self,
        mocks: pulumi_mocks.Mocks,
        root: Path | None = None,
        recorded: list[RecordedResource] | None = None,
    ):
        super().__init__(mocks)
        self.recorded: list[RecordedResource] = [] if recorded is None else recorded
        self.root = root  # the program's directory: asset paths are recorded relative to it
        self._urns: set[str] = set()

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        # The real engine refuses a second registration of one URN (step generator, diag code
        # 2001, pulumi/pulumi sdk/go/common/diag/errors.go); the SDK's mock accepts it.
        if response.urn in self._urns:
            raise DuplicateUrnError(
                f"Duplicate resource URN '{response.urn}'; try giving it a unique name"
            )
        self._urns.add(response.urn)
        # The real engine marks the outputs a resource lists in additionalSecretOutputs secret
        # (a generated password's `result`); the SDK's mock returns them in the clear.
        _mark_secret(response.object, request.additionalSecretOutputs)
        if request.type != "pulumi:pulumi:Stack":
            wire = json_format.MessageToDict(request.object, preserving_proto_field_name=True)
            # The engine auto-names resources during preview (the provider's Check fills e.g. a
            # bucket's name into its inputs); the fake chose that name, so record it as input.
            key = AUTONAMED.get(request.type)
            if key and key not in wire:
                wire[key] = self.mocks.states[(request.type, request.name)][key]
            self.recorded.append(
                RecordedResource(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent or None,
                    provider=request.provider or None,
                    depends_on=sorted(set(request.dependencies)),
                    protect=bool(request.protect),
                    retain_on_delete=bool(request.retainOnDelete),
                    custom=bool(request.custom),
                    inputs=sanitize(wire, self.root),
                    id=response.id or None,
                )
            )
        return response


def _mark_secret(state: Any, keys: Any) -> None:
    """Wrap each of `keys` present in the wire `state` (a protobuf Struct) as a secret value."""
    for key in keys:
        if key not in state.fields or rpc.is_rpc_secret(
            json_format.MessageToDict(state.fields[key])
        ):
            continue  # absent, or secret already
        plain = json_format.MessageToDict(state.fields[key])
        state.fields[key].struct_value.Clear()
        state.fields[key].struct_value.update({SIG_KEY: SECRET_SIG, "value": plain})


class ProgramMocks(pulumi_mocks.Mocks):
    def __init__(self, cloud: FakeCloud):
        self.cloud = cloud
        self.states: dict[tuple[str, str], dict[str, Any]] = {}

    def new_resource(self, args: pulumi_mocks.MockResourceArgs):
        inputs = _unwrap_secrets(args.inputs)
        rid, state = self.cloud.create(args.typ, args.name, inputs)
        self.states[(args.typ, args.name)] = state
        return rid, state

    def call(self, args: pulumi_mocks.MockCallArgs):
        return self.cloud.invoke(args.token, _unwrap_secrets(args.args)), []


def _unwrap_secrets(value: Any) -> Any:
    if rpc.is_rpc_secret(value):
        return _unwrap_secrets(rpc.unwrap_rpc_secret(value))
    if isinstance(value, dict):
        return {k: _unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap_secrets(v) for v in value]
    return value


def run_program(
    program: Path,
    config: dict[str, str],
    secret_keys: list[str],
    *,
    project: str,
    stack: str,
    recorded: list[RecordedResource] | None = None,
    preview: bool = False,
    handed: Mapping[contextvars.ContextVar, Any] | None = None,
) -> ProgramRun:
    """Execute `program` (a Pulumi `__main__.py`) with `config` and return what it registered.

    `preview`: run it as the first `pulumi preview` of a new stack does (`is_dry_run` true, no
    resource exists, so ids and computed outputs are unknown).

    `config` maps full keys to the text Pulumi would pass (objects as JSON). Each run gets a
    fresh context, so runs do not share Pulumi runtime state. Exceptions from the program
    (for example ConfigError) propagate unchanged; `recorded`, when given, holds every
    registration as it happens, so a caller can count what a stopped program registered.
    `handed`: context variables set in the run's context before the program starts (what the
    caller has already computed from the same config, for the program to take, not redo).
    """
    region = _region_of(config)
    return contextvars.Context().run(
        _run,
        program,
        config,
        secret_keys,
        project,
        stack,
        FakeCloud(region=region, preview=preview),
        recorded,
        handed or {},
    )


def _region_of(config: dict[str, str]) -> str:
    return config.get("aws:region") or "us-east-1"


def _run(
    program: Path,
    config: dict[str, str],
    secret_keys: list[str],
    project: str,
    stack: str,
    cloud: FakeCloud,
    recorded: list[RecordedResource] | None,
    handed: Mapping[contextvars.ContextVar, Any],
) -> ProgramRun:
    for variable, value in handed.items():
        variable.set(value)
    # The SDK keeps outstanding outputs in a context property whose default is one shared set:
    # give this run its own, or a failed run's tasks are awaited (and re-raised) by the next.
    SETTINGS.outputs = set()
    mocks = ProgramMocks(cloud)
    monitor = RecordingMonitor(mocks, CODE_ROOT, recorded)
    pulumi.runtime.set_mocks(
        mocks,
        project=project,
        stack=stack,
        preview=cloud.preview,
        logger=PROGRAM_LOG,
        monitor=monitor,
    )
    set_all_config(dict(config), list(secret_keys))
    program_dir = str(program.resolve().parent)
    added = program_dir not in sys.path
    if added:
        sys.path.insert(0, program_dir)  # as the Python language host does for the program
    try:
        # Charts fetched at deploy time are not fetched offline: only their path is recorded.
        with offline(), _no_stack_traces():
            _sync_await(run_pulumi_func(lambda: runpy.run_path(str(program), run_name="__main__")))
    except BaseException as error:
        _handed_to_the_caller(error)
        raise
    finally:
        if added:
            sys.path.remove(program_dir)
    return ProgramRun(monitor.recorded, _stack_outputs())


# A failure a run raised to its caller is marked so. The SDK sets a failed registration's error on
# every output future of the resource (pulumi/runtime/resource.py, do_register) and awaits only
# one of each output's futures: the others are dropped unread, and asyncio reports each as
# "Future exception was never retrieved", with the traceback the caller already has, whenever
# the collector frees them (56 times for one duplicate Bucket). The caller did retrieve it. (A
# mark on the error, not a weak set of errors: the collector clears weak references before the
# futures' finalizers report.)
_HANDED = "_hyperpod_dpd_handed_to_the_caller"


@contextlib.contextmanager
def _no_stack_traces() -> Iterator[None]:
    """Registrations without the program's stack trace. The SDK walks the Python stack at every
    registration, each frame's file made a URI (pulumi/runtime/resource.py `_get_stack_trace`),
    for the engine to keep where each resource was declared (pulumi/pulumi#13449, #20430); the
    mock monitor drops it, and it was a fifth of a run's CPU. The run sends the empty trace the
    SDK itself sends when it finds no frame of the program's."""
    real = getattr(sdk_resource, "_get_stack_trace", None)
    if real is None:  # an SDK that no longer has it: nothing to leave out
        yield
        return
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = real


def _handed_to_the_caller(error: BaseException) -> None:
    try:
        setattr(error, _HANDED, True)
    except AttributeError:  # an error type without attributes: reported as before
        return
    loop = asyncio.get_event_loop()  # the one the SDK ran the program on (_sync_await)
    previous = loop.get_exception_handler()
    if getattr(previous, _HANDED, False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        handed = getattr(context.get("exception"), _HANDED, False)
        if handed and "never retrieved" in context.get("message", ""):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    setattr(handler, _HANDED, True)
    loop.set_exception_handler(handler)


def _stack_outputs() -> dict[str, Any]:
    root = get_root_resource()
    outputs: dict[str, Any] = {}
    for name, value in getattr(root, "outputs", {}).items():
        output = pulumi.Output.from_input(value)
        secret = _sync_await(output.is_secret())
        resolved = _sync_await(output.future())
        outputs[name] = SECRET if secret else sanitize(resolved)
    return outputs
