"""What Qwen3-ASR writes, read as qwen-asr reads it: "language English<asr_text>the words" (or the
words alone when the language was forced), runaway repetitions cut short, and the languages of a
long recording's pieces merged.
"""

from __future__ import annotations

__all__ = ["REPEAT_LIMIT", "cut_repetitions", "merge_languages", "parse_transcript"]

REPEAT_LIMIT = 20  # qwen-asr's threshold: more repeats than this are cut to one
_PATTERN_LONGEST = 20  # the longest repeating pattern looked for, in characters
_TAG = "<asr_text>"
_PREFIX = "language "


def _cut_runs(s: str, limit: int) -> str:
    """Runs of one character longer than `limit` become that character once."""
    out, i = [], 0
    while i < len(s):
        j = i + 1
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(s[i] if j - i > limit else s[i:j])
        i = j
    return "".join(out)


def _repeats_at(s: str, i: int, k: int, limit: int) -> bool:
    pattern = s[i : i + k]
    return all(s[i + r * k : i + (r + 1) * k] == pattern for r in range(1, limit))


def _cut_patterns(s: str, limit: int) -> str:
    """The first place where a pattern of 1..20 characters repeats `limit` times in a row keeps one
    copy of it; the text after its last repeat is cut the same way. Text before it is kept as is."""
    n = len(s)
    if n < 2 * limit:
        return s
    out: list[str] = []
    for i in range(n - 2 * limit + 1):
        for k in range(1, _PATTERN_LONGEST + 1):
            if i + k * limit > n:
                break
            if _repeats_at(s, i, k, limit):
                end = i + limit * k
                while end + k <= n and s[end : end + k] == s[i : i + k]:
                    end += k
                return "".join(out) + s[i : i + k] + _cut_patterns(s[end:], limit)
        out.append(s[i])
    return "".join(out) + s[n - 2 * limit + 1 :]


def cut_repetitions(text: str, limit: int = REPEAT_LIMIT) -> str:
    """A character repeated more than `limit` times, then a pattern repeated `limit` times or more,
    cut to one occurrence (what a looping decoder writes)."""
    return _cut_patterns(_cut_runs(text, limit), limit)


def parse_transcript(raw: str, forced_language: str | None = None) -> tuple[str, str]:
    """(language, text) from the decoded output. With a forced language the output is the text alone.
    Otherwise the language is named before `<asr_text>` ("language None" for silence gives no
    language); output without the tag is all text, of no known language."""
    s = (raw or "").strip()
    if not s:
        return "", ""
    s = cut_repetitions(s)
    if forced_language:
        return forced_language, s
    if _TAG not in s:
        return "", s.strip()
    meta, text = s.split(_TAG, 1)
    if "language none" in meta.lower():
        return "", text.strip()
    language = ""
    for raw_line in meta.splitlines():
        line = raw_line.strip()
        if line.lower().startswith(_PREFIX):  # the first line naming a language names it
            name = line[len(_PREFIX) :].strip()
            if name:
                language = name[:1].upper() + name[1:].lower()
            break
    return language, text.strip()


def merge_languages(languages: list[str]) -> str:
    """The pieces' languages joined by commas, blanks and immediate repeats dropped: "Chinese,English"."""
    out: list[str] = []
    for given in languages:
        name = (given or "").strip()
        if name and (not out or out[-1] != name):
            out.append(name)
    return ",".join(out)
