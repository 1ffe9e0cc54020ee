"""HTTP and WebSocket: every tornado handler hdsp-agent serves, all under /hdsp-agent/ behind Jupyter auth.

Handlers translate between the wire and the domain objects the app built; domain packages import no tornado.
"""
