"""Tests of `pydantic_lenient.types` (a folder named ``types`` would shadow the standard library's
``types`` for the servers run as ``python tests/<server>.py``, whose folder is then first on the path)."""
