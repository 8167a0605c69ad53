"""manage.py observations_partitions_create [--since YYYY-MM] — what the daily beat task does, and
partitions for past months before loading their history (rows of a month without one wait in DEFAULT)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.partitions import MONTHS_AHEAD, observations_partitions_create


def month(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m").replace(tzinfo=UTC)
    except ValueError as error:
        raise CommandError(f"--since: {text!r} is not a month written YYYY-MM.") from error


class Command(BaseCommand):
    help = "Create the observation table's monthly partitions: this month, the next ones, and past ones on request."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", type=month, help="Also every month from this one (YYYY-MM).")
        parser.add_argument("--ahead", type=int, default=MONTHS_AHEAD, help="Months ahead (default: 3).")

    def handle(self, *args: Any, since: datetime | None, ahead: int, **options: Any) -> None:
        if ahead < 0:
            raise CommandError("--ahead: give 0 or more months.")
        created = observations_partitions_create(since=since, months_ahead=ahead)
        for name in created:
            self.stdout.write(f"created {name}")
        self.stdout.write(f"{len(created)} partition(s) created.")
