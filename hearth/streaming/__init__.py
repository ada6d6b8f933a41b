"""Codes to audio as they are made: the chunked vocoder worker (`audio_stream`), text that arrives
while it speaks (`live`), when to start playing (`pacing`), the speaking rate (`stretch`) and where
audio goes (`sinks`: speaker, WAV, raw PCM)."""
