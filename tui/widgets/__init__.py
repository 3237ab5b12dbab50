"""Textual widgets of the app: the step list (Line API), the detail pane, the header. Their
text comes from ``tui.text``."""
