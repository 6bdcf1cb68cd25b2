"""CLI command on the dominator tree: `dominators FILE` (MAT's dominator
tree, the largest retained sizes first, --depth levels down) and
`dominators FILE --group-by class|package|loader|heap` (the retained size
of groups of objects by the union rule)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Optional

from ._cli_args import (UsageError, add_heap_input, add_json, add_rows, add_unreachable, command, print_json, read_heap,
                        whole_number)
from ._cli_reach import describe
from ._cli_show import object_ref, ref
from ._units import human_size

if TYPE_CHECKING:
    from ._heap import Heap, HeapClass, HeapObject
    from ._tree import Group

GROUP_KEYS = ("class", "package", "loader", "heap")  # _tree.GROUP_KEYS (not imported: the CLI loads lightly)
DEPTH = 3


def _node(heap: Heap, obj: HeapObject, depth: int, rows: int) -> dict[str, Any]:
    """obj as a JSON node, its children `depth - 1` levels down (rows each)."""
    node: dict[str, Any] = {**ref(obj), "shallow_size": obj.shallow_size, "retained_size": heap.retained_size(obj),
                            "retained_count": obj.retained_count}
    if depth > 1:
        node.update(_children(heap, obj.dominated(), depth - 1, rows))
    return node


def _children(heap: Heap, kids: list[HeapObject], depth: int, rows: int) -> dict[str, Any]:
    """The first `rows` of kids as JSON nodes, and what the rest hold."""
    rest = kids[rows:]
    return {"children": [_node(heap, k, depth, rows) for k in kids[:rows]],
            "more": len(rest), "more_retained_size": sum(max(heap.retained_size(k), 0) for k in rest)}


def _print_rows(heap: Heap, kids: list[HeapObject], depth: int, rows: int, prefix: Optional[str]) -> None:
    """Prints the first `rows` of kids and their children `depth - 1` levels
    down; prefix: the tree's branches to the left (None for the roots)."""
    shown, rest = kids[:rows], kids[rows:]
    for k, obj in enumerate(shown):
        last = k == len(shown) - 1 and not rest
        lead = "" if prefix is None else prefix + ("╰─ " if last else "├─ ")
        print(f"{human_size(max(heap.retained_size(obj), 0)):>10}  {obj.retained_count:>11,}  {lead}"
              f"{describe(obj)} 0x{obj.id:x} ({human_size(obj.shallow_size)})")
        if depth > 1:
            below = "" if prefix is None else prefix + ("   " if last else "│  ")
            _print_rows(heap, obj.dominated(), depth - 1, rows, below)
    if rest:
        size = sum(max(heap.retained_size(o), 0) for o in rest)
        print(f"{human_size(size):>10}  {'':>11}  {'' if prefix is None else prefix + '╰─ '}… {len(rest):,} more")


def _group_json(group: Group, key: str) -> dict[str, Any]:
    """A group as JSON: what it is by its key's name (class: the class's
    name and id, as top --by class has them; loader: the loader object or
    null), its objects ("instances" for a class), and its sizes."""
    sizes = {"shallow_size": group.shallow_size, "retained_size": group.retained_size}
    if key == "class":
        return {"class": group.key.name, "class_id": group.key.class_id, "instances": group.objects, **sizes}
    return {key: object_ref(group.key) if key == "loader" else group.key, "objects": group.objects, **sizes}


def _key_text(group: Group, key: str) -> str:
    if key == "class":
        cls: HeapClass = group.key
        return cls.name
    if key == "loader":
        return "<boot>" if group.key is None else f"{group.key.class_name} 0x{group.key.id:x}"
    if key == "package":
        return group.key or "<default package>"
    return str(group.key)


def cmd_dominators(args: argparse.Namespace) -> int:
    if args.depth is not None and args.group_by is not None:
        raise UsageError("--depth is for the tree; --group-by prints groups, not a tree")
    depth = DEPTH if args.depth is None else args.depth
    with read_heap(args) as heap:
        if args.group_by is not None:
            return _groups(heap, args)
        roots = heap.dominator_roots()
        if args.json:
            doc = {"file": args.file, "semantics": args.semantics, "depth": depth,
                   **_children(heap, roots, depth, args.top)}
            print_json({"roots" if k == "children" else k: v for k, v in doc.items()})
            return 0
        total = sum(max(heap.retained_size(o), 0) for o in roots)
        print(f"{len(roots):,} objects dominated by the virtual root, retaining {human_size(total)} "
              f"({args.semantics} semantics)")
        print(f"{'retained':>10}  {'objects':>11}  object (shallow size)")
        _print_rows(heap, roots, depth, args.top, None)
    return 0


def _groups(heap: Heap, args: argparse.Namespace) -> int:
    groups = heap.retained_by(args.group_by, unreachable=args.unreachable)
    shown, rest = groups[:args.top], groups[args.top:]
    if args.json:
        print_json({"file": args.file, "semantics": args.semantics, "group_by": args.group_by,
                    "groups": [_group_json(g, args.group_by) for g in shown], "more": len(rest)})
        return 0
    print(f"{'retained':>10}  {'shallow':>10}  {'objects':>11}  {args.group_by}")
    for g in shown:
        print(f"{human_size(g.retained_size):>10}  {human_size(g.shallow_size):>10}  {g.objects:>11,}  "
              f"{_key_text(g, args.group_by)}")
    if rest:
        print(f"{'':>10}  {'':>10}  {'':>11}  … {len(rest):,} more")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = command(sub, "dominators", cmd_dominators,
                "the dominator tree (largest retained first), or retained sizes by group",
                description="The dominator tree as MAT shows it: the objects no other object dominates, largest "
                            "retained size first, and what each dominates, --depth levels down.  With --group-by, "
                            "the retained size of groups of objects instead, each the size of the union of its "
                            "members' retained sets (no byte counted twice).",
                example="hprofkit dominators app.hprof --depth 2 -n 10\n"
                        "hprofkit dominators app.hprof --group-by package --json")
    add_heap_input(p)
    p.add_argument("--depth", type=whole_number(1, what="a depth"), default=None, metavar="N",
                   help=f"levels of the tree to print (default {DEPTH}; 1: the roots only)")
    p.add_argument("--group-by", choices=GROUP_KEYS, default=None,
                   help="print the retained size by class, package, class loader or Android heap instead")
    add_unreachable(p, "the groups' objects and shallow sizes")
    add_rows(p, help="rows per level of the tree, or groups (default 20)")
    add_json(p)
