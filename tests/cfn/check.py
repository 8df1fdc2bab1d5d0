"""A program run's AWS resources judged by AWS's own rules: each translated to the CloudFormation
resource mapping.py names, linted by cfn-lint as resources of a template of the stack's Region
(the registry schemas: types, patterns, enums, lengths, required properties, ranges, and
cfn-lint's rules over them; each distinct resource once per process), then held to the rules no
schema has (rules.py).

A value the engine does not know yet (an output at preview, a secret) is a reference to a
template parameter: cfn-lint judges a reference by its type only, so an unknown is never a
finding. A registered AWS type with no mapping is one.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from hyperpod_dpd.plan.engine import ProgramRun, RecordedResource
from hyperpod_dpd.plan.wire_values import SECRET, UNKNOWN
from tests.cfn.mapping import EXEMPT, MAPPED, To
from tests.cfn.rules import RULES
from tests.support import program_runs, tool_cache

# Template parameters standing for values not known here: a text, and a list.
NOT_KNOWN = {"Ref": "NotKnown"}
NOT_KNOWN_LIST = {"Ref": "NotKnownList"}
PARAMETERS = {"NotKnown": {"Type": "String"}, "NotKnownList": {"Type": "CommaDelimitedList"}}
AWS_PACKAGES = ("aws:", "aws-native:")
# cfn-lint's rules that do not judge what AWS receives here, each with why.
NOT_JUDGED = {
    "E3019": "unique primary identifiers across a template: several Pulumi resources are parts "
    "of one CloudFormation resource (a bucket and its versioning share BucketName)",
    "E3644": "HyperPod instance types per Region from the Pricing API, whose lists hold none of "
    "the types sold through training plans (ml.p5e.48xlarge in no Region) though SageMaker's "
    "API model has them (core/aws/aws_facts.py, which settings/cluster/aws_limits.py enforces); "
    "`hyperpod-dpd preflight` asks the Region itself",
}
# At preview the SDK leaves an input whose value is not known yet out of the inputs it sends:
# a required property missing then may be one not known. The run after preview judges them.
ABSENT_AT_PREVIEW = {
    "E3003": "required properties",
    "E3014": "exactly one of some properties",
    "E3017": "at least one of some properties",
    "E3018": "only one of some properties",
    "E3021": "properties another one requires",
}


@dataclass(frozen=True)
class Finding:
    resource: str  # the Pulumi resource's name
    type: str  # its Pulumi type
    where: str  # the CloudFormation type, and the property path when there is one
    rule: str  # cfn-lint's rule id, or the source of the rule (rules.py)
    message: str

    def __str__(self) -> str:
        return f"{self.resource} ({self.type} as {self.where}): {self.rule}: {self.message}"


@dataclass(frozen=True)
class Document:
    """One CloudFormation resource a Pulumi resource's inputs translate to."""

    source: RecordedResource
    cfn: str
    props: dict[str, Any]


def aws_types(run: ProgramRun) -> set[str]:
    return {r.type for r in run.resources if r.custom and r.type.startswith(AWS_PACKAGES)}


def unmapped(run: ProgramRun) -> set[str]:
    return aws_types(run) - set(MAPPED) - set(EXEMPT)


def check_run(run: ProgramRun, region: str, preview: bool = False) -> list[Finding]:
    """Every finding of AWS's rules on the run's AWS resources in `region`, unmapped types first
    (`preview`: a run as a first preview, whose unknown inputs may be absent)."""
    missing = unmapped(run)
    findings = [
        Finding(
            r.name, r.type, "no CloudFormation type", "unmapped", "add it to tests/cfn/mapping.py"
        )
        for r in run.resources
        if r.type in missing
    ]
    documents: list[Document] = []
    for resource in run.resources:
        if resource.type in MAPPED:
            try:
                documents += translate(resource, region)
            except (ValueError, TypeError) as e:
                findings.append(Finding(resource.name, resource.type, MAPPED[resource.type].cfn,
                                        "translation", f"not in CloudFormation's shape: {e}"))  # fmt: skip
    linted = lint(documents, region)
    if preview:
        linted = [f for f in linted if f.rule not in ABSENT_AT_PREVIEW]
    return findings + linted + held_to_rules(documents)


# --- Translation ---------------------------------------------------------------------------------


@functools.cache
def cfn_schema(cfn: str, region: str) -> dict[str, Any]:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    return PROVIDER_SCHEMA_MANAGER.get_resource_schema(region, cfn).schema


def translate(resource: RecordedResource, region: str) -> list[Document]:
    """The CloudFormation resources `resource` is: its own first, then one per input that
    belongs to another type (their other required properties: not known here)."""
    m = MAPPED[resource.type]
    schema = cfn_schema(m.cfn, region)
    main = {
        prop: to_cfn(UNKNOWN, _schema_at(schema, [prop]), schema, {}) for prop in m.aws_supplies
    }
    others: list[Document] = []
    for key, value in sorted(resource.inputs.items()):
        if key in m.provider_only:
            continue
        to = m.inputs.get(key)
        if to is None:  # CloudFormation's property of the same name
            to = _property_name(schema, key, m.renames)
        to = To(to) if isinstance(to, str) else to
        if to.resource is None:
            _put(main, to, value, schema, m.renames)
            continue
        other = cfn_schema(to.resource, region)
        for item in value if to.each and isinstance(value, list) else [value]:
            props = {
                p: to_cfn(UNKNOWN, _schema_at(other, [p]), other, {})
                for p in other.get("required", [])
            }
            _put(props, to, item, other, m.renames)
            others.append(Document(resource, to.resource, props))
    return [Document(resource, m.cfn, main), *others]


def _put(doc: dict, to: To, value: Any, schema: dict, renames: Mapping[str, str]) -> None:
    if _unknown(value):
        if to.path:
            parts = to.path.split(".")
            _set(doc, parts, to_cfn(value, _schema_at(schema, parts), schema, renames))
        return  # properties merged from a value not known: none known
    value = to.convert(value) if to.convert else value
    if not to.path:
        doc.update(to_cfn(value, schema, schema, renames))
        return
    parts = to.path.split(".")
    _set(doc, parts, to_cfn(value, _schema_at(schema, parts), schema, renames))


def to_cfn(value: Any, schema: dict, root: dict, renames: Mapping[str, str]) -> Any:
    """A Pulumi value in CloudFormation's shape: keys renamed to the schema's property names
    (case aside, or by `renames`), following $refs; a map of tags as the Key/Value list the
    schema may want."""
    schema = _resolve(schema, root)
    if _unknown(value):
        if schema.get("type") == "object" and schema.get("required"):
            # An object another resource supplies (a CodeBuild project's Source, for its
            # webhook): its required properties, each not known.
            props = schema.get("properties", {})
            return {p: to_cfn(value, props.get(p, {}), root, renames) for p in schema["required"]}
        return NOT_KNOWN_LIST if schema.get("type") == "array" else NOT_KNOWN
    if isinstance(value, dict) and _is_tag_list(schema, root):
        return [{"Key": k, "Value": to_cfn(v, {}, root, renames)} for k, v in value.items()]
    if isinstance(value, dict) and "properties" not in schema:
        # oneOf/anyOf of objects: follow the branch that names every key.
        for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
            branch = _resolve(branch, root)
            known = {name.lower() for name in branch.get("properties", {})}
            if known and {renames.get(k, k).lower() for k in value} <= known:
                return to_cfn(value, branch, root, renames)
    if isinstance(value, list):
        items = [to_cfn(v, schema.get("items", {}), root, renames) for v in value]
        # Unknown items are distinct items (route table ids): each its own pick of the list.
        return [
            {"Fn::Select": [i, NOT_KNOWN_LIST]} if item == NOT_KNOWN else item
            for i, item in enumerate(items)
        ]
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            name = _property_name(schema, key, renames)
            out[name] = to_cfn(v, schema.get("properties", {}).get(name, {}), root, renames)
        return out
    return value


def _property_name(schema: dict, key: str, renames: Mapping[str, str]) -> str:
    """The schema's name for Pulumi's `key`; an unknown key stays as it is (and is a finding)."""
    if key in renames:
        return renames[key]
    names = {name.lower(): name for name in schema.get("properties", {})}
    return names.get(key.lower(), key)


def _resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        schema = root["definitions"][schema["$ref"].split("/")[-1]]
    return schema


def _schema_at(schema: dict, parts: list[str]) -> dict:
    node = schema
    for part in parts:
        node = _resolve(node, schema)
        node = node.get("items", {}) if part.isdigit() else node.get("properties", {}).get(part, {})
    return node


def _is_tag_list(schema: dict, root: dict) -> bool:
    items = _resolve(schema.get("items", {}), root) if schema.get("type") == "array" else {}
    return {"Key", "Value"} <= set(items.get("properties", {}))


def _set(doc: dict, parts: list[str], value: Any) -> None:
    """Put `value` at `parts` of `doc` ("0": a list's first item), making what is on the way."""
    node: Any = doc
    for part, following in itertools.pairwise(parts):
        node = _child(node, part, [] if following.isdigit() else {})
    last = parts[-1]
    if isinstance(node, dict) and isinstance(node.get(last), list) and isinstance(value, list):
        node[last] += value  # two inputs that are items of one list (load balancer attributes)
    elif last.isdigit():
        _child(node, last, None)
        node[int(last)] = value
    else:
        node[last] = value


def _child(node: Any, part: str, default: Any) -> Any:
    if not part.isdigit():
        return node.setdefault(part, default)
    index = int(part)
    node.extend([None] * (index + 1 - len(node)))
    if node[index] is None:
        node[index] = default
    return node[index]


def _unknown(value: Any) -> bool:
    return isinstance(value, str) and value in (UNKNOWN, SECRET)


# --- Judging -------------------------------------------------------------------------------------


# What cfn-lint found on each document it has judged, by (Region, type, properties): the suite's
# runs share most of their resources, and each is linted once per process at most. A document
# linted before, by this very cfn-lint and this module, is read back instead (tests/support/tool_cache.py):
# loading cfn-lint's rules and linting the shipped stacks cost each test process seconds of CPU.
_LINTED: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}


def lint(documents: list[Document], region: str) -> list[Finding]:
    """cfn-lint's matches on the documents, as resources of a template of `region`."""
    keys = [(region, d.cfn, json.dumps(d.props, sort_keys=True)) for d in documents]
    new = sorted(set(keys) - set(_LINTED))
    own: list[Finding] = []  # the template's own findings, of none of its resources

    def answer(missing: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], list]:
        found, template = _lint_new(missing, region)
        own.extend(template)
        return found

    if new:
        digests = {k: tool_cache.key(_linter(), *k) for k in new}
        # A batch whose template had findings of its own is linted again next time, to say them.
        kept = tool_cache.kept_each("cfn-lint", digests, answer, keep=lambda _: not own)
        for k, found in kept.items():
            _LINTED[k] = [tuple(f) for f in found]
    findings = list(own)
    for d, k in zip(documents, keys, strict=True):
        findings += [Finding(d.source.name, d.source.type, *found) for found in _LINTED[k]]
    return findings


@functools.cache
def _linter() -> str:
    """What, beside a document, decides what cfn-lint finds on it: cfn-lint (its version, its
    schemas, its dependencies: this environment) and how this module lints (its source)."""
    return json.dumps([program_runs.this_environment(), Path(__file__).read_text()])


@functools.cache
def _rules() -> Any:
    """cfn-lint's rules, loaded once per process as its own CLI loads them once for all the
    templates it is given (cfnlint/runner/cli.py Runner): each lint without them loaded every
    rule again, with the JSON schemas the rules read (a third of a second a template). The
    configuration (the Region, the rules not judged) is applied as each template is run."""
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner.cli import Runner

    return Runner(ConfigMixIn()).rules


def _lint_new(
    keys: list[tuple[str, str, str]], region: str
) -> tuple[dict[tuple[str, str, str], list[tuple[str, str, str]]], list[Finding]]:
    """Lint the documents of `keys` as one template: what each got, and what is no resource's
    (the template's own)."""
    from cfnlint.config import ConfigMixIn, ManualArgs
    from cfnlint.decode.decode import decode_str
    from cfnlint.runner import run_template_by_data

    ids = {f"R{i}": key for i, key in enumerate(keys)}
    template: dict[str, Any] = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {i: {"Type": k[1], "Properties": json.loads(k[2])} for i, k in ids.items()},
    }
    text = json.dumps(template)
    template["Parameters"] = {k: v for k, v in PARAMETERS.items() if f'"{k}"' in text}
    found: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {key: [] for key in keys}
    config = ConfigMixIn(**ManualArgs(regions=[region], ignore_checks=sorted(NOT_JUDGED)))
    # As cfnlint.api.lint runs a template, with the rules loaded once (_rules).
    decoded, matches = decode_str(json.dumps(template))
    own = []
    for match in matches or run_template_by_data(decoded, config, _rules()):
        path = [str(p) for p in match.path]
        key = ids.get(path[1]) if len(path) > 1 and path[0] == "Resources" else None
        if key is None:
            own.append(Finding("(template)", "", "/".join(path), match.rule.id, match.message))
        else:
            where = "/".join([key[1], *path[3:]])
            found[key].append((where, match.rule.id, match.message))
    return found, own


def held_to_rules(documents: list[Document]) -> list[Finding]:
    findings = []
    for d in documents:
        for rule in (r for r in RULES if r.cfn == d.cfn):
            for path, value in _values_at(d.props, rule.path.split(".")):
                if value in (NOT_KNOWN, NOT_KNOWN_LIST) or _picked_unknown(value):
                    continue
                for error in jsonschema.Draft7Validator(rule.schema).iter_errors(value):
                    findings.append(Finding(d.source.name, d.source.type, f"{d.cfn}/{path}",
                                            rule.source, error.message))  # fmt: skip
    return findings


def _picked_unknown(value: Any) -> bool:
    """An item of a list not known here (to_cfn's Fn::Select of NotKnownList)."""
    return isinstance(value, dict) and value.get("Fn::Select", [None, None])[1] == NOT_KNOWN_LIST


def _values_at(node: Any, parts: list[str], at: str = "") -> list[tuple[str, Any]]:
    if not parts:
        return [(at, node)]
    head, rest = parts[0], parts[1:]
    if head == "*":
        items = enumerate(node) if isinstance(node, list) else ()
        return [v for i, item in items for v in _values_at(item, rest, f"{at}/{i}".lstrip("/"))]
    if isinstance(node, dict) and head in node:
        return _values_at(node[head], rest, f"{at}/{head}".lstrip("/"))
    return []
