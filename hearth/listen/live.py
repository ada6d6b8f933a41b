"""Live transcription: audio pushed as it is captured, text that follows it.

The update rule is qwen-asr 0.0.6's streaming one (`Qwen3ASRModel.streaming_transcribe`, which it
runs on vLLM only): every `chunk_s` of audio, the model hears all of the segment's audio so far,
and its answer is forced to start with the previous answer minus its last `rollback_tokens` tokens
(from the `unfixed_chunks`-th update on; none before). The tokens of each update are therefore
exactly what the model gives for that audio and that forced start, whichever backend runs it
(tests/test_listen_live.py holds Hearth's to qwen-asr's transformers model, update by update).
`finish` hears the rest (shorter than a chunk) the same way, with qwen-asr's end rule: the
rollback there keeps at least one token and does not step over a cut character.

With `offline_final` a segment's final is instead heard whole with nothing forced, prepared as
`transcribe` prepares a recording: the text `transcribe` gives for that audio (one more pass over
the segment at its end; the partials are unchanged).

A feeder that cannot keep up (a server on a slow machine) pushes with `latest_only`: of the chunks
completed at once only the last is heard, as no one would read the updates in between; the
chunks are still counted, so the forced start begins where it would have.

A segment ends when its audio reaches `max_segment_s` (or at `finish`): its final is the last
update's text, and the next segment starts with nothing forced. Every update hears the whole
segment again, but keeps what the last one computed and is still the same (`hearth.listen.reuse`:
the encoder's finished windows, the decoder's positions up to the first changed input), so its
cost grows with the segment's last window and the forced start, not the whole segment.

With voice activity (`LiveOptions.vad`: Silero VAD, `hearth.listen.vad`, on 32 ms frames) only
speech is heard, and a segment is one stretch of it: `speech_started` when a frame's probability
reaches `vad_threshold` (the segment starts `padding_s` earlier, so the first sound is kept, but
not before the last stretch's end: stretches never overlap), then updates as above. Quiet starts at
a frame below the threshold less 0.15 (as silero's own segmentation has it); once it has lasted 96
ms (three frames: shorter pauses inside speech are not worth it) the segment's final is heard, over
its audio so far with the closing rule, and held: if speech comes back before `silence_s` of quiet
it is thrown away and the segment goes on; otherwise `speech_stopped` and that final come, so the
final is ready about `silence_s` after the last word whatever the segment's length. No update is
heard while a final is held (its chunks are counted). Silence between segments costs only the
detector (about 0.1 ms a frame) and is never transcribed. A segment cut at `max_segment_s` in
mid-speech is stopped and the next started, so every `speech_started` has its `speech_stopped` and
its final.

Audio: float samples (in [-1, 1] as a rule, but not scaled or clipped: a stream has no peak to
scale by, and qwen-asr streams them as they are) or int16, mono or [samples, channels], at any
rate from 4 to 384 kHz (mixed down and resampled to 16 kHz on the way in, chunk by chunk).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from hearth.checkpoint.tokenizer import TextTokenizer
from hearth.errors import InputError
from hearth.listen.audio import MIN_PIECE_SECONDS, SAMPLE_RATE, prepare_audio
from hearth.listen.features import LogMel
from hearth.listen.options import ListenOptions
from hearth.listen.resample import Resampler, check_rate, mix_down
from hearth.listen.reuse import SegmentWork
from hearth.listen.transcript import parse_transcript

__all__ = ["LiveEvent", "LiveOptions", "LiveTranscription"]

REPLACEMENT = "\ufffd"  # what a token sequence cut inside a character decodes to


class Hearing(Protocol):
    """What a live transcription asks of its `Listener`."""

    tokenizer: TextTokenizer
    features: LogMel

    def tokens(self, samples: np.ndarray, options: ListenOptions, prefix: str = "",
               work: SegmentWork | None = None) -> Iterator[int]: ...

    def segment_work(self) -> SegmentWork: ...


class Detector(Protocol):
    """A voice activity detector (`hearth.listen.vad.SileroVad`): 512 samples at 16 kHz -> the
    probability that they hold speech, its state carried from frame to frame."""

    def __call__(self, frame: np.ndarray) -> float: ...


VAD_FRAME = 512  # samples at 16 kHz: 32 ms, Silero's frame


@dataclass(frozen=True)
class LiveOptions:
    """How a live transcription updates. The defaults are qwen-asr's streaming ones."""

    chunk_s: float = 2.0  # an update each time this much new audio has come
    rollback_tokens: int = 5  # the previous answer's last tokens left free to change
    unfixed_chunks: int = 2  # the first updates force nothing
    max_segment_s: float = 30.0  # a segment is closed when its audio reaches this
    vad: bool = False  # hear speech only, a segment to each stretch of it (see the module)
    vad_threshold: float = 0.5  # a frame at this probability or above is speech
    silence_s: float = 0.5  # this much quiet ends a stretch of speech
    padding_s: float = 0.3  # audio kept before the first speech frame
    offline_final: bool = False  # a segment's final hears it whole with nothing forced: `transcribe`'s text

    def checked(self) -> LiveOptions:
        for name in ("vad", "offline_final"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, got {getattr(self, name)!r}", name)
        value = self.vad_threshold
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
            raise InputError(f"vad_threshold must be a probability above 0 and below 1, got {value!r}",
                             "vad_threshold")
        for name, low in (("silence_s", 0.032), ("padding_s", 0.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= 10.0:
                raise InputError(f"{name} must be a number of seconds from {low} to 10, got {value!r}", name)
        for name, low in (("chunk_s", 0.1), ("max_segment_s", 1.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
                raise InputError(f"{name} must be a number of seconds of at least {low}, got {value!r}", name)
        for name in ("rollback_tokens", "unfixed_chunks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{name} must be a whole number of at least 0, got {value!r}", name)
        if self.max_segment_s < self.chunk_s:
            raise InputError(f"max_segment_s ({self.max_segment_s}) must be at least chunk_s ({self.chunk_s})",
                             "max_segment_s")
        return self


@dataclass(frozen=True)
class LiveEvent:
    """What an update gives. `kind` is "partial" (the text so far; it may still change) or "final"
    (the segment's last word on it); with voice activity also "speech_started" and
    "speech_stopped" (no text; the segment's stretch of audio is `offset` .. `offset + audio_s`,
    padding and the closing quiet included). `stable` is how many leading characters of `text` the
    next update of the segment is forced to keep (0 in a final: nothing follows). Times in seconds:
    `offset` where the segment starts in the stream, `audio_s` how much of it was heard,
    `compute_s` what the update took."""

    kind: str
    segment: int
    offset: float
    audio_s: float
    language: str
    text: str
    stable: int
    raw: str
    ids: tuple[int, ...]
    compute_s: float


@dataclass
class _Segment:
    index: int
    offset: float
    audio: list[np.ndarray] = field(default_factory=list)
    samples: int = 0
    chunks: int = 0  # whole chunks heard (qwen-asr's chunk_id)
    updates: int = 0
    raw: str = ""  # the last update's answer: forced start and generated text, decoded
    heard: int = 0  # samples the last update heard


class LiveTranscription:
    """One live stream (`Listener.live`). `push` audio as it comes and read the events it returns;
    `finish` at the end. Not for several threads at once: one stream, one feeder."""

    def __init__(self, listener: Hearing, options: ListenOptions, live: LiveOptions, sample_rate: int,
                 detector: Detector | None = None):
        if live.vad and detector is None:
            raise ValueError("LiveOptions.vad needs a detector (Listener.live makes one)")
        self.listener = listener
        self.options = options
        self.live = live
        self.sample_rate = check_rate(sample_rate)
        self._resampler = Resampler(self.sample_rate, SAMPLE_RATE)
        self._chunk = max(1, int(round(live.chunk_s * SAMPLE_RATE)))  # as qwen-asr rounds chunk_size_sec
        self._max_segment = max(self._chunk, int(round(live.max_segment_s * SAMPLE_RATE)))
        self._pending: list[np.ndarray] = []  # 16 kHz samples not yet a whole chunk
        self._pending_n = 0
        self._segment = _Segment(0, 0.0)
        self._work: tuple[int, SegmentWork] | None = None  # the segment's (by index) kept work, `reuse`
        self._finished = False
        # Voice activity (None without): the frames' state, see `_voiced`.
        self._detector = detector if live.vad else None
        self._unframed = np.zeros(0, np.float32)  # 16 kHz samples short of a whole frame
        self._consumed = 0  # 16 kHz samples through the detector
        self._speaking = False
        self._before = np.zeros(0, np.float32)  # the last `padding_s` of audio outside speech
        self._quiet = 0  # samples of quiet since the speech's last frame (0: none)
        self._held: LiveEvent | None = None  # the final heard once the quiet lasted `_hold`
        # A pause inside speech (a stop consonant, a breath) is not worth a final: one is heard once
        # the quiet has lasted 96 ms (half of `silence_s` if that is shorter), still well before
        # `silence_s` ends it.
        self._hold = max(VAD_FRAME, min(3 * VAD_FRAME, int(live.silence_s * SAMPLE_RATE / 2) // VAD_FRAME * VAD_FRAME))

    # The audio ------------------------------------------------------------------------------------

    def push(self, samples: np.ndarray, latest_only: bool = False) -> list[LiveEvent]:
        """Audio at the stream's rate; the events of the updates it completes (none until a chunk
        has come). With `latest_only`, of several chunks it completes only the last is heard."""
        if self._finished:
            raise InputError("this live transcription has finished; start another", "audio")
        heard = self._resampler.push(_as_float(samples))
        if self._detector is not None:
            return list(self._voiced(heard, latest_only))
        return list(self._updates(heard, latest_only))

    def finish(self) -> list[LiveEvent]:
        """The end of the stream: the rest heard, and the last segment's final (if it heard any)."""
        if self._finished:
            return []
        self._finished = True
        try:
            return self._finish()
        finally:
            self._drop_work()

    def _finish(self) -> list[LiveEvent]:
        if self._detector is not None:
            return self._finish_voiced()
        events = list(self._updates(self._resampler.finish()))
        tail = self._take_pending()
        s = self._segment
        if tail.size:
            s.audio.append(tail)
            s.samples += tail.size
            events.append(self._closing(s))
        elif s.updates:
            events.append(self._final_of(s))
        return events

    def _updates(self, samples: np.ndarray, latest_only: bool = False, hear: bool = True) -> Iterator[LiveEvent]:
        """The segment's audio goes on with `samples`: an update for each chunk it completes (none
        heard with `hear` false, the chunks still counted), a final where the segment is full."""
        if samples.size:
            self._pending.append(samples)
            self._pending_n += samples.size
        while self._pending_n >= self._chunk:
            everything = self._take_pending()
            chunk, rest = everything[: self._chunk], everything[self._chunk :]
            if rest.size:
                self._pending, self._pending_n = [rest], rest.size
            s = self._segment
            s.audio.append(chunk)
            s.samples += chunk.size
            s.chunks += 1
            full = s.samples >= self._max_segment
            if latest_only and self._pending_n >= self._chunk and not full:
                continue  # a later chunk is complete already: only it is heard
            if hear or (full and self._held is None):
                yield self._update(s, self._prefix(s, closing=False), "partial")
            if full:
                if self._speaking:
                    yield self._mark("speech_stopped", s, s.samples)
                yield self._held or self._final_of(s)
                self._held, self._quiet = None, 0
                self._segment = _Segment(s.index + 1, s.offset + s.samples / SAMPLE_RATE)
                if self._speaking:
                    yield self._mark("speech_started", self._segment, 0)

    def _voiced(self, samples: np.ndarray, latest_only: bool) -> Iterator[LiveEvent]:
        """The audio through the detector, frame by frame: stretches of speech into segments."""
        assert self._detector is not None
        frames = np.concatenate([self._unframed, samples])
        whole = frames.size // VAD_FRAME * VAD_FRAME
        self._unframed = frames[whole:]
        quiet_below = max(self.live.vad_threshold - 0.15, 0.01)
        run_start = 0  # the frames since the last change of state, given to the segment together
        for at in range(0, whole, VAD_FRAME):
            p = self._detector(frames[at : at + VAD_FRAME])
            self._consumed += VAD_FRAME
            if not self._speaking:
                if p >= self.live.vad_threshold:
                    yield from self._speech_starts()
                    run_start = at
                else:
                    kept = int(self.live.padding_s * SAMPLE_RATE)
                    before = np.concatenate([self._before, frames[at : at + VAD_FRAME]])
                    self._before = before[max(0, before.size - kept) :] if kept else before[:0]
                continue
            if p >= self.live.vad_threshold and self._quiet:  # speech again: a held final is thrown away
                yield from self._updates(frames[run_start:at], latest_only, hear=self._held is None)
                run_start, self._quiet, self._held = at, 0, None
            elif p < quiet_below or self._quiet:
                self._quiet += VAD_FRAME
                if self._held is None and self._quiet >= self._hold:  # the final heard now, and held
                    quiet_from = max(run_start, at + VAD_FRAME - self._quiet)
                    yield from self._updates(frames[run_start:quiet_from], latest_only)
                    yield from self._updates(frames[quiet_from : at + VAD_FRAME], hear=False)
                    run_start = at + VAD_FRAME
                    self._held = self._heard_final()
                if self._quiet >= self.live.silence_s * SAMPLE_RATE:
                    yield from self._updates(frames[run_start : at + VAD_FRAME], hear=False)
                    run_start = at + VAD_FRAME
                    yield from self._speech_stops()
        if self._speaking:
            yield from self._updates(frames[run_start:whole], latest_only, hear=self._held is None)

    def end_speech(self) -> list[LiveEvent]:
        """With voice activity: the stretch of speech under way ends here, as if its quiet had
        lasted (a client's commit): its `speech_stopped` and final. None when no speech is under way."""
        if self._finished or self._detector is None or not self._speaking:
            return []
        return list(self._speech_stops())

    def _speech_starts(self) -> Iterator[LiveEvent]:
        """Speech from the frame just heard: a segment starts with the audio kept before it."""
        s = self._segment
        before = self._before
        start = self._consumed - VAD_FRAME - before.size
        self._segment = _Segment(s.index + (1 if s.samples else 0), start / SAMPLE_RATE)
        self._speaking, self._quiet, self._held = True, 0, None
        self._before = np.zeros(0, np.float32)
        yield self._mark("speech_started", self._segment, 0)
        if before.size:
            yield from self._updates(before)

    def _speech_stops(self) -> Iterator[LiveEvent]:
        """`silence_s` of quiet: the segment is closed with the final held since the quiet began."""
        s = self._segment
        yield self._mark("speech_stopped", s, s.samples + self._pending_n)
        final = self._held or self._heard_final()
        self._take_pending()
        # The next stretch's padding starts here: the closing quiet is this stretch's, not the next's.
        self._before = np.zeros(0, np.float32)
        self._speaking, self._quiet, self._held = False, 0, None
        self._segment = _Segment(s.index + 1, self._consumed / SAMPLE_RATE)
        yield final

    def _heard_final(self) -> LiveEvent:
        """The segment's final over its audio so far (the pending part included), with the closing
        rule; the segment itself unchanged, so that it can go on if speech comes back."""
        s = self._segment
        if self._pending_n:
            trial = replace(s, audio=[*s.audio, *self._pending], samples=s.samples + self._pending_n)
        else:
            trial = replace(s, audio=list(s.audio))
        if not trial.samples:
            return self._final_of(s)
        if trial.samples == s.heard and s.updates and not self.live.offline_final:
            return self._final_of(s)  # heard already, just as it is
        return self._closing(trial)

    def _closing(self, s: _Segment) -> LiveEvent:
        """The segment's final heard now: with the closing rule, or whole (`offline_final`)."""
        if self.live.offline_final:
            return self._update(s, "", "final", whole=True)
        return self._update(s, self._prefix(s, closing=True), "final")

    def _finish_voiced(self) -> list[LiveEvent]:
        events = list(self._voiced(self._resampler.finish(), False))
        if not self._speaking:
            return events
        if self._unframed.size and not self._quiet:  # (speech to the end: heard in the final)
            events += self._updates(self._unframed, hear=False)
        events += self._speech_stops()
        return events

    def _mark(self, kind: str, s: _Segment, samples: int) -> LiveEvent:
        return LiveEvent(kind, s.index, s.offset, samples / SAMPLE_RATE, self.options.language or "", "", 0, "",
                         (), 0.0)

    def _take_pending(self) -> np.ndarray:
        out = np.concatenate(self._pending) if self._pending else np.zeros(0, np.float32)
        self._pending, self._pending_n = [], 0
        return out

    # The updates ----------------------------------------------------------------------------------

    def _prefix(self, s: _Segment, closing: bool, heard_before: int | None = None) -> str:
        """The answer's forced start for the segment's next update (qwen-asr's rule, see the module):
        `heard_before` is the chunks heard before that update (qwen-asr's chunk_id; by default the
        segment's count less the chunk just taken, or all of them at the close)."""
        if heard_before is None:
            heard_before = s.chunks - (0 if closing else 1)
        if heard_before < self.live.unfixed_chunks or not s.raw:
            return ""
        tok = self.listener.tokenizer
        ids = tok.encode(s.raw)
        k = self.live.rollback_tokens
        if closing:
            return tok.decode(ids[: max(1, len(ids) - k)])
        while True:
            end = max(0, len(ids) - k)
            prefix = tok.decode(ids[:end]) if end > 0 else ""
            if REPLACEMENT not in prefix:
                return prefix
            if end == 0:
                return ""
            k += 1

    def _update(self, s: _Segment, prefix: str, kind: str, whole: bool = False) -> LiveEvent:
        """The model on the segment's audio so far, its answer forced to start with `prefix`; `whole`:
        the audio prepared as `transcribe` prepares a recording (scaled down by a peak above 1)."""
        t0 = time.perf_counter()
        audio = np.concatenate(s.audio)
        s.audio = [audio]
        shortest = max(int(MIN_PIECE_SECONDS * SAMPLE_RATE), self.listener.features.min_samples)
        heard = np.pad(audio, (0, shortest - audio.size)) if audio.size < shortest else audio
        if whole:
            heard = prepare_audio(heard, SAMPLE_RATE, shortest)
        ids = tuple(self.listener.tokens(heard, self.options, prefix, None if whole else self._work_of(s)))
        s.raw = prefix + self.listener.tokenizer.decode(list(ids), skip_special=True)
        s.updates += 1
        s.heard = audio.size
        language, text = parse_transcript(s.raw, self.options.language)
        stable = 0
        if kind == "partial":
            kept = parse_transcript(self._prefix(s, False, heard_before=s.chunks), self.options.language)[1]
            stable = len(kept) if kept and text.startswith(kept) else 0
        return LiveEvent(kind, s.index, s.offset, audio.size / SAMPLE_RATE, language, text, stable, s.raw, ids,
                         time.perf_counter() - t0)

    def _work_of(self, s: _Segment) -> SegmentWork:
        """The work kept for segment `s` (a new segment's replaces the last one's)."""
        if self._work is None or self._work[0] != s.index:
            self._drop_work()
            self._work = (s.index, self.listener.segment_work())
        return self._work[1]

    def _drop_work(self) -> None:
        if self._work is not None:
            self._work[1].close()
            self._work = None

    def _final_of(self, s: _Segment) -> LiveEvent:
        if self.live.offline_final and s.samples:
            return self._update(replace(s, audio=list(s.audio)), "", "final", whole=True)
        language, text = parse_transcript(s.raw, self.options.language)
        return LiveEvent("final", s.index, s.offset, s.heard / SAMPLE_RATE, language, text, 0, s.raw, (), 0.0)


def _as_float(samples: np.ndarray) -> np.ndarray:
    a = np.asarray(samples)
    if a.dtype == np.int16:
        a = a.astype(np.float32) / np.float32(32768.0)
    elif not np.issubdtype(a.dtype, np.floating):
        raise InputError(f"live audio of dtype {a.dtype}: give float samples in [-1, 1] or int16", "audio")
    a = mix_down(a).astype(np.float32)
    if not np.isfinite(a).all():
        raise InputError("audio holds NaN or infinite samples", "audio")
    return a
