"""A.10: the command line audits the user's own code and data.

``--mechanism FILE.py:NAME`` / ``package.module:NAME``, ``--data FILE`` (CSV with --y/--x,
or .npz), ``new-mechanism``, and the exit codes of docs/cli.md: 0 no violation found,
1 violation, 2 usage or input error (one line on stderr), 3 internal failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpgp_audit.adapters.template import TEMPLATE, TEMPLATE_NAME
from dpgp_audit.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main
from dpgp_audit.datasets.files import load_data_file

ROOT = Path(__file__).resolve().parents[2]

MECHS = textwrap.dedent('''
    import numpy as np
    from dpgp_audit import ApproxDP, PublicDomain, PureDP, outputs_only
    from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
    from dpgp_audit.privacy.float_release import float_safe_release

    DOMAIN = PublicDomain(y_bound=2.0)

    class NoisyMean:  # the guide's example: sigma for sensitivity 1/N, the true one is 4/N
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
            return float_safe_release(y.mean(), sigma * rng.standard_normal((n, 1)), sigma)

    class GoodMean:  # takes data and epsilon by name: the command line passes both
        def __init__(self, data, epsilon=1.0):
            self.claim = ApproxDP(epsilon=epsilon, delta=1e-5, relation=outputs_only(4.0),
                                  domain=DOMAIN)
            self.sigma = analytic_gaussian_sigma(epsilon, 1e-5, 4.0 / data.n)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            return float_safe_release(y.mean(), self.sigma * rng.standard_normal((n, 1)),
                                      self.sigma)

    def good_factory(data, epsilon=1.0, delta=1e-5):
        return GoodMean(data, epsilon)

    good_instance = NoisyMean()

    class GlobalNoisyMean:  # NoisyMean's slip, its noise from np.random (rng ignored)
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
            return y.mean() + sigma * np.random.standard_normal((n, 1))

    class NoDomain:
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))
        def sample(self, data, n, rng):
            return data.y.mean() + 100.0 * rng.standard_normal((n, 1))

    class NotAMechanism:
        def release(self, data):
            return 0.0

    class NeedsMore:
        def __init__(self, data, scale):
            self.scale = scale

    class BrokenSample:
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            return 1 / 0

    class ExtraRow:  # one release too many, except for a single draw
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            return rng.standard_normal((n if n == 1 else n + 1, 1))

    class NotFinite:  # a 1/0 overflow at the domain's end: refused inside the bar's loop
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            with np.errstate(divide="ignore"):
                scale = 1.0 / (2.0 - np.max(np.abs(y)))  # inf once a target is at |y| = 2
            return scale * rng.standard_normal((n, 1))

    class CountsPresent:  # one noisy count per rounded target that occurs: data-shaped
        claim = PureDP(epsilon=1.0, relation=outputs_only(1.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            _, counts = np.unique(np.round(data.y, 1), return_counts=True)
            return counts + rng.laplace(0.0, 2.0, size=(n, counts.size))

    class FailsAtTheBound:  # a lookup that fails on a generated neighbour only
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        scales = {False: 1.0}
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            scale = self.scales[bool(np.max(np.abs(y)) == 2.0)]  # KeyError at the bound
            return y.mean() + scale * rng.standard_normal((n, 1))

    class Labels:  # releases as strings
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            return np.array([["low"]] * n)

    class Unseeded:  # correct noise, drawn from a generator of its own
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        calls = []
        def sample(self, data, n, rng):
            self.calls.append(n)
            own = np.random.Generator(np.random.PCG64(len(self.calls)))
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 4.0 / data.n)
            return float_safe_release(y.mean(), sigma * own.standard_normal((n, 1)), sigma)

    class ClipsInPlace:  # writes into the dataset it is handed (read-only)
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = np.clip(data.y, -2.0, 2.0, out=data.y)
            return y.mean() + rng.standard_normal((n, 1))

    class TiledNoise:  # a correct Gaussian mean, one noise draw broadcast over the rows
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 4.0 / data.n)
            z = np.full((n, 1), sigma * rng.standard_normal())
            return float_safe_release(y.mean(), z, sigma)

    class SensitivityFromN:  # n, the number of draws, read as the number of records
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 4.0 / n)
            return float_safe_release(y.mean(), sigma * rng.standard_normal((n, 1)), sigma)

    class Budgeted:  # a correct mean whose accountant refuses after 100 calls
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        calls = []
        def sample(self, data, n, rng):
            self.calls.append(n)
            if len(self.calls) > 100:
                raise ValueError("privacy budget exhausted")
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 4.0 / data.n)
            return float_safe_release(y.mean(), sigma * rng.standard_normal((n, 1)), sigma)

    class CentredNoise:  # noise centred on its own mean over the rows: one row has none
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 4.0 / data.n)
            z = sigma * rng.standard_normal((n, 1))
            return float_safe_release(y.mean(), z - z.mean(), sigma)

    class ClaimTypo:  # the claim's arguments given by position: a TypeError when read
        @property
        def claim(self):
            return ApproxDP(1.0, 1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            return rng.standard_normal((n, 1))

    claim_typo_instance = ClaimTypo()

    class MeanIsAField:  # a field named mean beside one named cov: not a white-box interface
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        mean, cov = 0.0, 1.0
        def sample(self, data, n, rng):
            return rng.standard_normal((n, 1))

    class CovOfAnotherSize:  # three means, a 2 x 2 covariance
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def mean(self, data):
            return np.zeros(3)
        def cov(self, data):
            return np.eye(2)
        def sample(self, data, n, rng):
            return rng.standard_normal((n, 3))

    class RefusesEverything:  # a ValueError on every dataset, the data to audit included
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0), domain=DOMAIN)
        def sample(self, data, n, rng):
            raise ValueError("needs at least 1000 rows")

    class LabelRate:  # binary labels declared: the kit's default data (sin x) are not labels
        claim = PureDP(epsilon=1.0, relation=outputs_only(1.0),
                       domain=PublicDomain(1.0, labels=(0.0, 1.0)))
        def sample(self, data, n, rng):
            return np.mean(data.y) + rng.laplace(0.0, 1.0 / data.n, size=(n, 1))
''')


@pytest.fixture()
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mechs.py").write_text(MECHS)
    (tmp_path / "broken.py").write_text("import numpy\nx = 1\nraise RuntimeError('bad config')\n")
    (tmp_path / "badclaim.py").write_text(  # the kit's own check raises, on the user's line 3
        "from dpgp_audit import PureDP, outputs_only\n\n"
        "CLAIM = PureDP(epsilon=float('inf'), relation=outputs_only(1.0))\n")
    x = np.linspace(0, 1, 40)
    rows = "".join(f"{a:.6f},{b:.6f},{2 * a:.6f}\n" for a, b in zip(x, np.sin(5 * x), strict=True))
    (tmp_path / "data.csv").write_text("t,target,u\n" + rows)
    np.savez(tmp_path / "data.npz", X=x, y=np.sin(5 * x))
    return tmp_path


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


AUDIT = ["audit", "--seed", "3", "--no-progress"]


def test_A10_user_mechanism_violation_with_report_naming_source_and_data(files, capsys):
    code, out, err = _run(AUDIT + ["--mechanism", "mechs.py:NoisyMean", "--data", "data.csv",
                                   "--y", "target", "--x", "t", "--json", "r.json"], capsys)
    assert code == EXIT_VIOLATION, err
    assert "Audit of mechs.py:NoisyMean: VIOLATION" in out
    assert "source: " + str(files / "mechs.py") in out and "sha256 " in out
    assert "data: " + str(files / "data.csv") in out
    doc = json.loads((files / "r.json").read_text())
    (rep,) = doc["reports"]
    assert doc["exit_code"] == 1 and rep["verdict"] == "VIOLATION"
    import hashlib

    src = rep["inputs"]["source"]
    assert src["spec"] == "mechs.py:NoisyMean"
    assert src["sha256"] == hashlib.sha256((files / "mechs.py").read_bytes()).hexdigest()
    assert rep["inputs"]["data_file"]["sha256"] == hashlib.sha256(
        (files / "data.csv").read_bytes()).hexdigest()
    assert rep["inputs"]["dataset"]["n"] == 40 and rep["inputs"]["dataset"]["dim"] == 1
    assert set(rep) >= {"claim", "verdict", "inputs", "results", "skipped", "witness"}
    assert rep["witness"]["d0"]["y"]


@pytest.mark.parametrize("name", ["GoodMean", "good_factory"])
def test_A10_class_and_factory_get_data_and_overrides(files, capsys, name):
    code, out, err = _run(AUDIT + ["--mechanism", f"mechs.py:{name}", "--data", "data.npz",
                                   "--epsilon", "0.5", "--samples", "4000"], capsys)
    assert code == EXIT_OK, err
    assert "(0.5, 1e-05)-DP" in out  # the override reached the constructor
    assert err == ""  # a declared domain: no warning


def test_A10_module_spec_is_importable(files, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(files))
    code, out, _ = _run(AUDIT + ["--mechanism", "mechs:GoodMean", "--samples", "4000"], capsys)
    assert code == EXIT_OK and "Audit of mechs:GoodMean" in out


def test_A10_catalogue_ids_still_work(capsys):
    code, out, _ = _run(AUDIT + ["--mechanism", "P.1/gaussian-sum", "--samples", "2000"], capsys)
    assert code == EXIT_OK and "Audit of P.1/gaussian-sum" in out and "source:" not in out


def test_A10_no_declared_domain_warns_how_to_declare_one(files, capsys):
    code, out, err = _run(AUDIT + ["--mechanism", "mechs.py:NoDomain", "--samples", "4000"],
                          capsys)
    assert code in (EXIT_OK, EXIT_VIOLATION)
    assert "warning" in err and "PublicDomain(y_bound=" in err and "privacy/domain.py" in err
    assert err.count("\n") == 1
    assert out.index("Audit of") > 0  # the warning came before the report (on stderr)


@pytest.mark.parametrize(("argv", "needle"), [
    (["--mechanism", "missing.py:X"], "missing.py: no such file"),
    (["--mechanism", "mechs.py:Nope"], "has no attribute 'Nope'"),
    (["--mechanism", "broken.py:x"], "cannot import broken.py: RuntimeError: bad config (line 3"),
    (["--mechanism", "badclaim.py:CLAIM"],
     "cannot import badclaim.py: ValueError: epsilon must be finite, got inf (line 3 of "
     "badclaim.py)"),
    (["--mechanism", "no_such_module_xyz:X"], "no module named 'no_such_module_xyz'"),
    (["--mechanism", "mechs.py:NotAMechanism"], "is not a mechanism"),
    (["--mechanism", "mechs.py:ClaimTypo"],
     "reading the claim of mechs.py:ClaimTypo failed: TypeError: "),
    (["--mechanism", "mechs.py:MeanIsAField"], "MeanIsAField.mean is a float, not callable"),
    (["--mechanism", "mechs.py:CovOfAnotherSize"],
     "CovOfAnotherSize.mean(data) has 3 value(s) but cov(data) has shape (2, 2)"),
    (["--mechanism", "mechs.py:claim_typo_instance"],
     "reading the claim of mechs.py:claim_typo_instance failed: TypeError: "),
    (["--mechanism", "mechs.py:NeedsMore"], "needs argument(s) ['scale']"),
    (["--mechanism", "mechs.py:good_instance", "--epsilon", "2"], "is an instance"),
    (["--mechanism", "mechs.py:NoisyMean", "--epsilon", "2"], "takes no 'epsilon' argument"),
    (["--mechanism", "mechs.py:BrokenSample"], "ZeroDivisionError"),
    (["--mechanism", "mechs.py:ExtraRow"],
     "ExtraRow.sample(data, 2, rng) returned shape (3, 1); the contract asks for 2 rows"),
    (["--mechanism", "mechs.py:Labels"],
     "Labels.sample(data, 1, rng) returned values of dtype <U3"),
    (["--mechanism", "mechs.py:ClipsInPlace"],
     "ClipsInPlace.sample(data, 1, rng) tried to write into a read-only array"),
    (["--mechanism", "mechs.py:RefusesEverything"],
     "RefusesEverything.sample(data, 1, rng) refused the data to audit: ValueError: needs at "
     "least 1000 rows (line "),
    (["--mechanism", "not-an-id"], "FILE.py:NAME"),
    (["--mechanism", "mechs.py:NoisyMean", "--data", "nope.csv"], "no such file"),
    (["--mechanism", "mechs.py:NoisyMean", "--data", "data.csv", "--y", "zz"], "no column 'zz'"),
    (["--mechanism", "mechs.py:NoisyMean", "--data", "data.csv"], "--y"),
    (["--mechanism", "mechs.py:NoisyMean", "--y", "target"], "give --data"),
    (["--mechanism", "mechs.py:NoisyMean", "--data", "big.csv", "--y", "y"],
     "outside the claim's declared domain: "),
    (["--mechanism", "mechs.py:LabelRate"],
     "(these are the kit's default data, 20 targets sin(x) in [-1, 1], audited because no "
     "--data was given: give yours with --data FILE.csv --y COLUMN)"),
    (["--mechanism", "mechs.py:NoisyMean", "--data", "data.csv", "--dataset", "sine:5"],
     "not both"),
])
def test_A10_bad_input_is_one_line_and_exit_2(files, capsys, argv, needle):
    (files / "big.csv").write_text("x,y\n0,1\n1,5\n2,0\n")
    code, out, err = _run(AUDIT + argv, capsys)
    assert code == EXIT_USAGE, (out, err)
    assert needle in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and "Audit of" not in out
    if "--data" in argv:  # the user's own file: no word about the kit's default data
        assert "default data" not in err, err


def test_A10_an_error_after_the_progress_bar_started_stands_on_its_own_line(files):
    # the bar is drawn on stderr with carriage returns: it must be closed before the
    # message is written, which a terminal would otherwise show glued to the bar's end
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "dpgp_audit", "audit", "--seed", "3",
                          "--mechanism", "mechs.py:NotFinite"], capture_output=True, text=True,
                         env=env, cwd=files, timeout=300)
    assert run.returncode == EXIT_USAGE, run.stderr
    err = run.stderr
    at = err.index("dpgp-audit audit: error: NotFinite.sample(data, ")
    assert "non-finite value(s) (NaN or inf)" in err and "on targets in [" in err
    assert at == 0 or err[at - 1] in "\r\n", repr(err[max(0, at - 80):at + 40])
    assert err[at:].count("\n") == 1 and not err[at:].split("\n", 1)[1].strip(), repr(err)


def test_A10_a_release_shaped_by_the_data_is_one_line_exit_2_naming_the_leak(files, capsys):
    code, out, err = _run(AUDIT + ["--mechanism", "mechs.py:CountsPresent"], capsys)
    assert code == EXIT_USAGE, (out, err)
    assert "CountsPresent.sample returned releases of shape (" in err
    assert "on a neighbour D'" in err and "epsilon = inf" in err and "broadcast" not in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("name", "needle"), [
    ("TiledNoise", "TiledNoise.sample(data, 256, rng) repeated one release over its rows"),
    ("CentredNoise", "CentredNoise.sample(data, 1, rng) returned the same release on 32 of 32"),
    ("SensitivityFromN", "SensitivityFromN.sample(data, 256, rng) returned rows that spread far "
                         "less than 32 single releases"),
])
def test_A10_rows_that_are_not_independent_releases_are_one_line_exit_2(files, capsys, name,
                                                                          needle):
    code, out, err = _run(AUDIT + ["--mechanism", f"mechs.py:{name}"], capsys)
    assert code == EXIT_USAGE, (out, err)
    assert needle in err and "VIOLATION" not in out
    assert err.count("\n") == 1 and "Traceback" not in err


def test_A10_a_mechanism_drawing_from_np_random_is_seeded_coupled_and_repeated(files, capsys):
    # the CLI notices that sample() ignores its rng, answers np.random from the audit's
    # generator: the grey-box auditor couples D and D' and the seed repeats the run
    args = AUDIT + ["--mechanism", "mechs.py:GlobalNoisyMean", "--auditor", "greybox"]
    code, out, err = _run(args + ["--json", "a.json"], capsys)
    assert code == EXIT_VIOLATION, (out, err)
    assert "draws from the global generators; the audit seeds them" in " ".join(err.split())
    assert "SEEDED BY THE AUDIT" in out and "NOT REPRODUCIBLE" not in out
    (rep,) = json.loads((files / "a.json").read_text())["reports"]
    assert rep["inputs"]["seeded_globals"].startswith("numpy's global generator")
    (gb,) = rep["results"]
    assert gb["verdict"] == "VIOLATION" and "reproducible" not in rep["inputs"]
    _run(args + ["--json", "b.json"], capsys)
    (again,) = json.loads((files / "b.json").read_text())["reports"]
    assert again["results"][0]["estimate"] == gb["estimate"]
    assert again["results"][0]["details"]["witness"] == gb["details"]["witness"]


def test_A10_a_value_error_escaping_mid_audit_names_the_users_line(files, capsys):
    code, out, err = _run(AUDIT + ["--mechanism", "mechs.py:Budgeted"], capsys)
    assert code == EXIT_USAGE, (out, err)
    assert "Budgeted raised during the audit: ValueError: privacy budget exhausted (line " in err
    assert "of mechs.py)" in err and err.count("\n") == 1 and "Traceback" not in err


def test_A10_a_mechanism_ignoring_its_generator_is_reported_not_reproducible(files, capsys):
    code, out, err = _run(AUDIT + ["--mechanism", "mechs.py:Unseeded", "--json", "r.json"],
                          capsys)
    assert code in (EXIT_OK, EXIT_VIOLATION), err
    assert "NOT REPRODUCIBLE: the mechanism draws from randomness it is not handed" in out
    # the header says what is lost besides the seed: the grey-box coupling and its bound
    assert "grey-box auditor cannot couple D and D' on one seed" in " ".join(out.split())
    (rep,) = json.loads((files / "r.json").read_text())["reports"]
    assert rep["inputs"]["reproducible"] is False
    code, out, _ = _run(AUDIT + ["--mechanism", "mechs.py:GoodMean", "--samples", "4000",
                                 "--json", "g.json"], capsys)
    (rep,) = json.loads((files / "g.json").read_text())["reports"]
    assert "NOT REPRODUCIBLE" not in out and "reproducible" not in rep["inputs"]


def test_A10_debug_prints_the_users_traceback(files, capsys):
    code, _, err = _run(["--debug"] + AUDIT + ["--mechanism", "broken.py:x"], capsys)
    assert code == EXIT_USAGE and "Traceback" in err and "bad config" in err


@pytest.mark.parametrize(("text", "needle"), [
    ("a,b\n1,x\n", "row 2, column 'b': 'x' is not a number"),
    ("a,b\n1,nan\n", "NaN or inf"),
    ("a,b\n1,\n", "row 2, column 'b' is empty"),
    ("a,b\n", "no data rows"),
    ("", "empty"),
    ("a,a\n1,2\n", "repeats a column"),
    ("a,b\n1,2,3\n", "has 3 cells"),
    ("a;b\n1;0,5\n", "'0,5' is not a number (a decimal comma? write 0.5, not 0,5)"),
])
def test_A10_csv_errors_name_file_row_and_column(tmp_path, text, needle):
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match="d.csv") as info:
        load_data_file(str(path), y="b")
    assert needle in str(info.value)


def test_A10_data_files_read_as_documented(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("x1,y,x2\n0,0.5,1\n1,-0.5,2\n")
    d = load_data_file(str(csv), y="y")
    np.testing.assert_array_equal(d.X, [[0, 1], [1, 2]])
    np.testing.assert_array_equal(d.y, [0.5, -0.5])
    one = tmp_path / "one.csv"
    one.write_text("y\n1\n2\n3\n")
    d1 = load_data_file(str(one))
    np.testing.assert_array_equal(d1.X.ravel(), [0, 1, 2])  # public positions
    for sep in (";", "\t"):  # a spreadsheet's export: the header's separator is used
        other = tmp_path / "sep.csv"
        other.write_text("x1,y,x2\n0,0.5,1\n1,-0.5,2\n".replace(",", sep))
        d2 = load_data_file(str(other), y="y")
        np.testing.assert_array_equal(d2.X, d.X)
        np.testing.assert_array_equal(d2.y, d.y)
    npz = tmp_path / "d.npz"
    np.savez(npz, X=np.ones((3, 2)), y=np.zeros(3))
    assert load_data_file(str(npz)).dim == 2
    np.savez(tmp_path / "bad.npz", X=np.ones(3))
    with pytest.raises(ValueError, match=r"missing array\(s\) \['y'\]"):
        load_data_file(str(tmp_path / "bad.npz"))
    np.savez(tmp_path / "nan.npz", X=np.ones(2), y=np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="nan.npz: y contains 1 non-finite"):
        load_data_file(str(tmp_path / "nan.npz"))
    (tmp_path / "d.parquet").write_text("")
    with pytest.raises(ValueError, match="unknown file type"):
        load_data_file(str(tmp_path / "d.parquet"))


def test_A10_new_mechanism_prints_and_writes_a_template_that_audits_cleanly(tmp_path, capsys):
    code, out, _ = _run(["new-mechanism"], capsys)
    assert code == EXIT_OK and out == TEMPLATE
    path = tmp_path / "mine.py"
    code, out, _ = _run(["new-mechanism", str(path)], capsys)
    assert code == EXIT_OK and path.read_text() == TEMPLATE and f"{path}:{TEMPLATE_NAME}" in out
    code, _, err = _run(["new-mechanism", str(path)], capsys)  # never overwrites
    assert code == EXIT_USAGE and "exists" in err
    code, out, err = _run(AUDIT + ["--mechanism", f"{path}:{TEMPLATE_NAME}", "--samples", "4000"],
                          capsys)
    assert code == EXIT_OK, out + err
    assert err == ""  # the template declares its domain
    for auditor in ("sensitivity", "model-check", "whitebox", "blackbox", "precision"):
        assert f"  {auditor}" in out and f"{auditor:<12} SKIPPED" not in out


def test_A10_template_and_script_end_to_end_through_a_subprocess(tmp_path):
    # The installed entry point, as a user runs it: write the template, audit it, exit 0.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-m", "dpgp_audit"]
    subprocess.run(run + ["new-mechanism", "mine.py"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    res = subprocess.run(run + ["audit", "--mechanism", "mine.py:MyMechanism", "--seed", "1",
                                "--samples", "4000", "--no-progress"], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Audit of mine.py:MyMechanism: NO_EVIDENCE" in res.stdout


def test_A10_make_audit_with_a_tmp_mechanism_and_csv(tmp_path):
    # The make-level path: MECH=FILE.py:NAME DATA=FILE.csv Y=COL reach the command line,
    # spaces in the folder and the column names included
    tmp_path = tmp_path / "my folder"
    tmp_path.mkdir()
    (tmp_path / "mechs.py").write_text(MECHS)
    x = np.linspace(0, 1, 30)
    (tmp_path / "d.csv").write_text("time (s),y value\n"
                                    + "".join(f"{a},{np.sin(3 * a):.5f}\n" for a in x))
    make = ["make", "-s", "-C", str(ROOT), "--no-print-directory", "-o", ".venv/.installed-core",
            f"PY={sys.executable}", f"MECH={tmp_path}/mechs.py:NoisyMean",
            f"DATA={tmp_path}/d.csv", "Y=y value", "X=time (s)", "SEED=2", "audit"]
    res = subprocess.run(make, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    # make turns the program's exit status 1 (a violation) into its own status 2
    assert res.returncode == 2 and "VIOLATION" in res.stdout, res.stdout + res.stderr
    assert f"source: {tmp_path}/mechs.py" in res.stdout
    assert f"data: {tmp_path}/d.csv" in res.stdout


class _Measured:
    """Stands in for an adapted library: a measured cost, no declared one."""

    def __init__(self, measured, declared=None):
        self.cost_per_draw_s = measured
        if declared is not None:
            self.declared_cost_per_draw_s = declared


@pytest.mark.parametrize(("mech", "printed"), [
    (_Measured(0.003), True),  # 3 ms a release: about 40 min at the 200 000 cap
    (_Measured(1e-7), False),  # well under NOTE_MINUTES
    (_Measured(0.003, declared=0.003), False),  # declared: the planner plans from that
    (_Measured(None), False), (_Measured(float("nan")), False), (_Measured(True), False),
])
def test_A10_measured_cost_is_advice_on_stderr_never_a_plan(mech, printed, capsys):
    from dpgp_audit.cli import _note_measured_cost, estimate_draws

    _note_measured_cost("lib:f", mech, None, 200_000, "sequential")
    err = capsys.readouterr().err
    assert bool(err) is printed
    if printed:
        minutes = estimate_draws(200_000, "sequential") * 0.003 / 60
        assert f"about {minutes:.3g} min" in err and "declared_cost_per_draw_s = 0.003" in err
        assert "never uses this timing" in err


class _Ticking:
    """A release that costs ``fixed + per_draw * n`` seconds of a fake clock per call."""

    def __init__(self, fixed, per_draw):
        self.now, self.fixed, self.per_draw, self.calls = 0.0, fixed, per_draw, []
        self.claim = None

    def clock(self):
        return self.now

    def sample(self, data, n, rng):
        self.calls.append(n)
        self.now += self.fixed + self.per_draw * n
        return np.zeros((n, 1))


@pytest.mark.parametrize(("fixed", "per_draw", "calls"), [
    (0.0, 0.002, [1, 2, 4, 8, 16, 32]),  # a loop over draws: 32 draws pass 0.05 s
    (0.005, 1e-7, [2**k for k in range(13)]),  # vectorised: stops at 4096 draws
    (2.0, 0.0, [1]),  # seconds a call: timed once
])
def test_A10_the_timing_of_a_users_mechanism_doubles_until_it_means_something(
        fixed, per_draw, calls):
    from dpgp_audit.cli import TIMING_MAX_DRAWS, TIMING_MIN_S, _time_draws

    mech = _Ticking(fixed, per_draw)
    seconds, n = _time_draws(mech, None, np.random.default_rng(0), clock=mech.clock)
    assert mech.calls == calls and n == calls[-1]
    assert seconds == pytest.approx(fixed / n + per_draw)
    assert fixed + per_draw * n >= TIMING_MIN_S or n == TIMING_MAX_DRAWS


def test_A10_a_users_mechanism_declares_no_cost_by_its_entry_and_gets_the_timed_note(
        files, capsys):
    from dpgp_audit.catalogue import Entry, get
    from dpgp_audit.cli import _declared_seconds_per_draw, _note_measured_cost, estimate_draws
    from dpgp_audit.contract import COST_CLASSES

    user = Entry("mine.py:M", "user", "M from mine.py", lambda _d, **_k: None, lambda: None)
    catalogue = get("P.1/gaussian-sum")
    assert _declared_seconds_per_draw(object(), user) is None  # its class is only a default
    assert _declared_seconds_per_draw(object(), catalogue) == COST_CLASSES["vectorised"]
    _note_measured_cost(user.id, object(), user, 200_000, "sequential", timed=(0.002, 32))
    err = capsys.readouterr().err
    minutes = estimate_draws(200_000, "sequential") * 0.002 / 60
    assert err.startswith("note: mine.py:M took 0.002 s per release here (timed on 32 draws)")
    assert f"about {minutes:.3g} min" in err and "declared_cost_per_draw_s = 0.002" in err
    _note_measured_cost(user.id, object(), user, 200_000, "sequential", timed=(1e-7, 4096))
    assert capsys.readouterr().err == ""  # a short estimate: nothing to say


def test_A10_a_user_sample_failing_mid_audit_is_the_users_error_not_the_kits(files, capsys):
    # the probe on the data passes; a generated neighbour (a target at the domain's end)
    # makes the user's code raise: exit 2 naming the user's line, not exit 3 ("a kit bug")
    code, out, err = _run(AUDIT + ["--mechanism", "mechs.py:FailsAtTheBound"], capsys)
    line = 1 + [t.strip() for t in MECHS.splitlines()].index(
        "scale = self.scales[bool(np.max(np.abs(y)) == 2.0)]  # KeyError at the bound")
    assert code == EXIT_USAGE, err
    assert err.startswith("dpgp-audit audit: error: FailsAtTheBound.sample failed during the "
                          f"audit: KeyError: True (line {line} "
                          "of mechs.py); a mechanism must release, or refuse with a "
                          "ValueError, every dataset in its declared domain"), err
    assert err.count("\n") == 1 and "Traceback" not in err and "Audit of" not in out


def test_A10_all_on_a_users_file_skips_the_entries_that_cannot_take_it(files, capsys):
    # two input columns: the 1-D factories and the classifiers (labels in {-1, +1}) refuse
    # the file; once the first of them ended the whole run with a kernel's shape error
    rng = np.random.default_rng(0)
    rows = "".join(f"{a:.6f},{b:.6f},{0.9 * np.sin(6 * a):.6f}\n" for a, b in rng.random((30, 2)))
    (files / "two.csv").write_text("x1,x2,y\n" + rows)
    code, out, err = _run(AUDIT + ["--all", "--data", "two.csv", "--y", "y", "--auditor",
                                   "whitebox", "--json", "r.json"], capsys)
    assert code in (EXIT_OK, EXIT_VIOLATION), err
    doc = json.loads((files / "r.json").read_text())
    skipped = {s["mechanism"]: s["why"] for s in doc["skipped"]}
    assert "1-D grid" in skipped["S18.1/standard"] and "--x COL" in skipped["S18.1/standard"]
    assert "declared labels {-1, 1}" in skipped["S21.3/laplace-classification"]
    audited = {r["mechanism"] for r in doc["reports"]}
    assert not audited & set(skipped) and {"P.1/gaussian-sum", "S18.3/binning-laplace"} <= audited
    assert f"{len(skipped)} mechanism(s) skipped" in out
    assert "note: skipped S18.1/standard: " in err and "Traceback" not in err


def test_A10_one_entry_that_cannot_take_the_file_is_still_an_error(files, capsys):
    rng = np.random.default_rng(0)
    rows = "".join(f"{a:.6f},{b:.6f},{0.5 * a:.6f}\n" for a, b in rng.random((10, 2)))
    (files / "two.csv").write_text("x1,x2,y\n" + rows)
    code, _, err = _run(AUDIT + ["--mechanism", "S18.1/standard", "--data", "two.csv",
                                 "--y", "y"], capsys)
    assert code == EXIT_USAGE and "1-D grid" in err and err.count("\n") == 1


SYSTEMATIC = textwrap.dedent('''
    import math

    import numpy as np

    from dpgp_audit import PublicDomain, PureDP, outputs_only
    from dpgp_audit.privacy.float_release import (laplace_noise_exact_uniform, release_grid,
                                                  round_to_grid)


    class SystematicSum:
        """Every 4th row from a random start, noised as if Poisson-sampled with q = 1/4."""
        claim = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))

        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)
            sums = np.array([math.fsum(y[r::4]) for r in range(4)])
            eps0 = math.log(1.0 + (math.e - 1.0) / 0.25)  # the amplification formula, misapplied
            scale = 2.0 / eps0
            start = rng.integers(0, 4, size=n)
            noise = laplace_noise_exact_uniform(scale, (n, 1), rng)
            return round_to_grid(sums[start][:, None], noise,
                                 release_grid(math.sqrt(2.0) * scale))
''')


def test_A8_pairs_bets_on_every_generated_pair_where_the_pilot_cannot_rank(tmp_path, capsys):
    """A mixture release (systematic sampling claimed as Poisson; true ε 1.54 on its worst
    generated pair, exact 4-component Laplace mixture) breaks its claim on pairs the pilot
    ranks no higher than others: on this seed the two confirmed pairs hold and the default
    finds nothing, while ``--pairs 100`` bets on every generated pair and certifies it
    (the fourth hunt of unplanted bugs, docs/benchmarks.md)."""
    (tmp_path / "systematic.py").write_text(SYSTEMATIC)
    y = np.random.default_rng(20261).integers(-8, 9, size=40) / 8.0
    x = np.round(np.linspace(0.0, 1.0, 40), 6)
    np.savetxt(tmp_path / "data.csv", np.c_[x, y], delimiter=",", header="x,y", comments="",
               fmt="%.6g")
    argv = ["audit", "--mechanism", f"{tmp_path / 'systematic.py'}:SystematicSum",
            "--data", str(tmp_path / "data.csv"), "--y", "y", "--seed", "2",
            "--auditor", "blackbox", "--no-progress"]
    assert main(argv) == EXIT_OK
    default = capsys.readouterr().out
    assert "2 pair(s) bet on together" in default
    assert main([*argv, "--pairs", "100"]) == EXIT_VIOLATION
    every = capsys.readouterr().out
    assert "78 pair(s) bet on together" in every  # every generated pair the data allow
    assert main([*argv, "--pairs", "0"]) == EXIT_USAGE
    assert "--pairs must be >= 1, got 0" in capsys.readouterr().err


def test_A8_evidence_lets_every_pair_bet_with_draws_that_follow_its_wealth(tmp_path, capsys):
    """The same mixture release and seed: ``--evidence`` bets on every generated pair with a
    quarter of the wealth, each drawing 4 096 per side and then only while its wealth grows,
    and certifies it at a fraction of ``--pairs 100``'s draws."""
    (tmp_path / "systematic.py").write_text(SYSTEMATIC)
    y = np.random.default_rng(20261).integers(-8, 9, size=40) / 8.0
    x = np.round(np.linspace(0.0, 1.0, 40), 6)
    np.savetxt(tmp_path / "data.csv", np.c_[x, y], delimiter=",", header="x,y", comments="",
               fmt="%.6g")
    js = tmp_path / "e.json"
    argv = ["audit", "--mechanism", f"{tmp_path / 'systematic.py'}:SystematicSum",
            "--data", str(tmp_path / "data.csv"), "--y", "y", "--seed", "2",
            "--auditor", "blackbox", "--no-progress"]
    assert main([*argv, "--evidence", "--json", str(js)]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "2 pair(s) bet on together" in out and "76 more pair(s) bet as evidence" in out
    rep = json.loads(js.read_text())["reports"][0]
    assert rep["inputs"]["evidence"] is True  # recorded, so the run can be repeated
    bb = rep["results"][0]
    ev = bb["details"]["evidence"]
    assert bb["details"]["witness_label"] not in bb["details"]["pair_labels"]  # an evidence pair
    assert ev["draws_per_side"] < 78 * 200_000 / 20
    assert main([*argv, "--evidence", "--mode", "fixed"]) == EXIT_USAGE
    assert "--evidence needs the sequential mode" in capsys.readouterr().err


def test_A8_the_draw_estimate_counts_the_evidence_pairs():
    from dpgp_audit.audit.blackbox.sequential import EVIDENCE_KEEP, EVIDENCE_WARMUP
    from dpgp_audit.cli import estimate_draws

    base = estimate_draws(200_000, "sequential")
    # each of about 78 pairs: its fitting round (16) and warm-up, then at most KEEP caps
    assert estimate_draws(200_000, "sequential", evidence=True) - base == \
        2 * (78 * (16 + EVIDENCE_WARMUP) + EVIDENCE_KEEP * 200_000)
    assert estimate_draws(640, "sequential", evidence=True) - estimate_draws(640, "sequential") \
        == 2 * (78 * (16 + 20) + EVIDENCE_KEEP * 640)
    assert estimate_draws(20_000, "fixed", evidence=True) == estimate_draws(20_000, "fixed")
    # memory: every evidence pair keeps both sides' raw draws until its wealth decides
    from dpgp_audit.cli import estimate_memory_bytes

    assert estimate_memory_bytes(None, 200_000, 3, evidence=True) - \
        estimate_memory_bytes(None, 200_000, 3) == 16 * 78 * (16 + EVIDENCE_WARMUP) * 3


def test_A8_the_draw_estimate_scales_with_the_confirmed_pairs():
    from dpgp_audit.cli import estimate_draws

    base = estimate_draws(200_000, "sequential")
    assert estimate_draws(200_000, "sequential", 2) == base
    assert estimate_draws(200_000, "sequential", 100) - base == 2 * 98 * 200_000
