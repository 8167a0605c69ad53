"""The ingest page's two forms: what to preview (a file or pasted text), and the confirmation that
carries exactly the previewed text back with the key that makes it a write-once."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django import forms
from django.conf import settings

# The formats the batch API reads, by the media type the ingest service is told.
FORMATS = {
    "csv": ("CSV (header row first)", "text/csv"),
    "ndjson": ("NDJSON (one JSON object per line)", "application/x-ndjson"),
    "json": ('JSON {"observations": [...]}', "application/json"),
}
EXTENSIONS = {".csv": "csv", ".ndjson": "ndjson", ".jsonl": "ndjson", ".json": "json"}
MSG_NOTHING = "Choose a file or paste rows to preview."
MSG_NOT_UTF8 = "The file is not UTF-8 text."
MSG_TOO_BIG = "The file is larger than {limit:,} bytes; split it, or push it from a script."


def content_type(fmt: str) -> str:
    return FORMATS[fmt][1]


def as_one_text(text: str) -> str:
    """Line ends as LF: a browser sends a form's text with CRLF, and the preview and the confirmation
    must hand the service the same body."""
    return text.replace("\r\n", "\n")


class IngestPreviewForm(forms.Form):
    file = forms.FileField(
        required=False, help_text="A .csv, .ndjson or .json file; its extension sets the format."
    )
    text = forms.CharField(
        required=False,
        label="Or paste rows",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
    )
    format = forms.ChoiceField(
        choices=[(name, label) for name, (label, _) in FORMATS.items()],
        initial="csv",
        help_text="Of the pasted rows (a file's extension wins).",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("file")
        if upload is not None:
            if upload.size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
                self.add_error("file", MSG_TOO_BIG.format(limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE))
                return data
            try:
                data["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("file", MSG_NOT_UTF8)
                return data
            data["format"] = EXTENSIONS.get(PurePath(upload.name or "").suffix.lower(), data.get("format"))
        if not (data.get("text") or "").strip():
            self.add_error("text", MSG_NOTHING)
        data["text"] = as_one_text(data.get("text") or "")
        return data


class IngestConfirmForm(forms.Form):
    """Hidden: the previewed text, its format, and the Idempotency-Key made at the preview."""

    text = forms.CharField(strip=False, widget=forms.HiddenInput)
    format = forms.ChoiceField(choices=[(name, name) for name in FORMATS], widget=forms.HiddenInput)
    key = forms.CharField(max_length=200, widget=forms.HiddenInput)

    def clean_text(self) -> str:
        return as_one_text(self.cleaned_data["text"])
