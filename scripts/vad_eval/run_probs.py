"""Run one candidate over every clip, save per-frame probabilities: probs/<cand>/<cond>/<clip>.npy"""
import os, sys, glob
for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GGML_N_THREADS"):
    os.environ.setdefault(k, "1")
import numpy as np, soundfile as sf
import vads

BASE = os.path.dirname(os.path.abspath(__file__))

def main(name):
    v = vads.make(name)
    for wav in sorted(glob.glob(os.path.join(BASE, "clips", "*", "*.wav"))):
        cond = os.path.basename(os.path.dirname(wav)); clip = os.path.basename(wav)[:-4]
        x, sr = sf.read(wav, dtype="int16"); assert sr == 16000
        v.reset()
        n = len(x) // v.hop
        p = np.array([v.prob(np.ascontiguousarray(x[i * v.hop:(i + 1) * v.hop])) for i in range(n)], np.float32)
        out = os.path.join(BASE, "probs", name, cond); os.makedirs(out, exist_ok=True)
        np.save(os.path.join(out, clip + ".npy"), p)
    import sys as _s
    print(name, "done; torch imported:", "torch" in _s.modules)

if __name__ == "__main__":
    main(sys.argv[1])
