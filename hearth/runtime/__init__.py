"""The resident runtime over one engine: the scheduler and its requests (`scheduler`, `request`,
`text_feed`), local playback (`player`, `service`) and the voice agent (`agent`)."""
