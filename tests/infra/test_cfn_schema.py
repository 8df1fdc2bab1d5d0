"""The HyperPod cluster inputs against the published AWS::SageMaker::Cluster schema.

aws-native resources are generated from the CloudFormation registry schemas; cfn-lint ships a
copy of them per Region. The engine's camelCase inputs are mapped back to the schema's
PascalCase names (schema-driven, so map keys such as Kubernetes labels stay as they are) and
validated with jsonschema.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import regex
from jsonschema import ValidationError

from tests.conftest import edit, run_stack, stack_raw

# cfn-lint's data directory, found without importing cfn-lint (half a second at collection).
SCHEMAS = Path(importlib.util.find_spec("cfnlint").origin).parent / "data" / "schemas"


def cfn_schema(type_name: str, region: str) -> dict:
    index = json.loads((SCHEMAS / "providers" / f"{region}.json").read_text())
    return json.loads((SCHEMAS / "resources" / f"{index[type_name]}.json").read_text())


def to_cfn(value: Any, schema: dict, root: dict) -> Any:
    """Rename camelCase wire keys to the schema's property names, following $refs."""
    while "$ref" in schema:
        schema = root["definitions"][schema["$ref"].split("/")[-1]]
    if isinstance(value, dict) and "properties" not in schema:
        # oneOf/anyOf of objects: follow the branch that names every key.
        for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
            known = {name.lower() for name in branch.get("properties", {})}
            if known and {k.lower() for k in value} <= known:
                return to_cfn(value, branch, root)
    if isinstance(value, list):
        return [to_cfn(v, schema.get("items", {}), root) for v in value]
    if isinstance(value, dict) and "properties" in schema:
        names = {name.lower(): name for name in schema["properties"]}
        out = {}
        for key, v in value.items():
            name = names.get(key.lower(), key)  # unknown keys stay: the schema will flag them
            out[name] = to_cfn(v, schema["properties"].get(name, {}), root)
        return out
    return value


def _pattern(validator, pattern, instance, schema):
    # CloudFormation patterns are ECMA-262 (\\p{...} classes): the `regex` module reads them.
    if isinstance(instance, str) and not regex.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


CfnValidator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _pattern})


def validate(run, region: str) -> list[str]:
    schema = cfn_schema("AWS::SageMaker::Cluster", region)
    (cluster,) = run.of_type("aws-native:sagemaker:Cluster")
    props = to_cfn(cluster.inputs, schema, schema)
    validator = CfnValidator({**schema, "additionalProperties": False})
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(props)]


@pytest.mark.parametrize(("stack", "region"), [("dev", "us-east-2"), ("prod", "us-west-2")])
def test_cluster_inputs_match_the_cloudformation_schema(stack, region):
    assert validate(run_stack(stack_raw(stack), stack=stack), region) == []


def test_schema_check_catches_a_bad_input():
    # Config validation stops bad values before the program runs, so break a recorded input.
    run = run_stack(stack_raw("dev"))
    (cluster,) = run.of_type("aws-native:sagemaker:Cluster")
    cluster.inputs["nodeRecovery"] = "Sometimes"
    assert any("Sometimes" in e for e in validate(run, "us-east-2"))


def test_training_plan_arn_fits_the_schema():
    arn = "arn:aws:sagemaker:us-east-2:111122223333:training-plan/p5-dev"
    raw = edit(stack_raw("dev"), "hyperpod-dpd:instanceGroups.prefill.trainingPlanArn", arn)
    assert validate(run_stack(raw), "us-east-2") == []
