"""Codes from a prompt: the frame loop of one utterance (`frame_loop`), several utterances stepped
together (`batch`), and the turn-taking between utterances that share the CPU (`turn_taking`)."""
