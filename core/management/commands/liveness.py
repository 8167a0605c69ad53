"""`manage.py liveness worker|beat [--max-age SECONDS]`: exit 0 when that process touched its liveness
file (core/liveness.py) within max-age seconds, else 1 with the reason on stderr. For exec probes and
healthchecks; it reads one file and touches neither the database nor the broker."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.liveness import BEAT, WORKER, liveness_age, liveness_file


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=[WORKER, BEAT])
        parser.add_argument(
            "--max-age",
            type=float,
            default=None,
            help="seconds (default: 6 × LIVENESS_SECONDS for the worker, 2 × CELERY_BEAT_MAX_LOOP_INTERVAL for beat)",
        )

    def handle(self, *args: Any, kind: str, max_age: float | None, **options: Any) -> None:
        if max_age is None:
            max_age = (
                6 * settings.LIVENESS_SECONDS
                if kind == WORKER
                else 2 * settings.CELERY_BEAT_MAX_LOOP_INTERVAL
            )
        age = liveness_age(kind)
        if age is None:
            raise CommandError(f"{kind}: not alive, {liveness_file(kind)} was never written")
        if age > max_age:
            raise CommandError(f"{kind}: not alive, last sign {age:.0f} s ago (more than {max_age:.0f} s)")
        self.stdout.write(f"{kind}: alive, last sign {age:.0f} s ago")
