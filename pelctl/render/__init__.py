"""Result -> rows, styles and JSON: one renderer per result type, shared by the CLI and the TUI.

Renderers are pure functions; they import neither rich nor textual (styles are plain rich
style strings that both can apply).
"""
