"""Compares time stretchers for Hearth's `speed` on speech: pitch kept, spectra kept, latency, cost.

Not part of the package or the suite: the numbers in docs/performance.md ("Speaking rate") come from

    apt-get install espeak-ng                   # a formant synthesizer: real phonetics, no download
    python -m venv --system-site-packages /tmp/tsm && /tmp/tsm/bin/pip install pylibrb pedalboard audiotsm pytsmod audiostretchy
    /tmp/tsm/bin/python docs/speaking_rate.py

Each stretcher gets the same 24 kHz speech (espeak-ng, three voices) at each speed. Measures:
- pitch: the median |cents| between the output's f0 at time t and the input's at t * speed (voiced
  frames of both), by normalized autocorrelation;
- spectrum: the mean distance (dB) between 40-band log-mel frames of the output at t and of the
  input at t * speed, over frames louder than -50 dB; smearing, doubled transients and phasiness
  raise it (0 for the input against itself);
- duration: output length against input length / speed;
- held: how much output a streaming stretcher still holds after a first 0.4 s chunk (Hearth's
  first audio is later by this much); "whole" where the library needs the whole input;
- cost: CPU milliseconds per second of input.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

RATE = 24000
SPEEDS = (0.5, 0.8, 1.25, 1.5, 2.0, 3.0)
TEXT = ("The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore, "
        "and the shells she sells are surely seashells.")


def speech(voice: str) -> np.ndarray:
    import soundfile
    import soxr

    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", f.name, TEXT], check=True)
        x, rate = soundfile.read(f.name, dtype="float32")
    return soxr.resample(x, rate, RATE).astype(np.float32) * 0.8


def f0_track(x: np.ndarray, hop: int = 240, size: int = 960) -> np.ndarray:
    """f0 (Hz) per 10 ms frame, NaN where unvoiced (peak of normalized autocorrelation < 0.6)."""
    lo, hi = RATE // 400, RATE // 60
    out = []
    for start in range(0, len(x) - size - hi, hop):
        a = x[start:start + size]
        if np.sqrt(np.mean(a ** 2)) < 0.01:
            out.append(np.nan)
            continue
        best, lag = 0.0, 0
        for k in range(lo, hi):
            b = x[start + k:start + k + size]
            r = float(a @ b) / (np.sqrt(float(a @ a) * float(b @ b)) + 1e-12)
            if r > best:
                best, lag = r, k
        out.append(RATE / lag if best > 0.6 else np.nan)
    return np.array(out)


def logmel(x: np.ndarray) -> np.ndarray:
    import librosa

    m = librosa.feature.melspectrogram(y=x, sr=RATE, n_fft=1024, hop_length=240, n_mels=40, power=2.0)
    return 10 * np.log10(m + 1e-10).T


def compare(x: np.ndarray, y: np.ndarray, speed: float, fx: np.ndarray, mx: np.ndarray) -> tuple[float, float]:
    fy, my = f0_track(y), logmel(y)
    idx = np.minimum(np.round(np.arange(len(fy)) * speed).astype(int), len(fx) - 1)
    both = ~np.isnan(fy) & ~np.isnan(fx[idx])
    cents = np.median(np.abs(1200 * np.log2(fy[both] / fx[idx][both]))) if both.any() else np.nan
    idx = np.minimum(np.round(np.arange(len(my)) * speed).astype(int), len(mx) - 1)
    loud = mx[idx].max(axis=1) > mx.max() - 50
    # The nearest of the input's frames within 20 ms of t * speed: a time-domain stretcher may place
    # a window up to a pitch period early or late, which is no fault in what is heard.
    distances = [np.sqrt(np.mean((my - mx[np.clip(idx + d, 0, len(mx) - 1)]) ** 2, axis=1)) for d in range(-2, 3)]
    spectral = float(np.mean(np.min(distances, axis=0)[loud]))
    return float(cents), spectral


# Each stretcher: speed -> (a function taking the chunks and returning (output, samples out after the
# first chunk or None when it needs the whole input)).
Chunked = Callable[[list[np.ndarray]], tuple[np.ndarray, int | None]]


def hearth_wsola(speed: float) -> Chunked:
    from hearth.stretch import Stretcher

    def run(chunks: list[np.ndarray]) -> tuple[np.ndarray, int | None]:
        s = Stretcher(speed, RATE)
        outs = [s.feed(c) for c in chunks]
        return np.concatenate(outs + [s.finish()]), len(outs[0])
    return run


def rubberband(speed: float, finer: bool = True) -> Chunked:
    import pylibrb

    def run(chunks: list[np.ndarray]) -> tuple[np.ndarray, int | None]:
        opts = pylibrb.Option.PROCESS_REALTIME | (pylibrb.Option.ENGINE_FINER if finer else pylibrb.Option.ENGINE_FASTER)
        s = pylibrb.RubberBandStretcher(sample_rate=RATE, channels=1, options=opts, initial_time_ratio=1 / speed)
        pad = s.get_preferred_start_pad()
        delay = s.get_start_delay()
        s.process(np.zeros((1, pad), np.float32))
        outs, first = [], None
        for i, c in enumerate(chunks):
            s.process(c[None].astype(np.float32), final=i == len(chunks) - 1)
            outs.append(s.retrieve_available()[0])
            if first is None:
                first = max(0, sum(len(o) for o in outs) - delay)
        while s.available() > 0:
            outs.append(s.retrieve_available()[0])
        y = np.concatenate(outs)[delay:]
        return y, first
    return run


def pedalboard_rb(speed: float) -> Chunked:
    import pedalboard

    def run(chunks: list[np.ndarray]) -> tuple[np.ndarray, int | None]:
        x = np.concatenate(chunks)
        return pedalboard.time_stretch(x[None], RATE, stretch_factor=speed)[0], None
    return run


def tdhs(speed: float) -> Chunked:
    from audiostretchy.interface.tdhs import TDHSAudioStretch

    def run(chunks: list[np.ndarray]) -> tuple[np.ndarray, int | None]:
        ratio = 1 / speed
        flags = TDHSAudioStretch.STRETCH_DUAL_FLAG if not 0.5 <= ratio <= 2.0 else 0
        s = TDHSAudioStretch(RATE // 333, RATE // 55, 1, flags)
        outs, first = [], None
        for c in chunks:
            pcm = np.clip(c * 32767, -32768, 32767).astype(np.int16)
            out = np.zeros(s.output_capacity(len(pcm), max(ratio, 1.0)) + 16, np.int16)
            n = s.process_samples(pcm, len(pcm), out, ratio)
            outs.append(out[:n])
            if first is None:
                first = n
        out = np.zeros(RATE * 4, np.int16)
        outs.append(out[:s.flush(out)])
        s.deinit()
        return np.concatenate(outs).astype(np.float32) / 32767, first
    return run


def audiotsm_wsola(speed: float) -> Chunked:
    import audiotsm
    from audiotsm.io.array import ArrayReader, ArrayWriter

    def run(chunks: list[np.ndarray]) -> tuple[np.ndarray, int | None]:
        tsm = audiotsm.wsola(channels=1, speed=speed)
        writer = ArrayWriter(channels=1)
        first = None
        for c in chunks:
            reader = ArrayReader(c[None])
            while not reader.empty:
                tsm.read_from(reader)
                tsm.write_to(writer)
            if first is None:
                first = writer.data.shape[1]
        while tsm.flush_to(writer)[1] is False:
            pass
        return writer.data[0].astype(np.float32), first
    return run


def pytsmod_wsola(speed: float) -> Chunked:
    import pytsmod

    def run(chunks: list[np.ndarray]) -> tuple[np.ndarray, int | None]:
        return pytsmod.wsola(np.concatenate(chunks).astype(np.float64), 1 / speed).astype(np.float32), None
    return run


STRETCHERS: dict[str, Callable[[float], Chunked]] = {
    "hearth (WSOLA, numpy)": hearth_wsola,
    "Rubber Band R3 (pylibrb, real-time)": rubberband,
    "Rubber Band R2 (pylibrb, real-time)": lambda s: rubberband(s, finer=False),
    "Rubber Band (pedalboard, offline)": pedalboard_rb,
    "TDHS (audiostretchy)": tdhs,
    "WSOLA (audiotsm)": audiotsm_wsola,
    "WSOLA (pytsmod)": pytsmod_wsola,
}


def main() -> None:
    voices = {v: speech(v) for v in ("en-us", "en+f3", "de")}
    reference = {v: (f0_track(x), logmel(x)) for v, x in voices.items()}
    chunk = int(0.4 * RATE)
    print(f"{'stretcher':38} {'speed':>5} {'cents':>6} {'dB':>6} {'len err ms':>10} {'held ms':>8} {'ms/s':>6}")
    for name, make in STRETCHERS.items():
        rows = []
        for speed in SPEEDS:
            cents, spectral, err, held, cost = [], [], [], [], []
            for v, x in voices.items():
                run = make(speed)
                chunks = [x[i:i + chunk] for i in range(0, len(x), chunk)]
                t0 = time.process_time()
                y, first = run(chunks)
                cost.append((time.process_time() - t0) / (len(x) / RATE) * 1000)
                c, d = compare(x, y, speed, *reference[v])
                cents.append(c)
                spectral.append(d)
                err.append((len(y) - len(x) / speed) / RATE * 1000)
                held.append(np.nan if first is None else (chunk / speed - first) / RATE * 1000)
            rows.append((speed, np.mean(cents), np.mean(spectral), np.mean(np.abs(err)), np.mean(held), np.mean(cost)))
            r = rows[-1]
            held_s = "whole" if np.isnan(r[4]) else f"{r[4]:.0f}"
            print(f"{name:38} {r[0]:5.2f} {r[1]:6.1f} {r[2]:6.2f} {r[3]:10.1f} {held_s:>8} {r[5]:6.1f}", flush=True)
        mean = np.mean([r[1] for r in rows]), np.mean([r[2] for r in rows])
        print(f"{name:38} {'mean':>5} {mean[0]:6.1f} {mean[1]:6.2f}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
