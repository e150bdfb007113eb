"""The session-summary measure: a year of an agent's summaries (one per exchange, most of them real, a share of them
heartbeat polls and acknowledgements) indexed words first, then embedded with the real model, restarted with nothing
changed, joined by one more summary as the watcher reports it, and asked questions.

What it shows: what indexing summaries costs (their boilerplate is counted over the whole vault and left out), that
a restart reads none of them, what one arriving summary costs now that its arrival recounts the boilerplate, and
recall's latency on such a vault.
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from companion.cli.bench.common import SYNTH_NOW, percentile, timed, workspace

HEARTBEAT_POLL = (
    "Read HEARTBEAT.md if it exists and follow it strictly. If nothing needs attention, reply HEARTBEAT_OK."
)
"""The poll a heartbeat-driven agent is sent every half hour or so, the same words every time."""
ACKNOWLEDGEMENTS = (
    ("Thanks!", "You're welcome!"),
    ("ok thanks", "Got it."),
    ("Great, thank you", "Anytime!"),
)
"""Exchanges that close a conversation: written the same way again and again, as heartbeats are."""
ACK_SHARE = 0.08
"""The share of summaries that are acknowledgements."""
ALERT_SHARE = 0.02
"""The share of summaries that are heartbeat polls answered with something that needed attention (kept: the reply
is no boilerplate)."""
ALONE_SAMPLE = 512
"""Chunks the model embeds alone, for its speed at the moment of the build."""
DAYS = 365
"""The summaries are spread over this many days before `SYNTH_NOW`."""


def _listed(words: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(words.split(sep))


_PEOPLE = _listed(
    "Tom Mia Ravi Chen Sofia Omar Lena Jonas Priya Marco Aisha Ben Elena Yuki Noah Clara Diego Hana Felix Ines "
    "Kofi Greta Mateo Nadia Pavel Rosa Sami Tariq Vera Wim"
)
_PLACES = _listed(
    "Chamonix Lisbon Porto Berlin Kyoto Oslo Valencia Ghent Turin Bergen Seville Krakow Lyon Utrecht Tallinn Bilbao "
    "Graz Split Aarhus Bologna Nantes Zermatt Cork Brno"
)
_THINGS = _listed(
    "invoice|dentist appointment|tax return|bike repair|router|passport renewal|group dinner|flight|flat lease|"
    "car insurance|photo backup|kitchen tap|roof tiles|guitar lessons|flu vaccination|car service|parcel|"
    "birthday present|newsletter|holiday budget|conference slides|phone contract|heating boiler|printer toner|"
    "school trip|piano tuning|garden fence|electricity bill|gym membership|train tickets|hotel booking|"
    "wedding gift|visa application|laptop battery|ski rental|bank transfer|moving van|water filter|"
    "book club|vet visit|window cleaner|solar panels|running shoes|wine order|museum tickets|rent increase|"
    "podcast episode|tent repair|hiking route|spare key",
    "|",
)
_ADJECTIVES = _listed(
    "overdue cheapest quiet early refundable cheaper later shorter official second smaller usual weekly new "
    "old monthly spare urgent"
)
_VERBS = _listed(
    "book cancel compare renew check find fix plan order move pay schedule confirm postpone split return price track"
)
_DONE = dict(
    zip(
        _VERBS,
        _listed(
            "booked cancelled compared renewed checked found fixed planned ordered moved paid scheduled confirmed "
            "postponed split returned priced tracked"
        ),
        strict=True,
    )
)
_WEEKDAYS = _listed("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
_MONTHS = _listed("January February March April May June July August September October November December")
_ALERTS = (
    "The {thing} reminder is due today: {person} is waiting for an answer.",
    "Backup to the NAS failed at {hh}:00; the {thing} folder was not copied.",
    "{person} wrote twice about the {thing}; nothing else needs attention.",
)


@dataclass(frozen=True)
class Written:
    """One summary the measure wrote: its vault path, its kind, and for a real exchange the words a question about
    it would use."""

    path: str
    kind: str
    """`exchange`, `heartbeat`, `alert` (a heartbeat poll answered with something) or `acknowledgement`."""
    question: str = ""


class _Words:
    """Real exchanges from the word lists above, each different: a request, the agent's answer, a body."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self) -> dict[str, str]:
        r = self.rng
        thing, other = r.sample(_THINGS, 2)
        person, friend = r.sample(_PEOPLE, 2)
        place, elsewhere = r.sample(_PLACES, 2)
        verb = r.choice(_VERBS)
        return {
            "thing": thing,
            "other": other,
            "person": person,
            "friend": friend,
            "place": place,
            "elsewhere": elsewhere,
            "verb": verb,
            "done": _DONE[verb],
            "adj": r.choice(_ADJECTIVES),
            "weekday": r.choice(_WEEKDAYS),
            "month": r.choice(_MONTHS),
            "day": str(r.randint(1, 28)),
            "hh": f"{r.randint(7, 21):02d}",
            "mm": r.choice(("00", "15", "30", "45")),
            "eur": str(r.randrange(20, 400, 5)),
            "eur2": str(r.randrange(20, 400, 5)),
        }

    def exchange(self, day: dt.date) -> tuple[str, str, str, str]:
        """(user message, reply, body, a question about it)."""
        w = self.pick()
        user, reply = self.rng.choice(
            (
                (
                    "Can you {verb} the {thing} for {person} before {weekday}?",
                    "Done: the {thing} is {done} for {weekday} at {hh}:{mm}; {person} has the confirmation.",
                ),
                (
                    "{person} asked about the {thing} in {place}: what are the options under {eur} EUR?",
                    "Two fit: {place} at {eur2} EUR and {elsewhere} at {eur} EUR. {place} is the {adj} one.",
                ),
                (
                    "Remind me to {verb} the {thing} on {day} {month}.",
                    "Reminder set for {day} {month} at {hh}:{mm}: {verb} the {thing}, {adj} as usual.",
                ),
                (
                    "What did we decide about the {adj} {thing} with {person}?",
                    "You chose the {adj} {thing} with {person} on {day} {month}; the {other} waits until {month}.",
                ),
                (
                    "Please draft a short note to {person} about the {thing} and the {other}.",
                    "Draft: 'Hi {person}, the {thing} is {done}; the {other} follows on {weekday}.' Send it?",
                ),
                (
                    "Is the {thing} in {place} still on {weekday}? {friend} thinks it moved.",
                    "{friend} is right: it moved to {weekday} {day} {month} at {hh}:{mm}, still in {place}.",
                ),
                (
                    "How much did the {thing} cost last time, and who paid, {person} or {friend}?",
                    "{eur} EUR, paid by {person} on {day} {month}; {friend} owes half of the {thing}.",
                ),
            )
        )
        body = self.rng.choice(
            (
                "",
                "{person} prefers {place}. The {thing} costs {eur} EUR, paid from the {other} budget.",
                "Open: the {other} for {friend}. Next step on {weekday}.",
                "Decided: {verb} the {thing} in {elsewhere}, not {place}.\n\nConversation [[{date} {title}]]",
            )
        )
        title = w["thing"].capitalize()
        question = f"what about the {w['thing']} with {w['person']}"
        return (
            user.format(**w),
            reply.format(**w),
            body.format(**w, date=day.isoformat(), title=title),
            question,
        )


def write_summaries(vault: Path, count: int, heartbeat_pct: float, *, variant: int = 7) -> list[Written]:
    """Write `count` session summaries under `ops/sessions/<day>/`, spread over the year before `SYNTH_NOW`:
    `heartbeat_pct` percent heartbeat polls answered `HEARTBEAT_OK`, a few polls answered with an alert, some
    acknowledgements, the rest real exchanges of varied words."""
    rng = random.Random(variant)
    words = _Words(rng)
    heartbeats = round(count * heartbeat_pct / 100)
    alerts = min(round(count * ALERT_SHARE), count - heartbeats)
    acks = min(round(count * ACK_SHARE), count - heartbeats - alerts)
    kinds = (
        ["heartbeat"] * heartbeats
        + ["alert"] * alerts
        + ["acknowledgement"] * acks
        + ["exchange"] * (count - heartbeats - alerts - acks)
    )
    rng.shuffle(kinds)
    (vault / ".obsidian").mkdir(parents=True, exist_ok=True)
    first = SYNTH_NOW.date() - dt.timedelta(days=DAYS)
    written: list[Written] = []
    for i, kind in enumerate(kinds):
        day = first + dt.timedelta(days=i * DAYS // max(count, 1))
        when = dt.datetime.combine(day, dt.time(rng.randint(6, 22), rng.randint(0, 59), rng.randint(0, 59)))
        written.append(_write(vault, when, kind, words, f"{i:05d}"))
    return written


def _write(vault: Path, when: dt.datetime, kind: str, words: _Words, name: str) -> Written:
    question = ""
    body = ""
    if kind == "heartbeat":
        user = HEARTBEAT_POLL if words.rng.random() < 0.5 else f"[heartbeat {when:%Y-%m-%d %H:%M}] {HEARTBEAT_POLL}"
        reply = "HEARTBEAT_OK" if words.rng.random() < 0.5 else f"HEARTBEAT_OK {when:%H:%M}"
    elif kind == "alert":
        user = HEARTBEAT_POLL
        reply = words.rng.choice(_ALERTS).format(**words.pick())
    elif kind == "acknowledgement":
        user, reply = words.rng.choice(ACKNOWLEDGEMENTS)
    else:
        user, reply, body, question = words.exchange(when.date())
    fields = {
        "date": when.date().isoformat(),
        "time": when.strftime("%H:%M:%S"),
        "user_id": "alice",
        "chat_id": "tg-4417",
        "user_msg": user,
        "sentinel_msg": reply,
    }
    rel = f"ops/sessions/{when.date().isoformat()}/{when:%H%M%S}-{name}.md"
    front = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False)
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}\n", encoding="utf-8")
    return Written(rel, kind, question)


def summaries(root: Path, count: int, heartbeat_pct: float, queries: int) -> dict[str, Any]:
    """Index a vault of `count` session summaries words first (no embedding), embed it with the real model, restart
    with nothing changed, index one more exchange and one more heartbeat as the watcher reports them, and time
    `queries` recalls over it."""
    from companion.recall.engine import Recall

    vault = root / "vault"
    for folder in (vault, root / "data"):
        if folder.exists():  # a work folder given again: the figures are of this vault alone
            shutil.rmtree(folder)
    written = write_summaries(vault, count, heartbeat_pct)
    kinds = {k: sum(1 for w in written if w.kind == k) for k in ("exchange", "heartbeat", "alert", "acknowledgement")}

    ws = workspace(root)
    indexer = ws.indexer()
    words = indexer.sync(embed_for_s=0)
    chunks, tokens = ws.manifest.queue.unembedded_totals()
    # The model's first call and opening the store are paid once by a process, not by the summaries.
    model = ws.embedder()
    model.embed(["the model's first call allocates"])
    _ = indexer.store
    # The model alone on the first chunks, just before: on a shared machine its speed moves by the minute, and the
    # build's rate means something only beside it.
    sample = ws.manifest.queue.next_unembedded(ALONE_SAMPLE)
    alone_s = timed(lambda: model.embed([row.text for row in sample]))
    started = time.perf_counter()
    embedded = indexer.embed()
    embed_s = time.perf_counter() - started
    ws.close()

    ws = workspace(root)
    indexer = ws.indexer()
    again = indexer.sync()
    # The watcher's indexer is long-lived: the model and the store are open when a summary arrives.
    ws.embedder().embed(["the model's first call allocates"])
    _ = indexer.store
    arrivals = {}
    for kind in ("exchange", "heartbeat"):
        when = dt.datetime.combine(SYNTH_NOW.date(), dt.time(11, 0 if kind == "exchange" else 30))
        new = _write(vault, when, kind, _Words(random.Random(kind)), f"new-{kind}")
        report = indexer.update([new.path])
        arrivals[kind] = {
            "s": round(report.elapsed_s, 3),
            "notes_indexed": report.notes_indexed,
            "sessions_left_out": report.sessions_left_out,
            "chunks_embedded": report.chunks_embedded,
        }

    engine = Recall(ws.searcher(), ws.vault, ws.config.retention, ws.config.recall, None)
    heartbeats = {w.path for w in written if w.kind == "heartbeat"}
    asked = random.Random(13).sample([w for w in written if w.kind == "exchange"], min(queries, kinds["exchange"]))
    engine.recall("warm up", k=10, as_of=SYNTH_NOW)
    times: list[float] = []
    found = heartbeats_listed = 0
    for item in asked:
        started = time.perf_counter()
        context = engine.recall(item.question, k=10, as_of=SYNTH_NOW)
        times.append(time.perf_counter() - started)
        found += any(r.path == item.path for r in context.warm)
        heartbeats_listed += sum(1 for r in context.warm if r.path in heartbeats)
    ws.close()
    return {
        "summaries": count,
        "written": kinds,
        "days": DAYS,
        "words_first": {
            "s": round(words.elapsed_s, 2),
            "summaries_per_s": round(count / words.elapsed_s, 1),
            "notes_indexed": words.notes_indexed,
            "sessions_left_out": words.sessions_left_out,
            "chunks_queued": words.chunks_queued,
            "chunks_embedded": words.chunks_embedded,
        },
        "embedding": {
            "how": "measured: every queued chunk embedded with the real model after the words-first build",
            "embedder": model.model_id,
            "chunks": chunks,
            "tokens": tokens,
            "chunks_embedded": embedded.chunks_embedded,
            "titles_embedded": embedded.titles_embedded,
            "s": round(embed_s, 2),
            "model_s": round(embedded.embed_s, 2),
            "tokens_per_s": round(tokens / embedded.embed_s) if embedded.embed_s else None,
            "model_alone_sample": {
                "chunks": len(sample),
                "s": round(alone_s, 2),
                "tokens_per_s": round(sum(row.tokens for row in sample) / alone_s) if alone_s else None,
            },
        },
        "restart": {
            "s": round(again.elapsed_s, 3),
            "notes_indexed": again.notes_indexed,
            "notes_unchanged": again.notes_unchanged,
            "sessions_left_out": again.sessions_left_out,
            "chunks_embedded": again.chunks_embedded,
        },
        "one_more_summary": arrivals,
        "recall": {
            "queries": len(times),
            "p50_ms": round(statistics.median(times) * 1000, 2) if times else None,
            "p95_ms": round(percentile(times, 95) * 1000, 2) if times else None,
            "asked_summary_listed": found,
            "heartbeats_listed": heartbeats_listed,
        },
    }
