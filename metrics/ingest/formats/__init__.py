"""Ingest formats: each turns a raw body into rows of one shape for the checks.

batch: JSON {"observations": [...]}, NDJSON and CSV, answered all-or-nothing.
otlp: an OTLP/HTTP ExportMetricsServiceRequest (protobuf or JSON, optionally gzip), whose points
become the same row dicts; what cannot become a row is a `Rejected` point.
"""

from metrics.ingest.formats.batch import ObservationIn, Unreadable, as_dict, decode_rows

__all__ = ["ObservationIn", "Unreadable", "as_dict", "decode_rows"]
