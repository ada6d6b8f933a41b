"""Cloned voices: reference audio in, and voice profiles kept on disk.

Reference audio is read and resampled as the official pipeline does it (libsndfile through
`soundfile`, channels averaged, then soxr's high-quality resampler to 24 kHz), so a clone from a
file gives the official codes. A profile stores what cloning computed once (the speaker embedding,
the reference codes and the transcript) with the identity of the checkpoint it belongs to, under
`<cache>/voices/NAME.safetensors`; any other checkpoint refuses it.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from hearth.errors import CONVERT_EXTRA, InputError
from hearth.text.prompt import ClonedVoice

if TYPE_CHECKING:
    import torch

    from hearth.checkpoint.loading import Checkpoint

__all__ = ["MAX_REFERENCE_S", "MIN_REFERENCE_S", "Cloner", "ReferenceAudioError", "VoiceProfile", "VoiceStore",
           "checkpoint_identity", "read_reference", "resample"]

MIN_REFERENCE_S = 1.0
MAX_REFERENCE_S = 30.0
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class ReferenceAudioError(InputError):
    """Reference audio or a profile that cannot be used; the message says what to do."""


def _need(module: str) -> object:
    try:
        return __import__(module)
    except ImportError:
        raise ReferenceAudioError(f"reading and resampling reference audio needs {module}: "
                                  "pip install 'hearth-tts[clone]'") from None


def read_reference(source: str | os.PathLike[str] | bytes | BinaryIO) -> tuple[np.ndarray, int]:
    """Mono float32 samples and their rate from an audio file: what libsndfile reads (WAV, FLAC, OGG,
    MP3), else, when PyAV is installed (the `serve` extra), what FFmpeg decodes (AAC, M4A, WebM and
    Opus from browsers), as librosa falls back to audioread for the official pipeline."""
    sf = _need("soundfile")
    data: object = io.BytesIO(source) if isinstance(source, bytes) else source
    try:
        samples, rate = sf.read(data, dtype="float32", always_2d=False)  # type: ignore[attr-defined]
    except Exception as e:  # noqa: BLE001 - libsndfile's errors name no common type
        if isinstance(data, io.IOBase):
            data.seek(0)
        decoded = _decode_with_ffmpeg(data)
        if decoded is None:
            where = "" if isinstance(source, bytes | io.IOBase) else f" {source}"
            raise ReferenceAudioError(f"cannot read the reference audio{where}: {e}; give a WAV, FLAC, OGG or MP3 "
                                      "file (M4A, AAC or WebM too with the serve extra's PyAV)") from e
        samples, rate = decoded
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim > 1:
        samples = samples.mean(axis=1, dtype=np.float32)  # channels averaged, as librosa's to_mono does
    return samples, int(rate)


def _decode_with_ffmpeg(data: object) -> tuple[np.ndarray, int] | None:
    """Every channel of the first audio stream as float32 [samples, channels], or None (no PyAV, or
    not audio it can decode)."""
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(data, mode="r") as container:  # type: ignore[call-overload]
            stream = container.streams.audio[0]
            rate = stream.codec_context.sample_rate
            resampler = av.AudioResampler(format="fltp", layout=stream.codec_context.layout, rate=rate)
            planes = [f.to_ndarray() for frame in container.decode(stream) for f in resampler.resample(frame)]
            planes += [f.to_ndarray() for f in resampler.resample(None)]
    except (av.FFmpegError, IndexError, ValueError, OSError):
        return None
    if not planes or not rate:
        return None
    return np.concatenate(planes, axis=1).T.astype(np.float32), int(rate)


def resample(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """soxr's high-quality resampling (librosa's default, which the official pipeline uses), cut or
    zero-padded to ceil(n * (target / rate)) samples, that ratio rounded to a float first as librosa
    does (44100 samples at 22050 Hz become 48001 at 24 kHz)."""
    if rate == target:
        return samples
    if rate <= 0:
        raise ReferenceAudioError(f"the reference audio's sample rate must be positive, got {rate}")
    soxr = _need("soxr")
    out = soxr.resample(samples, rate, target, quality="soxr_hq")  # type: ignore[attr-defined]
    n = int(np.ceil(samples.shape[-1] * (float(target) / rate)))
    out = out[:n] if out.shape[-1] >= n else np.pad(out, (0, n - out.shape[-1]))
    return np.asarray(out, dtype=samples.dtype)


def check_reference(samples: np.ndarray, rate: int) -> None:
    """Refuse references too short, too long, silent or not finite."""
    seconds = samples.shape[-1] / rate if rate > 0 else 0.0
    if samples.ndim != 1:
        raise ReferenceAudioError("the reference audio must be mono samples")
    if seconds < MIN_REFERENCE_S:
        raise ReferenceAudioError(f"the reference audio is {seconds:.2f} s long; give at least {MIN_REFERENCE_S:g} s "
                                  "(3 to 10 s of clear speech clone best)")
    if seconds > MAX_REFERENCE_S:
        raise ReferenceAudioError(f"the reference audio is {seconds:.1f} s long; give at most {MAX_REFERENCE_S:g} s "
                                  "(3 to 10 s of clear speech clone best)")
    if not np.isfinite(samples).all():
        raise ReferenceAudioError("the reference audio holds non-finite samples; it is damaged")
    if float(np.abs(samples).max(initial=0.0)) < 1e-4:
        raise ReferenceAudioError("the reference audio is silent; record the voice to clone")


def checkpoint_identity(ckpt: Checkpoint) -> str:
    """What a profile must match: the checkpoint's config and the weights that make profiles (their
    tensor tables, and the speaker encoder's last layer, bytes and all: fine-tunes differ there)."""
    from hearth.checkpoint.safetensors_mmap import SafetensorsFile

    h = hashlib.sha256((ckpt.path / "config.json").read_bytes())
    for rel in ("model.safetensors", "speech_tokenizer/model.safetensors"):
        with open(ckpt.path / rel, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            h.update(fh.read(n))
    weights = SafetensorsFile(ckpt.path / "model.safetensors")
    if "speaker_encoder.fc.weight" in weights.tensors:
        h.update(weights.array("speaker_encoder.fc.weight").tobytes())
    return h.hexdigest()[:32]


@dataclass(frozen=True)
class VoiceProfile:
    name: str
    voice: ClonedVoice
    transcript: str | None
    checkpoint: str  # checkpoint_identity of the checkpoint it was made with
    model: str  # where that checkpoint was (for messages)
    created: str
    reference_s: float
    consent: str | None = None  # a consent recording's id, as vLLM-Omni's upload takes it

    @property
    def created_at(self) -> int:
        """`created` as Unix seconds (0 when unknown)."""
        try:
            return int(datetime.datetime.fromisoformat(self.created).timestamp())
        except ValueError:
            return 0


class VoiceStore:
    """Profiles under one directory (default `<cache>/voices`), one safetensors file each."""

    def __init__(self, root: Path | None = None, bundled: tuple[Path, ...] = ()):
        """bundled: read-only folders of more profiles (an export's); the store's own come first."""
        if root is None:
            from hearth.platform.process import cache_dir

            root = cache_dir() / "voices"
        self.root = Path(root)
        self.bundled = tuple(Path(b) for b in bundled)

    @staticmethod
    def check_name(name: str) -> str:
        n = name.strip().lower() if isinstance(name, str) else ""
        if not _NAME.match(n):
            raise ReferenceAudioError(f"voice name {name!r}: use 1 to 64 letters, digits, '-' or '_', starting with a "
                                      "letter or digit")
        return n

    def path(self, name: str) -> Path:
        return self.root / f"{self.check_name(name)}.safetensors"

    def names(self) -> list[str]:
        return sorted({p.stem for folder in (self.root, *self.bundled) if folder.is_dir()
                       for p in folder.glob("*.safetensors")})

    def find(self, name: str) -> Path:
        """Where profile `name` is read from: the store's own, else a bundled one (else the own path)."""
        own = self.path(name)
        if own.is_file():
            return own
        return next((p for p in (b / own.name for b in self.bundled) if p.is_file()), own)

    def save(self, profile: VoiceProfile, replace: bool = False) -> Path:
        from safetensors.numpy import save_file

        path = self.path(profile.name)
        if path.exists() and not replace:
            raise ReferenceAudioError(f"a voice named {profile.name!r} exists; remove it first (hearth voice remove "
                                      f"{profile.name}) or choose another name")
        v = profile.voice
        tensors = {"embedding": np.ascontiguousarray(v.vector, np.float32)}
        if v.codes is not None:
            tensors["codes"] = np.ascontiguousarray(v.codes, np.int64)
        meta = {"name": profile.name, "transcript": profile.transcript or "", "checkpoint": profile.checkpoint,
                "model": profile.model, "created": profile.created, "reference_s": f"{profile.reference_s:.3f}",
                "text_ids": json.dumps(v.text_ids) if v.text_ids is not None else "", "format": "hearth-voice-1",
                "consent": profile.consent or ""}
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        save_file(tensors, str(tmp), metadata=meta)
        tmp.replace(path)
        return path

    def load(self, name: str) -> VoiceProfile:
        from safetensors import safe_open

        path = self.find(name)
        if not path.is_file():
            raise ReferenceAudioError(f"no stored voice named {name!r}")
        try:
            with safe_open(str(path), "np") as f:
                meta = f.metadata() or {}
                tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open has no iterator
            text_ids = json.loads(meta["text_ids"]) if meta.get("text_ids") else None
            voice = ClonedVoice(tensors["embedding"], tensors.get("codes"), text_ids)
            return VoiceProfile(meta["name"], voice, meta.get("transcript") or None, meta["checkpoint"],
                                meta.get("model", "?"), meta.get("created", "?"), float(meta.get("reference_s", 0)),
                                meta.get("consent") or None)
        except (KeyError, ValueError, OSError) as e:
            raise ReferenceAudioError(f"the stored voice {path} is damaged ({e}); remove it and add it again") from e

    def checkpoint_of(self, name: str) -> str | None:
        """The identity of the checkpoint a stored profile was made with (its header only); None if unreadable."""
        from safetensors import safe_open

        try:
            with safe_open(str(self.find(name)), "np") as f:
                return (f.metadata() or {}).get("checkpoint")
        except (OSError, ValueError, ReferenceAudioError):
            return None

    def remove(self, name: str) -> None:
        path = self.path(name)
        if not path.is_file():
            raise ReferenceAudioError(f"no stored voice named {name!r}; stored: {', '.join(self.names()) or 'none'}")
        path.unlink()


def now() -> str:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


class Cloner:
    """Cloning with one Base checkpoint: its encoders (loaded on first use; they run once per
    reference), its identity, and the profile store. Needs no language model: `hearth voice add`
    and the engine share it."""

    def __init__(self, ckpt: Checkpoint, store: VoiceStore | None = None):
        from hearth.checkpoint.exported import find_export

        self.ckpt = ckpt
        if store is None:
            export = find_export(ckpt.path)
            store = VoiceStore(bundled=(export.voices,) if export is not None else ())
        self.store = store
        self._loaded: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _get(self, name: str, make: Callable[[], Any]) -> Any:  # noqa: ANN401 - modules and strings
        with self._lock:
            if name not in self._loaded:
                self._loaded[name] = make()
            return self._loaded[name]

    def identity(self) -> str:
        return str(self._get("identity", lambda: checkpoint_identity(self.ckpt)))

    def _require_base(self, what: str) -> None:
        if self.ckpt.config.model_type != "base":
            raise ReferenceAudioError(
                f"{what} needs a Base checkpoint (e.g. Qwen/Qwen3-TTS-12Hz-0.6B-Base); this one is "
                f"{self.ckpt.config.kind}")

    @staticmethod
    def _prepared(audio: np.ndarray, rate: int, target: int) -> torch.Tensor:
        samples = np.asarray(audio, dtype=np.float32)
        check_reference(samples, rate)
        try:
            import torch
        except ImportError:
            raise ReferenceAudioError(
                f"cloning a voice from audio runs the checkpoint's encoders in torch, which is not installed: "
                f"{CONVERT_EXTRA}. Stored voices (hearth voice add on another machine, or a model from hearth "
                "export) are used without it") from None
        return torch.from_numpy(np.ascontiguousarray(resample(samples, rate, target)))

    def embedding(self, audio: np.ndarray, rate: int) -> ClonedVoice:
        """The speaker embedding alone (the official x-vector-only clone)."""
        self._require_base("cloning a voice")
        from hearth.model.weights import load_speaker_encoder

        cfg = self.ckpt.config.speaker_encoder
        assert cfg is not None
        samples = self._prepared(audio, rate, cfg.sample_rate)
        encoder = self._get("speaker", lambda: load_speaker_encoder(self.ckpt))
        import torch

        with torch.inference_mode():
            return ClonedVoice(encoder.embed(samples).float().numpy())

    def codes(self, audio: np.ndarray, rate: int) -> np.ndarray:
        """The speech tokenizer's codes [frames, 16] of the reference."""
        self._require_base("reference codes")
        from hearth.model.weights import load_codec_encoder

        assert self.ckpt.encoder is not None
        samples = self._prepared(audio, rate, self.ckpt.encoder.sample_rate)
        encoder = self._get("codec", lambda: load_codec_encoder(self.ckpt))
        import torch

        with torch.inference_mode():
            return encoder(samples).to(torch.int64).numpy()

    def clone(self, audio: np.ndarray, rate: int, text: str | None = None, *,
              x_vector_only: bool = False) -> ClonedVoice:
        """In context (the default; `text` is the reference's transcript) or x-vector only."""
        if not x_vector_only and (not isinstance(text, str) or not text.strip()):
            raise ReferenceAudioError("cloning in context needs the reference audio's transcript (text); without one, "
                                      "clone from the speaker embedding alone (x_vector_only; less alike)")
        voice = self.embedding(audio, rate)
        if x_vector_only:
            return voice
        assert text is not None
        tokenizer = self._get("tokenizer", self.ckpt.tokenizer)
        ids = tokenizer.encode(f"<|im_start|>assistant\n{text}<|im_end|>\n")[3:-2]
        return ClonedVoice(voice.vector, self.codes(audio, rate), ids)

    def usable(self) -> list[str]:
        """The stored profiles made with this checkpoint (a Base checkpoint's voices)."""
        if self.ckpt.config.model_type != "base":
            return []
        mine = self.identity()
        return [n for n in self.store.names() if self.store.checkpoint_of(n) == mine]

    def add(self, name: str, audio: np.ndarray, rate: int, text: str | None = None, *, x_vector_only: bool = False,
            replace: bool = False, consent: str | None = None) -> VoiceProfile:
        """Clone and store as profile `name`."""
        name = VoiceStore.check_name(name)
        if not replace and self.store.path(name).exists():
            raise ReferenceAudioError(f"a voice named {name!r} exists; remove it first (hearth voice remove {name}), "
                                      "replace it, or choose another name")
        voice = self.clone(audio, rate, text, x_vector_only=x_vector_only)
        profile = VoiceProfile(name, voice, None if x_vector_only else text, self.identity(), str(self.ckpt.path),
                               now(), len(audio) / rate, consent)
        self.store.save(profile, replace=replace)
        return profile

    def stored(self, name: str) -> ClonedVoice:
        """A stored profile's voice, if it was made with this checkpoint."""
        try:
            profile = self.store.load(name)
        except ReferenceAudioError as e:
            names = ", ".join(self.usable()) or "none"
            why = "" if "no stored voice" in str(e) else f" ({e})"
            raise ReferenceAudioError(
                f"unknown voice {name!r}: {self.ckpt.config.kind} checkpoints speak cloned voices; "
                f"stored for this one: {names}. Add one: hearth voice add NAME --audio REF.wav "
                f"--text 'what the reference says'{why}") from None
        if profile.checkpoint != self.identity():
            raise ReferenceAudioError(
                f"the voice {profile.name!r} was made with another checkpoint ({profile.model}); add "
                f"it again for this one: hearth voice add {profile.name} --audio REF.wav --text '...' "
                f"--model {self.ckpt.path} --replace")
        hidden = self.ckpt.config.talker.stack.hidden_size
        if profile.voice.vector.shape[0] != hidden:
            raise ReferenceAudioError(f"the voice {profile.name!r} does not fit this checkpoint (embedding of "
                                      f"{profile.voice.vector.shape[0]}, not {hidden}); add it again for this one")
        return profile.voice
