"""What runs inside the agent's process, cheap to import: the wrapper, replayer, recorder,
report sink and network guard."""
