"""skinkit.bind against the slow NumPy rules in skinkit.reference, seeds 001 and 002's cases, and
bad input (DESIGN.md sections 3 and 5)."""
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import skinkit as sk
from skinkit import bind, reference as ref, transforms as tf
from skinkit import weights as W

DTYPES = [np.float32, np.float64]


def tree_skeleton(seed=0, J=9, tails=False):
    """A branching skeleton in a shuffled joint order (parents after children too) with random
    offsets, so ties and order bugs show."""
    rng = np.random.default_rng(seed)
    parents = np.array([-1] + [int(rng.integers(0, j)) for j in range(1, J)])
    perm = rng.permutation(J)
    inv = np.argsort(perm)
    parents = np.where(parents[perm] < 0, -1, inv[np.maximum(parents[perm], 0)])
    local = tf.translation(rng.normal(0, 1.0, (J, 3)))
    t = None
    if tails:
        s = sk.Skeleton(parents, local)
        t = ref.bind_joint_positions(s) + rng.normal(0, 0.7, (J, 3))
    return sk.Skeleton(parents, local, tails=t)


def vertices_around(skel, n=600, seed=1, dtype=np.float64, spread=1.2):
    rng = np.random.default_rng(seed)
    p = ref.bind_joint_positions(skel)
    lo, hi = p.min(0) - spread, p.max(0) + spread
    return rng.uniform(lo, hi, (n, 3)).astype(dtype)


def strided(v):
    """The same vertices as a (V, 3) view into an interleaved (V, 8) buffer, reversed rows."""
    buf = np.zeros((v.shape[0], 8), dtype=v.dtype)
    buf[::-1, 2:5] = v
    view = buf[::-1, 2:5]
    assert not view.flags.c_contiguous and np.array_equal(view, v)
    return view


def check_influences(idx, w, J, V, K, dtype, rows_sum_to_one=True):
    assert idx.shape == (V, K) and w.shape == (V, K)
    assert idx.dtype == np.int32 and w.dtype == dtype
    assert np.all((idx >= 0) & (idx < J))
    assert np.all(w >= 0)
    assert np.all(idx[w == 0] == 0)
    if rows_sum_to_one:
        np.testing.assert_allclose(w.astype(np.float64).sum(1), 1.0, atol=1e-6)
    # slots in decreasing weight
    assert np.all(np.diff(w.astype(np.float64), axis=1) <= 0)


def dense(idx, w, J):
    return W.to_dense(idx, w.astype(np.float64), J)


# -- every binder against its reference ----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("to", ["bone", "joint"])
@pytest.mark.parametrize("tails", [False, True])
def test_nearest_matches_reference(dtype, layout, to, tails):
    s = tree_skeleton(3, tails=tails)
    v = vertices_around(s, dtype=dtype)
    vin = strided(v) if layout == "strided" else v
    before = vin.copy()
    idx, w, info = bind.nearest(vin, s, to=to, explain=True)
    assert np.array_equal(vin, before)
    check_influences(idx, w, s.n_joints, len(v), 1, dtype)
    P = ref.bind_joint_positions(s)
    ridx, _ = ref.bind_nearest(v, P, s.parents, s.tails, to)
    assert np.array_equal(idx, ridx)
    D, T = ref.bind_distance_table(v, P, s.parents, s.tails, to)
    np.testing.assert_allclose(info["distances"][:, 0], D.min(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(info["t"][:, 0], T[np.arange(len(v)), ridx[:, 0]], atol=1e-12)
    assert np.array_equal(info["bones"], idx)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k,power,to", [(1, 1, "joint"), (2, 1, "joint"), (3, 2.5, "bone"),
                                        (4, 0, "joint"), (20, 1, "joint")])
def test_proximity_matches_reference(dtype, k, power, to):
    s = tree_skeleton(5)
    v = vertices_around(s, dtype=dtype)
    idx, w, info = bind.proximity(v, s, k=k, power=power, to=to, explain=True)
    check_influences(idx, w, s.n_joints, len(v), k, dtype)
    P = ref.bind_joint_positions(s)
    ridx, rw = ref.bind_proximity(v, P, s.parents, None, k, power, to)
    assert np.array_equal(idx, ridx)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(w, rw, atol=tol)
    # nearer weighs more (seed 004's erratum) and the explain distances are sorted
    d = info["distances"][:, :min(k, s.n_joints)]
    assert np.all(np.diff(d, axis=1) >= 0)
    if k > s.n_joints:
        assert np.all(info["bones"][:, s.n_joints:] == -1)
        assert np.all(w[:, s.n_joints:] == 0)


def test_proximity_vertex_on_a_joint_gets_weight_one_there():
    s = sk.Skeleton.chain(4, 1.0)
    v = np.array([[0.0, 2.0, 0.0], [0.0, 2.5, 0.0]])
    idx, w = bind.proximity(v, s, k=2)
    assert idx[0].tolist() == [2, 0] and w[0].tolist() == [1.0, 0.0]
    # midway between joints 2 and 3: a tie, equal weights, the smaller index first
    assert idx[1].tolist() == [2, 3] and np.allclose(w[1], 0.5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("multiplier", [0.0, 1.5, 2.0, 5.0])
def test_volume_spheres_match_reference(dtype, multiplier):
    s = tree_skeleton(7)
    v = vertices_around(s, dtype=dtype, spread=0.5)
    P = ref.bind_joint_positions(s)
    radii = bind.volume_sphere_radii(v, s, multiplier)
    np.testing.assert_allclose(radii, ref.bind_sphere_radii(v, P, multiplier), rtol=1e-12)
    idx, w, info = bind.volume_spheres(v, s, multiplier, explain=True)
    check_influences(idx, w, s.n_joints, len(v), 2, dtype)
    ridx, rw = ref.bind_volume_spheres(v, P, s.parents, radii)
    assert np.array_equal(idx, ridx)
    np.testing.assert_allclose(w, rw, atol=1e-6 if dtype == np.float32 else 1e-12)
    if multiplier > 0:
        inside = info["t"][:, 0] < 1
        assert np.array_equal(w[:, 1] > 0, inside & (s.parents[idx[:, 0]] >= 0))


def test_volume_sphere_radii_are_nearest_vertex_distance_times_multiplier():
    s = sk.Skeleton.chain(3, 10.0)
    # joint 0 at y=0, 1 at y=10, 2 at y=20; the nearest vertices are 2, 3 and 1 away
    v = np.array([[2.0, 0, 0], [0, 13.0, 0], [0, 21.0, 0], [0, -7.0, 0]])
    np.testing.assert_allclose(bind.volume_sphere_radii(v, s), [3.0, 4.5, 1.5])
    np.testing.assert_allclose(bind.volume_sphere_radii(v, s, multiplier=2), [4.0, 6.0, 2.0])
    # no vertices: no nearest distance, so no sphere (not multiplier * inf, NaN for 0)
    assert np.array_equal(bind.volume_sphere_radii(np.empty((0, 3)), s), [0.0, 0.0, 0.0])


def test_volume_spheres_continuous_at_the_sphere_surface():
    s = sk.Skeleton.chain(3, 10.0, axis="x")
    radii = np.array([3.0, 4.0, 4.0])
    # Walk away from joint 1 (x=10) along +z, through its sphere's surface at distance 4;
    # joint 1 stays the nearest all along.
    z = np.linspace(0.0, 4.5, 901)
    v = np.stack([np.full_like(z, 10.0), np.zeros_like(z), z], 1)
    idx, w = bind.volume_spheres(v, s, radii=radii)
    D = dense(idx, w, 3)
    assert np.all(idx[:, 0] == 1)
    assert np.max(np.abs(np.diff(D, axis=0))) < 0.5 / 900 * 4.5 / 4 + 1e-12
    # exact values: w_parent = 0.5 (1 - d / r) inside, 0 outside
    np.testing.assert_allclose(D[:, 0], np.where(z < 4, 0.5 * (1 - z / 4), 0), atol=1e-15)
    edge = np.array([[10.0, 0, 4.0 - 1e-9], [10.0, 0, 4.0], [10.0, 0, 4.0 + 1e-9]])
    D = dense(*bind.volume_spheres(edge, s, radii=radii), 3)
    assert np.all(D[:, 0] < 1e-9)


def test_volume_spheres_jump_where_the_nearest_joint_changes():
    """Documented: continuity holds at sphere surfaces, not at the Voronoi boundary between
    joints."""
    s = sk.Skeleton.chain(3, 10.0, axis="x")
    v = np.array([[15.0 - 1e-9, 0, 0], [15.0 + 1e-9, 0, 0]])
    D = dense(*bind.volume_spheres(v, s, radii=[10.0, 10.0, 10.0]), 3)
    assert D[0, 1] == pytest.approx(0.75) and D[0, 0] == pytest.approx(0.25)
    assert D[1, 2] == pytest.approx(0.75) and D[1, 1] == pytest.approx(0.25)


def test_volume_spheres_root_keeps_its_vertices():
    s = sk.Skeleton.chain(3, 10.0)
    v = np.array([[0.5, 0.2, 0.0], [0.0, -3.0, 1.0], [1.0, 2.0, 0.0]])
    idx, w = bind.volume_spheres(v, s, radii=[100.0, 100.0, 100.0])
    assert np.all(idx[:, 0] == 0) and np.all(w[:, 0] == 1) and np.all(w[:, 1] == 0)


# -- projection (seed 002) -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_projection_matches_reference(dtype):
    s = tree_skeleton(11, J=12)
    v = vertices_around(s, dtype=dtype)
    idx, w, info = bind.projection(strided(v), s, explain=True)
    check_influences(idx, w, s.n_joints, len(v), 1, dtype)
    P = ref.bind_joint_positions(s)
    ridx, _ = ref.bind_projection(v, P, s.parents)
    assert np.array_equal(idx, ridx)
    j = info["bones"][:, 0]
    assert np.array_equal(j, ref.bind_nearest(v, P, s.parents, to="joint")[0][:, 0])
    p = s.parents[j]
    # explain's t is the projection parameter: positive exactly when the parent was chosen
    has = p >= 0
    assert np.array_equal(info["t"][has, 0] > 0, idx[has, 0] == p[has])
    assert np.all(np.isnan(info["t"][~has, 0]))


def test_projection_seed_002_cases():
    # joint 1 at y=10 with parent 0 at y=0 and child 2 at y=20
    s = sk.Skeleton.chain(3, 10.0)
    eps = 1e-3
    v = np.array([
        [0.3, 10.0 - eps, 0.0],  # just beyond joint 1 toward its parent: the parent's bone
        [0.3, 10.0 + eps, 0.0],  # just past joint 1: joint 1
        [2.0, 10.0, 0.0],        # perpendicular (s = 0): joint 1
        [0.0, 1.0, 0.0],         # near the root: the root keeps it
        [0.0, -5.0, 0.0],
        [0.0, 19.0, 0.0],        # just toward joint 2's parent: joint 1
        [0.0, 26.0, 0.0],        # past the leaf: the leaf
    ])
    idx, w = bind.projection(v, s)
    assert idx[:, 0].tolist() == [0, 1, 1, 0, 0, 1, 2]
    assert np.all(w == 1)


# -- height bands (seed 001) -------------------------------------------------------------------------

def o3d_cylinder(radius=40.0, height=200.0, radial=12, vertical=20):
    """o3djs.primitives.createCylinderVertices(40, 200, 12, 20, translate(0, 100, 0)): rings of
    radial + 1 vertices (the seam repeated) at vertical + 1 heights, plus two cap rings at each
    end (the rim again and the centre), centred on y = 0 then lifted by 100."""
    rings = []
    for yy in range(-2, vertical + 3):
        if yy < 0:
            y, r = 0.0, (0.0 if yy == -2 else radius)
        elif yy > vertical:
            y, r = height, (0.0 if yy == vertical + 2 else radius)
        else:
            y, r = height * yy / vertical, radius
        a = np.arange(radial + 1) * 2 * np.pi / radial
        rings.append(np.stack([np.sin(a) * r, np.full(a.shape, y - height / 2), np.cos(a) * r], 1))
    return np.concatenate(rings) + [0.0, 100.0, 0.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_seed_001_cylinder_on_an_11_bone_chain(dtype):
    v = o3d_cylinder()
    assert v.shape == (13 * 25, 3) and v[:, 1].min() == 0 and v[:, 1].max() == 200
    s = sk.Skeleton.chain(11, 20)
    idx, w = bind.height_bands(v.astype(dtype), s)
    check_influences(idx, w, 11, len(v), 2, dtype)
    # seed 001, corrected: boneArea = y / 20, bone1 = floor, bone2 = bone1 + 1, weights
    # (1 - f, f), clamped at both ends
    y = v.astype(dtype)[:, 1].astype(np.float64)
    area = y / 20
    b1 = np.clip(np.floor(area), 0, 10).astype(int)
    b2 = np.minimum(b1 + 1, 10)
    f = area % 1
    expect = np.zeros((len(v), 11))
    np.add.at(expect, (np.arange(len(v)), b1), 1 - f)
    np.add.at(expect, (np.arange(len(v)), b2), f)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(dense(idx, w, 11), expect, atol=tol, rtol=0)
    # the errata's worked example: y = 63 is between bones 3 and 4, weights 0.85 / 0.15
    i63, w63 = bind.height_bands(np.array([[0.0, 63.0, 0.0]], dtype), s)
    assert i63[0].tolist() == [3, 4]
    np.testing.assert_allclose(w63[0], [0.85, 0.15], atol=tol)


def test_height_bands_clamps_and_reference():
    s = sk.Skeleton.chain(5, 2.0, axis="z")
    rng = np.random.default_rng(4)
    v = rng.uniform(-3, 12, (400, 3))
    idx, w, info = bind.height_bands(v, s, axis="z", explain=True)
    check_influences(idx, w, 5, 400, 2, np.float64)
    expect = ref.bind_height_bands(v, list(range(5)), np.arange(5) * 2.0, np.zeros(3), [0, 0, 1])
    np.testing.assert_allclose(dense(idx, w, 5), expect, atol=1e-12)
    below, above = v[:, 2] < 0, v[:, 2] >= 8
    assert np.all(idx[below, 0] == 0) and np.all(idx[above, 0] == 4)
    assert np.all(w[below | above, 0] == 1)
    inside = ~(below | above)
    np.testing.assert_allclose(info["t"][inside, 0], (v[inside, 2] / 2) % 1, atol=1e-12)


def test_height_bands_any_joint_order_and_downward_chain():
    # the chain 2 -> 0 -> 1 going down along y, given in shuffled order
    local = tf.translation([[0, -1.0, 0], [0, -1.0, 0], [0, 5.0, 0]])
    s = sk.Skeleton([2, 0, -1], local)
    v = np.array([[0, 4.5, 0], [0, 3.25, 0], [0, 9.0, 0], [0, 0.0, 0]])
    D = dense(*bind.height_bands(v, s), 3)
    np.testing.assert_allclose(D, [[0.5, 0, 0.5], [0.25, 0.75, 0], [0, 0, 1], [0, 1, 0]])
    # a vector axis works too
    D2 = dense(*bind.height_bands(v, s, axis=[0, 2.0, 0]), 3)
    np.testing.assert_allclose(D2, D)


def test_height_bands_needs_a_chain():
    s = sk.Skeleton([-1, 0, 0], tf.translation([[0, 0, 0], [0, 1.0, 0], [1.0, 0, 0]]))
    with pytest.raises(ValueError, match="chain"):
        bind.height_bands(np.zeros((2, 3)), s)
    flat = sk.Skeleton.chain(3, 1.0, axis="x")
    with pytest.raises(ValueError, match="strictly"):
        bind.height_bands(np.zeros((2, 3)), flat, axis="y")
    with pytest.raises(ValueError, match="axis"):
        bind.height_bands(np.zeros((2, 3)), flat, axis="w")


# -- envelope (Blender) ----------------------------------------------------------------------------

def test_envelope_factor_blender_cases():
    # A bone from the origin along +x, length 10, head radius 1, tail radius 3, falloff 2.
    head, tail = np.zeros(3), np.array([10.0, 0, 0])
    v = np.array([
        [5.0, 1.9, 0],   # mid-bone, radius lerps to 2: inside -> 1
        [5.0, 3.0, 0],   # 1 beyond the radius: 1 - 1/4
        [5.0, 4.0, 0],   # at radius + dist: 0
        [-1.5, 0, 0],    # behind the head: sphere of radius 1, 0.5 into the falloff
        [13.5, 0, 0],    # past the tail: sphere of radius 3, 0.5 into the falloff
        [14.0, 3.0, 0],  # past the tail, 5 away: 2 beyond -> 0
    ])
    expect = [1.0, 0.75, 0.0, 1 - 0.25 / 4, 1 - 0.25 / 4, 0.0]
    np.testing.assert_allclose(ref.envelope_factor(v, head, tail, 1, 3, 2), expect)
    s = sk.Skeleton([-1], np.eye(4)[None], tails=[[10.0, 0, 0]])
    idx, w = bind.envelope(v, s, 1, 3, 2, k=1)
    np.testing.assert_allclose(w[:, 0], expect, atol=1e-15)
    # distance 0 (no falloff): 1 inside, 0 outside
    idx, w = bind.envelope(v, s, 1, 3, 0, k=1)
    np.testing.assert_allclose(w[:, 0], [1, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tails", [False, True])
@pytest.mark.parametrize("k,normalize", [(1, False), (4, False), (4, True), (12, False)])
def test_envelope_matches_reference(dtype, tails, k, normalize):
    s = tree_skeleton(13, J=10, tails=tails)
    v = vertices_around(s, dtype=dtype, spread=0.8)
    rng = np.random.default_rng(2)
    hr, tr, ds = rng.uniform(0.1, 0.6, 10), rng.uniform(0.05, 0.5, 10), rng.uniform(0, 0.8, 10)
    ds[3] = 0.0
    idx, w, info = bind.envelope(strided(v), s, hr, tr, ds, k=k, normalize=normalize,
                                 explain=True)
    check_influences(idx, w, 10, len(v), k, dtype, rows_sum_to_one=False)
    P = ref.bind_joint_positions(s)
    ridx, rw = ref.bind_envelope(v, P, s.parents, s.tails, hr, tr, ds, k, normalize)
    assert np.array_equal(idx, ridx)
    np.testing.assert_allclose(w, rw, atol=1e-6 if dtype == np.float32 else 1e-12)
    assert np.all(w <= 1 + 1e-12)
    sums = w.astype(np.float64).sum(1)
    if normalize:
        assert np.allclose(sums[sums > 0], 1)
    if not normalize and k >= 4:
        # raw Blender weights: some vertices are outside every envelope, some in several
        assert np.any(sums == 0) and np.any(sums > 1.01)
    # every kept slot is a bone with a non-zero factor, every other slot is empty
    kept = w > 0
    assert np.array_equal(info["bones"] >= 0, kept)
    assert np.array_equal(info["bones"][kept], idx[kept])
    assert np.all((info["t"][kept] >= 0) & (info["t"][kept] <= 1))
    assert np.all(np.isnan(info["distances"][~kept]))


def test_envelope_leaf_without_tail_is_a_sphere_and_uses_children():
    s = sk.Skeleton.chain(2, 10.0, axis="x")  # bone 0: 0 -> 10, bone 1: the point at x = 10
    v = np.array([[5.0, 1.5, 0], [12.5, 0, 0]])
    idx, w = bind.envelope(v, s, [1.0, 2.0], [1.0, 2.0], [1.0, 1.0], k=2)
    D = dense(idx, w, 2)
    np.testing.assert_allclose(D[0], [1 - 0.25, 0])
    np.testing.assert_allclose(D[1], [0, 1 - 0.25])


# -- explain, threads, empty -----------------------------------------------------------------------

def test_empty_vertices_give_empty_results():
    s = tree_skeleton(1)
    for dtype in DTYPES:
        v = np.empty((0, 3), dtype)
        for fn, K in [(bind.nearest, 1), (bind.proximity, 2), (bind.projection, 1)]:
            idx, w = fn(v, s)
            assert idx.shape == (0, K) and w.dtype == dtype
        idx, w = bind.envelope(v, s, 1, 1, 1)
        assert idx.shape == (0, 4)
    assert bind.height_bands(np.empty((0, 3)), sk.Skeleton.chain(3, 1.0))[0].shape == (0, 2)


def test_threads_give_identical_results():
    s = tree_skeleton(2, J=20)
    v = vertices_around(s, n=5000)
    expect = bind.proximity(v, s, k=4)
    out = [None] * 4

    def run(i):
        out[i] = bind.proximity(v, s, k=4)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for o in out:
        assert np.array_equal(o[0], expect[0]) and np.array_equal(o[1], expect[1])


def test_binders_feed_the_weight_tools():
    s = tree_skeleton(4)
    v = vertices_around(s)
    for idx, w in [bind.nearest(v, s), bind.proximity(v, s, k=4), bind.volume_spheres(v, s),
                   bind.projection(v, s)]:
        assert W.validate(idx, w, n_joints=s.n_joints) == []


# -- bad input (DESIGN.md section 5) --------------------------------------------------------------

ALL = [
    lambda v, s: bind.nearest(v, s),
    lambda v, s: bind.proximity(v, s),
    lambda v, s: bind.volume_spheres(v, s),
    lambda v, s: bind.volume_sphere_radii(v, s),
    lambda v, s: bind.projection(v, s),
    lambda v, s: bind.height_bands(v, s),
    lambda v, s: bind.envelope(v, s, 1.0, 1.0, 1.0),
]


@pytest.mark.parametrize("fn", ALL)
def test_nan_vertices_raise_naming_the_vertex(fn):
    s = sk.Skeleton.chain(3, 1.0)
    v = np.zeros((5, 3))
    v[3, 1] = np.nan
    with pytest.raises(ValueError, match="vertices.*vertex 3"):
        fn(v, s)
    v[3, 1] = np.inf
    with pytest.raises(ValueError, match="vertex 3"):
        fn(v.astype(np.float32), s)


@pytest.mark.parametrize("fn", ALL)
def test_bad_vertices_types_and_shapes(fn):
    s = sk.Skeleton.chain(3, 1.0)
    with pytest.raises(TypeError, match="vertices"):
        fn([[0.0, 0.0, 0.0]], s)
    with pytest.raises(TypeError, match="vertices"):
        fn(np.zeros((4, 3), dtype=np.int64), s)
    with pytest.raises(TypeError, match="vertices"):
        fn(np.zeros((4, 3), dtype=np.float16), s)
    with pytest.raises(ValueError, match="vertices"):
        fn(np.zeros((4, 2)), s)
    with pytest.raises(TypeError, match="byte-swapped"):
        fn(np.zeros((4, 3), dtype=">f8"), s)
    with pytest.raises(TypeError, match="skeleton"):
        fn(np.zeros((4, 3)), np.zeros((3, 3)))


def test_no_joints():
    with pytest.raises(ValueError, match="J = 0"):
        sk.Skeleton(np.zeros(0, int), np.zeros((0, 4, 4)))


def test_bad_options():
    s = sk.Skeleton.chain(3, 1.0)
    v = np.zeros((4, 3))
    with pytest.raises(ValueError, match="k must be >= 1"):
        bind.proximity(v, s, k=0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        bind.envelope(v, s, 1, 1, 1, k=0)
    with pytest.raises(TypeError, match="k"):
        bind.proximity(v, s, k=2.5)
    with pytest.raises(ValueError, match="power"):
        bind.proximity(v, s, power=-1)
    with pytest.raises(ValueError, match="multiplier"):
        bind.volume_spheres(v, s, multiplier=-0.5)
    with pytest.raises(ValueError, match="multiplier"):
        bind.volume_sphere_radii(v, s, multiplier=np.nan)
    # finite, but every radius would overflow to inf (found by fuzzing)
    with pytest.raises(ValueError, match="multiplier"):
        bind.volume_sphere_radii(v, s, multiplier=1e308)
    with pytest.raises(ValueError, match="multiplier"):
        bind.volume_spheres(v, s, multiplier=1e308)
    with pytest.raises(ValueError, match="radii"):
        bind.volume_spheres(v, s, radii=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="head_radius"):
        bind.envelope(v, s, -1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="tail_radius"):
        bind.envelope(v, s, 1.0, [1.0, np.inf, 1.0], 1.0)
    with pytest.raises(ValueError, match="distance"):
        bind.envelope(v, s, 1.0, 1.0, [1.0, 1.0])
    with pytest.raises(ValueError, match="to"):
        bind.nearest(v, s, to="vertex")


def test_low_level_core_rejects_wrong_outputs():
    s = sk.Skeleton.chain(3, 1.0)
    b = bind.bones(s)
    v = np.zeros((4, 3))
    with pytest.raises(ValueError, match="weights"):
        sk._core.bind_nearest(np.empty((4, 1), np.int32), np.empty((4, 2)), None, v, b, True)
    with pytest.raises(TypeError, match="weights"):
        sk._core.bind_nearest(np.empty((4, 1), np.int32), np.empty((4, 1), np.float32), None,
                              v, b, True)
    ro = np.empty((4, 1), np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sk._core.bind_nearest(ro, np.empty((4, 1)), None, v, b, True)
    with pytest.raises(ValueError, match="seg_start"):
        sk._core.bind_nearest(np.empty((4, 1), np.int32), np.empty((4, 1)), None, v,
                              (b[0], b[1], b[2][::-1].copy(), b[3]), True)


def test_repeated_calls_do_not_grow_memory():
    import tracemalloc

    s = tree_skeleton(6)
    v = vertices_around(s, n=2000)
    for _ in range(5):
        bind.proximity(v, s, k=3)
        bind.envelope(v, s, 0.3, 0.3, 0.3, explain=True)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(100):
            bind.proximity(v, s, k=3)
            bind.envelope(v, s, 0.3, 0.3, 0.3, explain=True)
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), J=st.integers(1, 12), V=st.integers(0, 40),
       k=st.integers(1, 6), tails=st.booleans())
def test_property_nearest_and_proximity(seed, J, V, k, tails):
    s = tree_skeleton(seed, J=J, tails=tails)
    v = vertices_around(s, n=V, seed=seed)
    P = ref.bind_joint_positions(s)
    idx, w = bind.nearest(v, s)
    assert np.array_equal(idx, ref.bind_nearest(v, P, s.parents, s.tails, "bone")[0])
    idx, w = bind.proximity(v, s, k=k, to="bone")
    check_influences(idx, w, J, V, k, np.float64)
    ridx, rw = ref.bind_proximity(v, P, s.parents, s.tails, k, 1.0, "bone")
    assert np.array_equal(idx, ridx)
    np.testing.assert_allclose(w, rw, atol=1e-12)
