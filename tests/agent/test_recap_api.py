"""`recall_recent` with a period: every session of it, newest first, each with its exchange, on a real vault and a
real index (hashing embedder); bad periods are errors naming the argument."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from companion.agent.api import AgentApi
from companion.errors import AgentInputError
from tests.helpers.recapvault import NOW, TOKEN, Written, expected, indexed_recap_vault, last_monday

AS_OF = NOW.isoformat()
MONDAY = last_monday(NOW.date())


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AgentApi, dict[str, Written]]]:
    for ws, sessions in indexed_recap_vault(tmp_path_factory, "recap-api"):
        yield AgentApi(ws), sessions


def test_a_period_in_words_lists_its_sessions_newest_first(api: tuple[AgentApi, dict[str, Written]]) -> None:
    agent, sessions = api
    found = agent.recall_recent(period="last week", as_of=AS_OF)
    assert [t.path for t in found.sessions] == expected(sessions, MONDAY, MONDAY + dt.timedelta(days=6), NOW)
    assert found.period is not None and found.period.phrase == "last week" and found.more == 0
    restic = next(t for t in found.sessions if t.path == sessions["restic"].path)
    assert restic.summary.endswith("→ The password file path was wrong; fixed it.")
    assert TOKEN not in restic.summary
    data = found.as_json()
    assert data["period"] == {"start": str(MONDAY), "end": str(MONDAY + dt.timedelta(days=6)), "phrase": "last week"}


def test_a_limit_says_how_many_more_and_days_work_as_well(api: tuple[AgentApi, dict[str, Written]]) -> None:
    agent, sessions = api
    found = agent.recall_recent(limit=1, period="last week", as_of=AS_OF)
    assert [t.path for t in found.sessions] == [sessions["restic"].path] and found.more == 3
    day = agent.recall_recent(since="2026-11-03", until="2026-11-03", as_of=AS_OF)
    assert [t.path for t in day.sessions] == [sessions["car"].path, sessions["dentist"].path]
    march = agent.recall_recent(period="in March", as_of=AS_OF)
    assert [t.path for t in march.sessions] == [sessions["easter"].path, sessions["fence"].path]
    # Without a period, the last hours as before.
    assert agent.recall_recent(hours=24, as_of=AS_OF).period is None


@pytest.mark.parametrize(
    ("arguments", "field", "says"),
    [
        ({"period": "whenever it suits"}, "period", "names no past period"),
        ({"period": "in 2031"}, "period", "names no past period"),  # a period yet to come
        ({"period": "last week", "hours": 24}, "hours", "not both"),
        ({"period": "last week", "since": "2026-11-01"}, "period", "not both"),
        ({"until": "2026-11-03"}, "since", "until alone"),
        ({"since": "2026-11-05", "until": "2026-11-03"}, "until", "before since"),
        ({"since": "2026-12-01"}, "since", "after 2026-11-22"),
        ({"since": "last tuesday"}, "since", "not a date"),
        ({"period": "x" * 201}, "period", "at most 200"),
    ],
)
def test_bad_periods_name_the_argument(
    api: tuple[AgentApi, dict[str, Written]], arguments: dict[str, object], field: str, says: str
) -> None:
    agent, _ = api
    with pytest.raises(AgentInputError) as caught:
        agent.recall_recent(as_of=AS_OF, **arguments)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert says in caught.value.reason


def test_a_period_within_the_hot_window_lists_hot_sessions_too(api: tuple[AgentApi, dict[str, Written]]) -> None:
    agent, sessions = api
    found = agent.recall_recent(period="yesterday", as_of=AS_OF)
    assert [t.path for t in found.sessions] == [sessions["film"].path, sessions["train"].path]
    assert [t.summary for t in found.sessions] == [
        "A film for tonight? → Paterson.",
        "Which train to Lyon? → The 9:04 from Geneva.",
    ]
