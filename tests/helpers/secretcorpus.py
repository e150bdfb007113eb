"""A planted-secrets corpus: every kind the redactor knows, as ordinary notes, session notes and a history log hold
them, plain and JSON-escaped; and how to look for any of them in files, names and what a command prints."""

from __future__ import annotations

import json
import lzma
from datetime import datetime, timedelta
from pathlib import Path

from companion.pipeline.history import serialize
from tests.helpers.files import write

# Session notes hold local time without a zone: the run's moment is local too.
NOW = datetime(2026, 3, 22, 12).astimezone()


def _card(prefix: str) -> str:
    """A card number that passes the Luhn check: `prefix` (15 digits) and its check digit, in groups of four."""
    total = sum(sum(divmod(int(d) * (2 if i % 2 == 0 else 1), 10)) for i, d in enumerate(reversed(prefix)))
    digits = prefix + str(-total % 10)
    return " ".join(digits[i : i + 4] for i in range(0, 16, 4))


PEM_BODY = "MIIEpQIBAAKCAQEAcorpusPrivateKeyBody0"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nQm9keUxpbmVUd28=\n-----END RSA PRIVATE KEY-----"
AWS_ID = "AKIA" + "Q7W3E9R2T5Y8U1I4"
AWS_ID_2 = "ASIA" + "M2N4B6V8C1X3Z5L7"
AWS_NAMED = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYq1w2E3r4T5"
AWS_BESIDE = "Zp4/Lq8+Rt2Vw6Xy0Bc3" + "Df5Gh7Jk9Mn1Qs4Tu8Wz"
CARD = _card("453914880343646")
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiJjb3JwdXMtdXNlciJ9.Q29ycHVzU2lnbmF0dXJlMDE"
IBAN = "DE89 3704 0044 0532 0130 00"
IBAN_WHOLE = "GB82" + "WEST12345698765432"

CARRIERS: tuple[tuple[str, str, str], ...] = (
    # (kind, the secret to look for, the text that carries it)
    ("private_key", PEM_BODY, f"Deploy key follows.\n{PEM}\nEnd of key."),
    ("aws_secret_key", AWS_NAMED, f"aws_secret_access_key = {AWS_NAMED}"),
    ("aws_secret_key", AWS_BESIDE, f"The backup user is {AWS_ID_2} with {AWS_BESIDE} as its pair."),
    ("url_password", "Pg-S3cret-Pass9", "The database is postgres://admin:Pg-S3cret-Pass9@db.internal:5432/app today."),
    (
        "anthropic_key",
        "sk-ant-api03-" + "Corpus7Anthropic9Key3xYz",
        "Claude uses sk-ant-api03-Corpus7Anthropic9Key3xYz.",
    ),
    ("openai_key", "sk-proj-" + "CorpusOpenAi4Key8Value2Q", "The embedder uses sk-proj-CorpusOpenAi4Key8Value2Q."),
    ("aws_key", AWS_ID, f"The reports bucket is read with {AWS_ID} only."),
    (
        "github_token",
        "ghp_" + "Corpus1Github2Token3Value4abcdefghijk",
        "CI pushes with ghp_Corpus1Github2Token3Value4abcdefghijk.",
    ),
    (
        "github_token",
        "github_pat_" + "11CorpusFineGrained0_Token9Value8xyzQ",
        "The release bot uses github_pat_11CorpusFineGrained0_Token9Value8xyzQ for tags.",
    ),
    ("slack_token", "xoxb-" + "4471190-CorpusSlackTok", "The bot posts with xoxb-4471190-CorpusSlackTok daily."),
    (
        "google_key",
        "AIza" + "SyCorpusGoogleKey0123456789abcdefgh",
        "Maps need AIzaSyCorpusGoogleKey0123456789abcdefgh here.",
    ),
    (
        "bearer_token",
        "Corpus0Bearer1Opaque2Value3",
        "Send Authorization: Bearer Corpus0Bearer1Opaque2Value3",
    ),
    ("jwt", JWT, f"Remember that the staging cookie is {JWT} until Friday."),
    ("email", "corpus.person@example.org", "Write to corpus.person@example.org about the invoice."),
    ("card_number", CARD, f"The company card is {CARD} until May."),
    ("iban", IBAN, f"Remember that the rent IBAN is {IBAN} for the flat."),
    ("iban", IBAN_WHOLE, f"Refunds go to {IBAN_WHOLE} at Westbank."),
    ("phone", "+1 415 555 2671", "Call the landlord on +1 415 555 2671 after nine."),
    ("secret", "hunter2-please-dont-share", "Our wifi password is hunter2-please-dont-share."),
    ("secret", "Capital-Case-Pw-77", "PASSWORD: Capital-Case-Pw-77"),
    ("secret", "QzPass-7319", "The alarm passcode: QzPass-7319 for the side door."),
    ("secret", "60418273", "Remember that the PIN is 60418273 for the safe."),
    ("secret", "92751846", "Her bank card has pin code 92751846 now."),
    ("secret", "violet kettle 42 drums", 'The disk passphrase is "violet kettle 42 drums" as agreed.'),
    ("secret", "Xy7-quokka-umbrella", "The secret is Xy7-quokka-umbrella and nobody knows it."),
    ("secret", "Ak9-zebra-lantern-31", "The weather api key is Ak9-zebra-lantern-31 on the free plan."),
    ("secret", "Tk4.mango.river.88", "The session token is Tk4.mango.river.88 until tonight."),
    ("secret", "Soleil-Lune-4412", "Le mot de passe : Soleil-Lune-4412"),
    ("secret", "Porte-Verte-6630", "Le code d'accès est Porte-Verte-6630 pour le garage."),
    ("secret", "58291736", "Le code PIN est 58291736."),
    ("secret", "Grün-Fenster-93", "Das Passwort ist Grün-Fenster-93."),
    ("secret", "Tor-Sieben-7719", "Der Zugangscode ist Tor-Sieben-7719 für die Garage."),
    ("secret", "73519264", "Die PIN ist 73519264."),
    ("secret", "Gato-Negro-5521", "La contraseña es Gato-Negro-5521."),
    ("secret", "Puerta-Azul-3391", "El código de acceso es Puerta-Azul-3391."),
    ("secret", "82649173", "El PIN es 82649173."),
)
FIELDS = {"password": "Field-Pw-Value-5517", "api_key": "Field-Key-Value-8812"}
"""Secrets given as the value of a field named like one (tool-call arguments, a note's properties)."""
HEADING_SECRET = "Heading-Pw-6621"
SECRETS = sorted({secret for _, secret, _ in CARRIERS} | set(FIELDS.values()) | {HEADING_SECRET})
TEXT = "\n".join(text for _, _, text in CARRIERS)
# Words that are no secret, planted beside the secrets: found where the secrets are looked for, they show the search
# reads every place (SQLite pages, xz archives, sinks, answers) that a secret could reach.
NOTE_WORD, ESCAPED_WORD, SESSION_WORD, LOG_WORD = "zanzibarcanary", "jsonescapecanary", "quinoacanary", "tamarindcanary"

# How a JSON writer may spell any character: `/` as `\/`, the rest as `\uXXXX` (non-ASCII always, as json.dumps does).
_SPELLED = {"-": "\\u002d", "_": "\\u005f", "/": "\\/", "@": "\\u0040", ".": "\\u002e", "A": "\\u0041", "k": "\\u006b"}


def escaped(text: str) -> str:
    """`text` as the inside of a JSON string with dashes, underscores, slashes, dots, `@`, `A` and `k` escaped."""
    return "".join(_SPELLED.get(char, char) for char in json.dumps(text)[1:-1])


def config(hook_url: str, sink: Path) -> str:
    """Every processor of the pipeline, the hashing embedder."""
    return f"""embedding:
  provider: hash
session_history:
  sources:
    - path: ./agents/{{agent}}/history.jsonl
    - session_notes: sentinel
  processors:
    - type: retain
      max_age_days: 30
    - type: archive
      older_than_days: 1
      destination: ./cold
    - type: forward
      path: {sink.as_posix()}/{{agent}}.jsonl
    - type: forward
      sink: webhook
      url: {hook_url}
    - type: summarize
    - type: extract
    - type: embed
    - type: redact
"""


def user_notes(vault: Path) -> list[Path]:
    """The user's own notes: secrets in the body, a heading and the properties; and a note holding an exported
    conversation as JSON, every secret in it escaped."""
    front = "---\n" + "".join(f"{key}: {value}\n" for key, value in FIELDS.items())
    front += "people:\n  - corpus.person@example.org\n---\n"
    body = f"# Credentials\n\n{NOTE_WORD} notes.\n\n{TEXT}\n\n## Password: {HEADING_SECRET}\n\nRotate it soon.\n"
    lines = ",\n".join(f'  {{"role": "user", "content": "{escaped(text)}"}}' for _, _, text in CARRIERS)
    export = f"# Export\n\n{ESCAPED_WORD} export of the chat.\n\n```json\n[\n{lines}\n]\n```\n"
    return [
        write(vault, "Notes/Credentials.md", front + body),
        write(vault, "Projects/Ops/Runbook.md", f"# Runbook\n\n{NOTE_WORD}\n\n" + TEXT.replace("\n", "\n\n") + "\n"),
        write(vault, "Notes/Chat export.md", export),
    ]


def session_notes(vault: Path) -> list[Path]:
    """Two session notes of the agent `sentinel`, secrets plain and escaped: one old enough to be archived, one
    kept."""
    paths = []
    for when in (NOW - timedelta(days=3), NOW - timedelta(hours=3)):
        lines = ["---", f"date: {when:%Y-%m-%d}", f'time: "{when:%H:%M}"', "user_id: alice"]
        user = f"About {SESSION_WORD}.\n{TEXT}"
        lines += [f"user_msg: {json.dumps(user)}", f"sentinel_msg: {json.dumps('Noted. ' + TEXT)}", "---"]
        lines += [f"Talked with alice about {SESSION_WORD}.", "", TEXT, "", f'`{{"said": "{escaped(TEXT)}"}}`']
        paths.append(write(vault, f"ops/sessions/{when:%Y-%m-%d}/{when:%H%M}.md", "\n".join(lines) + "\n"))
    return paths


def history_log(vault: Path) -> Path:
    """The agent `trader`'s log: each text once old (archived) and once recent (kept), a tool call with secret
    arguments, and a line written with characters escaped, as JSON allows."""
    lines: list[bytes] = []
    for age, prefix in ((timedelta(days=2), "old"), (timedelta(hours=2), "new")):
        for i, (_, _, text) in enumerate(CARRIERS):
            ts = (NOW - age + timedelta(seconds=i)).isoformat()
            entry = {
                "id": f"{prefix}-{i}",
                "ts": ts,
                "agent": "trader",
                "role": "user",
                "content": f"{LOG_WORD}.\n{text}",
            }
            lines.append(serialize(entry))
    tool = {"name": "login", "args": dict(FIELDS), "note": f"{LOG_WORD} login"}
    ts = (NOW - timedelta(hours=1)).isoformat()
    lines.append(serialize({"id": "tool", "ts": ts, "agent": "trader", "role": "tool", "content": tool}))
    entry = {"id": "escaped", "ts": ts, "agent": "trader", "role": "user", "content": f"{LOG_WORD}\n{TEXT}"}
    fields = (
        f'"id": "escaped", "ts": "{ts}", "agent": "trader", "role": "user", "content": "{escaped(entry["content"])}"'
    )
    raw = "{" + fields + "}"
    assert json.loads(raw) == entry  # escaped as a writer may, and still the same entry
    lines.append(raw.encode("utf-8"))
    path = vault / "agents" / "trader" / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def forms(secret: str) -> set[bytes]:
    """The secret as plain text and as JSON writers escape it (non-ASCII as `\\u`, `/` as `\\/`, or as `escaped`
    spells it), lower-cased."""
    spelled = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], escaped(secret)}
    spelled |= {s.replace("/", "\\/") for s in spelled}
    return {s.lower().encode("utf-8") for s in spelled}


def readable(path: Path) -> bytes:
    """A file's bytes, lower-cased, followed by its decompressed bytes when it is an xz archive."""
    data = path.read_bytes()
    if path.name.endswith(".xz"):
        data += b"\n" + lzma.decompress(data)
    return data.lower()


def holding(files: dict[str, bytes], needle: str) -> list[str]:
    """The files (or outputs, by name) whose name or bytes hold `needle` in any form."""
    wanted = forms(needle)
    return [rel for rel, data in files.items() if any(f in rel.lower().encode("utf-8") or f in data for f in wanted)]


def leaks(files: dict[str, bytes]) -> dict[str, list[str]]:
    """Each planted secret found, with where."""
    found = {secret: holding(files, secret) for secret in SECRETS}
    return {secret: where for secret, where in found.items() if where}
