"""What Kubernetes and the controllers on it do with what the project renders, as their sources say: limits its API server validates, how its autoscaler acts."""
