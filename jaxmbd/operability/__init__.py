"""Operability: from a site's wave climate to go/no-go, waiting time and the gradient of workability."""
