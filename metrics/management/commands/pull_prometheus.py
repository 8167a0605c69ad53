"""Pull (or backfill) Prometheus pull sources now: `manage.py pull_prometheus [--since ISO] [--metric KEY]`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.services.pull import pull_sources_run_enabled


def _since(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise CommandError(f"--since '{text}' is not an ISO 8601 timestamp.") from exc
    if moment.tzinfo is None:
        raise CommandError("--since needs a timezone (e.g. 2026-01-01T00:00:00Z).")
    return moment


class Command(BaseCommand):
    help = "Pull every enabled Prometheus pull source now; --since backfills from that time."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", help="ISO 8601 time to pull from (default: each source's last pull).")
        parser.add_argument("--metric", help="Only the sources of this metric key.")

    def handle(self, *args: Any, since: str | None = None, metric: str | None = None, **options: Any) -> None:
        results = pull_sources_run_enabled(metric=metric, since=_since(since) if since else None)
        if not results:
            self.stdout.write("No enabled pull sources" + (f" for metric '{metric}'." if metric else "."))
            return
        failed = 0
        for result in results:
            if result.ok:
                self.stdout.write(
                    f"source {result.source_id}: {result.inserted} new of {result.received} samples"
                    + (f", {result.skipped} NaN/Inf skipped" if result.skipped else "")
                )
            else:
                failed += 1
                self.stderr.write(f"source {result.source_id}: {result.error}")
        if failed:
            raise CommandError(f"{failed} of {len(results)} sources failed; see above.")
