"""Why an item sits where it does: a warm note's score part by part, or the rule that put a session in hot."""

from __future__ import annotations

from companion.recall.results import RecalledContext
from companion.retention import RetentionPolicy


def explain_lines(context: RecalledContext, path: str, policy: RetentionPolicy) -> list[str]:
    """The explanation of one item of a recall, in words, one part per line."""
    window = f"the last {policy.hot_window_days} days"
    for rank, session in enumerate(context.sessions, 1):
        if session.path == path:
            newer = sum(1 for s in context.sessions[: rank - 1] if s.session_key == session.session_key)
            return [
                f"hot: session {session.date[:10]} {session.time[:5]} of {session.session_key}",
                f"within {window}, and number {newer + 1} of at most hot_limit={policy.hot_limit} per session key",
                "hot sessions go to the agent as they are: no score, no decay",
            ]
    for session in context.pushed_out:
        if session.path == path:
            return [
                f"pushed out of hot: session {session.date[:10]} {session.time[:5]} of {session.session_key}",
                f"it lies within {window}, but {session.session_key} has hot_limit={policy.hot_limit} newer sessions",
                "it is still recalled by the temporal tier while recent, and by search (warm) after that",
            ]
    # The rank among what the list shows (the matches, or the closest few when none): the rest is not listed.
    shown = context.shown(len(context.results))
    listed = {item.path for item in shown}
    hidden = [item for item in context.results if item.path not in listed]
    for rank, item in enumerate((*shown, *hidden), 1):
        if item.path != path:
            continue
        where = (
            f"rank {rank} of {len(shown)}"
            if rank <= len(shown)
            else "below the relevance floor, so not listed among the matches"
        )
        lines = [f"{item.tier}: {where} for {context.query!r}"]
        if item.explanation is not None:
            lines.extend(item.explanation.lines())
        elif item.tier == "temporal":
            lines.append("recent session: listed by time by the temporal tier, not scored")
        else:
            lines.append(f"{item.tier} item: listed, not scored")
        return lines
    return [f"{path} is not among the items recalled now (search for it, or lower the knobs that hide it)"]
