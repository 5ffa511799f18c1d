"""The ``ppdp`` subcommands: thin adapters from arguments to core jobs."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ppdp_desktop.cli.passphrase import ENV_VAR, generate_passphrase, read_passphrase
from ppdp_desktop.core.errors import ParameterError



def load_options(args: argparse.Namespace) -> dict[str, object]:
    """How to read the input data (``--sep --encoding --sheet --decimal --header-row --kind``) as
    keyword arguments of :func:`~ppdp_desktop.core.data.loading.load_table`."""
    from ppdp_desktop.core.data.schema import parse_column_list, parse_kind_assignments

    options = {"sep": args.sep, "encoding": args.encoding, "sheet": getattr(args, "sheet", None),
               "decimal": getattr(args, "decimal", None), "header_row": getattr(args, "header_row", None),
               "kinds": parse_kind_assignments(getattr(args, "kind", None)) or None}
    identifiers = parse_column_list(getattr(args, "identifier", None))
    if identifiers:  # identifiers are codes: read as text ("007" is not "7") unless a kind is given
        options["kinds"] = {**dict.fromkeys(identifiers, "text"), **(options["kinds"] or {})}
    return {k: v for k, v in options.items() if v is not None}

def _settings(args: argparse.Namespace):
    """The job's settings from ``ppdp anonymize`` arguments: the common ones here, the method's own by
    the method (``Method.settings_from_args``)."""
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.methods import get_method
    from ppdp_desktop.core.methods.personalized.choices import read_value_choices
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
    from ppdp_desktop.core.settings import ProtectionSettings

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
    protection.check()
    return protection


def run_risk(args: argparse.Namespace) -> int:
    """``ppdp risk``: the re-identification risk of a data file (or of a release's quasi-identifiers)."""
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.released import META_FILE, read_release
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.privacy.risk import analyse_risk

    path = Path(args.data)
    quasi = parse_column_list(args.quasi)
    if path.is_dir() or (path.suffix.lower() == ".zip" and path.is_file()):
        release = read_release(path)
        frame, label = release.table, f"the release {path.name}"
        named = (release.metadata.get("reidentification") or {}).get("quasi_identifiers") or [
            n for n, a in release.metadata.get("attributes", {}).items() if a.get("role") == "quasi-identifier"]
        quasi = quasi or list(named)
        if not quasi:
            raise ParameterError(f"{META_FILE} of {path.name} names no quasi-identifier; give --quasi COLS.")
        suppressed = frame[quasi].eq("*").all(axis=1)
        frame = frame[~suppressed]  # suppressed records cannot be linked by their quasi-identifiers
    else:
        dataset = load_table(path, **load_options(args))
        frame, label = dataset.frame, dataset.label
        if not quasi:
            raise ParameterError("Give the quasi-identifier columns: --quasi COLS (e.g. --quasi age,sex,postcode).")
    analysis = analyse_risk(frame, quasi, args.threshold, args.k)
    if args.json:
        print(json.dumps(analysis.to_json(), indent=2))
    else:
        print(f"Re-identification risk of {label} on {', '.join(quasi)} (records alone or in small groups):")
        for line in analysis.lines():
            print(f"  {line}")
    return 0


def run_anonymize(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.methods import get_method
    from ppdp_desktop.core.release.package import check_destination, release_target

    settings = _settings(args)
    if get_method(settings.method).needs_key and not args.key:
        raise ParameterError(f"--method {settings.method} needs --key FILE: without the key nobody could decode the aliases.")
    check_destination(release_target(args.out, args.zip), args.key, args.overwrite, [args.data])
    from ppdp_desktop.core.streaming.mode import choose_mode

    if args.streaming and args.in_memory:
        raise ParameterError("--streaming and --in-memory contradict each other; give one.")
    mode = choose_mode(args.data, asked=args.streaming or args.engine == "dask", refused=args.in_memory)
    if mode.streaming:
        _check_streamable(args)
    passphrase = read_passphrase(args.passphrase_file, confirm=True) if args.key else None
    _warn_seed(args.seed)
    if mode.streaming:
        if mode.reason:
            print(f"ppdp: note: {mode.reason} (--in-memory to keep it whole)", file=sys.stderr)
        return _finish_streamed(settings, args, passphrase)
    if not args.no_report:  # the report's libraries load while the data does
        from ppdp_desktop.core.report.preload import prepare_in_background

        prepare_in_background()
    dataset = load_table(args.data, **load_options(args))
    return _finish(dataset, settings, args, args.utility, args.key, passphrase)


def _check_streamable(args: argparse.Namespace) -> None:
    """Refuse, before any work, what a streamed job does not do (each with what to change)."""
    refused = [("--format " + args.fmt, args.fmt != "csv", "a streamed release is CSV"),
               ("--zip", args.zip, "a streamed release is a folder"),
               ("--utility", args.utility, "the utility figures compare every original record with its release"),
               ("--model-target", getattr(args, "model_target", None) is not None,
                "model comparisons train on the whole original table")]
    for flag, given, why in refused:
        if given:
            raise ParameterError(f"{flag} cannot go with streaming ({why}); leave it out, or give --in-memory.")


def _finish_streamed(settings, args: argparse.Namespace, passphrase: str | None) -> int:
    """``ppdp anonymize --streaming`` (or ``--engine dask``): the file read in batches, never held whole."""
    from ppdp_desktop.cli.stages import StageLines
    from ppdp_desktop.core.data.streamed import open_streamed
    from ppdp_desktop.core.streaming.job import CHUNK_SIZE

    signer = open_signer(args)  # before the work: a wrong passphrase costs nothing
    start = time.perf_counter()
    stages = StageLines(quiet=getattr(args, "quiet", False))
    options = load_options(args)
    source = open_streamed(args.data, **options)
    common = dict(chunk_size=args.chunk_size or CHUNK_SIZE, overwrite=args.overwrite, sep=args.out_sep,
                  bom=not args.no_bom, key_path=args.key, passphrase=passphrase, progress=stages.part(0.0, 1.0),
                  signer=signer, include_report=not args.no_report)
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
    if result.reidentification is not None:
        lines += [f"  {line}" for line in result.reidentification.lines()]
    if args.key:
        lines.append(f"  sealed key: {args.key} (keep it apart from the release)")
    from ppdp_desktop.core.release.package_report import custodian_report_path

    custodian = custodian_report_path(Path(done.folder), Path(args.key) if args.key else None)
    if custodian.is_file():
        lines.append(f"  custodian's report (original figures on a random sample, not for the recipient): {custodian}")
    print("\n".join(lines))
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import demo_settings
    from ppdp_desktop.core.release.package import check_destination, release_target

    out = Path(args.out)
    key = Path(args.key) if args.key else out.with_name(out.name + ".ppdpkey")
    check_destination(release_target(out, args.zip), key, args.overwrite)
    if args.passphrase_file or os.environ.get(ENV_VAR):
        passphrase, made = read_passphrase(args.passphrase_file, confirm=False), False
    else:
        passphrase, made = generate_passphrase(), True
    dataset = load_table(resource_path(DEMO_DATA))
    settings = demo_settings(dataset, args.method, theta=args.theta, seed=args.seed)
    code = _finish(dataset, settings, args, True, str(key), passphrase)
    if made:
        print(f"  key file {key} sealed with the passphrase: {passphrase}  (keep it; it is shown only once)")
    return code


def _warn_seed(seed: int | None) -> None:
    if seed is not None:
        print("ppdp: warning: a fixed --seed makes the randomization reproducible by anyone who guesses it; "
              "use it for testing only.", file=sys.stderr)


def _finish(dataset, settings, args: argparse.Namespace, utility: bool, key: str | None, passphrase: str | None) -> int:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.release.package import write_release

    from ppdp_desktop.cli.stages import StageLines

    signer = open_signer(args)  # before the work: a wrong passphrase costs nothing
    model_target = getattr(args, "model_target", None)
    if model_target == "":  # --model-target alone: the sensitive column
        model_target = settings.sensitive or None
        if model_target is None:
            raise ParameterError("--model-target needs a column here (this method has no sensitive column).")
    if model_target and model_target not in dataset.frame.columns:
        raise ParameterError(f"--model-target {model_target!r} is not a column of {dataset.label}; choose one of: "
                             f"{', '.join(map(str, dataset.frame.columns))}.")
    if model_target is not None and args.no_report:
        raise ParameterError("--model-target adds a section to the report; it cannot go with --no-report.")
    start = time.perf_counter()
    stages = StageLines(quiet=getattr(args, "quiet", False))
    result = anonymize(dataset, settings, stages.part(0.0, 0.5))
    folder = write_release(result, args.out, overwrite=args.overwrite, key_path=key, passphrase=passphrase,
                           fmt=args.fmt, sep=args.out_sep, zip_file=args.zip, include_report=not args.no_report,
                           bom=not args.no_bom, signer=signer, progress=stages.part(0.5, 1.0),
                           model_target=model_target)
    print_summary(result, folder, key, time.perf_counter() - start, utility, signer)
    return 0


def print_summary(result, folder: Path, key: str | None, seconds: float, utility: bool, signer=None) -> None:
    """The finished job in a few lines on stdout (warnings on stderr), shared by anonymize, demo and run."""
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
        extra = (f"; epsilon-LDP equivalent {guarantee['epsilon_ldp']:.3f}" if "epsilon_ldp" in guarantee
                 else f"; largest risk {guarantee['max_risk']:.4f}" if "max_risk" in guarantee else "")
        lines.append(f"  Sensitive values: guarantee verified: {guarantee['kind']}{extra}")
        if guarantee.get("downward_breaches"):
            lines.append(f"  downward breaches reported for: {', '.join(guarantee['downward_breaches'])}")
    else:
        lines.append("  Sensitive values: no formal guarantee (see the release's statement)")
    if result.reidentification is not None:
        lines += [f"  {line}" for line in result.reidentification.lines()]
    if key:
        lines.append(f"  sealed key: {key} (keep it apart from the release)")
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


def run_project_file(args: argparse.Namespace) -> int:
    """``ppdp run PROJECT``: a project saved by the window, headless, through the window's own jobs."""
    from ppdp_desktop.core.jobs import run_project
    from ppdp_desktop.core.progress import CancelToken
    from ppdp_desktop.core.project import Project
    from ppdp_desktop.core.release.package import check_destination, release_target

    project = Project.load(args.project)
    out = args.out or project.release_folder
    key = args.key or project.key_path
    if not out:
        raise ParameterError(f"{Path(args.project).name} names no release folder; give --out DIR.")
    check_destination(release_target(out, args.zip), key, args.overwrite, [args.project, project.data_path])
    passphrase = read_passphrase(args.passphrase_file, confirm=True) if key else None
    _warn_seed(args.seed)
    start = time.perf_counter()
    signer = open_signer(args)
    from ppdp_desktop.cli.stages import StageLines

    result, folder = run_project(project, out, key, passphrase, args.overwrite, StageLines(quiet=args.quiet), CancelToken(),
                                 seed=args.seed, fmt=args.fmt, zip_file=args.zip, bom=not args.no_bom,
                                 project_path=args.project, signer=signer)
    print_summary(result, folder, key, time.perf_counter() - start, False, signer)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.release.analysis import verify_release
    from ppdp_desktop.core.release.package import read_release

    if (Path(args.release) / "release.json").is_file():  # the checksums first: altered, not "damaged"
        from ppdp_desktop.core.data.checksums import check_checksums

        check_checksums(Path(args.release))
    from ppdp_desktop.core.streaming.readback import too_large_to_hold

    if too_large_to_hold(Path(args.release)):  # the data file is read in chunks, only the checked columns kept
        from ppdp_desktop.core.streaming.readback import read_back

        lines = verify_release(read_back(Path(args.release), None), signer=args.signer)
    else:
        with read_release(args.release) as release:  # a zip's unpacked copy is removed at once
            lines = verify_release(release, signer=args.signer)
    for line in lines:
        print(f"OK {line}")
    return 0


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
    from ppdp_desktop.core.release.publish import is_our_key
    from ppdp_desktop.core.release.signing import new_signing_key, open_signing_key

    path = Path(args.file)
    if args.show:
        key = open_signing_key(path, read_passphrase(args.passphrase_file, confirm=False, env_var=SIGNING_ENV_VAR,
                                                     what="the signing key"))
        print(f"fingerprint: {key.fingerprint}")
        return 0
    if path.exists() and not (args.overwrite and is_our_key(path)):
        raise ParameterError(f"{path} already exists; choose another file (--overwrite replaces only a key file of ours).")
    passphrase = read_passphrase(args.passphrase_file, confirm=True, env_var=SIGNING_ENV_VAR, what="the signing key")
    key = new_signing_key(path, passphrase, overwrite=args.overwrite)
    print(f"Signing key written to {path}.\nfingerprint: {key.fingerprint}\n"
          "Give this fingerprint to your recipients by another channel (letter, phone, your web page); keep the key "
          "file and its passphrase to yourself.")
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.data.checksums import check_checksums
    from ppdp_desktop.core.release.analysis import estimate_counts, parse_where
    from ppdp_desktop.core.release.package import read_release

    release = read_release(args.release)
    check_checksums(release.folder)  # estimates from altered files would be silently wrong
    if args.table:
        from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table
        from ppdp_desktop.core.data.schema import parse_column_list

        table = estimate_release_table(release, parse_column_list(args.table), project=args.project)
    elif args.sensitive:
        where = parse_where(args.where, list(release.table.columns))
        table = estimate_counts(release, args.sensitive, where, estimator="mle" if args.mle else args.estimator)
    else:
        raise ParameterError("Say what to estimate: --sensitive COL, or --table COLS for a randomized-response release.")
    if args.json:
        print(json.dumps(table.to_dict(orient="records"), indent=2))
    else:
        print(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.methods.partition.compare import DEFAULT_METHODS, compare_methods, format_table
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.schema import parse_column_list

    dataset = load_table(args.data, **load_options(args))
    if args.target:
        return _compare_models(dataset, args)
    if args.epsilon is not None:
        return _compare_dp(dataset, args)
    if not args.sensitive:
        raise ParameterError("compare needs --sensitive COL (with --rho1/--rho2 or --l), or --epsilon with --attributes.")
    if args.l is not None:
        from ppdp_desktop.core.methods.rr.evaluation import DEFAULT_METHODS as LINKING, compare_linking, format_linking

        if not args.quasi:
            raise ParameterError("--l needs --quasi COLS (the quasi-identifiers of the linking attack).")
        methods = parse_column_list(args.methods) or list(LINKING)
        rows = compare_linking(dataset, args.sensitive, parse_column_list(args.quasi), args.l, methods, seed=args.seed,
                               run=anonymize)
        print(f"Reconstruction of the QI x {args.sensitive} table on {dataset.label} at l = {args.l:g} (estimated from each method's release):")
        print(format_linking(rows))
        return 0
    if args.rho1 is None or args.rho2 is None:
        raise ParameterError("Give --rho1 and --rho2 (randomization methods), or --l with --quasi (linking attacks).")
    methods = parse_column_list(args.methods) or list(DEFAULT_METHODS)
    rows = compare_methods(dataset, args.sensitive, methods, args.rho1, args.rho2,
                           parse_column_list(args.identifier), seed=args.seed, run=anonymize)
    print(f"Mean relative error of count queries on {dataset.label} (same seeded queries for every method):")
    print(format_table(rows))
    return 0


def _compare_models(dataset, args: argparse.Namespace) -> int:
    """``compare --target COL``: does an analysis survive each method? Models trained on the original and on
    each release, tested on held-out original records."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.evaluation.model_utility import compare_models
    from ppdp_desktop.core.methods.partition.compare import MODEL_METHODS
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

    if not args.sensitive or args.rho1 is None or args.rho2 is None:
        raise ParameterError("--target needs the job to compare: --sensitive COL with --rho1 and --rho2.")
    if args.target not in dataset.frame.columns:
        raise ParameterError(f"--target {args.target!r} is not a column of {dataset.label}; choose one of: "
                             f"{', '.join(map(str, dataset.frame.columns))}.")
    methods = parse_column_list(args.methods) or list(MODEL_METHODS)
    unknown = [m for m in methods if m not in MODEL_METHODS]
    if unknown:
        raise ParameterError(f"--target compares the methods {', '.join(MODEL_METHODS)}; not {unknown[0]!r}.")
    identifiers = parse_column_list(args.identifier)
    for name in methods:
        settings = AnonymizationSettings(args.sensitive, name, identifiers, [],
                                         SensitivitySettings(rho1=args.rho1, rho2=args.rho2), seed=args.seed)
        comparison = compare_models(anonymize(dataset, settings), args.target, seed=args.seed or 0)
        print(f"{name}: does an analysis of {args.target} survive the release of {dataset.label}?")
        for line in comparison.lines():
            print(f"  {line}")
        rows = comparison.coefficient_rows()
        if rows:
            widths = [max(len(str(r[i])) for r in [comparison.COEFFICIENT_HEADER, *rows]) for i in range(len(rows[0]))]
            for row in [comparison.COEFFICIENT_HEADER, *rows]:
                print("  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return 0


def _compare_dp(dataset, args: argparse.Namespace) -> int:
    """``compare --epsilon``: dp-microagg for each --k against plain Laplace and plain ranking (seed 003)."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.methods.dp.evaluation import compare_dp, format_dp_table
    from ppdp_desktop.core.methods.dp.settings import parse_domains, parse_taxonomies
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.settings import MAX_K

    attributes = parse_column_list(args.attributes)
    if not attributes:
        raise ParameterError("--epsilon needs --attributes COLS (the columns to protect).")
    try:
        ks = [int(k) for k in parse_column_list(args.k)]
    except ValueError:
        raise ParameterError(f"--k {args.k!r} must be whole numbers separated by commas, e.g. 10,25,50,100.") from None
    if not ks:
        raise ParameterError("--k needs at least one cluster size.")
    if len(ks) > 20 or not all(1 <= k <= MAX_K for k in ks):
        raise ParameterError(f"--k takes at most 20 cluster sizes, each from 1 to {MAX_K:,}; got {args.k!r}.")
    rows = compare_dp(dataset, attributes, args.epsilon, ks, parse_domains(args.domain), parse_taxonomies(args.taxonomy),
                      seed=args.seed, candidates=args.candidates, run=anonymize)
    print(f"dp-microagg on {dataset.label} at epsilon = {args.epsilon:g} against its baselines ("
          "plain Laplace per value at M*Delta/epsilon, individual ranking without noise):")
    print(format_dp_table(rows))
    return 0


def run_report(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.release.package import read_release
    from ppdp_desktop.core.report.document import ReportContext
    from ppdp_desktop.core.report.files import write_html, write_pdf, write_values_csv
    from ppdp_desktop.core.report.from_release import reports_from_release

    out = Path(args.out)
    appendix = out.with_name((out.name[: -len(out.suffix)] if out.suffix else out.name) + "-values.csv")
    targets = [Path(t) for t in (args.out, args.pdf, appendix) if t]
    if args.pdf and Path(args.out).resolve() == Path(args.pdf).resolve():
        raise ParameterError(f"--out and --pdf are the same file ({args.out}); give the PDF its own name.")
    for target in targets:
        if target.exists():
            raise ParameterError(f"{target} already exists; choose another file name.")
        if not target.resolve().parent.is_dir():
            raise ParameterError(f"The folder {target.resolve().parent} for {target.name} does not exist; create it "
                                 "first or choose another path.")
    dataset = load_table(args.data, **load_options(args))
    release = read_release(args.release)
    reports = reports_from_release(dataset.frame, release)
    meta = release.metadata
    sensitive = ", ".join(e["attribute"] for e in meta.get("sensitive", []) + meta.get("recoded", []))
    context = ReportContext.from_release(release, data_label=dataset.label)
    context.sensitive = sensitive
    context.values_file = appendix.name  # the full per-value table, beside the report
    written: list[Path] = []
    try:
        if write_values_csv(reports, appendix):
            written.append(appendix)
        write_html(reports, context, args.out)
        written.append(out)
        if args.pdf:
            write_pdf(reports, context, args.pdf)
            written.append(Path(args.pdf))
    except BaseException:
        for path in written:  # all or nothing
            path.unlink(missing_ok=True)
        raise
    print("Report written to " + ", ".join(str(p) for p in written[1:] + written[:1]) + ".")
    return 0


def run_lookup(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.release.lookup import KeyRing

    if args.value is not None and not args.attribute:
        raise ParameterError("--value needs --attribute COL (the column the value comes from).")
    if args.file and not args.out:
        raise ParameterError("--file needs --out DECODED.csv.")
    if args.out:
        from ppdp_desktop.core.release.decoded import check_decoded_destination

        check_decoded_destination(args.out, overwrite=args.overwrite, sources=[args.file, args.key, args.release])
    if args.file:
        results = _read_results(args.file)
    ring = KeyRing.open(args.release, args.key, read_passphrase(args.passphrase_file, confirm=False))
    if args.value is not None:
        decoded = ring.decode_value(args.attribute, args.value)
        print(decoded[0] if len(decoded) == 1 else "one of: " + ", ".join(decoded))
    elif args.pseudonym is not None:
        for name, value in ring.lookup_pseudonym(args.pseudonym).items():
            print(f"{name}: {'' if value is None else value}")
    else:
        from ppdp_desktop.core.release.decoded import write_decoded

        decoded = ring.decode_table(results)
        write_decoded(decoded, args.out, overwrite=args.overwrite, sources=[args.file, args.key, args.release])
        print(f"Decoded {len(decoded):,} rows of {Path(args.file).name} into {args.out}.")
    return 0


def _read_results(path: str):
    from ppdp_desktop.core.data.loading import load_table

    return load_table(path).frame.astype("string").fillna("").astype(object)
