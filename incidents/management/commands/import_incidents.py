"""`manage.py import_incidents FILE.csv --user NAME`: the API's CSV import, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ApplicationError
from incidents.importing import incidents_import


class Command(BaseCommand):
    help = "Import incidents from a CSV (the fields of POST /api/v1/incidents/); every row or none."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--user", required=True, help="Who files them (a framework engineer or a lead).")

    def handle(self, *args: Any, file: Path, user: str, **options: Any) -> None:
        reporter = get_user_model().objects.filter(username=user).first()
        if reporter is None:
            raise CommandError(f"No user '{user}'.")
        try:
            incidents = incidents_import(actor=reporter, body=file.read_bytes())
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        except ApplicationError as exc:
            lines = [exc.message] + [
                f"  row {error.get('index', '?')}: {error.get('field', '')}: {error['message']}"
                for error in exc.errors
            ]
            raise CommandError("\n".join(lines)) from exc
        self.stdout.write(self.style.SUCCESS(f"Imported {len(incidents)} incidents."))
