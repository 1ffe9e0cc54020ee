"""Live documents: a notebook or text file as the agent changes it — in an open tab or in the file on disk.

The layer between the tools and the two places a document lives (docs/architecture.md, "Live documents"):
the gateways (the file through the contents manager, an open tab through the bridge), the notebook edits and
their inverses, the journal of agent changes not yet saved, and the per-document undo history.
"""
