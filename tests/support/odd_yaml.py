"""YAML files the VCR importer must refuse as format errors, never a traceback: name ->
(text, line named in the error, words of the reason). Read by the importer's test and the
command's test."""

from __future__ import annotations

from cassette_tui.core.importers._vcr import MAX_DEPTH

ONE = (
    "interactions:\n"
    "- request: {{method: GET, uri: 'http://x', body: null, headers: {{}}}}\n"
    "  response: {{status: {{code: 200, message: OK}}, headers: {{}}, body: {{string: {}}}}}\n"
    "version: 1\n"
)


LAUGHS = (
    "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "interactions:\n"
    "- request: {method: GET, uri: 'http://x', body: null, headers: {}}\n"
    "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: *i}}\n"
)


RECURSIVE = (
    "interactions: &a\n"
    "- request: {method: GET, uri: 'http://x', body: *a, headers: {}}\n"
    "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: x}}\n"
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CASES = {
    "bool maybe": (ONE.format("!!bool maybe"), 3, "!!bool cannot be 'maybe'"),
    "timestamp x": (ONE.format("!!timestamp 'x'"), 3, "!!timestamp cannot be 'x'"),
    "set": (ONE.format("!!set {a, b}"), 3, "!!set"),
    "set of mixed types": (ONE.format("!!set {1, a}"), 3, "!!set"),
    "int zz": (ONE.format("!!int 'zz'"), 3, "!!int cannot be 'zz'"),
    "python object": (ONE.format("!!python/object:os.system x"), 3, "python/object"),
    "recursive alias": (RECURSIVE, 1, "recursive alias"),
    "deep 990": (ONE.format(nested(990)), 3, f"deeper than {MAX_DEPTH} levels"),
    "deep 5000": (ONE.format(nested(5000)), 3, "nesting depth"),
    "billion laughs": (LAUGHS, None, "aliases expand"),
}
