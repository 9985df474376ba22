"""The version of quiver, stated once: pyproject.toml reads it, logs record it, `trace --version` prints it.

A leaf module (no imports), so every layer can read it without pulling in the layers above."""

__version__ = "0.1.0"
