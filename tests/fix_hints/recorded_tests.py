"""Which tests the fix-hint audit (tests/test_fix_hints.py) replays the stacks of, and where they
run: in a session that runs the audit, pytest-xdist hands them to one worker with the audit's
tests (the xdist group GROUP), and tests/conftest.py orders the audit's tests after them, so the
audit reads what they recorded in its own process (tests/fix_hints/recorder.py).

They join the group by the scheduler, not by an xdist_group mark: a mark appends "@group" to a
test's node id, and hypothesis seeds a parametrized test's examples with its node id
(_hypothesis_pytestplugin.py, `_hypothesis_internal_add_digest`): the tests would draw other
stacks than a run without xdist draws."""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadGroupScheduling

# The tests whose stacks are replayed: they build the bad stacks, one class of problem each.
RECORDED = ("tests/settings", "tests/policies/test_gate.py")
# Not the property tests that throw random values at random keys and draw random stack shapes
# (their names begin so): their stacks test that nothing raises; the audit's sweep gives every
# key a value it cannot take, for the fixes.
NOT_RECORDED = (
    "test_a_hostile_value_at_any_key",
    "test_any_shape_of_endpoints",
    "test_any_value_at_the_newer_keys",
)
# The xdist group of the audit's tests (their mark), and of the recorded tests beside them.
GROUP = "fix-hints"
AUDIT_MODULE = "tests/test_fix_hints.py"


def recorded(nodeid: str) -> bool:
    """A test whose stacks are replayed: under RECORDED, not one of NOT_RECORDED."""
    path, _, name = nodeid.partition("::")
    under = any(path == r or path.startswith(r + "/") for r in RECORDED)
    function = name.partition("[")[0].rpartition("::")[2]  # a class's method: its own name
    return under and not function.startswith(NOT_RECORDED)


def audits(item: pytest.Item) -> bool:
    """One of the audit's tests: they read what the recorded tests recorded."""
    in_module = item.path == item.config.rootpath / AUDIT_MODULE
    return in_module and "audit" in getattr(item, "fixturenames", ())


class _RecordedBesideTheAudit(LoadGroupScheduling):
    """--dist loadgroup, the recorded tests in GROUP when the audit's tests are in the session."""

    _audited = False

    def schedule(self) -> None:
        if self.collection is None and self.collection_is_completed:
            nodeids = next(iter(self.registered_collections.values()), [])
            group_of = super()._split_scope  # by the marks alone
            self._audited = any(group_of(n) == GROUP for n in nodeids)
        super().schedule()

    def _split_scope(self, nodeid: str) -> str:
        return GROUP if self._audited and recorded(nodeid) else super()._split_scope(nodeid)


@pytest.hookimpl(optionalhook=True)  # a session without pytest-xdist has no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") == "loadgroup":
        return _RecordedBesideTheAudit(config, log)
    return None
