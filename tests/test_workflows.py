"""The GitHub workflows run third-party actions with our cloud credentials: each is pinned to a
commit SHA (a tag can be moved to other code), the tag named in a comment for humans."""

from __future__ import annotations

import re

from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[^@\s]+)@(?P<ref>\S+)(?P<rest>.*)$")
# No second public source confirmed their SHAs offline (README, "Pinned versions"): pinned by
# tag until checked with `git ls-remote`. Nothing may join this list.
TAG_PINNED = {"aws-actions/configure-aws-credentials@v4.2.1", "pulumi/actions@v6.2.0"}


def uses() -> list[tuple[str, int, re.Match]]:
    found = []
    for path in WORKFLOWS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := USES.match(line):
                found.append((path.name, number, match))
    return found


def test_every_action_is_pinned_to_a_commit_with_its_tag_in_a_comment():
    assert WORKFLOWS and uses()
    loose = []
    for name, number, m in uses():
        if f"{m['action']}@{m['ref']}" in TAG_PINNED:
            continue
        if not (
            re.fullmatch(r"[0-9a-f]{40}", m["ref"]) and re.fullmatch(r"\s+# v\d\S*", m["rest"])
        ):
            loose.append(f"{name}:{number}: {m.group(0).strip()}")
    assert loose == [], "pin these to a commit SHA with '# vX.Y.Z':\n" + "\n".join(loose)


def test_one_action_version_is_pinned_to_one_commit_everywhere():
    commits: dict[str, set[str]] = {}
    for _, _, m in uses():
        commits.setdefault(f"{m['action']} {m['rest'].strip()}", set()).add(m["ref"])
    assert {k: v for k, v in commits.items() if len(v) > 1} == {}
