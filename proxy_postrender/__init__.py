"""proxy-postrender: inject HTTP(S) proxy settings into rendered Kubernetes manifests."""

__version__ = "0.1.0"

# Modules import their typing names under ``if TYPE_CHECKING:`` from here: the
# typing module itself is never imported at run time (it costs start-up time);
# type checkers take any name TYPE_CHECKING as true.
TYPE_CHECKING = False
