"""`hearth bench --listen --listen-live SECONDS`: a live transcription with voice activity fed at real
time, as a microphone feeds it, on the true-shape random Qwen3-ASR (beside the speech model, as
`--listen` measures).

The audio: utterances of 2, 5, 10, 20 and 30 s in turn, each followed by 1.2 s of silence, made of
a speech-like signal that Silero VAD scores as speech (`voiced`: a glottal pulse train through
vowel formants at four syllables a second; what it says does not matter, as the weights are
random). It is pushed 100 ms at a time when that audio would have been captured; audio that came
while an update ran is pushed at once with `latest_only`, as the servers push it.

Random weights never stop, so each update decodes as many tokens as a transcript of its audio would
(`tokens_for`, 3.5 a second plus the head), less the forced start it was given.

What is reported, by utterance length (median and 95th percentile over the session):
  * ready: from the end of speech to the moment the final's text was computed (the final is heard
    96 ms into the quiet and held);
  * given: from the end of speech to the final event, which waits for `silence_s` of quiet to know
    that the speech has ended;
and over the session: how far each partial's text is behind the audio it covers when it comes
(lag), CPU seconds (all the process's threads) per second of audio, and resident memory sampled
every 10 s (first, largest, last: flat means no growth).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from typing import Any

import numpy as np

from hearth.tools.stats import rss_mb

__all__ = ["UTTERANCES", "format_live", "run_live", "voiced"]

UTTERANCES = (2.0, 5.0, 10.0, 20.0, 30.0)
PAUSE_S = 1.2
BLOCK_S = 0.1
_RATE = 16000
_VOWELS = ((730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410))


def voiced(seconds: float, seed: int = 0, level: float = 0.3) -> np.ndarray:
    """Speech-like enough for a voice activity detector, at 16 kHz: a glottal pulse train (f0 about
    120 Hz, wandering) through three vowel formants that change every 150 ms, at four syllables a
    second. Silero VAD scores it 0.5-1.0, and silence or noise 0."""
    rng = np.random.default_rng(seed)
    n = int(seconds * _RATE)
    t = np.arange(n) / _RATE
    f0 = 120 + 30 * np.sin(2 * np.pi * 0.7 * t) + rng.normal(0, 2, n).cumsum() / 200
    pulses = (np.diff(np.floor(np.cumsum(f0 / _RATE)), prepend=0) > 0).astype(np.float64)
    out = np.zeros(n)
    step = int(0.15 * _RATE)
    for at in range(0, n, step):
        piece = pulses[at : at + step]
        freqs = np.fft.rfftfreq(piece.size, 1 / _RATE)
        formants = zip(_VOWELS[rng.integers(len(_VOWELS))], (80, 100, 120), strict=True)
        shape = sum(1.0 / (1.0 + ((freqs - f) / bw) ** 2) for f, bw in formants)
        out[at : at + step] = np.fft.irfft(np.fft.rfft(piece) * shape, piece.size)
    out *= 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t)
    return (level * out / max(np.abs(out).max(), 1e-12)).astype(np.float32)


class _Timed:
    """The listener as a live transcription asks for it (`live.Hearing`), decoding a transcript's
    worth of tokens per update (random weights never stop) and noting when each update ended."""

    def __init__(self, listener: Any, tokens_for: Any):  # noqa: ANN401
        self.listener, self.tokenizer, self.features = listener, listener.tokenizer, listener.features
        self.tokens_for = tokens_for
        self.done: list[tuple[float, int]] = []  # (perf_counter at the end, samples heard)

    def segment_work(self) -> Any:  # noqa: ANN401
        return self.listener.segment_work()

    def tokens(self, samples: np.ndarray, options: Any, prefix: str = "", work: Any = None) -> Any:  # noqa: ANN401
        forced = len(self.tokenizer.encode(prefix)) if prefix else 0
        n = max(1, self.tokens_for(samples.size / _RATE) - forced)
        ids = list(self.listener.tokens(samples, replace(options, max_new_tokens=n), prefix, work))
        self.done.append((time.perf_counter(), samples.size))
        return iter(ids)


def _layout(seconds: float, utterances: tuple[float, ...]) -> tuple[np.ndarray, list[tuple[float, float, float]]]:
    """The session's audio and its utterances as (start, end, length) in seconds."""
    parts, spans, at, i = [np.zeros(int(0.5 * _RATE), np.float32)], [], 0.5, 0
    while at < seconds:
        length = utterances[i % len(utterances)]
        parts += [voiced(length, i), np.zeros(int(PAUSE_S * _RATE), np.float32)]
        spans.append((at, at + length, length))
        at += length + PAUSE_S
        i += 1
    return np.concatenate(parts), spans


def _quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"n": len(ordered), "p50": statistics.median(ordered),
            "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], "max": ordered[-1]}


def run_live(listener: Any, seconds: float, tokens_for: Any, silence_s: float = 0.5,  # noqa: ANN401
             utterances: tuple[float, ...] = UTTERANCES) -> dict[str, Any]:
    """A live session of about `seconds` of audio fed at real time (see the module)."""
    from hearth.listen import ListenOptions, LiveOptions
    from hearth.listen.live import LiveTranscription
    from hearth.listen.vad import SileroVad

    audio, spans = _layout(seconds, utterances)
    hearing = _Timed(listener, tokens_for)
    live = LiveOptions(vad=True, silence_s=silence_s)
    session = LiveTranscription(hearing, ListenOptions(language="English"), live, _RATE, SileroVad.load())
    block = int(BLOCK_S * _RATE)
    events: list[tuple[float, Any]] = []
    memory: list[float] = []
    cpu0, t0 = time.process_time(), time.perf_counter()
    fed = 0
    next_sample = 0.0
    while fed < audio.size:
        now = time.perf_counter() - t0
        due = min(audio.size, int(now * _RATE) // block * block)
        if due <= fed:
            time.sleep(max(0.0, (fed + block) / _RATE - now))
            continue
        for e in session.push(audio[fed:due], latest_only=True):
            events.append((time.perf_counter() - t0, e))
        fed = due
        if now >= next_sample:
            memory.append(rss_mb()[0])
            next_sample = now + 10.0
    for e in session.finish():
        events.append((time.perf_counter() - t0, e))
    cpu = time.process_time() - cpu0
    memory.append(rss_mb()[0])

    finals = [(t, e) for t, e in events if e.kind == "final"]
    ready: dict[float, list[float]] = {length: [] for length in utterances}
    given: dict[float, list[float]] = {length: [] for length in utterances}
    for start, end, length in spans:
        mine = [(t, e) for t, e in finals if e.offset <= start + 0.5 and e.offset + e.audio_s >= end - 0.5]
        if not mine:  # (cut at max_segment_s, or not found as one stretch of speech)
            continue
        t, e = mine[0]
        heard = round(e.audio_s * _RATE)
        made = [at for at, size in hearing.done if size >= heard and at <= t0 + t]
        given[length].append(t - end)
        if made:
            ready[length].append(made[-1] - t0 - end)
    lag = [t - (e.offset + e.audio_s) for t, e in events if e.kind == "partial"]
    out: dict[str, Any] = {
        "audio_s": audio.size / _RATE, "utterances": len(spans), "finals": len(finals), "silence_s": silence_s,
        "cpu_s_per_audio_s": cpu / (audio.size / _RATE), "partial_lag_s": _quantiles(lag),
        "memory_mb": {"first": memory[0], "max": max(memory), "last": memory[-1], "samples": len(memory)},
        "by_length": {f"{length:g}s": {"ready_s": _quantiles(ready[length]), "given_s": _quantiles(given[length])}
                      for length in utterances if ready[length] or given[length]},
    }
    return out


def format_live(r: dict[str, Any]) -> str:
    lines = [f"live, fed at real time: {r['audio_s']:.0f} s of audio, {r['utterances']} utterances, {r['finals']} "
             f"finals; voice activity with silence_s {r['silence_s']:g}"]
    for length, f in r["by_length"].items():
        ready, given = f["ready_s"], f["given_s"]
        text = f"{length:>4} utterances: end of speech to the final ready "
        text += f"p50 {ready['p50']:.2f} s, p95 {ready['p95']:.2f} s" if ready else "(none)"
        text += f"; given p50 {given['p50']:.2f} s, p95 {given['p95']:.2f} s" if given else ""
        lines.append(text + f" (n={max(ready.get('n', 0), given.get('n', 0))})")
    lag = r["partial_lag_s"]
    if lag:
        lines.append(f"partial text behind its audio: p50 {lag['p50']:.2f} s, p95 {lag['p95']:.2f} s")
    m = r["memory_mb"]
    lines.append(f"CPU {r['cpu_s_per_audio_s']:.2f} s per second of audio; memory {m['first']:.0f} MB first, "
                 f"{m['max']:.0f} MB largest, {m['last']:.0f} MB last ({m['samples']} samples)")
    return "\n".join(lines)
