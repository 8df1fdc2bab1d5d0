"""The split's target groups as pulumi-aws auto-names them: the longest endpoint key the settings
take (settings/endpoint/traffic.py TRAFFIC_KEY_MAX) gives a logical name that, with Pulumi's '-' and 7
random characters, is AWS's 32 at most (specs/traffic/targets.py names the groups; the two must agree)."""

from __future__ import annotations

from settings import parse_settings
from settings.endpoint.traffic import AUTONAME_SUFFIX, TARGET_GROUP_NAME_MAX, TRAFFIC_KEY_MAX
from specs.desired import desired_state
from tests.conftest import canary_raw

NS = "hyperpod-dpd"


def test_the_longest_traffic_key_gives_a_target_group_name_that_fits():
    key = "c" * TRAFFIC_KEY_MAX
    raw = canary_raw()
    raw[f"{NS}:endpoints"][key] = raw[f"{NS}:endpoints"].pop("candidate")
    raw[f"{NS}:traffic"] = {"baseline": 95, key: 5}
    split = desired_state(parse_settings(raw), NS, "canary").traffic
    group = split.target_groups[key]
    assert group.autoname == "name" and "name" not in group.props  # Pulumi names it
    assert len(group.name) + AUTONAME_SUFFIX == TARGET_GROUP_NAME_MAX
