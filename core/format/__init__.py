"""The cassette file, knowing no rules: entries, the args digest, the line parser, JSON values
and paths, the loader and writer, and the engine's shared vocabulary (errors, jobs, findings)."""
