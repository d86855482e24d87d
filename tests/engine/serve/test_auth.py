"""API keys (`engine.serve.auth`): the Bearer scheme in any case, the exact key, nothing else."""

from __future__ import annotations

import pytest

from engine.serve.auth import authorized

KEY = "test-key-0123456789"


@pytest.mark.parametrize("header", [f"Bearer {KEY}", f"bearer {KEY}", f"BEARER {KEY}", f"Bearer {KEY}  "])
def test_the_key_is_accepted_whatever_the_case_of_its_scheme(header):
    assert authorized(KEY, header)


@pytest.mark.parametrize(
    "header", [None, "", KEY, f"Basic {KEY}", f"Token {KEY}", "Bearer wrong-key-0123456", f"Bearer {KEY}x",
               f"Bearer {KEY[:-1]}", f"Bearer{KEY}", "Bearer "],
)  # fmt: skip
def test_anything_else_is_refused(header):
    assert not authorized(KEY, header)


@pytest.mark.parametrize("expected", [None, ""])
def test_a_server_without_a_key_lets_everyone_in(expected):
    assert authorized(expected, None) and authorized(expected, "Bearer anything")
