"""The package version, the one place it is written (pyproject.toml reads it; semver, docs/versioning.md)."""

__version__ = "0.1.0"
