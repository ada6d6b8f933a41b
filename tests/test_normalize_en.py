"""English's golden cases, written from English's own conventions (American: month first, AM/PM,
no "and" inside numbers; years in pairs; decimals digit by digit), not from a library's output."""

from __future__ import annotations

from normalize_cases import golden

CASES = [
    # cardinals, negatives, decimals, grouping
    ("I have 3 cats.", "I have three cats."),
    ("2350 people", "two thousand three hundred fifty people"),
    ("28,000 fans", "twenty-eight thousand fans"),
    ("1,234,567", "one million two hundred thirty-four thousand five hundred sixty-seven"),
    ("It is -4 outside", "It is minus four outside"),
    ("pi is 3.14", "pi is three point one four"),
    ("0.5", "zero point five"),
    ("9.9", "nine point nine"),
    # fractions, ordinals, percentages
    ("3/4 cup", "three quarters cup"),
    ("1/2", "one half"),
    ("2/3", "two thirds"),
    ("the 3rd floor", "the third floor"),
    ("21st century", "twenty-first century"),
    ("the 112th time", "the one hundred twelfth time"),
    ("45 %", "forty-five percent"),
    ("12.5% off", "twelve point five percent off"),
    # currencies, before and after, symbols and codes
    ("$1,234.56", "one thousand two hundred thirty-four dollars and fifty-six cents"),
    ("$1", "one dollar"),
    ("$0.99", "ninety-nine cents"),
    ("€5", "five euros"),
    ("5 €", "five euros"),
    ("£3.50", "three pounds and fifty pence"),
    ("10 USD", "ten dollars"),
    ("EUR 20", "twenty euros"),
    ("¥500", "five hundred yen"),
    ("$5k", "five thousand dollars"),
    ("$2.5M", "two point five million dollars"),
    # dates
    ("2026-12-08", "December eighth, twenty twenty-six"),
    ("12/08/2026", "December eighth, twenty twenty-six"),
    ("on 12/08", "on December eighth"),
    ("Dec 8, 2026", "December eighth, twenty twenty-six"),
    ("8 December 2026", "the eighth of December twenty twenty-six"),
    ("July 4th", "July fourth"),
    # times
    ("7:30 pm", "seven thirty P M"),
    ("7:05 AM", "seven oh five A M"),
    ("at 5 p.m. today", "at five P M today"),
    ("19:30", "nineteen thirty"),
    ("07:00", "seven o'clock"),
    ("00:15", "zero fifteen"),
    # years
    ("in 1999", "in nineteen ninety-nine"),
    ("since 2009", "since two thousand nine"),
    ("in 1905", "in nineteen oh five"),
    ("by 2000", "by two thousand"),
    ("1999 people", "one thousand nine hundred ninety-nine people"),
    # ranges
    ("10-20 °C", "ten to twenty degrees Celsius"),
    ("pages 5–9", "pages five to nine"),
    ("2020–2024", "twenty twenty to twenty twenty-four"),
    # units
    ("21.5 °C", "twenty-one point five degrees Celsius"),
    ("1 °C", "one degree Celsius"),
    ("70°F", "seventy degrees Fahrenheit"),
    ("100 km/h", "one hundred kilometers per hour"),
    ("5 kWh", "five kilowatt hours"),
    ("1 kWh", "one kilowatt hour"),
    ("2.5 kg", "two point five kilograms"),
    ("230 V", "two hundred thirty volts"),
    ("1013 hPa", "one thousand thirteen hectopascals"),
    ("6 ft", "six feet"),
    # phone numbers, addresses
    ("+49 30 1234567", "plus four nine, three zero, one two three four five six seven"),
    ("(555) 123-4567", "five five five, one two three, four five six seven"),
    ("me@example.com", "me at example dot com"),
    ("https://www.home-assistant.io/docs/", "W W W dot home dash assistant dot io slash docs"),
    ("example.org", "example dot org"),
    # abbreviations and initialisms, symbols
    ("Dr. Smith", "Doctor Smith"),
    ("Main St. and St. Louis", "Main Street and Saint Louis"),
    ("e.g. this", "for example this"),
    ("the USB port", "the U S B port"),
    ("NASA and NATO", "NASA and NATO"),
    ("Tom & Jerry", "Tom and Jerry"),
    ("THIS IS VERY LOUD", "THIS IS VERY LOUD"),
    # an LLM's markdown, HTML and emoji
    ("**Bold** and *italic* and __strong__", "Bold and italic and strong"),
    ("Use `hearth say` now", "Use hearth say now"),
    ("See [the docs](https://x.org/a_(b)).", "See the docs."),
    ("## Weather\nIt is sunny", "Weather.\nIt is sunny"),
    ("- milk\n- eggs\n1. first step", "milk.\neggs.\nfirst step."),
    ("Before\n```python\nprint(1)\n```\nAfter", "Before\nAfter"),
    ("Great job! 🎉👍🏽", "Great job! "),
    ("a<br>b <b>bold</b> &amp; more", "a. b bold and more"),
    ("> quoted text", "quoted text"),
    # left as they are
    ("snake_case and 5 * 3", "snake_case and five * three"),
    ("version 2", "version two"),
]


test_english, test_normalizing_again_changes_nothing = golden("english", CASES)
