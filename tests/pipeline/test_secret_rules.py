"""The shared redaction rules: AWS secret access keys (after their name, beside their key id), secrets introduced in
words (and as the value of a field named like one), what must stay as written, extracted-note names, and the note
text the indexer is given."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from companion.pipeline.extract import make_title
from companion.pipeline.history import parse_entry, serialize
from companion.pipeline.processors import Redactor, RedactProcessor
from companion.secrets import redact_text
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
