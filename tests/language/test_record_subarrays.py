"""Records beyond scalar fields: sub-array fields (``a[i].h[k]``), complex fields where NumPy aligns
them to their components, one record passed alone (``r.x``), and whole records and sub-array fields
assigned at once (``a[i] = a[j]``, ``r["h"] = src``)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, float32, global_id, thread_idx

# a scalar, a 1-D and a 2-D sub-array, and a complex64 at byte 4 (NumPy aligns it to 4)
PARTICLE = np.dtype(
    [("id", "i4"), ("w", "c8"), ("pos", "f4", (3,)), ("m", "f8", (2, 2)), ("tag", "u1", (5,))], align=True
)


def _particles(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = np.zeros(n, PARTICLE)
    a["id"] = rng.integers(-100, 100, n)
    a["pos"] = rng.standard_normal((n, 3))
    a["w"] = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    a["m"] = rng.standard_normal((n, 2, 2))
    a["tag"] = rng.integers(0, 256, (n, 5))
    return a


def test_the_layout_is_numpys():
    assert PARTICLE.fields["w"][1] == 4  # a complex64 off 8 bytes


@gk.kernel
def k_move(a, out: Array[float32, 2], t: float32):
    i = global_id(0)
    if i < len(a):
        for d in range(3):  # a run-time index into the sub-array
            a[i].pos[d] = a[i].pos[d] + t * d
            out[i, d] = a[i]["pos"][d]
        a[i].w = a[i].w * 2j
        a[i].m[0, 1], a[i].m[1, 0] = a[i].m[1, 0], a[i].m[0, 1]  # a transpose, in place
        a[i].tag[4] = a[i].tag[0] + a[i].tag[thread_idx.x % 5]
        a["id"][i] = a[i].id + 1


def test_sub_array_fields_read_and_written_like_numpy(backend):
    a = _particles(70, 1)
    want = a.copy()
    out = np.zeros((70, 3), np.float32)
    k_move[3, 32](a, out, np.float32(0.5))
    want["pos"] += np.float32(0.5) * np.arange(3, dtype=np.float32)
    want["w"] *= 2j
    want["m"] = want["m"].transpose(0, 2, 1)
    lane = np.arange(70) % 32 % 5
    want["tag"][:, 4] = want["tag"][:, 0] + want["tag"][np.arange(70), lane]
    want["id"] += 1
    for name in PARTICLE.names:
        np.testing.assert_array_equal(a[name], want[name], err_msg=name)
    np.testing.assert_array_equal(out, want["pos"])


def test_the_struct_declares_the_sub_arrays_and_an_under_aligned_complex():
    src = k_move.source(_particles(1, 0), np.zeros((1, 3), np.float32), np.float32(0))
    assert "float pos[3];" in src and "double m[2][2];" in src and "unsigned char tag[5];" in src
    assert "__attribute__((aligned(4)))" in src
    assert ".m[0][1]" in src  # the member indexed as C does


ONE = np.dtype([("n", "i4"), ("h", "f4", (2,)), ("z", "c8")], align=True)


@gk.kernel
def k_one(r, out: Array[float32]):
    out[0] = r.h[0] + r["h"][1] + r.n
    r.n = r.n * 2
    r.h[1] = 7.5
    r["z"] = r.z + 1


def test_one_record_is_read_and_written_in_place(backend):
    a = np.zeros(3, ONE)
    a[1] = (4, (1.5, 2.0), 1j)
    out = np.zeros(1, np.float32)
    k_one[1, 1](a[1], out)  # a[1]: NumPy's record scalar, a view of a's memory
    assert out[0] == 7.5
    assert a[1]["n"] == 8 and tuple(a[1]["h"]) == (1.5, 7.5) and a[1]["z"] == 1 + 1j
    assert a[0]["n"] == 0 and a[2]["n"] == 0  # nothing else written


@gk.kernel
def k_copy_records(a, b, src: Array[gk.uint8]):
    i = global_id(0)
    if i < len(a):
        b[i] = a[len(a) - 1 - i]  # every field, the sub-arrays too
    if i == 0:
        b[0].pos = a[1].pos  # one sub-array field from another record's
        b[0]["tag"] = src  # ... from an array of its shape


def test_whole_records_and_sub_arrays_are_assigned_at_once(backend):
    a, b = _particles(9, 2), np.zeros(9, PARTICLE)
    src = np.arange(5, dtype=np.uint8) * 3
    k_copy_records[1, 32](a, b, src)
    want = a[::-1].copy()
    want[0]["pos"] = a[1]["pos"]
    want[0]["tag"] = src
    np.testing.assert_array_equal(b, want)


TABLE = np.zeros(3, ONE)
TABLE["n"] = [1, 2, 3]
TABLE["h"] = [[0.5, 1.5], [2.5, 3.5], [4.5, -np.inf]]
TABLE["z"] = [1j, 2, 3 + 3j]


@gk.kernel
def k_table(out: Array[float32]):
    i = thread_idx.x
    if i < 3:
        out[i] = TABLE[i].h[1] + TABLE[i].n + TABLE[i].z.imag


def test_a_constant_table_of_records_with_sub_arrays(backend):
    out = np.zeros(3, np.float32)
    k_table[1, 32](out)
    np.testing.assert_array_equal(out, TABLE["h"][:, 1] + TABLE["n"] + TABLE["z"].imag)


# ---------------------------------------------------------------- the simulator's checks
@gk.kernel
def k_sub_index(a, k: int):
    a[0].pos[k] = 1.0


def test_a_sub_array_index_out_of_bounds_is_found(on_simulator):
    with pytest.raises(gk.OutOfBoundsError, match=r"'a.pos'"):
        k_sub_index[1, 1](_particles(2, 0), 3)  # pos has 3 elements: [0][3] is the next field's bytes


@gk.kernel
def k_sub_race(a):
    a[0].pos[thread_idx.x % 2] = 1.0  # two threads a slot
    a[0].pos[2] = thread_idx.x


def test_a_race_on_a_sub_array_element_is_found(on_simulator):
    with pytest.raises(gk.DataRaceError, match=r"'a.pos'\[0, [012]\]"):
        k_sub_race[1, 4](_particles(1, 0))


@gk.kernel
def k_sub_read(a, out: Array[float32]):
    a[0].pos[0] = 2.0
    out[0] = a[0].pos[0]
    if thread_idx.x == 0:
        out[1] = a[0].pos[1]


def test_uninitialised_sub_array_elements_are_found_across_launches(on_simulator):
    a = gk.empty(1, PARTICLE)
    out = np.zeros(2, np.float32)
    with pytest.raises(gk.UninitializedReadError, match=r"'a.pos'"):
        k_sub_read[1, 1](a, out)
    k_sub_index[1, 1](a, 1)  # pos[1] now written: the flags come back from the copy
    k_sub_read[1, 1](a, out)
    assert tuple(out) == (2.0, 1.0)


def test_profile_counts_a_sub_array_fields_sectors():
    n = 64
    report = gk.profile(k_move[2, 32], _particles(n, 3), np.zeros((n, 3), np.float32), np.float32(1))
    line = report.lines[line_of(k_move, 'out[i, d] = a[i]["pos"][d]')]
    assert line.global_load_elems == 3 * n and line.global_load_bytes == 3 * n * 4
    # pos[d] of record r is at r * itemsize + 12 + 4 * d: per warp, the 32-byte sectors those start in
    starts = np.arange(n)[:, None] * PARTICLE.itemsize + 12 + 4 * np.arange(3)
    want = sum(len(np.unique(starts[w * 32 : w * 32 + 32, d] // 32)) for w in range(2) for d in range(3))
    assert line.global_load_sectors == want


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    "src, message",
    [
        ("a[0] = b[0]", r"cannot assign a record of 'b'.*their dtypes differ"),
        ("a[0].pos = s", r"an array of shape \(2,\) to a sub-array field of shape \(3,\)"),
        ("a[0].pos = 1.0", r"a\[0\].pos is a sub-array field of shape \(3,\): it takes an array of that shape"),
        ("a[0].pos[0, 1] = 1.0", r"'a' has 2 dimension\(s\) but 3 index"),
    ],
)
def test_misuse_is_a_clear_error(src, message):
    k = load_kernel(
        f"import gpukern as gk\n\n@gk.kernel\ndef k(a, b):\n    s = gk.shared(gk.float32, 2)\n    {src}\n",
        "records",
    )
    with pytest.raises(gk.KernelTypeError, match=message) as info:
        k.variant(k.signature_of((np.zeros(2, PARTICLE), np.zeros(2, ONE))))
    assert info.value.lineno == line_of(k, src)
