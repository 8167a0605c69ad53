# Two commands for a newcomer: `make run` and `make test`. Everything else is set up on demand.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint demo worker beat db-url clean-data

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade "pip>=25.1"
	$(BIN)/pip install -q -e . --group dev
	touch $(STAMP)

# DATABASE_URL wins; without it an embedded PostgreSQL is started under .data/ (see scripts/embedded_db.py).
define with_db
	DATABASE_URL="$${DATABASE_URL:-$$($(BIN)/python scripts/embedded_db.py)}"; export DATABASE_URL;
endef

run: $(STAMP)
	@$(with_db) \
	$(BIN)/python manage.py migrate --no-input && \
	$(BIN)/python manage.py collectstatic --no-input -v0 && \
	$(BIN)/python manage.py load_demo && \
	echo "Rebuild Tracker is running at http://127.0.0.1:8000/" && \
	$(BIN)/python manage.py runserver 127.0.0.1:8000

test: $(STAMP)
	@$(with_db) $(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

worker: $(STAMP)
	@$(with_db) $(BIN)/celery -A config worker -l info

beat: $(STAMP)
	@$(with_db) $(BIN)/celery -A config beat -l info

db-url: $(STAMP)
	@$(BIN)/python scripts/embedded_db.py
