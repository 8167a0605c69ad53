"""The tracker's own metrics, exposed at /metrics for Prometheus (prometheus_client)."""
