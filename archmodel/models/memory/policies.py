"""The closed vocabularies of the DRAM controllers' policy parameters, each a registry whose
names the parameter's check, the did-you-mean hint and ``archmodel list`` take: the
command scheduler, the page policy, refresh and its order, the queue organisation (DramController), and
the in-DRAM cache controller's scheduler. The behaviour each name stands for is the
controller's own (:mod:`.controller`, :mod:`.command_scheduler`, :mod:`.bank_queues`,
:mod:`.command_choice`); an entry says in one line what it does."""

from __future__ import annotations

from archmodel.kernel import Registry

SCHEDULERS: Registry[str] = Registry("scheduler", {
    "frfcfs": "FR-FCFS: the oldest request whose next command can issue; a bank with pending hits to its open row "
              "is not precharged",
    "fcfs": "first come, first served: the oldest request, whatever its row",
    "frfcfs_cap": "FR-FCFS with a cap: a bank serves at most row_hit_cap hits in a row while an older request to "
                  "another row waits",
})
"""DramController's ``scheduler``."""

PAGE_POLICIES: Registry[str] = Registry("page policy", {
    "open": "a row stays open until a request to another row or a refresh needs the bank",
    "closed": "precharge once no queued request hits the open row",
    "adaptive": "precharge after adaptive_idle_cycles without a hit to the open row",
})
"""DramController's ``page_policy``."""

REFRESH_MODES: Registry[str] = Registry("refresh mode", {
    "all_bank": "REFab to every bank of a rank every tREFI",
    "per_bank": "REFpb to one bank set every tREFIpb; the other banks keep working",
    "none": "no refresh (for studies that leave it out)",
})
"""DramController's ``refresh``."""

REFRESH_ORDERS: Registry[str] = Registry("refresh order", {
    "round_robin": "per-bank refresh takes the bank sets in a fixed cycle, 0, 1, 2, ...",
    "idle_first": "per-bank refresh takes, among the sets not yet refreshed in this tREFI round, the one the "
                  "fewest queued bursts target (DARP, Chang et al., HPCA 2014; JEDEC lets REFpb/REFSB take the "
                  "banks in any order as long as each is refreshed once per round)",
})
"""DramController's ``refresh_order``."""

QUEUE_ORGANISATIONS: Registry[str] = Registry("queue organisation", {
    "shared": "the scheduler chooses among the read or the write queue, whichever is being served",
    "per_bank": "DRAMSim3's: a command queue per bank of command_queue entries, round robin over banks",
})
"""DramController's ``queue``."""

INDRAM_SCHEDULERS: Registry[str] = Registry("scheduler", {
    "frfcfs_column_first": "the oldest request whose column command can issue now, else the oldest whose ACT or "
                           "PRE can",
    "frfcfs": "DramController's: the oldest request whose next command can issue",
})
"""InDramCacheController's ``scheduler``."""
