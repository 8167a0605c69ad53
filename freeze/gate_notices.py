"""The gate page's "active exceptions touching this gate's metrics": approved exceptions, in force or
upcoming, that name any of the gate's metrics; and the look back at the latest ones carried out:
what each was expected to do to a gate metric beside what it did (freeze.selectors.impact).
program.gate_extensions asks; freeze answers."""

from __future__ import annotations

from django.contrib.postgres.aggregates import ArrayAgg
from django.urls import reverse
from django.utils import timezone

from freeze.models import FreezeException
from freeze.selectors.impact import impacts_for_metrics
from program.gate_extensions import GateNotice, gate_panel_register


def exceptions_touching_metrics(metric_keys: list[str]) -> list[GateNotice]:
    """One query: filtering on the metrics before aggregating makes `touching` the matched keys only."""
    now = timezone.now()
    rows = (
        FreezeException.objects.filter(
            status=FreezeException.Status.APPROVED,
            change_ends_at__gt=now,
            affected_metrics__key__in=metric_keys,
        )
        .select_related("component")
        .annotate(touching=ArrayAgg("affected_metrics__key", distinct=True, order_by="affected_metrics__key"))
        .order_by("change_starts_at", "pk")
    )
    notices = []
    for e in rows:
        # `touching` is the annotate() above; django-stubs drops annotations on a custom QuerySet's rows
        # (django-stubs #1049).
        when = (
            f"in force until {e.change_ends_at:%-d %b %Y %H:%M} UTC"
            if e.change_starts_at <= now
            else f"upcoming, {e.change_starts_at:%-d %b %H:%M} – {e.change_ends_at:%-d %b %Y %H:%M} UTC"
        )
        notices.append(
            GateNotice(
                label=f"#{e.pk} {e.title}",
                url=reverse("freeze:exception", args=[e.pk]),
                note=f"{e.component.key} · {e.risk} risk · {when} · touches {', '.join(e.touching)}",  # type: ignore[attr-defined]
            )
        )
    return notices


def exception_impacts_on_metrics(metric_keys: list[str]) -> list[GateNotice]:
    return [
        GateNotice(
            label=f"#{exception.pk} {exception.title} · {outcome.metric}",
            url=reverse("freeze:exception", args=[exception.pk]),
            note=f"expected {outcome.expected_text}; observed on {outcome.system}: {outcome.observed_text}"
            + (" — after-window still filling" if outcome.windows and outcome.windows.filling else "")
            + f" · {outcome.agreement}",
        )
        for exception, outcome in impacts_for_metrics(metric_keys)
    ]


def register() -> None:
    gate_panel_register(
        "freeze.exceptions",
        heading="Active exceptions touching this gate's metrics",
        empty="None: no approved freeze exception in force or upcoming names these metrics.",
        provider=exceptions_touching_metrics,
    )
    gate_panel_register(
        "freeze.impacts",
        heading="Exceptions' expected vs observed impact on this gate's metrics",
        empty="None yet: no exception naming these metrics has run to the end of its change window.",
        provider=exception_impacts_on_metrics,
    )
