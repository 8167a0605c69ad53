"""manage.py freeze_check KEY [--at ISO] — exit 0 allowed, 1 blocked, 2 unknown component."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand
from django.utils.dateparse import parse_datetime

from freeze.models import Component
from freeze.selectors import freeze_check


class Command(BaseCommand):
    help = "Ask whether a component may change now (exit 0 allowed, 1 blocked, 2 unknown component)."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("component")
        parser.add_argument("--at", help="ISO 8601 moment with timezone (default: now)")

    def handle(self, *args, component: str, at: str | None, **options):
        moment = None
        if at:
            moment = parse_datetime(at)
            if moment is None or moment.tzinfo is None:
                self.stderr.write(f"--at '{at}' is not an ISO 8601 timestamp with a timezone.")
                sys.exit(2)
        found = Component.objects.filter(key=component).first()
        if found is None:
            self.stderr.write(f"Unknown component '{component}'.")
            sys.exit(2)
        check = freeze_check(found, moment)
        self.stdout.write(f"{check.decision}: {check.reason}")
        sys.exit(0 if check.decision == "allowed" else 1)
