"""PostgreSQL backend whose pooled connections are checked without a query (see core.db.base)."""
