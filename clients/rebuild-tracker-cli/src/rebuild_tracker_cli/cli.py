"""`rebuild-tracker`: the freeze check, observation pushes, comparisons and gate waits, for pipelines.

Exit codes are the product: 0 yes (allowed, pushed, reached), 1 no (blocked or needing approval, a
gate decided otherwise or not in time, a comparison that got worse with --fail-on-worse), 2 could not
tell (bad usage, unknown component, auth, network, a server error, an answer it cannot read). An
answer the client does not understand is always 2, never 0: "not blocked" must be said, not inferred.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rebuild_tracker_cli import __version__
from rebuild_tracker_cli.api import Api, ApiError, idempotency_key_for

EXIT_YES, EXIT_NO, EXIT_ERROR = 0, 1, 2

URL_ENV, TOKEN_ENV = "REBUILD_TRACKER_URL", "REBUILD_TRACKER_TOKEN"

# The freeze check's `decision` (freeze/api/check.py); anything else is an error, never "allowed".
BLOCKED = {"needs_approval": "needs approval", "forbidden": "is frozen"}
ALLOWED = "allowed"

# The batch API's formats (metrics/ingest/formats/batch.py), by --format or the file's suffix.
FORMATS = {"json": "application/json", "ndjson": "application/x-ndjson", "csv": "text/csv"}
SUFFIXES = {".json": "json", ".ndjson": "ndjson", ".jsonl": "ndjson", ".csv": "csv"}

# A gate's status (program.models.Gate.Status); the final ones no longer move while nobody reopens it.
GATE_STATUSES = ("open", "ready", "passed", "failed", "waived", "closed")
GATE_FINAL = frozenset({"passed", "failed", "waived", "closed"})
VERDICTS = ("better", "worse", "no_difference", "insufficient_data")

Handler = Callable[[Api, argparse.Namespace], int]


def say(line: str) -> None:
    print(line, flush=True)


def show_json(body: Any) -> None:
    print(json.dumps(body, indent=2), flush=True)


# --- freeze check ------------------------------------------------------------------------------------


def freeze_check(api: Api, args: argparse.Namespace) -> int:
    params = {"component": args.component}
    if args.program:
        params["program"] = args.program
    if args.at:
        params["at"] = args.at
    body = api.get("/freeze/check/", params).body
    decision = body.get("decision")
    if decision != ALLOWED and decision not in BLOCKED:
        raise ApiError(f"the answer holds no known decision ({decision!r}); not treating that as allowed")
    if args.json:
        show_json(body)
    elif decision == ALLOWED:
        say(f"allowed: {args.component} ({body.get('reason', '')})")
    else:
        say(f"blocked: {args.component} {BLOCKED[decision]} ({body.get('reason', '')})")
    return EXIT_YES if decision == ALLOWED else EXIT_NO


# --- observations push -------------------------------------------------------------------------------


def observations_push(api: Api, args: argparse.Namespace) -> int:
    path = Path(args.file)
    kind = args.format or SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ApiError(
            f"cannot tell the format of {path.name}: name it .json, .ndjson or .csv, or pass --format"
        )
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise ApiError(f"cannot read {path}: {exc.strerror}") from None
    content_type = FORMATS[kind]
    answer = api.post(
        "/observations/batch/",
        content=content,
        content_type=content_type,
        idempotency_key=idempotency_key_for(content, content_type),
    )
    body = answer.body
    if args.json:
        show_json(body)
        return EXIT_YES
    replayed = answer.headers.get("Idempotent-Replay") == "true"
    counts = (
        f"{body.get('received')} received, {body.get('inserted')} new, "
        f"{body.get('duplicates')} already stored"
    )
    if replayed:
        say(f"already pushed: batch {body.get('batch')} ({counts}); this file was sent before, nothing new")
    else:
        say(f"pushed: batch {body.get('batch')} ({counts})")
    return EXIT_YES


# --- compare -----------------------------------------------------------------------------------------


def _number(value: Any) -> str:
    return "–" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def compare(api: Api, args: argparse.Namespace) -> int:
    params: dict[str, str | list[str]] = {
        "metric": args.metric,
        "baseline": args.baseline,
        "candidate": args.candidate,
    }
    for name in ("workload", "since", "until", "statistic", "alpha", "min_samples", "group_by"):
        value = getattr(args, name)
        if value is not None:
            params[name] = str(value)
    tags: dict[str, list[str]] = {}
    for tag in args.tag:
        key, sep, value = tag.partition("=")
        if not sep or not key:
            raise ApiError(f"--tag takes KEY=VALUE, not {tag!r}")
        tags.setdefault(f"tags.{key}", []).append(value)
    params.update(tags)
    body = api.get("/comparisons/", params).body
    verdict = body.get("verdict")
    if verdict not in VERDICTS:
        raise ApiError(f"the answer holds no known verdict ({verdict!r})")
    if args.json:
        show_json(body)
    else:
        baseline, candidate = body.get("baseline") or {}, body.get("candidate") or {}
        change = body.get("change_pct")
        say(
            f"{verdict}: {body.get('metric')} {body.get('statistic')} in {body.get('unit')}, "
            f"{baseline.get('system')} {_number(baseline.get('value'))} (n={baseline.get('n')}) → "
            f"{candidate.get('system')} {_number(candidate.get('value'))} (n={candidate.get('n')})"
            + ("" if change is None else f", {change:+.1f} %")
            + ("" if body.get("p_value") is None else f", p={body['p_value']:.3g}")
            + f" ({body.get('reason', '')})"
        )
    return EXIT_NO if args.fail_on_worse and verdict == "worse" else EXIT_YES


# --- gate wait ---------------------------------------------------------------------------------------


def gate_statuses(text: str) -> frozenset[str]:
    wanted = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(wanted - set(GATE_STATUSES))
    if not wanted or unknown:
        raise argparse.ArgumentTypeError(
            f"give one or more of {', '.join(GATE_STATUSES)}, comma-separated (not {', '.join(unknown)})"
        )
    return wanted


def gate_wait(api: Api, args: argparse.Namespace) -> int:
    wanted: frozenset[str] = args.until
    goal = " or ".join(sorted(wanted))
    deadline = time.monotonic() + args.timeout
    while True:
        # Each poll gets at most the time left (and a second to answer a zero timeout's single check).
        body = api.get(f"/gates/{args.id}/", timeout=max(deadline - time.monotonic(), 1.0)).body
        status = body.get("status")
        if status not in GATE_STATUSES:
            raise ApiError(f"the answer holds no known gate status ({status!r})")
        name = f"gate {args.id} ({body.get('name', '')})"
        if status in wanted:
            if args.json:
                show_json(body)
            else:
                say(f"reached: {name} is {status}")
            return EXIT_YES
        if status in GATE_FINAL:
            if args.json:
                show_json(body)
            else:
                say(f"not reached: {name} is {status}, not {goal}")
            return EXIT_NO
        left = deadline - time.monotonic()
        if left <= 0:
            if args.json:
                show_json(body)
            else:
                say(f"timeout: {name} is still {status} after {args.timeout:g} s, not {goal}")
            return EXIT_NO
        time.sleep(min(args.interval, left))


# --- the command line --------------------------------------------------------------------------------


def _seconds(text: str, *, zero: bool) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (seconds >= 0 if zero else seconds > 0) or seconds == float("inf"):
        raise argparse.ArgumentTypeError(
            f"give a {'' if zero else 'positive '}number of seconds, not {text!r}"
        )
    return seconds


def timeout_seconds(text: str) -> float:
    """0 asks once: reached now or not."""
    return _seconds(text, zero=True)


def interval_seconds(text: str) -> float:
    return _seconds(text, zero=False)


def build_parser() -> argparse.ArgumentParser:
    connection = argparse.ArgumentParser(add_help=False)
    connection.add_argument("--url", help=f"The tracker's base URL (default: ${URL_ENV}).")
    connection.add_argument("--token", help=f"An API token (default: ${TOKEN_ENV}).")
    connection.add_argument(
        "--json", action="store_true", help="Print the API's JSON answer instead of a line."
    )

    parser = argparse.ArgumentParser(
        prog="rebuild-tracker",
        description="Rebuild Tracker from a pipeline. Exit 0: yes; 1: no; 2: error (could not tell).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    groups = parser.add_subparsers(dest="group", required=True, metavar="{freeze,observations,compare,gate}")

    freeze = groups.add_parser("freeze", help="The freeze list.").add_subparsers(
        dest="command", required=True
    )
    check = freeze.add_parser(
        "check",
        parents=[connection],
        help="May COMPONENT change now? Exit 0 allowed, 1 blocked or needing approval, 2 error.",
    )
    check.add_argument("component", metavar="COMPONENT", help="The component's key.")
    check.add_argument("--program", help="Count only this program's freeze windows (its slug).")
    check.add_argument("--at", help="An ISO 8601 moment to ask about instead of now.")
    check.set_defaults(handler=freeze_check)

    observations = groups.add_parser("observations", help="Observations.").add_subparsers(
        dest="command", required=True
    )
    push = observations.add_parser(
        "push",
        parents=[connection],
        help="Push a batch file once: a repeat of the same file is replayed, not stored again.",
    )
    push.add_argument("file", metavar="FILE", help='JSON {"observations": [...]}, NDJSON or CSV.')
    push.add_argument("--format", choices=sorted(FORMATS), help="Default: from the file's suffix.")
    push.set_defaults(handler=observations_push)

    comparison = groups.add_parser(
        "compare", parents=[connection], help="Old vs new on one metric: the verdict and its numbers."
    )
    comparison.add_argument("--metric", required=True, help="key (active version) or key@N")
    comparison.add_argument("--baseline", required=True, help="The baseline system's key.")
    comparison.add_argument("--candidate", required=True, help="The candidate system's key.")
    comparison.add_argument("--workload", help="Default: every workload, pooled.")
    comparison.add_argument("--since", help="ISO 8601.")
    comparison.add_argument("--until", help="ISO 8601.")
    comparison.add_argument("--statistic", help="Default: the definition's.")
    comparison.add_argument("--alpha", type=float)
    comparison.add_argument("--min-samples", type=int)
    comparison.add_argument("--group-by", help="A tag key: one comparison per value.")
    comparison.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE", help="Repeatable.")
    comparison.add_argument("--fail-on-worse", action="store_true", help="Exit 1 when the verdict is worse.")
    comparison.set_defaults(handler=compare)

    gate = groups.add_parser("gate", help="Milestone gates.").add_subparsers(dest="command", required=True)
    wait = gate.add_parser(
        "wait",
        parents=[connection],
        help="Poll a gate until it reaches a status. Exit 0 reached, 1 decided otherwise or timed out.",
    )
    wait.add_argument("id", metavar="ID", type=int, help="The gate's id.")
    wait.add_argument(
        "--until", type=gate_statuses, default=frozenset({"passed"}), help="Status(es), comma-separated."
    )
    wait.add_argument("--timeout", type=timeout_seconds, required=True, help="Seconds to wait at most.")
    wait.add_argument("--interval", type=interval_seconds, default=10.0, help="Seconds between polls (10).")
    wait.set_defaults(handler=gate_wait)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # bad usage: argparse exits 2, the error code here too
    handler: Handler = args.handler
    try:
        with Api(args.url or os.environ.get(URL_ENV, ""), args.token or os.environ.get(TOKEN_ENV, "")) as api:
            return handler(api, args)
    except ApiError as exc:
        if args.json:
            show_json(exc.body if isinstance(exc.body, dict) else {"detail": exc.message, "code": "client"})
        print(f"error: {exc.message}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        return EXIT_ERROR
