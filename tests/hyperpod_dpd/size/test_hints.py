"""Every hint `hyperpod-dpd size` prints leads to success in one step: over a grid of models,
instance types, TPs, context lengths, buffers and utilizations, each option of each refusal,
followed as written (tests/fix_hints/flags.py), sizes with exit 0; the TP named is the smallest
that does; no range printed is empty."""

from __future__ import annotations

import contextlib
import io
import itertools
import re

import pytest

from core.sizing.catalog import INSTANCES, MODELS
from hyperpod_dpd.cli import main
from tests.fix_hints.flags import follow, options

GRID = [
    ["--model", model, "--instance-type", instance, "--tp", tp, *more]
    for model, instance, tp, more in itertools.product(
        ["llama-3.3-70b", "llama-3.1-405b", "llama-3.1-8b"],
        ["ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p6-b200.48xlarge"],
        ["1", "2", "4", "8"],
        [[], ["--max-model-len", "65536"], ["--pd-buffer", "24GiB"],
         ["--gpu-memory-utilization", "0.95"], ["--gpu-memory-utilization", "0.3"]],
    )
    if model in MODELS and instance in INSTANCES
]  # fmt: skip


def _size(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["size", *argv])
    return code, err.getvalue()


def _advice(err: str) -> list[str]:
    """The advice of each refusal: what follows the last '; ' of an `error:` line."""
    return [line.rsplit("; ", 1)[1] for line in err.splitlines() if line.startswith("error:")]


@pytest.fixture(scope="module")
def refusals() -> list[tuple[list[str], str]]:
    found = []
    for argv in GRID:
        code, err = _size(argv)
        if code == 2 and "cannot start" in err:
            found += [(argv, advice) for advice in dict.fromkeys(_advice(err))]
    return found


def test_the_grid_meets_many_refusals(refusals):
    assert len(refusals) >= 40, len(refusals)


def test_every_option_followed_once_sizes(refusals):
    broken, followed = [], 0
    for argv, advice in refusals:
        head = advice.split("): ", 1)[-1]  # "no --gpu-memory-utilization works (...): " before
        for option in options(head):
            for fixed in follow(argv, option) or []:
                code, err = _size(fixed)
                followed += 1
                if code != 0:
                    broken.append(f"size {' '.join(argv)}\n  followed {option!r}: exit {code} "
                                  f"{err[:400]}")  # fmt: skip
    assert not broken, "\n".join(broken[:10])
    assert followed >= 60, followed


def test_the_tp_named_is_the_smallest_that_works(refusals):
    for argv, advice in refusals:
        m = re.search(r"raise --tp to (\d+)", advice)
        if not m:
            continue
        named = int(m[1])
        tp = int(argv[argv.index("--tp") + 1])
        for smaller in range(tp + 1, named):
            fixed = follow(argv, f"raise --tp to {smaller}")[0]
            code, _ = _size(fixed)
            assert code != 0, f"size {' '.join(argv)}: --tp {smaller} works, hint says {named}"


def test_no_empty_range_is_printed(refusals):
    for _, advice in refusals:
        for low, high in re.findall(r"([0-9]\.[0-9]+)-([0-9]\.[0-9]+)", advice):
            assert float(low) <= float(high), advice
        for low, high in re.findall(r"between ([0-9.]+) and ([0-9.]+)", advice):
            assert float(low) < float(high), advice


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--tp", "1"], "raise --tp to 4"),  # 4 works on H100, not only 8
        (["--tp", "1", "--instance-type", "ml.p5e.48xlarge"], "raise --tp to 2"),
    ],
)
def test_the_issues_cases(argv, expected):
    code, err = _size(argv)
    assert code == 2 and expected in err, err
