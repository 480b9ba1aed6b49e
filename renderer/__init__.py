"""Renderer: profile -> model -> manifests -> overlays -> built tree -> git. Never imports audit."""
