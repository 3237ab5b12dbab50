"""The debug loop's controller: the agent command, its runs, isolation, and the replay, gate,
record, pin and re-record jobs."""
