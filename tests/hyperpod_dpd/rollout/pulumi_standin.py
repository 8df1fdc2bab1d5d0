"""A stand-in for the Pulumi CLI, for the rollout's tests (the CLI cannot be installed here):
the tests put it on PATH as `pulumi` (a script that runs `main`), and the Automation API of the
pinned SDK runs it as it would run the CLI. It answers exactly the commands that SDK sends, in
the shapes it parses:

- `pulumi version` -> `v3.272.0`: the CLI the workflows pin (requirements.txt's SDK). PulumiCommand
  (pulumi/automation/_cmd.py) parses it with semver; above 3.205.0 the SDK starts a gRPC server
  and hands `--event-log tcp://127.0.0.1:PORT` (_stack.py, `_setup_event_log`), to which this
  stand-in streams the engine events as the CLI does: pulumirpc.Events/StreamEvents, one
  EventRequest per event, its `event` the event's JSON (proto/pulumi/events.proto; the SDK's
  `_EventsServicer` parses each with EngineEvent.from_json). A file path (older CLIs) gets JSON
  lines, as `_watch_logs` reads them.
- `stack select --stack S` (_local_workspace.py `select_stack`): "no stack named 'S' found" on
  stderr for an unknown stack, which errors.py turns into StackNotFoundError.
- `stack output --json [--show-secrets] --stack S` (`stack_outputs`): the outputs' JSON.
- `stack history --json [--show-secrets] [--page-size N --page P] --stack S` (_stack.py
  `history`): updates newest first, times as the SDK parses them (`%Y-%m-%dT%H:%M:%S.%fZ`),
  each config value as the CLI prints it (pkg/cmd/pulumi/stack/stack_history.go: `value`, and
  `objectValue` for an object).
- `config set [--path] K --plaintext --stack S --non-interactive -- V` and `config set-all
  --stack S [--path] --plaintext K=V ...` (`set_config`, `set_all_config`): written into
  Pulumi.S.yaml, comments kept (ruamel.yaml; the CLI edits the file's YAML tree in place since
  pulumi/pulumi#11456, "Implement YAML roundtripping, comment preserving edits"), a path's value
  typed as the CLI types it
  (sdk/go/common/resource/config/map.go, `adjustObjectValue`: "true"/"false" are booleans, an
  integer is an integer unless it has a leading 0, anything else a string).
- `preview ...` and `up --yes --skip-preview ...`: the engine's events for the stack's
  resources. A resource is updated when it is one of the stack's `routes` (the listener rule) and the
  file's hyperpod-dpd:traffic differs from the deployed one, or as the test's `pending` says;
  `up` then deploys the file: its config, the `trafficWeights` output, a history entry with
  `--message`. `locked` makes both fail as a held update lock does (errors.py: "[409]
  Conflict: Another update is currently in progress."). `landsDuringPreview` (weights): another
  rollout's update of the stack to those weights ends while the preview runs, once.

Every call is recorded in the state file ($PULUMI_STANDIN_STATE, JSON). `kill` makes the
stand-in SIGKILL its parent, the process that ran it (the rollout), at a command, `before` or
`after` doing it, once: a rollout killed at that point.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from datetime import UTC, datetime, timedelta

VERSION = "v3.272.0"
TRAFFIC = "hyperpod-dpd:traffic"
CONFLICT = "error: [409] Conflict: Another update is currently in progress."


# Paths as text (os.path), not pathlib: importing it was a fifth of each call's start-up.
def _state_path() -> str:
    return os.environ["PULUMI_STANDIN_STATE"]


def _load() -> dict:
    with open(_state_path()) as state:
        return json.load(state)


def _save(state: dict) -> None:
    tmp = _state_path() + ".tmp"
    with open(tmp, "w") as out:
        out.write(json.dumps(state, indent=1))
    os.replace(tmp, _state_path())


def _flags(args: list[str], valued: set[str]) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(positional words, flag -> values, words after `--`)."""
    words, flags, rest = [], {}, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest = args[i + 1 :]
            break
        if a.startswith("--"):
            name, _, inline = a.partition("=")
            if inline:
                flags.setdefault(name, []).append(inline)
            elif name in valued:
                flags.setdefault(name, []).append(args[i + 1])
                i += 1
            else:
                flags.setdefault(name, []).append("")
        else:
            words.append(a)
        i += 1
    return words, flags, rest


def _typed(value: str):
    """map.go adjustObjectValue, for a value set with --path."""
    if value in ("true", "false"):
        return value == "true"
    if len(value) > 1 and value.startswith("0"):
        return value
    try:
        return int(value)
    except ValueError:
        return value


def _set_config(project: str, stack: str, pairs: list[tuple[str, str]], path: bool) -> None:
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments and order kept, as the CLI keeps them
    yaml.preserve_quotes = True
    file = os.path.join(project, f"Pulumi.{stack}.yaml")
    with open(file) as text:
        doc = yaml.load(text.read())
    config = doc["config"]
    for key, value in pairs:
        namespace, _, name = key.partition(":")
        if not path or "." not in name:
            config[key] = value
            continue
        top, *inner = name.split(".")
        node = config.setdefault(f"{namespace}:{top}", {})
        for part in inner[:-1]:
            node = node.setdefault(part, {})
        node[inner[-1]] = _typed(value)
    with open(file, "w") as out:
        yaml.dump(doc, out)


def _file_config(project: str, stack: str) -> dict:
    import yaml

    with open(os.path.join(project, f"Pulumi.{stack}.yaml")) as text:
        return (yaml.safe_load(text.read()) or {}).get("config") or {}


def _time(seconds_ago: float) -> str:
    t = datetime.now(UTC) - timedelta(seconds=seconds_ago)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _events(stack: dict, config: dict, preview: bool) -> tuple[list[dict], dict]:
    """The engine's events of a preview or an update of `config` over the deployed stack."""
    routed = config.get(TRAFFIC) != stack["deployed"]["config"].get(TRAFFIC)
    pending = {p["urn"]: p["op"] for p in stack.get("pending", [])}
    events, counts = [{"preludeEvent": {"config": {}}}], {}
    for resource in stack["resources"]:
        urn, kind = resource["urn"], resource["type"]
        op = pending.get(urn) or ("update" if routed and urn in stack["routes"] else "same")
        counts[op] = counts.get(op, 0) + 1
        metadata = {"op": op, "urn": urn, "type": kind, "provider": ""}
        events.append({"resourcePreEvent": {"metadata": metadata, "planning": preview}})
        events.append({"resOutputsEvent": {"metadata": metadata, "planning": preview}})
    events.append({"summaryEvent": {"maybeCorrupt": False, "durationSeconds": 1,
                                    "resourceChanges": counts, "PolicyPacks": {}}})  # fmt: skip
    events.append({"cancelEvent": {}})
    for i, event in enumerate(events):
        event.update(sequence=i, timestamp=int(time.time()))
    return events, counts


def _send(events: list[dict], log: str) -> None:
    if log.startswith("tcp://"):
        import grpc
        from google.protobuf import empty_pb2

        events_pb2 = _events_proto()
        service = events_pb2.DESCRIPTOR.services_by_name["Events"]
        with grpc.insecure_channel(log.removeprefix("tcp://")) as channel:
            # pulumirpc.Events/StreamEvents, as the SDK's events_pb2_grpc.EventsStub calls it.
            stream = channel.stream_unary(
                f"/{service.full_name}/{service.methods_by_name['StreamEvents'].name}",
                request_serializer=events_pb2.EventRequest.SerializeToString,
                response_deserializer=empty_pb2.Empty.FromString,
            )
            stream(iter([events_pb2.EventRequest(event=json.dumps(e)) for e in events]))
    else:
        with open(log, "a") as out:
            out.writelines(json.dumps(e) + "\n" for e in events)


def _events_proto():
    """The SDK's pulumi/runtime/proto/events_pb2.py (the messages its server parses), loaded from
    its file: imported as pulumi.runtime.proto.events_pb2 it would first run pulumi/__init__.py,
    the whole SDK, for two messages (0.2 s of CPU an update)."""
    import importlib.util

    package = importlib.util.find_spec("pulumi")  # found, not imported
    path = os.path.join(os.path.dirname(package.origin), "runtime", "proto", "events_pb2.py")
    spec = importlib.util.spec_from_file_location("pulumi_events_pb2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _history_config(config: dict) -> dict:
    out = {}
    for key, value in config.items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            out[key] = {"secret": True}
        elif isinstance(value, (dict, list)):
            out[key] = {"value": json.dumps(value), "objectValue": value, "secret": False}
        else:
            out[key] = {"value": str(value), "secret": False}
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--non-interactive"]
    state = _load()
    state.setdefault("calls", []).append(args)
    _save(state)
    if args == ["version"]:
        print(state.get("version", VERSION))
        return 0
    valued = {"--stack", "--page-size", "--page", "--message", "--policy-pack",
              "--policy-pack-config", "--exec-kind", "--event-log"}  # fmt: skip
    if args[:2] == ["config", "set-all"]:
        valued |= {"--plaintext", "--secret"}
    words, flags, rest = _flags(args, valued)
    command = " ".join(words[:2]) if words and words[0] in ("stack", "config") else words[0]
    name = (flags.get("--stack") or [""])[-1]
    stack = state["stacks"].get(name)
    if stack is None:
        print(f"error: no stack named '{name}' found", file=sys.stderr)
        return 255
    project = os.getcwd()
    kill = state.get("kill")
    fires = kill and kill["command"] == command
    if fires and kill["when"] == "before":
        state.pop("kill")
        _save(state)
        os.kill(os.getppid(), signal.SIGKILL)
        return 1
    code = _run(command, words, flags, rest, state, stack, project, name)
    _save(state)
    if fires and kill["when"] == "after":
        state.pop("kill")
        _save(state)
        os.kill(os.getppid(), signal.SIGKILL)
    return code


def _run(command, words, flags, rest, state, stack, project, name) -> int:
    if command == "stack select":
        return 0
    if command == "stack output":
        print(json.dumps(stack["deployed"]["outputs"]))
        return 0
    if command == "stack history":
        entries = stack["history"]
        if "--page-size" in flags:
            size, page = int(flags["--page-size"][-1]), int(flags["--page"][-1])
            entries = entries[(page - 1) * size : page * size]
        print(json.dumps(entries))
        return 0
    if command == "config set":
        _set_config(project, name, [(words[2], rest[0])], "--path" in flags)
        return 0
    if command == "config set-all":
        if "--secret" in flags:
            print("error: the stand-in sets no secret", file=sys.stderr)
            return 1
        pairs = [tuple(p.split("=", 1)) for p in flags.get("--plaintext", [])]
        _set_config(project, name, pairs, "--path" in flags)
        return 0
    if command in ("preview", "up"):
        if state.get("locked"):
            print(CONFLICT, file=sys.stderr)
            return 255
        config = _file_config(project, name)
        events, counts = _events(stack, config, preview=command == "preview")
        if command == "up":
            age = state.get("updateAgeSeconds", 0)
            stack["deployed"]["config"] = config
            stack["deployed"]["outputs"]["trafficWeights"] = config.get(TRAFFIC)
            stack["pending"] = []
            stack["history"].insert(0, {
                "version": len(stack["history"]) + 1, "kind": "update",
                "startTime": _time(age + 60), "endTime": _time(age),
                "message": (flags.get("--message") or [""])[-1], "environment": {},
                "config": _history_config(config), "result": "succeeded",
                "resourceChanges": counts,
            })  # fmt: skip
        _send(events, flags["--event-log"][-1])
        elsewhere = state.pop("landsDuringPreview", None) if command == "preview" else None
        if elsewhere is not None:
            stack["deployed"]["config"] = {**stack["deployed"]["config"], TRAFFIC: elsewhere}
            stack["deployed"]["outputs"]["trafficWeights"] = elsewhere
        return 0
    print(f"error: the stand-in does not answer `pulumi {' '.join(words)}`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
