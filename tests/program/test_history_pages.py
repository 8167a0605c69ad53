"""A completed phase's gate page offers no form the services would refuse (history stays history)."""

from __future__ import annotations

from django.urls import reverse

from program.models import Gate, Phase
from tests.program.factories import make_program, metrics_for_template


def test_a_lead_sees_no_decision_or_reopen_form_on_a_gate_of_a_completed_phase(client, lead):
    metrics_for_template()
    program = make_program(lead)
    phase = program.phases.order_by("order").first()
    undecided, decided = Gate.objects.filter(phase=phase).order_by("kind", "pk")[:2]
    Gate.objects.filter(pk=decided.pk).update(status=Gate.Status.WAIVED)
    Phase.objects.filter(pk=phase.pk).update(status=Phase.Status.COMPLETED)
    client.force_login(lead)
    for gate in (undecided, decided):
        html = client.get(reverse("program:gate", args=[gate.pk])).content.decode()
        assert f"{phase.name} is completed: its gates are history" in html or gate == decided
        assert reverse("program:gate-decide", args=[gate.pk]) not in html
        assert reverse("program:gate-reopen", args=[gate.pk]) not in html
