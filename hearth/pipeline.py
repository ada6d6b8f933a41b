"""The path of one sentence, top to bottom. Read this first; each step names where it lives.

    text ─► spoken text ─► ids ─► embeddings ─► frames of 16 codes ─► chunks ─► vocoder ─► 24 kHz audio ─► sink
     (0)       (0)        (1)       (2)              (3)               (4)       (4)            (5)

0. What the text means. `Engine.spoken` (and for a request, `runtime.sentence_plan`) reads it with
   `text.normalize`: numbers, dates, units, markdown and the rest said as words in the sentence's
   language, a lexicon's respellings; an SSML document read into parts (`document_chunks`).
1. Text to ids. `Engine.prompt` checks the text and calls `text.prompt.build_prompt`, which lays
   it out in the official chat layout with the Qwen2 byte-level BPE (`checkpoint.tokenizer`).
2. Ids to the talker's input. `text.prompt.embed_prompt` adds the voice (a built-in speaker's
   row, a cloned voice's x-vector and reference codes: `voices`), the language or dialect
   (`voices.rules`) and the text mode: the whole text in the prompt, or interleaved with the codes.
   Text that arrives while it is spoken takes `streaming.live.LiveEmbeds` instead.
3. Frames. `generation.frame_loop.FrameGenerator` runs the frame loop: per frame the talker
   (`backends.interfaces.LMSession.step`) gives codebook 0's logits, sampled by the official rules
   (`checkpoint.sampling`), and the code predictor fills codebooks 1-15. One frame is 80 ms of
   speech (`frames`). Several sentences step together in `generation.batch.FrameBatcher`; their
   turns at the CPU are `generation.turn_taking`'s.
4. Chunks and audio. `streaming.audio_stream.AudioStream` cuts the frames into chunks
   (`streaming.chunks.ChunkPlan`: 2, 4, then 5 frames) on one worker thread and decodes each on
   another with the stateful streaming vocoder (`backends.vocoder_step.SteppedVocoder`), so the
   next words are composed while the first are in the air. `streaming.stretch` changes the rate.
5. Out. A consumer iterates the `AudioChunk`s into a sink (`streaming.sinks`: the speaker, WAV,
   raw PCM), or the resident runtime does it for many clients at once (`runtime.scheduler`:
   sentences, backpressure, failures kept to their request), and the servers (`serve`) turn its
   requests into HTTP, WebSocket and Wyoming replies; `streaming.pacing` decides when playing starts.

The networks behind steps 3 and 4 are a `backends.Backend`: OpenVINO or ONNX Runtime on converted
graphs (`convert`, handed in by the engine), or the torch reference (`model`), chosen by
`backends.choices.BackendOptions`. docs/architecture.md has the map of every package.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from hearth.backends.interfaces import LanguageModel, Vocoder
from hearth.checkpoint.config import ModelConfig
from hearth.errors import InputError
from hearth.generation.frame_loop import Batcher, FrameGenerator, TurnTaking
from hearth.options import SpeechOptions
from hearth.reliability import faults
from hearth.streaming.audio_stream import AudioStream
from hearth.streaming.chunks import AudioChunk, StreamEnd, silence
from hearth.streaming.workers import Workers
from hearth.text.normalize import NormalizeOptions
from hearth.text.normalize.document import speakable
from hearth.text.prompt import Prompt, embed_prompt

__all__ = ["document_chunks", "sentence_audio", "sentence_frames"]


def sentence_frames(lm: LanguageModel, config: ModelConfig, text: str, prompt: Prompt, speech: SpeechOptions,
                    turn: TurnTaking | None = None, batcher: Batcher | None = None) -> FrameGenerator:
    """Steps 2 and 3: the prompt's ids (step 1, `Engine.prompt`) with the voice and language as the
    talker's input, and the lazy frame loop over them (generation runs as it is consumed)."""
    embeds = embed_prompt(lm, config, prompt, speech.voice, speech.language, speech.text_mode)
    embeds.marks = faults.marks(text)  # where tests inject faults for this text
    return FrameGenerator(lm, config, embeds, speech.sampling, speech.seed, speech.budget, turn, batcher)


def sentence_audio(frames: FrameGenerator, vocoder: Vocoder, sample_rate: int, speech: SpeechOptions,
                   workers: Workers, max_ready: int, start: Callable[[], Any] | None = None,
                   deliver: Callable[[AudioChunk | StreamEnd], None] | None = None) -> AudioStream:
    """Step 4: the frames cut into chunks and decoded by the streaming vocoder on worker threads,
    from `start`'s vocoder state (a cloned voice's primed one) when given. `deliver`: push each
    chunk to it as it is decoded (the scheduler's channels), the speed then applied where it lands."""
    audio = AudioStream(frames, vocoder, sample_rate, speech.chunks, max_ready, workers=workers, start=start,
                        speed=1.0 if deliver is not None else speech.speed, deliver=deliver)
    audio.seed = speech.seed
    return audio


def document_chunks(engine: Any, text: str, opts: SpeechOptions) -> tuple[list[AudioChunk], Any]:  # noqa: ANN401
    """Step 0 for an SSML document, spoken whole (`Engine.synthesize`): its parts one after another,
    each with its voice, language and rate (part i sampled with seed + i), the silences between them.
    The chunks, and the first part's generation."""
    try:
        parts = speakable(text, opts.language, opts.normalize, "ssml")
    except ValueError as e:
        raise InputError(str(e), "text") from None
    chunks: list[AudioChunk] = []
    generation = None
    plain = dataclasses.replace(opts, normalize=NormalizeOptions(enabled=False), text_format="text")
    for i, part in enumerate(parts):
        if part.pause_before_s:
            chunks.append(silence(part.pause_before_s, engine.sample_rate, engine.config.talker.num_code_groups))
        if not part.text.strip():
            continue
        said = dataclasses.replace(
            plain.sentence(i), voice=engine.check_voice(part.voice) if part.voice else opts.voice,
            language=engine.check_language(part.language) if part.language else opts.language,
            speed=part.speed if part.speed is not None else opts.speed)
        with engine.stream(part.text, speech=said) as audio:
            chunks += list(audio)
        generation = generation or audio.generation
    return chunks, generation
