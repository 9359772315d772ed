"""Black-box auditing (A.3, A.8): ε lower bounds from samples of M(D) and M(D′) alone.

The machinery a sample-based audit needs, apart from the exact auditors of ``audit/``:

* :mod:`~.sampling` — chunked, reproducible draws (each chunk its own child generator)
  and :mod:`~.executors` — where chunks run (in process, a pool, a Dask cluster);
* :mod:`~.scores` — the test statistics (projection, likelihood ratio, quadratic,
  atoms, KDE, categorical, classifier) fitted on one part of the draws;
* :mod:`~.twosample` and :mod:`~.orderstat` — thresholds and Clopper–Pearson bounds
  turned into an ε lower bound (split thresholds, or order statistics fixed in advance);
* :mod:`~.fixed` — the fixed-n split auditor (:func:`~.fixed.audit_blackbox`);
* :mod:`~.sequential` — the anytime-valid betting auditor of the default path
  (:func:`~.sequential.audit_sequential`);
* :mod:`~.gdp_fit` — a μ lower bound from the same error rates;
* :mod:`~.planner` — how many samples a target needs.
"""
