"""The build step: the tool's own overlays in process (kustomize their reference, byte for byte),
any other by kustomize, offline, in worker processes of their own."""

# Not named build/: git (the usual ignore lists), ruff and pytest all skip folders of that name.
