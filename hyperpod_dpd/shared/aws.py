"""The AWS clients of the commands: one boto3 session per Region, credentials found as the AWS
CLI finds them (environment, profile, SSO, instance role). An error of the user's setup (no such
profile, no credentials) is bad input: core/exits.py `unhandled` says so with the fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3

ClientFactory = Callable[[str], Any]


def client_factory(region: str | None) -> ClientFactory:
    """service name -> a client of that service in `region` (None: the configured Region)."""
    session = boto3.session.Session(region_name=region)
    return lambda service: session.client(service)
