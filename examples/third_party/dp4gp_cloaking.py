"""dp4gp 1.01's cloaking, served in its own virtualenv (.venv-dp4gp/, numpy < 2).

This file runs **inside the dp4gp environment**, in the child process of the kit's
virtualenv bridge (``dpgp_audit.adapters.bridge``); it imports GPy and dp4gp, never the
kit. ``dp4gp_bridge.py`` beside it is the kit's side. Nothing of dp4gp is re-implemented:
every number of the release comes from ``DPGP_cloaking`` (the S18 authors' code).

``Cloaking(...)`` is called once in the child with the public parts of the problem (the
inputs ``X``, the test inputs, fixed kernel hyperparameters — public, never fitted to the
private targets) and then serves

* ``__call__(data, n)``: ``n`` releases ``draw_prediction_samples(X_test, N=n)`` — the
  GP posterior mean at ``X_test`` plus dp4gp's cloaking noise, shape ``(n, k)``;
* ``mean(data)`` / ``cov(data)``: the posterior mean and the noise covariance ``sampcov``
  that dp4gp's ``draw_noise_samples`` itself returns (its statement of the release).

dp4gp's cloaking optimiser (``findLambdas_repeat``) depends only on the public inputs and
starts from random λ drawn from numpy's global state. It is run once, here, with its
initialisation seeded by the public constant ``lambda_seed``, and its result (times
``lambda_scale``, 1 by default) is reused for every draw (the optimisation costs seconds;
the draws then cost microseconds). The release is therefore one fixed mechanism, as the
kit's own cloaking is; the noise of each batch comes from numpy's global state, which the
bridge seeds from the audit.
"""

import GPy
import numpy as np
from dp4gp.dp4gp import DPGP_cloaking


class Cloaking:
    """The dp4gp cloaking release for fixed public inputs (module docstring)."""

    def __init__(self, X, X_test, sens=1.0, epsilon=1.0, delta=0.01, lengthscale=2.0,
                 variance=1.0, noise_var=0.1, n_attempts=7, n_its=1000, lambda_seed=0,
                 lambda_scale=1.0):
        self.X = np.asarray(X, dtype=float)
        self.X_test = np.asarray(X_test, dtype=float)
        self.sens, self.epsilon, self.delta = sens, epsilon, delta
        self.hyper = (lengthscale, variance, noise_var)
        self.n_attempts, self.n_its = n_attempts, n_its
        saved = np.random.get_state()  # noqa: NPY002 — dp4gp reads the global state
        np.random.seed(lambda_seed)  # noqa: NPY002
        try:  # dp4gp's own optimiser on the public inputs, once
            dpgp = self._dpgp(self.X, np.zeros(len(self.X)))
            C = dpgp.get_C(self.X_test)
            found = dpgp.findLambdas_repeat([C[:, i][:, None] for i in range(C.shape[1])],
                                            self.n_attempts, self.n_its)
            # lambda_scale != 1 stands for an overshooting optimiser (another start, a step
            # too long) or lambdas a user supplies: dp4gp's calcDelta then decides the noise
            self.lambdas = lambda_scale * np.asarray(found)
        finally:
            np.random.set_state(saved)  # noqa: NPY002

    def _dpgp(self, X, y):
        lengthscale, variance, noise_var = self.hyper
        kern = GPy.kern.RBF(X.shape[1], variance=variance, lengthscale=lengthscale)
        model = GPy.models.GPRegression(X, np.asarray(y, dtype=float)[:, None], kern,
                                        noise_var=noise_var)
        dpgp = DPGP_cloaking(model, self.sens, self.epsilon, self.delta)
        if hasattr(self, "lambdas"):  # reuse the optimiser's result (it depends on X only)
            dpgp.findLambdas_repeat = lambda cs, *args, **kwargs: self.lambdas
        return dpgp

    def _check(self, data):
        if data.X.shape != self.X.shape or not np.array_equal(data.X, self.X):
            raise ValueError("data.X differs from the public inputs the cloaking was built for")
        return self._dpgp(data.X, data.y)

    def __call__(self, data, n):
        """``n`` releases: dp4gp's posterior mean at ``X_test`` plus its cloaking noise."""
        samples, _, _ = self._check(data).draw_prediction_samples(
            self.X_test, N=n, Nattempts=self.n_attempts, Nits=self.n_its)
        return np.asarray(samples).T  # dp4gp returns (k, N)

    def mean(self, data):
        """The posterior mean at ``X_test`` that dp4gp releases (before noise)."""
        mu, _, _ = self._check(data).draw_noise_samples(self.X_test, N=1)
        return np.ravel(mu)

    def cov(self, data):
        """dp4gp's noise covariance ``sampcov`` (its statement of the release's noise)."""
        _, _, sampcov = self._check(data).draw_noise_samples(self.X_test, N=1)
        return np.asarray(sampcov)
