"""Deciding whether a tool call may run: policy decisions, approvals, and the checks behind them."""
