"""Session summaries in the warm tier: an old session recalled by what was said, shown as a session, listed under
the conversation note that carries it, and the agent's boilerplate never among the results."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from companion.agent.periods import recent
from companion.recall.scope import Scope
from companion.workspace import Workspace
from tests.helpers.files import write
from tests.helpers.summaries import write_heartbeats, write_summary
from tests.helpers.workspaces import workspace

NOW = dt.datetime(2026, 11, 27, 20, 0)

TOPICS = [
    ("The guest wifi password is on the fridge card, network Gastnetz.", "Noted: Gastnetz, card on the fridge."),
    ("The NAS fan is making a grinding noise again.", "Likely the bearing of the 80mm fan; an NF-A8 fits."),
    ("Book the dentist for Thursday morning.", "Booked Dr. Weber, Thursday 09:00."),
    ("Tom wants one nice dinner in Chamonix.", "La Télécabine fits, about 55 EUR a head with wine."),
    ("My sister's wedding moved to the fourteenth of June.", "Updated the wedding date to 14 June."),
    ("The boiler pressure dropped to half a bar overnight.", "Top it up to 1.5 bar; call the installer if it drops."),
    ("Renew the car insurance before it lapses in January.", "Reminder set for 2 January, current insurer Allianz."),
    ("Which sourdough hydration did we settle on?", "Seventy-five percent with a long cold proof."),
    ("The balcony tomatoes got blossom end rot.", "Calcium and even watering; mulch the pots."),
    ("Cancel the gym membership at the end of the quarter.", "Written to the gym; it ends on 31 December."),
]
QUESTIONS = [
    "guest wifi password",
    "NAS fan noise",
    "dentist appointment",
    "dinner in Chamonix",
    "sister wedding date",
    "boiler pressure",
    "car insurance renewal",
    "sourdough hydration",
    "tomatoes blossom end rot",
    "gym membership cancel",
]


def _vault(root: Path, days_ago: int = 25) -> list[str]:
    """Ten sessions, one a day from `days_ago` days back, and a few memory notes; returns the sessions' paths."""
    paths = []
    for n, (said, reply) in enumerate(TOPICS):
        when = NOW - dt.timedelta(days=days_ago - n, hours=3)
        paths.append(write_summary(root, when, said, reply, f"Linked [[Home]] on day {n}.\n"))
    write(root, "memory/coffee machine.md", "---\ntype: fact\n---\nThe coffee machine descales in the last week.\n")
    write(root, "memory/Home.md", "---\ntype: fact\n---\nThe flat is on the third floor, no lift.\n")
    return paths


def _warm(ws: Workspace, query: str) -> list[tuple[str, str, str]]:
    context = ws.recall().recall(query, as_of=NOW, k=10)
    return [(i.path, i.kind, i.tier) for i in context.results]


def test_an_old_session_is_recalled_first_by_its_topic(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    paths = _vault(root)
    ws = workspace(root)
    ws.indexer().sync()
    for path, question in zip(paths, QUESTIONS, strict=True):
        results = _warm(ws, question)
        assert results[0] == (path, "session", "warm"), question
    ws.close()


def test_a_session_is_shown_by_what_was_said(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    paths = _vault(root)
    ws = workspace(root)
    ws.indexer().sync()
    recall = ws.recall()
    context = recall.recall("boiler pressure", as_of=NOW)
    item = context.results[0]
    assert item.path == paths[5]
    assert item.title == TOPICS[5][0]
    passage = recall.passage(item)
    first = passage.splitlines()[0]
    assert first.startswith(item.date or "-") and "alice" in first
    assert TOPICS[5][0] in passage and TOPICS[5][1] in passage and "Linked [[Home]]" in passage
    place = recall.locate(item)
    assert TOPICS[5][0][:30] in place.snippet
    ws.close()


def _nas_conversation(root: Path) -> None:
    """The NAS exchange of `_vault` filed again as a conversation note, not naming its summary: the same moment and
    session key make it the carrier."""
    when = NOW - dt.timedelta(days=24, hours=3)
    write(
        root,
        "Chats/2026-11-03 NAS.md",
        f"---\ntype: conversation\ndate: {when.date()}\ntime: '{when:%H:%M}'\nuser_id: alice\n---\n"
        "alice: the NAS fan grinds.\nagent: the bearing, probably.\n",
    )


def test_the_conversation_note_carries_its_session(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    paths = _vault(root)
    when = NOW - dt.timedelta(days=25, hours=3)
    write(
        root,
        "Chats/2026-11-02 Guest wifi.md",
        f"---\ntype: conversation\ndate: {when.date()}\ntime: '{when:%H:%M}'\nuser_id: alice\n"
        f"session: {paths[0]}\n---\nalice: where is the guest wifi password?\nagent: on the fridge card.\n",
    )
    # The same exchange filed again without naming its summary: matched by its moment and session key.
    _nas_conversation(root)
    ws = workspace(root)
    ws.indexer().sync()
    wifi = [p for p, _, _ in _warm(ws, "guest wifi password")]
    assert wifi[0] == "Chats/2026-11-02 Guest wifi.md"
    assert paths[0] not in wifi
    nas = [p for p, _, _ in _warm(ws, "NAS fan noise")]
    assert nas[0] == "Chats/2026-11-03 NAS.md"
    assert paths[1] not in nas
    # A summary no note carries is still listed itself.
    assert _warm(ws, "dentist appointment")[0][0] == paths[2]
    ws.close()


MORE_TOPICS = [
    ("The printer upstairs jams on thick paper.", "Use the rear tray for card stock."),
    ("Plan the Lisbon weekend in April.", "Flights on Friday evening, back Monday morning."),
    ("My bike chain keeps slipping in high gears.", "The chain is worn; replace it with the cassette."),
    ("What wine goes with the mushroom risotto?", "A dry white: a Soave or a Grüner Veltliner."),
    ("The kitchen tap drips at night.", "Replace the cartridge; it is a 35 mm ceramic one."),
    ("Remind me of the passport renewal.", "Your passport expires in March; book the office in January."),
    ("The cat refuses the new food brand.", "Mix it with the old one over a week."),
    ("Set up the tax folder for this year.", "Created the folder with receipts, payslips and the insurer's letter."),
    ("The laptop battery drains overnight.", "Hibernate instead of sleep; a firmware update is waiting."),
    ("Find a violin teacher for Mia.", "Two teachers near the school offer Saturday lessons."),
]
MORE_QUESTIONS = [
    "printer jams card stock",
    "Lisbon weekend flights",
    "bike chain slipping",
    "wine with mushroom risotto",
    "kitchen tap drips",
    "passport renewal",
    "cat new food",
    "tax folder receipts",
    "laptop battery drains",
    "violin teacher for Mia",
]


def test_heartbeats_never_reach_the_results(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    paths = _vault(root, days_ago=30)
    for n, (said, reply) in enumerate(MORE_TOPICS):
        paths.append(write_summary(root, NOW - dt.timedelta(days=45 - n, hours=5), said, reply))
    beats = set(write_heartbeats(root, NOW - dt.timedelta(days=3), 500, every=dt.timedelta(minutes=50)))
    ws = workspace(root)
    report = ws.indexer().sync()
    assert report.sessions_left_out == 500
    # Twenty real sessions among 500 heartbeats, twenty questions: each finds its session first, no heartbeat in
    # any top 10; nor do questions close to what heartbeats say.
    for path, question in zip(paths, QUESTIONS + MORE_QUESTIONS, strict=True):
        results = [p for p, _, _ in _warm(ws, question)]
        assert results[0] == path, question
        assert not beats & set(results), question
    for question in ("what needs attention?", "heartbeat", "anything new today?"):
        assert not beats & {p for p, _, _ in _warm(ws, question)}, question
    ws.close()


def test_forty_days_of_summaries_answer_by_topic_and_by_period(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    days = [38, 34, 30, 25, 21, 17, 12, 8, 5, 3]
    paths = []
    for day, (said, reply) in zip(days, TOPICS, strict=True):
        paths.append(write_summary(root, NOW - dt.timedelta(days=day, hours=2), said, reply))
    write(root, "memory/coffee machine.md", "---\ntype: fact\n---\nWe talked about descaling it last week.\n")
    beats = set(write_heartbeats(root, NOW - dt.timedelta(hours=1), 12 * 8, every=dt.timedelta(hours=3)))
    ws = workspace(root)
    ws.indexer().sync()
    # The session of 25 days ago, by its topic.
    assert _warm(ws, "dinner in Chamonix")[0] == (paths[3], "session", "warm")
    # Last week (16 to 22 November): its two sessions first, newest first, no memory note above them, no heartbeat.
    context = ws.recall().recall("what did we talk about last week?", as_of=NOW, k=10)
    listed = [i.path for i in context.results]
    assert listed[:2] == [paths[8], paths[7]]
    assert not beats & set(listed)
    assert all(not p.startswith("memory/") for p in listed[:2])
    # Recent sessions by time leave the heartbeats out too; the hot tier is the agent's last turns, as they were.
    recent = ws.recall().recall_recent(hours=24 * 7, limit=20, as_of=NOW)
    assert [t.path for t in recent] == [paths[9], paths[8]]
    assert {s.path for s in context.sessions} <= beats
    ws.close()


def test_a_period_asked_by_an_agent_lists_no_heartbeat(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    day = NOW - dt.timedelta(days=6)
    real = write_summary(root, day.replace(hour=9), "The NAS fan grinds again.", "The bearing, probably.")
    beats = set(write_heartbeats(root, day.replace(hour=22), 8, every=dt.timedelta(hours=1)))
    ws = workspace(root)
    ws.indexer().sync()
    listed = recent(ws.recall(), None, 5, period=f"on {day:%d %B}", as_of=NOW.isoformat())
    assert [t.path for t in listed.sessions] == [real]
    assert not beats & {t.path for t in listed.sessions} and listed.more == 0
    ws.close()


def test_a_scope_that_leaves_the_carrier_out_keeps_the_summary(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    paths = _vault(root)
    _nas_conversation(root)
    ws = workspace(root)
    ws.indexer().sync()
    inside = ws.recall().recall("NAS fan noise", as_of=NOW, scope=Scope(path_glob="ops/sessions/**"))
    assert inside.results[0].path == paths[1]
    assert _warm(ws, "NAS fan noise")[0][0] == "Chats/2026-11-03 NAS.md"  # without the scope, the carrier
    ws.close()
