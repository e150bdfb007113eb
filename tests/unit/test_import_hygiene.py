"""The domain and the indexer run without the UI: importing them must not import Textual."""

from __future__ import annotations

import subprocess
import sys

DOMAIN_AND_INDEXER = [
    "companion.atomic",
    "companion.folderlock",
    "companion.audit",
    "companion.config",
    "companion.curation",
    "companion.discovery",
    "companion.embeddings",
    "companion.frontmatter_edit",
    "companion.fusion",
    "companion.decay",
    "companion.access",
    "companion.retention",
    "companion.graph",
    "companion.links",
    "companion.notes",
    "companion.parse",
    "companion.resolve",
    "companion.sessions",
    "companion.vault",
    "companion.yamlsafe",
    "companion.specs",
    "companion.history",
    "companion.processors",
    "companion.pipeline",
    "companion.coldtier",
    "companion.extract",
    "companion.forward",
    "companion.summarize",
    "companion.triggers",
    "companion.candidates",
    "companion.context",
    "companion.dates",
    "companion.evaluate",
    "companion.hot",
    "companion.recall",
    "companion.recalled",
    "companion.relink",
    "companion.scope",
    "companion.sessionrefs",
    "companion.temporal",
    "companion.tokens",
    "companion.words",
    "companion.sqlrows",
    "companion.hashembed",
    "companion.modelbuild",
    "companion.onnxgraph",
    "indexer.chunking",
    "indexer.lock",
    "indexer.manifest",
    "indexer.search",
    "indexer.store",
    "indexer.sync",
    "indexer.watcher",
]


def test_domain_and_indexer_do_not_import_textual() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in DOMAIN_AND_INDEXER)
        + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'widgets')))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_check_itself_can_fail() -> None:
    # Guard against a check that passes vacuously: importing Textual must be seen.
    code = "import sys, textual.app\nprint('textual' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
