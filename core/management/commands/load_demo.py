"""Load the demo program. Idempotent: running it again leaves one copy of everything."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from core.demo import DEMO_PASSWORD, DEMO_USERS, demo_ingest_token_replace, demo_users_load

# Each app that has demo data exposes `demo_load(users, stdout)`; order follows the app dependencies.
APP_DEMOS = ("metrics.demo", "program.demo", "freeze.demo", "incidents.demo")


class Command(BaseCommand):
    help = "Load the realistic demo program and one user per role (safe to run repeatedly)."

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            users = demo_users_load()
        for module_name in APP_DEMOS:
            try:
                module = import_module(module_name)
            except ModuleNotFoundError:
                continue
            with transaction.atomic():  # a demo that fails half-way leaves nothing behind
                module.demo_load(users=users, stdout=self.stdout)
        with transaction.atomic():
            token = demo_ingest_token_replace(users["ingest"])
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))
        self.stdout.write(f"Demo logins (password for all: {DEMO_PASSWORD}):")
        for spec in DEMO_USERS:
            self.stdout.write(f"  {spec.username:<9} {spec.role}")
        self.stdout.write(f"  {'admin':<9} Django admin superuser")
        self.stdout.write(
            f"API token of the ingest client (scope ingest; shown once, a new one at each load): {token}"
        )
