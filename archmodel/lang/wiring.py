"""Topologies, connections, exposed ports, run statements and the paths they name.

A mixin of the elaborator, which holds the state (the scope, the limits, the diagnostics)."""

from __future__ import annotations

import inspect
from math import floor

from ..kernel import ArchError, Component, Span, connect
from . import ast, units
from .scope import POISON, Cascade, InstanceBinding, Scope, describe, did_you_mean, format_value
from .structure import DEFAULT_CLOCK_PS, TOPOLOGY_MODULE, Abort, ElaboratorParts, ModuleComponent, module_class, plain_value
from .topology import topology_generators
from .units import Quantity
from .workloads import WORKLOADS

class Wiring(ElaboratorParts):
    """A part of :class:`~.elaborate.Elaborator`: its topologies, connections and paths (see the
    module docstring)."""

    # -- topologies ------------------------------------------------------------------------------
    def _topology(self, stmt: ast.TopologyDef, scope: Scope, comp: Component, clock, deferred: list):
        module_scope = scope.module
        if stmt.name in module_scope.names:
            self.fail(f"'{stmt.name}' is already defined in this module", stmt.name_span)
        module_scope.names[stmt.name] = POISON
        if stmt.count is not None:
            self.fail("a topology is not an array; put it in a module and make an array of that", stmt.count.span)
        generators = topology_generators()
        generator = generators.get(stmt.generator)
        if generator is None:
            self.fail(f"unknown topology '{stmt.generator}'", stmt.generator_span,
                      hint=did_you_mean(stmt.generator, generators) or "topologies: " + ", ".join(generators))
        args = [plain_value(units.normalise(self.evaluate(a, scope))) for a in stmt.gen_args]
        kwargs = {k.name: plain_value(units.normalise(self.evaluate(k.value, scope))) for k in stmt.gen_kwargs}
        local = kwargs.pop("local_ports", 0)
        if not isinstance(local, int) or isinstance(local, bool) or local < 0:
            self.fail(f"local_ports must be a non-negative integer, got {local!r}", stmt.generator_span)

        try:
            inspect.signature(generator).bind(*args, **kwargs)
        except TypeError as err:
            self.fail(f"topology '{stmt.generator}': {err}", stmt.generator_span,
                      hint=f"{stmt.generator}{inspect.signature(generator)}")
        size = getattr(generator, "node_count", None)
        try:
            estimate = size(*args, **kwargs) if size is not None else 0
        except TypeError:
            estimate = 0
        if isinstance(estimate, int) and self.instances + estimate > self.limits.max_instances:
            self.error(ArchError(f"topology '{stmt.name}' of {estimate} nodes (or links) would exceed the limit of "
                                 f"{self.limits.max_instances} instances",
                                 hint="raise the limit with --max-instances if this is intended",
                                 span=stmt.generator_span))
            raise Abort()
        try:
            graph = generator(*args, **kwargs)
        except ArchError as err:
            raise ArchError(f"topology '{stmt.generator}': {err.message}", hint=err.hint,
                            span=stmt.generator_span) from None
        except Exception as exc:  # a generator handed arguments it cannot use
            raise ArchError(f"topology '{stmt.generator}' failed: {type(exc).__name__}: {exc}",
                            span=stmt.generator_span) from None
        nodes = sorted(graph.nodes)
        if self.instances + len(nodes) > self.limits.max_instances:
            self.error(ArchError(f"topology '{stmt.name}' of {len(nodes)} nodes would exceed the limit of "
                                 f"{self.limits.max_instances} instances", span=stmt.generator_span))
            raise Abort()
        target = self._resolve_model(stmt.node_model, scope)
        placed = self._lookup_clock(stmt.clock, scope, stmt.clock_span or stmt.span) if stmt.clock else clock
        directed = graph.is_directed()
        succ = {n: sorted(graph.successors(n) if directed else graph.neighbors(n)) for n in nodes}
        pred = {n: sorted(graph.predecessors(n) if directed else graph.neighbors(n)) for n in nodes}
        net = module_class(TOPOLOGY_MODULE)(stmt.name, comp, clock=placed)
        self._count_instance(stmt.span)
        self.origins[id(net)] = stmt.span
        net.arch_params = {"generator": f"{stmt.generator}({', '.join(format_value(a) for a in args)})",
                           "nodes": len(nodes), "edges": graph.number_of_edges()}
        items: list = []  # the node models, whose port attributes their declarations made
        if isinstance(target, ast.ModuleDef):
            self.fail("topology nodes must be Python models with port arrays", stmt.node_model.name_span,
                      hint="wrap the module's ports in a model, or wire the module instances with 'for'")
        declared = target.port_declarations()
        out_decl, in_decl = declared.get("out"), declared.get("inp")
        if out_decl is None or in_decl is None:
            self.fail(f"'{target.model_name}' cannot be a topology node: it needs ports 'out' and 'inp'",
                      stmt.node_model.name_span)
        base_kwargs = self._model_args(stmt.node_model, target, scope, placed or self._clock_of(comp))
        for n in nodes:
            kwargs = dict(base_kwargs)
            for decl, degree in ((out_decl, len(succ[n])), (in_decl, len(pred[n]))):
                if isinstance(decl.count, str):
                    kwargs[decl.count] = degree + local
                elif decl.count is None and degree + local > 1:
                    self.fail(f"'{target.model_name}' has a single '{decl.name}' port but node {n} of "
                              f"{stmt.generator} needs {degree + local}", stmt.node_model.name_span,
                              hint="use a model whose port count is a parameter")
            items.append(self._make_model(target, f"node[{n}]", net, kwargs, stmt, None))
        net.namespace = {"node": InstanceBinding(items, True, stmt.name_span)}
        module_scope.names[stmt.name] = InstanceBinding([net], False, stmt.name_span)
        link = self._link_values(stmt.link, scope)
        index = {n: i for i, n in enumerate(nodes)}
        for u in nodes:
            for v in succ[u]:
                src = items[index[u]].out
                dst = items[index[v]].inp
                src = src[local + succ[u].index(v)] if isinstance(src, list) else src
                dst = dst[local + pred[v].index(u)] if isinstance(dst, list) else dst
                self._connect(src, dst, link, stmt.span)

    # -- connections ------------------------------------------------------------------------------
    def _deferred(self, stmt, scope: Scope, comp: ModuleComponent):
        if isinstance(stmt, ast.Connection):
            sources = self.resolve(stmt.src, scope)
            sinks = self.resolve(stmt.dst, scope)
            for items, end in ((sources, stmt.src), (sinks, stmt.dst)):
                for item in items:
                    if isinstance(item, Component):
                        ports = [p.name for p in item.ports]
                        self.fail(f"'{end.segments[-1].name}' is an instance, not a port", end.span,
                                  hint=f"name one of its ports: {', '.join(ports)}" if ports else "it has no ports")
            if len(sources) != len(sinks):
                self.fail(f"cannot connect {len(sources)} port{'s' if len(sources) != 1 else ''} to "
                          f"{len(sinks)} port{'s' if len(sinks) != 1 else ''}", stmt.span,
                          hint="both ends must select the same number of ports; connections are point to point")
            link = self._link_values(stmt.link, scope)
            for src, dst in zip(sources, sinks):
                self._connect(src, dst, link, stmt.span)
        elif isinstance(stmt, ast.Expose):
            if not hasattr(comp, "exposed"):
                comp.exposed = {}
            items = []
            try:
                for target in stmt.targets:
                    resolved = self.resolve(target, scope)
                    for item in resolved:
                        if isinstance(item, Component):
                            self.fail(f"only ports can be exposed; '{target.segments[-1].name}' is an instance",
                                      target.span)
                    items.extend(resolved)
            except (Cascade, ArchError):
                # what uses the port outside follows from this error, and says nothing more
                comp.exposed.setdefault(stmt.name, POISON)
                raise
            if stmt.name in comp.exposed or stmt.name in comp.namespace:
                self.fail(f"'{stmt.name}' is already defined in this module", stmt.name_span)
            last = stmt.targets[0].segments[-1]
            single = (len(stmt.targets) == 1 and len(items) == 1 and last.selector is None
                      and not self._is_port_array(items[0]))
            comp.exposed[stmt.name] = items[0] if single else list(items)
        elif isinstance(stmt, ast.Run):
            self._run(stmt, scope)

    @staticmethod
    def _is_port_array(port) -> bool:
        return isinstance(getattr(port.owner, port.name.split("[")[0], None), list)

    def _run(self, stmt: ast.Run, scope: Scope):
        args = [plain_value(units.normalise(self.evaluate(a, scope))) for a in stmt.args]
        kwargs = {k.name: plain_value(units.normalise(self.evaluate(k.value, scope))) for k in stmt.kwargs}
        try:
            binder = WORKLOADS.lookup(stmt.workload)
        except ArchError as err:
            err.span = stmt.name_span
            raise
        targets = []
        for end in stmt.targets:
            targets.extend(self.resolve(end, scope))
        self.runs.append((binder, targets, args, kwargs, stmt.span))

    def _link_values(self, link: ast.Link | None, scope: Scope) -> dict:
        values: dict = {}
        if link is None:
            return values
        allowed = ("latency", "capacity", "width", "bandwidth")
        for arg in link.args:
            if arg.name not in allowed:
                self.fail(f"a link has no attribute '{arg.name}'", arg.name_span,
                          hint=did_you_mean(arg.name, allowed) or "attributes: " + ", ".join(allowed))
            if arg.name in values:
                self.fail(f"link attribute '{arg.name}' is given twice", arg.name_span)
            value = units.normalise(self.evaluate(arg.value, scope))
            what = f"link {arg.name}"
            if arg.name == "latency":
                if isinstance(value, Quantity):
                    units.check_dimension(value, units.TIME, what, arg.value.span)
                    if units.magnitude(value) <= 0:
                        self.fail(f"link latency must be positive, got {value}", arg.value.span,
                                  hint="every connection is registered: at least one receiver cycle")
                else:
                    value = self._whole_at_least(value, 1, what, arg.value.span, "cycles")
            elif arg.name == "capacity":
                value = self._whole_at_least(value, 1, what, arg.value.span, "messages")
            elif arg.name == "width":
                if isinstance(value, Quantity):
                    units.check_dimension(value, units.DATA, what, arg.value.span)
                    value = units.whole(value.value, what, "bit", arg.value.span)
                value = self._whole_at_least(value, 1, what, arg.value.span, "bits")
            elif arg.name == "bandwidth":
                units.check_dimension(value, units.BANDWIDTH, what, arg.value.span)
                if units.magnitude(value) <= 0:
                    self.fail("link bandwidth must be positive", arg.value.span)
            values[arg.name] = (value, arg.value.span)
        if "width" in values and "bandwidth" in values:
            self.fail("give a link either a width or a bandwidth, not both", values["bandwidth"][1])
        return values

    def _whole_at_least(self, value, low: int, what: str, span: Span, unit: str) -> int:
        if isinstance(value, Quantity):
            units.check_dimension(value, units.NUMBER, what, span)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(f"{what} must be a whole number of {unit}, got {describe(value)}", span)
        if value < low:
            self.fail(f"{what} must be at least {low}, got {value}", span)
        return value

    def _connect(self, src, dst, link: dict, span: Span):
        kwargs = {}
        if "latency" in link:
            latency = link["latency"][0]
            if isinstance(latency, Quantity):
                receiver = self._clock_of(dst.owner)
                latency = units.cycles_ceil(latency, receiver.period_ps if receiver else DEFAULT_CLOCK_PS)
            kwargs["latency"] = latency
        if "capacity" in link:
            kwargs["capacity"] = link["capacity"][0]
        if "width" in link:
            kwargs["width_bits"] = link["width"][0]
        elif "bandwidth" in link:
            sender = self._clock_of(src.owner)
            period = sender.period_ps if sender else DEFAULT_CLOCK_PS
            kwargs["width_bits"] = max(1, floor(units.magnitude(link["bandwidth"][0]) * period / 10**12))
        try:
            connect(src, dst, **kwargs)
        except ArchError as err:
            raise ArchError(err.message, hint=err.hint, span=span) from None

    # -- paths ------------------------------------------------------------------------------------
    def resolve(self, endpoint: ast.Endpoint, scope: Scope) -> list:
        """The components or ports an endpoint path names, in order."""
        first = endpoint.segments[0]
        try:
            binding = scope.lookup(first.name)
        except KeyError:
            names = [n for n in scope.module.names if isinstance(scope.module.names[n], InstanceBinding)]
            self.fail(f"no instance named '{first.name}'", first.name_span,
                      hint=did_you_mean(first.name, names) or ("instances here: " + ", ".join(names) if names
                                                                 else "declare it: name : Model(...)"))
        if binding is POISON:
            raise Cascade()
        if not isinstance(binding, InstanceBinding):
            self.fail(f"'{first.name}' is not an instance", first.name_span)
        items = self._select(binding.items, binding.is_array, first, scope, first.name)
        for segment in endpoint.segments[1:]:
            selected = []
            for item in items:
                if not isinstance(item, Component):
                    self.fail(f"'{item.name}' is a port and has no part '{segment.name}'", segment.name_span)
                member, is_array = self._member(item, segment)
                selected.extend(self._select(member, is_array, segment, scope, f"{item.name}.{segment.name}"))
            items = selected
        return items

    def _member(self, comp: Component, segment: ast.Segment):
        name = segment.name
        exposed = getattr(comp, "exposed", None) or {}
        if name in exposed:
            value = exposed[name]
            if value is POISON:
                raise Cascade()
            return (value, True) if isinstance(value, list) else ([value], False)
        namespace = getattr(comp, "namespace", None)
        if namespace is not None and name in namespace:
            binding = namespace[name]
            if binding is POISON:
                raise Cascade()
            if isinstance(binding, InstanceBinding):
                return binding.items, binding.is_array
        if name in comp.port_declarations():
            value = getattr(comp, name)
            return (value, True) if isinstance(value, list) else ([value], False)
        part = None if isinstance(comp, ModuleComponent) else comp.find_child(name)
        if part is not None:
            return [part], False
        ports = list(comp.port_declarations()) + list(exposed)
        if isinstance(comp, ModuleComponent):
            parts = [n for n, b in (namespace or {}).items() if isinstance(b, InstanceBinding)]
            self.fail(f"'{comp.model_name}' instance '{comp.name}' has no port or part '{name}'", segment.name_span,
                      hint=did_you_mean(name, ports + parts) or
                      ("exposed ports: " + ", ".join(exposed) if exposed else
                       "a module's ports are the ones it exposes with 'expose inner.port as name'"))
        self.fail(f"'{comp.model_name}' has no port '{name}'", segment.name_span,
                  hint=did_you_mean(name, ports) or ("ports: " + ", ".join(ports) if ports else "it has no ports"))

    def _select(self, items: list, is_array: bool, segment: ast.Segment, scope: Scope, shown: str) -> list:
        selector = segment.selector
        if selector is None:
            return list(items)
        if not is_array:
            self.fail(f"'{shown}' is not an array and cannot be indexed", selector.span)
        size = len(items)
        if selector.kind == "all":
            return list(items)
        if selector.kind == "index":
            index = self._int(self.evaluate(selector.start, scope), "an index", selector.span)
            if not 0 <= index < size:
                self.fail(f"index {index} is out of range for '{shown}'", selector.span,
                          hint=f"'{shown}' has {size} element{'s' if size != 1 else ''}" +
                          (f", indices 0 .. {size - 1}" if size else ""))
            return [items[index]]
        start = self._int(self.evaluate(selector.start, scope), "a range start", selector.start.span)
        stop = self._int(self.evaluate(selector.stop, scope), "a range end", selector.stop.span)
        if not 0 <= start <= stop <= size:
            self.fail(f"range {start} .. {stop} is out of range for '{shown}'", selector.span,
                      hint=f"'{shown}' has {size} elements; a range a .. b takes a up to b - 1")
        return items[start:stop]
