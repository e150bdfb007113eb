"""One error type per area, all under `CompanionError`.

Messages say what happened, to which file, and what to do about it, so the CLI can print them as they are.
"""

from __future__ import annotations


class CompanionError(Exception):
    """Base of every error the companion raises on purpose."""

    exit_code = 1


class ConfigError(CompanionError):
    """The vault's `.companion/companion.yaml` (or another config file) is invalid."""

    exit_code = 2


class VaultError(CompanionError):
    """The vault cannot be found or read as a whole."""

    exit_code = 2


class NoteError(CompanionError):
    """One note cannot be read or parsed; the run goes on without it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ModelError(CompanionError):
    """The embedding model is missing, broken, or not the one the index was built with."""

    exit_code = 3


class StoreError(CompanionError):
    """The index store (Chroma or the lexical index) is unreachable, locked or corrupt."""

    exit_code = 4


class IndexLockedError(StoreError):
    """Another process already writes this vault's index."""

    exit_code = 5


class CurationError(CompanionError):
    """A curation (pin, retag, archive, delete, merge, undo) was refused or failed; the message says what to do."""


class NotConfirmedError(CurationError):
    """A curation that moves or removes notes was not confirmed (no terminal to ask on and no `--yes`)."""

    exit_code = 2


class NotFoundError(CurationError):
    """The note (or audit entry) a curation names does not exist: a bad argument."""

    exit_code = 2


class NothingToUndoError(CurationError):
    """`undo` found no curation left to undo: nothing was done (exit code 1, as for any refused curation)."""


class HistoryError(CompanionError):
    """A session history log cannot be read, or changed in a way a run cannot follow (truncated, replaced)."""

    exit_code = 6


class ProcessError(CompanionError):
    """A post-processing run was refused or failed; the message says what was (and was not) written."""

    exit_code = 7


class ArchiveError(CompanionError):
    """An archive file (`.jsonl.xz`) of the cold tier cannot be read; listings and searches skip it and go on."""

    exit_code = 8


class ContextError(CompanionError):
    """The context cannot be assembled (the policy and instruction alone exceed the budget)."""

    exit_code = 2


class ExtractError(CompanionError):
    """An extracted note cannot be read or updated; reported as a warning naming the note, not raised."""


class TranscriptError(CompanionError):
    """A history note cannot be updated (not ours, edited, unreadable); reported as a warning, never raised."""


class SummarizeError(CompanionError):
    """A model's reply is unusable or its endpoint unreachable, or the note cannot be updated; reported, not raised."""


class ForwardError(CompanionError):
    """A forward sink could not be reached or written, or its state file is damaged; reported, never raised out."""


class NoteChanged(ProcessError):
    """A derived note changed on disk between the run's read and its write (the user edited it meanwhile)."""


class AgentInputError(CompanionError):
    """What an agent asked for is invalid: names the argument, so the agent can correct that one."""

    exit_code = 2

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        """The argument at fault (`path`, `hops`...)."""
        self.reason = message
        """What is wrong with it, and what would be accepted."""
        super().__init__(f"{field}: {message}")
