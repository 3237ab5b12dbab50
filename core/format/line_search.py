"""Which entries of a cassette file hold some text in their stored line: one sequential
read in large chunks, the search in C (``bytes.lower``, ``bytes.find``), so a term near
the end of a 1.7 GB file is found at the speed of the disk, not of a parse per line (the
app's search; ``tui/screens/steps.py``). A hit is a candidate: the caller confirms it on
the parsed entry (a JSON escape can hide or fake the text in the stored bytes).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import msgspec

from .cassette import Cassette
from .errors import CassetteFormatError
from .jobs import CancelToken, JobGenerator, Progress

__all__ = ["CHUNK", "lines_containing_job"]

#: bytes read at a time (cut back to the last whole line)
CHUNK = 8 << 20


def lines_containing_job(
    cassette: Cassette,
    needle: bytes,
    token: CancelToken | None = None,
    fields: frozenset[str] | None = None,
) -> JobGenerator[set[int] | None]:
    """The indexes of the entries whose stored line, ASCII letters in lower case, contains
    ``needle`` (lower-case bytes, no newline), as a job yielding ``Progress`` in bytes
    (stage ``"search"``). ``fields``: only a hit in the value of one of these top-level
    fields counts (``{"args", "response"}``: not the ``args_digest`` every line has).
    ``None`` for a cassette with no file behind it (in memory or imported). Raises
    ``Cancelled`` when ``token`` is cancelled and ``CassetteFormatError`` (naming the file)
    when it cannot be read."""
    spans = cassette.line_spans()
    if spans is None or cassette.path is None or not needle or b"\n" in needle:
        return None
    offsets, lengths = spans
    found: set[int] = set()
    if not offsets:
        return found
    start, end = offsets[0], offsets[-1] + lengths[-1]
    total = end - start
    try:
        with cassette.path.open("rb") as file:
            at, size = start, CHUNK  # the file offset of the next read, its size
            while at < end:
                if token is not None:
                    token.raise_if_cancelled()
                file.seek(at)
                want = min(size, end - at)
                data = file.read(want)
                if len(data) < want:  # cut since the load: the entries' parse says so
                    break
                # whole lines only: the partial last line is read again with the next chunk
                cut = data.rfind(b"\n") + 1 if at + len(data) < end else len(data)
                if cut <= 0:  # one line longer than a chunk: read it whole
                    size *= 2
                    continue
                _search(data.lower(), cut, needle, at, offsets, lengths, found, fields)
                at += cut
                size = CHUNK
                yield Progress("search", at - start, total, "bytes")
    except OSError as exc:
        raise CassetteFormatError.from_os_error(cassette.path, exc) from None
    return found


def _search(
    text: bytes,
    stop: int,
    needle: bytes,
    base: int,
    offsets: Sequence[int],
    lengths: Sequence[int],
    found: set[int],
    fields: frozenset[str] | None,
) -> None:
    """Add to ``found`` the entry of each line of ``text[:stop]`` (read at file offset
    ``base``) that holds ``needle`` (in one of ``fields``); the search goes on after the
    line of each hit."""
    pos = text.find(needle, 0, stop)
    while pos >= 0:
        i = bisect_right(offsets, base + pos) - 1
        if i >= 0 and base + pos < offsets[i] + lengths[i]:
            line_end = offsets[i] + lengths[i] - base
            if fields is None or _in_fields(text[offsets[i] - base : line_end], needle, fields):
                found.add(i)
            pos = text.find(needle, line_end, stop)
        else:  # between entries (a blank line or a header)
            pos = text.find(needle, pos + 1, stop)


_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _in_fields(line: bytes, needle: bytes, fields: frozenset[str]) -> bool:
    """``needle`` is in the stored value of one of the line's top-level ``fields`` (a line
    that is not a JSON object counts as a hit: the caller's parse says what it is)."""
    try:
        record = _FIELDS.decode(line)
    except (msgspec.DecodeError, ValueError):
        return True
    return any(needle in bytes(raw) for key, raw in record.items() if key in fields)
