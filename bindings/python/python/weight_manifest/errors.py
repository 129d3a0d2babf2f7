"""The one way Python-side checks raise: a ManifestError shaped like the core's."""

from __future__ import annotations

from typing import Optional

from ._native import ManifestError


def manifest_error(code: str, message: str, path: Optional[str] = None) -> ManifestError:
    """A ManifestError with ``code`` and the JSON pointer ``path`` (or None); no JSON
    location and no detail, as the core leaves them for a rejection outside a document."""
    error = ManifestError(message)
    error.code = code
    error.path = path
    error.line = error.column = error.offset = None
    error.detail = None
    return error
