#!/bin/bash
# HyperPod lifecycle script (OnCreate), run as root on every node when it joins the cluster.
# Uploaded to the lifecycle-scripts bucket by the Pulumi stack (infra/lifecycle.py).
# It must be idempotent: HyperPod runs it again on replaced and rebooted nodes.
# Functions first, then main (run when executed; a test sources the functions alone).

# Pods of a GPU node may not reach the EC2 instance metadata service, where they would get the
# node's role (the HyperPod execution role). The stack's NetworkPolicies close it to the pods of
# its namespaces, but the VPC CNI's network policy agent starts a new pod allowing everything
# until its policies reach the node (`standard` mode, the pinned add-on's default:
# aws/amazon-vpc-cni-k8s v1.19.5 README, NETWORK_POLICY_ENFORCING_MODE), and pods of other
# namespaces have no policy at all. So the node drops the route itself, as the EKS user guide
# shows ("Restrict access to Amazon EC2 instance profile credentials",
# https://docs.aws.amazon.com/eks/latest/userguide/restrict-ec2-credential-access.html:
# `iptables --insert FORWARD 1 --in-interface eni+ --destination 169.254.169.254/32`): a pod's
# traffic arrives on its host-side interface, `eni<hash>` (the VPC CNI's
# AWS_VPC_K8S_CNI_VETHPREFIX, `eni` by default), and is forwarded. REJECT rather than DROP, so a
# client's credential chain fails at once instead of waiting out its timeouts. Host-network pods
# (aws-node, kube-proxy, EKS Pod Identity's agent, the EFA device plugin) send from the node's
# own stack, not through FORWARD, and keep the service; so does the node (kubelet, HyperPod's
# agents). The VPC CNI's strict mode would close the window too, but it denies every pod that
# no policy selects, kube-system's and the add-ons' included ("In Strict Mode, you must have a
# network policy defined for every pod in your cluster", same README): not this stack's to
# write for namespaces it does not own.
# GPU nodes only: the system nodes run the load balancer controller, which reads its VPC and
# Region from the metadata service unless it is given them
# (kubernetes-sigs/aws-load-balancer-controller pkg/aws/cloud.go: "failed to introspect vpcID
# from EC2Metadata"), and the inference operator's add-on passes neither. A GPU node is one with
# an NVIDIA PCI device (vendor 0x10de). The rule is kept in a systemd unit ordered before the
# kubelet, so it is back before any pod after a reboot.
METADATA_SERVICE="169.254.169.254/32"
POD_INTERFACES="eni+"
NVIDIA_VENDOR="0x10de"
GUARD_UNIT="hyperpod-dpd-pod-metadata.service"
PCI_DEVICES="/sys/bus/pci/devices"
SYSTEMD_DIR="/etc/systemd/system"

# The rule, after the chain: iptables -C <rule> checks it, -I FORWARD 1 <rest> inserts it first.
pod_metadata_rule() {
  echo "FORWARD --in-interface $POD_INTERFACES --destination $METADATA_SERVICE --jump REJECT"
}

gpu_node() {
  grep -qsx "$NVIDIA_VENDOR" "$PCI_DEVICES"/*/vendor
}

# The unit that (re)applies the rule at every boot, before the kubelet starts any pod.
guard_unit() {
  local iptables="$1" rule
  rule="$(pod_metadata_rule)"
  cat <<UNIT
[Unit]
Description=hyperpod-dpd: pods of this GPU node may not reach the instance metadata service
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c '$iptables -C $rule 2>/dev/null || $iptables -I ${rule/FORWARD/FORWARD 1}'

[Install]
WantedBy=multi-user.target
UNIT
}

# Never fails the node: a node that cannot close the route still serves; `hyperpod-dpd verify`
# reports it ("metadata closed on GPU nodes").
guard_pod_metadata() {
  local iptables
  if ! gpu_node; then
    echo "pod metadata guard: no NVIDIA device, not a GPU node: left open"
    return 0
  fi
  if ! iptables="$(command -v iptables)"; then
    echo "pod metadata guard: WARNING: no iptables on this node: pods reach the metadata service"
    return 0
  fi
  if guard_unit "$iptables" > "$SYSTEMD_DIR/$GUARD_UNIT" && systemctl daemon-reload \
    && systemctl enable --now "$GUARD_UNIT"; then
    # shellcheck disable=SC2046 # the rule's words are the arguments
    if "$iptables" -C $(pod_metadata_rule); then
      echo "pod metadata guard: pods' traffic to $METADATA_SERVICE is refused"
      return 0
    fi
  fi
  echo "pod metadata guard: WARNING: $GUARD_UNIT did not apply the rule: pods reach the metadata service"
}

main() {
  set -euo pipefail
  exec > >(tee -a /var/log/provision-hyperpod-dpd.log) 2>&1
  echo "hyperpod-dpd on_create: $(date -Is) on $(hostname)"

  # Container images of vLLM workers are large (> 10 GB): keep containerd's data on the
  # instance NVMe (p5: 8 x 3.84 TB at /opt/dlami/nvme) or the secondary EBS volume
  # (/opt/sagemaker), not on the small root volume.
  local data_root="" candidate
  for candidate in /opt/dlami/nvme /opt/sagemaker; do
    if mountpoint -q "$candidate"; then data_root="$candidate"; break; fi
  done
  if [ -n "$data_root" ] && [ -f /etc/containerd/config.toml ]; then
    mkdir -p "$data_root/containerd" "$data_root/kubelet"
    if ! grep -q "root = \"$data_root/containerd\"" /etc/containerd/config.toml; then
      sed -i "s|^root = .*|root = \"$data_root/containerd\"|" /etc/containerd/config.toml
      systemctl restart containerd || true
    fi
    echo "containerd data root: $data_root/containerd"
  fi

  # Raise the limits vLLM/NCCL need for pinned memory and many open files.
  cat > /etc/security/limits.d/90-hyperpod-dpd.conf <<'LIMITS'
* soft memlock unlimited
* hard memlock unlimited
* soft nofile 1048576
* hard nofile 1048576
LIMITS

  guard_pod_metadata
  echo "hyperpod-dpd on_create: done"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
