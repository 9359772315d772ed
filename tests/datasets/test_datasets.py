"""Data loaders and generators: the !Kung mirror/download logic, synthetic generators."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import numpy as np
import pytest

from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets import kung
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.datasets.kung import (
    DATA_DIR_ENV,
    KUNG_SHA256,
    DataHashError,
    DataUnavailableError,
    KungData,
    kung_dataset,
    kung_standin,
    load_kung,
    load_kung_or_standin,
    read_kung_csv,
    running_in_ci,
)
from dpgp_audit.datasets.synthetic import (
    gp_draw,
    sawtooth,
    sawtooth_function,
    sinc_data,
    sinc_function,
    stripe_labels,
    stripes_2d,
    stripes_grid,
)
from dpgp_audit.gp.kernels import EQ, Matern32


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    """Every download attempt fails like an offline machine; the cache is an empty dir."""
    calls = []

    def offline(url, known_hash, fname, path):
        calls.append(url)
        raise ConnectionError("simulated: no network")

    monkeypatch.setattr(kung, "_download", offline)
    monkeypatch.setattr(kung, "_cache_dir", lambda: tmp_path / "cache")
    return calls


# ------------------------------------------------------------------ !Kung from the mirror
def test_kung_row_counts_from_mirror(kung_mirror, no_network):
    all_rows = load_kung()
    assert no_network == []  # the mirror was used, no download attempted
    assert all_rows.n == 544
    females = load_kung(females_only=True)
    assert females.n == 287  # S18 §"!Kung San women", S21 §6.1
    assert np.all(females.male == 0)
    # the data README says "0–88 years": 88 is the oldest person overall (a man);
    # the oldest woman is 85.6
    assert all_rows.age.min() == 0 and all_rows.age.max() == 88
    assert females.age.min() == 0 and females.age.max() == pytest.approx(85.6)
    adults = load_kung(adults_only=True)
    assert adults.n == 352 and np.all(adults.age >= 18)
    assert load_kung(females_only=True, adults_only=True).n == 187


def test_kung_values_match_independent_csv_parse(kung_mirror):
    with open(kung_mirror / "howell1.csv", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    data = load_kung()
    for j in (0, 1, 271, 543):
        assert data.height[j] == float(rows[j]["height"])
        assert data.weight[j] == float(rows[j]["weight"])
        assert data.age[j] == float(rows[j]["age"])
        assert data.male[j] == float(rows[j]["male"])
    assert not data.height.flags.writeable
    assert 50 < data.height.mean() < 200  # centimetres


def test_kung_to_dataset(kung_mirror):
    ds = kung_dataset()
    assert isinstance(ds, Dataset) and ds.n == 287 and ds.dim == 1
    females = load_kung(females_only=True)
    np.testing.assert_array_equal(ds.X[:, 0], females.age)
    np.testing.assert_array_equal(ds.y, females.height)
    ds2 = females.to_dataset(("age", "weight"), "height")
    assert ds2.dim == 2
    with pytest.raises(ValueError, match="unknown"):
        females.to_dataset("shoe_size")


# ------------------------------------------------------------------ integrity / offline errors
def test_corrupted_mirror_raises_hash_error(monkeypatch, tmp_path, no_network):
    good = (b'"height";"weight";"age";"male"\n151.765;47.8256065;63;1\n')
    (tmp_path / "howell1.csv").write_bytes(good)
    assert hashlib.sha256(good).hexdigest() != KUNG_SHA256
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataHashError, match="SHA-256"):
        load_kung()
    assert no_network == []


def test_one_flipped_byte_is_caught(monkeypatch, tmp_path, kung_file):
    raw = bytearray(kung_file.read_bytes())
    raw[100] = ord("7") if raw[100] != ord("7") else ord("8")
    (tmp_path / "howell1.csv").write_bytes(bytes(raw))
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataHashError, match="corrupt"):
        load_kung()


def test_offline_without_mirror_gives_clear_error(monkeypatch, no_network):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    with pytest.raises(DataUnavailableError) as info:
        load_kung()
    msg = str(info.value)
    assert DATA_DIR_ENV in msg and "howell1.csv" in msg and KUNG_SHA256 in msg
    assert isinstance(info.value, OSError)
    assert len(no_network) == 1 and no_network[0].startswith("https://")


def test_offline_with_empty_mirror_dir_mentions_it(monkeypatch, tmp_path, no_network):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataUnavailableError, match="holds no howell1.csv"):
        load_kung()


# ------------------------------------------------------------------ notebooks: data or stand-in
@pytest.mark.parametrize("ci", ["true", "TRUE", "1", "yes"])
def test_standin_refused_under_ci(monkeypatch, tmp_path, no_network, ci):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))  # CI's mirror variable, but no file there
    assert running_in_ci()
    with pytest.raises(DataUnavailableError, match="CI=true") as info:
        load_kung_or_standin(np.random.default_rng(0), females_only=True)
    assert "refusing the synthetic stand-in" in str(info.value)
    assert "holds no howell1.csv" in str(info.value)  # the cause is kept in the message
    assert isinstance(info.value.__cause__, DataUnavailableError)


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_standin_with_note_outside_ci(monkeypatch, no_network, ci):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert not running_in_ci()
    data, note = load_kung_or_standin(np.random.default_rng(1), females_only=True)
    assert "SYNTHETIC" in note and "could not be loaded" in note
    assert data.n == 287 and np.all(data.male == 0)  # shaped like the 287 women
    everyone, _ = load_kung_or_standin(np.random.default_rng(1))
    assert everyone.n == 544 and int(everyone.male.sum()) == 544 - 287
    adults, _ = load_kung_or_standin(np.random.default_rng(1), adults_only=True)
    assert adults.n > 0 and adults.age.min() >= 18.0
    assert 0.0 <= everyone.age.min() and everyone.age.max() <= 88.0
    assert len(no_network) == 3  # each call tried the real data first


def test_real_data_is_used_when_present_and_rng_untouched(monkeypatch, kung_mirror):
    monkeypatch.setenv("CI", "true")
    g = np.random.default_rng(3)
    data, note = load_kung_or_standin(g, females_only=True)
    assert note == ""
    ref = load_kung(females_only=True)
    np.testing.assert_array_equal(data.height, ref.height)
    assert data.n == 287
    # no draw was taken: the notebook's stream is the same with or without this call
    assert g.bit_generator.state == np.random.default_rng(3).bit_generator.state


def test_corrupt_file_is_never_replaced_by_the_standin(monkeypatch, tmp_path, no_network):
    monkeypatch.delenv("CI", raising=False)
    (tmp_path / "howell1.csv").write_bytes(b'"height";"weight";"age";"male"\n150;40;30;0\n')
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataHashError):
        load_kung_or_standin(np.random.default_rng(0))


def test_standin_requires_a_generator():
    with pytest.raises(TypeError, match="rng"):
        kung_standin(7)


def test_download_path_used_without_mirror(monkeypatch, tmp_path):
    # a fake "download" that delivers the file: load_kung parses what pooch returns
    src = tmp_path / "fetched.csv"
    src.write_text('"height";"weight";"age";"male"\n150;40;30;0\n160;50;40;1\n')
    seen = {}

    def fake(url, known_hash, fname, path):
        seen.update(url=url, known_hash=known_hash, fname=fname)
        return str(src)

    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(kung, "_download", fake)
    data = load_kung(females_only=True)
    assert data.n == 1 and data.height[0] == 150
    assert seen == {"url": kung.KUNG_URL, "known_hash": KUNG_SHA256, "fname": "howell1.csv"}


def test_download_hash_mismatch_is_a_hash_error(monkeypatch, tmp_path):
    def bad_hash(url, known_hash, fname, path):
        raise ValueError("SHA256 hash of downloaded file (abc) does not match the known hash")

    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(kung, "_download", bad_hash)
    monkeypatch.setattr(kung, "_cache_dir", lambda: tmp_path)
    with pytest.raises(DataHashError, match="upstream file may have changed"):
        load_kung()


def test_read_kung_csv_rejects_bad_files(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("a;b;c;d\n1;2;3;4\n")
    with pytest.raises(ValueError, match="header"):
        read_kung_csv(p)
    p.write_text('"height";"weight";"age";"male"\n1;2;x;0\n')
    with pytest.raises(ValueError, match="non-numeric"):
        read_kung_csv(p)
    p.write_text("")
    with pytest.raises(ValueError, match="empty"):
        read_kung_csv(p)
    with pytest.raises(ValueError, match="same length"):
        KungData(np.ones(2), np.ones(2), np.ones(3), np.ones(2))


# ------------------------------------------------------------------ generators
def test_default_dataset_still_there():
    d = default_dataset()
    assert d.n == 20 and np.all(np.abs(d.y) <= 1)


def test_sinc(rng):
    d = sinc_data(1024, 0.1, rng)
    assert d.n == 1024 and d.dim == 1
    assert d.X.min() >= -4 and d.X.max() <= 4
    resid = d.y - np.sin(2 * d.X[:, 0]) / (2 * d.X[:, 0])
    assert 0.09 < resid.std() < 0.11
    assert sinc_function(0.0) == 1.0
    np.testing.assert_allclose(sinc_function([np.pi / 4]), [1 / (np.pi / 2)])
    noiseless = sinc_data(5, 0.0, np.random.default_rng(0))
    np.testing.assert_allclose(noiseless.y, sinc_function(noiseless.X[:, 0]))


@pytest.mark.parametrize("make", [
    lambda r: sinc_data(30, 0.1, r),
    lambda r: sawtooth(30, r, period=2.0),
    lambda r: stripes_2d(40, r),
    lambda r: Dataset(np.zeros((4, 1)), gp_draw(EQ(), np.linspace(0, 1, 4), r, 0.1)),
])
def test_generators_deterministic_under_seed(make):
    a = make(np.random.default_rng(123))
    b = make(np.random.default_rng(123))
    c = make(np.random.default_rng(124))
    assert a == b
    assert a != c


def test_generators_require_generator():
    for call in (lambda: sinc_data(5, 0.1, 0), lambda: sawtooth(5, 42),
                 lambda: stripes_2d(5, None), lambda: gp_draw(EQ(), [0.0, 1.0], 1)):
        with pytest.raises(TypeError, match="Generator"):
            call()


def test_gp_draw_shapes_and_covariance(rng):
    X = np.linspace(0, 3, 6)
    f = gp_draw(EQ(0.7, 2.0), X, rng)
    assert f.shape == (6,)
    many, lat = gp_draw(Matern32(1.0, 1.5), X, rng, noise_std=0.3, size=20000,
                        return_latent=True)
    assert many.shape == lat.shape == (20000, 6)
    K = Matern32(1.0, 1.5)(X)
    np.testing.assert_allclose(np.cov(lat.T), K, atol=0.08)
    np.testing.assert_allclose(np.cov(many.T), K + 0.09 * np.eye(6), atol=0.08)
    dup = gp_draw(EQ(), [0.5, 0.5, 1.0], rng)  # singular K: no jitter needed
    assert dup[0] == pytest.approx(dup[1], abs=1e-7)
    with pytest.raises(ValueError, match="noise_std"):
        gp_draw(EQ(), X, rng, noise_std=-1.0)


def test_sawtooth(rng):
    d = sawtooth(200, rng, period=2.0, noise_std=0.0, direction=-1, phase=0.3)
    assert d.n == 200 and d.X.min() >= -2 and d.X.max() <= 2
    x = d.X[:, 0]
    ref = 2 / np.pi * (np.sin(2 * np.pi * (-x) / 2 + 0.3) + np.sin(4 * np.pi * (-x) / 2 + 0.3) / 2)
    np.testing.assert_allclose(d.y, ref, atol=1e-12)
    # periodic with the given period; many terms approach the sawtooth 1 - θ/π on (0, 2π)
    t = np.linspace(0.1, 0.9, 7)
    np.testing.assert_allclose(sawtooth_function(t + 2.0, period=2.0),
                               sawtooth_function(t, period=2.0), atol=1e-12)
    approx = sawtooth_function(t, period=1.0, n_terms=4000)
    np.testing.assert_allclose(approx, 1 - 2 * t, atol=2e-3)
    rnd = sawtooth(10, rng)
    assert "direction=" in rnd.name
    with pytest.raises(ValueError, match="direction"):
        sawtooth_function(t, period=1.0, direction=0.5)
    with pytest.raises(ValueError, match="period"):
        sawtooth(5, rng, period=0.0)


def test_stripes(rng):
    d = stripes_2d(200, rng, label_noise=0.0)
    assert d.n == 200 and d.dim == 2
    assert set(np.unique(d.y)) <= {0.0, 1.0}
    assert np.all((d.X >= 0) & (d.X <= 10))
    # density gradient: more points in the bottom half than in the top half
    assert np.sum(d.X[:, 1] < 5) > 2 * np.sum(d.X[:, 1] >= 5)
    # labels from an independent loop implementation of the stripe rule
    ref = [int((x1 + x2) / np.sqrt(2) // 3.5) % 2 for x1, x2 in d.X]
    np.testing.assert_array_equal(d.y, ref)
    noisy = stripes_2d(4000, np.random.default_rng(1), label_noise=0.2)
    flips = np.mean(noisy.y != stripe_labels(noisy.X))
    assert 0.17 < flips < 0.23
    grid = stripes_grid()
    assert grid.n == 100 and grid.y.sum() == 50  # S21 §6.5: 50 of each class
    with pytest.raises(ValueError, match="label_noise"):
        stripes_2d(5, rng, label_noise=0.7)


# ------------------------------------------------------------------ the local resolver
def test_kung_local_path_follows_the_package_order(monkeypatch, tmp_path, kung_file,
                                                   no_network):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    assert kung.kung_local_path() is None  # empty cache, no mirror: nothing, no download
    (cache / "howell1.csv").write_bytes(kung_file.read_bytes())
    assert kung.kung_local_path() == cache / "howell1.csv"  # the pooch cache entry
    # ... the very file pooch.retrieve returns from that cache without a download
    from pooch import retrieve
    assert Path(retrieve(kung.KUNG_URL, known_hash=f"sha256:{KUNG_SHA256}",
                         fname="howell1.csv", path=cache)) == cache / "howell1.csv"
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "howell1.csv").write_bytes(kung_file.read_bytes())
    monkeypatch.setenv(DATA_DIR_ENV, str(mirror))
    assert kung.kung_local_path() == mirror / "howell1.csv"  # the mirror comes first
    (cache / "howell1.csv").write_bytes(b"stale")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "empty"))
    assert kung.kung_local_path() is None  # a corrupt cache entry does not count


def test_tests_carry_no_machine_path():
    here = Path(__file__).resolve().parent
    machine_prefixes = tuple("/" + d + "/" for d in ("work", "home", "Users", "tmp"))
    offenders = [p.name for ext in ("py", "yaml", "cfg") for p in here.rglob(f"*.{ext}")
                 if any(s in p.read_text(encoding="utf-8") for s in machine_prefixes)]
    assert offenders == []
