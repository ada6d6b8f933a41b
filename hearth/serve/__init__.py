"""Network surfaces over the scheduler: `hearth serve` (OpenAI-compatible HTTP)."""
