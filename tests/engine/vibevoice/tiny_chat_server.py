"""The loopback chat server the server tests run against (it lives in the engine, so users can run it)."""

from engine.testing.loopback_server import TinyChatServer

__all__ = ["TinyChatServer"]
