"""Slack and Teams endpoints (core.webhook_bodies): what arrives at a real local receiver that checks the
vendors' documented rules, and passes Slack's own types and Microsoft's Adaptive Cards parser
(tests/core/chat_receivers.py). Routing is the same as for any endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import transaction
from django.test import override_settings

from core.models import Delivery, WebhookEndpoint
from core.notifications import DeliveryFailed, delivery_attempt, notification_send
from core.webhook_bodies import (
    SLACK_SECTION_LIMIT,
    Format,
    Notice,
    slack_body,
    standard_body,
    teams_body,
    teams_escape,
)
from tests.conftest import wait_for
from tests.core.chat_receivers import (
    ChatReceiver,
    markdown_rendered,
    slack_problems,
    teams_problems,
    vendor_problems,
)

SITE = "https://tracker.example.com"
# Words a notice may carry that Slack would otherwise read as a mention, a link or an entity.
TRICKY = "Gate <!channel> & <https://evil.example|click> passed > 3 &amp; <@U123>"


@pytest.fixture
def chat():
    receiver = ChatReceiver()
    yield receiver
    receiver.close()


def hook(url: str, fmt: str, **fields) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(name=fmt, url=url, secret="whsec_eA==", format=fmt, **fields)


def send_and_deliver(**fields) -> list[Delivery]:
    """notification_send, then each of its webhook deliveries attempted once, here."""
    notification = notification_send(
        **{"event": "gate.decided", "subject": "s", "body": "b", "link": "/programs/gates/7/", **fields}
    )
    deliveries = list(notification.deliveries.filter(channel=Delivery.Channel.WEBHOOK))
    for delivery in deliveries:
        delivery_attempt(delivery_id=str(delivery.id))
    return deliveries


@override_settings(SITE_URL=SITE)
def test_a_slack_endpoint_gets_a_message_slack_accepts_with_everything_escaped(db, chat):
    hook(chat.slack_url, Format.SLACK)
    send_and_deliver(subject=TRICKY, body="Decided by <lead> & co.", program_key="alpha")

    [arrival] = chat.arrivals
    assert arrival.problems == []
    body = arrival.body
    assert body["text"] == (
        "Gate &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt; passed &gt; 3 &amp;amp; &lt;@U123&gt;"
    )
    section, context = body["blocks"]
    assert section["text"]["text"] == (
        f"*{body['text']}*\nDecided by &lt;lead&gt; &amp; co.\n<{SITE}/programs/gates/7/|Open in Rebuild Tracker>"
    )
    assert context["elements"][0]["text"] == "Program alpha · Gates · gate.decided"
    # No Standard Webhooks headers: Slack checks none, its URL is the credential.
    assert not {"webhook-id", "webhook-signature", "webhook-timestamp"} & {k.lower() for k in arrival.headers}
    assert vendor_problems(slack=[body]) == {"slack": [[]], "teams": []}


@override_settings(SITE_URL=SITE)
def test_a_teams_endpoint_gets_an_adaptive_card_the_parser_accepts(db, chat):
    hook(chat.teams_url, Format.TEAMS)
    send_and_deliver(
        subject="Exception for 'nccl' submitted", body="Why: hotfix.", event="exception.submitted"
    )

    [arrival] = chat.arrivals
    assert arrival.problems == []
    card = arrival.body["attachments"][0]["content"]
    assert [block["text"] for block in card["body"]] == [
        "Exception for 'nccl' submitted",
        "Why: hotfix.",
        "No program · Freeze exceptions · exception.submitted",
    ]
    assert card["actions"] == [
        {"type": "Action.OpenUrl", "title": "Open in Rebuild Tracker", "url": f"{SITE}/programs/gates/7/"}
    ]
    assert "webhook-signature" not in {k.lower() for k in arrival.headers}
    assert vendor_problems(teams=[arrival.body]) == {"slack": [], "teams": [[]]}


# Words a notice may carry that a TextBlock's Markdown would otherwise format, link or drop.
MARKDOWN_TRICKY = [
    "Exception for 'cuda_graphs_v2' submitted: *urgent* [details](https://evil.example) `x` ~~y~~",
    "Metric step_time_p50 & &amp; <https://evil.example> \\ back\n- not a list\n2. nor this\n+ nor this",
]


def test_a_teams_card_shows_every_character_as_written_in_markdown():
    """What Teams shows is the TextBlock's Markdown rendered: markdown-it (the processor Microsoft's
    Adaptive Cards SDK documents) renders each escaped text as one paragraph of exactly the words sent,
    no emphasis, link, list or entity; unescaped, the same words lose their underscores and gain a link."""
    import html

    texts = [teams_escape(text) for text in MARKDOWN_TRICKY]
    for sent, rendered in zip(MARKDOWN_TRICKY, markdown_rendered(texts), strict=True):
        assert rendered.startswith("<p>") and rendered.endswith("</p>\n"), rendered
        inner = rendered.removeprefix("<p>").removesuffix("</p>\n")
        assert "<" not in inner, rendered  # no tag: no <em>, <a>, <code>, <li>
        assert html.unescape(inner) == sent
    unescaped = markdown_rendered(MARKDOWN_TRICKY)
    assert "<em>" in unescaped[0] and '<a href="https://evil.example">' in unescaped[0]
    assert "<ul>" in unescaped[1]
    card = teams_body(
        Notice(event="exception.submitted", subject=MARKDOWN_TRICKY[0], body=MARKDOWN_TRICKY[1])
    )
    assert [b["text"] for b in card["attachments"][0]["content"]["body"][:2]] == texts


def test_the_readmes_slack_example_is_what_is_sent():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("What Slack receives for a gate decision")[1].split("```json\n")[1].split("```")[0]
    notice = Notice(
        event="gate.decided",
        subject="Gate 'cutover exit' passed",
        body="Decided by lead.",
        link="https://tracker.example.com/programs/gates/7/",
        program_key="alpha",
    )
    assert json.loads(example) == slack_body(notice)


def test_a_long_body_is_cut_to_slacks_3000_characters_without_halving_an_entity(db):
    for filler in ("x", "&", "x&"):  # each shifts where the cut falls against the 5-character "&amp;"
        notice = Notice(event="gate.stale", subject="Stale", body=filler * 5000, link=f"{SITE}/g/1/")
        body = slack_body(notice)
        text = body["blocks"][0]["text"]["text"]
        assert len(text) <= SLACK_SECTION_LIMIT
        assert text.endswith(f"…\n<{SITE}/g/1/|Open in Rebuild Tracker>")
        assert slack_problems(body) == []
    long_teams = teams_body(Notice(event="gate.stale", subject="Stale", body="&" * 50_000))
    assert teams_problems(long_teams, len(json.dumps(long_teams))) == []
    assert vendor_problems(slack=[body], teams=[long_teams]) == {"slack": [[]], "teams": [[]]}


def test_a_notice_without_link_or_body_still_passes_both(db):
    bare = Notice(event="feed.stale", subject="Feed stale", body="")
    slack, teams = slack_body(bare), teams_body(bare)
    assert slack["blocks"][0]["text"]["text"] == "*Feed stale*"
    assert "actions" not in teams["attachments"][0]["content"]
    assert slack_problems(slack) == [] and teams_problems(teams, 0) == []
    assert vendor_problems(slack=[slack], teams=[teams]) == {"slack": [[]], "teams": [[]]}


def test_the_checks_refuse_the_bodies_slack_and_teams_reject(db, chat):
    """The receiver and the vendors' code find fault where the chat tools would: the standard body (what
    every endpoint got before, issue 30), a misspelt field, an unknown card element."""
    standard = standard_body(Notice(event="gate.ready", subject="s", body="b", link=f"{SITE}/g/1/"))
    assert "no `text` (Slack's notification fallback)" in slack_problems(standard)
    assert "`type` is not 'message'" in teams_problems(standard, 100)
    assert slack_problems({"text": "a <b>", "blocks": []}) == ["text: an unescaped < or > outside a link"]

    bad_slack = {"text": "t", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "txt": "t"}}]}
    bad_teams = teams_body(Notice(event="gate.ready", subject="s", body="b"))
    bad_teams["attachments"][0]["content"]["body"].append({"type": "TextBlok", "text": "t"})
    bad_teams["attachments"][0]["content"]["body"][0]["colour"] = "Good"
    found = vendor_problems(slack=[bad_slack], teams=[bad_teams])
    assert "'\"txt\"' does not exist in type 'MrkdwnElement'" in found["slack"][0][0]
    assert 'Unknown element type "TextBlok". Fallback will be used if present.' in found["teams"][0]
    assert "card.body[0].colour is not an Adaptive Card property" in found["teams"][0]

    # And the receiver answers as Slack does, so a delivery of a bad body fails and is retried.
    hook(chat.slack_url, Format.STANDARD)  # a Slack URL pasted, the format left at standard
    with pytest.raises(DeliveryFailed, match=r"127\.0\.0\.1:\d+/slack/.* answered 400"):
        send_and_deliver()
    assert chat.arrivals[0].problems


def test_a_failed_chat_delivery_names_the_host_not_the_secret_path(db, chat):
    endpoint = hook(chat.slack_url.replace("/slack/", "/nowhere/"), Format.SLACK)  # answered as Teams: 400
    with pytest.raises(DeliveryFailed):
        send_and_deliver()
    error = Delivery.objects.get(endpoint=endpoint).last_error
    assert error == "127.0.0.1 answered 400" and "s3cr3t" not in error


def test_a_slack_endpoint_scoped_to_a_program_hears_only_that_program(db, chat):
    alpha = hook(chat.slack_url, Format.SLACK, program_key="alpha")
    assert send_and_deliver(program_key="beta") == []
    assert send_and_deliver(program_key="") == []  # about no program: endpoints for every program only
    [delivery] = send_and_deliver(program_key="alpha", subject="Alpha gate")
    assert delivery.endpoint == alpha
    assert [arrival.body["text"] for arrival in chat.arrivals] == ["Alpha gate"]
    assert Delivery.objects.get(id=delivery.id).status == Delivery.Status.DELIVERED


@pytest.mark.services
@override_settings(SITE_URL=SITE)
def test_the_real_worker_delivers_a_teams_card(celery_worker_real, chat):
    hook(chat.teams_url, Format.TEAMS, events=["gates"])
    with transaction.atomic():
        notification = notification_send(
            event="gate.decided", subject="Gate 'cutover exit' passed", body="Decided.", link="/g/7/"
        )
    delivery = Delivery.objects.get(notification=notification)
    assert wait_for(lambda: Delivery.objects.get(id=delivery.id).status == Delivery.Status.DELIVERED)
    [arrival] = chat.arrivals
    assert arrival.problems == [] and arrival.path.startswith("/teams/workflows/abc123/")
    assert arrival.body["attachments"][0]["content"]["actions"][0]["url"] == f"{SITE}/g/7/"
