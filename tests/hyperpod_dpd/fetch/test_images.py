"""`hyperpod-dpd fetch --stack`: each image the stack runs by tag resolved to its digest against a
fake OCI registry on 127.0.0.1 (the anonymous token flow, HEAD with Docker-Content-Digest, a
registry that refuses HEAD, an unknown tag, one out of reach), recorded and printed as the line
that pins it."""

from __future__ import annotations

import hashlib
import http.server
import json
import urllib.parse

import pytest
import yaml

from core.images import parse_image
from core.versions import HYPERPOD_DEPENDENCIES_CHART, JOB_PYTHON_IMAGE
from hyperpod_dpd.cli import main
from hyperpod_dpd.fetch import artifacts, registry
from hyperpod_dpd.fetch.images import DIGESTS_FILE
from hyperpod_dpd.fetch.registry import MANIFEST_TYPES, RegistryError, resolve_digest
from infra.charts import COMPLETE, VENDOR_DIR, chart_path
from tests.conftest import edit, stack_raw, write_project
from tests.fix_hints.edits import follow_in_file
from tests.hyperpod_dpd.fetch.local_http import serving

INDEX = json.dumps({"schemaVersion": 2, "mediaType": MANIFEST_TYPES[0], "manifests": []}).encode()
MANIFEST = json.dumps({"schemaVersion": 2, "mediaType": MANIFEST_TYPES[3], "layers": []}).encode()
TOKEN = "anon-pull-token"


@pytest.fixture
def fake_registry(monkeypatch):
    """`/v2/team/vllm/manifests/v1` (an index, HEAD answered with its digest, a token needed) and
    `/v2/head-refused/python/manifests/3.11` (a manifest; HEAD answered 405, no digest header on
    GET); `/v2/private/...` 401 even with the token (Docker Hub's answer for a repository it
    does not have or keeps private); every other tag 404. The challenge is `state["challenge"]`
    ({url}: the server's). Records (method, path, authorized) of each request."""
    state = {"requests": [], "challenge": 'Bearer realm="{url}/token",service="fake",scope="x"'}

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, send_body: bool):
            authorized = self.headers.get("Authorization") == f"Bearer {TOKEN}"
            state["requests"].append((self.command, self.path, authorized))
            if self.path.startswith("/token?"):
                return self._send(200, {}, json.dumps({"token": TOKEN}).encode(), send_body)
            realm = state["challenge"].format(url=state["url"])
            if not authorized or self.path.startswith("/v2/private/"):
                return self._send(401, {"WWW-Authenticate": realm}, b"", send_body)
            accepted = self.headers.get("Accept", "")
            if self.path == "/v2/team/vllm/manifests/v1" and MANIFEST_TYPES[0] in accepted:
                digest = "sha256:" + hashlib.sha256(INDEX).hexdigest()
                return self._send(200, {"Docker-Content-Digest": digest}, INDEX, send_body)
            if self.path == "/v2/head-refused/python/manifests/3.11":
                if self.command == "HEAD":
                    return self._send(405, {}, b"", send_body)
                return self._send(200, {}, MANIFEST, send_body)
            return self._send(404, {}, b'{"errors": [{"code": "MANIFEST_UNKNOWN"}]}', send_body)

        def _send(self, status, headers, body, send_body):
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def do_GET(self):
            self._answer(True)

        def do_HEAD(self):
            self._answer(False)

        def log_message(self, *args):
            pass

    monkeypatch.setattr(registry, "SCHEME", "http")
    with serving(Handler) as (state["url"], state["host"]):
        yield state


def test_head_with_the_anonymous_token_gives_the_digest_of_the_bytes_served(fake_registry):
    ref = parse_image(f"{fake_registry['host']}/team/vllm:v1")
    assert resolve_digest(ref) == "sha256:" + hashlib.sha256(INDEX).hexdigest()
    assert [(m, p.partition("?")[0], a) for m, p, a in fake_registry["requests"]] == [
        ("HEAD", "/v2/team/vllm/manifests/v1", False),  # 401: the challenge
        ("GET", "/token", False),
        ("HEAD", "/v2/team/vllm/manifests/v1", True),  # the digest, no body
    ]


def test_a_registry_that_refuses_head_is_asked_with_get(fake_registry):
    ref = parse_image(f"{fake_registry['host']}/head-refused/python:3.11")
    assert resolve_digest(ref) == "sha256:" + hashlib.sha256(MANIFEST).hexdigest()
    assert ("GET", "/v2/head-refused/python/manifests/3.11", True) in fake_registry["requests"]


def test_an_unknown_tag_or_an_unreachable_registry_says_which(fake_registry):
    with pytest.raises(RegistryError, match=r"has no tag v9 in team/vllm \(.*: 404\)"):
        resolve_digest(parse_image(f"{fake_registry['host']}/team/vllm:v9"))
    with pytest.raises(RegistryError, match=r"cannot reach 127\.0\.0\.1:1 "):
        resolve_digest(parse_image("127.0.0.1:1/team/vllm:v1"))


def _token_query(state) -> dict[str, list[str]]:
    [path] = [p for _, p, _ in state["requests"] if p.startswith("/token?")]
    return urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)


def test_a_challenge_without_scope_is_asked_for_a_pull_of_the_repository(fake_registry):
    fake_registry["challenge"] = 'Bearer realm="{url}/token",service="fake"'
    resolve_digest(parse_image(f"{fake_registry['host']}/team/vllm:v1"))
    assert _token_query(fake_registry) == {
        "service": ["fake"],
        "scope": ["repository:team/vllm:pull"],
    }


def test_a_realm_with_its_own_query_gets_the_parameters_after_an_ampersand(fake_registry):
    fake_registry["challenge"] = 'Bearer realm="{url}/token?issuer=fake",scope="repository:x:pull"'
    resolve_digest(parse_image(f"{fake_registry['host']}/team/vllm:v1"))
    assert _token_query(fake_registry) == {"issuer": ["fake"], "scope": ["repository:x:pull"]}


def test_a_401_with_the_token_says_the_repository_is_missing_or_private(fake_registry):
    ref = f"{fake_registry['host']}/private/vllm:v1"
    with pytest.raises(RegistryError) as caught:
        resolve_digest(parse_image(ref))
    assert str(caught.value).startswith(
        f"{fake_registry['host']} refuses private/vllm to an anonymous pull token ("
    )
    assert "the repository does not exist or needs credentials" in str(caught.value)
    assert "HTTP 401" not in str(caught.value)


def test_a_registry_that_wants_credentials_is_named_not_guessed_at():
    with pytest.raises(
        RegistryError, match=r"asks for credentials \(Basic realm=.*describe-images"
    ):
        registry.token(
            'Basic realm="https://111122223333.dkr.ecr.us-east-2.amazonaws.com/"', "team/vllm"
        )


def test_docker_hub_names_are_asked_of_its_api_host_under_library():
    assert registry.manifest_url(parse_image("curlimages/curl:8.11.1")) == (
        "https://registry-1.docker.io/v2/curlimages/curl/manifests/8.11.1"
    )
    for python in ("python:3.11", "docker.io/python:3.11", "index.docker.io/python:3.11",
                   "index.docker.io/library/python:3.11"):  # fmt: skip
        assert registry.manifest_url(parse_image(python)) == (
            "https://registry-1.docker.io/v2/library/python/manifests/3.11"
        ), python
    assert registry.manifest_url(parse_image("index.docker.io/lmcache/vllm-openai:v0.4.3")) == (
        "https://registry-1.docker.io/v2/lmcache/vllm-openai/manifests/v0.4.3"
    )


@pytest.mark.parametrize("hub", ["docker.io/", "index.docker.io/", ""])
def test_each_spelling_of_docker_hub_is_resolved_by_its_api_host(fake_registry, monkeypatch, hub):
    monkeypatch.setitem(registry.API_HOSTS, "docker.io", fake_registry["host"])
    assert resolve_digest(parse_image(f"{hub}team/vllm:v1")) == (
        "sha256:" + hashlib.sha256(INDEX).hexdigest()
    )
    assert fake_registry["requests"][-1] == ("HEAD", "/v2/team/vllm/manifests/v1", True)


def _fetched_already(project):
    """The chart in place, as a previous fetch left it (no GitHub from here)."""
    chart = project / chart_path(HYPERPOD_DEPENDENCIES_CHART)
    chart.mkdir(parents=True)
    (chart / COMPLETE).write_text("done\n")


def _fetch(project, stack="dev") -> str:
    return main(["fetch", "--stack", stack, "--project-dir", str(project)])


def test_fetch_with_a_stack_records_and_prints_the_command_that_pins_each_image(
    fake_registry, tmp_path, capsys, monkeypatch
):
    host = fake_registry["host"]
    raw = edit(stack_raw("dev"), "hyperpod-dpd:endpoint.image", f"{host}/team/vllm:v1")
    edit(raw, "hyperpod-dpd:endpoint.imageDpdCapable", True)
    edit(raw, "hyperpod-dpd:jobs", {"image": f"{host}/head-refused/python:3.11"})
    project = write_project(tmp_path / "project", raw)
    _fetched_already(project)
    monkeypatch.setitem(registry.API_HOSTS, "docker.io", "127.0.0.1:1")  # out of reach
    assert _fetch(project) == 0
    out = capsys.readouterr().out
    index = "sha256:" + hashlib.sha256(INDEX).hexdigest()
    manifest = "sha256:" + hashlib.sha256(MANIFEST).hexdigest()
    assert json.loads((project / DIGESTS_FILE).read_text()) == {
        f"{host}/head-refused/python:3.11": manifest,
        f"{host}/team/vllm:v1": index,
    }
    endpoint = f"pulumi config set --stack dev --path 'hyperpod-dpd:endpoint.image' '{host}/team/vllm:v1@{index}'"
    jobs = f"pulumi config set --stack dev --path 'hyperpod-dpd:jobs.image' '{host}/head-refused/python:3.11@{manifest}'"
    assert f"  {endpoint}\n" in out and f"  {jobs}\n" in out
    # verify's curl pod is on Docker Hub, out of reach here: its own line, the rest done.
    assert "  not resolved: curlimages/curl:8.11.1 (hyperpod-dpd verify --curl-image): " in out
    assert "1 image(s) not resolved: the chart is fetched" in out
    # Run, the commands pin both images in the nested keys: the plan takes the stack file.
    for command in (endpoint, jobs):
        follow_in_file(project / "Pulumi.dev.yaml", command)
    config = yaml.safe_load((project / "Pulumi.dev.yaml").read_text())["config"]
    assert not [k for k in config if k.endswith(".image")]  # no new top-level key
    assert _plan_images(project, tmp_path / "plan") == [
        ("hyperpod-dpd:endpoint.image", f"{host}/team/vllm:v1@{index}", True),
        ("hyperpod-dpd:jobs.image", f"{host}/head-refused/python:3.11@{manifest}", True),
    ]
    # Pinned, nothing is asked of the registry again.
    asked = len(fake_registry["requests"])
    assert _fetch(project) == 0
    assert (
        f"pinned already: hyperpod-dpd:jobs.image: {host}/head-refused/python:3.11@{manifest}"
        in (capsys.readouterr().out)
    )
    assert len(fake_registry["requests"]) == asked


def _plan_images(project, out) -> list[tuple[str, str, bool]]:
    """`hyperpod-dpd plan` of the project's dev stack (exit 0): its images, as plan.json has them."""
    assert main(["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(out)]) == 0
    facts = json.loads((out / "plan.json").read_text())
    return [(i["key"], i["image"], i["pinned"]) for i in facts["images"]]


def test_the_commands_fetch_prints_pin_each_endpoint_of_a_map(
    fake_registry, tmp_path, capsys, monkeypatch
):
    """`hyperpod-dpd:endpoints.<name>.image`, as the canary stack sets its two endpoints."""
    host = fake_registry["host"]
    raw = stack_raw("canary")
    for name in raw["hyperpod-dpd:endpoints"]:
        edit(raw, f"hyperpod-dpd:endpoints.{name}.image", f"{host}/team/vllm:v1")
        edit(raw, f"hyperpod-dpd:endpoints.{name}.imageDpdCapable", True)
    project = write_project(tmp_path / "project", raw, "canary")
    _fetched_already(project)
    monkeypatch.setitem(registry.API_HOSTS, "docker.io", "127.0.0.1:1")
    assert _fetch(project, "canary") == 0
    commands = [
        line.strip()
        for line in capsys.readouterr().out.splitlines()
        if "hyperpod-dpd:endpoints." in line
    ]
    index = "sha256:" + hashlib.sha256(INDEX).hexdigest()
    assert commands == [
        f"pulumi config set --stack canary --path 'hyperpod-dpd:endpoints.{name}.image' '{host}/team/vllm:v1@{index}'"
        for name in raw["hyperpod-dpd:endpoints"]
    ]
    for command in commands:
        follow_in_file(project / "Pulumi.canary.yaml", command)
    config = yaml.safe_load((project / "Pulumi.canary.yaml").read_text())["config"]
    assert {e["image"] for e in config["hyperpod-dpd:endpoints"].values()} == {
        f"{host}/team/vllm:v1@{index}"
    }
    assert main(["plan", "--stack", "canary", "--project-dir", str(project),
                 "--out", str(tmp_path / "plan")]) == 0  # fmt: skip


@pytest.mark.parametrize(
    ("record", "why"),
    [('{"python:3.11": "sha256:', "not JSON: "), ('["python:3.11"]', "a JSON list, not an object")],
)
def test_an_unreadable_digest_record_is_replaced_with_a_warning(
    fake_registry, tmp_path, capsys, monkeypatch, record, why
):
    host = fake_registry["host"]
    raw = edit(stack_raw("dev"), "hyperpod-dpd:endpoint.image", f"{host}/team/vllm:v1")
    edit(raw, "hyperpod-dpd:endpoint.imageDpdCapable", True)
    project = write_project(tmp_path / "project", raw)
    _fetched_already(project)
    (project / DIGESTS_FILE).write_text(record)
    monkeypatch.setitem(registry.API_HOSTS, "docker.io", "127.0.0.1:1")
    assert _fetch(project) == 0
    captured = capsys.readouterr()
    assert f"warning: {DIGESTS_FILE} was unreadable ({why}" in captured.out
    assert "fetch wrote a new record with the digests resolved now" in captured.out
    assert "Traceback" not in captured.out + captured.err
    index = "sha256:" + hashlib.sha256(INDEX).hexdigest()
    assert json.loads((project / DIGESTS_FILE).read_text()) == {f"{host}/team/vllm:v1": index}
    assert (
        f"pulumi config set --stack dev --path 'hyperpod-dpd:endpoint.image' '{host}/team/vllm:v1@{index}'"
        in captured.out
    )


def test_fetch_without_a_stack_fetches_what_it_did_and_says_how_to_pin_images(
    tmp_path, capsys, monkeypatch
):
    project = write_project(tmp_path / "project", stack_raw("dev"))
    _fetched_already(project)
    downloads = []
    monkeypatch.setattr(artifacts, "_get", lambda url, headers=None: downloads.append(url))
    assert main(["fetch", "--project-dir", str(project)]) == 0
    # The chart was there: nothing is downloaded, not the ALB controller's policy either (it is
    # vendored in the repository, specs/alb_controller/).
    assert downloads == [] and sorted(p.name for p in (project / VENDOR_DIR).iterdir()) == [
        "charts"
    ]
    out = capsys.readouterr().out
    assert "`hyperpod-dpd fetch --stack <stack>` resolves the digests" in out
    assert not (project / DIGESTS_FILE).exists()
    assert JOB_PYTHON_IMAGE not in out
