"""The recall wing: the engine that ranks notes for a question (hot tier, hybrid search, decay, dates) and what
it needs: the index protocol, access statistics, context assembly, explanations and evaluation."""
