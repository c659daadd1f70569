"""Document formats: one module per format, each a reader `(raw bytes, path) -> sections`
registered by suffix in `readers.py`.

A module imports its library inside the reader, so `llm --help` never pays for pypdf or
python-docx, and a missing optional extra is a counted skip naming the install command
(`readers.MissingExtra`) rather than an import error at start-up.
"""
