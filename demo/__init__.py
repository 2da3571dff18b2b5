"""The bundled sample corpus and `make demo` (see README.md)."""
