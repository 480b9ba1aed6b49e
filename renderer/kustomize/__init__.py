"""The build step: overlays built by kustomize, offline, in worker processes of their own."""

# Not named build/: git (the usual ignore lists), ruff and pytest all skip folders of that name.
