"""The app's screens: two cassettes side by side, one cassette alone, a step full-screen,
the keys, and a picker for files that hold many runs."""
