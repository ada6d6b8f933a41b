"""Chinese's golden cases, written from Mandarin's own rules (what a speaker reading the text aloud
says), not from a library's output: 两 before 千, 万 and 亿 at a number's start and before a measure
word, 二 elsewhere; 零 for a gap; years digit by digit; the percent first; 零下 for temperatures;
元 for money; phone numbers with 幺."""

from __future__ import annotations

from normalize_cases import words

from hearth.text.normalize import language_of, normalize

CASES = [
    # cardinals: 万 and 亿 grouping, 零 for a gap, 十 alone only at the start, 两 and 二
    ("2350元，28,000人，15%", "两千三百五十元，两万八千人，百分之十五"),
    ("我有3只猫", "我有三只猫"),
    ("2350", "两千三百五十"),
    ("28,000", "两万八千"),
    ("1005", "一千零五"),
    ("1050", "一千零五十"),
    ("10500", "一万零五百"),
    ("10015", "一万零一十五"),
    ("15", "十五"),
    ("110", "一百一十"),
    ("20", "二十"),
    ("200", "二百"),
    ("1200", "一千二百"),
    ("22000", "两万二千"),
    ("120000", "十二万"),
    ("100000005", "一亿零五"),
    ("100010000", "一亿零一万"),
    ("123456789", "一亿二千三百四十五万六千七百八十九"),
    ("0", "零"),
    # a number written with 万 or 亿
    ("2万", "两万"),
    ("1.5万元", "一点五万元"),
    ("3亿人", "三亿人"),
    # counted things: 两 before a measure word, 二 in a label
    ("2个苹果", "两个苹果"),
    ("2人", "两人"),
    ("2次", "两次"),
    ("2岁", "两岁"),
    ("12个", "十二个"),
    ("2-3个", "两到三个"),
    ("第2名", "第二名"),
    ("2年级", "二年级"),
    ("2月", "二月"),
    # negatives and decimals
    ("-5", "负五"),
    ("-1.5", "负一点五"),
    ("3.14", "三点一四"),
    ("0.5", "零点五"),
    ("-3.5℃", "零下三点五摄氏度"),
    ("今天-2℃", "今天零下两摄氏度"),
    ("气温-3度", "气温零下三度"),
    # fractions, ordinals, percentages
    ("3/4", "四分之三"),
    ("1/2", "二分之一"),
    ("2/3", "三分之二"),
    ("第3", "第三"),
    ("15%", "百分之十五"),
    ("12.5%", "百分之十二点五"),
    ("-3%", "负百分之三"),
    ("10-20%", "百分之十到百分之二十"),
    # money: the written register, 元 after the amount, symbols before or after
    ("¥2,350", "两千三百五十元"),
    ("￥100", "一百元"),
    ("¥12.50", "十二点五元"),
    ("2元", "两元"),
    ("RMB 100", "一百元"),
    ("$5", "五美元"),
    ("$3.99", "三点九九美元"),
    ("€5", "五欧元"),
    ("£3.50", "三点五英镑"),
    ("10 USD", "十美元"),
    ("$5k", "五千美元"),
    ("$2.5M", "二百五十万美元"),
    # dates and years: years digit by digit
    ("2026年12月8日", "二零二六年十二月八日"),
    ("2026-12-08", "二零二六年十二月八日"),
    ("2026/12/08", "二零二六年十二月八日"),
    ("2026.12.08", "二零二六年十二月八日"),
    ("12/8", "十二月八日"),
    ("1990年代", "一九九零年代"),
    ("90年代", "九十年代"),
    ("2000年", "二零零零年"),
    ("1000年前", "一千年前"),
    ("2020-2024年", "二零二零到二零二四年"),
    # times
    ("19:30", "十九点三十分"),
    ("7:05", "七点零五分"),
    ("2:00", "两点"),
    ("12:00", "十二点"),
    ("0:30", "零点三十分"),
    ("10:20:30", "十点二十分三十秒"),
    ("7:30 pm", "下午七点三十分"),
    ("下午2点", "下午两点"),
    ("7点05分", "七点零五分"),
    ("2026年12月8日 19:30", "二零二六年十二月八日 十九点三十分"),
    # ranges
    ("10-20", "十到二十"),
    ("10~20", "十到二十"),
    ("10-20℃", "十到二十摄氏度"),
    ("-5~3℃", "零下五摄氏度到三摄氏度"),
    ("-10~-5℃", "零下十到零下五摄氏度"),
    ("营业时间9:00～18:00", "营业时间九点到十八点"),
    ("5月1日-5月5日", "五月一日到五月五日"),
    ("3点~5点", "三点到五点"),
    ("比分2:1", "比分二比一"),
    # units
    ("温度是21.5℃", "温度是二十一点五摄氏度"),
    ("21.5 °C", "二十一点五摄氏度"),
    ("70°F", "七十华氏度"),
    ("100km/h", "一百公里每小时"),
    ("5kWh", "五千瓦时"),
    ("2.5kg", "二点五公斤"),
    ("2kg", "两公斤"),
    ("230V", "二百三十伏"),
    ("84㎡", "八十四平方米"),
    ("1013hPa", "一千零一十三百帕"),
    ("24h营业", "二十四小时营业"),
    ("16GB", "十六吉字节"),
    ("PM2.5浓度", "P M二点五浓度"),
    ("电池容量5000mAh", "电池容量五千毫安时"),
    ("PM2.5为75μg/m³", "P M二点五为七十五微克每立方米"),
    # phone numbers: digit by digit, 1 as 幺, the groups apart
    ("13812345678", "幺三八，幺二三四，五六七八"),
    ("138-1234-5678", "幺三八，幺二三四，五六七八"),
    ("010-12345678", "零幺零，幺二三四五六七八"),
    ("+86 138 1234 5678", "加八六，幺三八，幺二三四，五六七八"),
    ("400-123-4567", "四零零，幺二三，四五六七"),
    ("电话：(010) 1234-5678", "电话：零幺零，幺二三四，五六七八"),
    ("验证码：123456", "验证码：幺二三四五六"),
    ("房间号是302", "房间号是三零二"),
    ("3号楼201室", "三号楼二零幺室"),
    # addresses
    ("me@example.com", "me at example 点 com"),
    ("访问www.example.com了解", "访问W W W 点 example 点 com了解"),
    ("https://www.home-assistant.io/docs/", "W W W 点 home 杠 assistant 点 io 斜杠 docs"),
    # full-width forms
    ("１２３", "一百二十三"),
    ("５０％", "百分之五十"),
    ("１２．５％", "百分之十二点五"),
    ("１９：３０", "十九点三十分"),
    ("３～５个", "三到五个"),
    ("２０２６年", "二零二六年"),
    ("－５℃", "零下五摄氏度"),
    ("ＵＳＢ", "U S B"),
    ("２８，０００人，１，２", "两万八千人，一，二"),
    ("营业至24:00", "营业至二十四点"),
    # initialisms, abbreviations, symbols, markdown
    ("用USB接口", "用U S B接口"),
    ("AI助手", "A I助手"),
    ("支持USB、AI和GPU", "支持U S B、A I和G P U"),
    ("NASA发布", "NASA发布"),
    ("中国 vs 美国", "中国 对 美国"),
    ("TEL: 010-12345678", "电话: 零幺零，幺二三四五六七八"),
    ("A & B", "A 和 B"),
    ("**注意**：温度是21.5℃", "注意：温度是二十一点五摄氏度"),
]




def test_each_spoken_character_maps_to_what_it_says():
    assert words("温度是21.5℃", "chinese") == [("温", "温"), ("度", "度"), ("是", "是")] + [
        (c, "21.5℃") for c in "二十一点五摄氏度"]
    assert words("2个人", "chinese") == [("两", "2"), ("个", "个"), ("人", "人")]
    assert words("５０％", "chinese") == [(c, "５０％") for c in "百分之五十"]


def test_auto_reads_a_chinese_sentence_in_chinese_and_an_english_one_in_english():
    assert language_of("温度是21.5℃") == "chinese"
    assert normalize("温度是21.5℃。", "auto").text == "温度是二十一点五摄氏度。"
    assert normalize("It is 2350 yuan. 一共2350元。", "auto").text == (
        "It is two thousand three hundred fifty yuan. 一共两千三百五十元。")
    assert normalize("I have 3 cats and 28,000 fans.", "auto").text == (
        "I have three cats and twenty-eight thousand fans.")
