"""A pronunciation lexicon: words respelled as they should be said, from a TOML file.

    # Whole words only. A word written in lower case matches it in any case ("qwen" matches
    # "Qwen" and "QWEN"); a word with a capital matches exactly that spelling ("HA", not "ha").
    [words]                      # every language
    Qwen = "chwen"
    HA = "Home Assistant"

    [german]                     # one language (its name as --language takes it)
    Hearth = "Harss"

    [voices.ryan]                # one voice, every language
    tomato = "tomahto"

    [english.voices.aiden]       # one voice in one language
    route = "rowt"

The most specific entry wins (a voice's in a language, a voice's, a language's, everyone's). A
respelling is said as it is written: it is not read by the other rules again. Words in Chinese,
Japanese and Korean, which have no spaces around them, match wherever they stand.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from hearth.text.normalize.language import LANGUAGES, Rule

__all__ = ["Lexicon", "LexiconError"]

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


class LexiconError(ValueError):
    """A lexicon file that cannot be used, with where and why."""


@dataclass(frozen=True)
class Lexicon:
    """{(language or None, voice or None): {word: respelling}}."""

    entries: dict[tuple[str | None, str | None], dict[str, str]]
    source: str = "<lexicon>"

    @classmethod
    def given(cls, value: str | os.PathLike[str] | Lexicon | None) -> Lexicon | None:
        """A lexicon as a caller gives it: a file's path, a Lexicon, or None. Raises LexiconError."""
        if value is None or isinstance(value, Lexicon):
            return value
        return cls.load(Path(value), tuple(LANGUAGES))

    @classmethod
    def load(cls, path: str | Path, languages: tuple[str, ...]) -> Lexicon:
        """Read `path`; `languages` are the language names a table may have."""
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise LexiconError(f"cannot read the lexicon {path}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise LexiconError(f"the lexicon {path} is not valid TOML: {e}") from None
        except UnicodeDecodeError:
            raise LexiconError(f"the lexicon {path} is not UTF-8 text") from None
        return cls.from_dict(data, languages, str(path))

    @classmethod
    def from_dict(cls, data: dict, languages: tuple[str, ...], source: str = "<lexicon>") -> Lexicon:
        entries: dict[tuple[str | None, str | None], dict[str, str]] = {}

        def table(where: str, value: object, key: tuple[str | None, str | None]) -> None:
            if not isinstance(value, dict):
                raise LexiconError(f"{source}: [{where}] must be a table of word = \"respelling\"")
            words = {}
            for word, said in value.items():
                if word == "voices" and key[1] is None:
                    if not isinstance(said, dict):
                        raise LexiconError(f"{source}: [{where}.voices] must hold one table per voice")
                    for voice, inner in said.items():
                        table(f"{where}.voices.{voice}", inner, (key[0], voice.lower()))
                    continue
                if not isinstance(said, str) or not said.strip() or not word.strip():
                    raise LexiconError(f"{source}: [{where}] {word!r}: the respelling must be a non-empty string")
                words[word.strip()] = said.strip()
            if words:
                entries.setdefault(key, {}).update(words)

        for name, value in data.items():
            if name == "words":
                table("words", value, (None, None))
            elif name == "voices":
                if not isinstance(value, dict):
                    raise LexiconError(f"{source}: [voices] must hold one table per voice")
                for voice, inner in value.items():
                    table(f"voices.{voice}", inner, (None, voice.lower()))
            elif name in languages:
                table(name, value, (name, None))
            else:
                raise LexiconError(f"{source}: unknown table [{name}]; use [words], [voices.NAME] or a language: "
                                   f"{', '.join(languages)}")
        return cls(entries, source)

    def words_for(self, language: str, voice: str | None) -> dict[str, str]:
        """The respellings that apply, the most specific last (it wins)."""
        out: dict[str, str] = {}
        voice = voice.lower() if voice else None
        for key in ((None, None), (language, None), (None, voice), (language, voice)):
            if voice is not None or key[1] is None:
                out.update(self.entries.get(key, {}))
        return out

    def rules(self, language: str, voice: str | None) -> list[Rule]:
        """The lexicon as rules for the normalizer (tried before every other rule)."""
        words = self.words_for(language, voice)
        if not words:
            return []
        exact = {w: s for w, s in words.items() if w != w.lower()}
        folded = {w.lower(): s for w, s in words.items() if w == w.lower()}
        alternatives = sorted(words, key=len, reverse=True)
        parts = []
        for word in alternatives:
            body = re.escape(word) if word in exact else f"(?i:{re.escape(word)})"
            parts.append(body if _CJK.search(word) else rf"(?<![\w]){body}(?![\w])")
        pattern = re.compile("|".join(parts))

        def say(m: re.Match[str]) -> str | None:
            written = m.group()
            return exact.get(written) or folded.get(written.lower())

        return [Rule("lexicon", pattern, say, 0)]
