"""The languages Qwen3-ASR transcribes, by the names the model writes and takes ("English",
"Chinese", ...), and the check of a language a caller asks for."""

from __future__ import annotations

from hearth.errors import InputError

__all__ = ["CODES", "LANGUAGES", "LANGUAGE_CODES", "canonical_language", "language_named"]

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


# ISO 639-1 codes (639-3 where there is none: Cantonese, Filipino) of the 30 languages, as OpenAI's
# transcription API and Home Assistant name them.
LANGUAGE_CODES: dict[str, str] = {
    "zh": "Chinese", "en": "English", "yue": "Cantonese", "ar": "Arabic", "de": "German", "fr": "French",
    "es": "Spanish", "pt": "Portuguese", "id": "Indonesian", "it": "Italian", "ko": "Korean", "ru": "Russian",
    "th": "Thai", "vi": "Vietnamese", "ja": "Japanese", "tr": "Turkish", "hi": "Hindi", "ms": "Malay", "nl": "Dutch",
    "sv": "Swedish", "da": "Danish", "fi": "Finnish", "pl": "Polish", "cs": "Czech", "fil": "Filipino",
    "tl": "Filipino", "fa": "Persian", "el": "Greek", "ro": "Romanian", "hu": "Hungarian", "mk": "Macedonian",
}
CODES: dict[str, str] = {name: code for code, name in reversed(LANGUAGE_CODES.items())}  # name -> its code


def language_named(given: str | None, known: tuple[str, ...] = LANGUAGES, param: str = "language") -> str | None:
    """A language given by name ("english", "English") or by code ("en", "en-US", "zh_CN", "yue"),
    as the model spells it; None for none. Unknown ones are an InputError listing the codes."""
    if given is None or not str(given).strip():
        return None
    key = str(given).strip().lower().replace("_", "-")
    name = LANGUAGE_CODES.get(key) or LANGUAGE_CODES.get(key.split("-", 1)[0])
    if name is not None and name in known:
        return name
    try:
        return canonical_language(given, known, param)
    except InputError:
        codes = ", ".join(sorted(CODES[n] for n in known if n in CODES))
        raise InputError(f"unknown language {given!r}; give a code ({codes}) or a name ({', '.join(known)}), or none "
                         "to let the model tell", param) from None
