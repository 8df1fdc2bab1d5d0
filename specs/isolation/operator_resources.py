"""Who may say what the inference operator runs: its custom resources in the endpoints'
namespaces (InferenceEndpointConfig, JumpStartModel, and every other kind of its API group) are
created or changed by the admins (`pulumi up` is one) and the operator only.

The pods' policy (specs/isolation/admission.py) trusts whatever the operator makes, so whoever
writes an InferenceEndpointConfig chooses the operator's pods: its `worker.image`, `command`,
`args`, `kubernetes.initContainers`, `volumes` and `serviceAccountName` (the IEC's schema,
aws/sagemaker-hyperpod-cli helm_chart/HyperPodHelmChart/charts/inference-operator/config/crd/
inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml), and a JumpStartModel the
model the operator deploys. The whole group is matched (resources "*", every served version),
so a kind a later operator adds is guarded from its first release.

Others may still update such an object when its spec, labels and annotations stay as they were
(the garbage collector's and the operator's bookkeeping: finalizers, owner references). Scaling
goes through the `scale` subresource the IEC and JumpStartModel define, which `resources: ["*"]`
does not match: autoscalers keep working. Deleting one is not guarded here (it stops a model, it
runs nothing).
"""

from __future__ import annotations

from typing import Any

from core.vocabulary import IEC_API_VERSION
from specs.isolation.vap import ADMIN_VARIABLE, OPERATOR_VARIABLE, policy, unchanged

MODELS = "hyperpod-dpd-endpoint-models"
GROUP = IEC_API_VERSION.split("/")[0]  # inference.sagemaker.aws.amazon.com
# What decides the operator's pods: the spec; labels and annotations, which it may copy to them
# (the workers' NetworkPolicy selects pods by label) or read as settings.
DECIDING = ("spec", "metadata.labels", "metadata.annotations")


def models_policy() -> dict[str, Any]:
    kept = " && ".join(unchanged(path) for path in DECIDING)
    validations = [
        {
            "expression": "variables.operator || variables.admin || "
            f"(request.operation == 'UPDATE' && {kept})",
            # CEL: "..." strings, the text has an apostrophe.
            "messageExpression": 'request.kind.kind + " objects in " + request.namespace + '
            "\" say what the inference operator runs: only the stack's admins create them or "
            'change their spec, labels or annotations, not " + request.userInfo.username',
            "reason": "Forbidden",
        }
    ]
    rules = [
        {
            "apiGroups": [GROUP],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["*"],
        }
    ]
    return policy(MODELS, rules, [OPERATOR_VARIABLE, ADMIN_VARIABLE], validations)
