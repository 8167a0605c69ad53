"""What a webhook endpoint is sent, per its format: pure functions from a notice to a JSON body.

- standard: `{type, subject, link, data}`, signed per Standard Webhooks by the caller
  (core.notifications._send_webhook).
- slack: a Slack incoming-webhook message, `text` (the notification fallback) plus Block Kit `blocks`: a
  mrkdwn section with subject, body and link, and a context line naming the program and kind.
  https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks
- teams: a Teams workflow ("Post to a channel when a webhook request is received") message: one
  attachment holding an Adaptive Card 1.4 (the newest version Teams renders everywhere, mobile
  included) with TextBlocks and an Action.OpenUrl to the link.
  https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using

Limits are the receivers' own: Slack refuses a section text over 3000 characters; Teams refuses a
message over 28 KB, so both bodies cut a long notice body (the link leads to the whole thing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from core.notification_kinds import Kind, kind_of


class Format(models.TextChoices):
    """What an endpoint is sent (WebhookEndpoint.format); EXPLAINED says so in plain words for the page."""

    STANDARD = "standard", "Standard Webhooks (signed JSON)"
    SLACK = "slack", "Slack incoming webhook"
    TEAMS = "teams", "Microsoft Teams workflow"


EXPLAINED = {
    Format.STANDARD: "Signed JSON {type, subject, link, data} for a receiver of your own; verify "
    "webhook-signature with the endpoint's secret.",
    Format.SLACK: "A Slack message with a link. URL: the incoming webhook Slack gives you "
    "(https://hooks.slack.com/services/…); no signature, the URL is the secret.",
    Format.TEAMS: "An Adaptive Card with a button to the link. URL: the one a Teams workflow "
    "“When a Teams webhook request is received” gives you; no signature, the URL is the secret.",
}


SLACK_SECTION_LIMIT = 3000  # characters of a section block's text (Block Kit reference)
TEAMS_BODY_LIMIT = 4000  # characters of the notice body on the card: far below the 28 KB message limit
LINK_TITLE = "Open in Rebuild Tracker"
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
ADAPTIVE_CARD_VERSION = "1.4"
ELLIPSIS = "…"


@dataclass(frozen=True)
class Notice:
    """A notification as a receiver outside the site sees it: `link` already absolute (or empty)."""

    event: str
    subject: str
    body: str
    link: str = ""
    program_key: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> Kind:
        return kind_of(self.event)

    def context(self) -> str:
        """One line naming where it comes from: "Program alpha · Gates · gate.decided"."""
        program = f"Program {self.program_key}" if self.program_key else "No program"
        return f"{program} · {self.kind.label} · {self.event}"


def body_for(fmt: str, notice: Notice) -> dict[str, Any]:
    if fmt == Format.SLACK:
        return slack_body(notice)
    if fmt == Format.TEAMS:
        return teams_body(notice)
    return standard_body(notice)


def standard_body(notice: Notice) -> dict[str, Any]:
    return {"type": notice.event, "subject": notice.subject, "link": notice.link, "data": notice.data}


def slack_escape(text: str) -> str:
    """Slack's three control characters as the entities it documents ("Escaping text"): what a notice
    says is shown as written, never read as a link, a mention (<!channel>) or a user reference."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


def _cut_escaped(text: str, limit: int) -> str:
    """Cut text already escaped (cutting before escaping would let the entities push it past the
    limit), dropping an entity the cut would halve ("&am…")."""
    if len(text) <= limit:
        return text
    kept = text[: limit - len(ELLIPSIS)]
    amp = kept.rfind("&", len(kept) - 4)  # "&amp;" is 5 long: a halved one starts in the last 4
    if amp != -1 and ";" not in kept[amp:]:
        kept = kept[:amp]
    return kept + ELLIPSIS


def slack_body(notice: Notice) -> dict[str, Any]:
    head = f"*{slack_escape(notice.subject)}*"
    # A URL inside <…|…> is escaped too; a "|" in it would end the URL early, so it is percent-encoded.
    tail = f"<{slack_escape(notice.link).replace('|', '%7C')}|{LINK_TITLE}>" if notice.link else ""
    room = SLACK_SECTION_LIMIT - len(head) - len(tail) - 2  # the two newlines around the body
    body = _cut_escaped(slack_escape(notice.body), room)
    text = "\n".join(part for part in (head, body, tail) if part)
    return {
        "text": slack_escape(notice.subject),  # what notifications and old clients show
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": text}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_escape(notice.context())}]},
        ],
    }


# What a TextBlock's Markdown reads inline (emphasis, links, code, entities, autolinks); then a list's
# marker at the start of a line ("- ", "+ ", "1. "; "* " is escaped with the inline ones).
TEAMS_INLINE = re.compile(r"([\\*_\[\]`~<&])")
TEAMS_BULLET = re.compile(r"^(\s*)([-+])(?=\s)", re.MULTILINE)
TEAMS_NUMBERED = re.compile(r"^(\s*\d+)\.(?=\s)", re.MULTILINE)


def teams_escape(text: str) -> str:
    """A TextBlock's text is Markdown in Teams: `app_pool_01` would lose its underscores to italics and
    `[x](url)` become a link. Each such character is backslash-escaped, which Markdown shows as written
    (CommonMark's rule for ASCII punctuation, which Teams follows)."""
    text = TEAMS_INLINE.sub(r"\\\1", text)
    text = TEAMS_BULLET.sub(r"\1\\\2", text)
    return TEAMS_NUMBERED.sub(r"\1\\.", text)


def teams_body(notice: Notice) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {
            "type": "TextBlock",
            "text": teams_escape(notice.subject),
            "weight": "Bolder",
            "size": "Medium",
            "wrap": True,
        }
    ]
    if notice.body:
        body = teams_escape(_cut(notice.body, TEAMS_BODY_LIMIT))
        blocks.append({"type": "TextBlock", "text": body, "wrap": True})
    blocks.append(
        {
            "type": "TextBlock",
            "text": teams_escape(notice.context()),
            "isSubtle": True,
            "size": "Small",
            "wrap": True,
        }
    )
    card: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": ADAPTIVE_CARD_VERSION,
        "body": blocks,
    }
    if notice.link:
        card["actions"] = [{"type": "Action.OpenUrl", "title": LINK_TITLE, "url": notice.link}]
    return {
        "type": "message",
        "attachments": [{"contentType": ADAPTIVE_CARD, "contentUrl": None, "content": card}],
    }
