"""`hearth bench`: the one benchmark harness. Speed figures belong here, never in tests.

It runs the streaming engine on a checkpoint (by default a random-weight checkpoint with the true
0.6B shapes, written on first use into the cache directory), a warm-up and then several runs of
one sentence with a fixed frame count (end-of-speech masked, greedy decoding), and reports medians.
With `--compare-official` it runs the official qwen-tts package on the same checkpoint, in a
subprocess with the same thread count, and adds its figures and the ratios.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["CPU_MASKS", "BenchSettings", "bench_checkpoint", "exec_with_cpu_mask", "format_table", "run_hearth",
           "run_official"]

CPU_MASKS = ("avx2", "avx2-vnni")

SENTENCE = "Hearth speaks for the small machine in the corner, and it starts within a third of a second."
VOICE, LANGUAGE = "ryan", "english"
# An id the talker can never sample (it lies in the suppressed control range): passed to the
# official generate as its end-of-speech id so that both engines run exactly --frames frames.
_NEVER_SAMPLED = 3071


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
        from ..settings import backend_options

        return backend_options(**self.backend).uses_openvino


def bench_checkpoint(size: str = "0.6b", kind: str = "custom_voice") -> Path:
    """The true-shape random checkpoint (of `kind`: custom_voice, or base for cloning), written once
    into the cache directory.

    Written by a subprocess, so that its memory never shows in this process's peak RSS.
    """
    from ..settings import cache_dir

    name = f"random-{size}-seed0" if kind == "custom_voice" else f"random-{size}-{kind}-seed0"
    path = cache_dir() / "bench" / name
    if not (path / "speech_tokenizer" / "model.safetensors").is_file():
        print(f"hearth bench: writing a random {size} {kind} checkpoint to {path} (once)", file=sys.stderr)
        tmp = path.with_name(path.name + ".part")
        cmd = [sys.executable, "-m", "hearth.tools.random_checkpoint", str(tmp), "--size", size, "--seed", "0",
               "--kind", kind]
        subprocess.run(cmd, check=True)
        tmp.replace(path)
    return path


# `--cpu` runs the command again in this process (exec keeps the process's start time): the
# uptime at that exec, so that start to ready counts from it, as for a fresh command.
_EXEC_UPTIME = os.environ.pop("HEARTH_EXEC_UPTIME", None)


def _uptime_s() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def _process_age_s() -> float:
    """Seconds since this process started (Linux; after `--cpu`'s exec, since the exec), for
    start-to-ready figures."""
    try:
        if _EXEC_UPTIME is not None:
            return _uptime_s() - float(_EXEC_UPTIME)
        ticks = os.sysconf("SC_CLK_TCK")
        with open("/proc/self/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19]) / ticks
        return _uptime_s() - start
    except (OSError, ValueError, IndexError):
        return float("nan")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run_hearth(s: BenchSettings, model: Path, setup_s: float = 0.0) -> dict[str, Any]:
    """`setup_s`: time this process spent before loading that a user would not (writing the checkpoint)."""
    import torch

    from .. import load

    if s.threads:
        torch.set_num_threads(s.threads)
    t = time.perf_counter()
    engine = load(model, progress=False, **s.backend)
    load_engine_s = time.perf_counter() - t
    load_s = _process_age_s() - setup_s
    if s.streams:
        out: dict[str, Any] = {"engine": "hearth", "load_s": load_s, "load_engine_s": load_engine_s,
               "backend": engine.backend.describe(), "weights_mb": engine.backend.weights_mb(),
               "streams": [run_streams(engine, s, n) for n in s.streams]}
        rows = max(s.max_batch or max(s.streams), 2)
        print(f"hearth bench: batched rows against solo, teacher-forced ({rows} rows) ...", file=sys.stderr)
        out["batch_agreement"] = batch_agreement(engine, rows, s.frames)
        engine.close()
        return out
    options = engine.sampling(greedy=True, max_new_tokens=s.frames + 1, min_new_tokens=s.frames + 1)
    voice: Any = VOICE
    cloning = None
    if engine.config.model_type == "base" and not s.clone_s:
        print("hearth bench: a Base checkpoint speaks cloned voices: cloning from a 10 s reference (--clone)",
              file=sys.stderr)
        s = replace(s, clone_s=10.0)
    if s.clone_s:
        voice, cloning = run_clone(engine, s, options)
    runs = []
    for i in range(s.runs + 1):  # the first run warms up
        cpu0, t0 = time.process_time(), time.perf_counter()
        ttfa, samples, decode = None, 0, []
        with engine.stream(s.text, voice, LANGUAGE, options=options, budget=None, chunk_frames=s.chunk_frames,
                           first_chunk_frames=s.first_chunk_frames) as stream:
            for chunk in stream:
                if ttfa is None and chunk.frames:
                    ttfa = time.perf_counter() - t0
                samples += len(chunk.samples)
                if chunk.frames:
                    decode.append(chunk.timing.decode_s)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        g = stream.generation
        audio_s = samples / engine.sample_rate
        if i == 0:
            continue
        runs.append({
            "ttfa_s": ttfa, "wall_s": wall, "cpu_s": cpu, "audio_s": audio_s, "frames": g.frames,
            "prefill_ms": 1000 * g.prefill_s, "talker_step_ms": 1000 * g.talker_s / max(g.frames, 1),
            "predictor_frame_ms": 1000 * g.predictor_s / max(g.frames, 1),
            "vocoder_chunk_ms": 1000 * statistics.mean(decode) if decode else 0.0,
        })
    out = _summarise(runs, load_s, load_engine_s, threads=torch.get_num_threads(), engine="hearth")
    out["backend"] = engine.backend.describe()
    if s.first_chunk_frames:
        out["backend"]["first_chunk_frames"] = s.first_chunk_frames
    out["weights_mb"] = engine.backend.weights_mb()
    if cloning is not None:
        out["clone"] = cloning
    if s.live_wps:
        out["live"] = run_live(engine, s, options)
    if s.agent_rates:
        out["agent"] = run_agent(engine, s.agent_rates, s.agent_turns)
    engine.close()
    return out


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


def _first_audio(engine: Any, voice: Any, options: Any, s: BenchSettings) -> float:
    """Seconds from now to the first audio of the standard sentence in `voice` (then stopped)."""
    t0 = time.perf_counter()
    with engine.stream(s.text, voice, LANGUAGE, options=options, budget=None, chunk_frames=s.chunk_frames,
                       first_chunk_frames=s.first_chunk_frames) as stream:
        for chunk in stream:
            if chunk.frames:
                return time.perf_counter() - t0
    raise RuntimeError("the stream ended without audio")


def run_clone(engine: Any, s: BenchSettings, options: Any) -> tuple[Any, dict[str, Any]]:
    """A Base checkpoint's cloned voice, from a reference of `s.clone_s` seconds, the ways a user
    meets it: cloned from raw audio for each request (both encoders, then the vocoder hears the
    reference), a stored profile's first use in a process (the profile read; the reference's
    vocoder state decoded, or read from disk where the backend keeps it), and a stored profile
    once in use (the standard runs). Returns the stored voice and the figures."""
    import tempfile

    from ..voices import Cloner, VoiceStore

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


def run_agent(engine: Any, rates: tuple[float, ...], turns: int) -> dict[str, Any]:
    """Voice-agent turns (`hearth.tools.agent.speak_turn`) with an LLM writing at each rate: the time from
    its first token to the first audio, live (interleaved, sentences start before they end) beside
    a sentence-at-a-time pipeline (each sentence spoken once complete), the gaps inside an answer,
    and how soon a barge-in silences the speech. Random weights never say EOS, so each sentence
    stops at 4 + 4 frames per text token (0.32 s per token, about real speech)."""
    import threading

    from ..sampling import FrameBudget
    from ..scheduler import Scheduler
    from .agent import BargeIn, speak_turn

    budget = FrameBudget(base=4, per_token=4)
    logging.getLogger("hearth.generate").setLevel(logging.ERROR)  # the short budget is the point, not news
    out: dict[str, Any] = {"answer": AGENT_ANSWER, "turns": turns, "frames_per_token": 4}
    with Scheduler(engine) as scheduler:
        def turn(rate: float, mode: str, seed: int, barge: BargeIn | None = None) -> Any:
            sink = _PlaybackClock(engine.sample_rate)
            if barge is not None:  # speak over it one second into its audio
                def watch() -> None:
                    deadline = time.monotonic() + 120
                    while sink.samples < engine.sample_rate and time.monotonic() < deadline:
                        time.sleep(0.005)
                    barge.set()
                threading.Thread(target=watch, daemon=True).start()
            return speak_turn(scheduler, sink, _llm_tokens(AGENT_ANSWER, rate), voice=VOICE, language=LANGUAGE,
                              seed=seed, text_mode=mode, budget=budget, barge_in=barge)

        turn(50.0, "interleaved", 0)  # warm-up
        for rate in rates:
            row: dict[str, Any] = {}
            for mode, name in (("interleaved", "live"), ("whole", "sentence_at_a_time")):
                reports = []
                for k in range(turns):
                    reports.append(turn(rate, mode, k))
                    print(f"hearth bench: agent {rate:g} tok/s, {name} {k + 1}/{turns}: {reports[-1].summary()}",
                          file=sys.stderr)
                first = [r.token_to_audio_s for r in reports if r.token_to_audio_s is not None]
                gaps = [sum(r.gaps) for r in reports]
                row[name] = {
                    "first_token_to_audio_p50_s": statistics.median(first) if first else None,
                    "first_token_to_audio_p95_s": _p95(first) if first else None,
                    "gap_total_p50_s": statistics.median(gaps), "gap_total_max_s": max(gaps),
                    "gaps_per_answer": statistics.mean(len(r.gaps) for r in reports),
                    # at the roll-over into the next sentence (a fresh prompt): its start to its first audio
                    "boundary_gap_total_p50_s": statistics.median(sum(r.boundary_gaps) for r in reports),
                    "sentence_start_to_audio_p50_s": _median_or_none(
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


def _rss_mb() -> tuple[float, float]:
    """(current, peak since the last reset) resident set size of this process, from /proc."""
    fields = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return fields.get("VmRSS", float("nan")), fields.get("VmHWM", _peak_rss_mb())


def _reset_peak_rss() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux)
    except OSError:
        pass


def run_streams(engine: Any, s: BenchSettings, n: int) -> dict[str, Any]:
    """`n` requests at once through the scheduler (as `hearth serve` runs them), each a different
    voice and text of `s.frames` frames, taken as fast as they come; warm-up, then `s.runs` runs.
    Throughput is seconds of audio made per wall second, all streams together."""
    import threading

    from ..scheduler import Scheduler

    batch = s.max_batch or n
    runs: list[dict[str, Any]] = []
    _reset_peak_rss()
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
        calls, rows = (scheduler._batcher.calls, scheduler._batcher.rows_stepped) if scheduler._batcher else (0, 0)
    rss, peak = _rss_mb()
    ttfa = [r["ttfa_s"] for run in runs for r in run["streams"] if r["ttfa_s"] is not None]
    return {
        "streams": n,
        "max_batch": batch,
        "throughput_x_realtime": statistics.median(
            sum(r["audio_s"] for r in run["streams"]) / run["wall_s"] for run in runs),
        "ttfa_s": statistics.median(ttfa) if ttfa else None,
        "ttfa_p95_s": _p95(ttfa) if ttfa else None,
        "rtf": statistics.median(r["wall_s"] / r["audio_s"] for run in runs for r in run["streams"] if r["audio_s"]),
        "audio_s_per_stream": statistics.median(r["audio_s"] for run in runs for r in run["streams"]),
        "errors": sum(r["errors"] for run in runs for r in run["streams"]),
        "mean_rows_per_step": rows / calls if calls else 1.0,
        "rss_mb": rss,
        "peak_rss_mb": peak,
        "runs": len(runs),
    }


def batch_agreement(engine: Any, rows: int, frames: int) -> dict[str, Any]:
    """How often a batched row computes what it would alone, teacher-forced: `rows` texts, each
    fed its own solo greedy trajectory both through a solo session and as a row of one batch
    (rows join one frame apart, as in continuous batching). Per frame and row: does the talker's
    codebook-0 argmax agree, how far apart are its logits (SNR), and do the predictor's 15 codes,
    given the same codebook 0, agree."""
    import numpy as np
    import torch

    from ..audio import snr_db
    from ..prompt import embed_prompt

    options = engine.sampling(greedy=True)
    batch = engine.lm.batch(rows)
    cb0_agree, codes_agree, snrs = [], [], []
    state: list[dict[str, Any]] = []
    with torch.inference_mode():
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
                snrs.append(snr_db(want.numpy(), logits.numpy()))
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


def _median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def run_live(engine: Any, s: BenchSettings, options: Any) -> dict[str, Any]:
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
        "first_audio_s": statistics.median(live_ttfa), "first_audio_p95_s": _p95(live_ttfa),
        "whole_text_interleaved_first_audio_s": statistics.median(whole_ttfa),
        "batch_invariance": {"threshold": engine.batch_invariance().threshold,
                             "block": engine.batch_invariance().block},
    }


def prepare_openvino(s: BenchSettings, model: Path) -> None:
    """Convert (and compile) once in a subprocess, so the measured start reads the on-disk cache."""
    code = "import sys, json, hearth; hearth.load(sys.argv[1], progress=False, **json.loads(sys.argv[2]))"
    subprocess.run([sys.executable, "-c", code, str(model), json.dumps(s.backend)], check=True)


def _summarise(runs: list[dict[str, Any]], load_s: float, load_engine_s: float, threads: int,
               engine: str) -> dict[str, Any]:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return {
        "engine": engine,
        "ttfa_s": med["ttfa_s"],
        "ttfa_p95_s": _p95([r["ttfa_s"] for r in runs]),
        "rtf": statistics.median(r["wall_s"] / r["audio_s"] for r in runs),
        "cpu_s_per_audio_s": statistics.median(r["cpu_s"] / r["audio_s"] for r in runs),
        "peak_rss_mb": _peak_rss_mb(),
        "audio_s": med["audio_s"],
        "frames": med["frames"],
        "load_s": load_s,
        "load_engine_s": load_engine_s,
        "runs": len(runs),
        "threads": threads,
        "stages_ms": {k: med[k] for k in ("prefill_ms", "talker_step_ms", "predictor_frame_ms", "vocoder_chunk_ms")
                      if k in med},
    }


def _official_worker(s: BenchSettings, model: Path) -> dict[str, Any]:
    """Runs inside the subprocess: the official path, text in hand to all audio out."""
    import torch

    from .reference import load_official, official_generate, official_input_ids

    if s.threads:
        torch.set_num_threads(s.threads)
    t = time.perf_counter()
    official = load_official(model)
    load_engine_s = time.perf_counter() - t
    load_s = _process_age_s()
    runs = []
    for i in range(s.runs + 1):
        cpu0, t0 = time.process_time(), time.perf_counter()
        ids = official_input_ids(official, s.text)
        codes = official_generate(official, ids, VOICE, LANGUAGE, greedy=True, max_new_tokens=s.frames + 1,
                                  eos_token_id=_NEVER_SAMPLED)
        t1 = time.perf_counter()
        with torch.inference_mode():
            wavs, sr = official.model.speech_tokenizer.decode([{"audio_codes": codes}])
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        if i == 0:
            continue
        frames = codes.shape[0]
        runs.append({
            "ttfa_s": wall, "wall_s": wall, "cpu_s": cpu, "audio_s": len(wavs[0]) / sr, "frames": frames,
            "lm_frame_ms": 1000 * (t1 - t0) / max(frames, 1), "decode_ms": 1000 * (t0 + wall - t1),
        })
    out = _summarise(runs, load_s, load_engine_s, threads=torch.get_num_threads(), engine="official")
    out["stages_ms"] = {k: statistics.median(r[k] for r in runs) for k in ("lm_frame_ms", "decode_ms")}
    return out


def run_official(s: BenchSettings, model: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "hearth.tools.bench", "--official-worker", json.dumps(vars(s)), str(model)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the official benchmark failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


_ROWS = [
    ("first audio, median (s)", "ttfa_s", "{:.3f}"),
    ("first audio, p95 (s)", "ttfa_p95_s", "{:.3f}"),
    ("real-time factor", "rtf", "{:.2f}"),
    ("CPU-s per audio-s", "cpu_s_per_audio_s", "{:.2f}"),
    ("peak RSS (MB)", "peak_rss_mb", "{:.0f}"),
    ("audio per run (s)", "audio_s", "{:.2f}"),
    ("start to ready (s)", "load_s", "{:.1f}"),
]


def format_table(result: dict[str, Any]) -> str:
    ours, ref = result["hearth"], result.get("official")
    lines = [f"simd: {result.get('simd')}" + (f" (features hidden: --cpu {result['cpu_mask']})"
                                               if result.get("cpu_mask") else ""),
             f"{'':28}{'hearth':>12}" + (f"{'official':>12}{'ratio':>9}" if ref else "")]
    for label, key, fmt in _ROWS:
        line = f"{label:28}{fmt.format(ours[key]):>12}"
        if ref:
            line += f"{fmt.format(ref[key]):>12}{ours[key] / ref[key]:>9.3f}"
        lines.append(line)
    lines.append("hearth stages (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in ours["stages_ms"].items()))
    b = ours.get("backend", {})
    if b:
        lines.append("hearth backend: " + ", ".join(f"{k}={v}" for k, v in b.items() if v is not None))
    for part, w in ours.get("weights_mb", {}).items():
        lines.append(f"weights {part}: {w['fp32_mb']:.0f} MB fp32 -> {w['stored_mb']:.0f} MB stored")
    if ref:
        lines.append("official stages (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in ref["stages_ms"].items()))
    if "clone" in ours:
        c = ours["clone"]
        lines.append(f"cloned voice, in context, {c['reference_s']:g} s reference ({c['reference_frames']} frames): "
                     f"first audio from raw audio {c['ttfa_from_raw_audio_s']:.3f} s (encoders {c['clone_s']:.3f} s, "
                     f"vocoder priming {c['vocoder_prime_s']:.3f} s); stored profile, first use in a process "
                     f"{c['ttfa_stored_first_use_s']:.3f} s (profile read {c['profile_load_s'] * 1000:.1f} ms), in "
                     f"use {ours['ttfa_s']:.3f} s (the table's first audio)")
    if "live" in ours:
        live = ours["live"]
        lines.append(f"live text at {live['words_per_second']:g} words/s: first audio {live['first_audio_s']:.3f} s "
                     f"(p95 {live['first_audio_p95_s']:.3f}) after the first word; the whole text in the "
                     f"interleaved mode: {live['whole_text_interleaved_first_audio_s']:.3f} s")
    return "\n".join(lines)


def format_streams(result: dict[str, Any]) -> str:
    lines = [f"{'streams':>8}{'batch':>7}{'x realtime':>12}{'first audio p50':>17}{'p95':>8}{'RTF/stream':>12}"
             f"{'rows/step':>11}{'RSS MB':>9}"]
    for r in result["streams"]:
        ttfa = "-" if r["ttfa_s"] is None else f"{r['ttfa_s']:.3f}"
        p95 = "-" if r["ttfa_p95_s"] is None else f"{r['ttfa_p95_s']:.3f}"
        lines.append(f"{r['streams']:>8}{r['max_batch']:>7}{r['throughput_x_realtime']:>12.2f}{ttfa:>17}{p95:>8}"
                     f"{r['rtf']:>12.2f}{r['mean_rows_per_step']:>11.2f}{r['peak_rss_mb']:>9.0f}")
    agreement = result.get("batch_agreement")
    if agreement:
        lines.append(f"batched vs solo, teacher-forced, {agreement['rows']} rows x {agreement['frames_per_row']} "
                     f"frames: codebook 0 top-1 agreement {agreement['talker_top1_agreement']:.3f}, talker logits "
                     f"SNR {agreement['talker_logits_snr_db_median']:.1f} dB (median), predictor codes equal "
                     f"{agreement['predictor_codes_equal']:.3f}")
    b = result.get("backend", {})
    if b:
        lines.append("hearth backend: " + ", ".join(f"{k}={v}" for k, v in b.items() if v is not None))
    return "\n".join(lines)


def exec_with_cpu_mask(mask: str) -> None:
    """Run this command again in a process whose CPU shows no AVX-512, AMX or BF16 (and, for "avx2",
    no AVX-VNNI): every runtime then takes the code path of such a machine, timed on this one. How:
    `cpu_mask.c`, compiled once into the cache and preloaded (CPUID faulting, Linux x86-64). Returns
    only when this process is already that one; raises ValueError where it cannot be done."""
    import platform
    import shutil

    from ..settings import cache_dir

    if mask not in CPU_MASKS:
        raise ValueError(f"--cpu must be one of {', '.join(CPU_MASKS)}, got {mask!r}")
    if os.environ.get("HEARTH_CPU_MASK") == mask:
        return
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise ValueError("--cpu hides CPU features through Linux's CPUID faulting, on x86-64 only")
    if "cpuid_fault" not in Path("/proc/cpuinfo").read_text().split():
        raise ValueError("this CPU (or its hypervisor) does not offer CPUID faulting ('cpuid_fault' in "
                         "/proc/cpuinfo), so its features cannot be hidden; measure on an AVX2 machine instead")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise ValueError("--cpu compiles a small preload library and needs a C compiler: apt-get install gcc")
    source = Path(__file__).parent.parent / "cpu_mask.c"
    import hashlib

    key = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    library = cache_dir() / f"cpu_mask-{key}.so"
    if not library.is_file():
        library.parent.mkdir(parents=True, exist_ok=True)
        tmp = library.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", str(source), "-o", str(tmp)], check=True)
        tmp.replace(library)
    preload = " ".join(filter(None, [str(library), os.environ.get("LD_PRELOAD")]))
    env = {**os.environ, "HEARTH_CPU_MASK": mask, "LD_PRELOAD": preload, "HEARTH_EXEC_UPTIME": str(_uptime_s())}
    logging.shutdown()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "hearth.cli", *sys.argv[1:]], env)


def main_bench(s: BenchSettings, compare_official: bool, as_json: bool) -> int:
    from ..topology import simd

    mask = os.environ.get("HEARTH_CPU_MASK")
    if mask and simd().startswith(("avx512", "amx")):
        raise RuntimeError(f"the CPU was to show {mask} only, but the runtimes still use {simd()}")
    t = time.perf_counter()
    model = Path(s.model) if s.model else bench_checkpoint(kind="base" if s.clone_s else "custom_voice")
    if s.uses_openvino:
        print("hearth bench: preparing the OpenVINO models (converted once, then read from the cache) ...",
              file=sys.stderr)
        prepare_openvino(s, model)
    setup_s = time.perf_counter() - t
    result: dict[str, Any] = {"model": str(model), "frames": s.frames, "runs": s.runs, "text": s.text,
                              "chunk_frames": s.chunk_frames, "first_chunk_frames": s.first_chunk_frames,
                              "simd": simd(), "cpu_mask": mask}
    result["hearth"] = run_hearth(s, model, setup_s)
    result.update({k: v for k, v in result["hearth"].items() if k != "engine"})
    if s.streams:
        if as_json:
            json.dump(result, sys.stdout)
            sys.stdout.write("\n")
        else:
            print(format_streams(result))
        return 0
    if compare_official:
        print("hearth bench: running the official package for comparison ...", file=sys.stderr)
        ref = run_official(s, model)
        result["official"] = ref
        result["ratios"] = {k: result["hearth"][k] / ref[k] for _, k, _ in _ROWS if ref.get(k)}
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_table(result))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--official-worker":
        settings = BenchSettings(**json.loads(sys.argv[2]))
        print(json.dumps(_official_worker(settings, Path(sys.argv[3]))))
        sys.exit(0)
    print("usage: hearth bench ... (this module is run through the hearth command)", file=sys.stderr)
    sys.exit(2)
