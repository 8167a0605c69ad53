"""Helpers for the single sign-on tests."""

from __future__ import annotations


def says(response, text: str) -> bool:
    """Whether the page shows `text` (as the template escapes it: "provider's" is "provider&#x27;s")."""
    from django.utils.html import escape

    return escape(text) in response.content.decode()
