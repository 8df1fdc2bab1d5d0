"""Every command's JSON output in one style: camelCase keys (plan.json's; the test over every
command's JSON holds them to it) and numbers as a person would write them. Arithmetic leaves
floats such as 1000.0000000000001 (1000 tokens/s from a rate times a window); a pipeline
comparing `== 1000` or a reader of the output should not meet them.

`rounded` keeps 4 decimal places of a number of 1 or more, and 4 significant digits of a smaller
one (an error rate of 0.001667, a p-value of 6.1e-74); integers and booleans pass unchanged.
"""

from __future__ import annotations

import json
import math
from typing import Any

DIGITS = 4


def rounded(value: Any) -> Any:
    """`value` (any JSON-able structure) with every float rounded as the module says."""
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0:
            return value
        if abs(value) >= 1:
            return round(value, DIGITS)
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v) for v in value]
    return value


def dumps(document: Any, **options: Any) -> str:
    """`json.dumps` of `document` with its floats rounded, indented as every command prints."""
    return json.dumps(rounded(document), **{"indent": 2, **options})
