"""Settings shared by every environment. Configuration comes from the environment (django-environ)."""

from __future__ import annotations

import logging
import re
import tempfile
from pathlib import Path
from typing import Any

import environ
from celery.schedules import crontab
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue  # type: ignore[attr-defined]  # exported lazily; kombu's TYPE_CHECKING import lacks the re-export

from config.version import version
from core.sso.claims import parse_role_groups
from core.telemetry.logs import logging_config
from core.telemetry.sentry import sentry_init

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

SECRET_KEY = env("DJANGO_SECRET_KEY", default="dev-only-not-secret-change-me-in-production-0123456789")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "pgtrigger",
    "pghistory",
    "axes",
    "csp",
    "django_structlog",
    "core",
    "metrics",
    "program",
    "freeze",
    "incidents",
    "work",
]

MIDDLEWARE = [
    # Outermost, so the latency it records covers every other middleware.
    "core.telemetry.middleware.RequestLatencyMiddleware",
    # Next, so every response (a 503 from below too) echoes the request id (core/telemetry/request_id.py).
    "core.telemetry.request_id.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Above everything that touches the database, so an outage anywhere below answers 503, not 500;
    # below the header-only middleware, so the 503 still gets their headers.
    "core.middleware.ServiceUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication, so its request_finished line names the user; below the outage middleware, so
    # a database it cannot reach to load that user is a 503.
    "django_structlog.middlewares.RequestMiddleware",
    "core.middleware.PageLoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "pghistory.middleware.HistoryMiddleware",
    "axes.middleware.AxesMiddleware",
    # Last: it switches reads to the replica for the view alone (core/replica.py).
    "core.replica.ReplicaReadsMiddleware",
]

ROOT_URLCONF = "config.urls"
# Observation batches of up to 50,000 rows arrive as one body; larger bodies get a 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = 32 * 1024 * 1024
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.roles",
                "core.context_processors.unread_notifications",
            ],
        },
    },
]

# PostgreSQL only. Without DATABASE_URL `make run`/`make test` start an embedded server and set it.
DATABASES = {"default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/rebuild_tracker")}
# A new PostgreSQL connection costs ~6 ms, so connections are kept open — in one bounded pool per process
# (psycopg_pool), not one per thread: with threaded workers, per-thread persistent connections
# (CONN_MAX_AGE) outnumbered the server's limit and the threads left without one kept failing for as
# long as the others held theirs. A request waits at most DATABASE_POOL_TIMEOUT seconds for a free
# connection, then gets a 503 (core.unavailable). A failed connection attempt is retried for no longer
# than that either, so the next request after an outage starts a fresh attempt instead of waiting out a
# growing back-off. A connection the server dropped (a restart, pg_terminate_backend) is replaced, not
# served: the pool checks each one it hands out (CONN_HEALTH_CHECKS, an empty query). That check cost no
# more than a local check of the socket did, measured per request (docs/scaling.md).
# Size it so workers × DATABASE_POOL_MAX_SIZE (+ Celery workers) stays below the server's max_connections.
DATABASE_POOL_TIMEOUT = env.float("DATABASE_POOL_TIMEOUT", default=3.0)
DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections; Django must not
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
    "min_size": env.int("DATABASE_POOL_MIN_SIZE", default=1),
    "max_size": env.int("DATABASE_POOL_MAX_SIZE", default=4),
    "timeout": DATABASE_POOL_TIMEOUT,
    "reconnect_timeout": DATABASE_POOL_TIMEOUT,
}
# DATABASE_ENGINE_MODE=citus: DATABASE_URL is a Citus coordinator whose database has the extension and its
# workers (docs/scaling.md); migrations distribute observations and rollups by metric (core/citus).
DATABASE_ENGINE_MODE = env.str("DATABASE_ENGINE_MODE", default="postgresql")
if DATABASE_ENGINE_MODE not in ("postgresql", "citus"):
    raise ImproperlyConfigured(
        f"DATABASE_ENGINE_MODE is 'postgresql' or 'citus', not {DATABASE_ENGINE_MODE!r}"
    )
if DATABASE_ENGINE_MODE == "citus":
    DATABASES["default"]["ENGINE"] = "core.citus"
# Shards per distributed table, set when the tables are distributed (a later change is a rebalance).
CITUS_SHARD_COUNT = env.int("CITUS_SHARD_COUNT", default=32)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# A read replica (docs/scaling.md): with DATABASE_REPLICA_URL, the pure-read views below read from it on
# GET/HEAD (core/replica.py); everything else, and a browser that wrote in the last REPLICA_PIN_SECONDS,
# reads from the primary. Without it there is no "replica" alias and the router changes nothing.
if env("DATABASE_REPLICA_URL", default=""):
    DATABASES["replica"] = env.db("DATABASE_REPLICA_URL")
    DATABASES["replica"].update(CONN_MAX_AGE=0, CONN_HEALTH_CHECKS=True, TEST={"MIRROR": "default"})
    DATABASES["replica"].setdefault("OPTIONS", {})["pool"] = dict(DATABASES["default"]["OPTIONS"]["pool"])
DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
REPLICA_READS = "replica" in DATABASES
REPLICA_PIN_SECONDS = env.int("REPLICA_PIN_SECONDS", default=10)
REPLICA_READ_VIEWS = [
    "comparison",
    "observation-list",
    "observation-export",
    "comparison-export",
    "metrics:registry",
    "metrics:compare",
    "metrics:detail",
    "metrics:feeds",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Before the password backend: refuses every password when LOCAL_LOGIN_ENABLED is off.
    "core.sso.backend.LocalLoginSwitch",
    "django.contrib.auth.backends.ModelBackend",
    "core.sso.backend.OidcBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    # Not a validator: Django calls each validator's password_changed() whenever a password is set and
    # saved (reset, admin, changepassword, set_password), and only then — a hash upgrade at sign-in is
    # no change. This one revokes the user's API tokens there (core/services/passwords.py).
    {"NAME": "core.services.passwords.TokensRevokedOnPasswordChange"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on with OpenID Connect (core/sso/; the README's "Single sign-on" has provider examples).
# Off unless OIDC_RP_CLIENT_ID and the provider are set: its discovery URL, or its endpoints.
OIDC_PROVIDER_NAME = env.str("OIDC_PROVIDER_NAME", default="single sign-on")  # "Sign in with …"
OIDC_RP_CLIENT_ID = env.str("OIDC_RP_CLIENT_ID", default="")
OIDC_RP_CLIENT_SECRET = env.str("OIDC_RP_CLIENT_SECRET", default="")
# …/.well-known/openid-configuration, read at the first sign-in of each process (core/sso/provider.py).
OIDC_OP_DISCOVERY_URL = env.str("OIDC_OP_DISCOVERY_URL", default="")
# For a provider without discovery: all four endpoints, and the issuer the ID tokens must name.
OIDC_OP_AUTHORIZATION_ENDPOINT = env.str("OIDC_OP_AUTHORIZATION_ENDPOINT", default="")
OIDC_OP_TOKEN_ENDPOINT = env.str("OIDC_OP_TOKEN_ENDPOINT", default="")
OIDC_OP_USER_ENDPOINT = env.str("OIDC_OP_USER_ENDPOINT", default="")
OIDC_OP_JWKS_ENDPOINT = env.str("OIDC_OP_JWKS_ENDPOINT", default="")
OIDC_OP_ISSUER = env.str("OIDC_OP_ISSUER", default="")
OIDC_RP_SIGN_ALGO = env.str("OIDC_RP_SIGN_ALGO", default="RS256")
# Okta and Keycloak send the groups claim for a "groups" scope: add it there. Entra ID has no such
# scope (an unknown one is an error there); it puts groups in the ID token when the app asks for them.
OIDC_RP_SCOPES = env.str("OIDC_RP_SCOPES", default="openid email profile")
OIDC_USE_PKCE = env.bool("OIDC_USE_PKCE", default=True)
OIDC_PKCE_CODE_CHALLENGE_METHOD = "S256"
# The client secret goes in the token request's body (client_secret_post) unless this is on (basic).
OIDC_TOKEN_USE_BASIC_AUTH = env.bool("OIDC_TOKEN_USE_BASIC_AUTH", default=False)
OIDC_TIMEOUT = env.float("OIDC_TIMEOUT", default=10.0)  # seconds, each request to the provider
# A sign-in must come back from the provider within this many seconds of starting.
OIDC_STATE_MAX_AGE = env.int("OIDC_STATE_MAX_AGE", default=600)
OIDC_USERNAME_CLAIM = env.str("OIDC_USERNAME_CLAIM", default="preferred_username")  # else `email`
OIDC_GROUPS_CLAIM = env.str("OIDC_GROUPS_CLAIM", default="groups")
# role=provider-group[;provider-group…], comma-separated: which provider groups grant which role.
try:
    OIDC_ROLE_GROUPS = parse_role_groups(env.str("OIDC_ROLE_GROUPS", default=""))
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from exc
# Groups the provider never adds or removes: kept as set in the admin for SSO users too.
OIDC_LOCAL_GROUPS = env.list("OIDC_LOCAL_GROUPS", default=[])
# Password sign-in (the login page, the admin's, POST /api/v1/auth/token/). Off, only SSO signs in.
LOCAL_LOGIN_ENABLED = env.bool("LOCAL_LOGIN_ENABLED", default=True)
if not LOCAL_LOGIN_ENABLED and not (
    OIDC_RP_CLIENT_ID and (OIDC_OP_DISCOVERY_URL or OIDC_OP_AUTHORIZATION_ENDPOINT)
):
    raise ImproperlyConfigured(
        "LOCAL_LOGIN_ENABLED is off but single sign-on is not configured: nobody could sign in."
    )

AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_ENABLE_ACCESS_FAILURE_LOG = True
# Axes would log its "AXES: BEGIN version …" banner in every process and management command (twice under
# runserver's reloader); the lockout settings are these lines.
AXES_VERBOSE = False
# The lockout keys on the same client address as the API throttles: REMOTE_ADDR, unless NUM_PROXIES says
# how many trusted proxies append to X-Forwarded-For (core/api/throttling.py).
AXES_CLIENT_IP_CALLABLE = "core.api.throttling.client_ip"

# The default cache holds the API throttle counts, so it must be shared by every worker process: a Redis
# URL such as redis://127.0.0.1:6379/1 (production refuses to start without one). Without CACHE_URL each
# process keeps its own counts in memory, which is only right for a single `runserver`.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
# Read caches in that cache (core/read_cache.py): observation-row names. A change reaches other
# processes only through a shared cache, so they are on by default only with CACHE_URL.
READ_CACHE: bool = env.bool("READ_CACHE", default=bool(env.str("CACHE_URL", default="")))
# API tokens (core.ApiToken): how long a new one lives unless its creator says otherwise, and the most
# they may ask for. The migration from the old single tokens gave each this long from its own run.
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=90)
API_TOKEN_MAX_DAYS = env.int("API_TOKEN_MAX_DAYS", default=366)
# An ended token (expired or revoked) is still listed this long, then deleted (core.tasks.api_tokens_purge).
API_TOKEN_KEEP_DAYS = env.int("API_TOKEN_KEEP_DAYS", default=90)

# Content-Security-Policy on every response: scripts and styles only from our own static files, so an
# injected <script> or inline handler does not run. Style *attributes* stay allowed (style-src-attr): the
# program timeline positions its bars with computed left/width values; attributes cannot load anything.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

API_RATE_LIMIT = env.str("API_RATE_LIMIT", default="100/s")
if API_RATE_LIMIT and not re.fullmatch(r"[1-9][0-9]*/(s|sec|m|min|h|hour|d|day)", API_RATE_LIMIT):
    raise ImproperlyConfigured(f"API_RATE_LIMIT must look like 100/s or 3000/min, not {API_RATE_LIMIT!r}")
REST_FRAMEWORK = {
    # Token first, so an anonymous API call gets 401 with WWW-Authenticate rather than 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.api.token_auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Signed in, and within the token's scopes (core/api/permissions.py); write views add their role rule.
    "DEFAULT_PERMISSION_CLASSES": ["core.api.permissions.ScopeRequired"],
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.DefaultPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
    # JSON through orjson with a nesting limit and no lone surrogates: a 400, never a 500 (core/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "core.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # JSON only: the browsable API (forms for every endpoint) is added by config.settings.local alone.
    "DEFAULT_RENDERER_CLASSES": ["core.api.renderers.FastJSONRenderer"],
    # How many trusted reverse proxies append to X-Forwarded-For. 0: the client address is REMOTE_ADDR
    # and the header is ignored, since anyone can send it (see core/api/throttling.py).
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
    # The global per-user API rate limit (core/api/throttling.py UserApiThrottle; docs/operations.md):
    # requests per second (or /min, /hour, /day) per user, anonymous callers per address; an empty
    # API_RATE_LIMIT turns it off. The counts live in the shared cache; with the cache down nobody is
    # throttled. Per second by default: DRF keeps one timestamp per counted request, so a per-minute
    # limit as generous would keep ~60 times as many per user in the cache.
    "DEFAULT_THROTTLE_CLASSES": ["core.api.throttling.UserApiThrottle"] if API_RATE_LIMIT else [],
    "DEFAULT_THROTTLE_RATES": {"user": API_RATE_LIMIT or None},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Rebuild Tracker API",
    "DESCRIPTION": "Milestone gates, freeze checks and comparable metrics for infrastructure rebuilds.",
    # The package's version (pyproject.toml), as GET /version reports it.
    "VERSION": version(),
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # includes/excludes share one vocabulary: one enum in the schema.
    "ENUM_NAME_OVERRIDES": {
        "BoundaryPhaseEnum": "metrics.models.Phase",
        "DefinitionStatusEnum": "metrics.models.MetricDefinition.Status",
        "ProgramStatusEnum": "program.models.Program.Status",
        "PhaseKindEnum": "program.models.Phase.Kind",
        "PhaseStatusEnum": "program.models.Phase.Status",
        "GateKindEnum": "program.models.Gate.Kind",
        "GateStatusEnum": "program.models.Gate.Status",
        "CriterionKindEnum": "program.models.Criterion.Kind",
        "SlotKindEnum": ["metric", "workload"],
        "DefinitionStatisticEnum": "metrics.models.Statistic",
        "ComparedStatisticEnum": "metrics.models.ComparedStatistic",
        "GateDecisionEnum": "program.models.Decision.Verdict",
        "FreezeDecisionEnum": ["allowed", "needs_approval", "forbidden"],
        "ApiTokenStatusEnum": ["active", "expired", "revoked"],
        "AlertStatusEnum": ["firing", "resolved"],  # Alertmanager's, of an alert and of a notification
    },
}

# Celery. Without a broker, tasks run in-process (eagerly) so the app works with nothing else running.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = False
# A task is acknowledged when it finishes, not when it starts, and a task whose worker process died
# (SIGKILL, OOM) goes back to the queue: every task is safe to run twice (outbox and delivery leases,
# evaluation reuse), so redelivery is the cheap way not to lose work.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# Redis hands an unacknowledged message out again after the visibility timeout. It must exceed the
# longest countdown (retry_backoff_max 3,600 s) or a waiting retry would be run twice; a message
# stranded by a dead worker is re-sent sooner by the outbox sweep (its lease, not this timeout).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=7200)}
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECTION_TIMEOUT", default=2.0)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# kombu's Redis transport, except that a channel of a closed connection raises a connection error, not
# the AttributeError that made a worker exit for good after a Redis restart (core/broker.py, issue 28).
CELERY_BROKER_TRANSPORT = "core.broker:Transport" if CELERY_BROKER_URL.startswith("redis") else None
# One queue per kind of work, so a notification never waits behind evaluations. Run a worker per
# queue in production (`celery -A config worker -Q notifications`, `-Q evaluation`, `-Q ingest,celery`).
# A worker without -Q consumes all of them. Tasks not named in the routes go to "celery".
CELERY_TASK_QUEUES = [Queue(name) for name in ("notifications", "evaluation", "ingest", "celery")]  # type: ignore[no-untyped-call]  # kombu leaves Queue unannotated
CELERY_TASK_ROUTES = {
    "core.tasks.notification_deliver": {"queue": "notifications"},
    "program.tasks.gate_evaluate": {"queue": "evaluation"},
    "program.tasks.gates_evaluate_open": {"queue": "evaluation"},
    "metrics.tasks.pull_sources_scrape": {"queue": "ingest"},
    "metrics.tasks.rollups_refresh": {"queue": "ingest"},
    "metrics.tasks.rollups_rebuild": {"queue": "ingest"},
    "metrics.tasks.rollups_medians_recompute": {"queue": "ingest"},
}
# (soft, hard) time limits in seconds per queue; the soft limit raises in the task, the hard one kills.
TASK_TIME_LIMITS = {
    "notifications": (
        env.int("TASK_SOFT_LIMIT_NOTIFICATIONS", default=45),
        env.int("TASK_LIMIT_NOTIFICATIONS", default=60),
    ),
    "evaluation": (
        env.int("TASK_SOFT_LIMIT_EVALUATION", default=300),
        env.int("TASK_LIMIT_EVALUATION", default=360),
    ),
    "ingest": (env.int("TASK_SOFT_LIMIT_INGEST", default=120), env.int("TASK_LIMIT_INGEST", default=180)),
    "celery": (env.int("TASK_SOFT_LIMIT_DEFAULT", default=600), env.int("TASK_LIMIT_DEFAULT", default=660)),
}
# Outbox (core.outbox, core.leases): a claim lasts OUTBOX_LEASE_SECONDS from its holder's last renewal
# (renewed every quarter of it while the task runs), so a dead worker's claim lapses that long after it
# died; an unfinished message is re-sent OUTBOX_RESEND_AFTER after its first publish (doubling for each
# later re-send, up to 16 times), and the sweep runs every OUTBOX_SWEEP_SECONDS. Work lost with a dead
# worker is therefore re-sent within about max(lease, resend) + sweep = 25 s
# (tests/core/faults/test_worker_faults.py measures it).
OUTBOX_LEASE_SECONDS = env.int("OUTBOX_LEASE_SECONDS", default=20)
OUTBOX_RESEND_AFTER = env.int("OUTBOX_RESEND_AFTER", default=20)
OUTBOX_SWEEP_SECONDS = env.int("OUTBOX_SWEEP_SECONDS", default=5)
# An Idempotency-Key is honoured this long; an hourly task forgets older answers (a repeat after that
# acts again). A day covers every retry policy a script or CI job uses.
IDEMPOTENCY_RETENTION_HOURS = env.int("IDEMPOTENCY_RETENTION_HOURS", default=24)
OUTBOX_KEEP_DAYS = env.int("OUTBOX_KEEP_DAYS", default=7)
# Liveness files of the worker and beat (core/liveness.py, `manage.py liveness worker|beat`): where, and
# how often the worker touches its file. Beat touches its file at each tick of its loop, which sleeps at
# most CELERY_BEAT_MAX_LOOP_INTERVAL seconds.
LIVENESS_DIR = env.str("LIVENESS_DIR", default=str(Path(tempfile.gettempdir()) / "rebuild-tracker-liveness"))
LIVENESS_SECONDS = env.int("LIVENESS_SECONDS", default=10)
CELERY_BEAT_MAX_LOOP_INTERVAL = 30
CELERY_BEAT_SCHEDULER = "core.liveness:LivenessScheduler"
# Beat sends core.tasks.heartbeat_record this often; /healthz calls the background stale after 3 missed beats.
HEARTBEAT_SECONDS = env.int("HEARTBEAT_SECONDS", default=30)
# Prometheus pull sources (metrics.PullSource): how often beat pulls them, how long one query may take,
# and how far back a source's first pull reaches (later pulls start where the last one ended).
PROMETHEUS_PULL_SECONDS = env.int("PROMETHEUS_PULL_SECONDS", default=60)
PROMETHEUS_PULL_TIMEOUT_SECONDS = env.float("PROMETHEUS_PULL_TIMEOUT_SECONDS", default=10.0)
PROMETHEUS_PULL_FIRST_LOOKBACK = env.int("PROMETHEUS_PULL_FIRST_LOOKBACK", default=3600)
# The hour (UTC, 0-23) beat sends the daily digest of notices to those who chose it; it covers the 24 h
# before that hour. Checked here: a wrong value would otherwise only show as beat never sending it.
NOTIFICATION_DIGEST_HOUR = env.int("NOTIFICATION_DIGEST_HOUR", default=7)
if not 0 <= NOTIFICATION_DIGEST_HOUR <= 23:
    raise ImproperlyConfigured(f"NOTIFICATION_DIGEST_HOUR must be 0-23, not {NOTIFICATION_DIGEST_HOUR}")

# Every periodic schedule lives here, each entry named after its task (the task's name with dashes).
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "heartbeat-record": {"task": "core.tasks.heartbeat_record", "schedule": float(HEARTBEAT_SECONDS)},
    "outbox-sweep": {"task": "core.tasks.outbox_sweep", "schedule": float(OUTBOX_SWEEP_SECONDS)},
    "idempotency-records-purge": {
        "task": "core.tasks.idempotency_records_purge",
        "schedule": crontab(minute=23),
    },
    "api-tokens-purge": {"task": "core.tasks.api_tokens_purge", "schedule": crontab(hour=2, minute=53)},
    "notification-digests-send": {
        "task": "core.tasks.notification_digests_send",
        "schedule": crontab(hour=NOTIFICATION_DIGEST_HOUR, minute=0),
    },
    "gates-evaluate-open": {"task": "program.tasks.gates_evaluate_open", "schedule": crontab(minute="*/15")},
    # Hourly: a program is `not started` until its start date, then its first phase is active.
    "programs-start-due": {"task": "program.tasks.programs_start_due", "schedule": crontab(minute=3)},
    "exceptions-expire": {"task": "freeze.tasks.exceptions_expire", "schedule": crontab(minute="*/5")},
    "exceptions-warn-expiring": {
        "task": "freeze.tasks.exceptions_warn_expiring",
        "schedule": crontab(minute=7),
    },
    "overrides-warn-overdue": {"task": "freeze.tasks.overrides_warn_overdue", "schedule": crontab(minute=37)},
    "feeds-check-stale": {"task": "metrics.tasks.feeds_check_stale", "schedule": crontab(minute="*/10")},
    "pull-sources-scrape": {
        "task": "metrics.tasks.pull_sources_scrape",
        "schedule": float(PROMETHEUS_PULL_SECONDS),
    },
    # Daily, though partitions are made three months ahead: a few missed days change nothing.
    "observations-partitions-create": {
        "task": "metrics.tasks.observations_partitions_create",
        "schedule": crontab(hour=2, minute=41),
    },
    # Daily, after the night's median recompute: a month is dropped only once its rollups are complete.
    "observations-partitions-drop": {
        "task": "metrics.tasks.observations_partitions_drop",
        "schedule": crontab(hour=3, minute=11),
    },
    "rollups-refresh": {"task": "metrics.tasks.rollups_refresh", "schedule": crontab(minute="*/5")},
    # Nightly: the exact medians of yesterday's days, whose folds left the charts the buckets' median.
    "rollups-medians-recompute": {
        "task": "metrics.tasks.rollups_medians_recompute",
        "schedule": crontab(hour=0, minute=23),
    },
    "incident-rates-derive": {
        "task": "incidents.tasks.incident_rates_derive",
        "schedule": crontab(hour=1, minute=17),
    },
}
# effective-rounds-per-day counts the runs (run_ids) of this metric that no incident interrupted.
INCIDENTS_RUNS_METRIC = env.str("INCIDENTS_RUNS_METRIC", default="step-time")
# Comparisons and gate criteria with more rows than this on a side read the day rollups (approximate,
# metrics.rollups); smaller windows are read exactly from the rows. 100,000, not 200,000: at 10M rows the
# demo program's criteria have ~137,000 rows a side, and each exact one cost ~65 ms to read plus ~50 ms
# for the evaluation's inputs fingerprint, 1.3 s for the program (benchmarks/gates.py), 0.13 s from rollups.
ROLLUP_THRESHOLD = env.int("ROLLUP_THRESHOLD", default=100_000)
# Where the rollups cannot settle a verdict (a difference finer than their buckets), a comparison asked
# by a page or the API re-reads the rows exactly only up to this many rows (both sides); above it, it
# answers that it cannot tell and says why. 2,000,000 rows take about a second of one core; the 10M rows
# of a whole-series comparison took 4.5 s and, in benchmarks/mixed_load.py, held a sync worker so long
# that freeze checks queued behind it (p99 7.9 s). Gate evaluations (background) read any number.
COMPARISON_REREAD_MAX_ROWS = env.int("COMPARISON_REREAD_MAX_ROWS", default=2_000_000)
# Retention (metrics/retention.py, docs/operations.md): how many months of raw observations to keep, the
# current one included; older monthly partitions are dropped once their day rollups are complete, and
# comparisons reaching before that read the rollups alone. Unset: every row is kept.
OBSERVATIONS_KEEP_MONTHS: int | None = env.int("OBSERVATIONS_KEEP_MONTHS", default=None)
if OBSERVATIONS_KEEP_MONTHS is not None and OBSERVATIONS_KEEP_MONTHS < 1:
    raise ImproperlyConfigured(f"OBSERVATIONS_KEEP_MONTHS must be 1 or more, not {OBSERVATIONS_KEEP_MONTHS}")
# GET /api/v1/observations/export/ answers at most this many rows (a 400 naming `since` beyond it): the
# download streams, so memory does not bound it, but a spreadsheet or a re-import of more is no use.
OBSERVATION_EXPORT_MAX_ROWS = env.int("OBSERVATION_EXPORT_MAX_ROWS", default=1_000_000)

# /metrics (the tracker's own Prometheus metrics): with a token, scrapers send
# `Authorization: Bearer <token>`; without one, only requests from this host (127.0.0.1/::1) are answered.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="rebuild-tracker@localhost")
# Where people reach this site: emails and webhooks carry links made absolute with it (no request
# is at hand in a worker). Set it in every deployment; the default is `make run`'s address.
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")

# Notification deliveries retry with exponential backoff starting at this many seconds.
NOTIFICATION_RETRY_BACKOFF = env.int("NOTIFICATION_RETRY_BACKOFF", default=30)
NOTIFICATION_MAX_RETRIES = env.int("NOTIFICATION_MAX_RETRIES", default=8)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)

# A broker URL is reported by /healthz only when configured.
HEALTH_CHECK_BROKER = bool(CELERY_BROKER_URL)

# Logs (docs/operations.md): one line per record, with the request id of the request or task it belongs
# to. "console" is readable (development, tests); "json" is for a log collector (production's default).
LOG_FORMAT = env.str("LOG_FORMAT", default="console")
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
# Readable logs leave out the 5-s outbox sweep's and the heartbeat's info lines; 1 shows them.
LOG_ROUTINE_TASKS = env.bool("LOG_ROUTINE_TASKS", default=False)
try:
    LOGGING = logging_config(fmt=LOG_FORMAT, level=LOG_LEVEL, quiet_routine=not LOG_ROUTINE_TASKS)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from exc
# django-structlog: the request's log context (request id, user, address) travels in each task's headers
# into the worker; an id sent by the caller is kept (core.telemetry.request_id has checked it already).
DJANGO_STRUCTLOG_CELERY_ENABLED = True
DJANGO_STRUCTLOG_TRUST_UPSTREAM_REQUEST_ID = True
DJANGO_STRUCTLOG_IP_LOGGING_ENABLED = False  # bound by core.telemetry.request_id, proxies counted
DJANGO_STRUCTLOG_STATUS_START_LOG_LEVEL = logging.DEBUG  # one line per request: request_finished

# Sentry, only with a DSN (core/telemetry/sentry.py): unhandled errors of web, worker and beat, and
# ERROR log records. SENTRY_TRACES_SAMPLE_RATE > 0 also sends that share of requests' traces.
SENTRY_DSN = env.str("SENTRY_DSN", default="")
SENTRY_ENABLED = sentry_init(
    dsn=SENTRY_DSN,
    environment=env.str("SENTRY_ENVIRONMENT", default="production"),
    traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0),
)
