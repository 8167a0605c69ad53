"""History rows read in words with people's full names (issue 29): one formatter, core.audit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from core.audit import transition_sentence
from core.models import Transition
from freeze import services as freeze_services
from tests.conftest import make_user
from tests.freeze.factories import draft_exception, freeze_setup
from tests.incidents.factories import file_incident, incidents_setup


def row(**fields) -> Transition:
    return Transition(**{"action": "updated", "from_state": "", "to_state": "", "data": {}, **fields})


def named(username: str, first: str, last: str) -> User:
    return User(username=username, first_name=first, last_name=last)


def test_a_row_says_who_by_full_name_and_what_in_words():
    ana = named("ana", "Ana", "Ruiz")
    assert transition_sentence(row(action="created", to_state="draft", actor=ana), "the exception") == (
        "Ana Ruiz created the exception as draft"
    )
    resolved = row(
        action="resolved",
        from_state="open",
        to_state="resolved",
        actor=ana,
        data={"changed": ["mitigated_at", "resolved_at"]},
    )
    assert transition_sentence(resolved, "the incident") == (
        "Ana Ruiz resolved the incident (open → resolved), changing mitigated at and resolved at"
    )
    # A state kept is not a move; nobody acting is the system.
    kept = row(action="resolved", from_state="resolved", to_state="resolved", data={"changed": ["severity"]})
    assert transition_sentence(kept) == "The system resolved it, changing severity"
    assert transition_sentence(row(action="expire", from_state="approved", to_state="expired")) == (
        "The system expired it (approved → expired)"
    )
    assert transition_sentence(row(actor=User(username="bo"))) == "bo updated it"  # no name: the username


@pytest.fixture
def lead_named(lead):
    lead.first_name, lead.last_name = "Lena", "Park"
    lead.save()
    return lead


def test_the_incident_history_reads_in_words_with_full_names(db, client, lead_named):
    refs = incidents_setup()
    incident = file_incident(lead_named, refs)
    from incidents import services

    services.incident_resolve(
        actor=lead_named,
        incident=incident,
        mitigated_at=incident.detected_at + timedelta(hours=1),
        resolved_at=incident.detected_at + timedelta(hours=2),
    )
    client.force_login(lead_named)
    html = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert "Lena Park filed the incident as open" in html
    assert "Lena Park resolved the incident (open → resolved), changing mitigated at and resolved at" in html
    assert "(mitigated_at, resolved_at)" not in html


def test_the_exception_history_reads_in_words_with_full_names(db, client, lead_named):
    setup = freeze_setup(lead_named)
    requester = make_user("requester", "framework-engineers")
    requester.first_name, requester.last_name = "Ravi", "Iyer"
    requester.save()
    exception = draft_exception(requester, setup["trainer"], timezone.now())
    freeze_services.exception_submit(actor=requester, exception=exception)
    client.force_login(lead_named)
    html = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    assert "Ravi Iyer created the exception as draft" in html
    assert "Ravi Iyer submitted the exception (draft → submitted)" in html
    assert "· →" not in html and "by requester" not in html
