"""The fix-hint recorder (tests/fix_hints/): the audit sees every stack the recorded tests hand
parse_settings, whichever process made a program run they read, and reads them in the session
only when the session ran all of them before it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from settings import parse_settings
from tests.conftest import ROOT, stack_raw
from tests.fix_hints import handed_stacks
from tests.fix_hints.recorded_tests import RECORDED, audits, recorded
from tests.fix_hints.recorder import whole
from tests.support import program_runs


def _ran_elsewhere():
    pytest.fail("read back, the run is not made again")


def test_a_run_another_worker_made_hands_its_stacks_again_where_it_is_read(tmp_path, monkeypatch):
    """The worker that reads a shared run never calls parse_settings for it: the stacks the run
    handed come with it, or the audit would miss those a recorded test's program read."""
    monkeypatch.setattr(program_runs, "SHARED_RUNS", tmp_path)
    raw = stack_raw("dev")

    def run():
        return parse_settings(raw).endpoint.name

    with handed_stacks.listening([]) as made:
        name = program_runs.shared_run(("a config",), run)
    with handed_stacks.listening([]) as read:
        assert program_runs.shared_run(("a config",), _ran_elsewhere) == name
    assert made == read == [(raw, ())]


def test_a_run_kept_in_the_process_hands_its_stacks_again_each_time():
    kept: dict = {}
    raw = stack_raw("canary")
    with handed_stacks.listening([]) as first:
        handed_stacks.kept(kept, "canary", lambda: parse_settings(raw, ["hyperpod-dpd:hfToken"]))
    with handed_stacks.listening([]) as again:
        handed_stacks.kept(kept, "canary", _ran_elsewhere)
    assert first == again == [(raw, ("hyperpod-dpd:hfToken",))]


def test_the_recorded_tests_are_those_under_recorded_less_the_property_tests():
    assert recorded("tests/settings/test_parse.py::test_x")
    assert recorded("tests/settings/endpoint/test_names.py::test_y[a-b]")
    assert recorded("tests/policies/test_gate.py::test_z")
    assert not recorded("tests/policies/test_pack.py::test_z")
    assert not recorded("tests/settings_extra/test_x.py::test_x")
    assert not recorded(
        "tests/settings/test_hostile_stacks.py::test_a_hostile_value_at_any_key_is_x"
    )
    assert not recorded("tests/settings/test_stack_shapes.py::test_any_value_at_the_newer_keys[k]")
    assert not recorded("tests/settings/test_x.py::TestA::test_any_shape_of_endpoints[a::b]")


def _files() -> list[Path]:
    found = [ROOT / r for r in RECORDED if r.endswith(".py")]
    return found + [
        p for r in RECORDED if not r.endswith(".py") for p in (ROOT / r).rglob("test_*.py")
    ]


def _item(path: Path, name: str = "test_x") -> SimpleNamespace:
    return SimpleNamespace(path=path, nodeid=f"{path.relative_to(ROOT).as_posix()}::{name}")


def _whole(args, items, deselected=()):
    config = SimpleNamespace(invocation_params=SimpleNamespace(dir=ROOT), rootpath=ROOT, args=args,
                             getini=lambda name: ["test_*.py", "*_test.py"])  # fmt: skip
    return whole(config, items, deselected)


def test_a_session_has_every_recorded_test_only_given_them_whole():
    """Else the audit runs them in a pytest of its own: it audits every stack in any session."""
    items = [_item(path) for path in _files()]
    assert _whole(["tests"], items)
    assert _whole(
        ["tests/settings/", "tests/policies/test_gate.py", "tests/test_fix_hints.py"], items
    )
    property_test = _item(items[0].path, "test_any_shape_of_endpoints_x")
    assert _whole([str(ROOT)], items[1:], [property_test])  # only a property test deselected
    assert not _whole(["tests/test_fix_hints.py"], [])
    assert not _whole(["tests"], items[1:])  # a file --ignore'd
    assert not _whole(["tests"], items[1:], [items[0]])  # a recorded test deselected
    some_of_its_tests = f"{items[0].path}::test_x"
    assert not _whole([some_of_its_tests, *(str(i.path) for i in items[1:])], items)


def test_the_audit_runs_after_the_recorded_tests_their_node_ids_as_they_are(request):
    """pytest-xdist runs a group in the session's order; hypothesis seeds a parametrized test's
    examples by its node id, so an xdist_group mark ("@group") would change what they draw."""
    items = request.session.items
    ranks = [i for i, item in enumerate(items) if recorded(item.nodeid)]
    audit = [i for i, item in enumerate(items) if audits(item)]
    # pytest-xdist's own reading of a group's suffix (xdist/scheduler/loadgroup.py)
    assert not any(items[i].nodeid.rfind("@") > items[i].nodeid.rfind("]") for i in ranks)
    if ranks and audit:
        assert max(ranks) < min(audit)
