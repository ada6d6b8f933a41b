"""The clients people already use, unchanged, against a real `hearth serve` on loopback.

pipecat's `OpenAITTSService` in a pipeline run (pcm at 24 kHz, one of OpenAI's voice names, speed
and instructions), LiveKit Agents' `openai.TTS` with `base_url` (prewarm, synthesize, and streamed
text through its `StreamAdapter`; gpt-4o-mini-tts asks for SSE, tts-1 for audio bytes). Each run's
audio is checked against what the server says it made: a sentence of F frames at speed s is
round(F x 1920 / s) samples (`hearth.streaming.stretch`), so at the speeds used here (1920 / s whole) the total
must be the frames in the server's log times 1920 / s. Open WebUI's and Home Assistant's requests
(no SDK) are in test_serve.py.
"""

from __future__ import annotations

import asyncio
import re
import time

import livekit.plugins.openai as lk_plugin  # noqa: E402
import numpy as np
import pipecat.services.openai.tts as pipecat_tts  # noqa: E402
import pytest


def served(server, before: int, within_s: float = 20) -> list[tuple[int, int]]:
    """(request id, frames) of the requests done after the first `before`, once they are logged
    (the line is written when the response has ended)."""
    deadline = time.monotonic() + within_s
    while True:
        done = re.findall(r"request (\d+): done after (\d+) frames", server.logged())
        if len(done) > before or time.monotonic() > deadline:
            return [(int(i), int(f)) for i, f in done[before:]]
        time.sleep(0.1)


def done_so_far(server) -> int:
    return len(re.findall(r"request \d+: done after", server.logged()))


def test_pipecat_pipeline_yields_the_servers_audio(server):
    from pipecat.frames.frames import ErrorFrame, TTSAudioRawFrame, TTSSpeakFrame
    from pipecat.pipeline.task import PipelineParams
    from pipecat.tests.utils import run_test

    service = pipecat_tts.OpenAITTSService
    before = done_so_far(server)

    async def run(speed):
        tts = service(api_key="unused", base_url=server.url + "/v1", sample_rate=24000,
                      settings=service.Settings(voice="nova", speed=speed, instructions="Warm and calm."))
        return await run_test(tts, frames_to_send=[TTSSpeakFrame("Hi there. Bye now.")],
                              pipeline_params=PipelineParams(audio_out_sample_rate=24000), start_timeout=30)

    for speed in (1.0, 0.8):
        down, up = asyncio.run(asyncio.wait_for(run(speed), 180))
        errors = [f for f in [*down, *up] if isinstance(f, ErrorFrame)]
        assert not errors, errors
        audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
        assert len(audio) > 1 and all(f.sample_rate == 24000 and f.num_channels == 1 for f in audio)  # streamed
        samples = sum(len(f.audio) for f in audio) // 2
        (_, frames), = served(server, before)
        before += 1
        assert frames and samples == frames * 1920 / speed, (speed, samples, frames)


def decoded_samples(frames) -> int:
    assert all(f.sample_rate == 24000 and f.num_channels == 1 for f in frames)
    return sum(f.samples_per_channel for f in frames)


@pytest.mark.parametrize("model", ["gpt-4o-mini-tts", "tts-1"])  # SSE of mp3, then plain mp3 bytes
def test_livekit_synthesize_and_stream(server, model):
    from livekit.agents import tokenize
    from livekit.agents import tts as lk_tts

    speed = 1.25

    async def run():
        tts = lk_plugin.TTS(base_url=server.url + "/v1", api_key="unused", model=model, voice="ash", speed=speed)
        tts.prewarm()  # a GET of the base URL, as LiveKit does when an agent starts
        try:
            request_ids = []
            async with tts.synthesize("Hello. Bye.") as stream:
                frames = [event.frame async for event in stream if not request_ids.append(event.request_id)]
            adapter = lk_tts.StreamAdapter(tts=tts, sentence_tokenizer=tokenize.basic.SentenceTokenizer())
            streamed = adapter.stream()
            text = "Words arrive. Then more."
            for word in text.split(" "):
                streamed.push_text(word + " ")
            streamed.end_input()
            pieces = [event.frame async for event in streamed]
            await streamed.aclose()
            return frames, pieces, request_ids
        finally:
            await tts.aclose()

    before = done_so_far(server)
    frames, pieces, request_ids = asyncio.run(asyncio.wait_for(run(), 240))
    assert request_ids and request_ids[0].startswith("hearth-")  # OpenAI's x-request-id
    done = served(server, before)
    assert len(done) >= 2
    # mp3 decodes to its samples plus the encoder's priming and padding (under 2 frames of 1152).
    want = done[0][1] * 1920 / speed
    assert want <= decoded_samples(frames) <= want + 2304 + 1152
    want = sum(frames for _, frames in done[1:]) * 1920 / speed
    assert want <= decoded_samples(pieces) <= want + len(done[1:]) * (2304 + 1152)
    assert np.all([p.samples_per_channel > 0 for p in pieces])
