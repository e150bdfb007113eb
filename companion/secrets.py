"""Finding secrets and personal data in text, and replacing each with `[REDACTED:<kind>]`.

One set of rules for everything that copies a vault's text somewhere else: the pipeline's `redact` processor (logs,
archives, sinks, derived notes and their names) and the indexer (the lexical index and the embedded chunks), so a
secret the one removes is never kept by the other. The rules are precompiled, and each kind has a quick check that
runs first (a substring, or two linear scans): most texts hold none of the kinds, and `in` runs at memory speed where
a pattern scans at tens of MB/s.

Besides the well-known key formats (JSON web tokens and IBANs among them, an IBAN only when its mod-97 check holds),
a secret is recognised by what introduces it: an AWS secret access key after its variable name or beside its key id,
a value after "password is", "PIN:", "api key =", "mot de passe :" and the like, and the value of a field named like
a secret (`{"password": ...}`). Only the value is replaced (the next word, or a quoted phrase), and only when the
word is joined to it by "is", ":" or "=", so "the password policy requires..." and "the token is expired" stay as
written.

A text holding JSON escapes (`\\u002d` for "-", `\\/` for "/", as a JSON writer may spell any character) is read a
second time with them decoded, and the whole escaped span of a secret found so is replaced. `redact_output` applies
the same rules to whatever an agent is shown (search results, notes, contexts).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")

RULES_VERSION = "redact-v3"
"""The version of the built-in rules: a change to them (a new kind) redacts history notes and the index again."""

SECRET_TAG = "[REDACTED:secret]"
"""What replaces a value introduced as a secret (in words, or as the value of a field named like one)."""


@dataclass(frozen=True)
class SecretKind:
    """One way of finding a secret: its kind, its pattern and a quick check that must hold for the pattern to match."""

    name: str
    """The kind, as written in `[REDACTED:<kind>]`."""
    pattern: re.Pattern[str]
    """What it matches; when the pattern has a `secret` group, only that group is replaced."""
    hint: Callable[[str, str], bool]
    """Whether a text (given as written and lower-cased) may hold a match: False means it certainly holds none."""


def luhn(digits: str) -> bool:
    """Whether a run of digits passes the Luhn check every payment card number passes."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


# Where a key or a word may start: after no letter or digit (or at a word boundary), or right after an escape of a
# JSON or YAML string, as in a session note's `user_msg: "...\nPassword: ..."`.
_ESCAPE = r"(?<=\\[nrt])"
_START = rf"(?:(?<![A-Za-z0-9])|{_ESCAPE})"
_BOUNDARY = rf"(?:\b|{_ESCAPE})"

# An AWS secret access key: 40 characters of base64. Beside a key id, a token of that length also has to mix digits
# (or + and /) with both letter cases, so a 40-digit hex hash near a key id stays.
_AWS_ID = _START + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"
_AWS_SECRET = (
    r"(?:(?<![A-Za-z0-9+/=])|" + _ESCAPE + r")"
    r"(?=[A-Za-z0-9+/=]{0,39}[0-9+/])(?=[A-Za-z0-9+/=]{0,39}[a-z])(?=[A-Za-z0-9+/=]{0,39}[A-Z])"
    r"[A-Za-z0-9+/=]{40}(?![A-Za-z0-9+/=])"
)
_AWS_NEAR = r"[\s\S]{0,100}?"
# After its variable name; a JSON text may escape each slash as `\/`.
_AWS_NAMED = (
    r"(?i)" + _START + r"(?:aws[_\-]?secret(?:[_\-]?access)?(?:[_\-]?key)?|secret[_\-]?access[_\-]?key)"
    r"(?![A-Za-z0-9])[\"'\\]{0,2}\s*[:=]\s*\\?[\"']?(?P<secret>(?:[A-Za-z0-9+=]|\\?/){40})(?![A-Za-z0-9+=]|\\?/)"
)

# The words that introduce a secret, in English and a few other languages, as prose ("the PIN is"), labels
# ("Password:") or variable names (`DB_PASSWORD=`, `"api_key": "..."`).
_WORDS = (
    r"pass(?:word|wd|code|phrase)|pin(?:[ _\-]?(?:code|number))?"
    r"|(?:aws[ _\-]?)?secret(?:[ _\-]?access)?(?:[ _\-]?key)?|api[ _\-]?key|token"
    r"|mot[ _\-]de[ _\-]passe|passwort|kennwort|contrase(?:ñ|n|\\u00f1)a|senha|wachtwoord"
    r"|zugangscode|geheimzahl|code[ _\-]d['’]acc(?:è|e|\\u00e8)s"
    r"|c(?:ó|o|\\u00f3)digo[ _\-]de[ _\-]acceso|clave[ _\-]de[ _\-]acceso"
)
# "the password for the guest wifi is ...": a few words naming what it is for.
_FOR = r"(?:\s+(?:for|to|of|on|für|para|pour|voor)(?:\s+[^\s:=\[\]]{1,30}){1,3}?)?"
# Joined by "is", ":" or "=" (and their translations); a closing quote, `**` or `\` of markup may come first.
_JOIN = r"[\"'*_\\]{0,4}(?:\s*[:=]|\s+(?:is|was|est|ist|es|era|war|é|était)(?!\w)(?:\s*:)?)"
_ADVERB = r"[*_]{0,3}\s*(?:(?:now|still|currently|actually|just|simply|literally|set\s+to|changed\s+to)\s+)*[*_]{0,3}"
# The value: a quoted phrase, or the next word without the punctuation that ends a sentence. Not a placeholder
# (`${VAR}`, `<token>`, `{{ x }}`) nor what an earlier kind already replaced. In the text of a JSON or YAML string
# (a session note's `user_msg`), `\u00fc` and `\/` are part of the value and any other escape (`\n`) ends it.
_ESCAPED = r"\\u[0-9a-fA-F]{4}|\\/"
_VALUE = (
    r"\\?(?P<open>[\"'“‘`«])?(?![\[${%<(])"
    rf"(?P<secret>(?(open)(?:[^\"'”’`»\n\\]|{_ESCAPED}){{4,200}}?|(?:[^\s\"'”’`»<>\\]|{_ESCAPED}){{4,200}}?))"
    r"(?(open)\\?[\"'”’`»]|(?=[.,;:!?)\]}>*_]*(?:[\s\"'”’`»<\\]|$)))"
)
# The lookahead on the first letter is for speed: it rejects most positions before the boundary checks run.
_WORDED = rf"(?i)(?=[pstakmcwzg]){_START}(?:{_WORDS})(?![A-Za-z0-9]){_FOR}{_JOIN}{_ADVERB}{_VALUE}"
# "PIN 4821", "pin code 4821": a PIN needs no "is" when what follows is all digits.
_PIN = (
    r"(?i)(?=p)"
    + _START
    + r"(?:pin|passcode)(?:[ _\-]?(?:code|number))?[*_]{0,3}\s+[*_]{0,3}(?P<secret>\d{4,12})(?!\d)"
)
# Their quick checks, on the lower-cased text: a word (or a part every spelling of it holds), and after it a joiner
# ("is", ":") or, for a PIN, four digits. Two linear scans, where the patterns test every position of the text.
_WORD_FIRST = re.compile(r"pass|pin|secret|token|key|kennwort|contrase|senha|wachtwoord|zugangscode|geheimzahl|acc")
_JOINER = re.compile(r"[:=]|\s(?:is|was|est|ist|es|era|war|é|était)(?!\w)")
_PIN_FIRST = re.compile(r"pin|passcode")
_FOUR_DIGITS = re.compile(r"\d{4}")


def _followed(lower: str, first: re.Pattern[str], then: re.Pattern[str]) -> bool:
    found = first.search(lower)
    return found is not None and then.search(lower, found.start()) is not None


# What follows "password is" and is no password: "the token is expired", "the API key is in the vault".
_NOT_VALUE_WORDS = (
    "a an the this that these those it its it's here there what which who how where when why one two some any "
    "not no none nil null empty blank unset undefined missing required optional needed necessary mandatory "
    "set same different wrong right correct incorrect invalid valid old new weak strong long short random unique "
    "too very so also still now just only already always never often usually probably likely really "
    "in on at of for to from by with without into as and or but if then than out over up down off back "
    "case secret private public hidden visible shown known unknown safe unsafe secure insecure sensitive obvious "
    "true false yes ok okay fine good bad important confidential critical temporary active inactive available "
    "your my our his her their mine yours being been be "
    "le la les un une est pas requis obligatoire der die das ein eine nicht erforderlich el los las una es obligatorio"
)
_NOT_VALUES = frozenset(_NOT_VALUE_WORDS.split())
_NOT_VALUE_ENDINGS = ("ed", "ing", "ly", "able", "ible", "ive", "ous", "ful", "less")


def _not_a_value(text: str) -> bool:
    word = text.strip("*_ ").lower()
    return (
        word in _NOT_VALUES or word.startswith("[redacted:") or (word.isalpha() and word.endswith(_NOT_VALUE_ENDINGS))
    )


# Prose about a secret rather than one: "the vault password is separate from your account password", "a senha ...
# não é suportada". A negation before the value, or a plain word that the sentence goes on from, is no value.
_NEGATION = re.compile(r"(?i)(?<!\w)(?:not|n't|never|no|não|nao|nicht|kein|pas|non|niet|nunca|jamais)(?!\w)")
_GOES_ON_WORDS = (
    "from than to for by in on with of as at about between into because since until unless while "
    "de do da des du von vom zu als que para por con sin en van voor met"
)
_GOES_ON = frozenset(_GOES_ON_WORDS.split())
_NEXT_WORD = re.compile(r"[ \t]+([^\W\d_]+)")


def _prose(match: re.Match[str], start: int, end: int) -> bool:
    """Whether a value introduced in words reads as prose: a negation between the word and the value, or a value of
    plain lower-case letters that the sentence goes on from ("separate from", "shared with")."""
    if _NEGATION.search(match.string, match.start(), start):
        return True
    value = match.string[start:end]
    if not (value.isalpha() and value.islower()) or (start > 0 and match.string[start - 1] in "\"'`“‘«"):
        return False  # a quoted value, or one with digits, symbols or capitals, is meant as a value
    following = _NEXT_WORD.match(match.string, end)
    return following is not None and following.group(1).lower() in _GOES_ON


_DIGIT = re.compile(r"\d")


def _has_digit(text: str, lower: str) -> bool:
    return _DIGIT.search(text) is not None


# An IBAN: a country, two check digits and up to 30 letters or digits, written whole or in groups of four. What
# passes the mod-97 check is one (a run of capitals and digits of that shape passes by chance once in 97).
_IBAN_START = re.compile(r"[A-Z]{2}\d{2}")
_IBAN = _START + r"[A-Z]{2}\d{2}(?:(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?|[A-Z0-9]{11,30})(?![A-Za-z0-9])"


def iban_valid(text: str) -> bool:
    """Whether `text` (spaces aside) is an IBAN: 15 to 34 capitals and digits whose mod-97 check holds."""
    code = text.replace(" ", "")
    if not 15 <= len(code) <= 34 or not code.isalnum() or not code.isascii():
        return False
    moved = code[4:] + code[:4]
    return int("".join(str(int(char, 36)) for char in moved)) % 97 == 1


def _iban_end(whole: str) -> int:
    """How much of a match is an IBAN (0: none): the whole, or without the last groups when they were words of four
    capitals written after it ("BE68 5390 0754 7034 SENT")."""
    end = len(whole)
    while end >= 15:
        if iban_valid(whole[:end]):
            return end
        cut = whole.rfind(" ", 0, end)
        if cut < 0:
            return 0
        end = cut
    return 0


_KIND_TABLE: tuple[tuple[str, str, Callable[[str, str], bool]], ...] = (
    (
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
        lambda t, low: "-----BEGIN" in t,
    ),
    # A JSON web token: three base64url parts (a JWE has five), the first an encoded `{"`. Before the AWS kinds,
    # whose 40-character secret could be a run of one of its parts.
    (
        "jwt",
        _START + r"eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+){0,2}",
        lambda t, low: "eyJ" in t,
    ),
    # Before `aws_key`, which would take away the key id the secret is found beside.
    ("aws_secret_key", _AWS_NAMED, lambda t, low: "secret" in low),
    ("aws_secret_key", f"{_AWS_ID}{_AWS_NEAR}(?P<secret>{_AWS_SECRET})", lambda t, low: "AKIA" in t or "ASIA" in t),
    ("aws_secret_key", f"(?P<secret>{_AWS_SECRET})(?={_AWS_NEAR}{_AWS_ID})", lambda t, low: "AKIA" in t or "ASIA" in t),
    # Only the password of `scheme://user:password@host`; the rest of the URL stays readable.
    (
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@",
        lambda t, low: "://" in t and "@" in t,
    ),
    ("anthropic_key", _START + r"sk-ant-[A-Za-z0-9_\-]{20,}", lambda t, low: "sk-ant-" in t),
    ("openai_key", _START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", lambda t, low: "sk-" in t),
    ("aws_key", _BOUNDARY + r"(?:AKIA|ASIA)[0-9A-Z]{16}\b", lambda t, low: "AKIA" in t or "ASIA" in t),
    (
        "github_token",
        _BOUNDARY + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
        lambda t, low: "github_pat_" in t or any(f"gh{c}_" in t for c in "pousr"),
    ),
    ("slack_token", _BOUNDARY + r"xox[bpars]-[A-Za-z0-9\-]{10,}", lambda t, low: "xox" in t),
    ("google_key", _BOUNDARY + r"AIza[0-9A-Za-z_\-]{35}", lambda t, low: "AIza" in t),
    (
        "bearer_token",
        r"(?i)" + _BOUNDARY + r"bearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)",
        lambda t, low: "bearer" in low,
    ),
    # Before the digits of card and phone numbers, which an IBAN's could pass for.
    ("iban", _IBAN, lambda t, low: _IBAN_START.search(t) is not None),
    # After the key formats, so "api key is sk-..." keeps the more telling kind.
    ("secret", _WORDED, lambda t, low: _followed(low, _WORD_FIRST, _JOINER)),
    ("secret", _PIN, lambda t, low: _followed(low, _PIN_FIRST, _FOUR_DIGITS)),
    (
        "email",
        r"(?:\b(?<!\\)|" + _ESCAPE + r")[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b",
        lambda t, low: "@" in t,
    ),
    ("card_number", r"(?=\d)(?<![\d\-])\d(?:[ \-]?\d){12,18}(?![\d\-])", _has_digit),
    # Phone numbers need a separator, so plain numbers (counts, ids, years) stay; a group of a longer run of
    # digit groups (a card number that failed its Luhn check) is not a phone number either, nor is a decimal
    # (a coordinate such as 135.7556075).
    (
        "phone",
        r"(?=[\d+(])(?:(?<![\w+])|"
        + _ESCAPE
        + r")(?<!\d[\s.\-])(?!\d{1,4}\.\d{5})(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{2,4}\)[\s.\-]?|\d{2,4}[\s.\-])"
        r"\d{3,4}[\s.\-]?\d{3,4}(?![\w])(?![\s.\-]?\d)",
        _has_digit,
    ),
)

KINDS: tuple[SecretKind, ...] = tuple(SecretKind(name, re.compile(text), hint) for name, text, hint in _KIND_TABLE)
"""The built-in kinds, in the order they apply (the specific ones before the ones that could match inside them)."""

_SECRET_FIELD_NAMES = (
    "password passwd passphrase passcode pin pincode secret clientsecret apisecret secretkey apikey accesstoken "
    "authtoken refreshtoken apitoken idtoken bearertoken sessiontoken privatekey secretaccesskey awssecretaccesskey "
    "awssecretkey awssecret motdepasse passwort kennwort contraseña contrasena senha wachtwoord zugangscode geheimzahl"
)
_SECRET_FIELDS = frozenset(_SECRET_FIELD_NAMES.split())
"""Field names (lower case, without `_`, `-` and spaces) whose values are secrets."""


def names_secret(key: str) -> bool:
    """Whether a field of this name holds a secret (`password`, `api_key`, `aws_secret_access_key`, ...)."""
    return key.lower().replace("_", "").replace("-", "").replace(" ", "") in _SECRET_FIELDS


def _span(match: re.Match[str], kind: str) -> tuple[int, int] | None:
    """What of a match to replace (its `secret` group, or the whole), in the matched text; None to keep it."""
    whole = match.group(0)
    if kind == "card_number" and not luhn(re.sub(r"\D", "", whole)):
        return None
    if kind == "iban":
        end = _iban_end(whole)
        return (match.start(), match.start() + end) if end else None
    has_group = "secret" in match.re.groupindex and match.group("secret") is not None
    start, end = match.span("secret") if has_group else match.span()
    if kind == "secret" and (_not_a_value(match.string[start:end]) or _prose(match, start, end)):
        return None
    return start, end


def _replacement(match: re.Match[str], kind: str, keep_lines: bool = False) -> str:
    span = _span(match, kind)
    whole = match.group(0)
    if span is None:
        return whole
    start, end = span
    # The indexer keeps a note's lines where they are, so the line numbers of its chunks still point into the file.
    tag = f"[REDACTED:{kind}]" + ("\n" * match.string.count("\n", start, end) if keep_lines else "")
    offset = match.start()
    return whole[: start - offset] + tag + whole[end - offset :]


_Rule = tuple[str, re.Pattern[str], Callable[[str, str], bool]]
_BUILT_IN: tuple[_Rule, ...] = tuple((kind.name, kind.pattern, kind.hint) for kind in KINDS)


def _rules(patterns: tuple[re.Pattern[str], ...]) -> tuple[_Rule, ...]:
    return _BUILT_IN + tuple(("pattern", extra, _always) for extra in patterns) if patterns else _BUILT_IN


def _always(text: str, lower: str) -> bool:
    return True


def redact_text(value: str, patterns: tuple[re.Pattern[str], ...] = (), *, keep_lines: bool = False) -> str:
    """`value` with every built-in kind, then every one of `patterns` (as `[REDACTED:pattern]`), replaced; with
    `keep_lines` a secret spanning lines leaves its line breaks behind its tag. A secret spelled with JSON escapes
    (`\\u002d`, `\\/`) is found with them decoded, and its whole escaped span replaced."""
    # Lower-cased once: a tag never makes a match of a later kind, so the checks may all read the original text.
    lower = value.lower()
    for name, pattern, hint in _rules(patterns):
        if hint(value, lower):
            value = pattern.sub(functools.partial(_replacement, kind=name, keep_lines=keep_lines), value)
    if "\\u" in value or "\\/" in value:
        value = _redact_escaped(value, patterns, keep_lines)
    return value


# A JSON escape that may spell part of a secret; an escaped backslash is matched only so that the `u0041` after it
# is not taken for an escape (`\\\\u0041` is the text `\\u0041`).
_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|/|\\)")


@dataclass(frozen=True)
class _Decoded:
    """A text with its JSON escapes decoded, and where each decoded escape stands in the text."""

    text: str
    at: list[int]
    """The decoded text's positions of the escapes, in order."""
    source: list[tuple[int, int]]
    """Each escape's span in the text."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text that the decoded text's `start:end` was decoded from."""
        return self._position(start)[0], self._position(end - 1)[1]

    def _position(self, index: int) -> tuple[int, int]:
        found = bisect.bisect_left(self.at, index)
        if found < len(self.at) and self.at[found] == index:
            return self.source[found]
        if not found:
            return index, index + 1
        # A character after the escape before it: as far past that escape's end as it is past the escape.
        before = self.source[found - 1][1] + index - self.at[found - 1] - 1
        return before, before + 1


def _decode(text: str) -> _Decoded | None:
    pieces: list[str] = []
    at: list[int] = []
    source: list[tuple[int, int]] = []
    last = size = 0
    for match in _JSON_ESCAPE.finditer(text):
        if match.group(0) == "\\\\":
            continue
        pieces.append(text[last : match.start()])
        size += match.start() - last
        pieces.append(chr(int(match.group(1), 16)) if match.group(1) else "/")
        at.append(size)
        source.append(match.span())
        size += 1
        last = match.end()
    if not at:
        return None
    pieces.append(text[last:])
    return _Decoded("".join(pieces), at, source)


def _redact_escaped(value: str, patterns: tuple[re.Pattern[str], ...], keep_lines: bool) -> str:
    """`value` with the secrets its JSON escapes hide replaced: the rules run over the decoded text, which keeps, for
    each of its characters, the decoded position it came from (a tag's characters: the tag's number, negative), so
    each tag left at the end names the decoded span it replaced, and that span the text's."""
    decoded = _decode(value)
    if decoded is None:
        return value
    text, lower = decoded.text, decoded.text.lower()
    origin = list(range(len(text)))
    spans: list[tuple[int, int, str]] = []  # each tag's decoded span and kind, by its number
    for name, pattern, hint in _rules(patterns):
        if not hint(text, lower):
            continue
        parts: list[str] = []
        origins: list[int] = []
        done = 0
        for match in pattern.finditer(text):
            span = _span(match, name)
            if span is None:
                continue
            start, end = span
            # A match that reaches into an earlier tag takes the whole tag in.
            while start > done and origin[start - 1] < 0 and origin[start - 1] == origin[start]:
                start -= 1
            while end < len(text) and origin[end] < 0 and origin[end] == origin[end - 1]:
                end += 1
            start = max(start, done)
            if start >= end:  # all of it inside a tag this pass already widened to
                continue
            covered = [spans[-o - 1][:2] if o < 0 else (o, o + 1) for o in origin[start:end]]
            spans.append((min(s for s, _ in covered), max(e for _, e in covered), name))
            tag = f"[REDACTED:{name}]"
            parts += [text[done:start], tag]
            origins += origin[done:start] + [-len(spans)] * len(tag)
            done = end
        if parts:
            text = "".join([*parts, text[done:]])
            origin = origins + origin[done:]
    out: list[str] = []
    last = 0
    for number in dict.fromkeys(o for o in origin if o < 0):
        first, after, name = spans[-number - 1]
        start, end = decoded.span(first, after)
        breaks = "\n" * value.count("\n", start, end) if keep_lines else ""
        out += [value[last:start], f"[REDACTED:{name}]{breaks}"]
        last = end
    return "".join([*out, value[last:]]) if out else value


def redact_value(value: Any, text: Callable[[str], str]) -> Any:
    """Any JSON value with every string in it (recursively, keys excepted) passed through `text`, and the value of a
    field named like a secret (see `names_secret`) replaced whole."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list):
        return [redact_value(item, text) for item in value]
    if isinstance(value, dict):
        return {key: redact_field(key, item, text) for key, item in value.items()}
    return value


def redact_field(key: str, value: Any, text: Callable[[str], str]) -> Any:
    """The value of the field `key`, redacted (see `redact_value`)."""
    secret_string = isinstance(value, str) and value.strip() and not value.startswith("[REDACTED:")
    secret_number = isinstance(value, int) and not isinstance(value, bool)
    if (secret_string or secret_number) and isinstance(key, str) and names_secret(key):
        return SECRET_TAG
    return redact_value(value, text)


def redact_output(value: T) -> T:
    """What an agent is shown, redacted: every string in it (in lists, tuples, dicts and frozen dataclasses, keys
    excepted) passed through `redact_text`, and the value of a field named like a secret replaced whole."""
    return cast(T, _redact_any(value))


def _redact_any(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, tuple):
        return tuple(_redact_any(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _redact_any(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, list):
        return [_redact_any(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_field(key, item, redact_text) for key, item in value.items()}
    return value
