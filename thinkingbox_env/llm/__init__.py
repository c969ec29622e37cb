"""Talking to models: the OpenAI-compatible client and the fencing of untrusted text inside prompts."""
