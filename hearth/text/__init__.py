"""Text on its way to the talker: sentences cut for speaking one after another (`sentences`), and the
prompt in the official chat layout, then as the talker's input embeddings (`prompt`)."""
