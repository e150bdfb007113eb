"""Properties: parse_note fails only with NoteError, and code spans never yield wikilinks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import NoteError
from companion.vault.links import extract
from companion.vault.parse import parse_note
from tests.helpers.yamlish import YAMLISH

NOTE_BYTES = st.one_of(
    st.binary(max_size=400),
    st.builds(
        lambda fm, body: f"---\n{fm}\n---\n{body}".encode(),
        YAMLISH,
        st.text(max_size=200),
    ),
    st.builds(
        lambda fm, tail: b"---\n" + fm.encode() + b"\n---\n" + tail,
        YAMLISH,
        st.binary(max_size=50),
    ),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=NOTE_BYTES)
def test_parse_note_raises_nothing_but_note_error(raw: bytes) -> None:
    try:
        note = parse_note("Fuzz/note.md", raw)
    except NoteError as exc:
        assert exc.path == "Fuzz/note.md"
        assert exc.reason
        return
    assert note.path == "Fuzz/note.md"


# Text around the code span: no backticks (they would pair with the span's own) and no brackets.
AROUND = st.text(
    alphabet=st.sampled_from(list("abc XYZ.,;:!?*_-#>+=()\n0123456789|%^~")),
    max_size=40,
)
# No `|` inside: in a table row a pipe splits cells even within backticks, as in Obsidian.
INSIDE = st.text(alphabet=st.sampled_from(list("abc []!#^-")), max_size=20)


@settings(max_examples=400, deadline=None)
@given(before=AROUND, inside_before=INSIDE, inside_after=INSIDE, after=AROUND, embed=st.booleans())
def test_no_wikilink_from_inside_a_code_span(
    before: str, inside_before: str, inside_after: str, after: str, embed: bool
) -> None:
    bang = "!" if embed else ""
    body = f"{before}`{inside_before}{bang}[[InsideCode]]{inside_after}`{after} [[Outside]]"
    targets = [link.target for link in extract(body).links]
    assert "InsideCode" not in targets
