"""An LLM's answer made speakable: markdown (headings, list markers, emphasis, links read as their
text, inline code read, fenced code left out), HTML tags and entities, and emoji. A heading or a
list item that ends without punctuation gets a full stop, so that it is said as a sentence of its
own. What is taken out maps to nothing; what stays keeps its place in the original (`Mapped`)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from hearth.text.normalize.mapped import Mapped, Said

__all__ = ["strip_emoji", "strip_html", "strip_markdown"]

_TABLE_PIPE = re.compile(r"[ \t]*\|[ \t]*")
_ENDS = ".!?;:。！？…"

_BLOCK_TAGS = re.compile(r"<\s*(?:br|/p|/li|/h[1-6]|/div|/tr|hr)\b[^>]*>", re.I)
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s+[^<>]*?)?\s*/?>|<!--.*?-->", re.S)
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")

# Emoji and pictographs, with what joins and modifies them (ZWJ, variation selector 16, skin
# tones, tag characters, keycap): taken out, with one space kept where they stood between words.
_EMOJI = re.compile(
    "(?:[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF\U0001F1E6-\U0001F1FF]"
    "[\uFE0E\uFE0F\u20E3\U0001F3FB-\U0001F3FF\U000E0020-\U000E007F]*"
    "(?:\u200D[\U0001F000-\U0001FAFF\u2600-\u27BF\u2640\u2642][\uFE0F\U0001F3FB-\U0001F3FF]*)*)+"
)


def _sentence(m: re.Match[str]) -> list[int | str | Said]:
    """A line's content kept, with a full stop added where it ends without one."""
    content = m.group(1)
    if not content.strip():
        return []
    return [1] if content.rstrip()[-1] in _ENDS else [1, Said(".", empty=True)]


def _drop(m: re.Match[str]) -> list[int | str | Said]:
    return []


def _keep(group: int) -> Callable[[re.Match[str]], list[int | str | Said]]:
    return lambda m: [group]


# Markdown taken out in this order (a code fence before the marks inside it, the marks of a line
# before those inside it), and what stays of each: nothing, the line said as a sentence, or the
# group that holds its text.
_MARKDOWN: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], list[int | str | Said]]], ...] = (
    (re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)\n?", re.M | re.S), _drop),  # a code fence
    (re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$\n?", re.M), _drop),  # a rule: ---
    (re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$\n?", re.M),
     _drop),  # a table's rule: |---|---|
    (re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t#]*$", re.M), _sentence),  # # a heading
    (re.compile(r"^[ \t]*>[ \t]?", re.M), _drop),  # > a quote
    (re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+(?=\S)(.*?)[ \t]*$", re.M), _sentence),  # - an item
    (re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)"), _keep(1)),  # ![an image](...)
    (re.compile(r"\[([^\]\n]+)\]\((?:[^()\n]|\([^)\n]*\))*\)"), _keep(1)),  # [a link](...)
    (re.compile(r"<((?:https?://|mailto:)[^>\s]+)>"), _keep(1)),  # <https://...>
    (re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S), _keep(2)),  # `code`
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), _keep(2)),  # **strong**
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), _keep(1)),  # ~~struck~~
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), _keep(1)),  # *emphasis*
    (re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"), _keep(1)),  # _emphasis_
)


def strip_markdown(text: Mapped) -> Mapped:
    for pattern, kept in _MARKDOWN:
        text = text.sub(pattern, kept)
    if "|" in text.text and re.search(r"^\s*\|.*\|\s*$", text.text, re.M):  # a table's cells, said in a row
        text = text.sub(_TABLE_PIPE, lambda m: [Said(", " if m.start() and m.end() < len(m.string) else " ")])
    return text


def strip_html(text: Mapped) -> Mapped:
    if "<" in text.text:
        text = text.sub(_BLOCK_TAGS, lambda m: [Said(". " if text_before_ends(m) else " ", empty=True)])
        text = text.sub(_TAG, lambda m: [])
    if "&" in text.text:
        text = text.sub(_ENTITY, lambda m: [html.unescape(m.group())] if html.unescape(m.group()) != m.group()
                        else [0])
    return text


def text_before_ends(m: re.Match[str]) -> bool:
    before = m.string[:m.start()].rstrip()
    return bool(before) and before[-1] not in _ENDS


def strip_emoji(text: Mapped) -> Mapped:
    return text.sub(_EMOJI, lambda m: [" "] if _between_words(m) else [])


def _between_words(m: re.Match[str]) -> bool:
    s = m.string
    return m.start() > 0 and m.end() < len(s) and not s[m.start() - 1].isspace() and not s[m.end()].isspace()
