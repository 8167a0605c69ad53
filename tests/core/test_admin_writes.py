"""The three admin probes of issue 9 (finding 2), and the admin paths that do write, through services."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType

from core.models import Transition
from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PROGRAM_LEADS
from freeze import services as freeze_services
from freeze.models import Component
from metrics.models import MetricDefinition, System, Workload
from program.models import Decision, Gate
from tests.conftest import make_user
from tests.freeze.factories import freeze_setup, submitted_exception
from tests.metrics.factories import definition
from tests.program.factories import observe


def superuser(username: str, *groups: str):
    user = make_user(username, *groups)
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["is_staff", "is_superuser"])
    return user


def definition_form(d: MetricDefinition, **changes) -> dict:
    """The admin change form of a definition, as a browser posts it (key and version included, as
    the admin form had them before it became read-only there)."""
    data = {
        "key": d.key,
        "version": d.version,
        "name": d.name,
        "description": d.description,
        "unit": d.unit,
        "direction": d.direction,
        "statistic": d.statistic,
        "sampling": d.sampling,
        "start_event": d.start_event,
        "end_event": d.end_event,
        "includes": ",".join(d.includes),
        "excludes": ",".join(d.excludes),
        "owner_team": d.owner_team,
    }
    return {**data, **changes}


def change_url(obj) -> str:
    return f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"


@pytest.fixture
def checkpoint(db):
    return definition(key="checkpoint-save-time", unit="s", description="Wall time of one save.")


# --- probe 1: the unit of an active definition ----------------------------------------------------------


def test_the_unit_of_an_active_definition_is_shown_read_only_in_the_admin(client, checkpoint):
    """Not offered, then refused on save (issue 29): the change page shows the unit as text, and a
    post that carries one anyway leaves it as it was."""
    client.force_login(superuser("root", METRIC_OWNERS))
    page = client.get(change_url(checkpoint)).content.decode()
    assert 'name="unit"' not in page and "field-unit" in page

    response = client.post(change_url(checkpoint), definition_form(checkpoint, unit="ms"))

    checkpoint.refresh_from_db()
    assert checkpoint.unit == "s"
    assert response.status_code == 302  # nothing else changed: saved as it was


def test_the_description_of_an_active_definition_is_edited_through_the_service(client, checkpoint):
    root = superuser("root", METRIC_OWNERS)
    client.force_login(root)

    response = client.post(
        change_url(checkpoint), definition_form(checkpoint, description="One save, fsync included.")
    )

    assert response.status_code == 302
    checkpoint.refresh_from_db()
    assert checkpoint.description == "One save, fsync included."
    edit = Transition.objects.get(object_id=checkpoint.pk, action="edited")
    assert edit.actor == root
    assert edit.data["changes"]  # the service's history entry, with what changed


def test_an_admin_edit_needs_the_role_the_service_asks_for(client, checkpoint):
    client.force_login(superuser("root"))  # superuser, but no metric owner

    response = client.post(change_url(checkpoint), definition_form(checkpoint, description="Edited."))

    assert response.status_code == 200
    assert "Only a metric owner may edit metric definitions." in response.content.decode()
    checkpoint.refresh_from_db()
    assert checkpoint.description == "Wall time of one save."


def test_definitions_are_not_added_or_deleted_in_the_admin(client, checkpoint):
    client.force_login(superuser("root", METRIC_OWNERS))
    assert client.get("/admin/metrics/metricdefinition/add/").status_code == 403
    assert (
        client.post(change_url(checkpoint).replace("change/", "delete/"), {"post": "yes"}).status_code == 403
    )
    assert MetricDefinition.objects.filter(pk=checkpoint.pk).exists()


def test_the_activate_action_reports_the_service_refusal(client, checkpoint):
    client.force_login(superuser("root", METRIC_OWNERS))
    response = client.post(
        "/admin/metrics/metricdefinition/",
        {"action": "activate", "_selected_action": [checkpoint.pk]},
        follow=True,
    )
    assert (
        "checkpoint-save-time@1 is active; activating is allowed only when it is draft."
        in response.content.decode()
    )


# --- probe 2: an approved exception raised to high risk -------------------------------------------------


def test_an_approved_exception_cannot_be_raised_to_high_risk_in_the_admin(client, lead, engineer):
    ref = freeze_setup(lead)
    exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    exception = freeze_services.exception_approve(actor=lead, exception=exception)
    assert (exception.status, exception.risk, exception.required_approvals) == ("approved", "low", 1)
    client.force_login(superuser("root", PROGRAM_LEADS, FRAMEWORK_ENGINEERS))

    page = client.get(change_url(exception))
    forced = client.post(
        change_url(exception),
        {
            "component": exception.component_id,
            "window": exception.window_id,
            "title": exception.title,
            "change": exception.change,
            "justification": exception.justification,
            "risk": "high",
            "rollback_plan": exception.rollback_plan,
            "change_starts_at_0": exception.change_starts_at.date(),
            "change_starts_at_1": exception.change_starts_at.time(),
            "change_ends_at_0": exception.change_ends_at.date(),
            "change_ends_at_1": exception.change_ends_at.time(),
            "approvals-TOTAL_FORMS": 0,
            "approvals-INITIAL_FORMS": 0,
        },
    )

    exception.refresh_from_db()
    assert (exception.status, exception.risk, exception.required_approvals) == ("approved", "low", 1)
    assert forced.status_code == 403
    assert page.status_code == 200 and b'name="_save"' not in page.content


# --- probe 3: decisions and transitions by hand --------------------------------------------------------


@pytest.fixture
def gate(lead):
    ref = freeze_setup(lead)
    return Gate.objects.filter(phase__program=ref["program"]).first()


def test_a_decision_cannot_be_added_by_hand(client, gate):
    root = superuser("root", PROGRAM_LEADS)
    client.force_login(root)

    listing = client.get("/admin/program/decision/")
    forced = client.post(
        "/admin/program/decision/add/",
        {
            "gate": gate.pk,
            "decision": "pass",
            "note": "by hand",
            "decided_by": root.pk,
            "evidence": '{"by": "hand"}',
        },
    )

    assert not Decision.objects.exists()
    assert forced.status_code == 403
    assert client.get("/admin/program/decision/add/").status_code == 403
    assert listing.status_code == 200 and b"/admin/program/decision/add/" not in listing.content


def test_a_transition_cannot_be_added_by_hand(client, gate):
    root = superuser("root", PROGRAM_LEADS)
    client.force_login(root)
    history = Transition.objects.count()

    forced = client.post(
        "/admin/core/transition/add/",
        {
            "content_type": ContentType.objects.get_for_model(Gate).pk,
            "object_id": gate.pk,
            "action": "decided",
            "from_state": "open",
            "to_state": "passed",
            "actor": root.pk,
            "data": "{}",
        },
    )

    assert Transition.objects.count() == history
    assert forced.status_code == 403
    assert client.get("/admin/core/transition/add/").status_code == 403


# --- the admin's other writes go through services too -------------------------------------------------


def test_systems_are_deleted_through_reference_delete(client, checkpoint):
    client.force_login(superuser("root"))
    used, spare = (
        System.objects.create(key="used", name="Used"),
        System.objects.create(key="spare", name="Spare"),
    )
    workload = Workload.objects.create(key="w", name="W", size="small", criticality="core")
    observe(checkpoint, used, workload, [1.0])

    response = client.post(
        "/admin/metrics/system/",
        {"action": "delete_unreferenced", "_selected_action": [used.pk, spare.pk]},
        follow=True,
    )

    page = response.content.decode()
    assert "system &#x27;used&#x27; has observations; it cannot be deleted." in page
    assert "Deleted 1." in page
    assert list(System.objects.values_list("key", flat=True)) == ["used"]
    assert client.get(f"/admin/metrics/system/{used.pk}/delete/").status_code == 403


def test_components_are_saved_through_component_upsert(client, db):
    form = {
        "key": "trainer",
        "name": "Trainer",
        "layer": "training_framework",
        "owner_team": "training-platform",
    }
    # Staff with the admin's permissions, but neither a program creator nor a platform admin (a superuser
    # is one, issue 25): the service refuses.
    staff = make_user(
        "staff", perms=("freeze.add_component", "freeze.change_component", "freeze.view_component")
    )
    staff.is_staff = True
    staff.save(update_fields=["is_staff"])
    client.force_login(staff)
    refused = client.post("/admin/freeze/component/add/", {**form, "description": ""})
    assert refused.status_code == 200
    assert (
        "Only a program creator (group program-leads) or a platform admin may manage components."
        in refused.content.decode()
    )
    assert not Component.objects.exists()

    client.force_login(superuser("root_lead", PROGRAM_LEADS))
    assert client.post("/admin/freeze/component/add/", {**form, "description": ""}).status_code == 302
    component = Component.objects.get(key="trainer")
    renamed = client.post(change_url(component), {**form, "name": "Trainer v2", "description": "d"})
    assert renamed.status_code == 302
    component.refresh_from_db()
    assert (component.name, component.description) == ("Trainer v2", "d")


# --- pull sources: added and changed through their services (issue 26, item 2) ------------------------


def pull_source_form(d: MetricDefinition, **changes) -> dict:
    system = System.objects.get_or_create(key="rebuilt", defaults={"name": "Rebuilt"})[0]
    workload = Workload.objects.get_or_create(
        key="finetune", defaults={"name": "Fine-tune", "size": "medium", "criticality": "peripheral"}
    )[0]
    data = {
        "definition": d.pk,
        "system": system.pk,
        "base_url": "http://prometheus.internal:9090",
        "query": 'histogram_quantile(0.5, rate(save_seconds_bucket{{workload="{workload}"}}[5m]))',
        "unit": "s",
        "step_seconds": 60,
        "point_kind": "aggregate",
        "workloads": [workload.pk],
        "enabled": "on",
    }
    return {**data, **changes}


def test_an_aggregate_pull_into_a_per_request_metric_is_refused_on_the_admin_form(client, checkpoint):
    from metrics.models import PullSource

    client.force_login(superuser("root", METRIC_OWNERS))

    response = client.post("/admin/metrics/pullsource/add/", pull_source_form(checkpoint))

    assert response.status_code == 200  # the form again, with the service's refusal on it
    assert "does not fit checkpoint-save-time@1, which is sampled per_request" in response.content.decode()
    assert not PullSource.objects.exists()


def test_a_pull_source_is_added_and_changed_through_its_services(client, checkpoint):
    from metrics.models import PullSource

    client.force_login(superuser("root", METRIC_OWNERS))

    added = client.post("/admin/metrics/pullsource/add/", pull_source_form(checkpoint, point_kind="sample"))
    assert added.status_code == 302, added.content.decode()
    source = PullSource.objects.get()
    assert source.point_kind == "sample" and [w.key for w in source.workloads.all()] == ["finetune"]
    form = pull_source_form(checkpoint, point_kind="sample", step_seconds=30)
    changed = client.post(change_url(source), form)
    assert changed.status_code == 302, changed.content.decode()
    source.refresh_from_db()
    assert source.step_seconds == 30
    actions = Transition.objects.filter(object_id=source.pk).order_by("pk").values_list("action", flat=True)
    assert list(actions) == ["pull_source.create", "pull_source.update"]
