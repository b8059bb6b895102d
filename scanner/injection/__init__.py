"""Hidden prompt injection: where text sits (the channel) and what it says (an instruction aimed at an AI)."""
