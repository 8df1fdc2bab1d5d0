"""Instant queries to a Prometheus HTTP API (/api/v1/query): any server at `--prometheus-url`, or
the stack's Amazon Managed Prometheus workspace, whose query API takes SigV4-signed requests for
the service `aps` ("Query your Prometheus metrics", docs.aws.amazon.com/prometheus/latest/
userguide/AMP-onboard-query-APIs.html), signed here with botocore's SigV4Auth.

A server that cannot be reached, refuses the credentials or answers no Prometheus response is
bad input (exit 2) naming `where`: the flag or the stack key that chose the server.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from core.exits import UsageProblem

TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class Prometheus:
    base_url: str  # .../api/v1/query is appended
    where: str  # the flag or key that named it, for errors
    sign: Callable[[str], dict[str, str]] | None = None  # url -> headers (SigV4)

    def scalar(self, promql: str) -> float | None:
        """The one value `promql` gives (None: no sample, or NaN)."""
        result = self.query(promql)
        if not result:
            return None
        if len(result) > 1:
            raise ValueError(f"{promql}: {len(result)} series where one was expected")
        value = float(result[0]["value"][1])
        return None if value != value else value

    def query(self, promql: str) -> list[dict]:
        url = f"{self.base_url.rstrip('/')}/api/v1/query?" + urllib.parse.urlencode(
            {"query": promql}
        )
        headers = self.sign(url) if self.sign else {}
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                body = json.load(response)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            if exc.code in (401, 403):
                raise UsageProblem(
                    f"{self.where}: {self.base_url} refused the request ({exc.code}: {detail}); "
                    "check your AWS credentials may aps:QueryMetrics on the workspace"
                ) from exc
            if exc.code == 400:
                raise ValueError(f"{promql}: {detail}") from exc  # our query: a bug
            raise UsageProblem(
                f"{self.where}: {self.base_url} answered {exc.code}: {detail}"
            ) from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise UsageProblem(
                f"{self.where}: cannot query a Prometheus at {self.base_url} ({exc}); give the "
                "URL of a reachable Prometheus (e.g. http://localhost:9090)"
            ) from exc
        if not isinstance(body, dict) or body.get("status") != "success":
            raise UsageProblem(
                f"{self.where}: {self.base_url} gave no Prometheus answer: {body!r:.200}"
            )
        return body["data"]["result"]


def sigv4_signer(region: str) -> Callable[[str], dict[str, str]]:
    """Headers signing a GET of `url` for AMP with the caller's AWS credentials."""
    import botocore.session
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    credentials = botocore.session.Session().get_credentials()
    if credentials is None:
        raise UsageProblem(
            "no AWS credentials to query the stack's Amazon Managed Prometheus workspace: sign in "
            "(aws sso login, AWS_PROFILE) or give --prometheus-url"
        )

    def sign(url: str) -> dict[str, str]:
        request = AWSRequest(method="GET", url=url)
        SigV4Auth(credentials.get_frozen_credentials(), "aps", region).add_auth(request)
        return dict(request.headers.items())

    return sign


def stack_workspace(region: str, stack: str) -> Prometheus:
    """The workspace the stack created (alias hyperpod-dpd-<stack>: infra/observability.py)."""
    import boto3

    alias = f"hyperpod-dpd-{stack}"
    where = f"the stack's workspace (alias {alias} in aws:region {region})"
    found = boto3.session.Session(region_name=region).client("amp").list_workspaces(alias=alias)
    listed = [w for w in found.get("workspaces", []) if w.get("alias") == alias]
    if not listed:
        raise UsageProblem(
            f"{where}: no such Amazon Managed Prometheus workspace; is the stack deployed with "
            "hyperpod-dpd:observability.enabled true? Or give --prometheus-url"
        )
    workspace = listed[0]["workspaceId"]
    base = f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace}"
    return Prometheus(base, where, sigv4_signer(region))
