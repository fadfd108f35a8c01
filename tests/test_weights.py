"""skinkit.weights: normalize, prune, limit, quantize, pack / unpack, dense conversions and the
glTF validator (DESIGN.md section 3)."""
import numpy as np
import pytest

from skinkit import weights as W


def random_influences(V=300, K=4, J=12, seed=0, dtype=np.float64, zeros=True):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.choice(J, K, replace=False) for _ in range(V)]).astype(np.int32)
    w = rng.random((V, K)) ** 3
    if zeros:
        w[rng.random((V, K)) < 0.25] = 0
        w[0] = 0  # one row with no weight at all
    w = w.astype(dtype)
    return idx, w


def dense_ref(idx, w, J):
    """Slow and obvious: loop over every slot."""
    f = w.astype(np.float64)
    if w.dtype == np.uint8:
        f = f / 255
    elif w.dtype == np.uint16:
        f = f / 65535
    D = np.zeros((len(w), J))
    for v in range(len(w)):
        for s in range(w.shape[1]):
            if f[v, s] != 0:
                D[v, idx[v, s]] += f[v, s]
    return D


def unchanged(*arrays):
    """Copies to compare with after a call: inputs are never modified."""
    return [a.copy() for a in arrays]


# -- dense ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.uint16])
def test_to_dense_matches_loop(dtype):
    idx, w = random_influences()
    if dtype in (np.uint8, np.uint16):
        w = W.quantize(w, bits=8 if dtype == np.uint8 else 16)
    else:
        w = w.astype(dtype)
    idx[w == 0] = 99  # never read where the weight is zero
    D = W.to_dense(idx, w, 12)
    assert D.shape == (300, 12)
    assert D.dtype == (dtype if dtype in (np.float32, np.float64) else np.float64)
    np.testing.assert_allclose(D, dense_ref(idx, w, 12), rtol=1e-6)


def test_to_dense_sums_duplicates_and_checks_range():
    idx = np.array([[2, 2, 0], [1, 5, 0]])
    w = np.array([[0.25, 0.5, 0.25], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(W.to_dense(idx, w, 3), [[0.25, 0, 0.75], [0, 1, 0]])
    with pytest.raises(IndexError, match="vertex 1"):
        W.to_dense(idx, np.array([[1.0, 0, 0], [0.5, 0.5, 0]]), 3)


def test_from_dense_round_trip():
    idx, w = random_influences(zeros=True)
    D = W.to_dense(idx, w, 12)
    i2, w2 = W.from_dense(D)
    assert i2.dtype == np.int32 and i2.shape[1] == (D != 0).sum(1).max()
    np.testing.assert_array_equal(W.to_dense(i2, w2, 12), D)
    assert np.all(np.diff(w2, axis=1) <= 0)
    assert np.all(i2[w2 == 0] == 0)
    # k larger than J pads, k smaller keeps the largest
    i3, w3 = W.from_dense(D[:, :3], k=5)
    assert i3.shape == (300, 5) and np.all(w3[:, 3:] == 0)
    i4, w4 = W.from_dense(np.array([[0.1, 0.5, 0.2, 0.5]]), k=2)
    assert i4.tolist() == [[1, 3]] and w4.tolist() == [[0.5, 0.5]]


@pytest.mark.parametrize("bad,what", [(np.nan, "NaN or inf"), (np.inf, "NaN or inf"),
                                      (-np.inf, "NaN or inf"), (-1.0, "negative")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_from_dense_refuses_nan_inf_and_negative(bad, what, dtype):
    D = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0], [0.5, 0.5, 0.0]], dtype=dtype)
    D[2, 1] = bad
    with pytest.raises(ValueError, match=rf"^dense: {what}.* at vertex 2$"):
        W.from_dense(D)
    with pytest.raises(ValueError, match="dense"):
        W.from_dense(D, k=1)


# -- normalize, prune, limit ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalize(dtype):
    idx, w = random_influences(dtype=dtype)
    keep = unchanged(idx, w)
    i2, w2 = W.normalize(idx, w)
    assert np.array_equal(idx, keep[0]) and np.array_equal(w, keep[1])
    assert w2.dtype == dtype and i2.dtype == idx.dtype
    s = w.astype(np.float64).sum(1)
    np.testing.assert_allclose(w2.sum(1)[s > 0], 1, atol=1e-6)
    np.testing.assert_allclose(w2[s > 0], (w[s > 0] / s[s > 0, None]), rtol=1e-6)
    assert np.all(w2[s == 0] == 0) and np.all(i2[w2 == 0] == 0)
    i3, w3 = W.normalize(idx, w, zero="root", root=7)
    assert i3[0].tolist() == [7, 0, 0, 0] and w3[0].tolist() == [1, 0, 0, 0]
    with pytest.raises(ValueError, match="vertex 0"):
        W.normalize(idx, w, zero="raise")
    with pytest.raises(ValueError, match="zero"):
        W.normalize(idx, w, zero="drop")


def test_normalize_unorm_keeps_exact_sums():
    idx = np.array([[0, 1, 2]])
    w = np.array([[100, 50, 50]], dtype=np.uint8)
    i2, w2 = W.normalize(idx, w)
    assert w2.dtype == np.uint8 and int(w2.sum()) == 255
    assert w2.tolist() == [[128, 64, 63]] or w2.tolist() == [[127, 64, 64]]


@pytest.mark.parametrize("dtype,big", [(np.float64, 1e308), (np.float32, 3e38)])
def test_normalize_prune_limit_rows_whose_sum_overflows(dtype, big):
    idx = np.array([[0, 1], [2, 3], [4, 5]], dtype=np.int32)
    w = np.array([[big, big], [big, big / 4], [0.75, 0.25]], dtype=dtype)
    expect = np.array([[0.5, 0.5], [0.8, 0.2], [0.75, 0.25]])
    with np.errstate(all="raise"):  # no overflow on the way either
        i2, w2 = W.normalize(idx, w)
        assert w2.dtype == dtype and i2.tolist() == idx.tolist()
        np.testing.assert_allclose(w2, expect, rtol=1e-6)
        np.testing.assert_allclose(W.prune(idx, w, threshold=0.01)[1], expect, rtol=1e-6)
        np.testing.assert_allclose(W.limit(idx, w, 2)[1], expect, rtol=1e-6)
        # unchanged bits where the sum does not overflow
        assert np.array_equal(w2[2:], W.normalize(idx[2:], w[2:])[1])


def test_normalize_checks_root_and_zero():
    idx = np.zeros((2, 3), np.uint8)
    w = np.array([[0.0, 0, 0], [0.5, 0.5, 0]])
    with pytest.raises(ValueError, match=r"\broot must be >= 0"):
        W.normalize(idx, w, zero="root", root=-5)
    with pytest.raises(ValueError, match=r"\broot must fit the indices' dtype uint8"):
        W.normalize(idx, w, zero="root", root=300)
    assert W.normalize(idx, w, zero="root", root=255)[0][0].tolist() == [255, 0, 0]
    for root in ("a", 1.0, True, None):
        with pytest.raises(TypeError, match=r"\broot must be an int"):
            W.normalize(idx, w, zero="root", root=root)
    assert W.normalize(idx, w, zero="root", root=np.int64(3))[0][0].tolist() == [3, 0, 0]
    for zero in (None, 1, np.array(["keep"])):
        with pytest.raises(TypeError, match=r"\bzero\b"):
            W.normalize(idx, w, zero=zero)


def test_prune():
    idx = np.array([[3, 1, 2, 0], [4, 5, 0, 0]])
    w = np.array([[0.6, 0.005, 0.39, 0.005], [0.004, 0.003, 0.0, 0.0]])
    i2, w2 = W.prune(idx, w, threshold=0.01)
    np.testing.assert_allclose(w2[0], [0.6 / 0.99, 0, 0.39 / 0.99, 0])
    assert i2[0].tolist() == [3, 0, 2, 0]
    # the largest influence of a row always survives
    assert i2[1].tolist() == [4, 0, 0, 0] and w2[1].tolist() == [1, 0, 0, 0]
    i3, w3 = W.prune(idx, w, threshold=0.01, normalize=False)
    assert w3[0].tolist() == [0.6, 0, 0.39, 0]
    with pytest.raises(ValueError, match="threshold"):
        W.prune(idx, w, threshold=-1)


def test_prune_checks_threshold_and_normalize():
    idx, w = np.array([[0, 1]]), np.array([[0.75, 0.25]])
    for threshold in ("x", [0.1, 0.2], None, True, np.array([0.1])):
        with pytest.raises(TypeError, match=r"^threshold must be a real number"):
            W.prune(idx, w, threshold=threshold)
    for threshold in (np.nan, np.inf, -0.5, 10**400):
        with pytest.raises(ValueError, match=r"^threshold must be finite and >= 0"):
            W.prune(idx, w, threshold=threshold)
    assert W.prune(idx, w, threshold=np.float32(0.5))[1].tolist() == [[1.0, 0.0]]
    assert W.prune(idx, w, threshold=1)[1].tolist() == [[1.0, 0.0]]
    for normalize in ("no", 0, None, np.array([True, False])):
        with pytest.raises(TypeError, match=r"^normalize must be True or False"):
            W.prune(idx, w, normalize=normalize)
    assert W.prune(idx, w, 0.5, normalize=np.False_)[1].tolist() == [[0.75, 0.0]]


@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_limit(k):
    idx, w = random_influences(K=5)
    keep = unchanged(idx, w)
    i2, w2 = W.limit(idx, w, k)
    assert np.array_equal(idx, keep[0]) and np.array_equal(w, keep[1])
    assert i2.shape == (300, k) and w2.shape == (300, k)
    for v in range(300):
        order = sorted(range(5), key=lambda s: (-w[v, s], idx[v, s]))[:k]
        kept = w[v, order]
        s = kept.sum()
        expect = kept / s if s > 0 else kept
        np.testing.assert_allclose(w2[v, :min(k, 5)], expect, atol=1e-15)
        names = np.where(kept > 0, idx[v, order], 0)
        assert i2[v, :min(k, 5)].tolist() == names.tolist()
    assert np.all(np.diff(w2, axis=1) <= 0)


def test_limit_ties_go_to_the_smaller_joint():
    i2, w2 = W.limit(np.array([[9, 4, 6]]), np.array([[0.25, 0.25, 0.5]]), 2)
    assert i2.tolist() == [[6, 4]]
    np.testing.assert_allclose(w2, [[2 / 3, 1 / 3]])


def test_limit_checks_normalize():
    with pytest.raises(TypeError, match=r"^normalize must be True or False"):
        W.limit(np.array([[0, 1]]), np.array([[0.5, 0.25]]), 1, normalize="no")


# -- quantize, pack -------------------------------------------------------------------------------

@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quantize_round_trip_and_exact_sums(bits, dtype):
    idx, w = random_influences(V=2000, K=6, dtype=dtype)
    w = W.normalize(idx, w)[1]
    keep = w.copy()
    q = W.quantize(w, bits=bits)
    assert np.array_equal(w, keep)
    m = (1 << bits) - 1
    assert q.dtype == (np.uint8 if bits == 8 else np.uint16)
    sums = q.astype(np.int64).sum(1)
    nonzero = w.sum(1) > 0
    assert np.all(sums[nonzero] == m) and np.all(sums[~nonzero] == 0)
    # within one step per weight
    assert np.max(np.abs(q / m - w.astype(np.float64))) < 1 / m
    # largest remainder: the rounding up goes to the largest fractional parts
    x = w.astype(np.float64) / w.astype(np.float64).sum(1, keepdims=True).clip(1e-300) * m
    up = q > np.floor(x)
    frac = x - np.floor(x)
    for v in np.flatnonzero(nonzero)[:200]:
        if up[v].any() and (~up[v]).any():
            assert frac[v][up[v]].min() >= frac[v][~up[v]].max() - 1e-9
    assert W.validate(idx[nonzero], q[nonzero]) == []
    # rows of zeros stay zeros, which glTF's exact-sum rule reports
    probs = W.validate(idx, q)
    assert len(probs) == 1 and f"{(~nonzero).sum()} vertices" in probs[0]


def test_quantize_exact_cases():
    q = W.quantize(np.array([[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0], [1, 0, 0], [0, 0, 0]]))
    assert q.tolist() == [[85, 85, 85], [128, 127, 0], [255, 0, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="bits"):
        W.quantize(np.ones((1, 1)), bits=12)
    with pytest.raises(ValueError, match="negative"):
        W.quantize(np.array([[1.5, -0.5]]))


@pytest.mark.parametrize("bits", [8, 16])
def test_quantize_rows_whose_sum_overflows(bits):
    m = (1 << bits) - 1
    w = np.array([[1e308, 1e308], [1e308, 0.0], [1e308, 1e308 / 4], [0.0, 0.0]])
    with np.errstate(all="raise"):
        q = W.quantize(w, bits=bits)
    assert q.astype(np.int64).sum(1).tolist() == [m, m, m, 0]
    assert q[:3].tolist() == [[m // 2 + 1, m // 2], [m, 0], [round(0.8 * m), round(0.2 * m)]]
    f = np.full((2, 2), 3e38, np.float32)
    assert np.array_equal(W.quantize(f, bits), W.quantize(np.ones((2, 2)), bits))


def test_quantize_bits_must_be_an_int():
    for bits in (8.0, "8", None, True, [8]):
        with pytest.raises(TypeError, match=r"^bits must be"):
            W.quantize(np.ones((1, 2)), bits=bits)
    with pytest.raises(ValueError, match=r"^bits must be 8 or 16"):
        W.quantize(np.ones((1, 2)), bits=np.int64(4))
    assert W.quantize(np.ones((1, 2)), bits=np.int64(16)).dtype == np.uint16


@pytest.mark.parametrize("dtype", [np.float64, np.uint8, np.uint16])
def test_pack_unpack_seed_000(dtype):
    idx, w = random_influences(K=4, zeros=False)
    w = W.normalize(idx, w)[1]
    if dtype != np.float64:
        w = W.quantize(w, bits=8 if dtype == np.uint8 else 16)
    p = W.pack(w)
    assert p.shape == (300, 3) and p.dtype == dtype
    u = W.unpack(p)
    if dtype == np.float64:
        np.testing.assert_allclose(u, w, atol=1e-12)
    else:
        assert np.array_equal(u, w)


def test_pack_refuses_rows_not_summing_to_one():
    with pytest.raises(ValueError, match="vertex 1"):
        W.pack(np.array([[0.5, 0.5], [0.5, 0.4]]))
    with pytest.raises(ValueError, match="vertex 0"):
        W.pack(np.array([[200, 50]], dtype=np.uint8))
    with pytest.raises(ValueError, match="vertex 0"):
        W.unpack(np.array([[0.7, 0.6]]))
    with pytest.raises(ValueError, match="vertex 0"):
        W.unpack(np.array([[200, 100]], dtype=np.uint8))


def test_pack_unpack_check_tol_and_name_packed():
    w = np.array([[0.5, 0.5], [0.9, 0.3]])
    for tol in ("x", None, [1e-6]):
        with pytest.raises(TypeError, match=r"^tol must be a real number"):
            W.pack(w[:1], tol=tol)
        with pytest.raises(TypeError, match=r"^tol must be a real number"):
            W.unpack(w[:, :1], tol=tol)
    for tol in (np.nan, -1e-6, np.inf):  # NaN would switch the sum check off
        with pytest.raises(ValueError, match=r"^tol must be finite and >= 0"):
            W.pack(w, tol=tol)
        with pytest.raises(ValueError, match=r"^tol must be finite and >= 0"):
            W.unpack(np.array([[0.9, 0.3]]), tol=tol)
    for bad in (np.nan, np.inf, -0.5):
        with pytest.raises(ValueError, match=r"^packed: .* at vertex 1$"):
            W.unpack(np.array([[0.5], [bad]]))
    # sums that overflow are not 1 (and not a warning)
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match="vertex 0"):
            W.pack(np.array([[1e308, 1e308]]))
        with pytest.raises(ValueError, match="vertex 0"):
            W.unpack(np.array([[1e308, 1e308]]))


# -- validate / check -----------------------------------------------------------------------------

def good():
    return (np.array([[0, 1, 2, 0], [3, 0, 0, 0]]),
            np.array([[0.5, 0.25, 0.25, 0.0], [1.0, 0.0, 0.0, 0.0]]))


def test_validate_good_rows_report_nothing():
    idx, w = good()
    assert W.validate(idx, w, n_joints=4) == []
    assert W.validate(idx, W.quantize(w)) == []
    assert W.validate(idx, W.quantize(w, 16), n_joints=4) == []
    assert W.check(idx, w, n_joints=4) is None


@pytest.mark.parametrize("bad,rule,exc", [
    ("negative", "must not be negative", ValueError),
    ("duplicate", "must not appear twice", ValueError),
    ("sum", "must sum to 1", ValueError),
    ("range", "within the skin's 4 joints", IndexError),
    ("nan", "finite", ValueError),
    ("unorm", "sum to exactly 255", ValueError),
])
def test_validate_names_each_rule(bad, rule, exc):
    idx, w = good()
    idx = np.concatenate([idx, idx])
    w = np.concatenate([w, w])
    if bad == "negative":
        w[2] = [1.25, -0.25, 0, 0]
    elif bad == "duplicate":
        idx[3] = [2, 2, 0, 0]
        w[3] = [0.5, 0.5, 0, 0]
    elif bad == "sum":
        w[3, 0] = 0.9
    elif bad == "range":
        idx[3, 0] = 4
    elif bad == "nan":
        w[2, 1] = np.nan
    elif bad == "unorm":
        w = W.quantize(w)
        w[3, 0] = 254
    keep = unchanged(idx, w)
    probs = W.validate(idx, w, n_joints=4)
    assert len(probs) >= 1 and rule in probs[0]
    assert "vertex 3" in probs[0] or "vertex 2" in probs[0]
    assert any(rule in p for p in probs)
    with pytest.raises(exc, match=rule.split()[0]):
        W.check(idx, w, n_joints=4)
    assert np.array_equal(idx, keep[0]) and np.array_equal(w, keep[1], equal_nan=True)


def test_validate_tolerance_and_zero_slots():
    idx, w = good()
    w2 = w.copy()
    w2[0, 0] += 5e-7
    assert W.validate(idx, w2) == []
    assert len(W.validate(idx, w2, tol=1e-7)) == 1
    # a joint listed twice with one zero weight is fine; an out-of-range index under a zero
    # weight is never read
    idx2 = np.array([[1, 1, 9, 0]])
    assert W.validate(idx2, np.array([[1.0, 0, 0, 0]]), n_joints=4) == []


@pytest.mark.parametrize("fn", [W.validate, W.check])
def test_validate_and_check_refuse_invalid_tol_and_n_joints(fn):
    """Invalid arguments are the caller's error, not a problem in the weights: they raise."""
    idx, w = good()
    for tol in ("x", None, True, [1e-6]):
        with pytest.raises(TypeError, match=r"^tol must be a real number"):
            fn(idx, w, tol=tol)
    for tol in (np.nan, np.inf, -1e-6):  # NaN used to switch the sum check off
        with pytest.raises(ValueError, match=r"^tol must be finite and >= 0"):
            fn(idx, w, tol=tol)
    for n_joints in ("x", 4.0, True):
        with pytest.raises(TypeError, match=r"^n_joints must be an int"):
            fn(idx, w, n_joints=n_joints)
    for n_joints in (0, -3):
        with pytest.raises(ValueError, match=r"^n_joints must be >= 1"):
            fn(idx, w, n_joints=n_joints)
    assert fn(idx, w, tol=0, n_joints=np.int32(4)) in ([], None)
    # problems in the weights are still reported, not raised, by validate
    with np.errstate(all="raise"):
        assert len(W.validate(idx, np.full(w.shape, 1e308), tol=1)) == 2


def test_validate_never_raises_on_garbage():
    assert "dtype" in W.validate(np.zeros((2, 2)), np.ones((2, 2)))[0]
    assert "shape" in W.validate(np.zeros((2, 3), int), np.ones((2, 2)))[0]
    assert W.validate(np.zeros((2, 2), int), np.ones((2, 2), dtype=np.int8))
    with pytest.raises(TypeError):
        W.check(np.zeros((2, 2)), np.ones((2, 2)))


def test_bad_arguments():
    idx, w = good()
    with pytest.raises(TypeError, match="weights"):
        W.normalize(idx, w.astype(np.int32))
    with pytest.raises(TypeError, match="indices"):
        W.limit(idx.astype(float), w, 2)
    with pytest.raises(ValueError, match="shape"):
        W.limit(idx[:, :2], w, 2)
    with pytest.raises(ValueError, match="k must be >= 1"):
        W.limit(idx, w, 0)
    with pytest.raises(ValueError, match="negative"):
        W.normalize(idx, -w)
    with pytest.raises(ValueError, match="NaN"):
        W.prune(idx, np.full(w.shape, np.nan))


def test_empty():
    idx = np.zeros((0, 4), np.int32)
    w = np.zeros((0, 4))
    assert W.normalize(idx, w)[1].shape == (0, 4)
    assert W.limit(idx, w, 2)[1].shape == (0, 2)
    assert W.quantize(w).shape == (0, 4)
    assert W.to_dense(idx, w, 3).shape == (0, 3)
    assert W.validate(idx, w) == []
