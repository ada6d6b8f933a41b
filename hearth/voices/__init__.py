"""Who speaks: the rule every surface resolves a voice by (`rules`), OpenAI's voice names as aliases
(`openai_names`), cloned voices and their stored profiles (`cloning`), and the vocoder states primed
with a cloned voice's reference (`primed_states`)."""
