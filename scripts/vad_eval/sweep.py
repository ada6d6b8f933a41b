"""Threshold sweep: mean strict F1 over speech conditions, music F1, and non-speech FPR (raw frame decisions)."""
import numpy as np, json
from score import evaluate, SPEECH_CONDS, ONLY_CONDS
out = {}
for c in ["silero-onnx", "pymicro-vad", "ten-vad-256"]:
    for t in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]:
        r = evaluate(c, "raw", t)
        f1 = np.mean([r[k]["f1"] for k in SPEECH_CONDS]); f1m = np.mean([r[k]["f1"] for k in ("music_snr10", "music_snr5")])
        f0 = np.mean([r[k]["f1"] for k in ("white_snr0", "pink_snr0")])
        fpr_m = np.mean([r[k]["fpr"] for k in ONLY_CONDS if "music" in k]); fpr_n = np.mean([r[k]["fpr"] for k in ONLY_CONDS if "music" not in k])
        on = np.median([r[k]["onset_ms_median"] for k in SPEECH_CONDS]); off = np.median([r[k]["offset_ms_median"] for k in SPEECH_CONDS])
        print(f"{c:12s} thr={t:.1f} meanF1={f1:.3f} F1@0dB={f0:.3f} musicF1={f1m:.3f} FPR noise-only={fpr_n:.3f} music-only={fpr_m:.3f} onset~{on:.0f}ms offset~{off:.0f}ms")
