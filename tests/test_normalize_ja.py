"""Japanese's golden cases, written from Japanese's own rules (what a speaker reading the text aloud
says), not from a library's output: kanji numerals by 万 and 億 with no word for a gap and no 一 before
十, 百 or 千; years as numbers; ゼロ for zero; 氷点下 for temperatures; 時速 around km/h; から for
ranges; phone numbers in their katakana reading joined by の."""

from __future__ import annotations

import pytest

from hearth.text.normalize import language_of, normalize

CASES = [
    # cardinals by 万, 億
    ("2350円", "二千三百五十円"),
    ("28,000人", "二万八千人"),
    ("2350", "二千三百五十"),
    ("1005", "千五"),
    ("300", "三百"),
    ("1100", "千百"),
    ("10000", "一万"),
    ("11000", "一万千"),
    ("10000000", "一千万"),
    ("100000000", "一億"),
    ("123456789", "一億二千三百四十五万六千七百八十九"),
    ("0", "ゼロ"),
    ("1万円", "一万円"),
    ("3.5万人", "三点五万人"),
    # counters keep their kanji
    ("3人", "三人"),
    ("1つ", "一つ"),
    ("5個", "五個"),
    ("2回", "二回"),
    ("1件", "一件"),
    ("3本", "三本"),
    # negatives and decimals
    ("-5", "マイナス五"),
    ("-1.5", "マイナス一点五"),
    ("-3.5℃", "氷点下三点五度"),
    ("最低気温-2度", "最低気温氷点下二度"),
    ("3.14", "三点一四"),
    ("0.5", "ゼロ点五"),
    ("1.05", "一点ゼロ五"),
    # fractions, ordinals, percentages
    ("3/4", "四分の三"),
    ("1/2", "二分の一"),
    ("第3回", "第三回"),
    ("3番目", "三番目"),
    ("3位", "三位"),
    ("15%", "十五パーセント"),
    ("12.5%", "十二点五パーセント"),
    ("-3%", "マイナス三パーセント"),
    ("10-20%", "十から二十パーセント"),
    # money
    ("¥2,350", "二千三百五十円"),
    ("￥1,000", "千円"),
    ("$5", "五ドル"),
    ("$3.99", "三点九九ドル"),
    ("€10", "十ユーロ"),
    ("£3.50", "三点五ポンド"),
    ("100 USD", "百ドル"),
    ("$5k", "五千ドル"),
    ("$2.5M", "二百五十万ドル"),
    # dates and years: a year as a number
    ("2026年12月8日", "二千二十六年十二月八日"),
    ("2026-12-08", "二千二十六年十二月八日"),
    ("2026/12/08", "二千二十六年十二月八日"),
    ("12/8", "十二月八日"),
    ("1990年代", "千九百九十年代"),
    ("令和8年", "令和八年"),
    # times
    ("19:30", "十九時三十分"),
    ("7:05", "七時五分"),
    ("0:15", "零時十五分"),
    ("12:00", "十二時"),
    ("10:20:30", "十時二十分三十秒"),
    ("7:30 PM", "午後七時三十分"),
    ("午前9時", "午前九時"),
    ("0時30分", "零時三十分"),
    ("2026年12月8日 19:30", "二千二十六年十二月八日 十九時三十分"),
    # ranges
    ("10～20", "十から二十"),
    ("10〜20℃", "十から二十度"),
    ("-5～3℃", "氷点下五度から三度"),
    ("3～5人", "三から五人"),
    ("2020～2024年", "二千二十から二千二十四年"),
    ("営業時間10:00～18:00", "営業時間十時から十八時"),
    ("午後3時～5時", "午後三時から五時"),
    ("5月1日-5月5日", "五月一日から五月五日"),
    ("16:9", "十六対九"),
    # units
    ("気温は21.5℃です", "気温は二十一点五度です"),
    ("21.5 °C", "二十一点五度"),
    ("70°F", "華氏七十度"),
    ("100km/h", "時速百キロメートル"),
    ("10m/s", "秒速十メートル"),
    ("5kWh", "五キロワット時"),
    ("2.5kg", "二点五キログラム"),
    ("500ml", "五百ミリリットル"),
    ("1013hPa", "千十三ヘクトパスカル"),
    ("84㎡", "八十四平方メートル"),
    ("16GB", "十六ギガバイト"),
    ("100W", "百ワット"),
    ("5000mAh", "五千ミリアンペア時"),
    # phone numbers and post codes
    ("090-1234-5678", "ゼロキューゼロのイチニーサンヨンのゴーロクナナハチ"),
    ("03-1234-5678", "ゼロサンのイチニーサンヨンのゴーロクナナハチ"),
    ("0120-123-456", "ゼロイチニーゼロのイチニーサンのヨンゴーロク"),
    ("+81 90-1234-5678", "プラスハチイチのキューゼロのイチニーサンヨンのゴーロクナナハチ"),
    ("〒100-0001", "郵便番号イチゼロゼロのゼロゼロゼロイチ"),
    ("(03) 1234-5678", "ゼロサンのイチニーサンヨンのゴーロクナナハチ"),
    ("暗証番号は1234です", "暗証番号はイチニーサンヨンです"),
    # addresses
    ("info@example.co.jp", "info アットマーク example ドット co ドット jp"),
    ("https://www.example.com/docs/", "ダブリューダブリューダブリュー ドット example ドット com スラッシュ docs"),
    # full-width forms
    ("１２３", "百二十三"),
    ("５０％", "五十パーセント"),
    ("１９：３０", "十九時三十分"),
    ("３～５人", "三から五人"),
    ("２０２６年", "二千二十六年"),
    ("－３．５℃", "氷点下三点五度"),
    ("ＵＳＢ", "ユーエスビー"),
    # initialisms, abbreviations, symbols
    ("USBケーブル", "ユーエスビーケーブル"),
    ("AIとGPU", "エーアイとジーピーユー"),
    ("NASAの発表", "NASAの発表"),
    ("(株)日立", "株式会社日立"),
    ("（株）日立", "株式会社日立"),
    ("日本 vs 韓国", "日本 対 韓国"),
    ("TEL: 03-1234-5678", "電話: ゼロサンのイチニーサンヨンのゴーロクナナハチ"),
    ("A & B", "A アンド B"),
]


@pytest.mark.parametrize(("text", "spoken"), CASES)
def test_japanese(text, spoken):
    assert normalize(text, "japanese").text == spoken


@pytest.mark.parametrize(("text", "spoken"), CASES)
def test_normalizing_again_changes_nothing(text, spoken):
    assert normalize(spoken, "japanese").text == spoken


def _words(text: str) -> list[tuple[str, str]]:
    said = normalize(text, "japanese")
    return [(w.text, text[w.source_start:w.source_end]) for w in said.words()]


def test_each_spoken_character_maps_to_what_it_says():
    assert _words("気温は21.5℃です") == [("気", "気"), ("温", "温"), ("は", "は")] + [
        (c, "21.5℃") for c in "二十一点五度"] + [("で", "で"), ("す", "す")]
    assert _words("3人") == [("三", "3"), ("人", "人")]
    assert _words("１９：３０") == [(c, "１９：３０") for c in "十九時三十分"]


def test_auto_reads_a_japanese_sentence_in_japanese_and_an_english_one_in_english():
    assert language_of("気温は21.5℃です") == "japanese"
    assert normalize("気温は21.5℃です。", "auto").text == "気温は二十一点五度です。"
    assert normalize("It costs ¥2,350. 値段は2350円です。", "auto").text == (
        "It costs two thousand three hundred fifty yen. 値段は二千三百五十円です。")
