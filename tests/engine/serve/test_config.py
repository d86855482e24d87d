"""The server's settings (`engine.serve.config`): every limit a finite positive number, the port a
port, a key of some length, and no network address without a key."""

from __future__ import annotations

import pytest

from engine.serve.config import ServeConfig, is_loopback


@pytest.mark.parametrize("field", ["max_upload_mb", "max_audio_hours", "client_timeout"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0.0])
def test_a_limit_that_is_not_a_finite_positive_number_is_refused_by_its_flag(field, value):
    flag = "--" + field.replace("_", "-")
    with pytest.raises(ValueError, match=rf"^{flag} must be a positive number, got {value:g}$"):
        ServeConfig(**{field: value})


def test_the_smallest_limits_are_taken_and_their_units_converted():
    config = ServeConfig(max_upload_mb=0.5, max_audio_hours=0.01, client_timeout=0.1, max_queued_jobs=1,
                         max_connections=1)  # fmt: skip
    assert config.max_upload_bytes == 524288
    assert config.max_audio_seconds == pytest.approx(36.0)
    defaults = ServeConfig()
    assert (defaults.max_upload_bytes, defaults.max_audio_seconds) == (2048 * 2**20, 12 * 3600.0)
    assert (defaults.client_timeout, defaults.max_connections, defaults.max_queued_jobs) == (30.0, 256, 64)


@pytest.mark.parametrize(("field", "flag"), [("max_queued_jobs", "--max-queued-jobs"),
                                             ("max_connections", "--max-connections")])  # fmt: skip
def test_counts_below_one_are_refused(field, flag):
    with pytest.raises(ValueError, match=rf"^{flag} must be at least 1$"):
        ServeConfig(**{field: 0})


@pytest.mark.parametrize("port", [-1, 65536])
def test_a_port_outside_the_range_is_refused(port):
    with pytest.raises(ValueError, match=rf"^--port must be between 0 and 65535, got {port}$"):
        ServeConfig(port=port)


def test_ports_at_the_ends_of_the_range_are_taken():
    assert ServeConfig(port=0).port == 0 and ServeConfig(port=65535).port == 65535


def test_a_key_needs_eight_characters():
    with pytest.raises(ValueError, match=r"^the API key must be at least 8 characters long$"):
        ServeConfig(api_key="1234567")
    assert ServeConfig(api_key="12345678").api_key == "12345678"


def test_a_network_address_needs_a_key_and_loopback_does_not():
    with pytest.raises(ValueError, match=r"^refusing to listen on 0\.0\.0\.0 without an API key: .*MURMUR_"):
        ServeConfig(host="0.0.0.0")
    assert ServeConfig(host="0.0.0.0", api_key="12345678").host == "0.0.0.0"
    for host in ("127.0.0.1", "127.3.2.1", "::1", "localhost"):
        assert ServeConfig(host=host).host == host and is_loopback(host)
    assert not is_loopback("gpu-box.local") and not is_loopback("10.0.0.1")
