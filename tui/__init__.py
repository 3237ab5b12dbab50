"""cassette_tui.tui: the Textual app, its screens and widgets, and the command line."""
