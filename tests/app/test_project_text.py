"""A project file's bytes as text: a byte-order mark is dropped, and every run of bytes that are not
UTF-8 is named by line, column and byte offset (counted from the file's first byte), the first few
in the message and the rest counted, while the text around them is kept."""

from __future__ import annotations

from app.project_text import MAX_FOUND, MAX_LISTED, BadBytes, decode, describe

BOM = b"\xef\xbb\xbf"


def test_clean_utf8_with_or_without_a_byte_order_mark_reads_as_it_is():
    assert decode("Zoë said “hi”".encode()) == decode(BOM + "Zoë said “hi”".encode())
    assert decode(BOM + b"{}").text == "{}" and decode(BOM + b"{}").bad == ()


def test_a_bad_byte_is_named_by_line_column_and_offset_from_the_files_start():
    raw = BOM + "ab\ncafé \xff".encode().replace(b"\xc3\xbf", b"\xff") + b" end\n"
    decoded = decode(raw)
    assert decoded.text == "ab\ncafé \ufffd end\n"
    at = raw.index(b"\xff")
    assert decoded.bad == (BadBytes(2, 6, at, b"\xff"),)
    assert str(decoded.bad[0]) == f"line 2, column 6 (byte {at}: 0xFF)"


def test_a_cut_multibyte_character_is_one_run_of_bytes():
    decoded = decode(b"x\xe2\x82y")  # the first two bytes of "€", then "y"
    assert decoded.text == "x\ufffdy"
    assert decoded.bad == (BadBytes(1, 2, 1, b"\xe2\x82"),)
    assert str(decoded.bad[0]) == "line 1, column 2 (byte 1: 0xE2 0x82)"


def test_a_long_run_shows_its_first_four_bytes():
    assert str(BadBytes(3, 1, 12_345, b"\x80\x81\x82\x83\x84")) == (
        "line 3, column 1 (byte 12,345: 0x80 0x81 0x82 0x83 …)"
    )
    assert str(BadBytes(1, 1, 0, b"\x80\x81\x82\x83")) == "line 1, column 1 (byte 0: 0x80 0x81 0x82 0x83)"


def test_bad_bytes_on_later_lines_count_columns_from_their_own_line():
    decoded = decode(b"\xff\nline two \xfe\n\nfour\xfd")
    assert [(b.line, b.column, b.offset) for b in decoded.bad] == [(1, 1, 0), (2, 10, 11), (4, 5, 18)]
    assert decoded.text == "\ufffd\nline two \ufffd\n\nfour\ufffd"


def test_the_message_lists_the_first_places_and_counts_the_rest():
    one = decode(b"a\xffb")
    assert describe(one) == "bytes that are not UTF-8 text in one place: line 1, column 2 (byte 1: 0xFF)"
    many = decode(b"\xff." * (MAX_LISTED + 2))
    said = describe(many)
    assert said.startswith(f"bytes that are not UTF-8 text in {MAX_LISTED + 2} places: line 1, column 1")
    assert said.count("line 1, column") == MAX_LISTED and said.endswith("; and 2 more")
    exactly = describe(decode(b"\xff." * MAX_LISTED))
    assert "more" not in exactly and exactly.count("(byte") == MAX_LISTED


def test_past_the_places_it_locates_the_rest_is_still_decoded_and_said_to_be_more():
    raw = b"\xff" * (MAX_FOUND + 50) + b"tail"
    decoded = decode(raw)
    assert len(decoded.bad) == MAX_FOUND and decoded.more
    assert decoded.text == "\ufffd" * (MAX_FOUND + 50) + "tail"
    assert f"in {MAX_FOUND}+ places" in describe(decoded)
    exact = decode(b"\xff" * MAX_FOUND + b"tail")
    assert not exact.more and exact.text.endswith("tail")


def test_two_bad_bytes_on_one_line_are_each_named_at_their_own_column():
    decoded = decode(b"a\xffb\xfec")
    assert decoded.text == "a\ufffdb\ufffdc"
    assert describe(decoded) == (
        "bytes that are not UTF-8 text in 2 places: "
        "line 1, column 2 (byte 1: 0xFF); line 1, column 4 (byte 3: 0xFE)"
    )
