"""kcoll under mpi4py: Python programs get kcoll through LD_PRELOAD.

mpi4py calls the C MPI_* functions, so a preloaded libkcoll.so intercepts
them as it does for a C program. This program runs every collective
family mpi4py exposes, on numpy buffers (the upper-case methods, several
dtypes and sizes, MPI.IN_PLACE, non-blocking Ibcast and Iallreduce) and on
pickled Python objects (the lower-case methods), and checks

  - every result against the value computed here in Python from the
    ranks' inputs, independently of MPI, and
  - through kcoll_stats_get() of the preloaded library (this process's
    statistics), that kcoll ran each call: the statistics rows the call
    touches gain kcoll calls and no host MPI calls.

Run it under the launcher with the library preloaded and KCOLL_MIN_BYTES=0
(every size goes to kcoll, whatever the cost model would pick):

    mpirun -np 2 env LD_PRELOAD=build/openmpi/libkcoll.so KCOLL_MIN_BYTES=0 \
        python3 tests/python/test_mpi4py.py

It exits non-zero (MPI_Abort) at the first wrong result or host MPI call.
"""
import ctypes
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

# the reasons of the statistics' mpi:<reason> paths, to name one in a message
REASONS = ("disabled invalid_args intercomm one_rank below_min_bytes noncontig_datatype "
           "unsupported_op bad_algo multinode no_cma team_failed no_team").split()


def fail(msg):
    sys.stderr.write(f"test_mpi4py: rank {rank}: FAIL: {msg}\n")
    sys.stderr.flush()
    comm.Abort(1)


def find_kcoll():
    """kcoll_stats_get from the preloaded library (global symbol scope)."""
    try:
        fn = ctypes.CDLL(None).kcoll_stats_get
    except AttributeError:
        fail("kcoll is not loaded: run with LD_PRELOAD=<build>/libkcoll.so")
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                   ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64)]
    fn.restype = ctypes.c_int
    return fn


stats_get = find_kcoll()


def stat(row, path):
    calls, nbytes = ctypes.c_uint64(), ctypes.c_uint64()
    if stats_get(row.encode(), path.encode(), ctypes.byref(calls), ctypes.byref(nbytes)) != 0:
        fail(f"kcoll_stats_get knows no row {row} with path {path}")
    return calls.value


def host_reasons(row, before):
    """The mpi:<reason> paths of row that grew since the snapshot before."""
    return [r for r in REASONS if stat(row, "mpi:" + r) > before.get(r, 0)]


CALLS = {"checks": 0, "kcoll": 0}


def on_kcoll(rows, what, fn, exact=True):
    """Run fn() and check that each statistics row in rows gained kcoll
    calls (exactly one each if exact) and no host MPI call."""
    before = {row: (stat(row, "kcoll:*"), stat(row, "mpi:*"),
                    {r: stat(row, "mpi:" + r) for r in REASONS}) for row in rows}
    result = fn()
    for row in rows:
        k0, h0, m0 = before[row]
        gained = stat(row, "kcoll:*") - k0
        if stat(row, "mpi:*") != h0:
            fail(f"{what}: {row} went to the host MPI "
                 f"(mpi:{','.join(host_reasons(row, m0)) or '?'})")
        if gained < 1 or (exact and gained != 1):
            fail(f"{what}: {row} counted {gained} kcoll calls, expected "
                 f"{'1' if exact else 'at least 1'}")
        CALLS["kcoll"] += gained
    return result


def same(got, want, what):
    CALLS["checks"] += 1
    if isinstance(want, np.ndarray):
        if got.dtype != want.dtype or got.shape != want.shape:
            fail(f"{what}: got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
        if not np.array_equal(got, want):
            i = np.flatnonzero(got.reshape(-1) != want.reshape(-1))[0]
            fail(f"{what}: element {i} is {got.reshape(-1)[i]}, expected {want.reshape(-1)[i]}")
    elif got != want:
        fail(f"{what}: got {got!r}, expected {want!r}")


# --- inputs: each rank's block is a function of a seed; small integer
# values (also in the floating types), so sums over ranks are exact in
# every order and never overflow
DTYPES = [np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64, np.complex128]
REDUCE_DTYPES = [np.int32, np.int64, np.float32, np.float64, np.complex128]
SIZES = [1, 3, 1001, 65537, 262144]   # elements; the largest is 2 MiB of doubles


def block(seed, n, dtype):
    i = np.arange(n, dtype=np.int64)
    v = (i * 7 + seed * 13) % 19 - 9
    if np.issubdtype(dtype, np.unsignedinteger):
        v = v + 9
    if np.issubdtype(dtype, np.complexfloating):
        return (v + 1j * ((i + seed) % 5)).astype(dtype)
    return v.astype(dtype)


def summed(seeds, n, dtype):
    """The sum of the blocks of seeds, in dtype (numpy would widen integers)."""
    return np.stack([block(s, n, dtype) for s in seeds]).sum(axis=0).astype(dtype)


def name(dtype, n):
    return f"{np.dtype(dtype).name}[{n}]"


def test_bcast():
    for dtype in DTYPES:
        for n in SIZES:
            for root in sorted({0, size - 1}):
                buf = block(100 + root, n, dtype) if rank == root else np.zeros(n, dtype)
                on_kcoll(["MPI_Bcast"], f"Bcast {name(dtype, n)} root {root}",
                         lambda: comm.Bcast(buf, root=root))
                same(buf, block(100 + root, n, dtype), f"Bcast {name(dtype, n)} root {root}")


def test_rooted():
    for dtype in DTYPES:
        for n in SIZES:
            root = n % size
            what = f"{name(dtype, n)} root {root}"
            # Scatter: row j of the root's buffer goes to rank j
            send = np.stack([block(j, n, dtype) for j in range(size)]) if rank == root else None
            recv = np.zeros(n, dtype)
            on_kcoll(["MPI_Scatter"], "Scatter " + what, lambda: comm.Scatter(send, recv, root))
            same(recv, block(rank, n, dtype), "Scatter " + what)
            # Gather: rank j's block becomes row j at the root
            mine = block(50 + rank, n, dtype)
            recv = np.zeros((size, n), dtype) if rank == root else None
            on_kcoll(["MPI_Gather"], "Gather " + what, lambda: comm.Gather(mine, recv, root))
            if rank == root:
                same(recv, np.stack([block(50 + j, n, dtype) for j in range(size)]),
                     "Gather " + what)


def test_all():
    for dtype in DTYPES:
        for n in SIZES:
            what = name(dtype, n)
            mine = block(rank, n, dtype)
            recv = np.zeros((size, n), dtype)
            on_kcoll(["MPI_Allgather"], "Allgather " + what, lambda: comm.Allgather(mine, recv))
            same(recv, np.stack([block(j, n, dtype) for j in range(size)]), "Allgather " + what)
            # Alltoall: rank r's row j goes to rank j's row r
            send = np.stack([block(rank * size + j, n, dtype) for j in range(size)])
            recv = np.zeros((size, n), dtype)
            on_kcoll(["MPI_Alltoall"], "Alltoall " + what, lambda: comm.Alltoall(send, recv))
            same(recv, np.stack([block(j * size + rank, n, dtype) for j in range(size)]),
                 "Alltoall " + what)


def test_allreduce():
    for dtype in REDUCE_DTYPES:
        ops = [(MPI.SUM, "sum")]
        if not np.issubdtype(dtype, np.complexfloating):
            ops += [(MPI.MAX, "max"), (MPI.MIN, "min")]
        for n in SIZES:
            everyone = np.stack([block(r, n, dtype) for r in range(size)])
            for op, opname in ops:
                want = getattr(everyone, opname)(axis=0).astype(dtype)
                what = f"Allreduce {opname} {name(dtype, n)}"
                recv = np.zeros(n, dtype)
                mine = block(rank, n, dtype)
                on_kcoll(["MPI_Allreduce"], what, lambda: comm.Allreduce(mine, recv, op))
                same(recv, want, what)


def test_in_place():
    n, dtype = 65537, np.float64
    everyone = np.stack([block(r, n, dtype) for r in range(size)])
    buf = block(rank, n, dtype)
    on_kcoll(["MPI_Allreduce"], "Allreduce in place",
             lambda: comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM))
    same(buf, summed(range(size), n, dtype), "Allreduce in place")

    # Allgather: each rank's own row is already in place
    buf = np.zeros((size, n), dtype)
    buf[rank] = block(rank, n, dtype)
    on_kcoll(["MPI_Allgather"], "Allgather in place", lambda: comm.Allgather(MPI.IN_PLACE, buf))
    same(buf, everyone, "Allgather in place")

    # Alltoall: the buffer is both the rows sent and the rows received
    buf = np.stack([block(rank * size + j, n, dtype) for j in range(size)])
    on_kcoll(["MPI_Alltoall"], "Alltoall in place", lambda: comm.Alltoall(MPI.IN_PLACE, buf))
    same(buf, np.stack([block(j * size + rank, n, dtype) for j in range(size)]),
         "Alltoall in place")

    root = size - 1
    # Gather: the root's own row stays where it is
    if rank == root:
        buf = np.zeros((size, n), dtype)
        buf[root] = block(root, n, dtype)
        on_kcoll(["MPI_Gather"], "Gather in place", lambda: comm.Gather(MPI.IN_PLACE, buf, root))
        same(buf, everyone, "Gather in place")
    else:
        on_kcoll(["MPI_Gather"], "Gather in place",
                 lambda: comm.Gather(block(rank, n, dtype), None, root))
    # Scatter: the root keeps its own row and receives nothing
    if rank == root:
        buf = everyone.copy()
        on_kcoll(["MPI_Scatter"], "Scatter in place",
                 lambda: comm.Scatter(buf, MPI.IN_PLACE, root))
        same(buf, everyone, "Scatter in place (root's buffer unchanged)")
    else:
        recv = np.zeros(n, dtype)
        on_kcoll(["MPI_Scatter"], "Scatter in place", lambda: comm.Scatter(None, recv, root))
        same(recv, block(rank, n, dtype), "Scatter in place")


def test_nonblocking():
    for dtype in [np.int32, np.float64]:
        for n in [3, 65537, 262144]:
            what = name(dtype, n)
            buf = block(7, n, dtype) if rank == 0 else np.zeros(n, dtype)
            on_kcoll(["MPI_Ibcast"], "Ibcast " + what, lambda: comm.Ibcast(buf, root=0).Wait())
            same(buf, block(7, n, dtype), "Ibcast " + what)
            recv = np.zeros(n, dtype)
            mine = block(rank, n, dtype)
            on_kcoll(["MPI_Iallreduce"], "Iallreduce " + what,
                     lambda: comm.Iallreduce(mine, recv, MPI.SUM).Wait())
            same(recv, summed(range(size), n, dtype), "Iallreduce " + what)
    # several outstanding at once, completed together
    n, dtype = 65537, np.int64
    bufs = [block(20 + k, n, dtype) if rank == k % size else np.zeros(n, dtype) for k in range(3)]
    sums = [np.zeros(n, dtype) for _ in range(3)]
    mine = [block(rank + 30 * k, n, dtype) for k in range(3)]

    def start_all():
        reqs = [comm.Ibcast(bufs[k], root=k % size) for k in range(3)]
        reqs += [comm.Iallreduce(mine[k], sums[k], MPI.SUM) for k in range(3)]
        MPI.Request.Waitall(reqs)
    on_kcoll(["MPI_Ibcast", "MPI_Iallreduce"], "3 Ibcast + 3 Iallreduce outstanding", start_all,
             exact=False)
    for k in range(3):
        same(bufs[k], block(20 + k, n, dtype), f"outstanding Ibcast {k}")
        same(sums[k], summed([r + 30 * k for r in range(size)], n, dtype),
             f"outstanding Iallreduce {k}")


def obj(seed, n):
    """A Python object whose pickle is about 9 n bytes."""
    return {"seed": seed, "text": f"from {seed}" * 3, "ints": list(range(seed, seed + n)),
            "array": block(seed, n // 4 + 1, np.float64)}


def same_obj(got, want, what):
    if not isinstance(got, dict) or set(got) != set(want):
        fail(f"{what}: got {type(got).__name__} {sorted(got) if isinstance(got, dict) else ''}")
    same(got["array"], want["array"], what + " (array)")
    for k in ("seed", "text", "ints"):
        same(got[k], want[k], f"{what} ({k})")


def test_objects():
    # mpi4py pickles each object and moves the bytes with MPI collectives:
    # a size exchange, then the data (a v-variant where sizes differ)
    for n in [10, 100000]:
        root = size - 1
        what = f"objects of {n} ints"
        got = on_kcoll(["MPI_Bcast"], "bcast " + what,
                       lambda: comm.bcast(obj(root, n) if rank == root else None, root=root),
                       exact=False)
        same_obj(got, obj(root, n), "bcast " + what)
        got = on_kcoll(["MPI_Scatter", "MPI_Scatterv"], "scatter " + what,
                       lambda: comm.scatter([obj(j, n + j) for j in range(size)]
                                            if rank == root else None, root=root), exact=False)
        same_obj(got, obj(rank, n + rank), "scatter " + what)
        got = on_kcoll(["MPI_Gather", "MPI_Gatherv"], "gather " + what,
                       lambda: comm.gather(obj(rank, n + rank), root=root), exact=False)
        if rank == root:
            for j in range(size):
                same_obj(got[j], obj(j, n + j), f"gather {what} from {j}")
        else:
            same(got, None, "gather " + what + " at a non-root")
        got = on_kcoll(["MPI_Allgather", "MPI_Allgatherv"], "allgather " + what,
                       lambda: comm.allgather(obj(rank, n + rank)), exact=False)
        for j in range(size):
            same_obj(got[j], obj(j, n + j), f"allgather {what} from {j}")
        got = on_kcoll(["MPI_Alltoall", "MPI_Alltoallv"], "alltoall " + what,
                       lambda: comm.alltoall([obj(rank * size + j, n + j) for j in range(size)]),
                       exact=False)
        for j in range(size):
            same_obj(got[j], obj(j * size + rank, n + rank), f"alltoall {what} from {j}")
    # mpi4py reduces objects with point-to-point messages, then broadcasts
    # the result: the broadcast is kcoll's
    got = on_kcoll(["MPI_Bcast"], "allreduce of an int",
                   lambda: comm.allreduce(rank * 10 + 1, op=MPI.SUM), exact=False)
    same(got, sum(r * 10 + 1 for r in range(size)), "allreduce of an int")
    on_kcoll(["MPI_Barrier"], "barrier", comm.barrier)


if size < 2:
    fail("run with 2 or more processes (one process is the host MPI's)")
for test in [test_bcast, test_rooted, test_all, test_allreduce, test_in_place,
             test_nonblocking, test_objects]:
    test()
    comm.Barrier()
    if rank == 0:
        print(f"test_mpi4py: {test.__name__} passed")
total = comm.allreduce(CALLS["kcoll"])
checks = comm.allreduce(CALLS["checks"])
if rank == 0:
    print(f"test_mpi4py: {size} ranks, {checks} results checked, {total} kcoll calls, "
          f"none by the host MPI")
