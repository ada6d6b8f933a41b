"""schemathesis against `hearth serve`'s own OpenAPI document (`GET /openapi.json`), bounded.

Every operation the document lists gets schema-valid and schema-violating requests (hypothesis,
`EXAMPLES` each), plus schemathesis' probes (undeclared methods, missing auth). Every check must pass:
no 5xx, every answer (status, content type, headers, body, each SSE event) as documented,
violating input refused with a 4xx and valid input accepted, no hang (each call times out at 60 s).
The one exception is written down: on the Base server, a schema-valid upload or speech request whose
recording (the upload's file, `ref_audio`) is not audio, or whose voice is not stored (none is), is
refused with a 400: no schema can say "a recording" or "a voice stored by then". On both, a speech
request with text_format "ssml" whose input is not an SSML document Hearth speaks is a 400: no schema
can say "well-formed SSML".

Speech requests keep max_new_tokens at most 3 (a schema-valid value, set when the case has none or
a larger one) so that a 4096-character input of many sentences stays seconds on the tiny model.
Counted: tests/test_schema.py prints the number of requests made to stderr.
"""

from __future__ import annotations

import os
import sys

import jsonschema_rs
import pytest
import schemathesis  # noqa: E402
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance  # noqa: E402
from servers import Server

from hearth.serve.openapi import SPEAKABLE_PATTERN

EXAMPLES = 40
CALLS = {"custom": 0, "base": 0}


@pytest.fixture(scope="module")
def base_server(base_dir, tmp_path_factory):
    cache = tmp_path_factory.mktemp("schema-cache")
    with Server(base_dir, "--backend", "torch", env={**os.environ, "HEARTH_CACHE": str(cache)}) as s:
        yield s


@pytest.fixture(scope="module")
def custom_schema(server):
    return schemathesis.openapi.from_url(server.url + "/openapi.json")


@pytest.fixture(scope="module")
def base_schema(base_server):
    return schemathesis.openapi.from_url(base_server.url + "/openapi.json")


def bounded(case) -> None:
    if case.operation.path == "/v1/audio/speech" and isinstance(case.body, dict):
        n = case.body.get("max_new_tokens")
        if n is None or (isinstance(n, int | float) and not isinstance(n, bool) and n > 3):
            case.body["max_new_tokens"] = 3


# The document's own validator (jsonschema_rs: Rust, ECMA-262 patterns with Unicode properties).
SPEAKABLE = jsonschema_rs.validator_for({"type": "string", "pattern": SPEAKABLE_PATTERN})


def negated_input_still_speakable(case) -> bool:
    """A case made to violate the input's pattern whose input matches it all the same. To make such a
    value, schemathesis reads \\p{L} as Latin letters and \\p{N} as 0-9 (schemathesis/core/jsonschema/
    patterns.py), so "日本" or "³" come out as violations; the server rightly speaks them. Such a case is
    schema-valid: the server accepting it fails nothing. A value that truly violates the pattern (the
    document's validator agrees) is still checked to be refused."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative or not isinstance(case.body, dict):
        return False
    said = meta.phase.data.description or ""
    text = case.body.get("input")
    return "pattern" in said and "/properties/input" in said and isinstance(text, str) and SPEAKABLE.is_valid(text)


def call(case, kind: str) -> None:
    bounded(case)
    CALLS[kind] += 1
    # Base: a recording that is not audio, or a voice not stored, is refused, schema-valid or not.
    ssml = isinstance(case.body, dict) and case.body.get("text_format") == "ssml"  # the input must be SSML
    excluded = [positive_data_acceptance] if (kind == "base" and case.method == "POST") or ssml else []
    if negated_input_still_speakable(case):
        excluded.append(negative_data_rejection)
    case.call_and_validate(timeout=60, excluded_checks=excluded)


custom = schemathesis.pytest.from_fixture("custom_schema")
base = schemathesis.pytest.from_fixture("base_schema")
limits = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


@custom.parametrize()
@limits
def test_custom_voice_server_keeps_its_document(case):
    call(case, "custom")


@base.parametrize()
@limits
def test_base_server_keeps_its_document(case):
    call(case, "base")


def test_both_servers_still_serve(server, base_server):
    """After the fuzzing: both answer, and the requests made are reported."""
    import requests

    for s in (server, base_server):
        assert requests.get(s.url + "/health", timeout=30).json()["status"] == "ok"
    r = requests.post(server.url + "/v1/audio/speech", json={"input": "Still here.", "voice": "ryan",
                                                             "response_format": "pcm", "max_new_tokens": 3}, timeout=60)
    assert r.status_code == 200 and len(r.content) == 2 * 1920 * 2
    print(f"schemathesis requests: CustomVoice server {CALLS['custom']}, Base server {CALLS['base']}", file=sys.stderr)
