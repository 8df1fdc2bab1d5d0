"""Every pointer into the docs resolves: `docs/<page>.md#<anchor>` anywhere in the repository
(code, stack files, docs, the messages the commands print) and every relative Markdown link
`[text](<page>.md#<anchor>)` of the docs names a page that exists and a heading it has (GitHub's
anchors); no pointer is left in the old form that named a README section the README no longer
has (`README, "Section"`)."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tests.test_citations import files, heading_anchors  # noqa: F401

POINTER = re.compile(r"(?<![\w/.-])(docs/[\w-]+\.md)#([\w-]+)")
LINK = re.compile(r"\]\(((?:\.\./)?[\w/-]*[\w-]+\.md)#([\w-]+)\)")
OLD_FORM = re.compile(r"README, \"|\(README, [A-Z]")


def _anchors(page: str) -> set[str]:
    path = ROOT / page
    return set(heading_anchors(path.read_text())) if path.exists() else set()


def test_every_docs_pointer_resolves(files):  # noqa: F811
    broken = []
    for name, text in files.items():
        if name == "tests/test_citations.py":  # its docstring names the form: `...md#anchor`
            continue
        for page, anchor in POINTER.findall(text):
            if anchor not in _anchors(page):
                broken.append(f"{name}: {page}#{anchor}")
        if name.endswith(".md"):
            base = (ROOT / name).parent
            for target, anchor in LINK.findall(text):
                page = (base / target).resolve().relative_to(ROOT).as_posix()
                if anchor not in _anchors(page):
                    broken.append(f"{name}: {target}#{anchor}")
    assert not broken, "\n".join(broken)


def test_no_pointer_names_a_readme_section(files):  # noqa: F811
    old = [f"{n}: {m.group(0)}" for n, t in files.items() for m in OLD_FORM.finditer(t)]
    assert not [o for o in old if not o.startswith("tests/test_doc_pointers.py")], old
