"""The Dask side of the Dask engine: the client (a LocalCluster of worker processes, or a running scheduler) and
tasks run with a bounded number in flight, their results taken as they finish, errors and cancels at once.

Dask is imported here only, when the engine runs: the window and the rest of the core never import it.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.errors import ParameterError, ReleaseError, setting_ref
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.streaming.dask_quiet import as_app_error, quiet_loggers, workers_speak_nowhere

if TYPE_CHECKING:
    from distributed import Client

#: seconds between two looks at the cancel flag while waiting for tasks
POLL = 0.2
#: seconds to wait for a scheduler, and for its first worker
CONNECT_TIMEOUT = 60
#: seconds to wait, after a cancel or an error, for the job's tasks still running on the workers to end
STOP_TIMEOUT = 600
MISSING = f"{setting_ref('engine', 'dask')} needs Dask: pip install ppdp-desktop[cluster]"
#: worker processes a LocalCluster may have per core: more only share the cores, and each costs memory and files
WORKERS_PER_CORE = 4
#: open files a worker process costs its parent (pipes, sockets), with room for the job's own
_FILES_PER_WORKER, _FILES_KEPT = 32, 256


def max_workers() -> tuple[int, str]:
    """The most worker processes a LocalCluster may start here, and why (cores, or the open-file limit)."""
    cores = os.cpu_count() or 1
    limit, why = WORKERS_PER_CORE * cores, f"{WORKERS_PER_CORE} per core, {cores} core{'s' * (cores != 1)} here"
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        soft = -1
    if soft > 0:
        files = max(1, (soft - _FILES_KEPT) // _FILES_PER_WORKER)
        if files < limit:
            limit, why = files, f"this process may open {soft:,} files, about {_FILES_PER_WORKER} a worker"
    return limit, why


def check_worker_count(workers: int | None) -> None:
    """Refuse, before any work, a LocalCluster of more workers than :func:`max_workers` (``--workers 10000`` made
    the cluster spin on "Too many open files")."""
    if workers is None:
        return
    limit, why = max_workers()
    if workers > limit:
        raise ParameterError(f"{setting_ref('workers')} {workers:,} is more worker processes than this computer can "
                             f"run: at most {limit:,} ({why}). Give a smaller number, or leave it out (one a core).",
                             setting="workers", value=workers, allowed=f"1 to {limit}")


def distributed_module():
    """``dask.distributed``, or a :class:`ParameterError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ParameterError(MISSING) from None
    return distributed


@contextmanager
def open_client(scheduler: str | None, workers: int | None) -> Iterator[Client]:
    """A client of the scheduler at ``scheduler``, or of a LocalCluster of ``workers`` single-threaded worker
    processes on this machine (one a core by default); what is opened here is closed on leaving, also on error."""
    if scheduler and workers:
        raise ParameterError(f"{setting_ref('workers')} sets the size of the LocalCluster started on this machine; "
                             f"a cluster given with {setting_ref('scheduler')} runs on its own workers. Give one of "
                             "the two.", setting="workers", value=workers)
    check_worker_count(workers)
    distributed = distributed_module()
    cluster = None
    with quiet_loggers():  # Dask prints nothing of its own: a failure is one line, as elsewhere (.dask_quiet)
        try:
            if scheduler:
                try:
                    client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
                except OSError as exc:
                    raise ReleaseError(f"Cannot reach the Dask scheduler at {scheduler} ({exc}).") from None
            else:
                cluster = _local_cluster(distributed, workers or os.cpu_count() or 1)
                client = distributed.Client(cluster, set_as_default=False)
            try:
                try:
                    client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
                except TimeoutError:
                    raise ReleaseError(f"The Dask scheduler at {scheduler} has no workers (none joined within "
                                       f"{CONNECT_TIMEOUT} s).") from None
                yield client
            finally:
                client.close()
        finally:
            if cluster is not None:
                cluster.close()


def _local_cluster(distributed: Any, workers: int) -> Any:
    """A LocalCluster of ``workers`` single-threaded processes, started quietly (:mod:`.dask_quiet`). Interrupted
    while it starts (Ctrl+C), the half-started cluster is closed here, so that Dask's own exit handler does not
    print a traceback trying again."""
    import dask
    from distributed.deploy.spec import SpecCluster

    before = set(SpecCluster._instances)
    try:
        # the workers never spill task data to their scratch folder on disk (pass 1 brings the plan's columns,
        # identifiers included, in clear): what they spill is the job's own, sealed (.sealed_spill)
        with workers_speak_nowhere(), dask.config.set({"distributed.worker.memory.target": False,
                                                       "distributed.worker.memory.spill": False}):
            return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=logging.CRITICAL,
                                            scheduler_kwargs={"dashboard_address": ":0"})  # no fixed port
    except BaseException:
        for half in set(SpecCluster._instances) - before:
            with suppress(Exception):
                half.close(timeout=10)
            half.shutdown_on_close = False  # closed (or as closed as it gets): not again at exit
        raise


def n_workers(client: Client) -> int:
    return max(1, len(client.nthreads()))


def check_workers(client: Client, readable: Iterable[str] = (), writable: Iterable[str] = ()) -> None:
    """Every worker imports ``ppdp_desktop`` and sees the files at the client's paths (a shared file system)."""
    readable, writable = list(readable), list(writable)
    try:
        seen = client.run(_sees, readable, writable)
    except (ImportError, AttributeError) as exc:
        raise ReleaseError(f"A Dask worker cannot run PPDP Desktop ({exc}); install the same ppdp-desktop on every "
                           "worker.") from None
    for worker, missing in sorted(seen.items()):
        if missing:
            raise ReleaseError(f"The Dask worker {worker} cannot reach {missing[0]}: the workers must see the data file "
                               "and the output's folder at the same paths as this computer (a shared file system).")


def _sees(readable: list[str], writable: list[str]) -> list[str]:
    return ([p for p in readable if not os.access(p, os.R_OK)]
            + [p for p in writable if not os.access(p, os.W_OK | os.X_OK)])


Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def run_tasks(client: Client, calls: Iterable[Call], *, window: int, cancel: CancelToken,
              ordered: bool) -> Iterator[tuple[int, Any]]:
    """Run ``calls`` (``(function, args, kwargs)``) on the cluster, at most ``window`` at a time, and yield
    ``(number, result)``: in the calls' order (``ordered``; a call waits for the ones before it to be taken),
    else as they finish. A task's error is raised here as soon as it happens; on a cancel, an error or when the
    caller stops early, the tasks still running are cancelled."""
    distributed = distributed_module()
    pending = iter(enumerate(calls))
    running: dict[int, Any] = {}
    done: dict[int, Any] = {}
    following = 0

    def submit() -> bool:
        try:
            number, (function, args, kwargs) = next(pending)
        except StopIteration:
            return False
        running[number] = client.submit(partial(function, **kwargs), *args, pure=False)
        return True

    try:
        exhausted = False
        while True:
            while not exhausted and len(running) + len(done) < window:
                exhausted = not submit()
            if not running and not done:
                return
            cancel.check()
            if running:
                try:
                    with client.as_current():  # wait() asks for the current client
                        distributed.wait(list(running.values()), timeout=POLL, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    pass
            for number, future in list(running.items()):
                if future.status == "error":
                    try:
                        future.result()  # raises the task's error (its own type and message)
                    except Exception as exc:  # noqa: BLE001 - Dask's own errors become the app's (.dask_quiet)
                        mapped = as_app_error(exc)
                        if mapped is exc:
                            raise
                        raise mapped from None
                if future.status == "cancelled":
                    raise ReleaseError("The Dask cluster dropped a task of the job (was it shut down?); nothing was "
                                       "published.")
                if future.status == "finished":
                    done[number] = future.result()
                    del running[number]
                    future.release()
            while done:
                number = following if ordered else next(iter(done))
                if number not in done:
                    break
                result = done.pop(number)
                following += 1
                yield number, result
    finally:
        if running:
            client.cancel(list(running.values()))
            _wait_stopped(client, [future.key for future in running.values()])


def _wait_stopped(client: Client, keys: list) -> None:
    """Wait until no worker still runs the tasks of ``keys`` (a cancelled task runs to its end on its worker, and
    may be writing in the folder the caller is about to remove); give up after :data:`STOP_TIMEOUT` seconds."""
    waited, deadline, quiet = set(keys), time.monotonic() + STOP_TIMEOUT, 0
    while time.monotonic() < deadline:
        try:  # every worker's running tasks (the scheduler forgets a cancelled task at once: ask the workers)
            running = {key for stacks in client.call_stack().values() for key in stacks}
        except Exception:  # noqa: BLE001 - a cluster that cannot answer runs nothing more for us
            return
        # twice in a row: a task handed to a worker just before the cancel may not be on its call stack yet
        quiet = 0 if running & waited else quiet + 1
        if quiet >= 2:
            return
        time.sleep(POLL)
