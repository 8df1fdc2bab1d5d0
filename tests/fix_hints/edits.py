"""The edits a printed fix hint asks for, read from its text as a user would follow it, and
applied to a stack's config the way the Pulumi CLI would apply them.

A hint is followable when it names full config keys and a concrete value, in one of the forms
the checks and the policies print:

- `pulumi config set [--stack S] [--path] 'KEY' VALUE` (VALUE bare or in single quotes) and
  `pulumi config rm [--stack S] [--path] KEY`;
- `in Pulumi.<stack>.yaml set KEY to JSON` (or the stack's own file, Pulumi.dev.yaml);
- `set|raise|lower|shrink KEY [and KEY ...] to [at most|at least] VALUE`, `set KEY between A
  and B` (both ends are tried), `rename KEY to KEY`, `remove NAME from KEY` (a map entry),
  `remove KEY`;
- in a list of vLLM args: `set|raise|lower FLAG in KEY to VALUE` (or `between A and B`),
  `remove FLAG from KEY` (the flag and its value), `remove 'WORD' from KEY` (one item),
  `write NEW instead of 'OLD' in KEY`.

The first followable form in a hint is its suggestion (what follows "or" is an alternative). A
key with a placeholder (`<group>`) or a `<value>` is a template for the user to fill in: not
followable.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# A full key in pulumi's path syntax: a segment is any run of characters but the separators
# (and the punctuation prose puts after a key), or an index, or a quoted name.
_SEGMENT = r"[^\s.,;:()\[\]'\"]+"
_KEY = rf"(?:hyperpod-dpd|aws):{_SEGMENT}(?:\.{_SEGMENT}|\[[0-9]+\]|\[\"(?:[^\"\\]|\\.)*\"\])*"
_KEYS = rf"{_KEY}(?: and {_KEY})*"
_VALUE = r"(\"[^\"]*\"|[^\s,;()]+)"
_FLAG = r"(--[a-z0-9][a-z0-9-]*)"
_NUMBER = r"([0-9][0-9.]*[0-9]|[0-9])"
_VERB = r"\b(?i:set|raise|lower|shrink)"
# Words that follow "to" in prose but are no value ("to one of them", "to a name").
_WORDS = frozenset({"one", "a", "an", "the", "it", "them", "that", "this"})


@dataclass(frozen=True)
class Edit:
    key: str
    # set | remove | rename | set-flag | remove-flag | remove-item | replace-item; set-literal and
    # remove-literal: a nested key given to the CLI without --path (a top-level key of that name)
    op: str
    value: Any = None  # the value to set; the new key (rename); the flag's value; the item
    flag: str = ""  # set-flag, remove-flag; replace-item: the item replaced


# `--stack S` (the stack a printed command names: core/pulumi_commands.py) selects the file.
_STACK = r"(?: --stack \S+)?"
_FORMS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"pulumi config set{_STACK}( --path)? '?({_KEY})'? ('[^']*'|\S+)"), "cli"),
    (re.compile(rf"pulumi config rm{_STACK}( --path)? '?({_KEY})'?"), "rm"),
    (
        re.compile(
            rf"in Pulumi\.(?:<stack>|[a-z0-9_.-]+)\.yaml set ({_KEY}) to (?=[\[{{\"0-9tfn-])"
        ),
        "json",
    ),
    (re.compile(rf"{_VERB} {_FLAG} in ({_KEY}) between {_NUMBER} and {_NUMBER}"), "flag-between"),
    (
        re.compile(rf"{_VERB} {_FLAG} in ({_KEY}) to (?:at most |at least ){{0,1}}{_VALUE}"),
        "flag-to",
    ),
    (re.compile(rf"\bremove {_FLAG} from ({_KEY})"), "remove-flag"),
    (re.compile(rf"\bremove '([^']*)' from ({_KEY})"), "remove-item"),
    (re.compile(rf"\bwrite (\S+) instead of '([^']*)' in ({_KEY})"), "replace-item"),
    (re.compile(rf"\brename ({_KEY}) to ({_KEY})"), "rename"),
    (re.compile(rf"{_VERB} ({_KEY}) between {_NUMBER} and {_NUMBER}"), "between"),
    (re.compile(rf"{_VERB} ({_KEYS}) to (?:at most |at least )?{_VALUE}"), "to"),
    (re.compile(rf"\bremove ([A-Za-z_][A-Za-z0-9_]*) from ({_KEY})"), "remove-entry"),
    (re.compile(rf"\bremove ({_KEY})(?![.\[\w])"), "remove"),
]


def suggestions(hint: str) -> list[list[Edit]]:
    """The first followable suggestion of `hint`, as alternatives to try (a range gives both
    ends), each a list of edits made together; [] when the hint names no concrete edit."""
    found = sorted(
        ((m.start(), kind, m) for pattern, kind in _FORMS for m in pattern.finditer(hint)),
        key=lambda item: item[0],
    )
    for _, kind, m in found:
        alternatives, end = _read(kind, m)
        if alternatives:
            return [edits + _chained(hint, end, found) for edits in alternatives]
    return []


_FILLER = re.compile(r"\s*\(or edit Pulumi\.<stack>\.yaml\)")


def _chained(hint: str, end: int, found) -> list[Edit]:
    """The edits joined to the one ending at `end` by " and " (made together)."""
    filler = _FILLER.match(hint, end)
    end = filler.end() if filler else end
    if not hint.startswith(" and ", end):
        return []
    for start, kind, m in found:
        if start == end + len(" and "):
            alternatives, after = _read(kind, m)
            return alternatives[0] + _chained(hint, after, found) if alternatives else []
    return []


def _read(kind: str, m: re.Match[str]) -> tuple[list[list[Edit]], int]:
    """The alternatives a matched form asks for, and where its text ends."""
    if kind == "json":  # the value is JSON: as long as the decoder reads
        value, end = json.JSONDecoder().raw_decode(m.string, m.end())
        return [[Edit(m.group(1), "set", value)]], end
    return _edits(kind, m), m.end()


def _edits(kind: str, m: re.Match[str]) -> list[list[Edit]]:
    g = m.groups()
    if kind == "cli":
        if "<" in g[1] or "<" in g[2]:
            return []
        op = "set" if g[0] or not _nested(g[1]) else "set-literal"
        text = g[2][1:-1] if g[2].startswith("'") else g[2]  # the shell drops single quotes
        return [[Edit(g[1], op, cli_value(text, path=bool(g[0])))]]
    if kind == "rm":
        return [[Edit(g[1], "remove" if g[0] or not _nested(g[1]) else "remove-literal")]]
    if kind == "flag-between":
        return [[Edit(g[1], "set-flag", g[2], g[0])], [Edit(g[1], "set-flag", g[3], g[0])]]
    if kind == "flag-to":
        return [] if _vague(g[2]) else [[Edit(g[1], "set-flag", _plain(g[2]), g[0])]]
    if kind == "remove-flag":
        return [[Edit(g[1], "remove-flag", flag=g[0])]]
    if kind == "remove-item":
        return [[Edit(g[1], "remove-item", g[0])]]
    if kind == "replace-item":
        return [[Edit(g[2], "replace-item", g[0], g[1])]]
    if kind == "rename":
        return [[Edit(g[0], "rename", g[1])]]
    if kind == "between":
        return [[Edit(g[0], "set", float(g[1]))], [Edit(g[0], "set", float(g[2]))]]
    if kind == "to":
        if _vague(g[1]):
            return []
        value = json.loads(g[1]) if g[1].startswith('"') else cli_value(g[1].rstrip("."), True)
        return [[Edit(key, "set", value) for key in g[0].split(" and ")]]
    if kind == "remove-entry":
        return [[Edit(f"{g[1]}.{g[0]}", "remove")]]
    return [[Edit(g[0], "remove")]]


def _nested(key: str) -> bool:
    """A key with a path below its top-level key: without --path the CLI takes it whole, as the
    name of a top-level key ('hyperpod-dpd:endpoint.mode' is then no path into endpoint)."""
    return any(c in key.partition(":")[2] for c in ".[")


def _vague(text: str) -> bool:
    return "<" in text or "…" in text or text.rstrip(".") in _WORDS


def _plain(text: str) -> str:
    return text[1:-1] if text.startswith('"') else text.rstrip(".")


def cli_value(text: str, path: bool) -> Any:
    """The value `pulumi config set [--path] KEY TEXT` stores: without --path, the text; with it,
    true/false as booleans and integers as integers (a leading 0 keeps the text), anything else
    the text (pulumi sdk/go/common/resource/config, adjustObjectValue)."""
    if not path:
        return text
    if text in ("true", "false"):
        return text == "true"
    if len(text) > 1 and text[0] == "0":
        return text
    try:
        return int(text)
    except ValueError:
        return text


def parse_key(key: str) -> tuple[str, list[str | int]]:
    """'hyperpod-dpd:cost.hourlyPrices["ml.p5.48xlarge"]' -> ('hyperpod-dpd:cost',
    ['hourlyPrices', 'ml.p5.48xlarge']): the top-level config key and the property path below it
    (pulumi's resource.ParsePropertyPath: `.name`, `[0]`, `["any text"]`)."""
    namespace, _, name = key.partition(":")
    segments: list[str | int] = []
    for m in re.finditer(r'\.?([^.\[\]"]+)|\[([0-9]+)\]|\["((?:\\"|[^"])*)"\]', name):
        if m.group(1) is not None:
            segments.append(m.group(1))
        elif m.group(2) is not None:
            segments.append(int(m.group(2)))
        else:
            segments.append(m.group(3).replace('\\"', '"'))
    head, *rest = segments
    return f"{namespace}:{head}", rest


def apply(raw: dict[str, Any], edits: list[Edit]) -> dict[str, Any]:
    """A copy of `raw` (decoded config, as in Pulumi.<stack>.yaml) with `edits` made."""
    out = copy.deepcopy(raw)
    for e in edits:
        if e.op == "rename":
            out = apply(out, [Edit(e.value, "set", _get(out, e.key)), Edit(e.key, "remove")])
        elif e.op == "set-literal":
            out[e.key] = e.value
        elif e.op == "remove-literal":
            out.pop(e.key, None)
        elif e.op in ("set", "remove"):
            _put(out, e.key, e.value, remove=e.op == "remove")
        else:
            items = list(_get(out, e.key) or [])
            _put(out, e.key, _edit_args(items, e))
    return out


def _edit_args(items: list[str], e: Edit) -> list[str]:
    """A vLLM args list with one edit made (a flag as `--flag value` or `--flag=value`)."""
    if e.op == "remove-item":
        return [item for item in items if item != e.value]
    if e.op == "replace-item":
        return [e.value if item == e.flag else item for item in items]
    kept, skip = [], False
    for i, item in enumerate(items):
        if skip:
            skip = False
            continue
        if item == e.flag:
            following = items[i + 1] if i + 1 < len(items) else None
            skip = following is not None and not following.startswith("--")
            continue
        if item.startswith(e.flag + "="):
            continue
        kept.append(item)
    return kept if e.op == "remove-flag" else [*kept, e.flag, str(e.value)]


def _get(raw: dict[str, Any], key: str) -> Any:
    top, path = parse_key(key)
    node = raw.get(top)
    for part in path:
        node = node[part] if isinstance(node, list) else (node or {}).get(part)
    return copy.deepcopy(node)


def _put(raw: dict[str, Any], key: str, value: Any, remove: bool = False) -> None:
    top, path = parse_key(key)
    if not path:
        if remove:
            raw.pop(top, None)
        else:
            raw[top] = value
        return
    node = raw.setdefault(top, {})
    if isinstance(node, str):  # an object still as the CLI's JSON text
        node = raw[top] = json.loads(node)
    for part in path[:-1]:
        node = node[part] if isinstance(part, int) else node.setdefault(part, {})
    last = path[-1]
    if not remove:
        node[last] = value
    elif isinstance(node, dict):
        node.pop(last, None)
    elif isinstance(last, int) and last < len(node):
        del node[last]


def follow_in_file(stack_file: Path, hint: str) -> None:
    """Follow `hint` (e.g. a `pulumi config set --path 'KEY' 'VALUE'` line) on a stack file as
    the CLI would: its `config:` read, the first suggestion's edits made, the file written back."""
    [edits, *_] = suggestions(hint) or [[]]
    assert edits, f"no edit to follow in {hint!r}"
    document = yaml.safe_load(stack_file.read_text())
    document["config"] = apply(document["config"], edits)
    stack_file.write_text(yaml.safe_dump(document))
