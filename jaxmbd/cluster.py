"""A study's cells as tasks on a Dask cluster (``--dask SCHEDULER_ADDRESS``, or a ``distributed.Client``).

A sweep's cells (Hs x Tp) and an operability study's cells (heading x period) are independent: each is a
task that takes the loaded system, the start and the settings and returns the cell's data.  The client
(the process that runs ``jaxmbd sweep`` or ``jaxmbd operability``) sends those once to every worker,
submits one task per cell still to compute, and writes each cell's file itself as its task ends, exactly as
a local run writes it: no disk shared with the workers and no coordinator of jaxmbd's.  A worker lost
mid-cell is Dask's to reschedule (a task is a pure function of its inputs); a client stopped mid-study
resumes from the cells on its disk.  On workers of the same kind of processor as the client's, the cells
are bitwise those of a local run (the same programs on the same inputs).

The system travels as pickled bytes, unpickled in the task after jaxmbd is imported there, so that its
float64 arrays arrive as float64 (JAX's default of float32 would otherwise apply while they are read).
:mod:`jax.distributed` remains the way to run one program over several GPUs.
"""

from __future__ import annotations

import hashlib
import pickle
import uuid

from .errors import InputError

_SHARED: dict = {}  # on a worker: digest -> the unpickled (system, start, settings), kept between its tasks


def connect(address: str):
    """A ``distributed.Client`` of the scheduler at ``address`` (``tcp://host:8786``); a one-line error
    where Dask is not installed or the scheduler does not answer."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--dask needs Dask's distributed scheduler: pip install 'jaxmbd[dask]'") from None
    try:
        return Client(address, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise InputError(f"--dask {address}: no Dask scheduler answered there ({exc})") from None


def dask_client(address: str | None, process_count: int = 1):
    """The command line's ``--dask``: None without it; refused beside several processes of jaxmbd's own."""
    if address is None:
        return None
    if process_count > 1:
        raise InputError("--dask runs every cell from one client: drop --num-processes (the cluster shares the cells)")
    return connect(address)


def as_tasks(client, fn, shared: tuple, cells: list):
    """Yield ``(cell, fn(*shared, *cell))`` for every cell (a tuple of indices), as each task ends on the
    cluster of ``client``; ``fn`` a module-level function of jaxmbd.  An error in a task is raised here
    with the cell named."""
    from distributed import as_completed

    if not cells:
        return
    payload = pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(payload).hexdigest()[:16]
    [data] = client.scatter([payload], broadcast=True, hash=False)
    run = uuid.uuid4().hex[:8]  # this call's tasks: a cell is computed again, never taken from an earlier call
    futures = {client.submit(_task, fn, digest, data, cell, pure=False, key=f"jaxmbd-{fn.__name__}-{run}-{cell}"): cell
               for cell in cells}
    try:
        for future in as_completed(futures):
            cell = futures[future]
            try:
                data = future.result()
            except Exception as exc:  # the task's own error, raised here with its cell
                if hasattr(exc, "add_note"):  # Python >= 3.11
                    exc.add_note(f"(cell {cell}, computed on the Dask cluster)")
                raise
            yield cell, data
    finally:
        client.cancel(list(futures))


def _task(fn, digest: str, payload: bytes, cell: tuple):
    import jaxmbd  # noqa: F401  (float64 on before the system's arrays are read)

    shared = _SHARED.get(digest)
    if shared is None:
        _SHARED.clear()
        shared = _SHARED[digest] = pickle.loads(payload)
    return fn(*shared, *cell)
