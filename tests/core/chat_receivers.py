"""Stand-ins for Slack's incoming webhooks and a Teams workflow's webhook trigger, for the tests.

`ChatReceiver` is a real HTTP server (a socket, in a thread) that checks each body as it arrives against
the rules the two vendors document, and answers as they do: Slack 200 `ok` or 400 `invalid_payload`,
Teams 202 or 400. `vendor_problems` checks bodies with the vendors' own code besides (Slack's TypeScript
types through the TypeScript compiler, Microsoft's Adaptive Cards parser; tests/chat_validators/, pinned
by its package-lock.json and installed with `npm ci`, offline once installed).

Slack: https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks,
https://api.slack.com/reference/surfaces/formatting#escaping
Teams: https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using
and https://adaptivecards.io/explorer/ (Teams renders card versions up to 1.5 on desktop, 1.4 on mobile).
"""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.system_packages import require_program

VALIDATORS = Path(__file__).resolve().parents[1] / "chat_validators"

SLACK_MAX_BLOCKS = 50
SLACK_SECTION_TEXT = 3000
SLACK_CONTEXT_ELEMENTS = 10
TEAMS_MAX_BYTES = 28 * 1024
TEAMS_MAX_VERSION = (1, 4)
# What may stand between < and > in Slack mrkdwn: a link (<url> or <url|label>). Anything else there is a
# mention or a command (<!channel>, <@U123>), which a notice must never make by accident.
SLACK_LINK = re.compile(r"<https?://[^\s<>|]+(\|[^<>]+)?>")
SLACK_ENTITY = re.compile(r"&(?!amp;|lt;|gt;)")


def slack_mrkdwn_problems(text: str, where: str) -> list[str]:
    bare = SLACK_LINK.sub("", text)
    problems = []
    if "<" in bare or ">" in bare:
        problems.append(f"{where}: an unescaped < or > outside a link")
    if SLACK_ENTITY.search(text):
        problems.append(f"{where}: an & that is not &amp;, &lt; or &gt;")
    return problems


def slack_problems(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems = []
    if not isinstance(body.get("text"), str) or not body["text"].strip():
        problems.append("no `text` (Slack's notification fallback)")
    else:
        problems += slack_mrkdwn_problems(body["text"], "text")
    blocks = body.get("blocks", [])
    if not isinstance(blocks, list) or len(blocks) > SLACK_MAX_BLOCKS:
        return [*problems, f"`blocks` is not a list of at most {SLACK_MAX_BLOCKS}"]
    for index, block in enumerate(blocks):
        where = f"blocks[{index}]"
        kind = block.get("type")
        if kind == "section":
            text = block.get("text", {})
            if text.get("type") not in ("mrkdwn", "plain_text"):
                problems.append(f"{where}.text is not a text object")
            elif not 1 <= len(text.get("text", "")) <= SLACK_SECTION_TEXT:
                problems.append(f"{where}.text.text is not 1 to {SLACK_SECTION_TEXT} characters")
            elif text["type"] == "mrkdwn":
                problems += slack_mrkdwn_problems(text["text"], f"{where}.text")
        elif kind == "context":
            elements = block.get("elements", [])
            if not 1 <= len(elements) <= SLACK_CONTEXT_ELEMENTS:
                problems.append(f"{where}.elements is not 1 to {SLACK_CONTEXT_ELEMENTS} elements")
            for e, element in enumerate(elements):
                if element.get("type") == "mrkdwn":
                    problems += slack_mrkdwn_problems(element.get("text", ""), f"{where}.elements[{e}]")
                elif element.get("type") not in ("plain_text", "image"):
                    problems.append(f"{where}.elements[{e}] is not text or an image")
        else:
            problems.append(f"{where}: a block these notices do not use ({kind!r})")
    return problems


def _version(text: Any) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in str(text).split("."))
    except ValueError:
        return (99,)


def teams_problems(body: Any, size: int) -> list[str]:
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems = []
    if size > TEAMS_MAX_BYTES:
        problems.append(f"{size} bytes: over the 28 KB a Teams message may carry")
    if body.get("type") != "message":
        problems.append("`type` is not 'message'")
    attachments = body.get("attachments")
    if not isinstance(attachments, list) or not attachments:
        return [*problems, "no attachments"]
    attachment = attachments[0]
    if attachment.get("contentType") != "application/vnd.microsoft.card.adaptive":
        problems.append("attachments[0].contentType is not an Adaptive Card")
    card = attachment.get("content") or {}
    if card.get("type") != "AdaptiveCard":
        problems.append("attachments[0].content.type is not 'AdaptiveCard'")
    if _version(card.get("version")) > TEAMS_MAX_VERSION:
        problems.append(f"card version {card.get('version')!r}: Teams on mobile renders up to 1.4")
    blocks = card.get("body")
    if not isinstance(blocks, list) or not blocks:
        problems.append("the card's body is empty")
    else:
        for index, block in enumerate(blocks):
            if block.get("type") != "TextBlock" or not str(block.get("text", "")).strip():
                problems.append(f"body[{index}] is not a TextBlock with text")
    for index, action in enumerate(card.get("actions", [])):
        url = urlsplit(str(action.get("url", "")))
        if action.get("type") != "Action.OpenUrl" or url.scheme not in ("http", "https") or not url.netloc:
            problems.append(f"actions[{index}] is not an Action.OpenUrl to an absolute URL")
    return problems


@dataclass
class Arrival:
    path: str
    headers: dict[str, str]
    body: Any
    problems: list[str]


@dataclass
class ChatReceiver:
    """Slack at /slack/services/…, Teams at /teams/workflows/…: each checks what it receives."""

    arrivals: list[Arrival] = field(default_factory=list)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["content-length"]))
                problems = []
                if self.headers.get("content-type") != "application/json":
                    problems.append("content-type is not application/json")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body, problems = None, [*problems, "the body is not JSON"]
                slack = self.path.startswith("/slack/")
                if body is not None:
                    problems += slack_problems(body) if slack else teams_problems(body, len(raw))
                receiver.arrivals.append(Arrival(self.path, dict(self.headers), body, problems))
                status, answer = (200, b"ok") if slack else (202, b"")
                if problems:
                    status, answer = 400, b"invalid_payload" if slack else json.dumps(problems).encode()
                self.send_response(status)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        base = f"http://127.0.0.1:{self.server.server_port}"
        # Shaped as the real ones, secret in the path: what a lead pastes in.
        self.slack_url = f"{base}/slack/services/T0001/B0001/s3cr3tS1ackT0ken"
        self.teams_url = f"{base}/teams/workflows/abc123/triggers/manual/paths/invoke?sig=s3cr3tSig"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _npm_ci(npm: str) -> None:
    """Install the validators' pinned packages once; parallel test workers wait on a lock."""
    with open(Path(tempfile.gettempdir()) / "rebuild-tracker-chat-npm.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (VALIDATORS / "node_modules" / ".package-lock.json").exists():
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=VALIDATORS,
                check=True,
                capture_output=True,
                timeout=300,
            )


def _validators(request: dict[str, Any]) -> dict[str, Any]:
    node = require_program("node", package="nodejs")
    _npm_ci(require_program("npm", package="npm"))
    done = subprocess.run(
        [node, str(VALIDATORS / "validate.mjs")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def vendor_problems(*, slack: Sequence[Any] = (), teams: Sequence[Any] = ()) -> dict[str, list[list[str]]]:
    """Per body, what Slack's types and Microsoft's Adaptive Cards parser find wrong (empty: passes)."""
    answer = _validators({"slack": list(slack), "teams": list(teams)})
    return {"slack": answer["slack"], "teams": answer["teams"]}


def markdown_rendered(texts: Sequence[str]) -> list[str]:
    """Each text as markdown-it renders it to HTML (the processor the Adaptive Cards SDK documents)."""
    return list(_validators({"markdown": list(texts)})["markdown"])
