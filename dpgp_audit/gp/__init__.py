"""dpgp_audit.gp"""

# Modules that add kernels register their examples for the PSD invariant tests on import.
from dpgp_audit.gp import integral_kernel as _integral_kernel  # noqa: F401
