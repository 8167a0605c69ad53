"""Observation ingest, one package for every format (issue 13).

formats/  raw body → rows: batch.py (JSON, NDJSON, CSV), otlp.py (OTLP/HTTP protobuf or JSON, gzip),
          histograms.py (OTLP histogram buckets)
streams.py  OTLP streams: cumulative → delta, re-sent gauges (state in PostgreSQL)
rules.py  the one rule set
check.py  rows against the rules and the reference data (Lookups), one check for every format
write.py  the IngestBatch row and the binary COPY
service.py  the entry points: replay once per Idempotency-Key, parse, check, write, announce; or
            parse and check only (the ingest page's preview)
"""

from metrics.ingest.service import (
    MAX_ROWS,
    BatchRefused,
    IngestPreview,
    IngestResult,
    OtlpResult,
    observations_import,
    observations_ingest,
    observations_ingest_otlp,
    observations_ingest_rows,
    observations_preview,
)

__all__ = [
    "MAX_ROWS",
    "BatchRefused",
    "IngestPreview",
    "IngestResult",
    "OtlpResult",
    "observations_import",
    "observations_ingest",
    "observations_ingest_otlp",
    "observations_ingest_rows",
    "observations_preview",
]
