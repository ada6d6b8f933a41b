"""`hearth normalize`: what will be spoken for a text (no model loaded).

    hearth normalize "It's 21.5 °C at 7:30 pm." --language english
    hearth normalize "<speak>...</speak>" --ssml --json     the parts, each with its span map
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hearth.cli.arguments import add_lexicon, add_option_flags, option_values, read_text
from hearth.errors import InputError
from hearth.options import check_normalize
from hearth.text.normalize import LANGUAGES
from hearth.text.normalize.document import speakable
from hearth.text.normalize.language import language_name
from hearth.text.normalize.lexicon import Lexicon

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:  # noqa: ANN401 - the command registry
    p = sub.add_parser("normalize", help="print what will be spoken for a text (numbers, dates, units, markdown...)")
    p.add_argument("text", help="the text, or - to read it from stdin")
    p.add_argument("--language", default="auto",
                   help=f"the language: auto (each sentence by its script, the default) or {', '.join(LANGUAGES)}")
    p.add_argument("--json", action="store_true",
                   help="JSON: the spoken text, its spans and words, each with the characters of the text it came "
                        "from (with --ssml, a list of parts)")
    p.add_argument("--voice", default=None, help="whose lexicon respellings apply (a voice's own, beside everyone's)")
    add_option_flags(p, ("normalize", "text_format"))
    add_lexicon(p)
    p.set_defaults(run=_normalize)


def _normalize(args: argparse.Namespace) -> int:
    text = read_text(args.text)
    language = language_name(args.language)
    if language != "auto" and language not in LANGUAGES:
        raise InputError(f"--language {args.language!r}: choose auto or one of {', '.join(LANGUAGES)} "
                         "(or its code: en, zh, ...)")
    try:
        lexicon = Lexicon.given(args.lexicon)
    except ValueError as e:
        raise InputError(f"--lexicon: {e}") from None
    options = option_values(args)
    normalize = check_normalize(options.get("normalize"), lexicon, args.voice)
    try:
        parts = speakable(text, language, normalize, options.get("text_format") or "text")
    except ValueError as e:
        raise InputError(str(e)) from None
    if not args.json:
        sys.stdout.write("".join(part.text for part in parts) + "\n")
        return 0
    if options.get("text_format") != "ssml":
        json.dump(parts[0].normalized.to_json(), sys.stdout, ensure_ascii=False)
    else:
        json.dump([{**part.normalized.to_json(), "voice": part.voice, "language": part.language,
                    "speed": part.speed, "pause_before_s": part.pause_before_s,
                    "marks": [{"name": n, "offset": o} for n, o in part.marks]} for part in parts],
                  sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
