"""The ``ppdp`` subcommands: thin adapters from arguments to core jobs."""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from ppdp_desktop.cli.exit_codes import CheckFailed, checking
from ppdp_desktop.cli.output import binary_stdout_of, emit_json, wants_json
from ppdp_desktop.cli.passphrase import read_new_passphrase, read_passphrase
from ppdp_desktop.cli.reading import load_data, load_options, open_data_streamed  # noqa: F401 - load_options: callers import it from here
from ppdp_desktop.cli.streams import input_path, is_stdio, output_path, refuse_stdio
from ppdp_desktop.core.errors import InputError, ParameterError, phrase
from ppdp_desktop.core.visible import visible

FOLDER = "a release package is a folder (or a .zip with --zip), not a stream"
SECRET = "a key file is a secret kept in a file of its own, never sent down a pipe"


def _existing_release(path: str) -> None:
    """A path that names nothing is an input error (exit 3); a folder that is there but fails as a release
    fails the check (exit 1, :func:`~ppdp_desktop.cli.exit_codes.checking`)."""
    refuse_stdio(path, "RELEASE", "a release is a folder or a .zip file")
    if not Path(path).exists():
        raise InputError(f"{path}: no such release folder or .zip file; check the path.")


def _stdin_data(args: argparse.Namespace, run, attr: str = "data") -> int:
    """Run ``run(args)`` with ``args.<attr>`` read from stdin when it is ``-`` (spooled to a private temporary
    file, removed afterwards; the format is ``--input-format``, else sniffed)."""
    with input_path(getattr(args, attr), getattr(args, "input_format", None),
                    verbose=getattr(args, "verbose", False)) as path:
        setattr(args, attr, path)
        return run(args)



def _settings(args: argparse.Namespace):
    """The job's settings from ``ppdp anonymize`` arguments: the common ones here, the method's own by
    the method (``Method.settings_from_args``)."""
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.data.value_choices import read_value_choices
    from ppdp_desktop.core.methods import get_method
    from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings, SensitivitySettings, load_overrides

    method = get_method(args.method)
    if method.needs_sensitive and not args.sensitive:
        raise ParameterError(f"--method {args.method} needs --sensitive COL (the sensitive column).")
    return AnonymizationSettings(
        sensitive=args.sensitive or "",
        method=args.method,
        identifiers=parse_column_list(args.identifier),
        quasi=parse_column_list(args.quasi),
        sensitivity=SensitivitySettings(
            args.rho1, args.rho2, args.theta, load_overrides(args.pairs), Path(args.pairs).name if args.pairs else ""
        ),
        choices=ChoiceSettings(
            choice_column=args.choice_column,
            default_choice=args.default_choice,
            value_choices=read_value_choices(args.value_choices) if args.value_choices else {},
        ),
        options=method.settings_from_args(args),
        protection=_protection(args),
        seed=args.seed,
    )


def _protection(args: argparse.Namespace):
    """``--k-anonymity``, ``--suppression``, ``--hierarchy COL=FILE``, ``--intervals COL=W,...``, ``--threshold``."""
    from ppdp_desktop.core.settings import ProtectionSettings, recursive_pair

    hierarchies = {}
    for item in args.hierarchy:
        column, eq, path = item.partition("=")
        if not (eq and column and path):
            raise ParameterError(f"--hierarchy {item!r} must look like COL=FILE, e.g. age=age_hierarchy.csv.")
        hierarchies[column] = path
    intervals = {}
    for item in args.intervals:
        column, eq, widths = item.partition("=")
        try:
            if not (eq and column and widths):
                raise ValueError
            intervals[column] = [float(w) for w in widths.split(",")]
        except ValueError:
            raise ParameterError(f"--intervals {item!r} must look like COL=W1,W2,..., e.g. age=5,10,20.") from None
    cuts = {}
    for item in args.cuts:
        column, eq, levels = item.partition("=")
        try:
            if not (eq and column and levels):
                raise ValueError
            cuts[column] = [[float(c) for c in level.split(",")] for level in levels.split("/")]
        except ValueError:
            raise ParameterError(f"--cuts {item!r} must look like COL=C1,C2,.../C1,..., e.g. age=18,40,65/40.") from None
    protection = ProtectionSettings(args.k_anonymity, args.suppression, args.threshold, hierarchies, intervals, cuts)
    protection.metric, protection.search = getattr(args, "metric", "precision"), getattr(args, "search", "auto")
    protection.local_recoding = bool(getattr(args, "local_recoding", False))
    protection.weights = _column_numbers(getattr(args, "weight", []), "--weight", "age=5", float)
    protection.min_levels = _column_numbers(getattr(args, "min_level", []), "--min-level", "age=1", int)
    protection.max_levels = _column_numbers(getattr(args, "max_level", []), "--max-level", "age=2", int)
    for name in ("l_diversity", "entropy_l", "t_closeness", "average_risk", "highest_risk"):
        setattr(protection, name, getattr(args, name, None))
    protection.t_distance = getattr(args, "t_distance", None) or "equal"
    if getattr(args, "recursive", None) is not None:
        protection.recursive = recursive_pair(args.recursive)
    given = getattr(args, "group_bound", None)  # --group-bound [SHARE]: True when given without SHARE
    protection.require_group_bound, protection.group_bound = given is not None, None if given in (None, True) else given
    if getattr(args, "sampling_fraction", None) is not None or getattr(args, "population", None):  # issue 33
        from ppdp_desktop.cli.population_args import check_population_arguments

        check_population_arguments(args)  # before the data is read: a missing table or a bad fraction
        protection.sampling_fraction, protection.population = args.sampling_fraction, args.population or None
    protection.check()
    return protection


def population_lines(reidentification) -> list[str]:
    """The release's "Risk in the population" in sentences (none when the custodian stated neither figure)."""
    if reidentification.population is None:
        return []
    from ppdp_desktop.core.privacy.population import TITLE

    return [f"{TITLE}:", *(f"  {line}" for line in reidentification.population.lines())]


def _column_numbers(items: list[str], flag: str, example: str, kind: type) -> dict:
    """``COL=NUMBER`` options as a dict; a malformed one is a :class:`ParameterError` naming it and an example."""
    out = {}
    for item in items:
        column, eq, number = item.partition("=")
        try:
            if not (eq and column and number):
                raise ValueError
            value = kind(number)
            if kind is float and not math.isfinite(value):
                raise ValueError
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise ParameterError(f"{flag} {item!r} must look like COL={what.split()[-1].upper()} ({what}), "
                                 f"e.g. {flag} {example}.") from None
        out[column] = value
    return out


def run_risk(args: argparse.Namespace) -> int:
    """``ppdp risk``: the re-identification risk of a data file (or of a release's quasi-identifiers)."""
    return _stdin_data(args, _risk)


def _risk(args: argparse.Namespace) -> int:
    from ppdp_desktop.cli.population_args import check_population_arguments, population_figures
    from ppdp_desktop.core.data.released import META_FILE
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.privacy.risk import analyse_risk, suppressed_records
    from ppdp_desktop.core.privacy.verdict import risk_verdict

    check_population_arguments(args)
    path = Path(args.data)
    quasi = parse_column_list(args.quasi)
    k, threshold, claimed = args.k, args.threshold, None
    if path.is_dir() or (path.suffix.lower() == ".zip" and path.is_file()):
        from ppdp_desktop.core.release.analysis import read_verified

        with checking():  # the figures of a release verify refuses would be about altered data (exit 1)
            release = read_verified(path)
        frame, label = release.table, f"the release {path.name}"
        entry = release.metadata.get("reidentification") or {}
        named = entry.get("quasi_identifiers") or [
            n for n, a in release.metadata.get("attributes", {}).items() if a.get("role") == "quasi-identifier"]
        quasi = quasi or list(named)
        if not quasi:
            raise ParameterError(f"{META_FILE} of {path.name} names no quasi-identifier; give --quasi COLS.")
        claimed = entry.get("generalization") if set(quasi) == set(named) else None
        k = k if k is not None or not claimed else int(claimed["k"])  # the release's own k and threshold by default
        threshold = threshold if threshold is not None else (entry.get("release") or {}).get("threshold")
    else:
        dataset = load_data(args, str(path))
        frame, label = dataset.frame, dataset.label
        if not quasi:
            raise ParameterError("Give the quasi-identifier columns: --quasi COLS (e.g. --quasi age,sex,postcode).")
    # Suppressed records (every quasi-identifier "*") cannot be linked by their quasi-identifiers: left out, as ARX
    # does, whether the release is read as a folder or as its data file alone.
    suppressed = suppressed_records(frame, quasi)
    analysis = analyse_risk(frame[~suppressed], quasi, 0.2 if threshold is None else threshold, k)
    checked = True  # a release's own k is checked with its suppression limit, as verify does
    if claimed and k == int(claimed["k"]):
        from ppdp_desktop.core.generalization import check_k_anonymity

        checked = check_k_anonymity(frame[quasi], k, float(claimed.get("suppression_limit", 0.0)))[0]
    verdict = risk_verdict(analysis, k_checked=checked, suppressed=int(suppressed.sum()) if k is not None else None)
    sizes = {size: records // size for size, records in analysis.class_size_histogram.items()}
    population, population_lines = population_figures(args, frame.loc[~suppressed, quasi], quasi, sizes,
                                                      analysis.threshold)
    if args.json:
        emit_json(args, {**analysis.to_json(), "verdict": verdict.code, "suppressed_left_out": int(suppressed.sum()),
                         **population})
    else:
        print(visible(f"Re-identification risk of {label} on {', '.join(quasi)} (records alone or in small groups):"))
        for line in [verdict.text, *(line for line in analysis.lines() if line not in verdict.text), *population_lines]:
            print(f"  {visible(line)}")
        if suppressed.any():
            print(f"  {int(suppressed.sum()):,} suppressed records (every quasi-identifier '*') are left out: nobody "
                  "can be singled out by them.")
    return 0


def run_anonymize(args: argparse.Namespace) -> int:
    """``ppdp anonymize DATA --out DIR``: DATA may be ``-`` (stdin); the release, a folder, may not."""
    refuse_stdio(args.out, "--out", FOLDER)
    refuse_stdio(args.key, "--key", SECRET)
    return _stdin_data(args, _anonymize)


def _anonymize(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.methods import get_method
    from ppdp_desktop.core.release.package import check_destination, release_target

    settings = _settings(args)
    if get_method(settings.method).needs_key and not args.key:
        raise ParameterError(f"--method {settings.method} needs --key FILE: without the key nobody could decode the aliases.")
    check_destination(release_target(args.out, args.zip), args.key, args.overwrite, [args.data], _other_files(args))
    from ppdp_desktop.core.streaming.mode import choose_mode

    if args.streaming and args.in_memory:
        raise ParameterError("--streaming and --in-memory contradict each other; give one.")
    mode = choose_mode(args.data, asked=args.streaming or args.engine == "dask", refused=args.in_memory)
    if mode.streaming:
        _check_streamable(args)
    if args.engine == "dask":
        from ppdp_desktop.core.streaming.dask_cluster import check_worker_count

        check_worker_count(args.workers)  # before the passphrase is asked and any work
    passphrase = (read_new_passphrase(args.passphrase_file, allow_weak=args.allow_weak_passphrase,
                                      names=(args.data, args.out, args.key)) if args.key else None)
    _warn_seed(args.seed)
    from ppdp_desktop.cli.repeat_args import default_project, repeat_settings

    settings.repeat = repeat_settings(args, default_project(args.data, args.project), passphrase)
    if mode.streaming:
        if mode.reason:
            print(f"ppdp: note: {mode.reason} (--in-memory to keep it whole)", file=sys.stderr)
        return _finish_streamed(settings, args, passphrase)
    if not args.no_report:  # the report's libraries load while the data does
        from ppdp_desktop.core.report.preload import prepare_in_background

        prepare_in_background()
    dataset = load_data(args)
    return _finish(dataset, settings, args, args.utility, args.key, passphrase)


def _check_streamable(args: argparse.Namespace) -> None:
    """Refuse, before any work, what a streamed job does not do (each with what to change). A streamed release
    is written as CSV batch by batch (``--format`` needs the whole table for the other formats), and
    ``--utility``'s figures compare every original record with its release; ``--zip`` and ``--model-target``
    stream (the models train on the report's random sample of the records, and the report says so)."""
    refused = [("--format " + args.fmt, args.fmt != "csv", "a streamed release is CSV, written batch by batch"),
               ("--utility", args.utility, "the utility figures compare every original record with its release")]
    for flag, given, why in refused:
        if given:
            raise ParameterError(f"{flag} cannot go with streaming ({why}); leave it out, or give --in-memory.")


def _finish_streamed(settings, args: argparse.Namespace, passphrase: str | None) -> int:
    """``ppdp anonymize --streaming`` (or ``--engine dask``): the file read in batches, never held whole."""
    from ppdp_desktop.cli.stages import StageLines
    from ppdp_desktop.core.release.pipeline import model_target_of
    from ppdp_desktop.core.streaming.job import CHUNK_SIZE

    signer = open_signer(args)  # before the work: a wrong passphrase costs nothing
    start = time.perf_counter()
    stages = StageLines.from_args(args)
    source = open_data_streamed(args, args.data)
    model_target = model_target_of(getattr(args, "model_target", None), settings.sensitive, source.columns,
                                   source.name, report=not args.no_report)
    common = dict(chunk_size=args.chunk_size or CHUNK_SIZE, overwrite=args.overwrite, sep=args.out_sep,
                  bom=not args.no_bom, zip_file=args.zip, key_path=args.key, passphrase=passphrase,
                  progress=stages.part(0.0, 1.0), signer=signer, include_report=not args.no_report,
                  model_target=model_target)
    if args.engine == "dask":
        from ppdp_desktop.core.streaming.dask_engine import write_dask_release

        done = write_dask_release(source, settings, args.out, scheduler=args.scheduler, workers=args.workers, **common)
    else:
        from ppdp_desktop.core.streaming.release import write_streamed_release

        done = write_streamed_release(source, settings, args.out, **common)
    result = done.result
    for warning in getattr(result.plan, "warnings", []):
        print(f"ppdp: warning: {warning}", file=sys.stderr)
    for note in result.notes:
        print(f"ppdp: note: {note}", file=sys.stderr)
    lines = [f"Released {done.n_records:,} records of {source.name} to {done.folder} "
             f"({time.perf_counter() - start:.2f} s, streamed in chunks of {common['chunk_size']:,} records"
             + (", on Dask" if args.engine == "dask" else "") + ").", f"  method: {result.plan.method}"]
    lines += [f"  {line}" for line in result.plan.describe()]
    guarantee = result.guarantee
    lines.append(f"  Sensitive values: guarantee verified: {guarantee['kind']}" if guarantee.get("kind") != "none"
                 else "  Sensitive values: no formal guarantee (see the release's statement)")
    if isinstance(guarantee.get("not_covered"), str) and guarantee["not_covered"] not in result.plan.describe():
        lines.append(f"  {guarantee['not_covered']}")  # e.g. what perturbation's parameters reveal
    if result.reidentification is not None:
        lines += [f"  {line}" for line in result.reidentification.lines()]
        lines += [f"  {line}" for line in population_lines(result.reidentification)]
    if args.key:
        lines.append(f"  sealed key: {args.key} (keep it apart from the release)")
    from ppdp_desktop.core.release.package_report import custodian_report_path

    custodian = custodian_report_path(Path(done.folder), Path(args.key) if args.key else None)
    if custodian.is_file():
        lines.append(f"  custodian's report (original figures on a random sample, not for the recipient): {custodian}")
    print("\n".join(lines))
    if wants_json(args):
        from ppdp_desktop.cli.documents import released_document

        emit_json(args, released_document(args.command, result, done.folder, args.key, time.perf_counter() - start,
                                          signer=signer, n_records=done.n_records, streamed=True,
                                          custodian_report=custodian))
    return 0


def _warn_seed(seed: int | None) -> None:
    if seed is not None:
        print("ppdp: warning: a fixed --seed makes the randomization reproducible by anyone who guesses it; "
              "use it for testing only.", file=sys.stderr)


def _finish(dataset, settings, args: argparse.Namespace, utility: bool, key: str | None, passphrase: str | None,
            extra: dict | None = None) -> int:
    from ppdp_desktop.cli.stages import StageLines
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.release.pipeline import TableSource, model_target_of, publish_release

    signer = open_signer(args)  # before the work: a wrong passphrase costs nothing
    model_target = model_target_of(getattr(args, "model_target", None), settings.sensitive,  # "": the sensitive one
                                   list(dataset.frame.columns), dataset.label, report=not args.no_report)
    start = time.perf_counter()
    stages = StageLines.from_args(args)
    # without a report, utility figures or a key nothing after the job reads the input's records (issue 34)
    result = anonymize(dataset, settings, stages.part(0.0, 0.5), keep_input=not args.no_report or utility or bool(key))
    folder = publish_release(TableSource(result), args.out, overwrite=args.overwrite, key_path=key,
                             passphrase=passphrase, fmt=args.fmt, sep=args.out_sep, zip_file=args.zip,
                             include_report=not args.no_report, bom=not args.no_bom, signer=signer,
                             progress=stages.part(0.5, 1.0), model_target=model_target)
    print_summary(result, folder, key, time.perf_counter() - start, utility, signer)
    _emit_released(args, result, folder, key, time.perf_counter() - start, utility, signer, extra)
    return 0


def _emit_released(args: argparse.Namespace, result, folder, key: str | None, seconds: float, utility: bool, signer,
                   extra: dict | None = None) -> None:
    """With ``--json``: the released summary as one document (the sentences went to stderr)."""
    if not wants_json(args):
        return
    from ppdp_desktop.cli.documents import released_document
    from ppdp_desktop.core.release.package_report import custodian_report_path

    emit_json(args, {**released_document(args.command, result, folder, key, seconds, utility=utility, signer=signer,
                                         custodian_report=custodian_report_path(Path(folder), Path(key) if key else None)),
                     **(extra or {})})


def print_summary(result, folder: Path, key: str | None, seconds: float, utility: bool, signer=None,
                  key_note: str = "") -> None:
    """The finished job in a few lines on stdout (warnings on stderr), shared by anonymize, demo and run;
    ``key_note`` says more about where the key went (``ppdp run --out`` without ``--key``)."""
    from ppdp_desktop.core.methods import get_method

    for warning in getattr(result.plan, "warnings", []):
        print(f"ppdp: warning: {warning}", file=sys.stderr)
    for note in result.notes:
        print(f"ppdp: note: {note}", file=sys.stderr)
    guarantee = result.guarantee
    released = getattr(result, "n_released", None)  # a streamed job (ppdp run on a large file): every record
    lines = [f"Released {len(result.table) if released is None else released:,} records of {result.dataset.label} to "
             f"{folder} ({seconds:.2f} s" + (", streamed" if released is not None else "") + ").",
             f"  method: {result.plan.method}"]
    lines += [f"  {line}" for line in result.plan.describe()]
    if guarantee.get("kind") != "none":
        epsilon = guarantee.get("epsilon_ldp")
        scope = guarantee.get("epsilon_ldp_scope")  # partitioning: within each sub-table only
        extra = (f"; epsilon-LDP equivalent {epsilon:.3f}" + (f" {scope}" if isinstance(scope, str) else "")
                 if isinstance(epsilon, (int, float))
                 else "; no epsilon-LDP bound" if guarantee.get("no_ldp_bound")
                 else f"; largest risk {guarantee['max_risk']:.4f}" if "max_risk" in guarantee else "")
        lines.append(f"  Sensitive values: guarantee verified: {guarantee['kind']}{extra}")
        if guarantee.get("no_ldp_bound"):
            lines.append(f"  {guarantee['no_ldp_bound']}")
        if guarantee.get("downward_breaches"):
            lines.append(f"  downward breaches reported for: {', '.join(guarantee['downward_breaches'])}")
        caveat = guarantee.get("not_covered")  # e.g. what perturbation's parameters reveal (unless the plan said it)
        if isinstance(caveat, str) and caveat not in result.plan.describe():
            lines.append(f"  {caveat}")
    else:
        lines.append("  Sensitive values: no formal guarantee (see the release's statement)")
    if result.reidentification is not None:
        lines += [f"  {line}" for line in result.reidentification.lines()]
        lines += [f"  {line}" for line in population_lines(result.reidentification)]
    if result.repeat is not None:  # this release among its project's releases (ppdp history lists them)
        lines += [f"  {line}" for line in result.repeat.custodian_lines()]
        for warning in result.repeat.warnings:
            print(f"ppdp: warning: {warning}", file=sys.stderr)
    if key:
        lines.append(f"  sealed key: {key} (keep it apart from the release{'; ' + key_note if key_note else ''})")
    if signer is not None:
        lines.append(f"  signed by the key with fingerprint {signer.fingerprint} (recipients check it with "
                     "ppdp verify --signer)")
    from ppdp_desktop.core.release.package_report import custodian_report_path, custodian_values_path

    custodian = custodian_report_path(Path(folder), Path(key) if key else None)
    if custodian.is_file():
        lines.append(f"  custodian's report (original figures, not for the recipient): {custodian}")
        if custodian_values_path(custodian).is_file():
            lines.append(f"  its full per-value table: {custodian_values_path(custodian)}")
    print("\n".join(lines))
    summary = get_method(result.plan.method).utility_summary(result) if utility else None
    if summary is not None:
        for line in summary.lines():
            print(f"  {line}")


def run_verify(args: argparse.Namespace) -> int:
    """``ppdp verify``: exit 0 if every check passes, 1 if one fails (altered, wrongly signed, guarantee broken),
    3 if there is no release at that path."""
    _existing_release(args.release)
    if args.signer is not None:  # a mistyped (or empty) fingerprint is the command line's fault, not the release's
        from ppdp_desktop.core.errors import ReleaseError
        from ppdp_desktop.core.release.signing import normalize_fingerprint

        try:
            normalize_fingerprint(args.signer)
        except ReleaseError as exc:
            raise ParameterError(f"--signer {exc}") from None
    try:
        with checking():
            lines, metadata = _verify_release(args)
    except CheckFailed as exc:
        if wants_json(args):
            from ppdp_desktop.cli.documents import verify_document

            emit_json(args, verify_document(args.release, [], None, str(exc)))
        raise
    from ppdp_desktop.core.release.analysis import UNSIGNED_WARNING, is_signed

    if not is_signed(metadata):  # first: what the OK lines below cannot vouch for
        print(phrase(UNSIGNED_WARNING))
    from ppdp_desktop.core.release.structure import NOT_CHECKED

    for line in lines:  # every string of a release spelt visibly: a forged field cannot print a line of its own
        print(visible(line) if line.startswith(NOT_CHECKED) else f"OK {visible(line)}")
    from ppdp_desktop.core.release.provenance import oracle_warning

    if (warning := oracle_warning(metadata)) is not None:  # an earlier version's release: verifies, but say it
        print(f"ppdp: warning: {visible(warning)}", file=sys.stderr)
    if wants_json(args):
        from ppdp_desktop.cli.documents import verify_document

        emit_json(args, verify_document(args.release, lines, metadata, None))
    return 0


def _verify_release(args: argparse.Namespace) -> tuple[list[str], dict]:
    """The lines of every check that passed and the release's own metadata; raises at the first failure."""
    from ppdp_desktop.core.release.analysis import verify_release
    from ppdp_desktop.core.release.package import read_release

    if (Path(args.release) / "release.json").is_file():  # the checksums first: altered, not "damaged"
        from ppdp_desktop.core.data.checksums import check_checksums

        check_checksums(Path(args.release))
    from ppdp_desktop.core.streaming.readback import too_large_to_hold

    if too_large_to_hold(Path(args.release)):  # the data file is read in chunks, only the checked columns kept
        from ppdp_desktop.core.streaming.readback import read_back

        release = read_back(Path(args.release), None)
        return verify_release(release, signer=args.signer), release.metadata
    with read_release(args.release) as release:  # a zip's unpacked copy is removed at once
        return verify_release(release, signer=args.signer), release.metadata


def open_signer(args: argparse.Namespace):
    """The signing key of ``--sign FILE`` (opened with its own passphrase), or None."""
    if not getattr(args, "sign", None):
        return None
    from ppdp_desktop.cli.passphrase import SIGNING_ENV_VAR
    from ppdp_desktop.core.release.signing import open_signing_key

    passphrase = read_passphrase(args.sign_passphrase_file, confirm=False, env_var=SIGNING_ENV_VAR,
                                 what="the signing key")
    return open_signing_key(args.sign, passphrase)


def run_signing_key(args: argparse.Namespace) -> int:
    """``ppdp signing-key FILE``: make a signing key and print its fingerprint (``--show``: of an existing one)."""
    from ppdp_desktop.cli.passphrase import SIGNING_ENV_VAR
    from ppdp_desktop.core.release.signing import check_signing_key_target, new_signing_key, open_signing_key

    refuse_stdio(args.file, "FILE", SECRET)
    path = Path(args.file)
    if args.show:
        key = open_signing_key(path, read_passphrase(args.passphrase_file, confirm=False, env_var=SIGNING_ENV_VAR,
                                                     what="the signing key"))
        print(f"fingerprint: {key.fingerprint}")
        return 0
    if args.passphrase_file and _same_file(path, args.passphrase_file):
        raise InputError(f"{path} is the passphrase file (--passphrase-file); a file another option names is never "
                         "written over. Choose another file.")
    check_signing_key_target(path, args.overwrite)  # only a signing key is replaced, never a release's key
    passphrase = read_new_passphrase(args.passphrase_file, allow_weak=args.allow_weak_passphrase,
                                     names=(args.file,), env_var=SIGNING_ENV_VAR, what="the signing key")
    key = new_signing_key(path, passphrase, overwrite=args.overwrite)
    print(f"Signing key written to {path}.\nfingerprint: {key.fingerprint}\n"
          "Give this fingerprint to your recipients by another channel (letter, phone, your web page); keep the key "
          "file and its passphrase to yourself.")
    return 0


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _other_files(args: argparse.Namespace) -> dict[str, str | None]:
    """The files other options of a releasing command name (setting -> path): never written over by the release or
    its key, whatever ``--overwrite`` says."""
    return {"sign": getattr(args, "sign", None), "passphrase-file": getattr(args, "passphrase_file", None),
            "sign-passphrase-file": getattr(args, "sign_passphrase_file", None),
            "secret": getattr(args, "secret", None), "pairs": getattr(args, "pairs", None),
            "secret-passphrase-file": getattr(args, "secret_passphrase_file", None),
            "value-choices": getattr(args, "value_choices", None)}


def run_estimate(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.release.analysis import estimate_counts, parse_where, read_verified

    _existing_release(args.release)
    with checking():  # estimates from altered files would be silently wrong: a release verify refuses fails (exit 1)
        release = read_verified(args.release)
    if args.table:
        from ppdp_desktop.core.data.schema import parse_column_list
        from ppdp_desktop.core.errors import PPDPError, ReleaseError
        from ppdp_desktop.core.methods import get_method

        method = str(release.metadata.get("method", ""))
        try:
            made_by = get_method(method)
        except PPDPError:
            raise ReleaseError(f"release.json names method {method!r}, which this app does not know.") from None
        table = made_by.estimate_table(release, parse_column_list(args.table), project=args.project)
    elif args.sensitive:
        where = parse_where(args.where, list(release.table.columns))
        table = estimate_counts(release, args.sensitive, where, estimator="mle" if args.mle else args.estimator)
    else:
        raise ParameterError("Say what to estimate: --sensitive COL, or --table COLS for a randomized-response release.")
    if args.json:
        emit_json(args, table.to_dict(orient="records"))
    else:  # the release's values and column names spelt visibly (a value cannot break the table's lines)
        from pandas.api.types import is_numeric_dtype

        shown = table.rename(columns=visible)
        for name in [c for c in shown.columns if not is_numeric_dtype(shown[c])]:
            shown[name] = shown[name].map(visible)
        print(shown.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


def run_lookup(args: argparse.Namespace) -> int:
    """``ppdp lookup``: ``--file -`` reads the results table from stdin, ``--out -`` writes the decoded one to
    stdout."""
    from ppdp_desktop.core.release.lookup import KeyRing

    _existing_release(args.release)
    refuse_stdio(args.key, "KEY", SECRET)
    if args.value is not None and not args.attribute:
        raise ParameterError("--value needs --attribute COL (the column the value comes from).")
    if args.file and not args.out:
        raise ParameterError("--file needs --out DECODED.csv.")
    if wants_json(args) and is_stdio(args.out):
        raise ParameterError("--json prints its document on stdout, so it cannot go with --out -.")
    if args.out and not is_stdio(args.out):
        from ppdp_desktop.core.release.decoded import check_decoded_destination

        check_decoded_destination(args.out, overwrite=args.overwrite, sources=[args.file, args.key, args.release])
    if args.file:
        with input_path(args.file, "csv" if is_stdio(args.file) else None,
                        verbose=getattr(args, "verbose", False)) as results_path:
            results = _read_results(results_path)
    passphrase = read_passphrase(args.passphrase_file, confirm=False)
    with checking():  # an altered release fails (exit 1); a key that does not open is an input error (exit 3)
        ring = KeyRing.open(args.release, args.key, passphrase)
    for line in ring.provenance_notes():  # made with other versions than this app's
        print(f"ppdp: note: {visible(line)}", file=sys.stderr)
    if args.value is not None:
        decoded = ring.decode_value(args.attribute, args.value)
        if wants_json(args):
            emit_json(args, {"release": str(args.release), "attribute": args.attribute, "value": args.value,
                             "stands_for": decoded, "exact": len(decoded) == 1})
        else:
            print(visible(decoded[0]) if len(decoded) == 1 else "one of: " + ", ".join(map(visible, decoded)))
    elif args.pseudonym is not None:
        _print_looked_up(args, ring.lookup_pseudonym(args.pseudonym))
    else:
        from ppdp_desktop.core.release.decoded import write_decoded

        decoded = ring.decode_marked(results)
        with output_path(args.out, ".csv", binary_stdout_of(args)) as target:
            write_decoded(decoded.headed(), target, overwrite=args.overwrite,
                          sources=[args.file, args.key, args.release])
        print(f"Decoded {len(decoded.table):,} rows of {'stdin' if is_stdio(args.file) else Path(args.file).name} "
              f"into {'stdout' if is_stdio(args.out) else args.out}; each column's header says what it is.",
              file=sys.stderr if is_stdio(args.out) else sys.stdout)
        released = [n for n, m in decoded.marks.items() if not m.is_original and m.status != "pseudonym"]
        if released:
            print("The release's values, not the patients': " + "; ".join(
                visible(f"{n}: {decoded.marks[n].what}") for n in released),
                file=sys.stderr if is_stdio(args.out) else sys.stdout)
        if wants_json(args):
            emit_json(args, {"release": str(args.release), "file": str(args.file), "out": str(args.out),
                             "rows": len(decoded.table),
                             "columns": {n: {**m.to_json(), "header": f"{n} [{m.label}]"}
                                         for n, m in decoded.marks.items()}})
    return 0


def _print_looked_up(args: argparse.Namespace, row) -> None:
    """One record, each value with what it is (``--json``: ``{value, status, is_original, what}`` per column); the
    values that are the release's and not the patient's are named again at the end."""
    not_original = row.not_original()
    if wants_json(args):
        emit_json(args, {"release": str(args.release), "pseudonym": args.pseudonym, "not_original": not_original,
                         "columns": {name: {"value": value, **(row.marks[name].to_json() if row.marks[name] else
                                                               {"status": None, "is_original": None, "what": None})}
                                     for name, value in row.items()}})
        return
    for name, value in row.items():  # names and values spelt visibly: a value cannot print a line of its own
        mark = row.marks[name]
        print(visible(f"{name}: {'' if value is None else value}" + (f"  [{mark.label}]" if mark is not None else "")))
    if not_original:
        print("\nThe release's values, not the patient's (check the patient's file before acting on them):")
        for name in not_original:
            print(f"  {visible(f'{name}: {row.marks[name].what}')}")


def _read_results(path: str):
    from ppdp_desktop.core.data.loading import load_table

    return load_table(path).frame.astype("string").fillna("").astype(object)
