"""manage.py import_observations FILE — the same ingest rules as the API, in batches, with progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.errors import ApplicationError
from metrics.ingest import MAX_ROWS, BatchRefused, observations_import

CONTENT_TYPES = {
    ".json": "application/json",
    ".ndjson": "application/x-ndjson",
    ".jsonl": "application/x-ndjson",
    ".csv": "text/csv",
}


class Command(BaseCommand):
    help = 'Import observations from a .json ({"observations": [...]}), .ndjson or .csv file.'

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--user", default="ingest", help="Username recorded as the submitter (default: ingest)."
        )
        parser.add_argument("--batch-size", type=int, default=10_000)

    def handle(self, *args: Any, file: Path, user: str, batch_size: int, **options: Any) -> None:
        if not file.exists():
            raise CommandError(f"{file} does not exist.")
        content_type = CONTENT_TYPES.get(file.suffix.lower())
        if content_type is None:
            raise CommandError(f"{file.suffix or 'no extension'}: use .json, .ndjson, .jsonl or .csv.")
        if not 1 <= batch_size <= MAX_ROWS:
            raise CommandError(f"--batch-size must be between 1 and {MAX_ROWS}.")
        submitter = get_user_model().objects.filter(username=user).first()
        if submitter is None:
            raise CommandError(f"There is no user '{user}'.")
        inserted = duplicates = batches = 0
        try:
            total, steps = observations_import(
                body=file.read_bytes(),
                content_type=content_type,
                actor=submitter,
                source=f"import:{file.name}",
                batch_size=batch_size,
            )
            with tqdm(total=total, unit="obs", disable=options["verbosity"] == 0) as progress:
                for step in steps:
                    inserted += step.result.inserted
                    duplicates += step.result.duplicates
                    batches += 1
                    progress.update(step.size)
        except BatchRefused as exc:
            for error in exc.errors[:20]:
                row = exc.start + error["index"] if error.get("index") is not None else "?"
                self.stderr.write(f"  row {row}: {error.get('field') or 'row'}: {error['message']}")
            raise CommandError(
                f"Batch starting at row {exc.start} refused: {exc.message} "
                f"{inserted} rows from earlier batches were stored."
            ) from exc
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {total:,} rows in {batches} batch(es): {inserted:,} new, {duplicates:,} already present."
            )
        )
