"""Where a model's position settings come from: a config.json (with its class's defaults), the Hub, a GGUF file."""
