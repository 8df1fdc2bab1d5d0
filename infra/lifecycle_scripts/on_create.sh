#!/bin/bash
# HyperPod lifecycle script (OnCreate), run as root on every node when it joins the cluster.
# Uploaded to the lifecycle-scripts bucket by the Pulumi stack (infra/lifecycle.py).
# It must be idempotent: HyperPod runs it again on replaced and rebooted nodes.
set -euo pipefail
exec > >(tee -a /var/log/provision-hyperpod-dpd.log) 2>&1
echo "hyperpod-dpd on_create: $(date -Is) on $(hostname)"

# Container images of vLLM workers are large (> 10 GB): keep containerd's data on the instance
# NVMe (p5: 8 x 3.84 TB at /opt/dlami/nvme) or the secondary EBS volume (/opt/sagemaker),
# not on the small root volume.
data_root=""
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
echo "hyperpod-dpd on_create: done"
