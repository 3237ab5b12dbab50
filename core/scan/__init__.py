"""One run on its own: lint, the secret scan, and redaction."""
