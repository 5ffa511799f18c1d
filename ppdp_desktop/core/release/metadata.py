"""What ``release.json`` says of a release: built from the job's outcome, nothing secret in it.

The one place its content is made, for every release (:func:`~.pipeline.publish_release` writes it).
"""
from __future__ import annotations

from datetime import UTC, datetime

from ppdp_desktop import __version__
from ppdp_desktop.core.data.formats import FORMULA_GUARD, csv_encoding, guard_formulas
from ppdp_desktop.core.data.released import FORMAT_VERSION
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.release.provenance import KEY as PROVENANCE
from ppdp_desktop.core.release.provenance import Provenance, current_provenance

RECONSTRUCTION = (
    "Released values were drawn with the published matrix P, given by its parameters (matrix_formula): "
    "P[j][i] = Pr[value i is released as value j]. Unbiased counts of the original values among any selection "
    "of records: solve P @ f = o, where o are the observed counts of each released value in the selection "
    "(ppdp estimate does this)."
)


def release_metadata(result: Anonymization, sep: str, fmt: str = "csv", *, bom: bool = True,
                     written: tuple[int, list[str], list[str]] | None = None,
                     provenance: Provenance | None = None) -> dict[str, object]:
    """The ``release.json`` content: everything an analyst needs, nothing secret (no seed, no counts).

    ``csv.encoding`` is ``utf-8-sig`` for a CSV written with the byte-order mark (``bom``), else ``utf-8``.
    ``written``: ``(records, columns, columns with guarded formulas)`` of a table written in chunks (a streamed
    job, whose ``result.table`` holds none of the records); by default they are read from ``result.table``.
    ``provenance``: what the release was made with (:mod:`.provenance`), its plain digests keyed already
    (:meth:`~.provenance.Provenance.sealed`); by default the running app's, with the input file's digest taken while
    the loader read it (``result.dataset.digest``), keyed here. Only its public form is written: the input's name
    and keyed digests, never its SHA-256 or size (they would let anyone test guesses of a cell).
    """
    schema = result.dataset.schema
    n_records, columns, guarded = written if written is not None else (
        len(result.table), list(result.table.columns), guard_formulas(result.table)[1] if fmt == "csv" else [])
    attributes = {
        name: {**attr.to_json(), "released": attr.role.value != "identifier" and name in columns}
        for name, attr in schema.attributes.items()
    }
    metadata: dict[str, object] = {
        "format_version": FORMAT_VERSION,
        "app": f"PPDP Desktop {__version__}",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        PROVENANCE: (provenance or current_provenance(result.dataset.digest).sealed()).public_json(),
        "method": result.plan.method,
        "n_records": int(n_records),
        "data_file": data_file_name(fmt),
        "format": fmt,
        "csv": {"delimiter": sep, "encoding": csv_encoding(bom and fmt == "csv"), "missing": "",
                "formula_guard": {"prefix": FORMULA_GUARD, "columns": list(guarded) if fmt == "csv" else []}},
        "attributes": attributes,
    }
    if result.has_pseudonyms:
        metadata["pseudonym_column"] = result.pseudonym_column
    metadata.update(result.plan.release_json())
    metadata.setdefault("reconstruction", RECONSTRUCTION)
    if result.reidentification is not None:  # public figures; none of the original's where the method forbids it
        reid = result.reidentification
        metadata["reidentification"] = (reid.public() if get_method(result.plan.method).public_report else reid).to_json()
    from ppdp_desktop.core.report.groups import for_anonymization  # what the release's statistics reveal about a group

    metadata["group_disclosure"] = for_anonymization(result, public=True).to_json()  # streamed: "not_measured"
    if result.repeat is not None:  # this release among its project's releases (issue 30): public figures only
        metadata["repeated_release"] = result.repeat.to_json()
    return metadata


def data_file_name(fmt: str) -> str:
    from ppdp_desktop.core.data.formats import FORMATS

    if fmt not in FORMATS:
        raise ReleaseError(f"Unknown release format {fmt!r}; choose one of: {', '.join(FORMATS)}.")
    return "release" + FORMATS[fmt]
