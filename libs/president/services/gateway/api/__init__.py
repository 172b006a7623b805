"""The gateway's doors: how calls come in and how refusals go out.

The gRPC servicer (``handlers``) and its Session stream (``session``), the
interceptor that keeps an audience replica to spectators (``roles``), and the
spectators' HTTP door (``audience_http``, speaking Connect). Only these
modules speak a transport; the wings below them take identities and protos.
"""
