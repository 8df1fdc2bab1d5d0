"""Regenerate core/vllm/vllm_flags.json, the command-line flags of the worker images' vLLM, from vLLM's
own source: vllm/engine/arg_utils.py (the engine's flags) and vllm/entrypoints/openai/cli_args.py
(the OpenAI server's), parsed with `ast` (vLLM is never imported).

  python scripts/extract_vllm_args.py --check                 # exit 1 if core/vllm/vllm_flags.json
                                                              # differs from the recorded source
  python scripts/extract_vllm_args.py --source vllm-0.19.0-cp38-abi3-manylinux_2_31_x86_64.whl \
      --version 0.19.0 --record                               # a new pin: read a wheel (or a
                                                              # checkout), record its two files

The recorded copies (gzipped, Apache-2.0 like all of vLLM) live in tests/core/vllm/vllm_source/, so
--check and the test need no network. What each flag takes mirrors vLLM's argparse setup: an
explicit action or nargs wins; otherwise the flag's field type as vLLM's get_kwargs reads it
(bool: no value, with a --no- twin from BooleanOptionalAction; list/tuple/set: several words;
anything else: one).
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

OUT = ROOT / "core" / "vllm" / "vllm_flags.json"
RECORDED = ROOT / "tests" / "core" / "vllm" / "vllm_source"
ENGINE = "vllm/engine/arg_utils.py"
SERVING = "vllm/entrypoints/openai/cli_args.py"
NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}


def read_sources(source: Path) -> dict[str, str]:
    """The two files from a wheel, a checkout (or unpacked wheel), or the recorded .gz copies."""
    texts = {}
    for path in (ENGINE, SERVING):
        if source.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(source) as wheel:
                texts[path] = wheel.read(path).decode()
        elif (source / path).is_file():
            texts[path] = (source / path).read_text()
        else:
            texts[path] = gzip.decompress(
                (source / (Path(path).name + ".gz")).read_bytes()
            ).decode()
    return texts


def _members(annotation: ast.expr) -> list[ast.expr]:
    """The members of a union annotation (X | Y, Optional[X], Union[X, Y])."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _members(annotation.left) + _members(annotation.right)
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in (
        "Optional",
        "Union",
    ):
        inner = annotation.slice
        return [m for e in getattr(inner, "elts", [inner]) for m in _members(e)]
    return [annotation]


def kind_of_type(annotation: ast.expr) -> str:
    """What vLLM's get_kwargs makes of a field's type: 'none', 'several' or 'one'."""
    members = _members(annotation)
    if any(ast.unparse(m) == "bool" for m in members):
        return "none"
    for m in members:
        if isinstance(m, ast.Subscript) and ast.unparse(m.value) in ("list", "tuple", "set"):
            return "several"
    return "one"


def _fields(tree: ast.Module, name: str) -> dict[str, ast.expr]:
    """The annotated fields of class `name` and of its bases defined in the same file."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    if name not in classes:
        raise SystemExit(f"error: class {name} not found: vLLM's layout changed")
    cls, fields = classes[name], {}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            fields.update(_fields(tree, base.id))
    for node in cls.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and not ast.unparse(node.annotation).startswith("ClassVar")
        ):
            fields[node.target.id] = node.annotation
    return fields


def _method(tree: ast.Module, cls: str | None, name: str) -> ast.FunctionDef:
    scope = tree.body
    if cls is not None:
        scope = next(
            (n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), []
        )
    for node in scope:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise SystemExit(f"error: {cls or 'module'}.{name} not found: vLLM's layout changed")


def _kwargs_field(node: ast.expr) -> str | None:
    """`**x_kwargs["field"]` (or a dict spreading it) -> 'field'."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    if isinstance(node, ast.Dict):
        return next(
            (f for v in node.values if v is not None for f in [_kwargs_field(v)] if f), None
        )
    return None


def _add_argument_calls(function: ast.FunctionDef, engine_fields: dict[str, ast.expr]):
    """(option strings, kind) of each add_argument call in `function`, in source order."""
    calls = [
        n
        for n in ast.walk(function)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "add_argument"
    ]
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        names = [a.value for a in call.args if isinstance(a, ast.Constant)]
        if not names or not str(names[0]).startswith("-"):
            continue  # a positional (model_tag): no flag
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        spread = [_kwargs_field(k.value) for k in call.keywords if k.arg is None]
        if "action" in keywords:
            action = ast.unparse(keywords["action"]).strip("'\"")
            boolean = action.endswith("BooleanOptionalAction")
            kind = "none" if boolean or action in NO_VALUE_ACTIONS else "one"
        elif "nargs" in keywords:
            nargs = ast.literal_eval(keywords["nargs"])
            kind = {"?": "optional", 1: "one"}.get(nargs, "several")
            boolean = False
        else:
            field = next((f for f in spread if f), None)
            long = next(n for n in names if n.startswith("--"))
            candidates = (field, long[2:].replace("-", "_"))
            annotation = next((engine_fields[c] for c in candidates if c in engine_fields), None)
            if field and annotation is None:
                raise SystemExit(f"error: no EngineArgs field for {long} ({field})")
            kind = kind_of_type(annotation) if annotation is not None else "one"
            boolean = kind == "none" and field is not None  # get_kwargs: BooleanOptionalAction
        yield names, kind, boolean


def _customized(function: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """Fields whose nargs `_customize_cli_kwargs` deletes, or whose action it sets to append."""
    dropped, appended = set(), set()
    for node in ast.walk(function):
        targets = node.targets if isinstance(node, ast.Delete | ast.Assign) else []
        for t in targets:
            text = ast.unparse(t)
            if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Subscript)):
                continue
            field = t.value.slice.value if isinstance(t.value.slice, ast.Constant) else None
            if isinstance(node, ast.Delete) and text.endswith("['nargs']"):
                dropped.add(field)
            elif (
                isinstance(node, ast.Assign)
                and text.endswith("['action']")
                and ast.unparse(node.value) == "'append'"
            ):
                appended.add(field)
    return dropped, appended


def extract(texts: dict[str, str], version: str) -> dict:
    engine, serving = ast.parse(texts[ENGINE]), ast.parse(texts[SERVING])
    fields = {**_fields(engine, "EngineArgs"), **_fields(engine, "AsyncEngineArgs")}
    flags: dict[str, str] = {}
    aliases: dict[str, str] = {}

    def add(names: list[str], kind: str, boolean: bool) -> None:
        long = next(n for n in names if n.startswith("--"))
        flags[long] = kind
        if boolean:
            flags["--no-" + long[2:]] = "none"
        aliases.update({n: long for n in names if not n.startswith("--")})

    for function in (
        _method(engine, "EngineArgs", "add_cli_args"),
        _method(engine, "AsyncEngineArgs", "add_cli_args"),
        _method(serving, None, "make_arg_parser"),
    ):
        for names, kind, boolean in _add_argument_calls(function, fields):
            add(names, kind, boolean)
    dropped: set[str] = set()
    appended: set[str] = set()
    for cls in ("BaseFrontendArgs", "FrontendArgs"):
        d, a = _customized(_method(serving, cls, "_customize_cli_kwargs"))
        dropped, appended = dropped | d, appended | a
    for name, annotation in _fields(serving, "FrontendArgs").items():
        kind = kind_of_type(annotation)
        if name in dropped | appended:
            kind = "one"
        add(["--" + name.replace("_", "-")], kind, kind == "none")
    return {
        "vllm": version,
        "source": {p: hashlib.sha256(t.encode()).hexdigest() for p, t in sorted(texts.items())},
        "kinds": "none: no value; one: one word; optional: one word or none; several: 1+ words",
        "batch_defaults": batch_defaults(engine),
        "aliases": dict(sorted(aliases.items())),
        "flags": dict(sorted(flags.items())),
    }


def _server_value(branch: list[ast.stmt], target: str) -> int:
    """The OPENAI_API_SERVER entry of the dict `branch` assigns to `target`."""
    for node in branch:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == target:
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if ast.unparse(key) == "UsageContext.OPENAI_API_SERVER":
                    return ast.literal_eval(value)
    raise ValueError(f"no OPENAI_API_SERVER {target} in get_batch_defaults' branch")


def batch_defaults(engine: ast.Module) -> dict:
    """`vllm serve`'s defaults of --max-num-batched-tokens and --max-num-seqs on a GPU, from
    EngineArgs.get_batch_defaults: the larger ones for a device of at least `large_gpu_gib`
    GiB whose name does not hold `not_named` (A100: vllm-project/vllm#17885), else the others."""
    function = _method(engine, "EngineArgs", "get_batch_defaults")
    test = next(
        n
        for n in ast.walk(function)
        if isinstance(n, ast.If) and "device_memory" in ast.unparse(n.test)
    )
    memory, name = test.test.values  # device_memory >= N * GiB_bytes and "a100" not in ...
    gib = ast.literal_eval(memory.comparators[0].left)
    not_named = ast.literal_eval(name.left)
    values = {
        which: {
            field: _server_value(branch, f"default_{field}")
            for field in ("max_num_batched_tokens", "max_num_seqs")
        }
        for which, branch in (("large", test.body), ("other", test.orelse))
    }
    return {"large_gpu_gib": gib, "not_named": not_named, **values}


def render(data: dict) -> str:
    """One flag a line, so a new vLLM pin shows as a readable diff."""
    head = {k: v for k, v in data.items() if k not in ("aliases", "flags")}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    for section in ("aliases", "flags"):
        items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in data[section].items()]
        lines += [
            f'  "{section}": {{',
            ",\n".join(items),
            "  }" + ("," if section == "aliases" else ""),
        ]
    return "\n".join([*lines, "}"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, RECORDED, OUT, "also record the two files (.gz)", argv)
    texts = read_sources(args.source)
    text = render(extract(texts, args.version))
    done = check_or_write(args, text, "extract_vllm_args.py", RECORDED, texts)
    if done is not None:
        return done
    print(f"wrote {args.out}: {len(json.loads(text)['flags'])} flags of vLLM {args.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
