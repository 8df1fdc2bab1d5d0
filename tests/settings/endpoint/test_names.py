"""The names several endpoints give Kubernetes and AWS, each taken once and within its limit:
one InferenceEndpointConfig and one router Service per endpoint (settings/endpoint/names.py),
a traffic key its target group's auto-name fits (settings/endpoint/traffic.py). Each fix printed is
followed on the same stack, which then parses."""

from __future__ import annotations

from settings import parse_settings
from settings.endpoint.traffic import TRAFFIC_KEY_MAX
from tests.conftest import canary_raw, edit
from tests.settings.problems import followed, only_problem, problems_of

NS = "hyperpod-dpd"
ENDPOINTS = f"{NS}:endpoints"


def _named(raw, key, name, namespace=None):
    edit(raw, f"{ENDPOINTS}.{key}.name", name)
    if namespace is not None:
        edit(raw, f"{ENDPOINTS}.{key}.namespace", namespace)
    return raw


def _renamed(raw, old, new):
    """The canary stack with endpoint `old` keyed `new`, in endpoints and traffic."""
    raw[ENDPOINTS][new] = raw[ENDPOINTS].pop(old)
    raw[f"{NS}:traffic"][new] = raw[f"{NS}:traffic"].pop(old)
    return raw


# --- one InferenceEndpointConfig per (name, namespace) ----------------------------------------


def test_two_endpoints_with_one_name_in_one_namespace_are_refused():
    raw = _named(canary_raw(), "candidate", "baseline")
    message = only_problem(raw)
    assert message.startswith(f"{ENDPOINTS}.candidate.name: got 'baseline'; allowed: a name no ")
    assert "endpoints.baseline is 'baseline' there too" in message
    assert "InferenceEndpointConfig inference/baseline (AlreadyExists)" in message
    assert f"pulumi config set --path '{ENDPOINTS}.candidate.name' baseline-candidate" in message


def test_the_printed_name_fix_makes_the_clash_go():
    raw = _named(canary_raw(), "candidate", "baseline")
    fixed = followed(raw, only_problem(raw))
    assert parse_settings(fixed).endpoints["candidate"].name == "baseline-candidate"


def test_one_name_in_two_namespaces_is_taken():
    raw = _named(canary_raw(), "candidate", "baseline", namespace="canary")
    assert parse_settings(raw).endpoints["candidate"].name == "baseline"


def test_the_endpoint_named_after_its_key_keeps_its_name():
    """'zeta' is named after its key; 'alpha' took the name: 'alpha' is the one to rename."""
    raw = canary_raw()
    raw[ENDPOINTS]["zeta"] = raw[ENDPOINTS].pop("candidate")
    raw[ENDPOINTS]["alpha"] = {**raw[ENDPOINTS].pop("baseline"), "name": "zeta"}
    raw[f"{NS}:traffic"] = {"alpha": 95, "zeta": 5}
    message = only_problem(raw)
    assert message.startswith(f"{ENDPOINTS}.alpha.name: got 'zeta'")
    assert f"'{ENDPOINTS}.alpha.name' zeta-alpha" in message
    parse_settings(followed(raw, message))


def test_three_endpoints_with_one_name_get_names_of_their_own():
    raw = canary_raw()
    edit(raw, f"{NS}:instanceGroups.colocated.instanceCount", 3)
    edit(raw, f"{ENDPOINTS}.third", {"name": "llama", "namespace": "inference",
                                      "mode": "colocated", "replicas": 1})  # fmt: skip
    _named(_named(raw, "baseline", "llama"), "candidate", "llama")
    problems = problems_of(raw)
    assert [p.split(":")[1] for p in problems] == [
        "endpoints.candidate.name",
        "endpoints.third.name",
    ]
    for message in problems:
        raw = followed(raw, message)
    names = {k: e.name for k, e in parse_settings(raw).endpoints.items()}
    assert names == {"baseline": "llama", "candidate": "llama-candidate", "third": "llama-third"}


# --- one router Service per endpoint ----------------------------------------------------------


def test_endpoints_whose_router_services_collide_are_refused():
    raw = _named(canary_raw(), "baseline", "llama-prod", namespace="team")
    _named(raw, "candidate", "llama", namespace="prod-team")
    message = only_problem(raw)
    assert message.startswith(f"{ENDPOINTS}.candidate.name: got 'llama'; allowed: a name whose ")
    assert "{name}-{namespace}-routing-service in hyperpod-inference-system" in message
    assert "gives 'llama-prod-team-routing-service' too" in message
    assert f"'{ENDPOINTS}.candidate.name' llama-candidate" in message
    parse_settings(followed(raw, message))


def test_a_proposed_name_is_cut_to_the_router_services_63_characters():
    """Name and namespace may hold 46 characters together: the proposal cuts the name."""
    namespace = "n" * 20
    raw = _named(canary_raw(), "baseline", "a" * 26, namespace=namespace)
    _named(raw, "candidate", "a" * 26, namespace=namespace)
    message = only_problem(raw)
    proposed = f"{'a' * 16}-candidate"
    assert f"'{ENDPOINTS}.candidate.name' {proposed} " in message
    assert parse_settings(followed(raw, message)).endpoints["candidate"].name == proposed


# --- a traffic key its target group's name fits -------------------------------------------------


def test_a_traffic_key_too_long_for_its_target_group_is_refused():
    long_key = "candidate-llama-70b"  # 19 characters
    raw = _renamed(canary_raw(), "candidate", long_key)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:traffic.{long_key}: got '{long_key}'; allowed: an endpoint ")
    assert f"at most {TRAFFIC_KEY_MAX} characters (19 here)" in message
    assert f"auto-named 'traffic-{long_key}-' plus 7 random characters" in message
    # Cut to 16 ('candidate-llama-'), without the hyphen a key cannot end in.
    assert (
        f"rename {ENDPOINTS}.{long_key} to {ENDPOINTS}.candidate-llama and rename "
        f"{NS}:traffic.{long_key} to {NS}:traffic.candidate-llama " in message
    )


def test_the_printed_key_rename_makes_the_problem_go():
    raw = _renamed(canary_raw(), "candidate", "candidate-llama-70b")
    s = parse_settings(followed(raw, only_problem(raw)))
    assert s.traffic == {"baseline": 95, "candidate-llama": 5}
    assert s.endpoints["candidate-llama"].mode == "dpd"


def test_a_traffic_key_of_the_longest_length_is_taken():
    key = "c" * TRAFFIC_KEY_MAX
    assert key in parse_settings(_renamed(canary_raw(), "candidate", key)).traffic


def test_a_long_key_outside_the_split_is_taken():
    """No target group is named after an endpoint the split does not name."""
    raw = _renamed(canary_raw(), "candidate", "candidate-llama-70b")
    raw[f"{NS}:traffic"] = {}
    assert "candidate-llama-70b" in parse_settings(raw).endpoints


def test_two_long_keys_cut_alike_get_keys_of_their_own():
    raw = _renamed(canary_raw(), "candidate", "candidate-canary-one")
    _renamed(raw, "baseline", "candidate-canary-two")
    problems = problems_of(raw)
    assert len(problems) == 2, problems
    assert f"to {NS}:traffic.candidate-canary " in problems[0]
    assert f"to {NS}:traffic.candidate-cana-2 " in problems[1]
    for message in problems:
        raw = followed(raw, message)
    assert parse_settings(raw).traffic == {"candidate-cana-2": 95, "candidate-canary": 5}


# --- one worker Deployment per name and namespace ---------------------------------------------


def test_a_colocated_endpoint_named_after_a_dpd_pool_in_its_namespace_is_refused():
    """Colocated `prefill-candidate` would run the Deployment of DPD `candidate`'s prefill pool."""
    raw = _named(canary_raw(), "baseline", "prefill-candidate")
    problems = problems_of(raw)
    message = next(p for p in problems if "worker Deployments" in p)
    assert message.startswith(f"{ENDPOINTS}.candidate.name: got 'candidate'; allowed: a name ")
    assert "endpoints.baseline runs Deployment 'prefill-candidate' in namespace 'inference'" in (
        message
    )
    assert "pulumi config set --path 'hyperpod-dpd:endpoints.candidate.name' candidate-2" in (
        message
    )
    assert parse_settings(followed(raw, message)).endpoints["candidate"].name == "candidate-2"
    assert parse_settings(_named(canary_raw(), "baseline", "prefill-candidate", "other"))
    assert parse_settings(_named(canary_raw(), "baseline", "candidate-prefill"))
