"""The languages Qwen3-ASR transcribes, by the names the model writes and takes ("English",
"Chinese", ...), and the check of a language a caller asks for."""

from __future__ import annotations

from hearth.errors import InputError

__all__ = ["LANGUAGES", "canonical_language"]

# The 30 languages of the Qwen3-ASR release (qwen-asr 0.0.6's list, and the released
# Qwen3-ASR-0.6B config.json's support_languages), in that order.
LANGUAGES: tuple[str, ...] = (
    "Chinese", "English", "Cantonese", "Arabic", "German", "French", "Spanish", "Portuguese", "Indonesian",
    "Italian", "Korean", "Russian", "Thai", "Vietnamese", "Japanese", "Turkish", "Hindi", "Malay", "Dutch",
    "Swedish", "Danish", "Finnish", "Polish", "Czech", "Filipino", "Persian", "Greek", "Romanian", "Hungarian",
    "Macedonian",
)


def canonical_language(name: str | None, known: tuple[str, ...] = LANGUAGES, param: str = "language") -> str | None:
    """`name` as the model spells it (first letter upper case, the rest lower: "cHINese" ->
    "Chinese"); None for None or blank (no language forced). A name outside `known` is an InputError."""
    if name is None or not str(name).strip():
        return None
    s = str(name).strip()
    canonical = s[:1].upper() + s[1:].lower()
    if canonical not in known:
        raise InputError(f"unknown language {name!r}; choose one of: {', '.join(known)} (or none, to let the "
                         "model tell)", param)
    return canonical
