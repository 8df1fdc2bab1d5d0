"""Preflight of the split's name against moto's ACM and Route 53: the certificate covers the
name as a TLS client matches names (RFC 6125: a wildcard is one whole left-most label) and is
issued, the zone is private and holds the name, a record of that name already there is said."""

from __future__ import annotations

import pytest
from moto import mock_aws

from hyperpod_dpd.preflight.checks import FAIL, PASS, WARN, covers, traffic_name_checks
from settings import parse_settings
from tests.conftest import canary_raw, edit
from tests.hyperpod_dpd.preflight.clients import clients as new_clients

REGION = "us-east-2"
NAME = "llm.internal.example.com"
LISTENER = "hyperpod-dpd:trafficListener"
CA = "arn:aws:acm-pca:us-east-2:123456789012:certificate-authority/0b7e3c3a-5f1d-4c2e-9a8b-2d6f1e4c7a90"


@pytest.mark.parametrize(
    ("pattern", "name", "covered"),
    [
        (NAME, NAME, True),
        ("LLM.Internal.Example.com.", NAME, True),  # case and a trailing dot aside
        ("*.internal.example.com", NAME, True),
        ("*.example.com", NAME, False),  # one label only, never two
        ("*.internal.example.com", "internal.example.com", False),  # never none
        ("*.llm.internal.example.com", NAME, False),
        ("other.internal.example.com", NAME, False),
        ("*.internal.example.com", "*.internal.example.com", False),  # no client calls a wildcard
    ],
)
def test_a_certificate_name_covers_a_name_as_rfc_6125_says(pattern, name, covered):
    assert covers(pattern, name) is covered


@pytest.fixture
def account(monkeypatch):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(var, "testing")
    # No images: these checks ask for none, and moto's EC2 made tens of thousands of them for
    # each test's account, most of its CPU (moto/settings.py ec2_load_default_amis).
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
    with mock_aws():
        yield new_clients(REGION, ("acm", "route53", "ec2"))


def _certificate(acm, domain, *sans, private=True) -> str:
    request = {"DomainName": domain, "SubjectAlternativeNames": [domain, *sans]}
    if private:  # issued at once, as ACM Private CA issues
        request["CertificateAuthorityArn"] = CA
    return acm.request_certificate(**request)["CertificateArn"]


def _zone(clients, name="internal.example.com", private=True) -> str:
    extra = {}
    if private:
        vpc = clients["ec2"].create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
        extra = {"VPC": {"VPCRegion": REGION, "VPCId": vpc}}
    zone = clients["route53"].create_hosted_zone(
        Name=name, CallerReference=name, HostedZoneConfig={"PrivateZone": private}, **extra
    )["HostedZone"]["Id"]
    return zone.rsplit("/", 1)[-1]


def _checks(clients, arn, zone, name=NAME):
    raw = edit(canary_raw(), f"{LISTENER}.certificateArn", arn)
    edit(raw, f"{LISTENER}.domainName", name)
    s = parse_settings(raw)
    # moto's zone ids do not start with Z as Route 53's do (which the settings require): set
    # past the settings' check.
    listener = s.traffic_listener.model_copy(update={"hosted_zone_id": zone})
    s = s.model_copy(update={"traffic_listener": listener})
    return {c.name: c for c in traffic_name_checks(s, clients.__getitem__)}


def test_an_issued_certificate_naming_it_and_a_private_zone_holding_it_pass(account):
    zone = _zone(account)
    checks = _checks(account, _certificate(account["acm"], NAME), zone)
    assert {name: c.result for name, c in checks.items()} == {
        f"certificate covers {NAME}": PASS,
        f"zone {zone} holds {NAME}": PASS,
    }
    assert checks[f"zone {zone} holds {NAME}"].detail == "private zone internal.example.com"


def test_a_wildcard_one_label_up_covers_it(account):
    arn = _certificate(account["acm"], "*.internal.example.com")
    assert _checks(account, arn, _zone(account))[f"certificate covers {NAME}"].result == PASS


def test_a_certificate_that_does_not_cover_it_fails_naming_what_it_covers(account):
    arn = _certificate(account["acm"], "api.example.com", "*.example.com")
    check = _checks(account, arn, _zone(account))[f"certificate covers {NAME}"]
    assert check.result == FAIL
    assert check.detail.endswith("covers api.example.com, *.example.com")
    assert f"{LISTENER}.certificateArn" in check.fix
    assert f"set {LISTENER}.domainName to a name it covers (api.example.com)" in check.fix


def test_a_certificate_waiting_for_validation_fails(account):
    arn = _certificate(account["acm"], NAME, private=False)  # ACM's: pending DNS validation
    check = _checks(account, arn, _zone(account))[f"certificate covers {NAME}"]
    assert check.result == FAIL and "PENDING_VALIDATION" in check.detail


def test_no_such_certificate_or_zone_fails_with_what_to_set(account):
    arn = _certificate(account["acm"], NAME).rsplit("/", 1)[0] + "/" + CA.rsplit("/", 1)[-1]
    checks = _checks(account, arn, "Z0123456789ABCDEFGHIJ")
    cert, zone = checks[f"certificate covers {NAME}"], next(
        c for n, c in checks.items() if n.startswith("zone"))  # fmt: skip
    assert cert.result == FAIL and f"{LISTENER}.certificateArn" in cert.fix
    assert zone.result == FAIL and "no hosted zone Z0123456789ABCDEFGHIJ" in zone.detail


def test_a_public_zone_or_one_of_another_name_fails(account):
    arn = _certificate(account["acm"], NAME)
    public = _checks(account, arn, _zone(account, private=False))
    (zone,) = [c for n, c in public.items() if n.startswith("zone")]
    assert zone.result == FAIL and zone.detail.startswith("a public zone")
    other = _checks(account, arn, _zone(account, "other.example.com"))
    (zone,) = [c for n, c in other.items() if n.startswith("zone")]
    assert zone.result == FAIL and f"{NAME} is not in other.example.com" in zone.detail
    assert f"{LISTENER}.hostedZoneId" in zone.fix


def test_a_record_of_the_name_already_there_is_said(account):
    zone = _zone(account)
    account["route53"].change_resource_record_sets(
        HostedZoneId=zone,
        ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": {
            "Name": NAME, "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": "10.0.0.1"}]}}]},
    )  # fmt: skip
    checks = _checks(account, _certificate(account["acm"], NAME), zone)
    assert checks[f"record {NAME}"].result == WARN
    assert "`pulumi up` fails to create its own" in checks[f"record {NAME}"].detail


def test_nothing_is_asked_without_a_split(account):
    raw = canary_raw()
    raw.pop("hyperpod-dpd:traffic")
    assert traffic_name_checks(parse_settings(raw), account.__getitem__) == []
