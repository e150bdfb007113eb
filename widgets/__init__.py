"""Textual widgets of the terminal app; each module holds one widget and depends only on domain types."""
