"""The packages setuptools installs are the tree's: pyproject.toml finds them (no hand-kept
list), and every folder of Python modules under its roots is a package it finds, so a new folder
without an __init__.py cannot be left out of an install (or of the policy pack's copy)."""

from __future__ import annotations

import tomllib

from setuptools import find_packages

from tests.conftest import ROOT


def _found() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = config["packages"]["find"]
    return set(find_packages(where=str(ROOT), include=find["include"]))


def _folders_of_modules() -> set[str]:
    roots = {
        pattern.rstrip("*")
        for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
            "packages"
        ]["find"]["include"]
    }
    folders = set()
    for root in roots:
        for module in (ROOT / root).rglob("*.py"):
            folder = module.parent.relative_to(ROOT)
            if "__pycache__" not in folder.parts:
                folders.add(".".join(folder.parts))
    return folders


def test_every_folder_of_modules_is_a_package_setuptools_finds():
    missing = _folders_of_modules() - _found()
    assert not missing, (
        f"folders of modules setuptools would leave out (add __init__.py): {missing}"
    )


def test_package_data_names_packages_that_exist():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(config["package-data"]) <= _found()


# A folder a newcomer reads in one sitting: past this, split it by concern.
MODULES_PER_FOLDER = 20


def test_no_folder_holds_more_than_twenty_modules():
    crowded = {}
    for folder in [ROOT, *ROOT.rglob("*")]:
        rel = folder.relative_to(ROOT)
        if not folder.is_dir() or any(
            part.startswith(".") or part in {"build", "__pycache__", "node_modules"}
            for part in rel.parts
        ):
            continue
        count = sum(1 for m in folder.glob("*.py") if m.name != "__init__.py")
        if count > MODULES_PER_FOLDER:
            crowded[str(rel) or "."] = count
    assert not crowded, f"folders over {MODULES_PER_FOLDER} modules: {crowded}"
