"""Curation sessions with suggestions: the review queue of a vault, gathered from its index, and acting on it."""
