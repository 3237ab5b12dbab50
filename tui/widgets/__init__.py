"""Textual widgets of the app: the step list (Line API), the detail pane, the header, the
text input (``TextInput``: keys applied in the order typed). Their
text comes from ``tui.text``."""
