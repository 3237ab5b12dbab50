"""Classification of volatile values (core/keys/volatile.py)."""

from __future__ import annotations

import uuid

import pytest
from cassette_tui.core.keys.volatile import difference_kind, value_kind, volatile_kind
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11", "uuid"),
        ("6F1C2A9E-3B7D-4C1E-9A55-0D2F7E8B4C11", "uuid"),
        ("urn:uuid:6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11", "uuid"),
        ("2024-05-15T15:00:03Z", "timestamp"),
        ("2024-05-15", "timestamp"),
        ("2024-05-15 15:00:03.123456+02:00", "timestamp"),
        ("2024-05-15T15:00", "timestamp"),
        (1715785203, "epoch"),
        (1715785203.25, "epoch"),
        (1715785203123, "epoch"),
        ("1715785203", "epoch"),
        ("req_8f3a9c01d2", "request_id"),
        ("request-1234abcd", "request_id"),
        ("x-request-id-77aa0912", "request_id"),
        ("/tmp/pytest-of-ana/pytest-3/out.txt", "temp_path"),
        ("/var/folders/xy/abc123/T/tmpfile", "temp_path"),
        ("%TEMP%\\build\\x.log", "temp_path"),
        ("C:\\Users\\ana\\AppData\\Local\\Temp\\tmp1.txt", "temp_path"),
        ("/home/ana/project/README.md", "abs_path"),
        ("C:\\work\\repo\\file.txt", "abs_path"),
        ("\\\\server\\share\\file.txt", "abs_path"),
    ],
)
def test_value_kind_recognises_volatile_values(value: object, kind: str) -> None:
    assert value_kind(value) == kind


@pytest.mark.parametrize(
    "value",
    [
        "retry budget",
        "Disk full on build-7",
        "2024-13-45",  # not a real date
        "6f1c2a9e-3b7d-4c1e-9a55",  # cut UUID
        "see 6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11 for details",  # mentions one
        "request-budget",  # no digit: a word, not an id
        "relative/path.txt",
        "/",
        150,
        150.0,
        0,
        True,
        None,
        [],
        {"a": 1},
        "",
        5 * 10**12,  # past 2100 in milliseconds
    ],
)
def test_value_kind_leaves_ordinary_values_alone(value: object) -> None:
    assert value_kind(value) is None


@given(st.uuids())
def test_every_uuid_is_a_uuid(u: uuid.UUID) -> None:
    assert value_kind(str(u)) == "uuid"


@given(st.datetimes())
def test_every_isoformat_datetime_is_a_timestamp(dt: object) -> None:
    assert value_kind(dt.isoformat()) == "timestamp"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (1, 1.0, "number type"),
        (150.0, 150, "number type"),
        (
            "6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11",
            "b2e94f10-77c3-4a8e-8d2b-5c6a1f0e9d32",
            "uuid",
        ),
        ("2024-05-15T15:00:03Z", "2024-05-16T09:12:44Z", "timestamp"),
        (1715785203, "2024-05-16T09:12:44Z", "timestamp"),
        (1715785203, 1715785999, "timestamp"),
        ("req_8f3a9c01d2", "req_11aa22bb33", "request id"),
        ("/home/ana/p/x.txt", "/home/bo/p/x.txt", "absolute path"),
        ("/tmp/tmpa1/x.txt", "/tmp/tmpb2/x.txt", "absolute path"),
        ("/home/ana/p/x.txt", "p/x.txt", "absolute path"),
        ("pt", "en", "other"),
        (1, 2, "other"),
        (1, "1", "other"),
        ("6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11", "2024-05-16", "other"),
        (True, 1, "other"),
    ],
)
def test_difference_kind(a: object, b: object, kind: str) -> None:
    assert difference_kind(a, b) == kind
    assert difference_kind(b, a) == kind


# -- domain dates ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("2024-06-01", None),
        ("1986-03-14", None),
        ("2024-06-01T10:00:00Z", "timestamp"),
        (1715785203, "epoch"),
        ("6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11", "uuid"),
    ],
)
def test_bare_dates_are_domain_data(value: object, kind: str | None) -> None:
    assert volatile_kind(value) == kind
