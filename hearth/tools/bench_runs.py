"""`hearth bench`'s settings, and its other measurements: a cloned voice, voice-agent turns, many streams at once
(and whether batching changes a row's codes), text arriving while it is spoken."""

from __future__ import annotations

import logging
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hearth.tools.stats import median_or_none, p95, reset_peak_rss, rss_mb

if TYPE_CHECKING:
    from hearth.checkpoint.sampling import SamplingOptions
    from hearth.engine import Engine
    from hearth.text.prompt import Speaker

__all__ = ["SENTENCE", "BenchSettings", "batch_agreement", "run_agent", "run_clone", "run_live", "run_streams"]

SENTENCE = "Hearth speaks for the small machine in the corner, and it starts within a third of a second."
VOICE, LANGUAGE = "ryan", "english"


@dataclass(frozen=True)
class BenchSettings:
    model: str | None = None
    frames: int = 25
    runs: int = 3
    threads: int | None = None
    chunk_frames: int = 5
    first_chunk_frames: int | None = None  # None: the engine's default
    text: str = SENTENCE
    backend: dict[str, Any] = field(default_factory=dict)  # BackendOptions keywords
    live_wps: float | None = None  # also measure a live utterance fed this many words per second
    agent_rates: tuple[float, ...] = ()  # also measure voice-agent turns with an LLM at these tokens per second
    agent_turns: int = 4
    streams: tuple[int, ...] = ()  # measure this many concurrent requests (each count in turn) instead
    max_batch: int | None = None  # rows stepped together with --streams (None: as many as the streams)
    clone_s: float | None = None  # speak in a voice cloned in context from a reference this long (Base)

    @property
    def uses_openvino(self) -> bool:
        from hearth.backends.settings import backend_options

        return backend_options(**self.backend).uses_openvino


CLONE_TRANSCRIPT = "This is my own voice, recorded in a quiet room for the small machine in the corner to speak with."


def reference_signal(seconds: float, sample_rate: int = 24000) -> Any:
    """A voice-like stand-in for a recording (a gliding harmonic tone with breath noise): encoder
    cost depends on its length, not on what it says."""
    import numpy as np

    rng = np.random.default_rng(0)
    t = np.arange(int(sample_rate * seconds)) / sample_rate
    phase = 2 * np.pi * np.cumsum(120 + 30 * np.sin(2 * np.pi * 0.6 * t)) / sample_rate
    tone = sum(np.sin(k * phase) / k for k in range(1, 6))
    return (0.3 * tone + 0.02 * rng.standard_normal(t.size)).astype(np.float32)


def _first_audio(engine: Engine, voice: Speaker, options: SamplingOptions, s: BenchSettings) -> float:
    """Seconds from now to the first audio of the standard sentence in `voice` (then stopped)."""
    t0 = time.perf_counter()
    with engine.stream(s.text, voice, LANGUAGE, options=options, budget=None, chunk_frames=s.chunk_frames,
                       first_chunk_frames=s.first_chunk_frames) as stream:
        for chunk in stream:
            if chunk.frames:
                return time.perf_counter() - t0
    raise RuntimeError("the stream ended without audio")


def run_clone(engine: Engine, s: BenchSettings, options: SamplingOptions) -> tuple[Any, dict[str, Any]]:
    """A Base checkpoint's cloned voice, from a reference of `s.clone_s` seconds, the ways a user
    meets it: cloned from raw audio for each request (both encoders, then the vocoder hears the
    reference), a stored profile's first use in a process (the profile read; the reference's
    vocoder state decoded, or read from disk where the backend keeps it), and a stored profile
    once in use (the standard runs). Returns the stored voice and the figures."""
    import tempfile

    from hearth.voices.cloning import Cloner, VoiceStore

    if engine.config.model_type != "base":
        raise ValueError(f"--clone needs a Base checkpoint; {engine.checkpoint.path} is {engine.config.kind}")
    audio = reference_signal(s.clone_s or 0.0)
    with tempfile.TemporaryDirectory(prefix="hearth-bench-voices-") as tmp:
        cloner = Cloner(engine.checkpoint, VoiceStore(Path(tmp)))
        t = time.perf_counter()
        voice = cloner.clone(audio, 24000, CLONE_TRANSCRIPT)
        first_clone_s = time.perf_counter() - t  # loads the encoders too
        cloner.add("bench", audio, 24000, CLONE_TRANSCRIPT)
        clone_times, raw, stored_first, load_times, prime_times = [], [], [], [], []
        disk = hasattr(engine.vocoder, "load_state")
        for i in range(s.runs + 1):
            engine.forget_primed(voice)  # a voice never used before: no state kept on disk either
            t = time.perf_counter()
            engine.prime_voice(voice)
            prime_s = time.perf_counter() - t
            engine.forget_primed(voice)
            t0 = time.perf_counter()
            fresh = cloner.clone(audio, 24000, CLONE_TRANSCRIPT)
            clone_s = time.perf_counter() - t0
            raw_s = clone_s + _first_audio(engine, fresh, options, s)
            engine.forget_primed()  # the state on disk stays, as for a stored voice in a new process
            t0 = time.perf_counter()
            profile = cloner.stored("bench")
            load_s = time.perf_counter() - t0
            first_s = load_s + _first_audio(engine, profile, options, s)
            if i:  # the first round warms up
                clone_times.append(clone_s)
                raw.append(raw_s)
                stored_first.append(first_s)
                load_times.append(load_s)
                prime_times.append(prime_s)
    frames = 0 if voice.codes is None else int(voice.codes.shape[0])
    return voice, {
        "reference_s": s.clone_s, "reference_frames": frames, "mode": "in-context",
        "first_clone_s": first_clone_s, "clone_s": statistics.median(clone_times),
        "vocoder_prime_s": statistics.median(prime_times),
        "ttfa_from_raw_audio_s": statistics.median(raw),
        "profile_load_s": statistics.median(load_times),
        "ttfa_stored_first_use_s": statistics.median(stored_first),
        "primed_state_on_disk": disk,
    }


AGENT_ANSWER = ("Sure, here is what I found for you. Tomorrow looks mild and dry, with a light breeze in the "
                "morning and some sun after lunch. You will not need an umbrella.")


class _PlaybackClock:
    """A real-time sink that never blocks (unlike `NullSink(realtime=True)`): chunks are taken the
    moment they are ready, so the turn's own playback clock measures the engine, not the sink."""

    realtime = True

    def __init__(self, sample_rate: int):
        self.sample_rate = sample_rate
        self.samples = 0

    def write(self, samples: Any) -> bool:
        self.samples += len(samples)
        return False

    def drain(self) -> None:
        pass


def _llm_tokens(text: str, rate: float) -> Any:
    """An LLM's answer at `rate` tokens per second (pieces of up to four characters, roughly its tokens)."""
    import re

    for piece in re.findall(r"\s?\S{1,4}|\s+", text):
        time.sleep(1.0 / rate)
        yield piece


def run_agent(engine: Engine, rates: tuple[float, ...], turns: int) -> dict[str, Any]:
    """Voice-agent turns (`hearth.runtime.agent.speak_turn`) with an LLM writing at each rate: the time from
    its first token to the first audio, live (interleaved, sentences start before they end) beside
    a sentence-at-a-time pipeline (each sentence spoken once complete), the gaps inside an answer,
    and how soon a barge-in silences the speech; each pipeline played eagerly (as the audio comes)
    and smoothly (held until the rest can play without a gap, `hearth.streaming.pacing`: "_smooth" keys).
    Random weights never say EOS, so each sentence
    stops at 4 + 4 frames per text token (0.32 s per token, about real speech)."""
    import threading

    from hearth.checkpoint.sampling import FrameBudget
    from hearth.runtime.agent import BargeIn, speak_turn
    from hearth.runtime.scheduler import Scheduler

    budget = FrameBudget(base=4, per_token=4)
    logging.getLogger("hearth.generation.frame_loop").setLevel(logging.ERROR)  # the short budget is the point, not news
    out: dict[str, Any] = {"answer": AGENT_ANSWER, "turns": turns, "frames_per_token": 4}
    with Scheduler(engine) as scheduler:
        def turn(rate: float, mode: str, seed: int, barge: BargeIn | None = None, playback: str = "eager") -> Any:
            sink = _PlaybackClock(engine.sample_rate)
            if barge is not None:  # speak over it one second into its audio
                def watch() -> None:
                    deadline = time.monotonic() + 120
                    while sink.samples < engine.sample_rate and time.monotonic() < deadline:
                        time.sleep(0.005)
                    barge.set()
                threading.Thread(target=watch, daemon=True).start()
            return speak_turn(scheduler, sink, _llm_tokens(AGENT_ANSWER, rate), voice=VOICE, language=LANGUAGE,
                              seed=seed, text_mode=mode, budget=budget, barge_in=barge, playback=playback)

        turn(50.0, "interleaved", 0)  # warm-up
        for rate in rates:
            row: dict[str, Any] = {}
            for mode, name, playback in (("interleaved", "live", "eager"), ("whole", "sentence_at_a_time", "eager"),
                                         ("interleaved", "live_smooth", "smooth"),
                                         ("whole", "sentence_at_a_time_smooth", "smooth")):
                reports = []
                for k in range(turns):
                    reports.append(turn(rate, mode, k, playback=playback))
                    print(f"hearth bench: agent {rate:g} tok/s, {name} {k + 1}/{turns}: {reports[-1].summary()}",
                          file=sys.stderr)
                first = [r.token_to_audio_s for r in reports if r.token_to_audio_s is not None]
                gaps = [sum(r.gaps) for r in reports]
                row[name] = {
                    "first_token_to_audio_p50_s": statistics.median(first) if first else None,
                    "first_token_to_audio_p95_s": p95(first) if first else None,
                    "gap_total_p50_s": statistics.median(gaps), "gap_total_max_s": max(gaps),
                    "gaps_per_answer": statistics.mean(len(r.gaps) for r in reports),
                    # at the roll-over into the next sentence (a fresh prompt): its start to its first audio
                    "boundary_gap_total_p50_s": statistics.median(sum(r.boundary_gaps) for r in reports),
                    "sentence_start_to_audio_p50_s": median_or_none(
                        [s.ttfa_s for r in reports if r.request for s in r.request.sentences[1:] if s.ttfa_s]),
                    "audio_s": statistics.mean(r.audio_s for r in reports),
                }
            stops = []
            for k in range(max(1, turns // 2)):
                report = turn(rate, "interleaved", 100 + k, BargeIn())
                if report.stop_s is not None:
                    stops.append(report.stop_s)
            row["barge_in_stop_max_s"] = max(stops) if stops else None
            out[f"{rate:g}"] = row
    return out


STREAM_TEXTS = [
    ("Hearth speaks for the small machine in the corner, and it starts within a third of a second.", "ryan",
     "english"),
    ("The kitchen timer is done, and the oven can be switched off now.", "serena", "english"),
    ("Guten Morgen, heute bleibt es trocken und am Nachmittag scheint die Sonne.", "aiden", "german"),
    ("今天下午三点有一个会议，请提前十分钟到达会议室。", "vivian", "chinese"),
]


def run_streams(engine: Engine, s: BenchSettings, n: int) -> dict[str, Any]:
    """`n` requests at once through the scheduler (as `hearth serve` runs them), each a different
    voice and text of `s.frames` frames, taken as fast as they come; warm-up, then `s.runs` runs.
    Throughput is seconds of audio made per wall second, all streams together."""
    import threading

    from hearth.runtime.scheduler import Scheduler

    batch = s.max_batch or n
    runs: list[dict[str, Any]] = []
    reset_peak_rss()
    with Scheduler(engine, max_active=n, max_waiting=n, max_batch=batch) as scheduler:
        for i in range(s.runs + 1):  # the first run warms up
            results: list[dict[str, Any]] = [{} for _ in range(n)]

            def take(k: int, request: Any, t0: float, results: list[dict[str, Any]]) -> None:
                first, samples = None, 0
                for chunk in request:
                    if first is None and chunk.frames:
                        first = time.perf_counter() - t0
                    samples += len(chunk.samples)
                results[k] = {"ttfa_s": first, "wall_s": time.perf_counter() - t0,
                              "audio_s": samples / engine.sample_rate, "errors": len(request.errors)}

            t0 = time.perf_counter()
            threads = []
            for k in range(n):
                text, voice, language = STREAM_TEXTS[k % len(STREAM_TEXTS)]
                request = scheduler.submit(text, voice, language, greedy=True, max_new_tokens=s.frames + 1,
                                           budget=None, split=False, chunk_frames=s.chunk_frames,
                                           first_chunk_frames=s.first_chunk_frames)
                thread = threading.Thread(target=take, args=(k, request, t0, results), daemon=True)
                thread.start()
                threads.append(thread)
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - t0
            if i:
                runs.append({"wall_s": wall, "streams": results})
            print(f"hearth bench: {n} stream(s), run {i}{' (warm-up)' if not i else ''}: {wall:.1f} s",
                  file=sys.stderr)
        calls, rows = scheduler.batched_steps()
    rss, peak = rss_mb()
    ttfa = [r["ttfa_s"] for run in runs for r in run["streams"] if r["ttfa_s"] is not None]
    return {
        "streams": n,
        "max_batch": batch,
        "throughput_x_realtime": statistics.median(
            sum(r["audio_s"] for r in run["streams"]) / run["wall_s"] for run in runs),
        "ttfa_s": statistics.median(ttfa) if ttfa else None,
        "ttfa_p95_s": p95(ttfa) if ttfa else None,
        "rtf": statistics.median(r["wall_s"] / r["audio_s"] for run in runs for r in run["streams"] if r["audio_s"]),
        "audio_s_per_stream": statistics.median(r["audio_s"] for run in runs for r in run["streams"]),
        "errors": sum(r["errors"] for run in runs for r in run["streams"]),
        "mean_rows_per_step": rows / calls if calls else 1.0,
        "rss_mb": rss,
        "peak_rss_mb": peak,
        "runs": len(runs),
    }


def batch_agreement(engine: Engine, rows: int, frames: int) -> dict[str, Any]:
    """How often a batched row computes what it would alone, teacher-forced: `rows` texts, each
    fed its own solo greedy trajectory both through a solo session and as a row of one batch
    (rows join one frame apart, as in continuous batching). Per frame and row: does the talker's
    codebook-0 argmax agree, how far apart are its logits (SNR), and do the predictor's 15 codes,
    given the same codebook 0, agree."""
    import numpy as np

    from hearth.streaming.sinks import snr_db
    from hearth.text.prompt import embed_prompt

    options = engine.sampling(greedy=True)
    batch = engine.lm.batch(rows)
    cb0_agree, codes_agree, snrs = [], [], []
    state: list[dict[str, Any]] = []
    for k in range(rows):
        text, voice, language = STREAM_TEXTS[k % len(STREAM_TEXTS)]
        embeds = embed_prompt(engine.lm, engine.config, engine.prompt(text), voice, language, "whole")
        state.append({"embeds": embeds, "solo": engine.lm.session(options, None, embeds.prefill.shape[1]),
                      "row": batch.open(options, None, embeds.prefill.shape[1]), "x": embeds.prefill,
                      "first": True, "step": 0})
    for frame in range(frames + rows):
        live = [st for k, st in enumerate(state) if k <= frame and st["step"] < frames]
        if not live:
            break
        got = batch.talker([st["row"] for st in live], [st["x"] for st in live], [st["first"] for st in live])
        cb0s = []
        for st, logits in zip(live, got, strict=True):
            if isinstance(logits, BaseException):
                raise logits
            want = st["solo"].prefill(st["x"]) if st["first"] else st["solo"].step(st["x"])
            cb0 = int(want[0].argmax())
            cb0_agree.append(int(logits[0].argmax()) == cb0)
            snrs.append(snr_db(want, logits))
            cb0s.append(cb0)
        predicted = batch.predict([st["row"] for st in live], cb0s)
        for st, cb0, result in zip(live, cb0s, predicted, strict=True):
            if isinstance(result, BaseException):
                raise result
            rest, summed = st["solo"].predict(cb0)
            codes_agree.append(result[0] == rest)
            st["x"] = summed + st["embeds"].row(st["step"])
            st["first"] = False
            st["step"] += 1
    for st in state:
        st["solo"].close()
        st["row"].close()
    batch.close()
    return {
        "rows": rows, "frames_per_row": frames,
        "talker_top1_agreement": float(np.mean(cb0_agree)),
        "talker_logits_snr_db_median": float(np.median(snrs)),
        "predictor_codes_equal": float(np.mean(codes_agree)),
    }


def run_live(engine: Engine, s: BenchSettings, options: SamplingOptions) -> dict[str, Any]:
    """First audio of a live utterance whose text arrives word by word at `s.live_wps` (from the
    moment the first word is sent), against the same text given whole in the interleaved mode."""
    import threading

    words = s.text.split(" ")
    pieces = [w + " " for w in words[:-1]] + [words[-1]]
    live_ttfa, whole_ttfa = [], []
    for i in range(s.runs + 1):  # the first run warms up
        with engine.open(VOICE, LANGUAGE, options=options, budget=None, chunk_frames=s.chunk_frames,
                         first_chunk_frames=s.first_chunk_frames) as live:
            t0 = time.perf_counter()

            def writer() -> None:
                for piece in pieces:
                    live.push(piece)
                    time.sleep(1 / s.live_wps)  # type: ignore[operator]
                live.end()

            thread = threading.Thread(target=writer, daemon=True)
            thread.start()
            first = None
            for chunk in live:
                if first is None and chunk.frames:
                    first = time.perf_counter() - t0
            thread.join()
        with engine.stream(s.text, VOICE, LANGUAGE, options=options, budget=None, text_mode="interleaved",
                           chunk_frames=s.chunk_frames, first_chunk_frames=s.first_chunk_frames) as stream:
            t0 = time.perf_counter()
            whole = next((time.perf_counter() - t0 for c in stream if c.frames), None)
        if i and first is not None and whole is not None:
            live_ttfa.append(first)
            whole_ttfa.append(whole)
    return {
        "words_per_second": s.live_wps,
        "first_audio_s": statistics.median(live_ttfa), "first_audio_p95_s": p95(live_ttfa),
        "whole_text_interleaved_first_audio_s": statistics.median(whole_ttfa),
        "batch_invariance": {"threshold": engine.batch_invariance().threshold,
                             "block": engine.batch_invariance().block},
    }
