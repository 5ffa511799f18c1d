"""The ``ppdp`` argument parser: every subcommand and its flags."""
from __future__ import annotations

import argparse
from collections.abc import Collection

from ppdp_desktop import __version__
from ppdp_desktop.cli.exit_codes import EPILOG, ExitCode
from ppdp_desktop.cli.passphrase import add_allow_weak_argument
from ppdp_desktop.cli.streams import INPUT_FORMATS
from ppdp_desktop.core.declarations import add_arguments as add_declared_arguments
from ppdp_desktop.core.declarations import finite_float


def positive_int(text: str) -> int:
    """An integer of at least 1 (argparse type)."""
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value

EXIT_USER_ERROR = ExitCode.USAGE


def header_row(text: str) -> int:
    """A row number from 1 to the loader's declared limit (argparse type: a usage error, before any work)."""
    from ppdp_desktop.core.data.loading import MAX_HEADER_ROW

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_HEADER_ROW:
        raise argparse.ArgumentTypeError(f"{text!r}: the header row must be a whole number from 1 to "
                                         f"{MAX_HEADER_ROW:,}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line (and the same exit status as other user errors)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")



def _input_args(parser: argparse.ArgumentParser) -> None:
    """How to read DATA: the import options of the window's load step."""
    group = parser.add_argument_group("reading the data file")
    group.add_argument("--input-format", choices=INPUT_FORMATS, help="format of data read from stdin ('-'); "
                       "default: sniffed from its first bytes (Excel, Parquet, SPSS, Stata), else CSV")
    group.add_argument("--sep", help="delimiter of a text file (default: sniffed among , ; TAB |)")
    group.add_argument("--encoding", help="encoding of a text file, e.g. cp1250 (default: UTF-8 or UTF-16 when "
                       "the file is; else told from its letters, and asked when it cannot be told)")
    group.add_argument("--sheet", help="worksheet of an Excel file, by name or number from 0 (default: the first)")
    group.add_argument("--decimal", choices=(".", ","), help="decimal mark of numbers in a text file (default: ., or , "
                       "when a first look at the file finds a column of numbers such as 70,5, said on stderr)")
    group.add_argument("--header-row", type=header_row, metavar="N", help="the row holding the column names, from 1, blank "
                       "rows not counted; rows above it, such as a title, are skipped (default: 1, or the row below a "
                       "one-cell title that a first look at the file finds, said on stderr)")
    group.add_argument("--kind", action="append", metavar="COL=KIND", help="the kind of a column: categorical, "
                       "numeric, date or text (codes and identifiers, kept as written, e.g. leading zeros); repeat "
                       "per column (default: guessed)")

def _sensitivity_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sensitivity for uniform/finegrain (--rho1/--rho2 or --theta, plus optional --pairs)")
    g.add_argument("--rho1", type=finite_float, help="prior bound rho1 for every value")
    g.add_argument("--rho2", type=finite_float, help="posterior bound rho2 for every value")
    g.add_argument("--theta", type=finite_float,
                   help="less frequent is more sensitive: rho1_i = f_i/n, rho2_i = theta*rho1_i (theta > 1)")
    g.add_argument("--pairs", metavar="FILE", help="CSV value,rho1,rho2 overriding chosen values")


def _choice_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("per-record privacy choices and taxonomies (used by the methods that read them)")
    g.add_argument("--choice-column", metavar="COL", help="column holding each record's choice 1/2/3 (removed from the release)")
    g.add_argument("--default-choice", type=int, choices=(1, 2, 3), help="choice for every record (default 2)")
    g.add_argument("--value-choices", metavar="FILE", help="CSV value,choice: a default choice per value")
    g.add_argument("--taxonomy", metavar="[COL=]FILE", action="append",
                   help="taxonomy (our .json or an ARX hierarchy .csv): of the sensitive column, or COL=FILE for a "
                        "protected column of a method that takes one per column (repeat per column)")


def _method_args(p: argparse.ArgumentParser) -> None:
    """Each registered method's own options, in a group of its own (``Method.add_arguments``)."""
    from ppdp_desktop.core.methods import REGISTRY  # the method families: only when a command takes their options

    for name, method in REGISTRY.items():
        before = len(p._actions)
        group = p.add_argument_group(f"{method.title} (--method {name})")
        method.add_arguments(group)
        if len(p._actions) == before:
            p._action_groups.remove(group)


def _protection_args(p: argparse.ArgumentParser) -> None:
    """Re-identification's options, from :class:`ProtectionSettings`' declarations (``--group-bound`` also sets
    ``require_group_bound``, and the COL=... options are parsed by the command: ``commands._protection``)."""
    from ppdp_desktop.core.settings import ProtectionSettings

    g = p.add_argument_group("re-identification: protect the quasi-identifiers (--quasi) by generalization")
    add_declared_arguments(g, ProtectionSettings, only=("k", "suppression", "hierarchies", "intervals", "cuts",
                                                        "threshold", "group_bound", "metric", "weights",
                                                        "min_levels", "max_levels", "search", "local_recoding",
                                                        "l_diversity", "entropy_l", "recursive", "t_closeness",
                                                        "t_distance", "average_risk", "highest_risk"))
    from ppdp_desktop.cli.population_args import add_population_arguments

    add_population_arguments(p)


def _compare_args(p: argparse.ArgumentParser) -> None:
    """The options every comparison shares, then each registered comparison's own (``Method.comparisons``)."""
    from ppdp_desktop.core.methods import comparisons

    ways = comparisons()
    defaults = [f"{','.join(w.default_methods)} ({w.when})" for w in ways if w.default_methods]
    p.add_argument("--sensitive", metavar="COL", help="the sensitive column (the comparisons of randomization and "
                   "linking attacks, and the job of --target)")
    p.add_argument("--methods", help="comma-separated; default " + " or ".join(defaults))
    p.add_argument("--identifier", metavar="COLS", help="identifier columns (not used as conditions)")
    p.add_argument("--seed", type=int)
    for way in ways:
        way.add_arguments(p)
    _json_arg(p, JSON_COMPARE.format(modes=", ".join(w.name for w in ways)))


def _key_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    g = p.add_argument_group("sealed key file")
    g.add_argument("--key", metavar="FILE", required=required, help="write the sealed key file here (outside the release folder)")
    g.add_argument("--passphrase-file", metavar="FILE", help="read the passphrase from this file's first line "
                   "(else PPDP_PASSPHRASE, else a prompt)")
    add_allow_weak_argument(g)


def _package_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("release package")
    g.add_argument("--format", dest="fmt", choices=("csv", "xlsx", "sav", "parquet"), default="csv",
                   help="format of the released data (default csv)")
    g.add_argument("--out-sep", default=",", help="delimiter of a released CSV (default ,)")
    g.add_argument("--zip", action="store_true", help="write one .zip file instead of a folder")
    g.add_argument("--no-report", action="store_true", help="skip report.html / report.pdf")
    g.add_argument("--model-target", metavar="COL", nargs="?", const="", help="the custodian's report also answers "
                   "'does my analysis survive?': a decision tree and a logistic regression predicting COL (default: "
                   "the sensitive column), trained on the original and on the release, tested on held-out original "
                   "records")
    g.add_argument("--no-bom", action="store_true", help="write a CSV release without the UTF-8 byte-order mark "
                   "(by default it has one, so that Excel opens accents correctly)")
    _sign_args(p)


def _sign_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("signing the release")
    g.add_argument("--sign", metavar="FILE", help="sign the release with this signing key (made by ppdp signing-key) "
                   "so recipients can check who made it")
    g.add_argument("--sign-passphrase-file", metavar="FILE", help="the signing key's passphrase (else "
                   "PPDP_SIGNING_PASSPHRASE, else a prompt)")


#: what each command's --json document holds (docs/cli.md has the full list of keys)
JSON_RELEASED = ("one object: command, release, key, n_records, seconds, streamed, method, plan (lines), guarantee "
                 "(the verified claim, numbers as numbers), reidentification, signer, custodian_report, utility, "
                 "warnings, notes, repeated_release (null without a project)")
JSON_VERIFY = ("one object: release, verified (true/false), error (null or the reason), checks (one line per check "
               "passed), n_records, method, signer")
JSON_COMPARE = "one object: data, mode (one of: {modes}), parameters, rows (one object per method)"
JSON_LOOKUP = ("one object: release, then with --pseudonym: pseudonym, not_original (the columns whose value is the "
               "release's, not the patient's), columns (per column: value, status, is_original, what); with --value: "
               "attribute, value, stands_for, exact; with --file: file, out, rows, columns (per column: status, "
               "is_original, what, header)")
JSON_REPORT = ("one object: data, release, files (html, pdf, values), reports (per protected attribute: method, "
               "n_records, guarantee, record_utility, epsilon_ldp, findings, reidentification)")


def _json_arg(p: argparse.ArgumentParser, schema: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print one JSON document on stdout instead of sentences "
                   f"(sentences go to stderr): {schema}")


def _global_args(p: argparse.ArgumentParser, *, default: object) -> None:
    """--quiet / --verbose, accepted before the command and after it (``default=SUPPRESS`` on the commands, so
    that a command's parser does not reset what was given before the command)."""
    p.add_argument("-q", "--quiet", action="store_true", default=default,
                   help="print nothing but errors (a --json document or a '-' output is still written)")
    p.add_argument("-v", "--verbose", action="store_true", default=default,
                   help="print every stage with its time at once, and more detail on stderr")


def _anonymize(an: argparse.ArgumentParser) -> None:
    """``ppdp anonymize``'s arguments."""
    from ppdp_desktop.core.methods import DEFAULT_METHOD, REGISTRY

    an.add_argument("data", help="CSV/TSV/TXT, .xlsx, .sav, .dta or .parquet file; - reads it from stdin")
    an.add_argument("--out", required=True, help="release folder to create")
    an.add_argument("--sensitive", metavar="COL", help="the sensitive column (not needed for dp-microagg)")
    an.add_argument("--identifier", metavar="COLS", help="comma-separated identifier columns (removed; replaced by pseudonyms)")
    an.add_argument("--quasi", metavar="COLS", help="comma-separated quasi-identifier columns")
    an.add_argument("--method", default=DEFAULT_METHOD, metavar="METHOD",
                    help=f"the privacy method: {', '.join(REGISTRY)} (default: {DEFAULT_METHOD})")
    _sensitivity_args(an)
    _choice_args(an)
    _method_args(an)
    _protection_args(an)
    _key_args(an)
    an.add_argument("--seed", type=int, help="fix the random seed (testing only: a guessable seed voids the guarantee)")
    from ppdp_desktop.cli.repeat_args import add_repeat_arguments

    add_repeat_arguments(an)
    _input_args(an)
    an.add_argument("--overwrite", action="store_true", help="replace an existing release folder / key file")
    an.add_argument("--utility", action="store_true", help="also print utility figures (count-query workload, distances)")
    _package_args(an)
    _json_arg(an, JSON_RELEASED)
    mode = an.add_argument_group("files larger than memory")
    mode.add_argument("--streaming", action="store_true",
                      help="read the file in record batches and write the release through an external shuffle, so the "
                           "table never has to fit in memory (CSV or Parquet input, CSV release); chosen automatically "
                           "when the file is larger than about a third of the free memory")
    mode.add_argument("--in-memory", action="store_true", help="never switch to streaming on my behalf")
    mode.add_argument("--chunk-size", type=positive_int, default=None, metavar="N",
                      help="records per batch when streaming (default 250,000)")
    mode.add_argument("--engine", choices=("local", "dask"), default="local",
                      help="where a streamed job runs: this process (local, default) or a Dask cluster (dask: needs "
                           "pip install ppdp-desktop[cluster])")
    mode.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler to use (default: a LocalCluster on "
                      "this machine)")
    mode.add_argument("--workers", type=positive_int, default=None, metavar="N",
                      help="worker processes of the LocalCluster (default: one per core)")


def _demo(demo: argparse.ArgumentParser) -> None:
    """``ppdp demo``'s arguments."""
    from ppdp_desktop.core.methods import DEFAULT_METHOD, REGISTRY

    demo.add_argument("--out", required=True, help="release folder to create")
    demo.add_argument("--method", default=DEFAULT_METHOD, metavar="METHOD",
                      help=f"the privacy method: {', '.join(REGISTRY)} (default: {DEFAULT_METHOD}); each gets demo "
                           "values of its parameters")
    demo.add_argument("--theta", type=finite_float, default=3.0, help="tolerance theta (default: 3)")
    demo.add_argument("--key", metavar="FILE", help="key file (default: OUT.ppdpkey beside the folder)")
    demo.add_argument("--passphrase-file", metavar="FILE", help="passphrase file (default: PPDP_PASSPHRASE, else a "
                      "random passphrase is made and written to OUT.passphrase.txt beside the key, never printed)")
    add_allow_weak_argument(demo)
    demo.add_argument("--seed", type=int, help="fix the random seed (testing only)")
    demo.add_argument("--overwrite", action="store_true", help="replace an existing release folder / key file")
    _package_args(demo)
    _json_arg(demo, JSON_RELEASED + "; passphrase_file (the file holding the passphrase made up for the key, only "
              "when one was made)")


def _run(run: argparse.ArgumentParser) -> None:
    """``ppdp run``'s arguments."""
    run.add_argument("project", help="the .ppdp project file")
    run.add_argument("--out", help="release folder to create (default: the project's release folder)")
    run.add_argument("--key", metavar="FILE", help="sealed key file (default: the project's key file, if any; with --out "
                     "DIR, DIR.ppdpkey beside the new folder)")
    run.add_argument("--passphrase-file", metavar="FILE", help="passphrase file (else PPDP_PASSPHRASE, else a prompt)")
    add_allow_weak_argument(run)
    run.add_argument("--seed", type=int, help="fix the random seed (testing only)")
    from ppdp_desktop.cli.repeat_args import add_repeat_arguments

    add_repeat_arguments(run, project=False)
    run.add_argument("--overwrite", action="store_true", help="replace an existing release folder / key file")
    run.add_argument("--format", dest="fmt", choices=("csv", "xlsx", "sav", "parquet"), default="csv",
                     help="format of the released data (default csv)")
    run.add_argument("--zip", action="store_true", help="write one .zip file instead of a folder")
    run.add_argument("--no-bom", action="store_true", help="write a CSV release without the UTF-8 byte-order mark")
    _sign_args(run)
    _json_arg(run, JSON_RELEASED)


def _risk(rk: argparse.ArgumentParser) -> None:
    """``ppdp risk``'s arguments."""
    rk.add_argument("data", help="a data file (- reads it from stdin), or a release folder / .zip")
    rk.add_argument("--quasi", metavar="COLS", help="quasi-identifier columns (default for a release: those it names)")
    rk.add_argument("--threshold", type=finite_float, help="risk above which a record counts as at risk "
                    "(default: a release's own, else 0.2)")
    rk.add_argument("--k", type=int, help="the k to check: records in groups smaller than k (default: a release's own)")
    rk.add_argument("--json", action="store_true", help="print one JSON document instead of sentences: model, "
                    "quasi_identifiers, n_records, n_classes, threshold, k, highest_risk, average_risk, "
                    "records_above_threshold, share_above_threshold, sample_uniques, share_sample_uniques, "
                    "records_below_k, marketer_risk, class_size_histogram, missing_as_value, verdict, suppressed_left_out "
                    "(and population_uniqueness, journalist with the options below)")
    from ppdp_desktop.cli.population_args import add_population_arguments

    add_population_arguments(rk)
    _input_args(rk)


def _verify(ver: argparse.ArgumentParser) -> None:
    """``ppdp verify``'s arguments."""
    ver.add_argument("release", help="release folder")
    ver.add_argument("--signer", metavar="FINGERPRINT", help="refuse the release unless it is signed by the key with "
                     "this fingerprint (as the custodian gave it to you)")
    _json_arg(ver, JSON_VERIFY)


def _signing_key(sk: argparse.ArgumentParser) -> None:
    """``ppdp signing-key``'s arguments."""
    sk.add_argument("file", help="the signing key file to write (or read with --show)")
    sk.add_argument("--show", action="store_true", help="open an existing signing key and print its fingerprint")
    sk.add_argument("--passphrase-file", metavar="FILE", help="passphrase file (else PPDP_SIGNING_PASSPHRASE, else a "
                    "prompt)")
    add_allow_weak_argument(sk)
    sk.add_argument("--overwrite", action="store_true", help="replace an existing signing key file of ours")


def _estimate(est: argparse.ArgumentParser) -> None:
    """``ppdp estimate``'s arguments."""
    est.add_argument("release", help="release folder")
    est.add_argument("--sensitive", metavar="COL", help="a perturbed column: counts of its original values")
    est.add_argument("--table", metavar="COLS", help="randomized-response releases: estimated contingency table of these "
                     "columns (a group-by; any subset is a CUBE query)")
    est.add_argument("--project", action="store_true", help="with --table: clip negatives and rescale to the total")
    est.add_argument("--where", help='condition on released columns: "col=value,col=value"')
    est.add_argument("--estimator", choices=("mle", "unbiased"), default="mle",
                     help="mle (default): non-negative maximum-likelihood counts (iterative Bayes); unbiased: the "
                          "inverse of the matrix (can be negative for rare values). Intervals are bootstrapped for "
                          "the estimator shown")
    est.add_argument("--mle", action="store_true", help=argparse.SUPPRESS)  # the former spelling of the default
    est.add_argument("--json", action="store_true", help="print JSON instead of a table: a list with one object "
                     "per row of the table, numbers as numbers")


def _compare(cp: argparse.ArgumentParser) -> None:
    """``ppdp compare``'s arguments."""
    cp.add_argument("data", help="the data file (- reads it from stdin)")
    _compare_args(cp)
    _input_args(cp)


def _report(rp: argparse.ArgumentParser) -> None:
    """``ppdp report``'s arguments."""
    rp.add_argument("data", help="the original data file (- reads it from stdin)")
    rp.add_argument("release", help="release folder or .zip")
    rp.add_argument("--out", required=True, help="report.html to write (- writes the HTML to stdout, without the "
                    "per-value CSV that goes beside a report file)")
    rp.add_argument("--pdf", help="also write this PDF (- writes it to stdout)")
    _json_arg(rp, JSON_REPORT)
    _input_args(rp)


def _lookup(lk: argparse.ArgumentParser) -> None:
    """``ppdp lookup``'s arguments."""
    lk.add_argument("release", help="release folder")
    lk.add_argument("key", help="the release's sealed key file")
    what = lk.add_mutually_exclusive_group(required=True)
    what.add_argument("--value", help="a published value to decode (with --attribute)")
    what.add_argument("--pseudonym", help="a pseudonymous record id")
    what.add_argument("--file", metavar="RESULTS", help="a results table (CSV) to decode (with --out); - reads it "
                      "from stdin")
    lk.add_argument("--attribute", help="the column the --value comes from")
    lk.add_argument("--out", help="where to write the decoded table (with --file); - writes it to stdout")
    lk.add_argument("--passphrase-file", metavar="FILE", help="passphrase file (else PPDP_PASSPHRASE, else a prompt)")
    lk.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    _json_arg(lk, JSON_LOOKUP)


def _history(hist: argparse.ArgumentParser) -> None:
    """``ppdp history``'s arguments."""
    from ppdp_desktop.cli.history import add_arguments

    add_arguments(hist)


#: each command's line in ``ppdp --help``, in its order
COMMAND_HELP = {
    "anonymize": "anonymize a data file and write a release folder (and a sealed key)",
    "demo": "run the main job on the embedded demo data (writes a release and its key)",
    "run": "run a project file saved by the window (data, roles, taxonomies, sensitivity, "
        "method and settings) headless, as the window's Run + Export would",
    "risk": "re-identification risk of a data file or a release: how many records are "
        "unique on their quasi-identifiers (ARX's prosecutor model)",
    "selftest": "run the demo job end to end in a temporary folder (load, plan, verify, apply, "
        "report, export, seal and open the key); exit 0 only if every step passed",
    "verify": "re-check a release's checksums and guarantee; exit 0 only if they hold",
    "signing-key": "make the custodian's signing key (Ed25519, sealed with a passphrase) and "
        "print its fingerprint; --show prints the fingerprint of an existing one",
    "estimate": "estimate original counts of a perturbed column",
    "compare": "compare methods at matched privacy on the count-query workload",
    "report": "write the utility and privacy report of a release against its original data",
    "lookup": "authorized reverse lookup with the sealed key",
    "history": "list the releases published on this computer (the release ledger), of every project or of one",
}
#: what adds each command's arguments (None: it takes none but the global ones)
_ARGUMENTS = {
    "anonymize": _anonymize,
    "demo": _demo,
    "run": _run,
    "risk": _risk,
    "selftest": None,
    "verify": _verify,
    "signing-key": _signing_key,
    "estimate": _estimate,
    "compare": _compare,
    "report": _report,
    "lookup": _lookup,
    "history": _history,
}
COMMAND_NAMES = tuple(COMMAND_HELP)


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``ppdp`` parser. ``commands``: give only these commands their arguments (the others are only named, with
    their help line): ``ppdp --help`` and one command then import none of what the others' options need (the
    method families above all). None: every command's, as tests and the docs build want."""
    parser = _Parser(prog="ppdp", description="PPDP Desktop: privacy-preserving publishing of patient tables.",
                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ppdp {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on unexpected errors")
    _global_args(parser, default=False)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_NAMES:
        command = sub.add_parser(name, help=COMMAND_HELP[name])
        add = _ARGUMENTS[name]
        if add is not None and (commands is None or name in commands):
            add(command)
        _global_args(command, default=argparse.SUPPRESS)
    return parser
