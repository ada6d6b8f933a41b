"""The text front end's cost, for `hearth bench`: each language's normalizer on a sentence of about
200 characters dense with what it reads (numbers, money, units, dates, times, an address), timed
call by call; the 95th percentile over all languages' calls, per 200 characters."""

from __future__ import annotations

import statistics
import time

from hearth.text.normalize import language, normalize

__all__ = ["SENTENCES", "normalize_cost"]

# About 200 characters each, written for the measurement: the hard case, not the usual one.
SENTENCES = {
    "english": "On Dec 8, 2026 at 7:30 pm it was 21.5 °C inside and -3 °C outside; the 3rd floor heater used "
               "5 kWh (12.5% more), costing $1,234.56. Call +1 555 123 4567 or see https://example.org/docs now.",
    "german": "Am 8. Dezember 2026 um 19:30 Uhr waren es 21,5 °C innen und -3 °C außen; die Heizung im 3. Stock "
              "brauchte 5 kWh (12,5 % mehr) für 1.234,56 €. Tel. 030 1234567, siehe https://example.org/docs.",
    "french": "Le 8 décembre 2026 à 19h30, il faisait 21,5 °C dedans et -3 °C dehors ; le chauffage du 3e étage "
              "a pris 5 kWh (12,5 % de plus), soit 1 234,56 €. Appelez le 01 23 45 67 89 ou example.org/docs.",
    "italian": "L'8 dicembre 2026 alle 19:30 c'erano 21,5 °C dentro e -3 °C fuori; il riscaldamento al 3º piano "
               "ha usato 5 kWh (12,5% in più), cioè 1.234,56 €. Chiamate 06 1234 5678 o example.org/docs oggi.",
    "spanish": "El 8 de diciembre de 2026 a las 19:30 había 21,5 °C dentro y -3 °C fuera; la calefacción del 3.º "
               "piso gastó 5 kWh (un 12,5 % más), 1.234,56 €. Llame al 912 345 678 o vea example.org/docs hoy.",
    "portuguese": "Em 8 de dezembro de 2026 às 19h30 fazia 21,5 °C dentro e -3 °C fora; o aquecimento do 3º andar "
                  "gastou 5 kWh (12,5% a mais), R$ 1.234,56. Ligue para (11) 91234-5678 ou veja example.org/docs.",
    "russian": "8 декабря 2026 года в 19:30 было 21,5 °C внутри и -3 °C снаружи; отопление на 3-м этаже "
               "потратило 5 кВт·ч (на 12,5 % больше), 1234,56 ₽. Звоните +7 495 123-45-67 или example.org/docs.",
    "chinese": "2026年12月8日晚上19:30，室内温度是21.5℃，室外-3℃；三楼的暖气用了5千瓦时（多了12.5%），花了1234.56元。"
               "请拨打电话010-12345678，或者访问example.org/docs查看详情，谢谢大家的配合与理解。",
    "japanese": "2026年12月8日の19時30分、室内は21.5℃、室外は-3℃でした。3階の暖房は5kWh（12.5%増）を使い、1234.56円"
                "かかりました。お問い合わせは03-1234-5678、またはexample.org/docsをご覧ください。",
    "korean": "2026년 12월 8일 오후 7시 30분, 실내는 21.5℃, 실외는 -3℃였습니다. 3층 난방은 5kWh(12.5% 증가)를 써서 "
              "1,234.56원이 들었습니다. 문의는 02-1234-5678 또는 example.org/docs를 보세요.",
}


def normalize_cost(calls: int = 40) -> dict[str, float]:
    """{"normalize_p95_ms", "normalize_median_ms"}: per 200 characters, over every language's calls
    (each language's rules loaded and its caches warm first, as in a server)."""
    per_200: list[float] = []
    for name, sentence in SENTENCES.items():
        language(name)
        normalize(sentence, name)  # warm: the language's rules compiled, its caches filled
        for _ in range(calls):
            t0 = time.perf_counter()
            normalize(sentence, name)
            per_200.append((time.perf_counter() - t0) * 1000 * 200 / len(sentence))
    per_200.sort()
    return {"normalize_p95_ms": per_200[int(0.95 * (len(per_200) - 1))],
            "normalize_median_ms": statistics.median(per_200)}

