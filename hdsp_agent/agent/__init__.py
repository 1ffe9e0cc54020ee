"""The agent: model client, the tool loop, sessions and their persistent event log."""
