"""Auditing code the kit did not write (catalogue A.10).

* :func:`~dpgp_audit.adapters.mechanism.adapt` — a third-party release callable into the
  mechanism contract, seeded from the audit's generator
  (:class:`~dpgp_audit.adapters.seeding.Seeding`: numpy's global state, a
  ``random_state`` argument, Python's ``random``, a Generator argument, or an unseedable
  sampler, marked not reproducible), batched where the library allows, with its measured
  ``cost_per_draw_s``;
* :func:`~dpgp_audit.adapters.mechanism.seed_globals` — a mechanism of one's own whose
  ``sample`` draws from ``np.random.*`` or ``random`` instead of its ``rng``, with both
  global generators seeded from the audit for each call (reproducible, and coupled for the
  grey-box auditor); the CLI applies it to ``--mechanism FILE.py:NAME`` where needed;
* :func:`~dpgp_audit.adapters.bridge.bridged` — the same for a library that lives in its
  own virtualenv (a child process speaking frames of JSON and npz over stdin/stdout);
* :func:`~dpgp_audit.adapters.usercode.load_mechanism` and
  :func:`~dpgp_audit.adapters.loading.load_attribute` — a user's ``FILE.py:NAME`` or
  ``package.module:NAME`` for ``python -m dpgp_audit audit --mechanism``;
  :data:`~dpgp_audit.adapters.template.TEMPLATE` — the commented contract that
  ``new-mechanism`` writes.

The adapters never state a claim: the user writes the library's documented guarantee.
This package is an edge (``tests/test_layers.py``): it may import every layer, and only
edges import it.
"""

from dpgp_audit.adapters.bridge import BridgedMechanism, VenvBridge, bridged
from dpgp_audit.adapters.mechanism import AdaptedMechanism, adapt, seed_globals
from dpgp_audit.adapters.seeding import STYLES, Seeding

__all__ = ["STYLES", "AdaptedMechanism", "BridgedMechanism", "Seeding", "VenvBridge", "adapt",
           "bridged", "seed_globals"]
