"""Read and write taxonomies: our JSON format and ARX hierarchy CSV files.

JSON: ``{"attribute": ..., "format_version": 1, "root": {"label": ..., "children": [...]}}``; a leaf may
carry ``"alias1"`` / ``"alias2"`` (written only when set explicitly, so default codes stay random per
build; a file with explicit aliases is as secret as the key file). ``format_version`` may be absent
(version 1).

ARX: ``;``-separated (``,`` if the file has no ``;``), no header, one row per value: column 0 the value,
column ``i`` its generalization at level ``i``, the last column the root (several distinct last values
get a synthetic root ``*``). Consecutive repeats in a row are one node, which is how ARX pads values of
uneven depth; export pads the same way so that export then import gives the same tree.

Every problem with the input raises :class:`~ppdp_desktop.core.errors.TaxonomyError` naming the file,
line or label at fault; nothing else escapes for any input.
"""
from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ppdp_desktop.core.data.bounded_json import parse_json, read_json
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.data.labels import label_text
from ppdp_desktop.core.errors import InputError, TaxonomyError
from ppdp_desktop.core.taxonomy.tree import UNSET, Taxonomy, TaxonomyNode

FORMAT_VERSION = 1
#: the largest taxonomy JSON read
MAX_TAXONOMY_BYTES = 64 * 1024 ** 2


# --- JSON -----------------------------------------------------------------------------------------


def to_dict(taxonomy: Taxonomy) -> dict[str, Any]:
    """The JSON-ready form of ``taxonomy`` (children in order; explicit aliases only)."""
    root: dict[str, Any] = {"label": taxonomy.root.label}
    stack: list[tuple[TaxonomyNode, dict[str, Any]]] = [(taxonomy.root, root)]
    while stack:
        node, out = stack.pop()
        if node.alias1_is_set and node.is_leaf:
            out["alias1"] = node.alias1
        if node.alias2_is_set and node.is_leaf:
            out["alias2"] = node.alias2
        if node.children:
            out["children"] = [{"label": child.label} for child in node.children]
            stack.extend(zip(node.children, out["children"]))
    return {"attribute": taxonomy.attribute, "format_version": FORMAT_VERSION, "root": root}


def to_json(taxonomy: Taxonomy) -> str:
    """``taxonomy`` as JSON text (UTF-8 characters kept, indented)."""
    return json.dumps(to_dict(taxonomy), ensure_ascii=False, indent=2) + "\n"


def from_dict(data: object, attribute: str | None = None, source: str = "the taxonomy") -> Taxonomy:
    """Build a taxonomy from parsed JSON, checking every field (``attribute`` overrides the file's)."""
    if not isinstance(data, Mapping):
        raise TaxonomyError(f"{source}: expected a JSON object with 'attribute' and 'root', got {_kind(data)}.")
    version = data.get("format_version", FORMAT_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise TaxonomyError(f"{source}: 'format_version' must be a whole number >= 1, got {version!r}.")
    if version > FORMAT_VERSION:
        raise TaxonomyError(f"{source}: written by a newer version (format {version}); update PPDP Desktop.")
    if attribute is None:
        attribute = data.get("attribute")
        if not isinstance(attribute, str) or not attribute:
            raise TaxonomyError(f"{source}: 'attribute' must name the column (non-empty text), got {attribute!r}.")
    root = data.get("root")
    if not isinstance(root, Mapping):
        raise TaxonomyError(f"{source}: 'root' must be an object with a 'label', got {_kind(root)}.")
    try:
        taxonomy = Taxonomy(attribute, _json_label(root, "the root"))
        aliases: list[tuple[TaxonomyNode, Mapping[str, Any]]] = []
        stack: list[tuple[Mapping[str, Any], TaxonomyNode]] = [(root, taxonomy.root)]
        while stack:
            obj, node = stack.pop()
            children = obj.get("children", [])
            if not isinstance(children, list):
                raise TaxonomyError(f"'children' of {node.label!r} must be a list, got {_kind(children)}.")
            if "alias1" in obj or "alias2" in obj:
                if children or node is taxonomy.root:
                    raise TaxonomyError(f"{node.label!r} has aliases but is not a leaf; only values have aliases.")
                aliases.append((node, obj))
            for row, child in enumerate(children, 1):
                if not isinstance(child, Mapping):
                    raise TaxonomyError(f"child {row} of {node.label!r} must be an object, got {_kind(child)}.")
                stack.append((child, taxonomy.add(node, _json_label(child, f"child {row} of {node.label!r}"))))
        for node, obj in aliases:
            taxonomy.set_alias(node, obj.get("alias1", UNSET), obj.get("alias2", UNSET))
    except TaxonomyError as exc:
        raise TaxonomyError(f"{source}: {exc}") from None
    return taxonomy


def from_json(text: str | bytes, attribute: str | None = None, source: str = "the taxonomy JSON") -> Taxonomy:
    """Parse JSON text (or UTF-8 bytes) into a taxonomy; see :func:`from_dict`."""
    data = parse_json(text, source, error=TaxonomyError, max_bytes=MAX_TAXONOMY_BYTES)
    return from_dict(data, attribute, source)


def save_json(taxonomy: Taxonomy, path: str | os.PathLike[str]) -> None:
    """Write ``taxonomy`` to ``path`` as UTF-8 JSON (through a temporary file, then replace)."""
    _write_text(Path(path), to_json(taxonomy))


def load_json(path: str | os.PathLike[str], attribute: str | None = None) -> Taxonomy:
    """Read a taxonomy JSON file; ``attribute`` (if given) replaces the one in the file."""
    path = Path(path)
    return from_dict(read_json(path, error=TaxonomyError, max_bytes=MAX_TAXONOMY_BYTES), attribute, path.name)


# --- ARX hierarchy CSV ----------------------------------------------------------------------------


def to_arx_csv(taxonomy: Taxonomy, sep: str = ";") -> str:
    """One row per leaf: the leaf, its ancestors, the root; shallow leaves padded with their own label. A label a
    spreadsheet would run as a formula (starting ``= + - @``, tab or CR) gets the release's guard, a leading ``'``
    (every CSV the app writes has it; :func:`from_arx_csv` removes it again)."""
    from ppdp_desktop.core.data.formats import guard_text  # the data formats (pandas, pyarrow): on first use only

    width = taxonomy.depth + 1
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=sep, lineterminator="\n")
    for leaf in taxonomy.leaves():
        path = [node.label for node in leaf.path()]
        writer.writerow([guard_text(label) for label in [leaf.label] * (width - len(path)) + path])
    return buffer.getvalue()


def from_arx_csv(data: str | bytes, attribute: str, source: str = "the hierarchy") -> Taxonomy:
    """Build a taxonomy from an ARX hierarchy (bytes: UTF-8, UTF-16 or UTF-8 with a byte-order mark, else the
    encoding told from their letters, as a data file's; refused when it cannot be told)."""
    text = _decode(data, source) if isinstance(data, bytes) else data
    if "\x00" in text:
        raise TaxonomyError(f"{source}: contains NUL characters, so it is not a text hierarchy.")
    rows = _arx_rows(text, source)
    last_values = dict.fromkeys(row[-1] for _, row in rows)
    root = next(iter(last_values)) if len(last_values) == 1 and len(rows[0][1]) > 1 else "*"
    parent_of: dict[str, tuple[str, int]] = {}
    value_line: dict[str, int] = {}
    paths: list[list[str]] = []
    for line, row in rows:
        path = [cell for i, cell in enumerate(row) if i == 0 or cell != row[i - 1]]  # ARX padding
        if path[-1] != root:
            path.append(root)
        value = path[0]
        if value == root:
            raise TaxonomyError(f"{source}, line {line}: the value {value!r} is also the root of the hierarchy.")
        if value in value_line:
            raise TaxonomyError(f"{source}, line {line}: the value {value!r} already has a row (line {value_line[value]}).")
        value_line[value] = line
        for child, parent in zip(path, path[1:]):
            seen = parent_of.setdefault(child, (parent, line))
            if seen[0] != parent:
                raise TaxonomyError(
                    f"{source}: {child!r} is under {seen[0]!r} on line {seen[1]} but under {parent!r} on line "
                    f"{line}; a label can have only one parent."
                )
        paths.append(path)
    if root in parent_of:
        raise TaxonomyError(f"{source}, line {parent_of[root][1]}: the root {root!r} also appears under {parent_of[root][0]!r}.")
    inner = {parent: (child, line) for child, (parent, line) in reversed(parent_of.items())}
    for value, line in value_line.items():
        if value in inner:
            child, where = inner[value]
            raise TaxonomyError(
                f"{source}: {value!r} is a value (line {line}) and also the generalization of {child!r} "
                f"(line {where}); give the generalization another label."
            )
    try:
        taxonomy = Taxonomy(attribute, root)
        for path in paths:
            node = taxonomy.root
            for label in reversed(path[:-1]):
                node = taxonomy.find(label) or taxonomy.add(node, label)
    except TaxonomyError as exc:
        raise TaxonomyError(f"{source}: {exc}") from None
    return taxonomy


def save_arx_csv(taxonomy: Taxonomy, path: str | os.PathLike[str]) -> None:
    """Write ``taxonomy`` as a UTF-8 ARX hierarchy CSV."""
    _write_text(Path(path), to_arx_csv(taxonomy))


def load_arx_csv(path: str | os.PathLike[str], attribute: str) -> Taxonomy:
    """Read an ARX hierarchy CSV file as the taxonomy of ``attribute``."""
    path = Path(path)
    return from_arx_csv(_read_bytes(path), attribute, source=path.name)


# --- either format --------------------------------------------------------------------------------

_CSV_SUFFIXES = (".csv", ".txt")


def load_taxonomy(path: str | os.PathLike[str], attribute: str) -> Taxonomy:
    """Read a taxonomy by extension: ``.json`` (ours) or ``.csv`` / ``.txt`` (ARX hierarchy)."""
    path = check_regular(path, "taxonomy file (.json, or an ARX hierarchy .csv)")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return load_json(path, attribute)
    if suffix in _CSV_SUFFIXES:
        return load_arx_csv(path, attribute)
    raise TaxonomyError(f"{path.name}: unknown taxonomy file type {suffix!r}; use .json or an ARX hierarchy .csv.")


def save_taxonomy(taxonomy: Taxonomy, path: str | os.PathLike[str]) -> None:
    """Write a taxonomy by extension: ``.json`` or ``.csv`` / ``.txt`` (ARX hierarchy)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", *_CSV_SUFFIXES):
        raise TaxonomyError(f"{path.name}: unknown taxonomy file type {suffix!r}; use .json or .csv.")
    (save_json if suffix == ".json" else save_arx_csv)(taxonomy, path)


# --- helpers --------------------------------------------------------------------------------------


def _json_label(obj: Mapping[str, Any], where: str) -> str:
    if "label" not in obj:
        raise TaxonomyError(f"{where} has no 'label'.")
    label = obj["label"]
    if isinstance(label, (int, float)) and not isinstance(label, bool):
        try:
            return label_text(label)
        except ValueError:  # an integer too long to print
            raise TaxonomyError(f"the label of {where} is a number too long to use as a label.") from None
    if not isinstance(label, str):
        raise TaxonomyError(f"the label of {where} must be text, got {_kind(label)}.")
    return label


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number", float: "a number"}
    return "nothing" if value is None else f"{names.get(type(value), type(value).__name__)} ({str(value)[:40]!r})"


def _arx_rows(text: str, source: str) -> list[tuple[int, list[str]]]:
    from ppdp_desktop.core.data.formats import unguard_text

    sep = ";" if ";" in text else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((reader.line_num, [unguard_text(cell) for cell in row]))  # as to_arx_csv wrote them
    except csv.Error as exc:
        raise TaxonomyError(f"{source}, line {reader.line_num}: {exc}.") from None
    if not rows:
        raise TaxonomyError(f"{source}: has no rows; an ARX hierarchy has one row per value.")
    if all(row[-1] == "" and len(row) > 1 for _, row in rows):  # a trailing separator on every row
        rows = [(line, row[:-1]) for line, row in rows]
    first_line, first = rows[0]
    for line, row in rows:
        if len(row) != len(first):
            raise TaxonomyError(
                f"{source}, line {line}: {len(row)} columns, but line {first_line} has {len(first)}; every row "
                "of an ARX hierarchy has the same number of columns."
            )
        for column, cell in enumerate(row, 1):
            if not cell.strip():
                raise TaxonomyError(f"{source}, line {line}, column {column}: empty cell; every cell needs a label.")
    return rows


def _decode(data: bytes, source: str) -> str:
    """The text of a hierarchy file, its encoding sniffed as a data file's is (refused when it cannot be told)."""
    from ppdp_desktop.core.data.sniffing import decode_unset

    try:
        return decode_unset(data, source)
    except InputError as exc:
        raise TaxonomyError(exc.message, file=exc.file, allowed=exc.allowed) from None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TaxonomyError(f"Cannot read the taxonomy file {str(path)!r}: {exc.strerror or exc}.") from None


def _write_text(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # e.g. an attribute name with a lone surrogate
        raise TaxonomyError(f"Cannot write {str(path)!r}: {exc.object[exc.start:exc.end]!r} is not valid text.") from None
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise TaxonomyError(f"Cannot write the taxonomy file {str(path)!r}: {exc.strerror or exc}.") from None
