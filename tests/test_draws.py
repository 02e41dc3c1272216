"""grip.draws: every method gives the Generator's own numbers and leaves its stream where the Generator would."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.draws import Draws

SEEDS = st.integers(0, 2**63)


def pair(seed):
    return np.random.default_rng(seed), np.random.default_rng(seed)


def same_stream_after(a, b):
    # the 32-bit buffer too: an odd number of 32-bit draws leaves half a 64-bit draw behind
    assert a.integers(0, 1000, size=3).tolist() == b.integers(0, 1000, size=3).tolist()
    assert a.random() == b.random()


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.lists(st.tuples(st.integers(-50, 50), st.integers(1, 2**32 + 5)), min_size=1, max_size=12))
def test_integers_are_the_generators(seed, ranges):
    ref, rng = pair(seed)
    d = Draws(rng)
    for lo, width in ranges:
        want = int(ref.integers(lo, lo + width))
        got = d.integers(lo, lo + width)
        assert got == want and type(got) is int
    assert d.integers(7) == int(ref.integers(7))
    same_stream_after(ref, rng)


def test_integers_near_two_to_the_32_and_biased_ranges():
    # ranges where Lemire's rejection fires often (n just above 2**31) and the 64-bit path
    for n in (3, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1, 2**40):
        ref, rng = pair(n)
        d = Draws(rng)
        assert [d.integers(0, n) for _ in range(200)] == [int(ref.integers(0, n)) for _ in range(200)]
        same_stream_after(ref, rng)


def test_bounds_that_are_not_python_ints_are_the_generators():
    # a numpy integer bound would overflow Lemire's 64-bit product; a float bound is numpy's to accept or refuse
    ref, rng = pair(3)
    d = Draws(rng)
    for lo, hi in ((np.int64(0), np.int64(2**32)), (0, np.int64(2**31 + 7)), (np.int32(2), 9), (0, 5.0), (0, np.int64(1))):
        got = d.integers(lo, hi)
        assert got == int(ref.integers(lo, hi)) and type(got) is int
    same_stream_after(ref, rng)


def test_a_single_value_draws_nothing_and_an_empty_range_is_numpys_error():
    ref, rng = pair(5)
    d = Draws(rng)
    assert d.integers(4, 5) == 4 == int(ref.integers(4, 5))
    same_stream_after(ref, rng)
    with pytest.raises(ValueError):
        d.integers(3, 3)


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), min_size=1, max_size=10))
def test_random_and_uniform_are_the_generators_bit_for_bit(seed, bounds):
    ref, rng = pair(seed)
    d = Draws(rng)
    for lo, hi in map(sorted, bounds):
        assert d.random() == ref.random()
        assert d.uniform(lo, hi) == ref.uniform(lo, hi)
        assert d.integers(0, 6) == int(ref.integers(0, 6))      # interleaved with 32-bit draws
    assert d.uniform() == ref.uniform()
    same_stream_after(ref, rng)


def test_uniform_with_hi_below_lo_is_numpys_error():
    with pytest.raises(ValueError):
        Draws(np.random.default_rng(0)).uniform(1.0, 0.0)


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.lists(st.integers(1, 40), min_size=1, max_size=8))
def test_choice_shuffle_permutation_are_the_generators(seed, sizes):
    ref, rng = pair(seed)
    d = Draws(rng)
    for n in sizes:
        seq = [f"s{i}" for i in range(n)]
        assert d.pick(seq) == str(ref.choice(seq))
        assert d.index(n) == int(ref.choice(n))
        a, b = list(seq), list(seq)
        ref.shuffle(a)
        d.shuffle(b)
        assert a == b
        assert d.permutation(n) == ref.permutation(n).tolist()
    same_stream_after(ref, rng)


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.lists(st.tuples(st.integers(1, 300), st.floats(0, 1)), min_size=1, max_size=6))
def test_subset_is_choice_without_replacement(seed, cases):
    ref, rng = pair(seed)
    d = Draws(rng)
    for n, f in cases:
        k = int(round(f * n))
        assert d.subset(n, k) == ref.choice(n, size=k, replace=False).tolist()
    same_stream_after(ref, rng)


def test_a_large_population_goes_to_the_generator():
    ref, rng = pair(11)
    assert Draws(rng).subset(20000, 3) == ref.choice(20000, size=3, replace=False).tolist()
    same_stream_after(ref, rng)


def test_interleaved_draws_as_a_sampler_makes_them():
    """Random sequences of calls, as a sampler interleaves them: every integer range (one value, Lemire's rejection,
    past 2**32), random(), uniform, choice of a list, shuffle and choice without replacement."""
    plan = np.random.default_rng(7)
    for seed in range(20):
        ref, rng = pair(seed)
        d = Draws(rng)
        for _ in range(200):
            op = int(plan.integers(7))
            if op == 0:
                assert d.random() == ref.random()
            elif op == 1:
                seq = list(range(int(plan.integers(1, 5))))
                assert d.pick(seq) == int(ref.choice(seq))
            elif op == 2:
                n = int(plan.integers(1, 12))
                k = int(plan.integers(0, n + 1))
                assert d.subset(n, k) == ref.choice(n, size=k, replace=False).tolist()
            elif op == 3:
                a = list(range(int(plan.integers(0, 9))))
                b = list(a)
                ref.shuffle(a)
                d.shuffle(b)
                assert a == b
            elif op == 4:
                assert d.uniform(-2.0, 3.5) == ref.uniform(-2.0, 3.5)
            else:
                lo = int(plan.integers(-3, 5))
                n = int((1, 2, 3, 7, 9, 49, 3 << 30, 1 << 32, (1 << 32) + 5)[int(plan.integers(9))])
                assert d.integers(lo, lo + n) == int(ref.integers(lo, lo + n))
                assert d.integers(n) == int(ref.integers(n))
        same_stream_after(ref, rng)
