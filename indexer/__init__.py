"""The headless indexer: vault files in, chunks, vectors and a lexical index out.

It depends on `companion`'s domain modules and never on Textual or `widgets`.
"""
