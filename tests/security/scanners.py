"""checkov and parliament over the dev, prod and canary plans, each finding keyed so the reviewed
list (tests/security/reviewed.yaml) can name it.

Both run in build/scan-venv (requirements-scan.txt; `make scan-venv`, which `make test` runs
first): checkov pins boto3 against the project's and parliament needs pkg_resources, so neither
fits .venv. checkov judges the manifests of each plan (its Kubernetes framework) and the plan's
AWS resources rendered as a CloudFormation template through tests/cfn/mapping.py (its
CloudFormation framework: the same translation cfn-lint judges). parliament judges every IAM
policy document the plan registers: role policies, managed policies, trust policies, bucket and
key policies.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "build" / "scan-venv"
REQUIREMENTS = ROOT / "requirements-scan.txt"
REVIEWED = Path(__file__).with_name("reviewed.yaml")
STACKS = ("dev", "prod", "canary")
RESOURCE_POLICY_TYPES = ("aws:s3/bucketPolicy:BucketPolicy", "aws:kms/key:Key")


def scan_venv() -> Path:
    """build/scan-venv holding exactly requirements-scan.txt (built once, rebuilt on change)."""
    from hyperpod_dpd.shared.venvs import venv_from

    return venv_from(REQUIREMENTS, VENV)


@dataclass(frozen=True, order=True)
class Found:
    tool: str  # checkov | parliament
    check: str  # CKV_AWS_2, RESOURCE_MISMATCH, ...
    resource: str  # the Pulumi resource's name (checkov k8s: Kind.namespace.name)
    stack: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.tool} {self.check} {self.resource} ({self.stack}): {self.detail}"


def logical_id(name: str, index: int = 0) -> str:
    """A CloudFormation logical id for Pulumi resource `name` (its `index`-th document)."""
    base = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name) if part)
    return base + (f"Part{index}" if index else "")


def template(run, region: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The run's AWS resources as one CloudFormation template, and logical id -> Pulumi name."""
    from tests.cfn.check import PARAMETERS, translate
    from tests.cfn.mapping import MAPPED

    resources: dict[str, Any] = {}
    names: dict[str, str] = {}
    # A bucket's parts (versioning, encryption, ...) and a role's attachments are registered as
    # resources of their own but are properties of one CloudFormation resource: merged into it,
    # so checkov sees the bucket (or role) whole.
    owner: dict[tuple[str, str], str] = {}
    for r in run.resources:
        if r.type not in MAPPED:
            continue
        for i, doc in enumerate(translate(r, region)):
            ident = next(
                (str(doc.props[k]) for k in _WHOLE.get(doc.cfn, ()) if k in doc.props), None
            )
            key = owner.get((doc.cfn, ident)) if ident else None
            if key is not None:
                _merge(resources[key]["Properties"], doc.props)
                continue
            key = logical_id(r.name, i)
            resources[key] = {"Type": doc.cfn, "Properties": json.loads(json.dumps(doc.props))}
            names[key] = r.name
            if ident:
                owner[(doc.cfn, ident)] = key
    text = json.dumps(resources)
    params = {k: v for k, v in PARAMETERS.items() if f'"{k}"' in text}
    out = {"AWSTemplateFormatVersion": "2010-09-09", "Parameters": params, "Resources": resources}
    return out, names


# The property naming the one CloudFormation resource several Pulumi resources are parts of.
_WHOLE = {"AWS::S3::Bucket": ("BucketName",), "AWS::IAM::Role": ("RoleName",)}


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        elif isinstance(v, list) and isinstance(into.get(k), list):
            into[k] = into[k] + [x for x in v if x not in into[k]]
        else:
            into.setdefault(k, v)


CHECKOV_OPTIONS = ("-o", "json", "--quiet", "--compact", "--skip-download")
PARLIAMENT = Path(__file__).with_name("run_parliament.py")


def _checkov(directory: Path, *frameworks: str) -> list[dict[str, Any]]:
    python = scan_venv() / "bin" / "checkov"
    # One process: by default checkov forks a worker per core to parse files and run checks,
    # which on a few hundred small files costs more CPU (the forks, the results pickled back)
    # than it saves (checkov/common/parallelizer/parallel_runner.py reads this variable).
    env = os.environ | {"CHECKOV_PARALLELIZATION_TYPE": "none"}
    done = subprocess.run(
        [str(python), "-d", str(directory), "--framework", *frameworks, *CHECKOV_OPTIONS],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise RuntimeError(f"checkov failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout or "{}")
    reports = report if isinstance(report, list) else [report]
    return [
        c | {"framework": rep.get("check_type")}
        for rep in reports
        for c in rep.get("results", {}).get("failed_checks", [])
    ]


def _region(run) -> str:
    return next(
        (r.inputs["region"] for r in run.resources if r.type == "pulumi:providers:aws-native"),
        "us-east-1",
    )


def _write_template(run, directory: Path) -> dict[str, str]:
    """The run's CloudFormation template into `directory`; logical id -> Pulumi name."""
    cfn, names = template(run, _region(run))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "template.json").write_text(json.dumps(cfn, indent=1))
    return names


def _write_manifests(manifests: dict[str, Any], directory: Path) -> None:
    """Each manifest as the plan writes it (build/plan/<stack>/manifests/): its multi-line
    strings (the staging code's ConfigMap) as literal blocks, which checkov's pure-Python YAML
    reader takes in lines rather than character by character as it reads quoted strings."""
    from hyperpod_dpd.plan.planner import render_manifest

    directory.mkdir(parents=True, exist_ok=True)
    for file, manifest in manifests.items():
        (directory / file).write_text(render_manifest(manifest))


def _found(check: dict[str, Any], stack: str, names: dict[str, str]) -> Found:
    """One checkov failed check: a CloudFormation resource by its Pulumi name, a Kubernetes one
    as checkov names it (Kind.namespace.name)."""
    resource = check["resource"]
    if check["framework"] == "cloudformation":
        logical = resource.rsplit(".", 1)[-1]
        resource = names.get(logical, logical)
    return Found("checkov", check["check_id"], resource, stack, check.get("check_name", ""))


def checkov_findings(stack: str, run, manifests: dict[str, Any], workdir: Path) -> list[Found]:
    names = _write_template(run, workdir / "cfn")
    found = [_found(c, stack, names) for c in _checkov(workdir / "cfn", "cloudformation")]
    return found + checkov_kubernetes(stack, manifests, workdir)


def checkov_kubernetes(stack: str, manifests: dict[str, Any], workdir: Path) -> list[Found]:
    """checkov's Kubernetes checks on a plan's manifests."""
    _write_manifests(manifests, workdir / "k8s")
    return [_found(c, stack, {}) for c in _checkov(workdir / "k8s", "kubernetes")]


@dataclass(frozen=True)
class Scanned:
    """A plan to scan: its stack's name, its program run (None: its manifests alone) and its
    manifests."""

    stack: str
    run: Any
    manifests: dict[str, Any]


def scan(plans: dict[str, Scanned], workdir: Path) -> dict[str, list[Found]]:
    """Both scanners over several plans at once, each finding under its plan's label: what
    checkov_findings and parliament_findings find for each plan, with one start of each tool
    (checkov takes seconds to start and load its checks, more than it takes to judge a plan)."""
    names: dict[str, dict[str, str]] = {}
    for label, plan in plans.items():
        if plan.run is not None:
            names[label] = _write_template(plan.run, workdir / label / "cfn")
        _write_manifests(plan.manifests, workdir / label / "k8s")
    documents = {label: policy_documents(p.run) for label, p in plans.items() if p.run is not None}
    said = _both_tools(workdir, documents)
    found: dict[str, list[Found]] = {label: [] for label in plans}
    for check in said["checkov"]:
        label = Path(check["file_path"].lstrip("/")).parts[0]  # /<label>/cfn/template.json
        found[label].append(_found(check, plans[label].stack, names.get(label, {})))
    for label, f in _parliament_found(said["parliament"]):
        found[label].append(Found(f.tool, f.check, f.resource, plans[label].stack, f.detail))
    return found


FRAMEWORKS = ("cloudformation", "kubernetes")
# What else checkov reads its settings from: variables of these prefixes
# (checkov/common/util/env_vars_config.py) and a .checkov.y(a)ml in the scanned directory, the
# working directory or the home directory (checkov/common/util/config_utils.py).
CHECKOV_VARIABLES = ("CKV_", "CHECKOV_", "BC_", "PRISMA_")


def _checkov_settings() -> str:
    variables = sorted((n, v) for n, v in os.environ.items() if n.startswith(CHECKOV_VARIABLES))
    files = [d / f".checkov.{e}" for d in (Path.cwd(), Path.home()) for e in ("yaml", "yml")]
    return json.dumps([variables, [[str(f), f.read_text()] for f in files if f.is_file()]])


def _both_tools(workdir: Path, documents: dict[str, list[dict[str, str]]]) -> dict[str, Any]:
    """What checkov says of every file under `workdir` and parliament of `documents` (its JSON
    lines): read back where this very scan venv was given these very files and documents before
    (tests/support/tool_cache.py), else both run. checkov's start alone, loading every check of every
    framework, costs seconds of CPU. Their findings are kept whatever they are: they are what
    the tools say, which the tests hold to the reviewed list."""
    from hyperpod_dpd.shared.venvs import requirement_set
    from tests.support.tool_cache import kept, key

    files = sorted(p for p in workdir.rglob("*") if p.is_file())
    k = key(
        (scan_venv() / "pyvenv.cfg").read_text(),  # its Python
        json.dumps(sorted(requirement_set(REQUIREMENTS.read_text()))),
        json.dumps([FRAMEWORKS, CHECKOV_OPTIONS]),
        _checkov_settings(),
        PARLIAMENT.read_text(),
        json.dumps(documents, sort_keys=True),
        *(part for f in files for part in (f.relative_to(workdir).as_posix(), f.read_bytes())),
    )
    return kept(
        "scanners",
        k,
        lambda: {
            "checkov": _checkov(workdir, *FRAMEWORKS),
            "parliament": _parliament_lines(documents),
        },
        keep=lambda _: True,
    )


def policy_documents(run) -> list[dict[str, str]]:
    """Every IAM policy document the run registers, as run_parliament.py reads them."""
    docs = []
    for r in run.resources:
        for key in ("policy", "assumeRolePolicy"):
            text = r.inputs.get(key)
            if not isinstance(text, str) or not text.lstrip().startswith("{"):
                continue
            resource = key == "assumeRolePolicy" or r.type in RESOURCE_POLICY_TYPES
            name = r.name if key == "policy" else f"{r.name}.assumeRolePolicy"
            docs.append({"name": name, "kind": "resource" if resource else "identity",
                         "policy": text})  # fmt: skip
    return docs


def parliament_findings(stack: str, run) -> list[Found]:
    return [Found(f.tool, f.check, f.resource, stack, f.detail)
            for _, f in _parliament({stack: policy_documents(run)})]  # fmt: skip


def _parliament(documents: dict[str, list[dict[str, str]]]) -> list[tuple[str, Found]]:
    """parliament over the policy documents of each label, in one run: (label, finding)."""
    return _parliament_found(_parliament_lines(documents))


def _parliament_lines(documents: dict[str, list[dict[str, str]]]) -> list[dict[str, Any]]:
    """run_parliament.py's findings (its JSON lines) on the documents of each label."""
    python = scan_venv() / "bin" / "python"
    lines = "".join(json.dumps(d | {"label": label}) + "\n"
                    for label, docs in documents.items() for d in docs)  # fmt: skip
    done = subprocess.run(
        [str(python), str(PARLIAMENT)], input=lines, capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def _parliament_found(lines: list[dict[str, Any]]) -> list[tuple[str, Found]]:
    return [
        (f["label"], Found("parliament", f["issue"], f["name"], "", f["detail"])) for f in lines
    ]


@functools.cache
def reviewed() -> list[dict[str, Any]]:
    """The reviewed list: each entry a tool, a check, the resources it skips (each by name), the
    reason it is not fixed and the test that checks that reason."""
    entries = yaml.safe_load(REVIEWED.read_text())["reviewed"]
    for e in entries:
        missing = {"tool", "check", "resources", "reason", "checked_by"} - set(e)
        assert not missing, f"reviewed.yaml entry {e} lacks {missing}"
        names = e["resources"]
        assert isinstance(names, list) and names, f"{e['check']}: resources is a list of names"
        assert all(isinstance(n, str) and NAME.fullmatch(n) for n in names), (
            f"{e['check']}: every resource is named, never a pattern: {names}"
        )
    return entries


# A Pulumi resource's name (with .assumeRolePolicy), or checkov's Kind.namespace.name: letters,
# digits, '-', '_' and '.', no regular expression.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def is_reviewed(f: Found) -> dict[str, Any] | None:
    for e in reviewed():
        if e["tool"] == f.tool and e["check"] == f.check and f.resource in e["resources"]:
            return e
    return None
