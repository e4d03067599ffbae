"""The Snitch core's generated fast paths: Python source written per instruction and
compiled once, for an FP instruction's issue (:func:`compile_issue`) and for one step of an
FREP replay (:func:`compile_replay_step`), with the ISA table's semantics inlined and the
stream-operand reads, stalls and stores written by one generator (:func:`operand_source`),
so they are straight-line copies of :class:`~.core.SnitchCore`'s general path."""

from __future__ import annotations

from .program import Instruction
from .isa import FP_OPS

def _inline(ins: Instruction) -> str | None:
    """The expression a compiled replay function writes in place of calling ``ins.fn``:
    the ISA table's semantics itself where it is plain arithmetic (see ``isa.Op.inline``),
    so the result is bit for bit the function's."""
    return FP_OPS[ins.op].inline


_FACTORIES: dict = {}
_SEQ_ADVANCE = """\
        if core.seq_inner:
            it = core.seq_it + 1
            if it == core.seq_reps:
                core.seq_it = 0
                core.seq_pos += 1
                if core.seq_pos == core.seq_n:
                    core.seq_on = False
            else:
                core.seq_it = it
        else:
            pos = core.seq_pos + 1
            if pos == core.seq_n:
                core.seq_pos = 0
                core.seq_it += 1
                if core.seq_it == core.seq_reps:
                    core.seq_on = False
            else:
                core.seq_pos = pos
"""


def sequencer_step():
    """``SnitchCore._seq_advance``, compiled from ``_SEQ_ADVANCE``."""
    namespace: dict = {}
    exec("def _seq_advance(core):\n" + _SEQ_ADVANCE, namespace)  # noqa: S102 (our own source)
    return namespace["_seq_advance"]


def _indent(lines: list, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in lines)


def operand_source(sources: tuple, target: int, ins, faults: bool) -> tuple:
    """The parts of generated code that read an F_COMP instruction's operands and place its
    result, as ``SnitchCore._stream_operands`` does for one that reads each stream at most
    once: (setup lines run when the function is made, waits, gather lines, store lines,
    the operand names). ``sources``: per source, its stream number or -1 for a register;
    ``target``: the result's stream or -1. A wait is (lines before it, the condition that
    stalls, the lines counting the stall), in _stream_operands' order, so a stall counts
    the same reason. ``ins`` given: register numbers are written in (else read from the
    ``ins`` the function is made with); ``faults``: check the streams' directions (the
    fused steps are only made where they are right)."""
    setup, waits, gather, names = [], [], [], []
    for j, r in enumerate(sources):
        value = f"v{j}"
        names.append(value)
        if r >= 0:
            setup += [f"s{r} = core.ssrs[{r}]", f"q{r} = s{r}.fifo"]
            pre = [f"if s{r}.writes:", f"    core.fault(ins, 'reads ft{r} but SSR {r} is configured for writing')"]
            waits.append((pre if faults else [], f"not q{r} or q{r}[0][0] > cycle",
                          [f"if not q{r} and not s{r}.active and core.halted:", f"    core.stream_exhausted(ins, {r})",
                           "core.s_stream += 1"]))
            gather += [f"entry = q{r}[0]", f"{value} = entry[1]", "if entry[2] == 1:", f"    q{r}.popleft()",
                       "else:", "    entry[2] -= 1"]
        else:
            register = str(ins.fsrc[j]) if ins is not None else f"x{j}"
            if ins is None:
                setup.append(f"x{j} = ins.fsrc[{j}]")
            waits.append(([], f"f_ready[{register}] > cycle", ["core.s_fdep += 1"]))
            gather.append(f"{value} = f[{register}]")
    rd = target
    if rd >= 0:
        setup += [f"s{rd} = core.ssrs[{rd}]", f"q{rd} = s{rd}.fifo", f"wdepth{rd} = s{rd}.depth"]
        pre = [f"if not s{rd}.writes:", f"    core.not_a_write_stream(ins, {rd})"]
        waits.append((pre if faults else [], f"len(q{rd}) >= wdepth{rd}", ["core.s_stream += 1"]))
        store = [f"q{rd}.append([done, result])"]
    else:
        register = str(ins.rd) if ins is not None else "xd"
        if ins is None:
            setup.append("xd = ins.rd")
        waits.append(([], f"f_ready[{register}] > cycle", ["core.s_fdep += 1"]))
        store = [f"f[{register}] = result", f"f_ready[{register}] = done"]
    return setup, waits, gather, store, names


def compile_issue(ins: Instruction, streams: bool):
    """A factory ``make(core, ins, fn)`` of the function that replays FREP body instruction
    ``ins`` at a cycle: it issues and moves the sequencer on (True) or counts why it stalls
    (False), exactly as ``SnitchCore._issue`` and ``_seq_advance`` do for an F_COMP
    instruction that reads each stream at most once. ``streams``: SSRs are on
    and registers ft0..ft2 are streams. The source is generated once per instruction shape
    (registers, latency, flops, expression) and shared by every core: an FREP replays
    the same few instructions thousands of times, and straight-line code with the register
    numbers written in costs half the general path."""
    expression = _inline(ins)
    shape = (tuple(ins.fsrc), ins.rd, streams, ins.latency, ins.flops, expression)
    factory = _FACTORIES.get(shape)
    if factory is not None:
        return factory
    streamed = tuple(r if streams and r < 3 else -1 for r in ins.fsrc)
    setup, waits, gather, store, names = operand_source(streamed, ins.rd if streams and ins.rd < 3 else -1,
                                                         ins, faults=True)
    checks = "".join(_indent(pre, 8) + f"        if {condition}:\n" + _indent(action, 12) + "            return False\n"
                     for pre, condition, action in waits)
    compute = expression.format(*names) if expression else f"fn({', '.join(names)})"
    source = ("def make(core, ins, fn):\n    f = core.f\n    f_ready = core.f_ready\n" + _indent(setup, 4)
              + "    def issue(cycle):\n" + checks + _indent(gather, 8)
              + f"        result = {compute}\n        done = cycle + {ins.latency}\n" + _indent(store, 8)
              + "        if done > core.fp_pending_until:\n            core.fp_pending_until = done\n"
              + f"        core.n_fpu += 1\n        core.n_flops += {ins.flops}\n" + _SEQ_ADVANCE
              + "        return True\n    return issue\n")
    namespace: dict = {}
    exec(compile(source, f"<replay {ins.op}>", "exec"), namespace)
    factory = _FACTORIES[shape] = namespace["make"]
    return factory


_STEP_FACTORIES: dict = {}


def compile_replay_step(ins: Instruction, streams: bool, requesters: tuple, last: bool):
    """A factory ``make(core, ins, fn, successors)`` of a whole-cycle step for a core whose
    integer core is parked on a full offload queue while its FREP sequencer replays: the
    cycle ``SnitchCore.step`` would run (replay ``ins`` as its compiled replay function
    does, count the offload stall, present the streamers' requests), as straight-line code
    with the next body position's step installed on success. ``requesters``: (index,
    writes) of the core's running streamers, in order; ``last``: ``ins`` ends the body, so
    the step counts an iteration and leaves the fused steps when the FREP is done.
    The core installs these steps only while nothing but the replay can change (see
    ``SnitchCore._install_replay_step``) and leaves them when a stream job ends."""
    expression = _inline(ins)
    # Register numbers, latency and flops are read from ``ins`` when the step is made, so
    # one source serves every instruction with the same streams and operation.
    sources = tuple(r if streams and r < 3 else -1 for r in ins.fsrc)
    target = ins.rd if streams and ins.rd < 3 else -1
    shape = (sources, target, expression, requesters, last)
    factory = _STEP_FACTORIES.get(shape)
    if factory is not None:
        return factory
    setup, waits, gather, store, names = operand_source(sources, target, None, faults=False)
    setup = _indent(setup, 4)
    checks = [f"if {condition}:\n" + _indent(action, 12) for _, condition, action in waits]
    compute = expression.format(*names) if expression else f"fn({', '.join(names)})"
    if last:
        advance = ("            it = core.seq_it + 1\n            core.seq_pos = 0\n            core.seq_it = it\n"
                   "            if it == core.seq_reps:\n                core.seq_on = False\n"
                   "                core.leave_replay_step()\n"
                   "            else:\n                core.step = successors[it % len(successors)]\n")
    else:
        advance = "            core.seq_pos += 1\n            core.step = successors[0]\n"
    requests = []
    for index, writes in requesters:
        setup += (f"    r{index} = core.ssrs[{index}]\n    rq{index} = r{index}.fifo\n"
                  f"    rdepth{index} = r{index}.depth\n")
        if writes:
            requests.append(f"    if rq{index} and rq{index}[0][0] <= cycle:\n        requests.append(r{index})\n")
        else:
            requests.append(f"    if len(rq{index}) < rdepth{index}:\n        requests.append(r{index})\n")
    chain = "    " + "    el".join(checks)
    source = ("def make(core, ins, fn, successors):\n    f = core.f\n    f_ready = core.f_ready\n"
              "    latency = ins.latency\n    flops = ins.flops\n" + setup
              + "    def step(cycle, requests):\n"
              + "\n".join("    " + line for line in chain.splitlines()) + "\n"
              + "        else:\n" + _indent(gather, 12)
              + f"            result = {compute}\n            done = cycle + latency\n" + _indent(store, 12)
              + "            if done > core.fp_pending_until:\n                core.fp_pending_until = done\n"
              + "            core.n_fpu += 1\n            core.n_flops += flops\n" + advance
              + "        core.s_offload += 1\n"
              + "".join("    " + line + "\n" for line in "".join(requests).splitlines())
              + "    return step\n")
    namespace: dict = {}
    exec(compile(source, "<replay step>", "exec"), namespace)  # noqa: S102 (our own source)
    factory = _STEP_FACTORIES[shape] = namespace["make"]
    return factory
