"""`hearth soak`: one resident service speaking many sentences, to show it stays correct and flat.

It rotates all voices over texts in several languages, leaves idle gaps, makes one planned cancel
and injects one sink fault along the way, then checks every completed sentence's codes against a
fresh single run of the same text, voice and seed, and reports memory before and after.
"""

from __future__ import annotations

import gc
import hashlib
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hearth.runtime.service import Service
from hearth.streaming.sinks import NullSink

__all__ = ["SoakSettings", "run_soak"]

TEXTS = [
    ("The kettle is on, and the house is warm tonight.", "english"),
    ("今天的天气很好，我们去公园散步吧。", "chinese"),
    ("Bitte schließen Sie das Fenster, es wird kalt.", "german"),
    ("明日の朝は早く起きなければなりません。", "japanese"),
    ("오늘 저녁에는 무엇을 먹을까요?", "korean"),
    ("Le train pour Lyon part à huit heures.", "french"),
    ("¿Puedes encender la luz de la cocina?", "spanish"),
    ("La riunione è stata spostata a domani.", "italian"),
    ("O jantar está pronto, venham para a mesa.", "portuguese"),
    ("Сегодня вечером будет дождь и ветер.", "russian"),
    ("Your package arrived at 3:45 p.m. and is by the door.", "auto"),
    ("Reminder: the back-up finished without errors.", "auto"),
]


@dataclass(frozen=True)
class SoakSettings:
    sentences: int = 300
    idle_s: float = 0.0
    max_new_tokens: int | None = None
    realtime: bool = False
    seed: int = 1000
    duration_s: float | None = None  # stop submitting after this long (for time-boxed runs)


class _FaultySink(NullSink):
    """The null sink, with one write failing on request (the planned sink fault)."""

    def __init__(self, sample_rate: int, realtime: bool):
        super().__init__(sample_rate, realtime=realtime, buffer_s=0.1)
        self.fail_next = False

    def write(self, samples: np.ndarray) -> bool:
        if self.fail_next:
            self.fail_next = False
            raise OSError("planned sink fault")
        return super().write(samples)


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _digest(codes) -> str:
    return hashlib.sha256(np.ascontiguousarray(codes, np.int64).tobytes()).hexdigest()


def run_soak(engine, s: SoakSettings, log=print) -> dict[str, Any]:
    voices = engine.voices
    sink = _FaultySink(engine.sample_rate, s.realtime)
    # Warm-up: every text length and voice seen a few times (caches, rotary tables and the math
    # libraries' kernel caches settle), at most a tenth of the run.
    warm = max(1, min(3 * len(TEXTS), s.sentences // 10))
    # The planned cancel and fault come soon after warm-up, so that time-boxed runs reach them too.
    cancel_at = min(s.sentences // 3, warm + 5) if s.sentences >= 3 else None
    fault_at = min((2 * s.sentences) // 3, warm + 10) if s.sentences >= 3 else None
    done: list[tuple[str, str, str, int | None, str]] = []  # text, voice, language, seed, digest
    ttfa: list[float] = []
    errors, cancelled, faults, underruns, submitted = [], 0, 0, 0, 0
    rss_start = 0
    t_start = time.monotonic()
    with Service(engine, sink, keep_codes=True, max_new_tokens=s.max_new_tokens) as service:
        for i in range(s.sentences):
            if s.duration_s is not None and time.monotonic() - t_start > s.duration_s:
                break
            if i == warm:
                gc.collect()
                rss_start = _rss_kb()
            text, language = TEXTS[i % len(TEXTS)]
            voice = voices[i % len(voices)]
            if i == fault_at:
                sink.fail_next = True
            job = service.say(text, voice, language, seed=s.seed + i)
            submitted += 1
            if i == cancel_at:
                while job.first_audio_s is None and not job.wait(0.01):
                    pass
                service.cancel()
            job.wait()
            underruns += job.underruns
            for sentence in job.sentences:
                if sentence.status == "done":
                    done.append((sentence.text, voice, language, sentence.seed, _digest(sentence.codes)))
                    if job.first_audio_s is not None:
                        ttfa.append(job.first_audio_s)
                elif sentence.status == "cancelled" and i == cancel_at:
                    cancelled += 1
                elif sentence.status == "failed" and i == fault_at and "planned sink fault" in (sentence.error or ""):
                    faults += 1
                else:
                    errors.append({"sentence": i, "status": sentence.status, "error": sentence.error})
            if job.status == "cancelled" and i != cancel_at:
                errors.append({"sentence": i, "status": "cancelled unexpectedly"})
            if (i + 1) % 50 == 0:
                log(f"hearth soak: {i + 1}/{s.sentences} sentences, RSS {_rss_kb() / 1024:.1f} MB")
            if s.idle_s:
                time.sleep(s.idle_s)
        gc.collect()
        rss_end = _rss_kb()
        if not rss_start:
            rss_start = rss_end
    elapsed = time.monotonic() - t_start
    log(f"hearth soak: checking {len(done)} sentences against fresh single runs")
    mismatches = 0
    for text, voice, language, seed, digest in done:
        codes = engine.generate_codes(text, voice, language, seed=seed, max_new_tokens=s.max_new_tokens).codes
        mismatches += _digest(codes) != digest
    return {
        "sentences": submitted,
        "completed": len(done),
        "errors": len(errors),
        "error_details": errors[:10],
        "cancelled": cancelled,
        "faults_injected": faults,
        "underruns": underruns,
        "ttfa_p50_s": statistics.median(ttfa) if ttfa else None,
        "ttfa_p95_s": sorted(ttfa)[min(len(ttfa) - 1, round(0.95 * (len(ttfa) - 1)))] if ttfa else None,
        "rss_start_mb": rss_start / 1024,
        "rss_end_mb": rss_end / 1024,
        "rss_growth_kb": rss_end - rss_start,
        "codes_match_baseline": mismatches == 0 and len(done) > 0,
        "codes_mismatches": mismatches,
        "realtime": s.realtime,
        "elapsed_s": elapsed,
        "voices": len(voices),
    }


def main_soak(engine, s: SoakSettings, as_json: bool) -> int:
    import json

    result = run_soak(engine, s, log=lambda m: print(m, file=sys.stderr))
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        for key, value in result.items():
            print(f"{key:22} {value}")
    ok = result["errors"] == 0 and result["codes_match_baseline"]
    return 0 if ok else 1
