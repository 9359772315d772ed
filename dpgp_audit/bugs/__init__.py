"""The bug zoo (catalogue A.5): deliberately broken mechanisms, each beside its correct twin.

Two kinds, one naming scheme:

* **planted bugs** ``planted/<name>``, registered in the catalogue (``make audit
  MECH=planted/<name>`` audits one), each listed in :mod:`dpgp_audit.bugs.zoo` with its
  twin, its true ε and the auditor expected to catch it;
* **mutants** ``mutant/<name>`` (:mod:`dpgp_audit.bugs.mutants`), the mutation benchmark's
  mistakes written as a hurried user would, with negative controls that look wrong but
  are private.

Nothing below the edges imports this package: the auditors never know which bugs exist.
Never use these mechanisms on data.
"""
