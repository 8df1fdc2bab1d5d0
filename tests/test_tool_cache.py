"""The suite's cache of real tools' answers (tests/support/tool_cache.py): a key nobody answered runs the
tool, once for all the cases it lacks; the same key reads the answer back; a failing verdict is
never kept."""

from __future__ import annotations

from tests.support.tool_cache import kept, kept_each, key


class Tool:
    """A stand-in for a real tool that counts what it is asked: it passes every case but "bad"."""

    def __init__(self):
        self.asked: list[list[str]] = []

    def __call__(self, cases: list[str]) -> dict[str, str]:
        self.asked.append(sorted(cases))
        return {case: "FAILED: bad" if case == "bad" else "SUCCESS" for case in cases}


def _passed(verdict: str) -> bool:
    return verdict == "SUCCESS"


def test_only_cases_never_answered_reach_the_tool_once_for_all(tmp_path):
    tool = Tool()
    keys = {"a": key("v1", "rule", "a"), "b": key("v1", "rule", "b")}
    first = kept_each("t", keys, tool, _passed, tmp_path)
    again = kept_each("t", keys | {"c": key("v1", "rule", "c")}, tool, _passed, tmp_path)
    assert first == {"a": "SUCCESS", "b": "SUCCESS"}
    assert again == {"a": "SUCCESS", "b": "SUCCESS", "c": "SUCCESS"}
    assert tool.asked == [["a", "b"], ["c"]]


def test_a_change_of_tool_or_input_asks_the_tool_again(tmp_path):
    tool = Tool()
    kept_each("t", {"a": key("v1", "rule", "a")}, tool, _passed, tmp_path)
    kept_each("t", {"a": key("v2", "rule", "a")}, tool, _passed, tmp_path)  # another version
    kept_each("t", {"a": key("v1", "rule!", "a")}, tool, _passed, tmp_path)  # another input
    kept_each("t", {"a": key("v1", "rule", "a")}, tool, _passed, tmp_path)
    assert tool.asked == [["a"], ["a"], ["a"]]


def test_a_failing_verdict_is_asked_again_each_time(tmp_path):
    tool = Tool()
    keys = {"bad": key("v1", "bad"), "a": key("v1", "a")}
    for _ in range(2):
        assert kept_each("t", keys, tool, _passed, tmp_path)["bad"] == "FAILED: bad"
    assert tool.asked == [["a", "bad"], ["bad"]]


def test_one_answer_and_keys_that_cannot_collide(tmp_path):
    asked = []

    def lint():
        asked.append(1)
        return []

    assert kept("lint", key("x"), lint, lambda found: found == [], tmp_path) == []
    assert kept("lint", key("x"), lint, lambda found: found == [], tmp_path) == []
    assert asked == [1]
    assert key("ab", "c") != key("a", "bc")  # parts are length-prefixed
