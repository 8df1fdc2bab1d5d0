"""The product cites only what its users have.

- No file of the repository (tracked, or new and not ignored) points at the maintainers' research
  notes, which live outside it (`../shared/reference/*.md`, the seed documents): a user who
  reads "see field-problems #8" has no such file. Cite the public source instead: an AWS
  documentation page, an upstream issue, pull request or file.
- Every `docs/troubleshooting.md#anchor` the project prints or links resolves to a heading of
  that page (GitHub's anchor rules), every failure `hyperpod-dpd verify` can report points at
  one, and every section of the page is pointed at by some failure.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from hyperpod_dpd.verify import causes
from tests.conftest import ROOT

THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()
TROUBLESHOOTING = "docs/troubleshooting.md"

# The notes' names, the notes' and seeds' directories, and the ways prose named a seed document.
OUTSIDE = re.compile(
    r"field-problems|dpd-facts|aisimulate-notes|guardrails-and-caches|day2-peers|pulumi-notes"
    r"|shared/reference|shared/seeds|\.\./shared|(?<![\w-])seeds/|\bseed 0\d\d\b|\bthe seeds\b"
    # This project's own issues (a tracker users never see): "issue 39", "issues 33 and 36".
    r"|\bissues? \d+\b",
    re.IGNORECASE,
)
POINTER = re.compile(r"(?<![\w/.-])docs/troubleshooting\.md#([\w-]+)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def repository_files() -> list[str]:
    """Tracked files and new ones git does not ignore, as `git ls-files` lists them."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout
    return sorted({p for p in out.decode().split("\0") if p and (ROOT / p).is_file()})


def text_of(path: str) -> str | None:
    """The file's text, or None for a binary file (NUL bytes or not UTF-8)."""
    data = (ROOT / path).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation (anything but letters,
    digits, '_', '-' and spaces) dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def heading_anchors(markdown: str) -> dict[str, str]:
    """anchor -> heading text of every heading outside fenced code, duplicates numbered as GitHub
    numbers them (`name`, `name-1`, `name-2`)."""
    anchors: dict[str, str] = {}
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if not match:
            continue
        text = match.group(2)
        slug = github_slug(text)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors[slug if n == 0 else f"{slug}-{n}"] = text
    return anchors


def sections(markdown: str) -> dict[str, str]:
    """anchor -> heading of each `## ` section: one failure each."""
    return {
        github_slug(line[3:]): line[3:].strip()
        for line in markdown.splitlines()
        if line.startswith("## ")
    }


def every_cause() -> dict[str, causes.Cause]:
    return {n: c for n, c in vars(causes).items() if isinstance(c, causes.Cause)}


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    texts = {p: text_of(p) for p in repository_files()}
    return {p: t for p, t in texts.items() if t is not None}


@pytest.fixture(scope="module")
def page() -> str:
    return (ROOT / TROUBLESHOOTING).read_text()


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("KV transfer absent", "kv-transfer-absent"),
        ("Threshold too close to max-model-len", "threshold-too-close-to-max-model-len"),
        ("`pd_role` missing", "pd_role-missing"),
        ("What's new? (v3.2+)", "whats-new-v32"),
        ("Two  spaces", "two--spaces"),
    ],
)
def test_github_slug(heading, anchor):
    assert github_slug(heading) == anchor


def test_heading_anchors_number_duplicates_and_skip_code():
    markdown = "# A\n## Cause\n```sh\n# not a heading\n```\n## Cause\n### Cause\n"
    assert list(heading_anchors(markdown)) == ["a", "cause", "cause-1", "cause-2"]


def test_the_walk_sees_this_repository(files):
    assert {THIS, TROUBLESHOOTING, "README.md", "hyperpod_dpd/verify/causes.py"} <= set(files)
    assert len(files) > 100


def test_no_file_cites_a_document_outside_the_repository(files):
    found = [
        f"{path}:{number}: {line.strip()}"
        for path, text in files.items()
        if path != THIS
        for number, line in enumerate(text.splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, (
        "these lines cite documents users do not have (the research notes outside the "
        "repository); cite the public source the note names instead:\n" + "\n".join(found)
    )


def test_the_outside_pattern_catches_each_form():
    for text in (
        "see field-problems #15",
        "(dpd-facts.md, Verifying)",
        "as in ../shared/reference/hyperpod/",
        "the seeds/ directory",
        "seed 003's recipe",
        "the seeds' scenario",
        "pulumi-notes.md observed",
        "researched for issue 39",
        "(Issue 36, security)",
    ):
        assert OUTSIDE.search(text), text
    for text in (
        "PYTHONHASHSEED prefill 0",
        "random seeds",
        "hyperpod_dpd/shared/kube.py",
        "vllm-project/vllm#49238",
        "aws/sagemaker-hyperpod-cli issue #431",
    ):
        assert not OUTSIDE.search(text), text


def test_every_failure_verify_reports_points_at_a_section(page):
    anchors = heading_anchors(page)
    wrong = {
        name: c.ref
        for name, c in every_cause().items()
        if not c.ref.startswith(f"{TROUBLESHOOTING}#") or c.ref.split("#", 1)[1] not in anchors
    }
    assert not wrong, f"causes whose `see:` is not a heading of {TROUBLESHOOTING}: {wrong}"


def test_every_troubleshooting_pointer_in_the_repository_resolves(files, page):
    anchors = heading_anchors(page)
    pointers = [
        (path, anchor)
        for path, text in files.items()
        if path != THIS  # its docstring names the pattern
        for anchor in POINTER.findall(text)
    ]
    assert len(pointers) >= len(every_cause())  # causes.py itself spells each one out
    broken = sorted({f"{path}: #{anchor}" for path, anchor in pointers if anchor not in anchors})
    assert not broken, f"no such heading in {TROUBLESHOOTING}:\n" + "\n".join(broken)


def test_the_page_links_resolve_within_it(page):
    anchors = heading_anchors(page)
    links = re.findall(r"\]\(#([\w-]+)\)", page)
    assert links
    assert sorted(set(links) - set(anchors)) == []


def test_each_section_is_a_failure_verify_reports_with_what_to_do_and_sources(page):
    refs = {c.ref.split("#", 1)[1] for c in every_cause().values()}
    assert sorted(set(sections(page)) - refs) == [], "sections no failure points at"
    bodies = re.split(r"^## .*$", page, flags=re.MULTILINE)[1:]
    for (anchor, _), body in zip(sections(page).items(), bodies, strict=True):
        for part in ("**What you see.**", "**Why.**", "**What to do.**", "**Sources.**"):
            assert part in body, f"#{anchor} lacks {part}"
        sources = body.split("**Sources.**", 1)[1]
        assert re.search(r"\]\(https://", sources), f"#{anchor} cites no public page"


def test_the_page_index_lists_every_section(page):
    """A reader scanning the index finds every failure `verify` can report."""
    links = set(re.findall(r"^- \[[^\]]+\]\(#([\w-]+)\)$", page, flags=re.MULTILINE))
    assert sorted(set(sections(page)) - links) == []
