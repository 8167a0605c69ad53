"""Register a metric, make a new version (preview → confirm), activate and deprecate: as pages."""

from __future__ import annotations

import pytest

from core.models import OutboxMessage, Transition
from metrics.models import MetricDefinition
from program.models import Criterion, Gate
from tests.program.factories import make_program, metrics_for_template

REGISTER = {
    "key": "serving-latency",
    "name": "Serving latency",
    "unit": "ms",
    "direction": "lower_is_better",
    "statistic": "p99",
    "sampling": "per_request",
    "start_event": "the request arrives",
    "end_event": "the last byte is sent",
    "includes": ["queueing"],
    "owner_team": "inference-platform",
    "max_value": "60000",
}


@pytest.fixture
def world(db, lead):
    """The template's metrics (step-time@1 active) and a program whose gates pin them."""
    metrics = metrics_for_template()
    return {**metrics, "program": make_program(lead)}


def step_time_fields(world, **changes) -> dict:
    step = world["step"]
    fields = {
        "name": step.name,
        "description": step.description,
        "unit": step.unit,
        "direction": step.direction,
        "statistic": step.statistic,
        "sampling": step.sampling,
        "start_event": step.start_event,
        "end_event": step.end_event,
        "includes": step.includes,
        "excludes": step.excludes,
        "owner_team": step.owner_team,
        "min_value": "" if step.min_value is None else step.min_value,
        "max_value": "" if step.max_value is None else step.max_value,
    }
    fields.update(changes)
    return fields


# --- register ----------------------------------------------------------------------------------------


def test_metric_owner_registers_a_draft_and_lands_on_its_page(client, metric_owner, db):
    client.force_login(metric_owner)
    form = client.get("/metrics/new/").content.decode()
    assert 'name="key"' in form and 'name="includes"' in form
    assert 'value="data-platform"' in form  # the owner's team, suggested
    response = client.post("/metrics/new/", REGISTER, follow=True)
    assert response.redirect_chain[-1][0] == "/metrics/serving-latency@1/"
    page = response.content.decode()
    assert "Registered serving-latency@1 as a draft." in page
    created = MetricDefinition.objects.get(key="serving-latency")
    assert (created.version, created.status, created.unit, created.includes) == (
        1,
        "draft",
        "ms",
        ["queueing"],
    )
    assert (created.min_value, created.max_value) == (0.0, 60000.0)  # blank minimum: 0 for a duration
    assert Transition.objects.filter(action="registered", object_id=created.pk).exists()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"unit": "bananas"}, "unit", "is not a known unit"),
        ({"key": "Not A Slug"}, "key", "Enter a valid"),
        # The page names fields by their labels (the API keeps min_value): issue 29.
        ({"min_value": "10", "max_value": "5"}, "max_value", "Max value must not be below min value"),
        ({"excludes": ["queueing"]}, "excludes", "cannot be both included and excluded"),
        ({"direction": "sideways"}, "direction", "Select a valid choice"),
    ],
)
def test_bad_registration_is_a_400_with_the_error_on_its_field(
    client, metric_owner, db, change, field, message
):
    client.force_login(metric_owner)
    response = client.post("/metrics/new/", {**REGISTER, **change})
    assert response.status_code == 400
    page = response.content.decode()
    error = page.split(f'id="error-{field}"')[1].split("</div>")[0]
    assert message in error
    assert not MetricDefinition.objects.filter(key="serving-latency").exists()


def test_registering_an_existing_key_names_the_key(client, metric_owner, world):
    client.force_login(metric_owner)
    response = client.post("/metrics/new/", {**REGISTER, "key": "step-time"})
    assert response.status_code == 409  # the service's status: the key is taken
    assert (
        "Metric &#x27;step-time&#x27; exists already" in response.content.decode().split('id="error-key"')[1]
    )


@pytest.mark.parametrize(
    "path", ["/metrics/new/", "/metrics/step-time/versions/new/", "/metrics/step-time@1/activate/"]
)
def test_non_owners_get_the_styled_refusal_for_get_and_forced_post(client, lead, world, path):
    client.force_login(lead)
    for response in (client.get(path), client.post(path, REGISTER)):
        assert response.status_code == 403
        page = response.content.decode()
        assert "Only a metric owner may" in page
        assert '<form method="post" class="card' not in page
    assert MetricDefinition.objects.filter(key="step-time").count() == 1
    assert not MetricDefinition.objects.filter(key="serving-latency").exists()


# --- new version -------------------------------------------------------------------------------------


def test_new_version_form_starts_from_the_latest_version(client, metric_owner, world):
    client.force_login(metric_owner)
    page = client.get("/metrics/step-time/versions/new/").content.decode()
    assert "New version: step-time@2" in page
    assert 'name="unit" value="ms"' in page
    assert 'name="start_event" value="step-time starts"' in page


def test_preview_lists_what_changed_and_the_gates_that_go_stale_and_writes_nothing(
    client, metric_owner, world
):
    client.force_login(metric_owner)
    pinned = Gate.objects.filter(criteria__metric=world["step"]).distinct()
    assert pinned.exists()
    fields = step_time_fields(world, excludes=["data_loading"], max_value="5000")
    response = client.post("/metrics/step-time/versions/new/", fields)
    assert response.status_code == 200
    page = response.content.decode()
    preview = page.split('id="preview"')[1].split("</section>")[0]
    assert "<li>excludes: nothing → data loading</li>" in preview
    assert "<li>max value: — → 5000.0</li>" in preview
    for gate in pinned:
        assert f'href="/programs/gates/{gate.pk}/"' in preview
        assert f"Rebuild · {gate.name}" in preview
    other = Gate.objects.exclude(pk__in=pinned).filter(phase__program=world["program"]).first()
    assert f'href="/programs/gates/{other.pk}/"' not in preview
    assert MetricDefinition.objects.filter(key="step-time").count() == 1
    assert not Transition.objects.filter(action="version_created").exists()


def test_confirming_the_previewed_values_creates_the_draft(client, metric_owner, world):
    client.force_login(metric_owner)
    fields = step_time_fields(world, excludes=["data_loading"])
    preview = client.post("/metrics/step-time/versions/new/", fields).content.decode()
    digest = preview.split('name="confirm" value="')[1].split('"')[0]
    response = client.post("/metrics/step-time/versions/new/", {**fields, "confirm": digest}, follow=True)
    assert response.redirect_chain[-1][0] == "/metrics/step-time@2/"
    assert "Created step-time@2 as a draft. &#x27;step-time&#x27; still means step-time@1" in (
        response.content.decode()
    )
    new = MetricDefinition.objects.get(key="step-time", version=2)
    assert (new.status, new.excludes) == ("draft", ["data_loading"])


def test_values_changed_after_the_preview_are_previewed_again_not_created(client, metric_owner, world):
    client.force_login(metric_owner)
    fields = step_time_fields(world, excludes=["data_loading"])
    preview = client.post("/metrics/step-time/versions/new/", fields).content.decode()
    digest = preview.split('name="confirm" value="')[1].split('"')[0]
    changed = {**fields, "excludes": ["warmup"], "confirm": digest}
    response = client.post("/metrics/step-time/versions/new/", changed)
    assert response.status_code == 200
    page = response.content.decode()
    assert "The fields changed after the preview" in page
    assert "<li>excludes: nothing → warmup</li>" in page
    assert MetricDefinition.objects.filter(key="step-time").count() == 1


def test_a_version_without_a_change_is_refused_on_the_page(client, metric_owner, world):
    client.force_login(metric_owner)
    response = client.post("/metrics/step-time/versions/new/", step_time_fields(world))
    assert response.status_code == 400
    assert "Nothing differs from step-time@1" in response.content.decode()


def test_the_boundary_in_another_order_is_no_change(client, metric_owner, world):
    """The form sends includes and excludes in its checkboxes' order, which need not be the stored one."""
    client.force_login(metric_owner)
    step = world["step"]
    step.excludes = ["warmup", "data_loading"]
    step.save(update_fields=["excludes"])
    response = client.post(
        "/metrics/step-time/versions/new/", step_time_fields(world, excludes=["data_loading", "warmup"])
    )
    assert response.status_code == 400
    assert "Nothing differs from step-time@1" in response.content.decode()
    response = client.post(
        "/metrics/step-time/versions/new/",
        step_time_fields(world, excludes=["data_loading", "warmup"], max_value="5000"),
    )
    preview = response.content.decode().split('id="preview"')[1].split("</section>")[0]
    assert "excludes" not in preview
    assert "<li>max value: — → 5000.0</li>" in preview


def test_bad_unit_in_a_new_version_is_named_inline(client, metric_owner, world):
    client.force_login(metric_owner)
    response = client.post("/metrics/step-time/versions/new/", step_time_fields(world, unit="parsecs/zz"))
    assert response.status_code == 400
    assert "not a known unit" in response.content.decode().split('id="error-unit"')[1]


# --- activate and deprecate --------------------------------------------------------------------------


@pytest.fixture
def draft(world, metric_owner):
    from metrics.services import definition_version_create

    return definition_version_create(actor=metric_owner, key="step-time", changes={"excludes": ["warmup"]})


def test_activate_page_asks_first_and_lists_the_gates_that_go_stale(client, metric_owner, world, draft):
    client.force_login(metric_owner)
    page = client.get("/metrics/step-time@2/activate/").content.decode()
    assert "Activate step-time@2?" in page
    assert "step-time@1 becomes deprecated" in page
    assert "<li>excludes: nothing → warmup</li>" in page
    stale = page.split('id="stale-gates"')[1].split("</ul>")[0]
    for gate in Gate.objects.filter(criteria__metric=world["step"]).distinct():
        assert gate.name in stale
    draft.refresh_from_db()
    assert draft.status == "draft"


def test_activating_from_the_page_supersedes_the_old_version_and_says_so(
    client, metric_owner, world, draft, django_capture_on_commit_callbacks
):
    client.force_login(metric_owner)
    pinned = Gate.objects.filter(criteria__metric=world["step"]).distinct().count()
    # step-time@2 has no observations yet: activating it takes the explicit tick (issue 29).
    response = client.post("/metrics/step-time@2/activate/", {"confirm_empty": "1"}, follow=True)
    assert response.redirect_chain[-1][0] == "/metrics/step-time@2/"
    page = response.content.decode()
    assert (
        f"step-time@2 is now the active version of &#x27;step-time&#x27;. step-time@1 is deprecated. "
        f"{pinned} gate(s) pinning step-time@1 are marked stale." in page
    )
    statuses = dict(MetricDefinition.objects.filter(key="step-time").values_list("version", "status"))
    assert statuses == {1: "deprecated", 2: "active"}
    assert OutboxMessage.objects.filter(task="program.tasks.gates_mark_stale").exists()


def test_activating_a_version_that_is_not_a_draft_is_a_message_not_an_error(client, metric_owner, world):
    client.force_login(metric_owner)
    response = client.post("/metrics/step-time@1/activate/", follow=True)
    assert response.status_code == 200
    assert "flash-error" in response.content.decode()
    assert MetricDefinition.objects.get(key="step-time").status == "active"


def test_deprecating_from_the_page_records_the_reason(client, metric_owner, world):
    client.force_login(metric_owner)
    confirm = client.get("/metrics/step-time@1/deprecate/").content.decode()
    assert "has no active version" in confirm
    response = client.post("/metrics/step-time@1/deprecate/", {"reason": "counted data loading"}, follow=True)
    assert "step-time@1 is deprecated" in response.content.decode()
    assert MetricDefinition.objects.get(key="step-time").status == "deprecated"
    record = Transition.objects.get(action="deprecated", object_id=world["step"].pk)
    assert record.reason == "counted data loading"


def test_forced_deprecate_by_a_non_owner_is_refused_and_changes_nothing(client, engineer, world):
    client.force_login(engineer)
    response = client.post("/metrics/step-time@1/deprecate/", {"reason": "x"})
    assert response.status_code == 403
    assert "Only a metric owner may deprecate metric definitions." in response.content.decode()
    assert MetricDefinition.objects.get(key="step-time").status == "active"


def test_criteria_keep_their_pinned_version_after_activation(client, metric_owner, world, draft):
    client.force_login(metric_owner)
    client.post("/metrics/step-time@2/activate/", {"confirm_empty": "1"})
    assert not Criterion.objects.filter(metric=draft).exists()
    assert Criterion.objects.filter(metric=world["step"]).exists()


@pytest.mark.parametrize("key", ["new", "compare"])
def test_keys_that_are_page_routes_are_refused(client, metric_owner, db, key):
    client.force_login(metric_owner)
    response = client.post("/metrics/new/", {**REGISTER, "key": key})
    assert response.status_code == 400
    assert "is reserved for a page" in response.content.decode().split('id="error-key"')[1]
    assert not MetricDefinition.objects.filter(key=key).exists()


def test_comparison_page_offers_drafts_so_shadow_data_can_be_compared(client, viewer, world):
    from tests.metrics.factories import definition

    definition(key="step-time", version=2, status="draft", excludes=["warmup"])
    client.force_login(viewer)
    page = client.get("/metrics/compare/").content.decode()
    assert '<option value="step-time@2">Step-Time (step-time@2, draft)</option>' in page


def test_the_api_refuses_a_reserved_key_too(as_user, metric_owner, db):
    from tests.metrics.factories import definition_body

    response = as_user(metric_owner).post(
        "/api/v1/definitions/", definition_body(key="compare"), format="json"
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["key"]
