"""Importing the sessions coding agents keep in their own folders (Claude Code, Codex CLI, Gemini CLI) as
conversation notes: one note per session, user and agent text kept, tool calls as one line each, tool output and
reasoning left out, secrets redacted, never over a note edited by hand (`companion import`)."""
