"""GET /api/v1/templates/: templates with their phases (months), gates, criteria and slots."""

from __future__ import annotations

from rest_framework.test import APIClient

from tests.metrics.factories import definition


def test_any_signed_in_user_lists_the_templates(as_user, viewer):
    response = as_user(viewer).get("/api/v1/templates/")
    assert response.status_code == 200
    (template,) = [t for t in response.json() if t["key"] == "rebuild-14m"]
    assert template["months"] == 14
    assert [(p["kind"], p["first_month"], p["last_month"]) for p in template["phases"]] == [
        ("poc", 1, 3),
        ("canary", 4, 8),
        ("cutover", 9, 12),
        ("frontier", 13, 14),
    ]
    poc = template["phases"][0]
    assert [(g["kind"], g["month"]) for g in poc["gates"]] == [("exit", 3), ("milestone", 2)]
    criterion = poc["gates"][0]["criteria"][0]
    assert criterion["metric_slot"] == "throughput" and criterion["workload_slot"] == "large_workload"
    assert criterion["threshold"] == 0.9
    assert [s["name"] for s in template["slots"]] == [
        "throughput",
        "step_time",
        "scaling_efficiency",
        "canary_workload",
        "large_workload",
    ]
    assert not any(s["suggested_exists"] for s in template["slots"])


def test_a_template_shows_which_suggestions_the_registry_has(as_user, viewer):
    definition(key="training-throughput")
    slots = {s["name"]: s for s in as_user(viewer).get("/api/v1/templates/rebuild-14m/").json()["slots"]}
    assert slots["throughput"]["suggested_exists"] is True
    assert slots["throughput"]["suggested"] == "training-throughput"
    assert slots["step_time"]["suggested_exists"] is False
    assert "description" in slots["step_time"]


def test_unknown_template_is_404_and_anonymous_is_401(as_user, viewer, db):
    assert as_user(viewer).get("/api/v1/templates/nope/").status_code == 404
    assert APIClient().get("/api/v1/templates/").status_code == 401
