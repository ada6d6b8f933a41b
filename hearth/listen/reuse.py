"""Work kept between a live segment's updates (`hearth.listen.live`): each update hears the
segment's whole audio so far, but most of it was heard by the update before.

- The audio encoder attends within windows of `n_window_infer` mel frames (8 s), so a window's
  embeddings depend on its own features alone: a finished window whose features are the same bits
  as last time keeps its embeddings. (Its features can change: the log-mel floor is the loudest
  frame of the whole segment less 8, so a louder sound later raises the quiet frames of every
  window. The comparison sees it, and that window is encoded again.) A last window shorter than a
  convolution chunk is encoded together with the window before it, as the convolutions pad each
  chunk to the longest of the call.
- Its convolutions work on chunks of 2 `n_window` frames (1 s), each on its own: in the window
  still growing, each whole chunk keeps its convolutions' output while its features are the same
  (about half of a window's encoding at 0.6B shapes: 0.38 s of 0.68 s on ONNX Runtime int8, 2-vCPU
  Zen 3), and only the transformer over the window runs again.
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
from hearth.checkpoint.asr_config import AudioEncoderConfig, conv_output_length
from hearth.listen.prompt import Prompt

__all__ = ["HeldDecoder", "HeldEncoder", "SegmentWork"]


class HeldEncoder:
    """The audio encoder for one growing segment: features [mel, frames] -> embeddings [tokens,
    hidden], finished windows kept, and in the last window the finished chunks' convolutions (see
    the module)."""

    def __init__(self, model: AsrModel, cfg: AudioEncoderConfig):
        self.model = model
        self.span = cfg.n_window_infer  # mel frames per attention window
        self.chunk = cfg.chunk_frames
        self.windows: list[tuple[np.ndarray, np.ndarray]] = []  # each finished window's features, embeddings
        self.chunks: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # whole chunks by index: features, steps
        self.encoded = 0  # windows encoded by the last call (for tests and the bench)
        self.convolved = 0  # chunks convolved by the last call

    def __call__(self, features: np.ndarray) -> np.ndarray:
        frames = features.shape[1]
        whole, rest = divmod(frames, self.span)
        kept = whole if not rest or rest >= self.chunk else max(0, whole - 1)
        parts = []
        self.encoded = self.convolved = 0
        for k in range(kept):
            window = features[:, k * self.span : (k + 1) * self.span]
            if k < len(self.windows) and np.array_equal(self.windows[k][0], window):
                parts.append(self.windows[k][1])
                continue
            embeddings = self._window(features, k * self.span, (k + 1) * self.span)
            entry = (window.copy(), embeddings)
            if k < len(self.windows):
                self.windows[k] = entry
            else:
                self.windows.append(entry)
            parts.append(embeddings)
        del self.windows[kept:]
        if kept * self.span < frames:
            parts.append(self._window(features, kept * self.span, frames))
        # Chunks are kept for the last finished window (whose end frames change once more audio
        # comes: they saw the reflected end) and the one still growing.
        oldest = max(0, kept - 1) * (self.span // self.chunk)
        self.chunks = {i: c for i, c in self.chunks.items() if i >= oldest}
        return np.concatenate(parts)

    def _window(self, features: np.ndarray, start: int, end: int) -> np.ndarray:
        """The window of frames `start` .. `end`: its whole chunks' convolutions kept while their
        features are the same, the rest convolved (padded to a whole chunk, as in the recording)."""
        self.encoded += 1
        first = start // self.chunk
        stop = -(-end // self.chunk)
        steps, at = [], first
        while at < stop:  # the chunks kept: from the window's start, while unchanged
            part = features[:, at * self.chunk : min(end, (at + 1) * self.chunk)]
            held = self.chunks.get(at)
            if part.shape[1] < self.chunk or held is None or not np.array_equal(held[0], part):
                break
            steps.append(held[1])
            at += 1
        if at < stop:
            # (a recording of one short chunk pads it to its own length)
            longest = self.chunk if features.shape[1] >= self.chunk else None
            new = self.model.audio_steps(features[:, at * self.chunk : end], longest=longest)
            self.convolved += stop - at
            taken = 0
            for i in range(at, stop):
                part = features[:, i * self.chunk : min(end, (i + 1) * self.chunk)]
                n = conv_output_length(part.shape[1])
                if part.shape[1] == self.chunk:
                    self.chunks[i] = (part.copy(), new[taken : taken + n])
                steps.append(new[taken : taken + n])
                taken += n
        return self.model.audio_windows(np.concatenate(steps), end - start)


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
        try:
            if self.session is None:
                self.session = self.model.session(capacity)
                same = 0
            else:
                same = min(self._shared(ids, audio, prompt.audio_at), len(ids) - 1)
                self.session.rewind(same)
            at = prompt.audio_at - same
            logits = self.session.prefill(ids[same:], audio[max(0, -at) :], max(at, 0))
        except BaseException:
            self.close()  # (what the session holds is unknown now: the next update starts afresh)
            raise
        self.ids, self.audio, self.audio_at, self.kept = ids, audio, prompt.audio_at, same
        return logits

    def step(self, token: int) -> np.ndarray:
        assert self.session is not None, "step before start"
        try:
            logits = self.session.step(token)
        except BaseException:
            self.close()
            raise
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
