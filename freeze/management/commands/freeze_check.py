"""manage.py freeze_check KEY [--at ISO] [--program SLUG] — exit 0 allowed, 1 blocked, 2 bad input."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils.dateparse import parse_datetime

from core.errors import ApplicationError
from freeze.models import Component
from freeze.selectors import FreezeCheck, freeze_check, program_for_check


def describe(check: FreezeCheck) -> list[str]:
    """The answer, then every window in force, the exception and the override, one line each."""
    lines = [f"{check.decision}: {check.reason}"]
    scope = f"program {check.program.slug}" if check.program else "all programs"
    if not check.windows:
        lines.append(f"windows in force ({scope}): none")
    else:
        lines.append(f"windows in force ({scope}):")
        for w in check.windows:
            mark = " <- decides" if w.window == check.window else ""
            default = "" if w.explicit else " (default)"
            recurring = ", recurring" if w.window.is_recurring else ""
            lines.append(
                f"  - {w.window.name} [{w.window.program.slug}{recurring}] {w.starts_at:%Y-%m-%d %H:%M} – "
                f"{w.ends_at:%Y-%m-%d %H:%M} UTC: {w.level}{default}{mark}"
            )
    if check.exception is not None:
        e = check.exception
        lines.append(f"exception: #{e.pk} {e.title}, approved until {e.change_ends_at:%Y-%m-%d %H:%M} UTC")
    else:
        lines.append("exception: none")
    if check.override is not None:
        o = check.override
        lines.append(
            f"override: #{o.pk} by {o.opened_by.username} until {o.ends_at:%Y-%m-%d %H:%M} UTC "
            f"(review {o.review_status}): {o.reason}"
        )
    else:
        lines.append("override: none")
    return lines


class Command(BaseCommand):
    help = "Ask whether a component may change now (exit 0 allowed, 1 blocked, 2 bad input)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("component")
        parser.add_argument("--at", help="ISO 8601 moment with timezone (default: now)")
        parser.add_argument("--program", help="Count only this program's windows (slug; default: all)")

    def handle(self, *args: Any, component: str, at: str | None, program: str | None, **options: Any) -> None:
        moment = None
        if at:
            moment = parse_datetime(at)
            if moment is None or moment.tzinfo is None:
                self.stderr.write(f"--at '{at}' is not an ISO 8601 timestamp with a timezone.")
                sys.exit(2)
        try:
            scope = program_for_check(program)
        except ApplicationError as exc:
            self.stderr.write(f"--program: {exc.message}")
            sys.exit(2)
        found = Component.objects.filter(key=component).first()
        if found is None:
            self.stderr.write(f"Unknown component '{component}'.")
            sys.exit(2)
        check = freeze_check(found, moment, scope)
        self.stdout.write("\n".join(describe(check)))
        sys.exit(0 if check.decision == "allowed" else 1)
