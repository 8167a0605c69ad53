"""DRF's JSON answers, written by orjson when the answer holds nothing but JSON's own types.

Writing a page of 50 observations with DRF's JSONRenderer (the standard library's encoder) took about a
tenth of the observations list's worker time; orjson writes the same page in a twentieth of that. The
answer stays DRF's: compact separators, UTF-8, U+2028 and U+2029 escaped. orjson is told to hand back
datetimes, dataclasses and subclasses of str, int, dict and list (lazy translations, a serializer's
ReturnDict) instead of writing them its own way; with no `default` to take them it refuses, and DRF's
renderer writes that answer, as it does one asked for indented. Two differences remain: a float in
exponent form may be written otherwise (0.00001, where the standard library writes 1e-05), the same
number to every JSON reader; and a NaN or infinity, which DRF's renderer refuses (a 500), is written
as null. Neither reaches an answer today: stored values are finite (a check constraint), and the
statistics write None where they have no number.
"""

from __future__ import annotations

from typing import Any, cast

import orjson
from rest_framework.renderers import JSONRenderer

PLAIN_ONLY = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# What DRF's renderer escapes, since they end a line in JavaScript source.
LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


class FastJSONRenderer(JSONRenderer):
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        # DRF's renderer writes bytes; its stub leaves the answer Any.
        if data is None or self.get_indent(accepted_media_type or "", renderer_context or {}):
            return cast(bytes, super().render(data, accepted_media_type, renderer_context))
        try:
            text = orjson.dumps(data, option=PLAIN_ONLY)
        except TypeError:  # a type only DRF's encoder knows
            return cast(bytes, super().render(data, accepted_media_type, renderer_context))
        for raw, escaped in LINE_SEPARATORS:
            if raw in text:
                text = text.replace(raw, escaped)
        return text


# Headers of an answer that carries a secret shown once (a new API token, a webhook signing secret): no
# cache on the way, nor the browser's, may keep it (RFC 9111, no-store).
SECRET_HEADERS = {"Cache-Control": "no-store"}
