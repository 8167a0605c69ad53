"""The "push from a script" snippets of the ingest page, written with this site's URLs and the
metric's real reference, so a copied line works as it is once a token is set.

There is no separate CLI: the one command line is manage.py import_observations, which runs where the
tracker runs (it reads the database settings), so it is offered as that."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.urls import reverse

from metrics.models import MetricDefinition

TOKEN_VARIABLE = "RT_TOKEN"


@dataclass(frozen=True)
class Snippet:
    slug: str  # the element id the copy button names
    title: str
    text: str
    note: str = ""


def ingest_ref(definition: MetricDefinition) -> str:
    """What a row names to reach this version: the key for the active version, key@N for another."""
    return definition.key if definition.status == MetricDefinition.Status.ACTIVE else definition.ref


def example_csv(definition: MetricDefinition, system: str, workload: str) -> str:
    return (
        "metric,system,workload,value,unit,observed_at,run_id\n"
        f"{ingest_ref(definition)},{system},{workload},1.0,{definition.unit},2026-01-01T10:00:00Z,run-1\n"
    )


def push_snippets(
    request: HttpRequest, definition: MetricDefinition, *, system: str, workload: str
) -> list[Snippet]:
    """`request.user` is recorded as the submitter of the command line's batches."""
    batch_url = request.build_absolute_uri(reverse("observation-batch"))
    otlp_url = request.build_absolute_uri(reverse("otlp-metrics"))
    ref = ingest_ref(definition)
    token = f"${TOKEN_VARIABLE}"
    snippets = [
        Snippet(
            "snippet-curl-csv",
            "curl, a CSV file",
            f'curl -fsS -X POST "{batch_url}" \\\n'
            f'  -H "Authorization: Token {token}" \\\n'
            '  -H "Content-Type: text/csv" \\\n'
            '  -H "Idempotency-Key: $(uuidgen)" \\\n'
            "  --data-binary @observations.csv",
            f"Each row names metric {ref}; a 422 lists every bad row and writes nothing.",
        ),
        Snippet(
            "snippet-curl-json",
            "curl, one JSON row",
            f'curl -fsS -X POST "{batch_url}" \\\n'
            f'  -H "Authorization: Token {token}" \\\n'
            '  -H "Content-Type: application/json" \\\n'
            f'  -d \'{{"observations": [{{"metric": "{ref}", "system": "{system}", '
            f'"workload": "{workload}", "value": 1.0, "unit": "{definition.unit}", '
            '"observed_at": "2026-01-01T10:00:00Z", "run_id": "run-1"}]}\'',
        ),
    ]
    if definition.status == MetricDefinition.Status.ACTIVE:
        snippets.append(
            Snippet(
                "snippet-otlp",
                "OpenTelemetry SDK or Collector (OTLP/HTTP)",
                f'export OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="{otlp_url}"\n'
                f'export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer {token}"\n'
                f'export OTEL_RESOURCE_ATTRIBUTES="rebuild.system={system},rebuild.workload={workload}"\n'
                f"# then record the metric named {definition.otel_metric_name!r} in {definition.unit}",
                f"OTLP points named {definition.otel_metric_name} go to {definition.key}'s active version.",
            )
        )
    snippets.append(
        Snippet(
            "snippet-cli",
            "Command line, on the tracker's host",
            f"python manage.py import_observations observations.csv --user {request.user.get_username()}",
            "The one CLI there is: it runs where the tracker runs (the same rules, in 10,000-row batches).",
        )
    )
    return snippets
