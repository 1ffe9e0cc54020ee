"""Changing files: the edit tools, the matching that finds what an edit means, the write/undo machinery."""
