"""The warm pane's note cell: the name first, the heading only when it says more than the name, the folder last."""

from __future__ import annotations

from widgets.warm_pane import note_cell


def test_the_name_comes_first_and_the_folder_last_dimmed() -> None:
    cell = note_cell("Projects/Clients/Acme/Greenhouse timer.md", "Schedule")
    assert cell.plain == "Greenhouse timer › Schedule  Projects/Clients/Acme/"
    dimmed = [cell.plain[span.start : span.end] for span in cell.spans if "dim" in str(span.style)]
    assert dimmed == ["  Projects/Clients/Acme/"]


def test_a_note_at_the_root_has_no_folder() -> None:
    assert note_cell("Inbox.md", when="2026-11-28").plain == "Inbox (2026-11-28)"


def test_a_heading_that_repeats_the_name_after_its_day_is_left_out() -> None:
    dated = "Conversations/2026-08-30 Invoices and receipts.md"
    assert note_cell(dated, "Invoices and receipts").plain == "2026-08-30 Invoices and receipts  Conversations/"
    assert note_cell("Invoices and receipts.md", "invoices AND receipts ").plain == "Invoices and receipts"
    assert note_cell(dated, "Receipts").plain == "2026-08-30 Invoices and receipts › Receipts  Conversations/"
    assert note_cell(dated, "2026-08-30").plain.startswith("2026-08-30 Invoices and receipts › 2026-08-30")
