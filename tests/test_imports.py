"""The house's walls: every package is under the import contract, and no module imports itself
back through others (a cycle), imports inside functions included.

`lint-imports` (make lint) checks the contracts of pyproject.toml; these tests check what it does
not: that the contracts name every package and every room of the command line, and that the
whole import graph, module by module, has no cycle (import-linter's layers see only imports
between the layers they name)."""

from __future__ import annotations

import graphlib
import tomllib

import grimp

from tests.conftest import ROOT

CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
ROOT_PACKAGES = CONTRACTS["root_packages"]


def _graph() -> grimp.ImportGraph:
    # grimp reads every import statement of a module, those inside functions included.
    return grimp.build_graph(*ROOT_PACKAGES, include_external_packages=False, cache_dir=None)


def _cycle(graph: grimp.ImportGraph) -> list[str] | None:
    """One import cycle of `graph` (modules, the first again at the end), or None."""
    order = graphlib.TopologicalSorter(
        {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    )
    try:
        order.prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def test_every_package_of_the_repo_is_under_the_contract():
    packages = {
        p.parent.name
        for p in ROOT.glob("*/__init__.py")
        if p.parent.name not in {"tests", "build"} and not p.parent.name.startswith(".")
    }
    assert packages - set(ROOT_PACKAGES) == set(), "add it to [tool.importlinter] root_packages"


def test_every_room_of_the_command_line_is_in_its_layers():
    (contract,) = [c for c in CONTRACTS["contracts"] if c.get("containers") == ["hyperpod_dpd"]]
    named = {room.strip() for layer in contract["layers"] for room in layer.split("|")}
    rooms = {p.parent.name for p in (ROOT / "hyperpod_dpd").glob("*/__init__.py")}
    top_modules = {p.stem for p in (ROOT / "hyperpod_dpd").glob("*.py")} - {"__init__"}
    assert rooms - named == set(), "a room the contract does not place can import anything"
    assert top_modules == set(), "hyperpod_dpd/ holds rooms (packages) only"


def test_no_module_imports_itself_back():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_through_a_function_level_import_is_found(tmp_path, monkeypatch):
    """The cycle check sees imports inside functions (the one cluster_run had: a module-level
    import one way, a function-level one back)."""
    package = tmp_path / "walls"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from walls.b import B\nA = 1\n")
    (package / "b.py").write_text("B = 2\n\ndef late():\n    from walls.a import A\n    return A\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cycle = _cycle(grimp.build_graph("walls", cache_dir=None))
    assert cycle is not None and {"walls.a", "walls.b"} <= set(cycle)
