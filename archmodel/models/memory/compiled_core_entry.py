"""The entry of the compiled DRAM core as :class:`~.compiled_core.CompiledCore` calls it: the
core's fixed-size int64 arrays packed in one array and its buffer's columns as the rows of
another, so a call passes five arrays instead of 38 (numba unboxes each argument on every
call, and a port-fed channel calls once per edge); :func:`run_packed` cuts the views and
calls :func:`~.compiled_core_kernel.run`. Where each part starts is in the config
(:mod:`.compiled_core_layout`'s ``P_*`` slots)."""

from archmodel.kernel.compiled import jit

from .compiled_core_kernel import run
from .compiled_core_layout import (C_BANKS, C_RANKS, C_RQ_CAP, C_WQ_CAP, P_CMD_LOG, P_E_ARR, P_E_BURST, P_E_COL,
                                   P_E_JOB, P_E_KIND, P_E_ROW, P_E_SEQ, P_E_SIZE, P_END, P_FAW, P_FREE, P_GBASE,
                                   P_HITS_RUN, P_JOB_LEFT, P_NEEDS, P_NXT, P_OPENED, P_RANK_OF, P_RBASE, P_ROWS,
                                   P_RQ_IDS, P_RQ_LEN, P_UPD_CYC, P_UPD_IDX, P_UPD_PTR, P_WQ_IDS, P_WQ_LEN)


@jit
def run_packed(st, cf, c, first, horizon, phase, ints, buffer, rsamples, wsamples, done_log):
    """:func:`~.compiled_core_kernel.run` on the arrays as :class:`~.compiled_core.CompiledCore`
    passes them: the fixed-size int64 arrays packed in ``ints`` (each from cf[P_x] to the next
    one's start, see :mod:`.compiled_core_layout`), the buffer's eight columns as the rows of
    ``buffer``. (The views are cut here, not in a helper: without numba's runtime a function
    cannot return one.)"""
    banks = cf[C_BANKS]
    return run(st, cf, c, first, horizon, phase, ints[cf[P_NXT]:cf[P_UPD_PTR]], ints[cf[P_UPD_PTR]:cf[P_UPD_IDX]],
               ints[cf[P_UPD_IDX]:cf[P_UPD_CYC]], ints[cf[P_UPD_CYC]:cf[P_GBASE]], ints[cf[P_GBASE]:cf[P_RBASE]],
               ints[cf[P_RBASE]:cf[P_RANK_OF]], ints[cf[P_RANK_OF]:cf[P_ROWS]], ints[cf[P_ROWS]:cf[P_HITS_RUN]],
               ints[cf[P_HITS_RUN]:cf[P_FAW]], ints[cf[P_FAW]:cf[P_NEEDS]].reshape((cf[C_RANKS], 4)),
               ints[cf[P_NEEDS]:cf[P_RQ_IDS]], ints[cf[P_RQ_IDS]:cf[P_RQ_LEN]].reshape((banks, cf[C_RQ_CAP])),
               ints[cf[P_RQ_LEN]:cf[P_WQ_IDS]], ints[cf[P_WQ_IDS]:cf[P_WQ_LEN]].reshape((banks, cf[C_WQ_CAP])),
               ints[cf[P_WQ_LEN]:cf[P_E_SEQ]], ints[cf[P_E_SEQ]:cf[P_E_ARR]], ints[cf[P_E_ARR]:cf[P_E_ROW]],
               ints[cf[P_E_ROW]:cf[P_E_COL]], ints[cf[P_E_COL]:cf[P_E_BURST]], ints[cf[P_E_BURST]:cf[P_E_KIND]],
               ints[cf[P_E_KIND]:cf[P_E_SIZE]], ints[cf[P_E_SIZE]:cf[P_E_JOB]], ints[cf[P_E_JOB]:cf[P_FREE]],
               ints[cf[P_FREE]:cf[P_CMD_LOG]], buffer[0], buffer[1], buffer[2], buffer[3], buffer[4], buffer[5],
               buffer[6], buffer[7], ints[cf[P_CMD_LOG]:cf[P_OPENED]].reshape((-1, 5)), rsamples, wsamples,
               ints[cf[P_OPENED]:cf[P_JOB_LEFT]].reshape((banks, 2)), ints[cf[P_JOB_LEFT]:cf[P_END]].reshape((-1, 2)),
               done_log)
