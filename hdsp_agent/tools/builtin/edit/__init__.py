"""Changing files: the edit tools, the matching that finds what an edit means, and the write/undo machinery."""
