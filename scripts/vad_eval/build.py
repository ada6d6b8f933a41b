"""Build test clips (16 kHz int16 WAV) with 10 ms ground-truth labels.

clips/<cond>/cNN.wav, labels/cNN.npz (speech clips; labels identical across conditions),
noise-only/music-only clips have all-zero labels.
"""
import os, json, glob
import numpy as np, soundfile as sf
from scipy import signal

SR = 16000
HOP = 160  # 10 ms label grid
BASE = os.path.dirname(os.path.abspath(__file__))
LABEL_DB = -40.0  # frame energy threshold relative to the utterance's peak 10 ms frame energy
N_SPEECH_CLIPS = 10
N_NOISE_CLIPS = 4

def frame_energy(x):
    n = len(x) // HOP
    return (x[: n * HOP].reshape(n, HOP) ** 2).mean(1)

def load_utts():
    meta = json.load(open(os.path.join(BASE, "utts", "meta.json"), encoding="utf-8"))
    out = []
    for m in meta:
        x, sr = sf.read(os.path.join(BASE, "utts", m["file"]), dtype="float32")
        assert sr == SR
        # pad to a multiple of the label hop so labels align exactly
        x = np.concatenate([x, np.zeros((-len(x)) % HOP, np.float32)])
        e = frame_energy(x)
        lab = e > e.max() * 10 ** (LABEL_DB / 10)
        act = x.reshape(-1, HOP)[lab]
        x = x / np.sqrt((act ** 2).mean())  # active level = 0 dB (unit RMS)
        out.append((x, lab, m))
    return out

def make_speech_clip(rng, utts, dur_target):
    # starts with 0.5-2.5 s of non-speech, then utterance, gap 0.3-3 s, ...
    pos = int(rng.uniform(0.5, 2.5) * SR) // HOP * HOP
    segs = []
    total = int(dur_target * SR)
    parts = []
    while True:
        x, lab, m = utts[rng.integers(len(utts))]
        if pos + len(x) > total and segs:
            break
        gain_db = rng.uniform(-4, 4)
        segs.append((pos, x * 10 ** (gain_db / 20), lab, m["file"]))
        pos += len(x)
        pos += int(rng.uniform(0.3, 3.0) * SR) // HOP * HOP
    n = max(pos, total) // HOP * HOP
    clean = np.zeros(n, np.float32)
    labels = np.zeros(n // HOP, bool)
    utt_bounds = []  # (onset_s, offset_s) from labelled frames
    for p, x, lab, f in segs:
        clean[p: p + len(x)] += x
        f0 = p // HOP
        labels[f0: f0 + len(lab)] |= lab
        idx = np.flatnonzero(lab)
        utt_bounds.append(((f0 + idx[0]) * HOP / SR, (f0 + idx[-1] + 1) * HOP / SR))
    return clean, labels, np.array(utt_bounds), [s[3] for s in segs]

# ---------------- noise / music generators ----------------
def white(rng, n):
    return rng.standard_normal(n).astype(np.float32)

def pink(rng, n):
    X = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    f[0] = f[1]
    y = np.fft.irfft(X / np.sqrt(f), n)
    return (y / y.std()).astype(np.float32)

def adsr(n, a, d, s, r):
    a, d, r = max(int(a * SR), 1), max(int(d * SR), 1), max(int(r * SR), 1)
    env = np.full(n, s, np.float32)
    env[: min(a, n)] = np.linspace(0, 1, a)[: min(a, n)]
    if a < n:
        k = min(d, n - a); env[a: a + k] = np.linspace(1, s, d)[:k]
    if r < n:
        env[-r:] *= np.linspace(1, 0, r)
    return env

def tone(f0, n, rng, nharm, rolloff, vib=0.0):
    t = np.arange(n) / SR
    ph = 2 * np.pi * f0 * t
    if vib:
        ph += vib * np.sin(2 * np.pi * rng.uniform(4, 6) * t) * (f0 / 5.5) / (2 * np.pi) * 2 * np.pi / f0 * f0 * 0.01
    y = np.zeros(n, np.float32)
    for k in range(1, nharm + 1):
        if f0 * k > 7500: break
        y += (np.sin(k * ph + rng.uniform(0, 6.28)) / k ** rolloff).astype(np.float32)
    return y

def bp(x, lo, hi):
    sos = signal.butter(4, [lo, hi], btype="band", fs=SR, output="sos")
    return signal.sosfilt(sos, x).astype(np.float32)

def music(rng, n, drums=True):
    y = np.zeros(n, np.float32)
    bpm = rng.uniform(80, 140); beat = 60 / bpm
    root = 110 * 2 ** (rng.integers(0, 12) / 12)  # A2..G#3
    major = [0, 2, 4, 5, 7, 9, 11]
    prog = [[0, 4, 7], [7, 11, 14], [9, 12, 16], [5, 9, 12]]  # I V vi IV
    if rng.random() < 0.5: prog = [[0, 4, 7], [5, 9, 12], [7, 11, 14], [0, 4, 7]]
    bar = int(4 * beat * SR)
    nharm_pad, roll_pad = int(rng.integers(4, 10)), rng.uniform(0.8, 1.6)
    for b, start in enumerate(range(0, n, bar)):
        ch = prog[b % len(prog)]
        m = min(bar, n - start)
        env = adsr(m, 0.05, 0.3, 0.6, 0.2)
        for st in ch:
            f = root * 2 * 2 ** (st / 12)
            y[start: start + m] += 0.25 * tone(f, m, rng, nharm_pad, roll_pad) * env
        # bass on each beat
        for q in range(4):
            s0 = start + int(q * beat * SR); mm = min(int(beat * SR), n - s0)
            if mm <= 0: break
            y[s0: s0 + mm] += 0.4 * tone(root * 2 ** (ch[0] / 12) / 2 if root > 80 else root * 2 ** (ch[0] / 12), mm, rng, 5, 1.2) * adsr(mm, 0.01, 0.15, 0.4, 0.05)
    # melody: eighth/quarter notes from the scale, plucked or bowed
    s0 = 0
    nh_mel = int(rng.integers(3, 12)); roll_mel = rng.uniform(0.7, 1.5)
    pluck = rng.random() < 0.5
    while s0 < n:
        L = int(beat * SR * rng.choice([0.5, 0.5, 1, 1, 2]))
        mm = min(L, n - s0)
        if rng.random() < 0.8:
            deg = int(rng.integers(0, 10))
            st = major[deg % 7] + 12 * (deg // 7)
            f = root * 4 * 2 ** (st / 12)
            env = adsr(mm, 0.005, 0.2, 0.1, 0.05) if pluck else adsr(mm, 0.04, 0.1, 0.8, 0.08)
            y[s0: s0 + mm] += 0.35 * tone(f, mm, rng, nh_mel, roll_mel) * env
        s0 += L
    if drums:
        step = int(beat * SR / 2)
        for i, s0 in enumerate(range(0, n, step)):
            q = i % 8
            if q in (0, 4) or (q == 6 and rng.random() < 0.3):  # kick
                m = min(int(0.25 * SR), n - s0); t = np.arange(m) / SR
                f = 50 + 90 * np.exp(-t * 30)
                k = np.sin(2 * np.pi * np.cumsum(f) / SR) * np.exp(-t * 12)
                y[s0: s0 + m] += 0.9 * k.astype(np.float32)
            if q in (2, 6):  # snare
                m = min(int(0.2 * SR), n - s0); t = np.arange(m) / SR
                sn = bp(rng.standard_normal(m), 1000, 6000) * np.exp(-t * 20) * 1.5 + 0.3 * np.sin(2 * np.pi * 190 * t) * np.exp(-t * 25)
                y[s0: s0 + m] += 0.6 * sn.astype(np.float32)
            m = min(int(0.05 * SR), n - s0); t = np.arange(m) / SR  # hi-hat every 8th
            hh = bp(rng.standard_normal(m), 6000, 7900) * np.exp(-t * 80)
            y[s0: s0 + m] += 0.5 * hh.astype(np.float32)
    return (y / y.std()).astype(np.float32)

def to_int16(x, rng):
    peak = np.abs(x).max()
    if peak > 0.95: x = x * (0.95 / peak)
    d = rng.random(len(x)) - rng.random(len(x))  # TPDF dither, 1 LSB
    return np.clip(np.round(x * 32767 + d), -32768, 32767).astype(np.int16)

SPEECH_LEVEL_DB = -26.0  # active speech level, dBFS (RMS)

def main():
    rng = np.random.default_rng(7)
    utts = load_utts()
    os.makedirs(os.path.join(BASE, "labels"), exist_ok=True)
    conds = {"clean": None}
    for kind in ("white", "pink"):
        for snr in (20, 10, 5, 0):
            conds[f"{kind}_snr{snr}"] = (kind, snr)
    conds["music_snr10"] = ("music", 10)
    conds["music_snr5"] = ("music", 5)
    for c in conds: os.makedirs(os.path.join(BASE, "clips", c), exist_ok=True)
    g = 10 ** (SPEECH_LEVEL_DB / 20)
    tot_speech = 0
    for ci in range(N_SPEECH_CLIPS):
        clean, labels, bounds, files = make_speech_clip(rng, utts, rng.uniform(35, 55))
        clean *= g
        np.savez(os.path.join(BASE, "labels", f"c{ci:02d}.npz"), labels=labels, bounds=bounds, files=np.array(files))
        p_act = (clean.reshape(-1, HOP)[labels] ** 2).mean()
        tot_speech += len(clean) / SR
        for c, spec in conds.items():
            if spec is None:
                mix = clean
            else:
                kind, snr = spec
                nz = {"white": white, "pink": pink}[kind](rng, len(clean)) if kind != "music" else music(rng, len(clean), drums=rng.random() < 0.7)
                nz *= np.sqrt(p_act / 10 ** (snr / 10)) / nz.std()
                mix = clean + nz
            sf.write(os.path.join(BASE, "clips", c, f"c{ci:02d}.wav"), to_int16(mix, rng), SR, subtype="PCM_16")
        print(f"c{ci:02d} {len(clean)/SR:.1f}s speech_frac={labels.mean():.2f} utts={len(bounds)}")
    # non-speech-only clips, levels equal to the noise/music levels used at the given SNRs
    only = {"white_only_snr10lvl": ("white", 10), "white_only_snr0lvl": ("white", 0),
            "pink_only_snr10lvl": ("pink", 10), "pink_only_snr0lvl": ("pink", 0),
            "music_only_snr10lvl": ("music", 10), "music_only_snr5lvl": ("music", 5)}
    for c, (kind, snr) in only.items():
        os.makedirs(os.path.join(BASE, "clips", c), exist_ok=True)
        lvl = g * 10 ** (-snr / 20)
        for ci in range(N_NOISE_CLIPS):
            n = int(40 * SR)
            nz = {"white": white, "pink": pink}[kind](rng, n) if kind != "music" else music(rng, n, drums=ci % 2 == 0)
            nz *= lvl / nz.std()
            sf.write(os.path.join(BASE, "clips", c, f"n{ci:02d}.wav"), to_int16(nz, rng), SR, subtype="PCM_16")
    print("speech clips total", tot_speech, "s")

if __name__ == "__main__":
    main()
