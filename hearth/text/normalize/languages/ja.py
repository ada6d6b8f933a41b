"""Japanese: numbers in kanji numerals, grouped by 万, 億 and 兆 (二万八千, 一億), with no word for a
gap (千五 for 1005) and no 一 before 十, 百 or 千 (十, 百, 千) except 一千 before 万, 億 and 兆
(一千万, the reading いっせんまん) and 一 before those (一万, 一億). Counters keep their kanji
(三人, 五個, 二回): the model reads them with their own sound changes (三本: さんぼん).

num2words 0.5.14 has Japanese; it is not used: it writes 0 as 零 (read れい; speech says ゼロ),
drops the 一 of 一千万, and reads a year as an era (2026 -> 令和八年).

Choices where usage varies (the most common reading, tested):
- years as numbers: 2026年 -> 二千二十六年 (not digit by digit as in Chinese);
- zero as ゼロ (0.5 -> ゼロ点五, 1.05 -> 一点ゼロ五), except the hour 零時;
- temperatures below zero 氷点下 (-3.5℃ -> 氷点下三点五度, the weather report's word); °F as 華氏…度,
  other negatives マイナス;
- km/h as 時速…キロメートル, m/s as 秒速…メートル (the unit's name around the number);
- ranges with から: 10～20℃ -> 十から二十度;
- money: 2350円 -> 二千三百五十円, $3.99 -> 三点九九ドル;
- phone numbers in katakana with the phone reading's long ニー and ゴー, the groups joined by の
  (090-1234-5678 -> ゼロキューゼロのイチニーサンヨンのゴーロクナナハチ), and so are post codes and
  codes named by the word before them (暗証番号は1234 -> 暗証番号はイチニーサンヨン);
- Latin letters by their Japanese names (USB -> ユーエスビー); an address's marks: ドット, アットマーク.
"""

from __future__ import annotations

import re

from hearth.text.normalize.language import Rule, word_table
from hearth.text.normalize.languages.east_asian import EastAsian

__all__ = ["Japanese"]

_KANJI = "〇一二三四五六七八九"

_LETTERS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (
    "エー", "ビー", "シー", "ディー", "イー", "エフ", "ジー", "エイチ", "アイ", "ジェー", "ケー", "エル", "エム",
    "エヌ", "オー", "ピー", "キュー", "アール", "エス", "ティー", "ユー", "ブイ", "ダブリュー", "エックス", "ワイ",
    "ゼット"),
    strict=True))


def _group(n: int, big: bool) -> str:
    """1..9999; `big`: before 万, 億 or 兆, where 1 is 一 and 1000 is 一千."""
    if n == 1 and big:
        return "一"
    out = []
    for value, name in ((1000, "千"), (100, "百"), (10, "十")):
        d = n // value % 10
        if d:
            out.append(("一" if value == 1000 and big else "") + name if d == 1 else _KANJI[d] + name)
    return "".join(out) + (_KANJI[n % 10] if n % 10 else "")


class Japanese(EastAsian):
    code = "ja"
    name = "japanese"
    space_between_words = False
    below_zero = "氷点下"
    degree = "度"
    zero = "ゼロ"
    phone_digits = ("ゼロ", "イチ", "ニー", "サン", "ヨン", "ゴー", "ロク", "ナナ", "ハチ", "キュー")
    phone_joint = "の"
    words = word_table("minus マイナス; point 点; to から; percent パーセント; plus プラス; and と; ratio 対")
    marks = word_table(
        ". ドット; @ アットマーク; / スラッシュ; : コロン; - ハイフン; _ アンダースコア; + プラス; ? クエスチョン; "
        "= イコール; & アンド; # シャープ; ~ チルダ; % パーセント")
    symbols = word_table("& アンド; + プラス; = イコール; × かける; ÷ 割る; ° 度")
    abbreviations = word_table(
        "TEL: 電話; Tel: 電話; FAX: ファックス; Fax: ファックス; PM2.5: ピーエム二点五; PM10: ピーエム十; "
        "e.g.: 例えば; etc.: など; vs.: 対; vs: 対; VS: 対; (株): 株式会社; （株）: 株式会社; ㈱: 株式会社; "
        "(有): 有限会社; （有）: 有限会社; ㈲: 有限会社", ": ")
    currency_names = word_table(
        "USD ドル; EUR ユーロ; GBP ポンド; JPY 円; CNY 元; KRW ウォン; RUB ルーブル; BRL レアル; CHF スイスフラン; "
        "INR ルピー; CAD カナダドル; AUD オーストラリアドル; MXN メキシコペソ; SEK スウェーデンクローナ; PLN ズロチ")
    # no K: 4K and 8K are screens' resolutions far more often than kelvins
    unit_names = word_table(
        "°C 度; °F 華氏{}度; km/h 時速{}キロメートル; mph 時速{}マイル; m/s 秒速{}メートル; kWh キロワット時; "
        "MWh メガワット時; Wh ワット時; kW キロワット; MW メガワット; W ワット; V ボルト; mA ミリアンペア; A アンペア; "
        "Hz ヘルツ; kHz キロヘルツ; MHz メガヘルツ; GHz ギガヘルツ; km キロメートル; cm センチメートル; "
        "mm ミリメートル; m メートル; mi マイル; ft フィート; in インチ; kg キログラム; mg ミリグラム; g グラム; "
        "t トン; lb ポンド; oz オンス; l リットル; L リットル; ml ミリリットル; mL ミリリットル; hPa ヘクトパスカル; "
        "mbar ミリバール; bar バール; Pa パスカル; dB デシベル; lx ルクス; ppm ピーピーエム; "
        "µg/m³ マイクログラム毎立方メートル; m² 平方メートル; m³ 立方メートル; km² 平方キロメートル; KB キロバイト; "
        "kB キロバイト; MB メガバイト; GB ギガバイト; TB テラバイト; ms ミリ秒; s 秒; min 分; h 時間; "
        "mAh ミリアンペア時")
    code_cues = "暗証番号|番号|コード|パスワード|部屋"

    def grouped(self, n: int) -> str:
        out = []
        for size, unit in ((10**12, "兆"), (10**8, "億"), (10**4, "万")):
            group = n // size % 10000
            if group:
                out.append(_group(group, True) + unit)
        return "".join(out) + (_group(n % 10000, False) if n % 10000 else "")

    def ordinal(self, n: int) -> str:
        return self.cardinal(n) + "番目"

    def digit_names(self) -> list[str]:
        return ["ゼロ", *_KANJI[1:]]

    def fraction(self, numerator: int, denominator: int) -> str:
        return f"{self.cardinal(denominator)}分の{self.cardinal(numerator)}"

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        said = ("零" if hour == 0 else self.cardinal(hour)) + "時"
        if minute or second:
            said += self.cardinal(minute) + "分"
        if second:
            said += self.cardinal(second) + "秒"
        return {"am": "午前", "pm": "午後"}.get(period or "", "") + said

    def letters(self, text: str) -> str:
        return "".join(_LETTERS.get(c.upper(), "") if c.isalpha() else self.digits(c) if c.isdigit() else c
                       for c in text if not c.isspace())

    def extra_rules(self) -> list[Rule]:
        zero_hour = re.compile(r"(?=0)(?<![A-Za-z\d.,])0(?=時(?!間))")  # 0時: 零時, the hour's name
        postcode = re.compile(r"〒\s?(?P<a>\d{3})-(?P<b>\d{4})(?!\d)")
        return [
            *super().extra_rules(),
            Rule("time", zero_hour, lambda m: "零", 15),
            Rule("phone", postcode, lambda m: "郵便番号" + self.phone([m["a"], m["b"]], False), 12),
        ]
