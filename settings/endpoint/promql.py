"""A user's own autoscaling query, parsed at plan time: it must be PromQL and give KEDA one series.

KEDA's prometheus scaler (kedacore/keda pkg/scalers/prometheus_scaler.go, ExecutePromQuery)
reads the query's result as an instant vector: more than one element is an error ("returned
multiple elements") and the pool stops scaling; a scalar or string result does not decode as a
vector at all. So a query is refused unless, by its shape, it returns at most one series: an
aggregation without `by`/`without`, `vector(…)`, `absent(…)`, functions and arithmetic of those.

A query that parses and gives one series can still read nothing: a `vllm:` series the pinned vLLM
does not export (core/vllm/vllm_metrics.json, generated from its source: a name from another vLLM
release, a counter without `_total`, a histogram without `_bucket`), or a matcher holding a Grafana
dashboard variable (`$namespace`, `${pod}`, `[[var]]`), which only Grafana substitutes. KEDA's
prometheus scaler reads an empty result as 0 (ignoreNullValues, true by default): the pool never
scales out, with nothing logged. Both are refused; series of other exporters are not judged.

Parsed with promql-parser (PyPI; Python bindings of GreptimeTeam's promql-parser crate, which
follows Prometheus' own grammar) rather than promtool: the plan runs where Prometheus is not
installed, and promtool checks syntax only, not a query's shape. The tests hold it to the real
Prometheus (tests/specs/test_queries_on_prometheus.py).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator

import promql_parser as pq

from core.problems import ConfigProblem
from core.vllm.vllm_metrics import exported_series, vllm_metrics, vllm_metrics_version

ONE, SEVERAL, SCALAR, STRING, RANGE = "one", "several", "scalar", "string", "range"
# Aggregations whose result keeps some of their input's series rather than one per group.
_KEEPING = {"topk", "bottomk", "limitk", "limit_ratio"}
_ONE_SERIES_CALLS = {"vector", "absent", "absent_over_time"}
EXAMPLE = 'sum(vllm:num_requests_running{namespace="<namespace>"})'
VLLM_PREFIX = "vllm:"
# Grafana's variable syntaxes: $name, ${name} (with an optional :format), [[name]].
DASHBOARD_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]\w*|\[\[[^\]]*\]\]")


def series_of(expr: pq.Expr) -> str:
    """What the expression evaluates to: ONE (at most one series), SEVERAL, or a SCALAR, STRING
    or RANGE (not an instant vector)."""
    if isinstance(expr, pq.NumberLiteral):
        return SCALAR
    if isinstance(expr, pq.StringLiteral):
        return STRING
    if isinstance(expr, pq.ParenExpr | pq.UnaryExpr):
        return series_of(expr.expr)
    if isinstance(expr, pq.VectorSelector):
        return SEVERAL
    if isinstance(expr, pq.MatrixSelector | pq.SubqueryExpr):
        return RANGE
    if isinstance(expr, pq.AggregateExpr):
        return _aggregate(expr)
    if isinstance(expr, pq.Call):
        return _call(expr)
    if isinstance(expr, pq.BinaryExpr):
        return _binary(expr)
    return SEVERAL  # an expression type this module does not know: assume the worst


def _aggregate(expr: pq.AggregateExpr) -> str:
    op = str(expr.op)
    m = expr.modifier
    grouped = m is not None and (m.type == pq.AggModifierType.Without or bool(m.labels))
    if op == "count_values" or grouped:
        return SEVERAL
    if op in _KEEPING:
        k = expr.param
        one_k = isinstance(k, pq.NumberLiteral) and k.val <= 1
        return ONE if one_k or _inner(expr.expr) == ONE else SEVERAL
    return ONE


def _inner(expr: pq.Expr) -> str:
    """A function argument's series: a range's are those of the selector it ranges over."""
    if isinstance(expr, pq.MatrixSelector):
        return SEVERAL
    if isinstance(expr, pq.SubqueryExpr):
        return series_of(expr.expr)
    return series_of(expr)


def _call(expr: pq.Call) -> str:
    if expr.func.return_type == pq.ValueType.Scalar:
        return SCALAR
    if expr.func.name in _ONE_SERIES_CALLS:
        return ONE
    if expr.func.name == "histogram_quantile" and _by_le_only(expr.args[-1]):
        return ONE  # the buckets' `le` is what it folds: one series per other label set
    kinds = [_inner(a) for a in expr.args]
    vectors = [k for k in kinds if k in (ONE, SEVERAL)]
    return SEVERAL if SEVERAL in vectors else ONE


def _by_le_only(expr: pq.Expr) -> bool:
    """`sum by (le) (…)` (in parentheses or not): one series per bucket bound, nothing else."""
    while isinstance(expr, pq.ParenExpr):
        expr = expr.expr
    m = getattr(expr, "modifier", None)
    return (
        isinstance(expr, pq.AggregateExpr)
        and m is not None
        and m.type == pq.AggModifierType.By
        and set(m.labels) <= {"le"}
        and str(expr.op) not in _KEEPING | {"count_values"}
    )


def _binary(expr: pq.BinaryExpr) -> str:
    left, right = series_of(expr.lhs), series_of(expr.rhs)
    if STRING in (left, right) or RANGE in (left, right):
        return STRING if STRING in (left, right) else RANGE
    if left == SCALAR:
        return right
    if right == SCALAR:
        return left
    return ONE if left == right == ONE else SEVERAL


def check_query(query: str, key: str) -> list[ConfigProblem]:
    """Problems of `query` at config key `key` (…autoscaling….query): [] when KEDA can use it."""
    try:
        expr = pq.parse(query)
    except ValueError as exc:
        return [
            ConfigProblem(
                key,
                query,
                f"a PromQL expression (the parser says: {exc})",
                f"write a query Prometheus parses, e.g. {_write(key, EXAMPLE)}",
            )
        ]
    kind = series_of(expr)
    if kind == ONE:
        return _check_selectors(expr, query, key)
    if kind == SEVERAL:
        allowed = (
            "a query that returns one series: KEDA's prometheus scaler fails on several "
            '("returned multiple elements") and the pool stops scaling'
        )
        fix = f"aggregate it to one series (no by/without): {_write(key, f'sum({query})')}"
    else:
        allowed = (
            f"an instant-vector query (this one gives a {kind}, which KEDA's prometheus "
            "scaler cannot read as a vector)"
        )
        wrapped = f"vector({query})" if kind == SCALAR else EXAMPLE
        fix = _write(key, wrapped) + (
            "" if kind == SCALAR else " (a range such as x[5m] goes inside rate(…) and sum(…))"
        )
    return [ConfigProblem(key, query, allowed, fix)]


def _selectors(expr: pq.Expr) -> Iterator[pq.VectorSelector]:
    """Every instant-vector selector of `expr`, ranges' included."""
    if isinstance(expr, pq.VectorSelector):
        yield expr
        return
    for name in ("expr", "param", "lhs", "rhs", "vector_selector"):
        child = getattr(expr, name, None)
        if isinstance(child, pq.Expr):
            yield from _selectors(child)
    for arg in getattr(expr, "args", None) or ():
        yield from _selectors(arg)


def _matchers(selector: pq.VectorSelector) -> list[pq.Matcher]:
    groups = selector.matchers
    return [*groups.matchers, *(m for group in groups.or_matchers or () for m in group)]


def _name(selector: pq.VectorSelector) -> str | None:
    """The metric a selector reads: its name, or a `__name__="..."` matcher's."""
    if selector.name:
        return selector.name
    named = [
        m.value for m in _matchers(selector) if m.name == "__name__" and m.op == pq.MatchOp.Equal
    ]
    return named[0] if named else None


def _check_selectors(expr: pq.Expr, query: str, key: str) -> list[ConfigProblem]:
    """A series the pinned vLLM exports for every `vllm:` name; no dashboard variable."""
    problems = []
    exported = exported_series()
    for selector in _selectors(expr):
        name = _name(selector)
        if name and name.startswith(VLLM_PREFIX) and name not in exported:
            metric = vllm_metrics().get(name)  # a metric named without its series' suffix
            close = (
                [metric.samples[0]]
                if metric
                else difflib.get_close_matches(name, sorted(exported), n=1, cutoff=0.6)
            )
            fixed = _rename(query, name, close[0]) if close else EXAMPLE
            hint = f"did you mean {close[0]}? " if close else ""
            problems.append(ConfigProblem(
                key, query,
                f"a query over series the worker image's vLLM {vllm_metrics_version()} exports "
                f"(core/vllm/vllm_metrics.json, from its source): {name} is none of them, so "
                "the query returns nothing, KEDA's prometheus scaler reads the empty result as "
                "0 (ignoreNullValues) and the pool never scales out",
                f"{hint}{_write(key, fixed)}",
            ))  # fmt: skip
        for matcher in _matchers(selector):
            found = DASHBOARD_VARIABLE.search(matcher.value)
            if found:
                problems.append(ConfigProblem(
                    key, query,
                    f"label values, not dashboard variables: {matcher.name} holds "
                    f"{found.group(0)}, which only Grafana substitutes; KEDA sends the query as "
                    "written, it matches no series, and an empty result reads as 0 "
                    "(ignoreNullValues): the pool never scales out",
                    f"write the value itself in place of {found.group(0)}, e.g. "
                    + _write(key, query.replace(found.group(0), _example_value(matcher.name))),
                ))  # fmt: skip
    return problems


def _rename(query: str, name: str, to: str) -> str:
    """`query` with the metric `name` (not a longer name it begins) written `to`."""
    return re.sub(rf"(?<![\w:]){re.escape(name)}(?![\w:])", to, query)


def _example_value(label: str) -> str:
    return {"namespace": "inference"}.get(label, "<value>")


def _write(key: str, query: str) -> str:
    """The edit that sets `key` to `query` (YAML takes a JSON string as it is)."""
    return f"in Pulumi.<stack>.yaml set {key} to {json.dumps(query)}"
