"""Korean's golden cases, written from Korean's own rules (what a speaker reading the text aloud says),
not from a library's output: Sino-Korean numbers spaced by 만; native numbers with counters and for
the hour (세 명, 일곱 시); 유월 and 시월; 영하 for temperatures; 공 in phone numbers; ranges with 에서."""

from __future__ import annotations

import pytest

from hearth.text.normalize import language_of, normalize

CASES = [
    # Sino-Korean cardinals by 만, 억
    ("2350", "이천삼백오십"),
    ("28,000", "이만 팔천"),
    ("100", "백"),
    ("1000", "천"),
    ("10000", "만"),
    ("110", "백십"),
    ("1005", "천오"),
    ("12345678", "천이백삼십사만 오천육백칠십팔"),
    ("100000000", "일억"),
    ("100010000", "일억 일만"),
    ("0", "영"),
    ("1만 명", "만 명"),
    ("1억 2천만 원", "일억 이천만 원"),
    ("3.5억", "삼 점 오억"),
    # counters: native numbers from 1 to 99
    ("3명", "세 명"),
    ("사과 1개", "사과 한 개"),
    ("20명", "스무 명"),
    ("21개", "스물한 개"),
    ("100명", "백 명"),
    ("28,000명", "이만 팔천 명"),
    ("3마리", "세 마리"),
    ("2잔", "두 잔"),
    ("3살", "세 살"),
    ("3시간", "세 시간"),
    ("5번", "다섯 번"),
    ("2번 출구", "이 번 출구"),
    ("3대", "세 대"),
    ("30대 남성", "삼십 대 남성"),
    ("3개월", "삼 개월"),
    ("3~5명", "세 명에서 다섯 명"),
    ("4.5점", "사 점 오 점"),
    ("1.5배", "일 점 오 배"),
    ("30평 아파트", "삼십 평 아파트"),
    # negatives and decimals
    ("-5", "마이너스 오"),
    ("-3.5℃", "영하 삼 점 오 도"),
    ("기온 -3도", "기온 영하 삼 도"),
    ("3.14", "삼 점 일사"),
    ("0.5", "영 점 오"),
    # fractions, ordinals, percentages
    ("3/4", "사분의 삼"),
    ("1/2", "이분의 일"),
    ("1번째", "첫 번째"),
    ("3번째", "세 번째"),
    ("3째", "셋째"),
    ("제3회", "제삼 회"),
    ("15%", "십오 퍼센트"),
    ("12.5%", "십이 점 오 퍼센트"),
    ("-3%", "마이너스 삼 퍼센트"),
    ("3%p", "삼 퍼센트포인트"),
    ("10~20%", "십에서 이십 퍼센트"),
    # money
    ("2350원", "이천삼백오십 원"),
    ("₩1,000", "천 원"),
    ("10000원", "만 원"),
    ("$5", "오 달러"),
    ("$3.99", "삼 점 구구 달러"),
    ("€20", "이십 유로"),
    ("¥500", "오백 엔"),
    ("100 USD", "백 달러"),
    ("$2.5M", "이백오십만 달러"),
    # dates and years: a year as a number, 유월 and 시월
    ("2026년 12월 8일", "이천이십육 년 십이월 팔 일"),
    ("2026-12-08", "이천이십육 년 십이월 팔 일"),
    ("2026.12.08", "이천이십육 년 십이월 팔 일"),
    ("2026. 12. 8.", "이천이십육 년 십이월 팔 일."),
    ("12/8", "십이월 팔 일"),
    ("6월 25일", "유월 이십오 일"),
    ("10월", "시월"),
    ("2026년", "이천이십육 년"),
    ("1990년대", "천구백구십 년대"),
    # times: the hour native, minutes and seconds Sino-Korean
    ("오후 7시 30분", "오후 일곱 시 삼십 분"),
    ("19:30", "열아홉 시 삼십 분"),
    ("07:00", "일곱 시"),
    ("7:05", "일곱 시 오 분"),
    ("0:15", "영 시 십오 분"),
    ("12:00", "열두 시"),
    ("10:20:30", "열 시 이십 분 삼십 초"),
    ("7:30 PM", "오후 일곱 시 삼십 분"),
    ("3시", "세 시"),
    ("30분", "삼십 분"),
    ("2026년 12월 8일 19:30", "이천이십육 년 십이월 팔 일 열아홉 시 삼십 분"),
    # ranges
    ("10~20", "십에서 이십"),
    ("10-20℃", "십에서 이십 도"),
    ("-5~3℃", "영하 오 도에서 삼 도"),
    ("2020~2024년", "이천이십 년에서 이천이십사 년"),
    ("9:00~18:00", "아홉 시에서 열여덟 시"),
    ("3시~5시", "세 시에서 다섯 시"),
    ("5월 1일-5월 5일", "오월 일 일에서 오월 오 일"),
    ("2:1로 이겼다", "이 대 일로 이겼다"),
    # units
    ("기온은 21.5℃입니다", "기온은 이십일 점 오 도입니다"),
    ("21.5 °C", "이십일 점 오 도"),
    ("70°F", "화씨 칠십 도"),
    ("100km/h", "시속 백 킬로미터"),
    ("5kWh", "오 킬로와트시"),
    ("2.5kg", "이 점 오 킬로그램"),
    ("84㎡", "팔십사 제곱미터"),
    ("500ml", "오백 밀리리터"),
    ("16GB", "십육 기가바이트"),
    ("35µg/m³", "삼십오 마이크로그램 퍼 세제곱미터"),
    ("미세먼지 35μg/m³", "미세먼지 삼십오 마이크로그램 퍼 세제곱미터"),
    ("PM2.5 농도", "피엠 이 점 오 농도"),
    # phone numbers: 공 for zero, the groups apart
    ("010-1234-5678", "공일공 일이삼사 오육칠팔"),
    ("02-123-4567", "공이 일이삼 사오육칠"),
    ("1588-1234", "일오팔팔 일이삼사"),
    ("+82 10-1234-5678", "플러스 팔이 일공 일이삼사 오육칠팔"),
    ("인증번호는 123456입니다", "인증번호는 일이삼사오육입니다"),
    # addresses
    ("abc@naver.com", "abc 골뱅이 naver 닷 com"),
    ("www.naver.com", "더블유더블유더블유 닷 naver 닷 com"),
    # full-width forms
    ("１２３", "백이십삼"),
    ("５０％", "오십 퍼센트"),
    ("１９：３０", "열아홉 시 삼십 분"),
    ("３～５개", "세 개에서 다섯 개"),
    ("－３℃", "영하 삼 도"),
    ("ＵＳＢ", "유에스비"),
    # initialisms, abbreviations, symbols
    ("USB 포트", "유에스비 포트"),
    ("KBS 뉴스", "케이비에스 뉴스"),
    ("AI가", "에이아이가"),
    ("NASA 발표", "NASA 발표"),
    ("(주)삼성", "주식회사삼성"),
    ("한국 vs 일본", "한국 대 일본"),
    ("TEL 02-123-4567", "전화 공이 일이삼 사오육칠"),
    ("A & B", "A 앤드 B"),
]


@pytest.mark.parametrize(("text", "spoken"), CASES)
def test_korean(text, spoken):
    assert normalize(text, "korean").text == spoken


@pytest.mark.parametrize(("text", "spoken"), CASES)
def test_normalizing_again_changes_nothing(text, spoken):
    assert normalize(spoken, "korean").text == spoken


def _words(text: str) -> list[tuple[str, str]]:
    said = normalize(text, "korean")
    return [(w.text, text[w.source_start:w.source_end]) for w in said.words()]


def test_each_spoken_character_maps_to_what_it_says():
    assert _words("기온은 21.5℃입니다") == [("기", "기"), ("온", "온"), ("은", "은")] + [
        (c, "21.5℃") for c in "이십일점오도"] + [("입", "입"), ("니", "니"), ("다", "다")]
    assert _words("사과 3개") == [("사", "사"), ("과", "과"), ("세", "3개"), ("개", "3개")]


def test_auto_reads_a_korean_sentence_in_korean_and_an_english_one_in_english():
    assert language_of("기온은 21.5℃입니다") == "korean"
    assert normalize("오후 7시 30분에 만나요.", "auto").text == "오후 일곱 시 삼십 분에 만나요."
    assert normalize("We meet at 7:30 pm. 오후 7시 30분에 만나요.", "auto").text == (
        "We meet at seven thirty P M. 오후 일곱 시 삼십 분에 만나요.")
