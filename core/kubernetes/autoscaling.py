"""What Kubernetes' Horizontal Pod Autoscaler does with a pool's autoscaling: the operator turns
each pool's autoScalingSpec into a KEDA ScaledObject, and KEDA drives an HPA with it (the CRD:
scaleDownStabilizationTime is "The time window to stabilize for HPA before scaling down",
aws/sagemaker-hyperpod-cli helm_chart/HyperPodHelmChart/charts/inference-operator/config/crd/
inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml; KEDA passes it on as the HPA's
behavior.scaleDown.stabilizationWindowSeconds, KEDA docs "ScaledObject specification",
advanced.horizontalPodAutoscalerConfig)."""

from __future__ import annotations

# The API server refuses an HPA whose stabilization window is longer than an hour
# (kubernetes/kubernetes pkg/apis/autoscaling/validation/validation.go,
# MaxStabilizationWindowSeconds = 3600, checked by validateScalingRules): KEDA's HPA is never
# created or updated, and the pool stops scaling.
MAX_STABILIZATION_WINDOW_SECONDS = 3600
# The HPA acts only when the signal's ratio to its target leaves 1 +/- this tolerance (the
# controller manager's --horizontal-pod-autoscaler-tolerance, 0.1 by default, not settable on
# EKS: kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#algorithm-details).
# A signal that can never pass (1 + tolerance) x target never scales a pool out.
HPA_TOLERANCE = 0.1


def reachable_target(ceiling: float) -> float:
    """The target a signal that tops at `ceiling` must stay below for the HPA to scale out."""
    return ceiling / (1 + HPA_TOLERANCE)
