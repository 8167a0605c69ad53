# Two commands for a newcomer: `make run` and `make test`. Everything else is set up on demand.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run stop test test-citus citus-stop lint lock schemathesis bench worker beat db-url

# Installs exactly what requirements-dev.lock pins (hash-checked), then the app itself without resolving again.
# -qq: errors only; a machine's own pip configuration (extra indexes, find-links) otherwise warns per package.
PIP_QUIET := -qq --root-user-action=ignore
$(STAMP): pyproject.toml requirements.lock requirements-dev.lock
	@echo "Installing the pinned dependencies into $(VENV) (a few minutes the first time)"
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@$(BIN)/pip install $(PIP_QUIET) --upgrade "pip>=25.1"
	@$(BIN)/pip install $(PIP_QUIET) --require-hashes -r requirements-dev.lock
	@$(BIN)/pip install $(PIP_QUIET) --no-deps -e .
	@touch $(STAMP)

# After editing the dependencies in pyproject.toml: re-resolve both lock files (for every platform, so the
# Docker image on arm64 installs from them too), then commit them. requirements.lock is what production
# installs; the dev lock is constrained to the same versions.
UV_COMPILE = $(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11 --generate-hashes -q
lock:
	test -x $(BIN)/uv || { test -x $(BIN)/python || $(PY) -m venv $(VENV); $(BIN)/pip install $(PIP_QUIET) "uv>=0.13.9,<0.14"; }
	$(UV_COMPILE) $(LOCK_ARGS) -o requirements.lock
	$(UV_COMPILE) $(LOCK_ARGS) --group dev -c requirements.lock -o requirements-dev.lock

# Schemathesis over the whole API schema, as a user holding every role, against gunicorn on a fresh database with the demo
# data (scripts/schemathesis_run.py). 10 examples per operation take about 5 minutes; for a deeper run:
# make schemathesis SCHEMATHESIS_ARGS="--max-examples 100 --seed 1"
SCHEMATHESIS_ARGS ?= --max-examples 10
schemathesis: $(STAMP)
	@$(with_db) $(BIN)/python scripts/schemathesis_run.py $(SCHEMATHESIS_ARGS)

# Every benchmark at the README's target sizes (tens of millions of rows: about an hour on 2 cores), on a
# database of its own (<name>_bench), ending with their target lines as the README's markdown table, with
# the run's date and load (scripts/bench.py). Figures are CPU time, each printed with the load beside it.
# make bench BENCH_ARGS=--quick   → a tenth of the sizes, to check they run; BENCH_ARGS="--only compare"
bench: $(STAMP)
	@$(with_db) $(BIN)/python scripts/bench.py $(BENCH_ARGS)

# DATABASE_URL wins; without it an embedded PostgreSQL is started under .data/ (see scripts/embedded_db.py).
define with_db
	DATABASE_URL="$${DATABASE_URL:-$$($(BIN)/python scripts/embedded_db.py)}"; export DATABASE_URL;
endef

# The demo runs as a product would: styled error pages, no debug pages (DJANGO_DEBUG=1 make run brings them back).
# The real topology: web, a Celery worker and Celery beat under honcho (Procfile), on an embedded Redis under
# .data/redis unless CELERY_BROKER_URL is set, after migrate, collectstatic and load_demo
# (scripts/run_topology.py). Ctrl-C stops them all; the embedded PostgreSQL keeps running until `make stop`.
run: $(STAMP)
	@$(with_db) export DJANGO_DEBUG="$${DJANGO_DEBUG:-false}"; \
	exec $(BIN)/python scripts/run_topology.py

# Stops the embedded PostgreSQL that `make run` and `make test` leave running (everything else stops on Ctrl-C).
stop: $(STAMP)
	@$(BIN)/python scripts/embedded_db.py --stop

# Without CELERY_BROKER_URL an embedded Redis runs for the tests' duration (scripts/run_tests.py).
test: $(STAMP)
	@$(with_db) $(BIN)/python scripts/run_tests.py $(PYTEST_ARGS)

# The Citus mode (docs/scaling.md) on a local cluster: Citus built once per machine from ../shared/vendor/citus
# (scripts/citus_build.sh; its build dependencies from Debian, see there), a coordinator and two workers on
# ports 55432-55434 (scripts/citus_cluster.py; `make citus-stop` ends them), then every test of the apps that
# own or read the distributed tables (the Citus tests themselves: plans, demo smoke) except those in Chromium,
# which run the same queries on plain PostgreSQL. tests/core (auth, tokens, outbox, faults) passed on the
# cluster too but takes 8 minutes more than CI has (docs/scaling.md).
CITUS_TESTS = tests/citus tests/metrics tests/program tests/incidents tests/freeze tests/work
test-citus: $(STAMP)
	@scripts/citus_build.sh
	@DATABASE_URL="$$($(BIN)/python scripts/citus_cluster.py)" DATABASE_ENGINE_MODE=citus CITUS_SHARD_COUNT=8 \
	  $(BIN)/python scripts/run_tests.py -m "not browser" $(CITUS_TESTS) $(PYTEST_ARGS)

citus-stop: $(STAMP)
	@$(BIN)/python scripts/citus_cluster.py --stop

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

worker: $(STAMP)
	@$(with_db) $(BIN)/celery -A config worker -l info

beat: $(STAMP)
	@$(with_db) $(BIN)/celery -A config beat -l info

db-url: $(STAMP)
	@$(BIN)/python scripts/embedded_db.py
