"""Regenerate core/vllm/vllm_metrics.json, the Prometheus series the worker images' vLLM exports, from
vLLM's own source: vllm/v1/metrics/loggers.py (PrometheusStatLogger, the engine's /metrics),
parsed with `ast` (vLLM is never imported).

  python scripts/extract_vllm_metrics.py --check              # exit 1 if core/vllm/vllm_metrics.json
                                                              # differs from the recorded source
  python scripts/extract_vllm_metrics.py --source vllm-0.19.0-cp38-abi3-manylinux_2_31_x86_64.whl \
      --version 0.19.0 --record                               # a new pin: read a wheel (or a
                                                              # checkout), record its file

The recorded copy (gzipped, Apache-2.0 like all of vLLM) lives in tests/core/vllm/vllm_source/ beside
the flags' sources (scripts/extract_vllm_args.py), so --check and the test need no network.

Each metric is one `self._gauge_cls(...)`, `self._counter_cls(...)` or `self._histogram_cls(...)`
call of PrometheusStatLogger: its `name=` (a literal, or a name assigned a literal in the same
method), its type, its `labelnames=` (a list of literals, `labelnames` and `+` as the method
builds them, `self.<attribute>` assigned a literal in the class; None where vLLM computes them
at run time), its `documentation=`, and the conditions it is created under (the `if` tests
around the call, as source text: a metric with none is always exported). `samples` are the
series names the text exposition carries, as prometheus_client writes them
(prometheus_client/metrics.py: a Counter's name loses a trailing `_total` and its sample gains
one; a Histogram's samples are `_bucket` (with label `le`), `_sum` and `_count`; the `_created`
series of both are left out, nothing queries them). A histogram's `buckets` are its `buckets=`
bounds as vLLM passes them: a list of number literals (directly, or a name the method assigns
one), else the call's source text (`build_1_2_5_buckets(max_model_len)`: computed at run time);
the alert rules judge an objective against them (settings/endpoint/slo.py).
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a file from any directory, installed or not

from scripts.vllm_generated import check_or_write, parse_args  # noqa: E402

OUT = ROOT / "core" / "vllm" / "vllm_metrics.json"
RECORDED = ROOT / "tests" / "core" / "vllm" / "vllm_source"
LOGGERS = "vllm/v1/metrics/loggers.py"
LOGGER_CLASS = "PrometheusStatLogger"
KINDS = {"_gauge_cls": "gauge", "_counter_cls": "counter", "_histogram_cls": "histogram"}


def read_source(source: Path) -> str:
    """loggers.py from a wheel, a checkout (or unpacked wheel), or the recorded .gz copy."""
    if source.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(source) as wheel:
            return wheel.read(LOGGERS).decode()
    if (source / LOGGERS).is_file():
        return (source / LOGGERS).read_text()
    return gzip.decompress((source / (Path(LOGGERS).name + ".gz")).read_bytes()).decode()


def samples(name: str, kind: str) -> list[str]:
    """The series names prometheus_client's text exposition gives a metric `name` of `kind`."""
    if kind == "counter":
        return [name.removesuffix("_total") + "_total"]
    if kind == "histogram":
        return [f"{name}_bucket", f"{name}_sum", f"{name}_count"]
    return [name]


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise SystemExit(f"error: class {name} not found in {LOGGERS}: vLLM's layout changed")


def _self_attributes(cls: ast.ClassDef) -> dict[str, str]:
    """`self.x = "literal"` anywhere in the class: x -> literal."""
    found = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for t in node.targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and isinstance(node.value.value, str)
                ):
                    found[t.attr] = node.value.value
    return found


def _locals(method: ast.FunctionDef) -> dict[str, ast.expr]:
    """Names the method assigns (the last assignment wins, as for straight-line code)."""
    found: dict[str, ast.expr] = {}
    for node in ast.walk(method):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    found[t.id] = node.value
    return found


def _text(node: ast.expr | None, names: dict[str, ast.expr]) -> str | None:
    """A string literal, directly or through one local name."""
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _labels(
    node: ast.expr | None, names: dict[str, ast.expr], attrs: dict[str, str]
) -> list[str] | None:
    """The label names of `labelnames=`; None where vLLM computes them at run time."""
    if node is None:
        return []
    if isinstance(node, ast.Name):
        return _labels(names.get(node.id), names, attrs) if node.id in names else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _labels(node.left, names, attrs), _labels(node.right, names, attrs)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.List | ast.Tuple):
        out = []
        for element in node.elts:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                out.append(element.value)
            elif (
                isinstance(element, ast.Attribute)
                and isinstance(element.value, ast.Name)
                and element.value.id == "self"
                and element.attr in attrs
            ):
                out.append(attrs[element.attr])
            else:
                return None
        return out
    return None


def _buckets(node: ast.expr | None, names: dict[str, ast.expr]) -> list[float] | str | None:
    """A histogram's bounds: number literals (directly or through one local name), else the
    source text of what computes them; None without `buckets=` (prometheus_client's defaults)."""
    if node is None:
        return None
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.List | ast.Tuple) and all(
        isinstance(e, ast.Constant) and type(e.value) in (int, float) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return ast.unparse(node)


def _calls(node: ast.AST, conditions: tuple[str, ...]):
    """(call, enclosing if-conditions) of every metric constructor under `node`."""
    if isinstance(node, ast.If):
        test = ast.unparse(node.test)
        for child in node.body:
            yield from _calls(child, (*conditions, test))
        for child in node.orelse:
            yield from _calls(child, (*conditions, f"not ({test})"))
        return
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in KINDS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    ):
        yield node, conditions
    for child in ast.iter_child_nodes(node):
        yield from _calls(child, conditions)


def extract(text: str, version: str) -> dict:
    tree = ast.parse(text)
    cls = _class(tree, LOGGER_CLASS)
    attrs = _self_attributes(cls)
    metrics: dict[str, dict] = {}
    for method in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
        names = _locals(method)
        for call, conditions in _calls(method, ()):
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            name = _text(keywords.get("name"), names)
            if name is None:
                raise SystemExit(
                    f"error: {LOGGERS}:{call.lineno}: a metric whose name is not a literal"
                )
            kind = KINDS[call.func.attr]  # type: ignore[union-attr]
            doc = keywords.get("documentation")
            if name in metrics:
                raise SystemExit(f"error: {LOGGERS}:{call.lineno}: {name} created twice")
            metrics[name] = {
                "type": kind,
                "labels": _labels(keywords.get("labelnames"), names, attrs),
                "help": _text(doc, names) if doc is not None else "",
                "when": list(conditions),
                "samples": samples(name, kind),
            }
            if kind == "histogram":
                metrics[name]["buckets"] = _buckets(keywords.get("buckets"), names)
    if not metrics:
        raise SystemExit(f"error: no metric found in {LOGGER_CLASS}: vLLM's layout changed")
    return {
        "vllm": version,
        "source": {LOGGERS: hashlib.sha256(text.encode()).hexdigest()},
        "fields": "type: gauge|counter|histogram; labels: vLLM's own (null: set at run time); "
        "when: the conditions it is created under (none: always); samples: the exposed series; "
        "buckets (histograms): the bounds vLLM passes (text: computed at run time)",
        "metrics": dict(sorted(metrics.items())),
    }


def render(data: dict) -> str:
    """One metric a line, so a new vLLM pin shows as a readable diff."""
    head = {k: v for k, v in data.items() if k != "metrics"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in data["metrics"].items()]
    lines += ['  "metrics": {', ",\n".join(items), "  }"]
    return "\n".join([*lines, "}"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, RECORDED, OUT, "also record loggers.py (.gz)", argv)
    text = read_source(args.source)
    rendered = render(extract(text, args.version))
    done = check_or_write(args, rendered, "extract_vllm_metrics.py", RECORDED, {LOGGERS: text})
    if done is not None:
        return done
    print(
        f"wrote {args.out}: {len(json.loads(rendered)['metrics'])} metrics of vLLM {args.version}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
