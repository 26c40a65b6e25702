"""proxy-postrender: inject HTTP(S) proxy settings into rendered Kubernetes manifests."""

__version__ = "0.1.0"
