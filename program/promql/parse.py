"""The PromQL subset the query API answers (docs/architecture.md, "Grafana's query API"), read by hand.

One instant vector selector, `rebuild_tracker_observation{label="value", label=~"a|b", …}`, or
arithmetic on number literals alone (Grafana's "Save & test" sends `1+1`). Anything else — a function,
an aggregation, a range `[5m]`, `offset`, an operator between selectors, `!=`, a regular expression
other than an alternation of literal values — is refused with a PromQLError naming what is not
supported, which the API answers as Prometheus' `bad_data`.

Hand-written rather than a PromQL parser library: the subset is a selector and a list of matchers, and
the only Python parser (a Rust extension) would be a compiled dependency for a page of code. Imports
no Django."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

METRIC_NAME = "rebuild_tracker_observation"

_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATOR = re.compile(r"=~|!~|!=|=")
# A regular expression's metacharacters: outside a backslash escape, they make it more than a literal.
_METACHARACTERS = frozenset(".*+?^$()[]{}|\\")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "`": "`"}
# A scalar expression: numbers, + - * / % and parentheses only (checked before Python's parser sees it).
_SCALAR = re.compile(r"[0-9.eE+\-*/%() \t\n]+")
# A scalar expression's length, at most: Grafana's "Save & test" sends `1+1`, and a bound on the text
# bounds the depth of its tree, which `_evaluate` walks recursively (1,200 terms would pass Python's
# recursion limit). 200 is also the parser's own limit on nested parentheses.
MAX_SCALAR_LENGTH = 200
_SCALAR_OPERATORS: dict[type[ast.AST], Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: math.fmod,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
AGGREGATIONS = frozenset(
    [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "limitk",
        "limit_ratio",
    ]
)
SUPPORTED = f'one selector, {METRIC_NAME}{{label="value", label=~"a|b"}}, or arithmetic on numbers'


def unsupported(what: str) -> str:
    return f"{what} is not supported: this API answers {SUPPORTED}"


class PromQLError(ValueError):
    """A query outside the subset or not PromQL at all; the message says which and where."""


@dataclass(frozen=True)
class Matcher:
    """`label` = one value (`values` holds it), or `label` =~ an alternation of literals, or =~ `.*`
    (anything, `wildcard`, `nonempty` False) / `.+` (anything but the empty value)."""

    label: str
    values: frozenset[str]
    wildcard: bool = False
    nonempty: bool = False

    def matches(self, value: str) -> bool:
        """As Prometheus matches: a series without the label has it as the empty string."""
        if self.wildcard:
            return bool(value) or not self.nonempty
        return value in self.values


@dataclass(frozen=True)
class Selector:
    matchers: tuple[Matcher, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(m.matches(labels.get(m.label, "")) for m in self.matchers)

    def literal_values(self, label: str) -> frozenset[str] | None:
        """The values every matcher of `label` allows, or None where no matcher lists them (absent or a
        wildcard): what a reader may fetch instead of everything."""
        allowed: frozenset[str] | None = None
        for matcher in self.matchers:
            if matcher.label == label and not matcher.wildcard:
                allowed = matcher.values if allowed is None else allowed & matcher.values
        return allowed


@dataclass(frozen=True)
class Scalar:
    value: float


def parse_query(text: str, *, labels: frozenset[str]) -> Selector | Scalar:
    """A query of the subset: a selector over these `labels` (and __name__), or a scalar."""
    stripped = text.strip()
    if not stripped:
        raise PromQLError("empty query")
    if _SCALAR.fullmatch(stripped) and any(c.isdigit() for c in stripped):
        return Scalar(_scalar(stripped))
    return parse_selector(stripped, labels=labels)


def parse_selector(text: str, *, labels: frozenset[str]) -> Selector:
    """A series selector (a `query` or a `match[]`) over these `labels` (and __name__)."""
    reader = _Reader(text.strip())
    matchers: list[Matcher] = []
    name = reader.take(_NAME)
    if name is not None:
        grouped = name in AGGREGATIONS and re.match(r"\s*(by|without)\b", reader.rest())
        if reader.peek() == "(" or grouped:
            kind = "aggregation" if name in AGGREGATIONS else "function"
            raise PromQLError(unsupported(f"{kind} {name}()"))
        if name in ("by", "without", "offset", "bool", "on", "ignoring"):
            raise PromQLError(unsupported(f"'{name}'"))
        matchers.append(Matcher("__name__", frozenset({name})))
    if reader.peek() == "{":
        reader.skip(1)
        matchers.extend(_matchers(reader, labels))
    if not matchers:
        raise PromQLError(f'{reader.where()}: expected a selector such as {METRIC_NAME}{{metric="…"}}')
    rest = reader.rest().strip()
    if rest:
        raise PromQLError(unsupported(_what(rest)))
    if all(m.matches("") for m in matchers):
        raise PromQLError("vector selector must contain at least one non-empty matcher")
    names = [m for m in matchers if m.label == "__name__"]
    if any(METRIC_NAME not in m.values and not m.wildcard for m in names):
        raise PromQLError(f"unknown metric name: this API serves {METRIC_NAME} only")
    return Selector(tuple(matchers))


def _what(rest: str) -> str:
    """Names what follows a selector, for the refusal."""
    if rest.startswith("["):
        return f"a range selector {rest.split(']')[0]}]"
    word = re.match(r"[A-Za-z_]+", rest)
    if word:
        return f"'{word.group()}'"
    return f"'{rest[:20]}' after the selector (an operator between selectors, or more than one selector)"


def _matchers(reader: _Reader, labels: frozenset[str]) -> list[Matcher]:
    found: list[Matcher] = []
    while True:
        reader.spaces()
        if reader.peek() == "}":
            reader.skip(1)
            return found
        label = reader.take(_LABEL)
        if label is None:
            raise PromQLError(f"{reader.where()}: expected a label name or '}}'")
        if label != "__name__" and label not in labels:
            raise PromQLError(
                f"label '{label}' is not supported; the labels are: {', '.join(sorted(labels))}"
            )
        reader.spaces()
        op = reader.take(_OPERATOR)
        if op is None:
            raise PromQLError(f"{reader.where()}: expected =, !=, =~ or !~ after '{label}'")
        if op in ("!=", "!~"):
            raise PromQLError(unsupported(f"the matcher {op} (in {label}{op}…)"))
        reader.spaces()
        value = reader.string()
        found.append(_regex_matcher(label, value) if op == "=~" else Matcher(label, frozenset({value})))
        reader.spaces()
        if reader.peek() == ",":
            reader.skip(1)
        elif reader.peek() != "}":
            raise PromQLError(f"{reader.where()}: expected ',' or '}}' after a matcher")


def _regex_matcher(label: str, pattern: str) -> Matcher:
    """=~ with an alternation of literal values, as Grafana writes a multi-value variable: `a|b`,
    `(a|b)`, values regex-escaped (`a\\.b`); or `.*` / `.+`, as its "All" option may be."""
    if pattern in (".*", ".+"):
        return Matcher(label, frozenset(), wildcard=True, nonempty=pattern == ".+")
    body = pattern[1:-1] if pattern.startswith("(") and pattern.endswith(")") else pattern
    values, current, escaped = [], "", False
    for char in body:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            escaped = True
        elif char == "|":
            values.append(current)
            current = ""
        elif char in _METACHARACTERS:
            raise PromQLError(
                unsupported(
                    f'the regular expression {label}=~"{pattern}" (only literal values a|b, .* and .+)'
                )
            )
        else:
            current += char
    if escaped:
        raise PromQLError(f'the regular expression {label}=~"{pattern}" ends in a lone backslash')
    values.append(current)
    return Matcher(label, frozenset(values))


def _scalar(text: str) -> float:
    if len(text) > MAX_SCALAR_LENGTH:
        raise PromQLError(
            f"a scalar expression of {len(text)} characters: at most {MAX_SCALAR_LENGTH} are read"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise PromQLError(f"cannot parse '{text}' as arithmetic on numbers") from None
    return _evaluate(tree.body, text)


def _evaluate(node: ast.AST, text: str) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        try:
            value = float(node.value)
        except OverflowError:  # an integer literal past a float's range (over 308 digits)
            value = math.inf
        if math.isinf(value):  # `1e310`: Prometheus' parser refuses a number out of a float's range
            literal = ast.get_source_segment(text, node)
            raise PromQLError(f'error parsing number: parsing "{literal}": value out of range')
        return value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _SCALAR_OPERATORS:
        return _SCALAR_OPERATORS[type(node.op)](_evaluate(node.operand, text))
    if isinstance(node, ast.BinOp) and type(node.op) in _SCALAR_OPERATORS:
        left, right = _evaluate(node.left, text), _evaluate(node.right, text)
        if right == 0 and isinstance(node.op, ast.Div | ast.Mod):  # PromQL's float division, as Go's
            return math.nan if left == 0 or isinstance(node.op, ast.Mod) else math.copysign(math.inf, left)
        return _SCALAR_OPERATORS[type(node.op)](left, right)
    raise PromQLError("only + - * / % between numbers are supported in a scalar expression")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str:
        self.spaces()
        return self.text[self.at : self.at + 1]

    def skip(self, count: int) -> None:
        self.at += count

    def spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def take(self, pattern: re.Pattern[str]) -> str | None:
        found = pattern.match(self.text, self.at)
        if found is None:
            return None
        self.at = found.end()
        return found.group()

    def rest(self) -> str:
        return self.text[self.at :]

    def where(self) -> str:
        return f"1:{self.at + 1}: parse error"

    def string(self) -> str:
        """A quoted string, "…", '…' or `…` (raw), with Go's common escapes."""
        quote = self.text[self.at : self.at + 1]
        if quote not in ('"', "'", "`"):
            raise PromQLError(f"{self.where()}: expected a quoted string")
        self.at += 1
        value = ""
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if char == quote:
                return value
            if char == "\\" and quote != "`":
                escape = self.text[self.at : self.at + 1]
                if escape not in _ESCAPES:
                    raise PromQLError(f"{self.where()}: unknown escape sequence '\\{escape}'")
                value += _ESCAPES[escape]
                self.at += 1
            else:
                value += char
        raise PromQLError(f"{self.where()}: unterminated quoted string")
