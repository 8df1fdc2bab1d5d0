"""The boot script closes pods' route to the instance metadata service on GPU nodes
(infra/lifecycle_scripts/on_create.sh guard_pod_metadata), run for real by bash with the script's
functions sourced: a fake `iptables` keeps the FORWARD chain in a file and a fake `systemctl`
runs the unit's ExecStart as systemd would on `enable --now` (and on every boot)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from specs.isolation.instance_metadata import METADATA_SERVICE
from specs.lifecycle import ON_CREATE, SCRIPTS_DIR

SCRIPT = SCRIPTS_DIR / ON_CREATE
# AWS's rule (EKS user guide, "Restrict access to Amazon EC2 instance profile credentials"),
# REJECT where the guide drops.
RULE = f"FORWARD --in-interface eni+ --destination {METADATA_SERVICE} --jump REJECT"
UNIT = "hyperpod-dpd-pod-metadata.service"
# Sourced, the script must define its functions and run nothing (main writes /etc and /var/log
# as root): checked before any test sources it.
MAIN_ONLY_WHEN_EXECUTED = 'if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then\n  main "$@"\nfi\n'

# The FORWARD chain, one rule a line, first rule first.
FAKE_IPTABLES = r"""#!/bin/bash
chain="$STATE/forward"; touch "$chain"
echo "iptables $*" >> "$STATE/calls"
case "$1" in
  -C) shift; grep -qxF -- "$*" "$chain" ;;
  -I) shift; c="$1"; shift; [ "$1" = 1 ] || exit 2; shift
      { echo "$c $*"; cat "$chain"; } > "$chain.new" && mv "$chain.new" "$chain" ;;
  *) exit 2 ;;
esac
"""
# systemd: `enable --now` starts the unit, i.e. runs its ExecStart.
FAKE_SYSTEMCTL = r"""#!/bin/bash
echo "systemctl $*" >> "$STATE/calls"
if [ "$1" = enable ] && [ "$2" = --now ]; then
  exec bash -c "$(sed -n 's/^ExecStart=//p' "$SYSTEMD_DIR/$3")"
fi
"""


def _tool(bin_dir: Path, name: str, text: str) -> None:
    path = bin_dir / name
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def node(tmp_path):
    """A node: its PCI devices (Amazon's ENA and NVMe), a systemd unit directory, the fakes."""
    bin_dir, state, units, pci = (tmp_path / d for d in ("bin", "state", "units", "pci"))
    for d in (bin_dir, state, units, pci):
        d.mkdir()
    for i, vendor in enumerate(("0x1d0f", "0x1d0f")):
        (pci / f"0000:00:0{i}.0").mkdir()
        (pci / f"0000:00:0{i}.0" / "vendor").write_text(vendor + "\n")
    _tool(bin_dir, "iptables", FAKE_IPTABLES)
    _tool(bin_dir, "systemctl", FAKE_SYSTEMCTL)

    class Node:
        dir = tmp_path

        def add_gpu(self) -> None:
            (pci / "0000:53:00.0").mkdir()
            (pci / "0000:53:00.0" / "vendor").write_text("0x10de\n")

        def run(self, command: str, with_iptables: bool = True) -> subprocess.CompletedProcess:
            assert SCRIPT.read_text().endswith(MAIN_ONLY_WHEN_EXECUTED)
            path = f"{bin_dir}:/usr/bin:/bin"
            if not with_iptables:
                (bin_dir / "iptables").unlink()
            script = (
                f"source {SCRIPT}; PCI_DEVICES={pci}; SYSTEMD_DIR={units}; "
                f"export STATE={state} SYSTEMD_DIR={units}; {command}"
            )
            env = {"PATH": path}
            return subprocess.run(
                [shutil.which("bash") or "/bin/bash", "-c", script],
                env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip

        def chain(self) -> list[str]:
            path = state / "forward"
            return path.read_text().splitlines() if path.exists() else []

        def calls(self) -> list[str]:
            path = state / "calls"
            return path.read_text().splitlines() if path.exists() else []

        def unit(self) -> str:
            return (units / UNIT).read_text()

    return Node()


def test_a_gpu_node_refuses_pods_the_metadata_service_once_and_at_every_boot(node):
    node.add_gpu()
    first = node.run("guard_pod_metadata")
    assert first.returncode == 0, first.stderr
    assert node.chain() == [RULE]
    assert f"pods' traffic to {METADATA_SERVICE} is refused" in first.stdout
    # Inserted first in FORWARD, ahead of whatever kube-proxy and the CNI add later.
    assert f"iptables -I FORWARD 1 {RULE.removeprefix('FORWARD ')}" in node.calls()
    # The unit, before the kubelet, re-applies it at every boot; the script again (a replaced
    # node's rerun) or the unit again leaves one rule.
    unit = node.unit()
    assert "Before=kubelet.service" in unit and "WantedBy=multi-user.target" in unit
    assert node.run("guard_pod_metadata").returncode == 0
    assert node.run(f"systemctl enable --now {UNIT}").returncode == 0
    assert node.chain() == [RULE]


def test_a_system_node_keeps_the_service_for_the_load_balancer_controller(node):
    result = node.run("guard_pod_metadata")
    assert result.returncode == 0
    assert "not a GPU node" in result.stdout
    assert node.chain() == [] and node.calls() == []
    assert not (node.dir / "units" / UNIT).exists()


def test_without_iptables_the_node_still_provisions_and_says_so(node):
    node.add_gpu()
    result = node.run("guard_pod_metadata", with_iptables=False)
    assert result.returncode == 0
    assert "WARNING: no iptables on this node" in result.stdout
    assert node.calls() == []


def test_sourcing_the_script_runs_nothing(node):
    result = node.run("declare -F main guard_pod_metadata >/dev/null && echo defined")
    assert result.stdout == "defined\n" and node.calls() == []
