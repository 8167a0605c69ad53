"""The plan pages without a browser: history in words and paged, constant queries, role refusals,
and each form's success and refusal."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import Transition
from metrics.models import Workload
from program import selectors, services
from program.history import PAGE_SIZE, program_history
from program.models import Gate, Phase, WorkloadMigration
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def program(db, lead):
    metrics_for_template()
    return make_program(lead)


def _waive_poc_and_advance(lead, program) -> None:
    gate = Gate.objects.get(phase__kind="poc", kind="exit")
    services.gate_decide(gate=gate, actor=lead, decision="waive", note="Proven on the whiteboard")
    services.program_advance(actor=lead, program=program, reason="Months late, gate waived")


def _texts(program, page: int = 1) -> list[str]:
    return [e.text for e in program_history(selectors.program_get(program.slug), page).entries]


def test_history_reads_as_sentences(lead, engineer, program):
    _waive_poc_and_advance(lead, program)
    canary = Phase.objects.get(kind="canary")
    services.phase_replan(
        actor=lead,
        phase=canary,
        planned_start=canary.planned_start,
        planned_end=date(2026, 9, 15),
        reason="Hardware late",
        confirm_overlap_or_gap=True,
    )
    migration = services.migration_upsert(
        actor=engineer, program=program, workload=Workload.objects.get(key="llm-finetune-8b"), wave=0
    )
    services.migration_set_state(actor=engineer, migration=migration, state="dual_run", reason="Both run it")
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    criterion = gate.criteria.get(metric__key="training-throughput")
    services.criterion_edit(actor=lead, criterion=criterion, threshold=0.9)
    services.program_bind(actor=lead, program=program, bindings={"step_time": "step-time"})
    texts = _texts(program)
    assert "lead advanced Proof of concept → Canary: exit gate waived" in texts
    assert "lead waived gate 'Key hypothesis proven'" in texts
    assert "lead re-planned Canary: end 31 Aug 2026 → 15 Sep 2026" in texts
    assert "engineer moved llm-finetune-8b from on old to dual run" in texts
    assert "engineer planned llm-finetune-8b in wave 0" in texts
    gate_name = "gate 'New reaches 80% of old on the canary workloads'"
    assert f"lead edited criterion “{criterion.name}”: threshold 0.8 → 0.9 on {gate_name}" in texts
    assert "lead bound step_time → step-time@1 in 1 criterion" in texts
    assert "lead created Rebuild from the rebuild-14m template" in texts
    assert not any("started Canary" in text for text in texts)  # the advance sentence says it
    reasons = {e.text: e.reason for e in program_history(selectors.program_get(program.slug)).entries}
    assert reasons["lead advanced Proof of concept → Canary: exit gate waived"] == "Months late, gate waived"


def _grow_history(program, lead, n: int) -> None:
    gate_type = ContentType.objects.get_for_model(Gate)
    gate = Gate.objects.filter(phase__program=program).first()
    Transition.objects.bulk_create(
        Transition(
            content_type=gate_type,
            object_id=gate.pk,
            action="criterion_added",
            actor=lead,
            data={"criterion": f"c{i}"},
        )
        for i in range(n)
    )


def test_history_is_paged_not_cut(lead, program):
    _grow_history(program, lead, 40)
    first, second = (program_history(selectors.program_get(program.slug), n) for n in (1, 2))
    assert len(first.entries) == PAGE_SIZE and first.has_older
    assert not second.has_older
    total = Transition.objects.count()
    assert len(first.entries) + len(second.entries) == total
    assert first.entries[0].text == "lead added criterion “c39” on gate 'New framework trains a small job'"


@pytest.mark.parametrize("size", [3, 80])
def test_history_takes_one_query_whatever_its_length(lead, program, size, django_assert_num_queries):
    _grow_history(program, lead, size)
    loaded = selectors.program_get(program.slug)
    program_history(loaded)  # warm the content-type cache
    with django_assert_num_queries(1):
        program_history(loaded, 2)


def _count(client, path: str) -> int:
    client.get(path)
    with CaptureQueriesContext(connection) as context:
        response = client.get(path)
    assert response.status_code == 200, path
    return len(context.captured_queries)


@pytest.mark.parametrize("page", ["detail", "history", "migrations", "advance", "phase dates"])
def test_plan_pages_run_constant_queries(client, lead, engineer, program, page):
    client.force_login(lead)
    phase = Phase.objects.get(kind="poc")
    path = {
        "detail": f"/programs/{program.slug}/",
        "history": f"/programs/{program.slug}/history/",
        "migrations": f"/programs/{program.slug}/migrations/",
        "advance": f"/programs/{program.slug}/advance/",
        "phase dates": f"/programs/phases/{phase.pk}/dates/",
    }[page]

    def grow(tag: str, n: int) -> None:
        _grow_history(program, lead, n * 10)
        for i in range(n):
            workload = Workload.objects.create(
                key=f"w{tag}{i}", name="w", size="medium", criticality="peripheral"
            )
            migration = services.migration_upsert(
                actor=engineer, program=program, workload=workload, wave=i % 3
            )
            services.migration_set_state(actor=engineer, migration=migration, state="dual_run", reason="go")

    grow("a", 1)
    small = _count(client, path)
    grow("b", 12)
    assert _count(client, path) == small, page
    assert small <= 15


@pytest.mark.parametrize(
    ("user", "path", "message"),
    [
        (
            "viewer",
            "/programs/phases/{phase}/replan/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may re-plan phases.",
        ),
        (
            "engineer",
            "/programs/phases/{phase}/actual-dates/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may backfill phase dates.",
        ),
        (
            "engineer",
            "/programs/{slug}/advance/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may advance phases.",
        ),
        (
            "viewer",
            "/programs/migrations/{migration}/state/",
            "Only a lead or engineer of program &#x27;rebuild&#x27;, a framework engineer or a platform admin may record migrations.",
        ),
    ],
)
def test_a_forced_post_gets_the_styled_refusal(client, request, lead, program, user, path, message):
    migration = services.migration_upsert(
        actor=lead, program=program, workload=Workload.objects.get(key="llm-finetune-8b"), wave=0
    )
    phase = Phase.objects.get(kind="poc")
    client.force_login(request.getfixturevalue(user))
    url = path.format(phase=phase.pk, slug=program.slug, migration=migration.pk)
    body = {
        "planned_start": "2026-01-01",
        "planned_end": "2026-05-01",
        "reason": "x",
        "actual_start": "2026-01-02",
        f"m{migration.pk}-state": "dual_run",
        f"m{migration.pk}-reason": "x",
    }
    response = client.post(url, body)
    assert response.status_code == 403
    assert message in response.content.decode()
    assert "You can't do that" in response.content.decode()  # the styled page, not a bare 403
    assert Phase.objects.get(pk=phase.pk).planned_end == date(2026, 3, 31)
    assert WorkloadMigration.objects.get(pk=migration.pk).state == "on_old"


def test_viewer_sees_no_plan_forms(client, viewer, program):
    client.force_login(viewer)
    html = client.get(f"/programs/{program.slug}/").content.decode()
    assert "and advance…" not in html and "Dates…" not in html and "Record migration states" not in html
    assert 'class="timeline-chart"' in html and ">M14<" in html


def test_lead_replans_on_the_page_and_a_bad_range_is_refused(client, lead, program):
    client.force_login(lead)
    canary = Phase.objects.get(kind="canary")
    refused = client.post(
        f"/programs/phases/{canary.pk}/replan/",
        {"planned_start": "2026-05-01", "planned_end": "2026-04-01", "reason": "typo"},
    )
    assert refused.status_code == 400
    assert "Planned end must not be before planned start." in refused.content.decode()  # labels, not names
    done = client.post(
        f"/programs/phases/{canary.pk}/replan/",
        {
            "planned_start": "2026-04-15",
            "planned_end": "2026-09-15",
            "reason": "Hardware late",
            "confirm_overlap_or_gap": "on",
        },
        follow=True,
    )
    assert "Re-planned Canary: 15 Apr 2026 – 15 Sep 2026." in done.content.decode()
    canary.refresh_from_db()
    assert canary.planned_end == date(2026, 9, 15)


def test_lead_backfills_on_the_page(client, lead, program):
    client.force_login(lead)
    poc = Phase.objects.get(kind="poc")
    future = client.post(
        f"/programs/phases/{poc.pk}/actual-dates/",
        {"actual_start": (datetime.now(UTC).date() + timedelta(days=3)).isoformat(), "reason": "x"},
    )
    assert future.status_code == 400 and "must not be in the future" in future.content.decode()
    done = client.post(
        f"/programs/phases/{poc.pk}/actual-dates/",
        {"actual_start": "2026-01-05", "reason": "Kick-off slipped a week"},
        follow=True,
    )
    assert "Recorded the actual dates of Proof of concept." in done.content.decode()
    assert Phase.objects.get(pk=poc.pk).actual_start == date(2026, 1, 5)


def test_migration_move_on_the_page_needs_a_reason(client, engineer, program):
    migration = services.migration_upsert(
        actor=engineer, program=program, workload=Workload.objects.get(key="llm-finetune-8b"), wave=0
    )
    client.force_login(engineer)
    url = f"/programs/migrations/{migration.pk}/state/"
    prefix = f"m{migration.pk}"
    refused = client.post(url, {f"{prefix}-state": "dual_run", f"{prefix}-reason": ""})
    assert refused.status_code == 400
    assert WorkloadMigration.objects.get(pk=migration.pk).state == "on_old"
    done = client.post(
        url, {f"{prefix}-state": "dual_run", f"{prefix}-reason": "Both stacks run it"}, follow=True
    )
    assert "llm-finetune-8b is now dual run." in done.content.decode()
    assert WorkloadMigration.objects.get(pk=migration.pk).state == "dual_run"


def test_advance_page_confirms_then_needs_a_reason_off_plan(client, lead, program):
    client.force_login(lead)
    Gate.objects.filter(phase__kind="poc", kind="exit").update(status="passed")
    page = client.get(f"/programs/{program.slug}/advance/").content.decode()
    assert "Proof of concept" in page and "Canary" in page and "passed" in page and "late" in page
    assert Phase.objects.get(kind="poc").status == "active"
    refused = client.post(f"/programs/{program.slug}/advance/", {"reason": ""})
    assert refused.status_code == 400 and "Say why" in refused.content.decode()
    done = client.post(f"/programs/{program.slug}/advance/", {"reason": "Waited for hardware"}, follow=True)
    assert "Now in Canary." in done.content.decode()
