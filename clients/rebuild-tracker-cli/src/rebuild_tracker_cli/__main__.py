"""`python -m rebuild_tracker_cli`, the same as the `rebuild-tracker` command."""

from rebuild_tracker_cli.cli import main

raise SystemExit(main())
