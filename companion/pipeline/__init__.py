"""The pipeline wing: session post-processing over history logs (retain, archive, redact, forward, summarize,
extract, embed), its triggers and the cold tier of archives."""
