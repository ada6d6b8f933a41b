"""Tools around the engine: measuring (bench, soak, doctor), the voice agent, random checkpoints in
the official layout, and the adapter for the official package (tests and --compare-official)."""
