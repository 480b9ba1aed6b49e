"""What a change does to the nodes: their workload labels are not in git, so the diff of
spec.nodes is shown with the `kubectl label` commands to run after the merge. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from renderer.model import Workload
from renderer.profile import LoadedProfile
from renderer.render import label_command

__all__ = ["NodeChange", "node_changes"]


@dataclass(frozen=True, order=True)
class NodeChange:
    """One node whose workload label the profile changes (None: not in spec.nodes)."""

    node: str
    before: Workload | None
    after: Workload | None

    @property
    def command(self) -> str:
        """What to run once Flux has applied the merge (a removed node loses its label)."""
        return label_command(self.node, self.after)


def node_changes(base: LoadedProfile | None, head: LoadedProfile | None) -> tuple[NodeChange, ...]:
    """spec.nodes entries added, changed or removed between the refs, by node name."""
    if head is None:
        return ()  # the cluster leaves git: its nodes are no longer this repository's business
    before = base.profile.spec.nodes if base else {}
    after = head.profile.spec.nodes
    return tuple(
        NodeChange(node, before.get(node), after.get(node))
        for node in sorted(set(before) | set(after))
        if before.get(node) != after.get(node)
    )
