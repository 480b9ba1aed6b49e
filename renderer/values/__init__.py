"""The values step: what the profile means as chart values and KubeVirt configuration."""
