"""Error reports to Sentry, only when SENTRY_DSN is set (docs/operations.md). Without it sentry-sdk is
never initialised, so nothing is sent anywhere."""

from __future__ import annotations


def sentry_init(*, dsn: str, environment: str, traces_sample_rate: float) -> bool:
    """Initialise sentry-sdk for Django, Celery and logging when `dsn` is set; True when it did."""
    if not dsn:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        traces_sample_rate=traces_sample_rate,
        # Users' names and addresses stay here: an operator who wants them sets them in Sentry's scrubbing.
        send_default_pii=False,
    )
    return True
