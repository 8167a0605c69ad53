"""Recompute the day rollups from the rows: after a bulk load that bypassed ingest, or to catch up."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.models import MetricDefinition
from metrics.rollups.maintain import rollups_rebuild


class Command(BaseCommand):
    help = "Recompute the per-day rollups (metrics.rollups) of every metric, or of one, from a day on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--metric", help="A metric key (all its versions); default: every metric.")
        parser.add_argument("--since", help="First UTC day to recompute, YYYY-MM-DD; default: the first.")

    def handle(self, *args: Any, metric: str | None = None, since: str | None = None, **options: Any) -> None:
        from datetime import date

        definition_ids = None
        if metric:
            definition_ids = list(MetricDefinition.objects.filter(key=metric).values_list("pk", flat=True))
            if not definition_ids:
                raise CommandError(f"--metric: no metric with key '{metric}'.")
        first = None
        if since:
            try:
                first = date.fromisoformat(since)
            except ValueError as exc:
                raise CommandError(f"--since: '{since}' is not a date (YYYY-MM-DD).") from exc
        written = rollups_rebuild(definition_ids=definition_ids, since=first)
        self.stdout.write(f"{written} rollup rows written.")
