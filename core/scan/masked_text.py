"""A long text with its secrets masked, built only where it is read.

A screen shows about 160 characters of a 24 MB answer (20,000 expanded) and the drift's
spot around the first difference of two of them; building the whole masked text for that
cost 44 ms a side (the mask's ``…`` is no Latin-1 character: the joined text is twice
the bytes of the answer) and comparing two of them 13-18 ms. ``MaskedText`` holds the text
as recorded and the pieces of it that masking replaced (``masking._masked_text``: each
piece between two cuts, replaced as a whole); its length, any slice of it and the first
difference of two of them are worked out from those, and they equal the same of the whole
masked text (``str(masked)``, ``tests/core/scan/test_masked_text.py``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from ..format.textspot import first_difference

__all__ = ["MaskedText", "masked_first_difference"]


class MaskedText:
    """``text`` with each ``(start, end, shown)`` of ``pieces`` (indices into ``text``,
    sorted, apart) read as ``shown``: the text a screen shows, never built whole unless
    asked (``str``). Read only: the pane, the step screen and ``e`` share one."""

    __slots__ = ("_ends", "_length", "_shifts", "_starts", "pieces", "text")

    def __init__(self, text: str, pieces: list[tuple[int, int, str]]) -> None:
        self.text = text
        self.pieces = pieces
        self._starts: list[int] = []  # each piece's start in the masked text
        self._ends: list[int] = []  # and its end there
        self._shifts: list[int] = []  # masked index less the text's index, after each piece
        shift = 0
        for start, end, shown in pieces:
            self._starts.append(start + shift)
            self._ends.append(start + shift + len(shown))
            shift += len(shown) - (end - start)
            self._shifts.append(shift)
        self._length = len(text) + shift

    def __len__(self) -> int:
        return self._length

    def __str__(self) -> str:
        """The whole masked text (``text`` itself when nothing was replaced)."""
        if not self.pieces:
            return self.text
        return "".join(part for _, part in self.segments())

    def __getitem__(self, key: slice) -> str:
        """``str(self)[key]`` for a slice of step 1, built from the pieces it covers."""
        if not isinstance(key, slice):
            raise TypeError("a MaskedText is read by slices only")
        start, stop, step = key.indices(self._length)
        if step != 1:
            raise ValueError("a MaskedText is read by slices of step 1 only")
        out: list[str] = []
        pos = start
        i = bisect_right(self._starts, pos) - 1  # the last piece starting at or before pos
        while pos < stop:
            if i >= 0 and pos < self._ends[i]:  # inside piece i as shown
                shown = self.pieces[i][2]
                got = shown[pos - self._starts[i] : stop - self._starts[i]]
                out.append(got)
                pos += len(got)
                continue
            shift = self._shifts[i] if i >= 0 else 0
            run_end = self._starts[i + 1] if i + 1 < len(self.pieces) else self._length
            end = min(stop, run_end)
            out.append(self.text[pos - shift : end - shift])
            pos = end
            i += 1
        return "".join(out)

    def __contains__(self, char: str) -> bool:
        """Whether the masked text holds ``char`` (one character: none spans two parts)."""
        if len(char) != 1:
            return char in str(self)
        return any(char in part for _, part in self.segments(copy=False))

    def segments(self, copy: bool = True) -> Iterator[tuple[int, str]]:
        """The masked text's parts in order, each with its start in it: the runs of the
        text kept as they are and the pieces as shown. ``copy=False``: each run as the
        whole text cut by ``_Run``'s bounds is not made; a run is then ``_Run``."""
        done = 0  # the text's index
        for (start, end, shown), masked_start in zip(self.pieces, self._starts, strict=True):
            if start > done:
                run = self.text[done:start] if copy else _Run(self.text, done, start)
                yield masked_start - (start - done), run  # type: ignore[misc]
            yield masked_start, shown
            done = end
        if done < len(self.text) or not self.pieces:
            run = self.text[done:] if copy else _Run(self.text, done, len(self.text))
            yield self._length - (len(self.text) - done), run  # type: ignore[misc]

    def positions(self, char: str) -> Iterator[int]:
        """The indices in the masked text of each ``char`` (one character), in order."""
        at = self.find(char)
        while at >= 0:
            yield at
            at = self.find(char, at + 1)

    def find(self, char: str, start: int = 0, stop: int | None = None) -> int:
        """``str(self).find(char, start, stop)`` for one character and bounds from 0 to
        ``len(self)``: the runs searched in the text as it is, the pieces as shown."""
        stop = self._length if stop is None else min(stop, self._length)
        pos = start
        i = bisect_right(self._starts, pos) - 1  # as ``__getitem__`` walks
        while pos < stop:
            if i >= 0 and pos < self._ends[i]:
                base = self._starts[i]
                found = self.pieces[i][2].find(char, pos - base, stop - base)
                if found >= 0:
                    return base + found
                pos = self._ends[i]
                continue
            shift = self._shifts[i] if i >= 0 else 0
            end = min(stop, self._starts[i + 1] if i + 1 < len(self.pieces) else self._length)
            found = self.text.find(char, pos - shift, end - shift)
            if found >= 0:
                return found + shift
            pos = end
            i += 1
        return -1


class _Run:
    """``text[start:end]`` not copied: a run of a long text kept as it is."""

    __slots__ = ("end", "start", "text")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end = text, start, end

    def __contains__(self, char: str) -> bool:
        return self.text.find(char, self.start, self.end) >= 0


def masked_first_difference(
    a: str | MaskedText, b: str | MaskedText, same: int | None = None
) -> int:
    """``textspot.first_difference(str(a), str(b))`` without building either: the texts as
    recorded are compared once (in C; ``same``: their first difference, when the caller
    knows it), and the masked texts part by part from the runs and pieces of each, the
    runs of both that sit at the same place before the texts' first difference taken as
    equal unread."""
    if isinstance(a, str) and isinstance(b, str):
        return first_difference(a, b)
    text_a = a.text if isinstance(a, MaskedText) else a
    text_b = b.text if isinstance(b, MaskedText) else b
    if same is None:
        same = first_difference(text_a, text_b)  # the texts as recorded agree before this
    parts_a, parts_b = _parts(a), _parts(b)
    pos = 0
    run_a = next(parts_a, None)
    run_b = next(parts_b, None)
    while run_a is not None and run_b is not None:
        (raw_a, text1, x, end_a), (raw_b, text2, y, end_b) = run_a, run_b
        n = min(end_a - x, end_b - y)
        if not (raw_a and raw_b and x == y and x + n <= same):  # else equal, unread
            k = first_difference(text1[x : x + n], text2[y : y + n])
            if k < n:
                return pos + k
        pos += n
        run_a = (raw_a, text1, x + n, end_a) if x + n < end_a else next(parts_a, None)
        run_b = (raw_b, text2, y + n, end_b) if y + n < end_b else next(parts_b, None)
    return pos


def _parts(value: str | MaskedText) -> Iterator[tuple[bool, str, int, int]]:
    """Each non-empty part of a masked text: (a run of the text as recorded, the string it
    is read from, its start and end there)."""
    if isinstance(value, str):
        if value:
            yield True, value, 0, len(value)
        return
    for _, part in value.segments(copy=False):
        if isinstance(part, _Run):
            if part.end > part.start:
                yield True, part.text, part.start, part.end
        elif part:
            yield False, part, 0, len(part)
