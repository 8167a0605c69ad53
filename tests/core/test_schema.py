"""The OpenAPI schema declares what the API really answers: every error with the one error shape, a summary
for every operation, and null where a field can be null. `make schemathesis` checks it against the running app.
"""

from __future__ import annotations

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

ERROR_REF = "#/components/schemas/ErrorOutput"
PUBLIC_OPERATIONS = {("post", "/api/v1/auth/token/")}


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield method, path, operation


def test_every_operation_has_a_summary(schema):
    missing = [f"{m.upper()} {p}" for m, p, op in operations(schema) if not op.get("summary", "").strip()]
    assert missing == []


def test_every_operation_declares_its_errors_with_the_error_shape(schema):
    problems = []
    for method, path, operation in operations(schema):
        expected = {"400", "503"}
        if (method, path) not in PUBLIC_OPERATIONS:
            expected |= {"401", "403"}
        if "{" in path:
            expected.add("404")
        if method in {"post", "put", "patch", "delete"}:
            expected.add("409")
        for code in sorted(expected):
            response = operation["responses"].get(code)
            if response is None:
                problems.append(f"{method.upper()} {path}: {code} not declared")
                continue
            ref = response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
            if ref != ERROR_REF:
                problems.append(f"{method.upper()} {path}: {code} is not the error shape ({ref})")
    assert problems == []


def test_throttled_and_idempotent_operations_declare_429_and_422(schema):
    assert "429" in schema["paths"]["/api/v1/auth/token/"]["post"]["responses"]
    assert "422" in schema["paths"]["/api/v1/observations/batch/"]["post"]["responses"]


def test_operations_with_query_parameters_declare_the_web_servers_414(schema):
    """gunicorn answers 414 with an HTML page to a request line over 4,094 bytes, before Django runs."""
    problems = []
    for method, path, operation in operations(schema):
        has_query = any(p.get("in") == "query" for p in operation.get("parameters", []))
        response = operation["responses"].get("414")
        if not has_query:
            if response is not None:
                problems.append(f"{method.upper()} {path}: 414 declared without query parameters")
        elif response is None or set(response.get("content", {})) != {"text/html"}:
            problems.append(f"{method.upper()} {path}: 414 not declared as text/html")
    assert problems == []
    history = schema["paths"]["/api/v1/freeze/windows/{id}/history/"]["get"]["responses"]["414"]
    assert "4,094 bytes" in history["description"]


def test_error_component_is_the_error_shape(schema):
    component = schema["components"]["schemas"]["ErrorOutput"]
    assert set(component["required"]) == {"detail", "code", "errors"}
    item = schema["components"]["schemas"]["ErrorItemOutput"]
    assert item["properties"]["field"]["nullable"] is True


@pytest.mark.django_db
def test_real_error_bodies_validate_against_the_error_component(schema, api, viewer, as_user):
    components = schema["components"]["schemas"]
    resolver_schema = {"$ref": ERROR_REF, "components": {"schemas": components}}
    bodies = [
        api.get("/api/v1/auth/me/").json(),  # 401
        as_user(viewer).get("/api/v1/gates/999999/").json(),  # 404
        api.post("/api/v1/auth/token/", {}, format="json").json(),  # 400 with field errors
    ]
    for body in bodies:
        jsonschema.validate(body, resolver_schema)


def test_nullable_criterion_fields_are_declared_nullable(schema):
    properties = schema["components"]["schemas"]["CriterionOutput"]["properties"]
    for name in ("attested_by", "metric", "workload"):
        assert properties[name].get("nullable") is True, name
