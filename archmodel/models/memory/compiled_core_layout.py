"""The layout of the compiled DRAM scheduling core's arrays: the indices of its scalar state
and configuration in their int64 arrays, and what one call of the core ended with. Both the
driver (:mod:`.compiled_core`) and the numba functions (:mod:`.compiled_core_kernel`) read it,
so neither imports the other for it."""

_NEVER = 1 << 62

# Scalar state, at these indices of one int64 array. What a call fed through the ports leaves
# for its caller comes first, so that the caller reads it as one slice (CALL_OUTPUTS).
(OUT_WAKE, OUT_C, RQC, WQC, BUF_LEN, POS, N_DONE, N_CMD, N_RSAMPLE, N_WSAMPLE,
 SEQ, WMODE, DIRTY, HAS_BEST, BEST_T, BEST_SEQ, BEST_B, BEST_K, BEST_E, REF_DUE, REF_PENDING,
 OPEN_BANKS, ACTIVE_SINCE, EXHAUSTED, FREE_TOP,
 RL_VALUE, RL_MAX, RL_AREA, RL_SINCE, WL_VALUE, WL_MAX, WL_AREA, WL_SINCE, OUT_PHASE,
 ACTS, PRES, PREAS, RDS, WRS, REFS, READS, WRITES, BYTES_READ, BYTES_WRITTEN, FORWARDED,
 HITS, MISSES, CONFLICTS, ACTIVE_CYCLES, REFPBS, JOB_DONE, HEAD,
 FEED_N, FEED_OFFSET, FEED_SIZE, FEED_CYCLE, FEED_SLOT, FEED_WRITE, REFPB_SET, REFPB_NEXT,
 REFPB_RANKS, REFPB_DONE, STATE_SIZE) = range(63)
CALL_OUTPUTS = N_WSAMPLE + 1
COUNTER_SLOTS = {"acts": ACTS, "pres": PRES, "preas": PREAS, "rds": RDS, "wrs": WRS, "refs": REFS, "refpbs": REFPBS,
                 "reads": READS, "writes": WRITES, "bytes_read": BYTES_READ, "bytes_written": BYTES_WRITTEN,
                 "forwarded_reads": FORWARDED, "row_hits": HITS, "row_misses": MISSES,
                 "row_conflicts": CONFLICTS, "active_cycles": ACTIVE_CYCLES}
COUNTER_FIRST, COUNTER_END = ACTS, REFPBS + 1
"""The counters, from COUNTER_FIRST up to COUNTER_END: the calls add to them, and the driver
hands them to the controller's statistics and sets them to zero (:meth:`~.compiled_core.CompiledCore.hand_over`)."""

# Configuration, at these indices of one int64 array.
(C_BANKS, C_BANKS_PER_RANK, C_RANKS, C_CL, C_CWL, C_TBL, C_TREFI, C_FAW, C_HIGH, C_LOW, C_RQ_CAP, C_WQ_CAP,
 C_FCFS, C_CAP, C_BURST, C_FORWARD, C_PHASE, C_PERIOD, C_WATCH_DONE, C_PORTS,
 C_RA, C_RA_MASK, C_BG, C_BG_MASK, C_BA, C_BA_MASK, C_RO, C_RO_MASK, C_CO, C_CO_MASK, C_GROUPS, C_PER_GROUP,
 C_REFPB, C_REFPB_SETS, C_TREFIPB, C_REFPB_IDLE_FIRST, C_PACK) = range(37)
# (C_RA .. C_PER_GROUP: how an offset in the store decodes, as DramController._local_decode)

# The core's int64 arrays of fixed size, one after the other in one array (``ints``), in this
# order: the configuration holds where each starts (at its P_ index) and, at P_END, where the
# last ends. A call passes them as one array, which numba converts from Python once, not 27
# times (a call of a channel fed through its ports is one DRAM edge).
(P_NXT, P_UPD_PTR, P_UPD_IDX, P_UPD_CYC, P_GBASE, P_RBASE, P_RANK_OF, P_ROWS, P_HITS_RUN, P_FAW, P_NEEDS,
 P_RQ_IDS, P_RQ_LEN, P_WQ_IDS, P_WQ_LEN, P_E_SEQ, P_E_ARR, P_E_ROW, P_E_COL, P_E_BURST, P_E_KIND, P_E_SIZE,
 P_E_JOB, P_FREE, P_CMD_LOG, P_OPENED, P_JOB_LEFT, P_END) = range(C_PACK, C_PACK + 28)
CONFIG_SIZE = P_END + 1

# Per-bank refresh (C_REFPB): every tREFIpb (C_TREFIPB) the bank set REFPB_NEXT becomes due
# (REFPB_SET; -1 while none is): the banks b with b % C_REFPB_SETS equal to it, across the
# channel, as CommandScheduler._start_refresh names them; REFPB_RANKS has bit r set while
# rank r's banks of the set wait for their REFpb. REFPBS counts the REFpb commands. With
# C_REFPB_IDLE_FIRST the set taken is the least targeted of those not yet refreshed in the
# round (bit s of REFPB_DONE set once set s was), CommandScheduler._next_refresh_set.

# Fed through the controller's ports, each burst names its client request by a job slot
# (-1: none, a stream's or a posted write's once queued); per slot the core keeps the bursts
# still to finish and the cycle the last finished one did (P_JOB_LEFT, two columns); N_DONE
# counts the requests whose last burst completed in this call, recorded as (slot, that
# cycle), and JOB_DONE is set once one did. HEAD is the kind of the request waiting on req
# that cannot enter yet (0 read, 1 write; -1 none; CATCHING_UP: none, and the call goes on
# past a request's completion, up to its horizon; ENTERING: none, and the call goes on past a
# completion until the last burst of the request being fed has entered).
# FEED_* is a request taken from req that the next call cuts into bursts first (FEED_N of
# them, from FEED_OFFSET in the store; 0: none).
CATCHING_UP = -2
ENTERING = -3

# What one call of the core ended with.
DONE, STOP_NOW, HELD_STOP, HELD_GO, UNDERRUN = range(5)
_MISS_KIND, _HIT_KIND, _CONFLICT_KIND = 2, 1, 3
