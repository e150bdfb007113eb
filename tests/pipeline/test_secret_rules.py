"""The shared redaction rules: AWS secret access keys (after their name, beside their key id), secrets introduced in
words (and as the value of a field named like one), what must stay as written, extracted-note names, and the note
text the indexer is given."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from companion.pipeline.extract import make_title
from companion.pipeline.history import parse_entry, serialize
from companion.pipeline.processors import Redactor, RedactProcessor
from companion.secrets import redact_output, redact_text
from companion.specs import RedactSpec
from companion.vault.notes import Note
from indexer.chunking import Chunker, redact_note

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
AWS_ID = "AKIA" + "Q7W3E9R2T5Y8U1I4"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYq1w2E3r4T5"


@pytest.mark.parametrize(
    "text",
    [
        f"aws_secret_access_key = {AWS_SECRET}",
        f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"',
        f"secret_access_key: '{AWS_SECRET}'",
        f"aws_secret={AWS_SECRET}",
        f'{{"aws_secret_access_key": "{AWS_SECRET}"}}',
        "aws_secret_access_key=" + AWS_SECRET.replace("/", "\\/"),  # as a JSON text escapes it
        f"id {AWS_ID}, secret {AWS_SECRET}",
        f"{AWS_ID}:{AWS_SECRET}",
        f"{AWS_SECRET} is the secret of {AWS_ID}",
    ],
)
def test_aws_secret_keys_by_name_and_beside_their_id(text: str) -> None:
    out = redact_text(text)
    assert AWS_SECRET not in out and AWS_SECRET.replace("/", "\\/") not in out and AWS_ID not in out
    assert "[REDACTED:aws_secret_key]" in out


def test_a_40_character_token_near_a_key_id_stays_when_it_does_not_look_like_a_secret() -> None:
    commit = "3f2a9c1b7d" * 4  # a hex digest: no capital letters
    assert redact_text(f"{AWS_ID} was rotated in commit {commit}") == (
        f"[REDACTED:aws_key] was rotated in commit {commit}"
    )
    assert redact_text(f"see {AWS_SECRET} alone") == f"see {AWS_SECRET} alone"  # no name, no key id: not known


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Our wifi password is hunter2-please-dont-share.", "Our wifi password is [REDACTED:secret]."),
        ("Password: s3cr3t!x and more", "Password: [REDACTED:secret] and more"),
        ("PASSWORD = Tr0ub4dor&3", "PASSWORD = [REDACTED:secret]"),
        ("**Password:** hunter2pw", "**Password:** [REDACTED:secret]"),
        ("DB_PASSWORD=abc123xyz", "DB_PASSWORD=[REDACTED:secret]"),
        ('{"password": "hunter2xx", "user": "bob"}', '{"password": "[REDACTED:secret]", "user": "bob"}'),
        ("passcode: 7319-4862", "passcode: [REDACTED:secret]"),
        ("the PIN is 4821.", "the PIN is [REDACTED:secret]."),
        ("pin code 4821", "pin code [REDACTED:secret]"),
        ("The passphrase is 'violet kettle drums'.", "The passphrase is '[REDACTED:secret]'."),
        ("the secret is abracadabra, tell no one", "the secret is [REDACTED:secret], tell no one"),
        ("The API key is 9f8e7d6c5b4a", "The API key is [REDACTED:secret]"),
        ("token is abc.def.ghi", "token is [REDACTED:secret]"),
        ("the password for the guest wifi is GuestNet2024", "the password for the guest wifi is [REDACTED:secret]"),
        ("the password is now Sunflower7, remember it", "the password is now [REDACTED:secret], remember it"),
        ("Le mot de passe est soleil42 !", "Le mot de passe est [REDACTED:secret] !"),
        ("Das Passwort ist Geheim123.", "Das Passwort ist [REDACTED:secret]."),
        ("La contraseña es gato-negro-7.", "La contraseña es [REDACTED:secret]."),
        ("api key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "api key is [REDACTED:anthropic_key]"),
        ("The password is swordfish.", "The password is [REDACTED:secret]."),
        ("the password is swordfish and the user is bob", "the password is [REDACTED:secret] and the user is bob"),
        ("The password is 'separate' from now on", "The password is '[REDACTED:secret]' from now on"),
    ],
)
def test_secrets_introduced_in_words(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "the password policy requires 12 characters",
        "The password is incorrect, try again.",
        "The token is expired.",
        "The secret is out",
        "the api key is in the vault",
        "my pin is the same as before",
        "the password must be rotated",
        "The passwords are stored hashed.",
        "Token count: 5000 tokens",
        "ping: 20ms, shopping list, spinning",
        "password issue: nothing to see",
        "password: ${DB_PASSWORD}",
        "The password is stored in the keychain.",
        "Kyoto is at 35.021041, 135.7556075 on the map.",  # decimals are no phone numbers
        # Prose about a secret, as a knowledge vault's help pages hold it.
        "The vault password is separate from your account password.",
        "The password is shared with everyone on the team.",
        "A senha individual para notas publicadas não é suportada atualmente.",
        "The PIN is never written down.",
    ],
)
def test_text_without_a_secret_stays(text: str) -> None:
    assert redact_text(text) == text


def test_fields_named_like_secrets_are_replaced_whole() -> None:
    data = {
        "id": "e1",
        "ts": NOW.isoformat(),
        "agent": "a",
        "password": "plain words",
        "tool": {"args": {"api_key": "k-1", "pin": 4821, "enabled": True, "note": "nothing"}},
    }
    result = RedactProcessor(RedactSpec()).process("a", [parse_entry(serialize(data))], NOW)
    new = result.replace["e1"].data
    assert new["password"] == "[REDACTED:secret]"
    assert new["tool"]["args"] == {
        "api_key": "[REDACTED:secret]",
        "pin": "[REDACTED:secret]",
        "enabled": True,
        "note": "nothing",
    }
    assert Redactor().value({"token": "Hello"}) == {"token": "Hello"}  # a model's output token is no secret


def test_extracted_note_names_are_built_from_redacted_text() -> None:
    # Even with no `redact` in the list: a file name is copied where no later redaction reaches it.
    title = make_title("Our wifi password is hunter2-please-dont-share.")
    assert "hunter2" not in title and title.startswith("Our wifi password is")


def test_the_indexer_sees_notes_redacted_with_their_lines_in_place() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"
    body = f"# Keys\n\n{pem}\n\n## After\n\nThe password is hunter2-xyz.\n"
    note = Note(
        path="k.md",
        title="k",
        body=body,
        body_line=3,
        content_hash="h",
        frontmatter={"user_id": "bob@example.com", "api_key": "k-123456", "people": ["ann@example.com"]},
    )
    seen = redact_note(note)
    assert "MIIEow" not in seen.body and "hunter2" not in seen.body
    assert seen.body.count("\n") == body.count("\n") and seen.content_hash == "h"
    assert seen.frontmatter == {
        "user_id": "bob@example.com",  # addresses the note (scopes filter on it)
        "api_key": "[REDACTED:secret]",
        "people": ["[REDACTED:email]"],
    }
    chunks = Chunker(lambda texts: [len(t.split()) + 2 for t in texts]).chunk(seen)
    after = next(c for c in chunks if c.anchor.startswith("after"))
    assert after.start_line == 3 + body.splitlines().index("The password is hunter2-xyz.")
    assert redact_note(Note(path="p.md", title="p", body="plain\n", body_line=0, content_hash="x")).body == "plain\n"


@pytest.mark.parametrize(
    ("line", "secrets"),
    [
        ("PASSWORD: Capital-Case-Pw-77", ["Capital-Case-Pw-77"]),
        (f"{AWS_ID} {AWS_SECRET}", [AWS_ID, AWS_SECRET]),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", ["abcdefghijklmnopqrstuvwxyz012345"]),
        ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", ["a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"]),
        ("ada.lovelace@example.org", ["lovelace"]),
        ("+1 415 555 2671", ["555 2671"]),
        ("Das Passwort ist Gr\\u00fcn-Fenster-93", ["Fenster"]),
        ("La contrase\\u00f1a es Gato-Negro-5521", ["Gato-Negro"]),
    ],
)
def test_secrets_at_the_start_of_an_escaped_line_of_a_yaml_or_json_string(line: str, secrets: list[str]) -> None:
    # A session note's `user_msg: "...\n..."` holds its lines as escapes: the secret starts right after `\n`.
    text = f'user_msg: "first line\\n{line}\\nlast line"'
    out = redact_text(text)
    assert out.startswith('user_msg: "first line\\n') and out.endswith('\\nlast line"')
    assert not [secret for secret in secrets if secret in out], out


JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"cookie {JWT} end", "cookie [REDACTED:jwt] end"),
        (f"Authorization: Bearer {JWT}", "Authorization: Bearer [REDACTED:jwt]"),
        (f'{{"id_token":"{JWT}"}}', '{"id_token":"[REDACTED:jwt]"}'),
        ("alg none: eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0. done", "alg none: [REDACTED:jwt] done"),
        (f"encrypted {JWT}.c2Vjb25k.dGhpcmQ now", "encrypted [REDACTED:jwt] now"),  # five parts (JWE)
    ],
)
def test_json_web_tokens(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IBAN DE89 3704 0044 0532 0130 00, thanks", "IBAN [REDACTED:iban], thanks"),
        ("IBAN DE89370400440532013000.", "IBAN [REDACTED:iban]."),
        ("to GB82 WEST 1234 5698 7654 32 today", "to [REDACTED:iban] today"),
        ("pay FR1420041010050500013M02606 now", "pay [REDACTED:iban] now"),
        ("BE68 5390 0754 7034 SENT", "[REDACTED:iban] SENT"),  # a word of four capitals after it is no group
    ],
)
def test_ibans_whose_check_holds(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "IBAN DE89 3704 0044 0532 0130 01 (one digit off)",
        "DE89370400440532013001",
        "order AB12CDEFGHIJKLMNOP shipped",  # capitals and digits of an IBAN's shape, check failing
        "serial XY99 ABCD EFGH IJKL 12",
        "the part number QA12345678901 is out of stock",
    ],
)
def test_runs_of_capitals_and_digits_that_fail_the_iban_check_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("plain", "secret"),
    [
        ("Claude uses sk-ant-api03-Corpus7Anthropic9Key3xYz.", "sk-ant-api03-Corpus7Anthropic9Key3xYz"),
        ("CI pushes with ghp_Corpus1Github2Token3Value4abcdefghijk.", "ghp_Corpus1Github2Token3Value4abcdefghijk"),
        ("the key AKIAQ7W3E9R2T5Y8U1I4 reads", "AKIAQ7W3E9R2T5Y8U1I4"),
        ("db postgres://admin:Pg-S3cret-Pass9@db.internal/app", "Pg-S3cret-Pass9"),
        ("Our wifi password is hunter2-please-dont-share.", "hunter2-please-dont-share"),
        ("Das Passwort ist Grün-Fenster-93.", "Grün-Fenster-93"),
        ("mail corpus.person@example.org now", "corpus.person@example.org"),
        ("IBAN DE89 3704 0044 0532 0130 00 ok", "DE89 3704 0044 0532 0130 00"),
        (f"cookie {JWT} ok", JWT),
    ],
)
def test_secrets_spelled_with_json_escapes_are_replaced_escapes_and_all(plain: str, secret: str) -> None:
    # As a JSON writer may spell any character: `-` as \u002d, `/` as \/, `A` as \u0041, `@` as \u0040...
    spelled = {
        "-": "\\u002d",
        "/": "\\/",
        "A": "\\u0041",
        "E": "\\u0045",
        "@": "\\u0040",
        "_": "\\u005f",
        "ü": "\\u00fc",
    }
    text = "".join(spelled.get(char, char) for char in plain)
    escaped_secret = "".join(spelled.get(char, char) for char in secret)
    assert escaped_secret in text and secret not in text
    out = redact_text(text)
    assert "[REDACTED:" in out and escaped_secret not in out
    # Only the secret's span changes: what stands before and after it is as written, escapes included.
    before, after = text.split(escaped_secret)
    assert out.startswith(before) and out.endswith(after), out


def test_escapes_keep_their_lines_and_an_escaped_backslash_is_no_escape() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"
    text = "key:\n" + pem.replace("-", "\\u002d") + "\nend"
    assert redact_text(text, keep_lines=True) == "key:\n[REDACTED:private_key]" + "\n" * 3 + "\nend"
    literal = "the text \\\\u0041KIAQ7W3E9R2T5Y8U1I4 is a string of a JSON test"  # `\\u0041` is no escape
    assert redact_text(literal) == literal
    assert redact_text("path C:\\users\\bob and a\\/b") == "path C:\\users\\bob and a\\/b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Der Zugangscode ist Tor-7719.", "Der Zugangscode ist [REDACTED:secret]."),
        ("Geheimzahl: 4711", "Geheimzahl: [REDACTED:secret]"),
        ("Le code d'accès est Porte-4412.", "Le code d'accès est [REDACTED:secret]."),
        ("El código de acceso es Puerta-3391.", "El código de acceso es [REDACTED:secret]."),
        ("Le code PIN est 58291736.", "Le code PIN est [REDACTED:secret]."),
        ("Die PIN ist 73519264.", "Die PIN ist [REDACTED:secret]."),
        ("El PIN es 82649173.", "El PIN es [REDACTED:secret]."),
        ("Le code d'accès est requis", "Le code d'accès est requis"),
    ],
)
def test_access_codes_and_pins_in_german_french_and_spanish(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_what_an_agent_is_shown_is_redacted_through_dataclasses_tuples_and_fields() -> None:
    @dataclass(frozen=True)
    class View:
        path: str
        pairs: tuple[tuple[str, int], ...]
        properties: dict[str, Any]

    view = View("People/Ann (ann@example.com).md", (("IBAN DE89370400440532013000", 1),), {"pin": 4821, "n": 3})
    assert redact_output(view) == View(
        "People/Ann ([REDACTED:email]).md", (("IBAN [REDACTED:iban]", 1),), {"pin": "[REDACTED:secret]", "n": 3}
    )
    assert redact_output(["ok", 1.5, None]) == ["ok", 1.5, None]
