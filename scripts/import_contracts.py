"""An import-linter contract type that import-linter lacks: no import circle between modules.

`acyclic_siblings` squashes packages and looks inside one package at a time; this one looks at
every module of the root packages at once, imports inside functions included, so a circle that
runs through several apps is caught too. Used by `make lint` (see [tool.importlinter] in
pyproject.toml).
"""

from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


class AcyclicModulesContract(Contract):
    type_name = "acyclic_modules"

    modules = fields.SetField(subfield=fields.ModuleExpressionField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        roots = {expression.expression for expression in self.modules}  # type: ignore[attr-defined]
        inside = {m for m in graph.modules if m.split(".")[0] in roots}
        circles = [sorted(c) for c in _strongly_connected(inside, graph) if len(c) > 1]
        return ContractCheck(kept=not circles, metadata={"circles": sorted(circles)})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for circle in check.metadata["circles"]:
            output.print_error(f"Import circle of {len(circle)} modules:")
            output.new_line()
            for module in circle:
                output.indent_cursor()
                output.print_error(f"- {module}")
            output.new_line()


def _strongly_connected(modules: set[str], graph) -> list[list[str]]:
    """Tarjan's algorithm, iterative (a deep import chain must not hit the recursion limit)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & modules) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if child < len(edges[node]):
                work.append((node, child + 1))
                nxt = edges[node][child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
    return found
