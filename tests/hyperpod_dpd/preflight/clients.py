"""AWS clients for the preflight tests: one boto3 session per Region for the whole test session,
each test its own clients (and so its own stubs, or moto's state) made from it. A new session
reads and parses the services' models again (EC2's alone is megabytes of JSON): a quarter of a
second of CPU a test, for the same models."""

from __future__ import annotations

import functools

import boto3


@functools.cache
def _session(region: str) -> boto3.session.Session:
    return boto3.session.Session(region_name=region)


def clients(region: str, services: tuple[str, ...]) -> dict:
    """A new client of each service, in `region`."""
    return {s: _session(region).client(s) for s in services}
