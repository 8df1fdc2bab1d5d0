"""What the admission tests share: the Kubernetes manifests a stack renders (its policies and
bindings among them) and the identities requests come from."""

from __future__ import annotations

import pytest

from core.vocabulary import ADMINS_GROUP, OPERATOR_NAMESPACE, OPERATOR_SERVICE_ACCOUNT
from hyperpod_dpd.plan.planner import kubernetes_manifests
from tests.conftest import run_stack, stack_raw

OPERATOR = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SERVICE_ACCOUNT}"
# An admin (eks.adminRoleArns) or the role running `pulumi up`: its requests carry the group.
ADMIN = "arn:aws:sts::111122223333:assumed-role/PlatformAdmin/bob"
ADMIN_GROUPS = (ADMINS_GROUP, "system:authenticated")
NS = "inference"  # the shipped stacks' endpoint namespace


def manifests(stack: str, raw: dict | None = None) -> list[dict]:
    return list(kubernetes_manifests(run_stack(raw or stack_raw(stack), stack=stack)).values())


@pytest.fixture(scope="module", params=["dev", "prod", "canary"])
def stack(request):
    return request.param, manifests(request.param)


@pytest.fixture(scope="module")
def dev():
    return manifests("dev")
