"""Work kept between a live segment's updates (`hearth.listen.live`): each update hears the
segment's whole audio so far, but most of it was heard by the update before.

- The audio encoder attends within windows of `n_window_infer` mel frames (8 s), so a window's
  embeddings depend on its own features alone: a finished window whose features are the same bits
  as last time keeps its embeddings. (Its features can change: the log-mel floor is the loudest
  frame of the whole segment less 8, so a louder sound later raises the quiet frames of every
  window. The comparison sees it, and that window is encoded again.) A last window shorter than a
  convolution chunk is encoded together with the window before it, as the convolutions pad each
  chunk to the longest of the call.
- The decoder is causal: a position's keys and values depend on the inputs up to it. The session
  of the last update is kept with the input of each position it holds (a token, or an audio
  embedding); the next prompt keeps every position up to the first whose input differs (the
  system prompt and the finished windows' audio), and only the rest is computed.

The numbers differ from hearing the whole prompt at once only by summation order (a window or a
prompt computed in other batches), as `transcribe`'s do from the official model's.
"""

from __future__ import annotations

import numpy as np

from hearth.backends.asr_interfaces import AsrModel, AsrSession
from hearth.checkpoint.asr_config import AudioEncoderConfig
from hearth.listen.prompt import Prompt

__all__ = ["HeldDecoder", "HeldEncoder", "SegmentWork"]


class HeldEncoder:
    """The audio encoder for one growing segment: features [mel, frames] -> embeddings [tokens,
    hidden], finished windows kept (see the module)."""

    def __init__(self, model: AsrModel, cfg: AudioEncoderConfig):
        self.model = model
        self.span = cfg.n_window_infer  # mel frames per attention window
        self.chunk = cfg.chunk_frames
        self.windows: list[tuple[np.ndarray, np.ndarray]] = []  # each finished window's features, embeddings
        self.encoded = 0  # windows encoded by the last call (for tests and the bench)

    def __call__(self, features: np.ndarray) -> np.ndarray:
        frames = features.shape[1]
        whole, rest = divmod(frames, self.span)
        kept = whole if not rest or rest >= self.chunk else whole - 1
        parts = []
        self.encoded = 0
        for k in range(kept):
            window = features[:, k * self.span : (k + 1) * self.span]
            if k < len(self.windows) and np.array_equal(self.windows[k][0], window):
                parts.append(self.windows[k][1])
                continue
            embeddings = self.model.encode_audio(window)
            self.encoded += 1
            entry = (window.copy(), embeddings)
            if k < len(self.windows):
                self.windows[k] = entry
            else:
                self.windows.append(entry)
            parts.append(embeddings)
        del self.windows[kept:]
        if kept * self.span < frames:
            parts.append(self.model.encode_audio(features[:, kept * self.span :]))
            self.encoded += 1
        return np.concatenate(parts)


class HeldDecoder:
    """A decoder session kept from one update to the next, with the input of each position it
    holds (see the module)."""

    def __init__(self, model: AsrModel):
        self.model = model
        self.session: AsrSession | None = None
        self.ids = np.zeros(0, np.int64)  # the token at each position held
        self.audio = np.zeros((0, 0), np.float32)  # the audio embeddings among them, from `audio_at`
        self.audio_at = 0
        self.kept = 0  # positions the last prompt kept (for tests and the bench)

    def start(self, prompt: Prompt, audio: np.ndarray, capacity: int) -> np.ndarray:
        """The prompt heard (its positions shared with the last one kept) -> logits of its last."""
        ids = np.asarray(prompt.ids, np.int64)
        if self.session is None:
            self.session = self.model.session(capacity)
            same = 0
        else:
            same = min(self._shared(ids, audio, prompt.audio_at), len(ids) - 1)
            self.session.rewind(same)
        at = prompt.audio_at - same
        rows = audio[max(0, -at) :]
        logits = self.session.prefill(ids[same:], rows, max(at, 0))
        self.ids, self.audio, self.audio_at, self.kept = ids, audio, prompt.audio_at, same
        return logits

    def step(self, token: int) -> np.ndarray:
        assert self.session is not None, "step before start"
        logits = self.session.step(token)
        self.ids = np.append(self.ids, np.int64(token))
        return logits

    def _shared(self, ids: np.ndarray, audio: np.ndarray, audio_at: int) -> int:
        """Positions at the start whose input is the same: the token, and for audio the embedding's bits."""
        n = min(len(self.ids), len(ids))
        differ = np.flatnonzero(self.ids[:n] != ids[:n])
        same = int(differ[0]) if differ.size else n
        if audio_at != self.audio_at:
            return min(same, audio_at, self.audio_at)
        m = min(len(self.audio), len(audio))
        rows = np.flatnonzero(np.any(self.audio[:m] != audio[:m], axis=1)) if m else np.zeros(0, np.intp)
        first = int(rows[0]) if rows.size else m
        if len(self.audio) != len(audio) or rows.size:
            return min(same, audio_at + first)
        return same

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        self.ids = np.zeros(0, np.int64)


class SegmentWork:
    """What one live segment keeps between its updates: the encoder's windows and the decoder's
    session. `close` when the segment ends."""

    def __init__(self, model: AsrModel, cfg: AudioEncoderConfig):
        self.encoder = HeldEncoder(model, cfg)
        self.decoder = HeldDecoder(model)

    def close(self) -> None:
        self.decoder.close()
        self.encoder.windows.clear()
