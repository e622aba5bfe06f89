#!/usr/bin/env python3
"""Seeded generator of CUDA C++ stencil kernels: a corpus for testing sector counting.

    python3 scripts/corpus/generate.py --seed S [--count N] --out DIR

writes N kernels as DIR/<lesson>/k<index:04d>.cu and DIR/manifest.json, a list of
{"file", "lesson", "index", "features"}. The lessons are stencil-1d, stencil-2d and
stencil-3d; each kernel follows its lesson's contract (lessons/*/lesson.toml): the entry
point and parameters, the launch shape, the stencil weights and the border copy.

What varies is how a kernel touches global memory, since that is what the emulator and the
H200 must count alike: direct loads, loops over offsets, shared-memory tiles filled in
different ways, warp shuffles, vector loads, registers carried across z, extra "probe"
loads of 1 to 16 bytes whose value is multiplied by zero, predication, atomics on `out`,
early exits, __restrict__/__ldg, double arithmetic. Each kernel is put together from random
choices of these feature families (one function per family below); there is no list of
whole kernels. About 15% are deliberately wrong (feature `wrong`): they are memory-safe
and race-free but write wrong values or leave elements unwritten.

Same seed and count, same bytes. Kernel k draws from its own random.Random(f"{seed}:{k}"),
so it is the same whatever N is. Only the standard library is used.
"""

import argparse
import json
import os
import random

FULL_MASK = "0xffffffffu"

# Lesson mix: the 3D kernels cost the emulator the most, so they are the fewest.
LESSON_MIX = [("stencil-2d", 40), ("stencil-1d", 35), ("stencil-3d", 25)]

# Centre and neighbour weights of each lesson (lesson.toml [problem]).
WEIGHTS = {"stencil-1d": (0.5, 0.25), "stencil-2d": (0.5, 0.125), "stencil-3d": (0.25, 0.125)}
# A deliberately wrong neighbour weight per lesson (feature wrong-weight).
WRONG_WEIGHT = {"stencil-1d": 0.3, "stencil-2d": 0.1, "stencil-3d": 0.1}

PROBABILITY_WRONG = 0.15
PROBABILITY_PRINTF = 0.03


class Code:
    """Lines of C++ with the current indentation."""

    def __init__(self, depth=1):
        self.lines = []
        self.depth = depth

    def __call__(self, *lines):
        for line in lines:
            self.lines.append("    " * self.depth + line if line else "")

    def open(self, head):
        self(head + " {" if head else "{")
        self.depth += 1

    def reopen(self, head):
        """`} else {` and the like."""
        self.depth -= 1
        self("} " + head + " {")
        self.depth += 1

    def close(self, tail=""):
        self.depth -= 1
        self("}" + tail)


class Kernel:
    """One kernel being put together: its random source, choices and features."""

    def __init__(self, seed, index):
        self.seed = seed
        self.index = index
        self.rng = random.Random(f"{seed}:{index}")
        self.features = []
        self.includes = []
        self.defines = []
        self.helpers = []
        self.code = Code()
        self.lesson = self.choose(LESSON_MIX)

    # Random helpers: all draws go through self.rng so a kernel depends on (seed, index) only.
    def chance(self, p):
        return self.rng.random() < p

    def choose(self, options):
        values = [v for v, _ in options]
        weights = [w for _, w in options]
        return self.rng.choices(values, weights)[0]

    def feature(self, name):
        if name not in self.features:
            self.features.append(name)

    def include(self, header):
        if header not in self.includes:
            self.includes.append(header)

    def define(self, line):
        if line not in self.defines:
            self.defines.append(line)

    def helper(self, text):
        if text not in self.helpers:
            self.helpers.append(text)

    # Arithmetic in the kernel's real type (float or double).
    def lit(self, value):
        text = repr(float(value))
        return text + "f" if self.real == "float" else text

    def to_real(self, expr):
        """`expr` (a float) in the kernel's arithmetic type."""
        if self.real == "float":
            return expr
        if "?" in expr or " " in expr:
            expr = f"({expr})"
        return f"(double){expr}"

    def to_float(self, var):
        return var if self.real == "float" else f"(float){var}"

    def load(self, index, ptr="in"):
        """A global load of one float, through __ldg when the kernel uses it."""
        if self.ldg == "all" or (self.ldg == "some" and self.chance(0.5)):
            return f"__ldg(&{ptr}[{index}])"
        return f"{ptr}[{index}]"


# --------------------------------------------------------------------------------------------
# Feature families shared by all lessons.
# --------------------------------------------------------------------------------------------


def choose_common(k):
    """Signature qualifiers, __ldg, arithmetic type, store kind, printf, wrongness, probes."""
    k.restrict_in = k.chance(0.5)
    k.restrict_out = k.chance(0.5)
    # __ldg is for read-only data; pair it with `const float* __restrict__ in`.
    k.ldg = k.choose([("none", 65), ("all", 20), ("some", 15)])
    if k.ldg != "none":
        k.restrict_in = True
        k.feature("ldg" if k.ldg == "all" else "ldg-some")
    if k.restrict_in:
        k.feature("restrict-in")
    if k.restrict_out:
        k.feature("restrict-out")

    # Double arithmetic: load float, compute in double, store (float). Never half: a half
    # result would be far outside the verifier's tolerance.
    k.real = "double" if k.chance(0.2) else "float"
    k.feature(f"real-{k.real}")

    k.store = k.choose([("plain", 60), ("atomic-exch", 10), ("atomic-add0", 10),
                        ("atomic-max", 10), ("atomic-cas", 10)])
    if k.store != "plain":
        k.feature(k.store)
    # The border copy sometimes uses a plain store even when the interior is atomic.
    k.border_store = k.store if k.chance(0.6) else "plain"

    k.printf = k.chance(PROBABILITY_PRINTF)
    if k.printf:
        k.feature("printf")
        if k.chance(0.7):
            k.include("cstdio")

    k.wrong = k.chance(PROBABILITY_WRONG)
    if k.wrong:
        k.feature("wrong")

    k.probe_count = k.choose([(0, 35), (1, 35), (2, 20), (3, 10)])
    k.reload = k.chance(0.2)
    k.fma = k.chance(0.25)
    k.int_types = "cstdint" if k.chance(0.3) else "builtin"
    if k.int_types == "cstdint":
        k.include("cstdint")
    if k.chance(0.05):
        k.include("cuda_fp16.h")  # included but unused, as learners do


def choose_wrong_kind(k, can_drop, can_depth=False):
    """How a `wrong` kernel goes wrong: memory-safe and race-free, but wrong values."""
    options = [("no-border", 25), ("border-scale", 20), ("weight", 25)]
    if can_drop:
        options.append(("drop", 30))
    if can_depth:
        options.append(("depth", 30))
    kind = k.choose(options)
    k.feature(f"wrong-{kind}")
    return kind


def unroll_pragma(k, code, family):
    """`#pragma unroll`, `#pragma unroll 1` or nothing before a loop; records which."""
    which = k.choose([("unroll", 40), ("unroll1", 30), ("plain", 30)])
    k.feature(f"{family}-{which}")
    if which == "unroll":
        code("#pragma unroll")
    elif which == "unroll1":
        code("#pragma unroll 1")


def emit_store(k, code, index, value, kind):
    """Write `value` (a float variable) to out[index], plainly or through an atomic.

    Every element is written by exactly one thread, so the atomics change nothing: they
    only add read-modify-write traffic to `out` for the sector counters to see."""
    target = f"out[{index}]"
    if kind == "plain":
        code(f"{target} = {value};")
    elif kind == "atomic-exch":
        code(f"atomicExch(&{target}, {value});")
    elif kind == "atomic-add0":
        code(f"{target} = {value};", f"atomicAdd(&{target}, 0.0f);")
    elif kind == "atomic-max":
        # The int bits of v against the same bits already stored: max(v, v) leaves v.
        code(f"{target} = {value};", f"atomicMax((int*)&{target}, __float_as_int({value}));")
    elif kind == "atomic-cas":
        code(f"{target} = {value};",
             f"atomicCAS((unsigned int*)&{target}, __float_as_uint({value}), __float_as_uint({value}));")
    else:
        raise ValueError(kind)


def int_type(k, bits):
    if k.int_types == "cstdint":
        return {8: "uint8_t", 16: "uint16_t", 64: "uint64_t"}[bits]
    return {8: "unsigned char", 16: "unsigned short", 64: "unsigned long long"}[bits]


def probe_predicate(k, lesson):
    """Which threads issue a probe: all of them, some lanes, even warps, or by sign bit."""
    kind = k.choose([("all", 40), ("lane", 25), ("warp", 15), ("sign", 20)])
    if kind == "all":
        return None
    k.feature(f"pred-{kind}")
    if kind == "lane":
        m = k.rng.choice([2, 3, 4, 5, 8, 32])
        return f"threadIdx.x % {m} == {k.rng.randrange(m)}"
    if kind == "warp":
        if lesson == "stencil-1d":
            return "((threadIdx.x >> 5) & 1) == 0"
        return "((threadIdx.y * blockDim.x + threadIdx.x) / 32) % 2 == 0"
    # The centre's sign bit: divergence that depends on the data.
    if k.real == "float" and k.chance(0.5):
        return "__float_as_uint(c) >> 31"
    return f"c < {k.lit(0)}" if k.chance(0.5) else f"!(c < {k.lit(0)})"


def emit_probes(k, code, index, lesson):
    """Extra loads that must not change the result: in[(i * stride + offset) mod total],
    1 to 16 bytes wide, folded in as 0 * value.

    Values reinterpreted as double or half could be NaN or Inf, and 0 * NaN is NaN; those
    are folded in through their integer bits instead, which are always finite."""
    for _ in range(k.probe_count):
        width = k.choose([("u8", 12), ("u16", 12), ("f32", 20), ("f2", 10), ("f64bits", 10),
                          ("u64", 8), ("f4", 16), ("half-bits", 6), ("half-cvt", 6)])
        k.feature(f"probe-{width}")
        stride = k.rng.randint(1, 67)
        offset = k.rng.randint(0, 4095)
        pred = probe_predicate(k, lesson)
        code(f"// probe ({width}): element (i * {stride} + {offset}) mod its count")
        code.open(f"if ({pred})" if pred else "")
        # Per unit of the probe's width: how many such units `in` holds.
        units = {"u8": "4 * total", "u16": "2 * total", "half-bits": "2 * total",
                 "f2": "total / 2", "f64bits": "total / 2", "u64": "total / 2",
                 "f4": "total / 4"}.get(width, "total")
        code(f"long long j = ((long long){index} * {stride} + {offset}) % ({units});")
        if width == "u8":
            t = int_type(k, 8)
            code(f"const {t}* p = reinterpret_cast<const {t}*>(in);", "junk += 0.0f * (float)p[j];")
        elif width == "u16":
            t = int_type(k, 16)
            code(f"const {t}* p = reinterpret_cast<const {t}*>(in);", "junk += 0.0f * (float)p[j];")
        elif width == "f32":
            code(f"junk += 0.0f * {k.load('j')};")
        elif width == "f2":
            code("const float2* p = reinterpret_cast<const float2*>(in);",
                 f"float2 pv = {k.load('j', 'p')};",
                 "junk += 0.0f * (pv.x + pv.y);" if k.chance(0.5) else "junk += 0.0f * pv.y;")
        elif width == "f64bits":
            code("const double* p = reinterpret_cast<const double*>(in);",
                 "long long bits = __double_as_longlong(p[j]);",
                 "junk += 0.0f * (float)(bits & 1);")
        elif width == "u64":
            t = int_type(k, 64)
            code(f"const {t}* p = reinterpret_cast<const {t}*>(in);",
                 "junk += 0.0f * (float)(p[j] & 0xffu);")
        elif width == "f4":
            comp = k.rng.choice(["pv.x", "pv.y", "pv.z", "pv.w", "(pv.x + pv.y + pv.z + pv.w)"])
            code("const float4* p = reinterpret_cast<const float4*>(in);",
                 f"float4 pv = {k.load('j', 'p')};", f"junk += 0.0f * {comp};")
        elif width == "half-bits":
            k.include("cuda_fp16.h")
            code("const __half* p = reinterpret_cast<const __half*>(in);",
                 "__half h = p[j];",
                 "junk += 0.0f * (float)(__half_as_ushort(h) & 1u);")
        elif width == "half-cvt":
            # A float in [0.25, 1) converted to half is finite.
            k.include("cuda_fp16.h")
            code(f"__half h = __float2half({k.load('j')});", "junk += 0.0f * __half2float(h);")
        code.close()


def emit_reload(k, code, targets):
    """The same element loaded again in a loop of 1..4 trips, each folded in as 0 * x."""
    trips = k.rng.randint(1, 4)
    target = k.rng.choice(targets)
    code(f"// reload in[{target}] {trips} time(s)")
    unroll_pragma(k, code, "reload")
    code.open(f"for (int r = 0; r < {trips}; ++r)")
    code(f"junk += 0.0f * {k.load(target)};")
    code.close()


def sum_terms(k, terms, drop):
    """The neighbours summed in a random order (one dropped in a wrong-drop kernel)."""
    terms = list(terms)
    k.rng.shuffle(terms)
    if drop:
        terms.pop()
    if len(terms) >= 4 and k.chance(0.3):
        half = len(terms) // 2
        return f"({' + '.join(terms[:half])}) + ({' + '.join(terms[half:])})"
    return " + ".join(terms)


def emit_border(k, code, index, centre_loaded=True):
    """The border copy out[i] = in[i] (or its wrong variants)."""
    if k.wrong_kind == "no-border":
        code("// wrong on purpose: the border is never written")
        return
    value = k.to_float("c") if centre_loaded and k.chance(0.7) else k.load(index)
    if k.wrong_kind == "border-scale":
        value = f"0.5f * {value}"
        code("// wrong on purpose: the border is scaled, not copied")
    code(f"float keep = {value};")
    emit_store(k, code, index, "keep", k.border_store)


def emit_interior(k, code, index, nsum_fn, reload_targets):
    """The stencil for one interior point: neighbours, probes, weights, store."""
    wc, wn = WEIGHTS[k.lesson]
    if k.wrong_kind == "weight":
        wn = WRONG_WEIGHT[k.lesson]
        code("// wrong on purpose: the neighbour weight")
    junk = k.probe_count > 0 or k.reload
    if junk:
        code("float junk = 0.0f;  // probes add 0 * value: traffic, no change to the result")
    probes_first = k.chance(0.5)
    if junk and probes_first:
        emit_probes(k, code, index, k.lesson)
    nsum_fn(code)
    if junk and not probes_first:
        emit_probes(k, code, index, k.lesson)
    if k.reload:
        emit_reload(k, code, reload_targets)
    if k.fma:
        k.feature("fma")
        fn = "fmaf" if k.real == "float" else "fma"
        expr = f"{fn}({k.lit(wn)}, nsum, {k.lit(wc)} * c)"
    else:
        expr = f"{k.lit(wc)} * c + {k.lit(wn)} * nsum"
    expr = expr if k.real == "float" else f"(float)({expr})"
    code(f"float result = {expr};")
    if junk:
        code("result += junk;")
    emit_store(k, code, index, "result", k.store)


def emit_point(k, code, index, border, centre, nsum_fn, reload_targets, style):
    """Everything an in-range thread does for its point: the centre, then the border copy
    or the stencil. `style` is `return` (border copy and return) or `else` (if/else)."""
    code(f"{k.real} c = {k.to_real(centre)};")
    if style == "return":
        code.open(f"if ({border})")
        emit_border(k, code, index)
        code("return;")
        code.close()
        emit_interior(k, code, index, nsum_fn, reload_targets)
    else:
        code.open(f"if ({border})")
        emit_border(k, code, index)
        code.reopen("else")
        emit_interior(k, code, index, nsum_fn, reload_targets)
        code.close()


def border_condition(k, coords):
    """`coords` on a face of the grid, written one of several equivalent ways."""
    form = k.choose([("eq", 50), ("unsigned", 20), ("not", 15), ("minmax", 15)])
    k.feature(f"border-{form}")
    if form == "eq":
        return " || ".join([f"{c} == 0" for c in coords] + [f"{c} == n - 1" for c in coords])
    if form == "unsigned":
        # x - 1 wraps to a huge value at x == 0; x == n - 1 lands on n - 2.
        return " || ".join(f"(unsigned long long)({c} - 1) >= (unsigned long long)(n - 2)" for c in coords)
    if form == "not":
        return "!(" + " && ".join(f"{c} > 0 && {c} < n - 1" for c in coords) + ")"
    lo, hi = coords[0], coords[0]
    for c in coords[1:]:
        lo, hi = f"min({lo}, {c})", f"max({hi}, {c})"
    return f"{lo} == 0 || {hi} == n - 1"


def emit_printf(k, code):
    """A printf in exactly one thread of the whole grid."""
    if k.printf:
        code(f"if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && "
             f"threadIdx.y == 0) printf(\"corpus kernel {k.index}: n = %d\\n\", n);")


# --------------------------------------------------------------------------------------------
# How the x neighbours are read besides plain loads: warp shuffles and vector loads.
# --------------------------------------------------------------------------------------------


def emit_shuffle(k, code, value, lane):
    """Every lane shuffles its centre `value` (a float) to its x neighbours. Must run in all
    32 lanes, before any exit. Returns a function that, for an interior point, emits the
    fallback loads at the segment edges and returns (left, right)."""
    width = k.choose([(32, 50), (16, 25), (8, 25)])
    form = k.choose([("updown", 60), ("idx", 40)])
    k.feature(f"shfl-{form}")
    k.feature(f"shfl-w{width}")
    w = "" if width == 32 and k.chance(0.5) else f", {width}"
    code(f"float v = {value};")
    if form == "updown":
        code(f"float from_left = __shfl_up_sync({FULL_MASK}, v, 1{w});",
             f"float from_right = __shfl_down_sync({FULL_MASK}, v, 1{w});")
    else:
        # Source lanes outside the segment wrap around inside it; those lanes fall back below.
        code(f"float from_left = __shfl_sync({FULL_MASK}, v, {lane} - 1{w});",
             f"float from_right = __shfl_sync({FULL_MASK}, v, {lane} + 1{w});")

    def fallback(code, index):
        seg = f"({lane} & {width - 1})" if k.chance(0.5) else f"({lane} % {width})"
        # The first and last lane of a segment have no neighbour in it: a global load.
        if k.chance(0.5):
            code(f"float left = {seg} == 0 ? {k.load(f'{index} - 1')} : from_left;",
                 f"float right = {seg} == {width - 1} ? {k.load(f'{index} + 1')} : from_right;")
        else:
            code("float left = from_left, right = from_right;",
                 f"if ({seg} == 0) left = {k.load(f'{index} - 1')};",
                 f"if ({seg} == {width - 1}) right = {k.load(f'{index} + 1')};")
        return k.to_real("left"), k.to_real("right")

    return fallback


def emit_vector_group(k, code, index, idx_t, total):
    """Load the aligned float4 (or float2) holding element `index`, guarded at the end of
    the array. Returns (centre, neighbours_fn): neighbours_fn(code) -> (left, right), taken
    from the group where they are in it and loaded from global memory where not."""
    vec = k.choose([(4, 70), (2, 30)])
    k.feature(f"vec{vec}")
    shift = {4: 2, 2: 1}[vec]
    if k.chance(0.5):
        code(f"{idx_t} q = {index} >> {shift};", f"int lane_in = (int)({index} & {vec - 1});")
    else:
        code(f"{idx_t} q = {index} / {vec};", f"int lane_in = (int)({index} % {vec});")
    if vec == 4:
        k.helper("__device__ __forceinline__ float pick4(float4 v, int k)\n{\n"
                 "    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;\n}")
        code("float4 grp;")
        code.open(f"if (q * 4 + 3 < {total})")
        code(f"grp = {k.load('q', 'reinterpret_cast<const float4*>(in)')};")
        code.reopen("else")
        code("// the last, partial group: only the elements that exist")
        code("grp = make_float4(in[q * 4], 0.0f, 0.0f, 0.0f);",
             f"if (q * 4 + 1 < {total}) grp.y = in[q * 4 + 1];",
             f"if (q * 4 + 2 < {total}) grp.z = in[q * 4 + 2];")
        code.close()
        centre = "pick4(grp, lane_in)"

        def neighbours(code):
            code(f"float left = lane_in > 0 ? pick4(grp, lane_in - 1) : {k.load(f'{index} - 1')};",
                 f"float right = lane_in < 3 ? pick4(grp, lane_in + 1) : {k.load(f'{index} + 1')};")
            return k.to_real("left"), k.to_real("right")
    else:
        code("float2 grp;")
        code.open(f"if (q * 2 + 1 < {total})")
        code(f"grp = {k.load('q', 'reinterpret_cast<const float2*>(in)')};")
        code.reopen("else")
        code("grp = make_float2(in[q * 2], 0.0f);")
        code.close()
        centre = "(lane_in == 0 ? grp.x : grp.y)"

        def neighbours(code):
            code(f"float left = lane_in == 1 ? grp.x : {k.load(f'{index} - 1')};",
                 f"float right = lane_in == 0 ? grp.y : {k.load(f'{index} + 1')};")
            return k.to_real("left"), k.to_real("right")
    return centre, neighbours


# --------------------------------------------------------------------------------------------
# Shared-memory tiles of the 2D and 3D lessons (the 1D tile is in gen_1d).
# --------------------------------------------------------------------------------------------


class Tile:
    """A block's cells plus a one-cell halo in x (and in y when halo_y), in one of three
    layouts: [rows][cols + pad], flat with a padded pitch, or transposed [cols][rows + pad]."""

    def __init__(self, k, halo_y):
        self.k = k
        self.halo_y = halo_y
        self.layout = k.choose([("2d", 55), ("flat", 25), ("transposed", 20)])
        self.pad = k.choose([(0, 60), (1, 40)])
        self.rows = "TILE_H + 2" if halo_y else "TILE_H"
        self.cols = "TILE_W + 2"
        k.feature(f"tile-{self.layout}")
        if self.pad:
            k.feature("tile-pad1")
        if not halo_y:
            k.feature("tile-x-only")

    def decl(self, code):
        padded = f"TILE_W + {2 + self.pad}"
        if self.layout == "2d":
            code(f"__shared__ float tile[{self.rows}][{padded}];")
        elif self.layout == "flat":
            self.k.define(f"#define TILE_PITCH (TILE_W + {2 + self.pad})")
            code(f"__shared__ float tile[({self.rows}) * TILE_PITCH];")
        else:
            rows = self.rows + (f" + {self.pad}" if self.pad else "")
            code(f"__shared__ float tile[{self.cols}][{rows}];")

    def ref(self, r, c):
        if self.layout == "2d":
            return f"tile[{r}][{c}]"
        if self.layout == "flat":
            return f"tile[({r}) * TILE_PITCH + {c}]"
        return f"tile[{c}][{r}]"

    def own_row(self, dy=0):
        base = 1 + dy if self.halo_y else dy
        return "ty" if base == 0 else f"ty + {base}" if base > 0 else f"ty - {-base}"

    def fill(self, k, code, index, plane_base, early_exit, own_value, idx_t):
        """Stage the tile. Edge fill: each thread its own cell, edge threads the halo (safe
        after an early exit: a halo cell is read only by the thread that loaded it).
        Strided fill: all threads walk every cell of the tile in a random order."""
        hy = 1 if self.halo_y else 0
        if self.fill_kind == "edge":
            own = own_value if own_value else (k.load(index) if early_exit else f"inside ? {k.load(index)} : 0.0f")
            code(f"{self.ref(self.own_row(), 'tx + 1')} = {own};")
            guard_x = "" if early_exit else " && y < n"
            guard_y = "" if early_exit else " && x < n"
            if hy:
                code.open("if (ty == 0)")
                code(f"{self.ref('0', 'tx + 1')} = (y > 0{guard_y}) ? {k.load(f'{index} - n')} : 0.0f;")
                code.close()
                code.open("if (ty == TILE_H - 1)")
                code(f"{self.ref('TILE_H + 1', 'tx + 1')} = (y + 1 < n{guard_y}) ? {k.load(f'{index} + n')} : 0.0f;")
                code.close()
            code.open("if (tx == 0)")
            code(f"{self.ref(self.own_row(), '0')} = (x > 0{guard_x}) ? {k.load(f'{index} - 1')} : 0.0f;")
            code.close()
            code.open("if (tx == TILE_W - 1)")
            code(f"{self.ref(self.own_row(), 'TILE_W + 1')} = (x + 1 < n{guard_x}) ? {k.load(f'{index} + 1')} : 0.0f;")
            code.close()
            return
        tid = k.choose([("ty * TILE_W + tx", 50), ("tx * TILE_H + ty", 25), ("xor", 25)])
        if tid == "xor":
            tid = f"(ty * TILE_W + tx) ^ {k.rng.randrange(1, 256)}"
        k.feature("tile-order-" + ("row" if tid.startswith("ty *") else "col" if tid.startswith("tx") else "xor"))
        cells = f"({self.rows}) * ({self.cols})"
        code(f"// every cell of the tile, {tid.replace('(', '').replace(')', '')} first")
        if k.chance(0.4):
            code("#pragma unroll")
        code.open(f"for (int cell = {tid}; cell < {cells}; cell += TILE_W * TILE_H)")
        if k.chance(0.6):
            code(f"int r = cell / ({self.cols}), col = cell % ({self.cols});")
        else:
            k.feature("tile-walk-colmajor")
            code(f"int col = cell / ({self.rows}), r = cell % ({self.rows});")
        code("int gx = blockIdx.x * TILE_W + col - 1;")
        code(f"int gy = blockIdx.y * TILE_H + r{' - 1' if hy else ''};")
        cond = "gx >= 0 && gx < n && gy >= 0 && gy < n" if hy else "gx >= 0 && gx < n && gy < n"
        g = f"{plane_base}({idx_t})gy * n + gx"
        code(f"{self.ref('r', 'col')} = ({cond}) ? {k.load(g)} : 0.0f;")
        code.close()

    def corners(self, code):
        """The corners are never read by a five-point stencil; some kernels set them anyway."""
        code.open("if (ty == 0 && tx < 4)")
        code(f"{self.ref('(tx & 1) ? TILE_H + 1 : 0', '(tx & 2) ? TILE_W + 1 : 0')} = 0.0f;")
        code.close()


# --------------------------------------------------------------------------------------------
# The three lessons.
# --------------------------------------------------------------------------------------------


def gen_1d(k):
    """stencil-1d: 256 threads a block, out[i] = 0.5 in[i] + 0.25 (in[i-1] + in[i+1])."""
    code = k.code
    mode = k.choose([("direct", 25), ("loop", 15), ("tile", 30), ("shuffle", 15), ("vector", 15)])
    k.feature(f"read-{mode}")
    idx_t = k.choose([("int", 50), ("long", 25), ("unsigned", 25)])
    k.feature(f"idx-{idx_t}")
    N = "(unsigned)n" if idx_t == "unsigned" else "n"
    k.wrong_kind = choose_wrong_kind(k, can_drop=True) if k.wrong else None
    drop = k.wrong_kind == "drop"

    block = "BLOCK" if mode == "tile" or k.chance(0.5) else "blockDim.x"
    if block == "BLOCK":
        k.define("#define BLOCK 256")

    tile_off = k.rng.randint(1, 4)
    tile_pad = k.rng.randint(0, 3)
    fill = k.choose([("edge", 60), ("strided", 40)]) if mode == "tile" else None
    if mode == "tile":
        k.define(f"#define OFF {tile_off}")
        k.feature(f"tile-{fill}")
        if tile_pad:
            k.feature("tile-pad")
        code(f"__shared__ float tile[OFF + BLOCK + {1 + tile_pad}];  // halo at OFF - 1 and OFF + BLOCK")

    code("int t = threadIdx.x;")
    cast = "(long)" if idx_t == "long" else ""
    code(f"{idx_t} i = {cast}blockIdx.x * {block} + t;")
    code(f"bool inside = i < {N};")
    if k.probe_count:
        code("long long total = n;  // elements in `in`, for the probes")
    emit_printf(k, code)

    # Where out-of-range threads leave: before the barrier (edge fill only), after the
    # shared work (tile fill, shuffles), or never (a guarded block).
    if mode == "tile" and fill == "edge":
        exit_at = k.choose([("before-barrier", 40), ("after-barrier", 35), ("guard", 25)])
    elif mode in ("tile", "shuffle"):
        exit_at = k.choose([("after-barrier" if mode == "tile" else "after-shuffle", 60), ("guard", 40)])
    else:
        exit_at = k.choose([("top", 65), ("guard", 35)])
    k.feature(f"exit-{exit_at}")
    style = k.choose([("return", 50), ("else", 50)]) if exit_at != "guard" else "else"
    border = k.choose([(f"i == 0 || i == {N} - 1", 50), (f"i == 0 || i + 1 == {N}", 25),
                       ("(unsigned long long)(i - 1) >= (unsigned long long)(n - 2)", 25)])

    if exit_at in ("top", "before-barrier"):
        code.open("if (!inside)")
        code("return;")
        code.close()

    centre = None
    neighbours = None
    if mode == "tile":
        if fill == "edge":
            own = k.load("i") if exit_at == "before-barrier" else f"inside ? {k.load('i')} : 0.0f"
            code(f"tile[OFF + t] = {own};")
            code.open("if (t == 0)")
            code(f"tile[OFF - 1] = (i > 0 && i - 1 < {N}) ? {k.load('i - 1')} : 0.0f;")
            code.close()
            code.open(f"if (t == BLOCK - 1)")
            code(f"tile[OFF + BLOCK] = (i + 1 < {N}) ? {k.load('i + 1')} : 0.0f;")
            code.close()
        else:
            perm = k.choose([("t", 40), ("BLOCK - 1 - t", 20), ("xor", 20), ("rot", 20)])
            if perm == "xor":
                perm = f"t ^ {k.rng.randrange(1, 256)}"
            elif perm == "rot":
                perm = f"(t + {k.rng.randrange(1, 256)}) & (BLOCK - 1)"
            k.feature("tile-order-" + ("id" if perm == "t" else "perm"))
            code("// all BLOCK + 2 cells, in a permuted order")
            if k.chance(0.5):
                code("#pragma unroll")
            code.open("for (int base = 0; base < BLOCK + 2; base += BLOCK)")
            code(f"int cell = base + ({perm});")
            code.open("if (cell < BLOCK + 2)")
            code("long g = (long)blockIdx.x * BLOCK + cell - 1;")
            code(f"tile[OFF - 1 + cell] = (g >= 0 && g < n) ? {k.load('g')} : 0.0f;")
            code.close()
            code.close()
        code("__syncthreads();")
        centre = "tile[OFF + t]"
        neighbours = lambda code: (k.to_real("tile[OFF + t - 1]"), k.to_real("tile[OFF + t + 1]"))
    elif mode == "shuffle":
        lane = k.choose([("lane", 50), ("(threadIdx.x & 31)", 50)])
        if lane == "lane":
            code("int lane = threadIdx.x % 32;")
        fallback = emit_shuffle(k, code, f"inside ? {k.load('i')} : 0.0f", lane)
        centre = "v"
        neighbours = lambda code: fallback(code, "i")

    if exit_at in ("after-barrier", "after-shuffle"):
        code.open("if (!inside)")
        code("return;")
        code.close()
    if exit_at == "guard":
        code.open("if (inside)")

    if mode == "vector":
        centre, neighbours = emit_vector_group(k, code, "i", idx_t, N)
    elif mode in ("direct", "loop"):
        centre = k.load("i")

    def nsum_fn(code):
        if mode == "loop":
            # The two neighbours in a loop over offsets (only d = -1 when wrong-drop).
            code(f"{k.real} nsum = 0;")
            unroll_pragma(k, code, "loop")
            hi = "-1" if drop else "1"
            code.open(f"for (int d = -1; d <= {hi}; d += 2)")
            code(f"nsum += {k.to_real(k.load('i + d'))};")
            code.close()
            return
        if neighbours:
            terms = neighbours(code)
        else:
            terms = (k.to_real(k.load("i - 1")), k.to_real(k.load("i + 1")))
        code(f"{k.real} nsum = {sum_terms(k, terms, drop)};")

    emit_point(k, code, "i", border, centre, nsum_fn, ["i", "i - 1", "i + 1"], style)
    if exit_at == "guard":
        code.close()


def gen_2d(k):
    """stencil-2d: 32 x 8 blocks, out = 0.5 c + 0.125 (left + right + up + down)."""
    code = k.code
    mode = k.choose([("direct", 20), ("loop", 12), ("tile", 30), ("tile-x", 8), ("shuffle", 12),
                     ("vector", 10), ("split", 8)])
    k.feature(f"read-{mode}")
    idx_t = k.choose([("int", 50), ("long", 25), ("unsigned", 25)])
    k.feature(f"idx-{idx_t}")
    k.wrong_kind = choose_wrong_kind(k, can_drop=True) if k.wrong else None
    drop = k.wrong_kind == "drop"
    k.define("#define TILE_W 32")
    k.define("#define TILE_H 8")

    tile = Tile(k, halo_y=(mode == "tile")) if mode in ("tile", "tile-x") else None
    if tile:
        tile.fill_kind = k.choose([("edge", 60), ("strided", 40)])
        k.feature(f"tile-{tile.fill_kind}")
        tile.decl(code)

    code("int tx = threadIdx.x, ty = threadIdx.y;")
    if k.chance(0.5):
        code("int x = blockIdx.x * TILE_W + tx;", "int y = blockIdx.y * TILE_H + ty;")
    else:
        code("int x = blockIdx.x * blockDim.x + threadIdx.x;", "int y = blockIdx.y * blockDim.y + threadIdx.y;")
    code("bool inside = x < n && y < n;")
    cast = {"int": "", "long": "(long)", "unsigned": "(unsigned)"}[idx_t]
    code(f"{idx_t} i = {cast}y * n + x;")
    if k.probe_count:
        code("long long total = (long long)n * n;  // elements in `in`, for the probes")
    emit_printf(k, code)

    if tile and tile.fill_kind == "edge":
        exit_at = k.choose([("before-barrier", 40), ("after-barrier", 35), ("guard", 25)])
    elif tile:
        exit_at = k.choose([("after-barrier", 60), ("guard", 40)])
    elif mode == "shuffle":
        exit_at = k.choose([("after-shuffle", 60), ("guard", 40)])
    else:
        exit_at = k.choose([("top", 65), ("guard", 35)])
    k.feature(f"exit-{exit_at}")
    style = k.choose([("return", 50), ("else", 50)]) if exit_at != "guard" else "else"
    border = border_condition(k, ["x", "y"])

    if exit_at in ("top", "before-barrier"):
        code.open("if (!inside)")
        code("return;")
        code.close()

    centre = None
    x_neighbours = None
    y_neighbours = None
    if tile:
        if tile.fill_kind == "edge" and tile.halo_y and k.chance(0.5):
            tile.corners(code)
        tile.fill(k, code, "i", "", exit_at == "before-barrier", None, idx_t)
        code("__syncthreads();")
        row = tile.own_row()
        centre = tile.ref(row, "tx + 1")
        x_neighbours = lambda code: (k.to_real(tile.ref(row, "tx")), k.to_real(tile.ref(row, "tx + 2")))
        if tile.halo_y:
            y_neighbours = lambda code: (k.to_real(tile.ref("ty", "tx + 1")), k.to_real(tile.ref("ty + 2", "tx + 1")))
    elif mode == "shuffle":
        # blockDim.x is 32: a warp is one row of the block, tx its lane.
        lane = k.choose([("tx", 50), ("(threadIdx.x & 31)", 50)])
        fallback = emit_shuffle(k, code, f"inside ? {k.load('i')} : 0.0f", lane)
        centre = "v"
        x_neighbours = lambda code: fallback(code, "i")

    if exit_at in ("after-barrier", "after-shuffle"):
        code.open("if (!inside)")
        code("return;")
        code.close()
    if exit_at == "guard":
        code.open("if (inside)")

    if mode == "vector":
        centre, x_neighbours = emit_vector_group(k, code, "i", idx_t, f"{cast}n * n")
    elif centre is None:
        centre = k.load("i")

    def global_terms():
        return [k.to_real(k.load(j)) for j in ("i - 1", "i + 1", "i - n", "i + n")]

    def loop_nsum(code, name="nsum", declare=True):
        if declare:
            code(f"{k.real} {name} = 0;")
        else:
            code(f"{name} = 0;")
        if k.chance(0.5):
            # Four offsets, as a step and a sign.
            k.feature("loop-offsets")
            unroll_pragma(k, code, "loop")
            code.open(f"for (int s = 0; s < {3 if drop else 4}; ++s)")
            code(f"{idx_t} step = (s < 2) ? 1 : n;")
            pick = f"(s & 1) ? {k.load('i + step')} : {k.load('i - step')}"
            code(f"{name} += {k.to_real(pick)};")
            code.close()
        else:
            # The 3 x 3 neighbourhood, keeping the four edge-adjacent cells.
            k.feature("loop-3x3")
            unroll_pragma(k, code, "loop")
            code.open("for (int dy = -1; dy <= 1; ++dy)")
            unroll_pragma(k, code, "loop")
            code.open(f"for (int dx = -1; dx <= {0 if drop else 1}; ++dx)")
            code.open("if ((dx != 0) != (dy != 0))")
            code(f"{name} += {k.to_real(k.load('i + dy * n + dx'))};")
            code.close()
            code.close()
            code.close()

    def nsum_fn(code):
        if mode == "loop":
            loop_nsum(code)
            return
        if mode == "split":
            # Two branches reading the same neighbours in different ways.
            cond = k.choose([("(tx & 1)", 25), ("(ty & 1)", 25), (f"c < {k.lit(0)}", 25),
                             ("((x + y) & 1)", 25)])
            k.feature("split-" + {"(tx & 1)": "lane", "(ty & 1)": "warp", "((x + y) & 1)": "checker"}.get(cond, "sign"))
            code(f"{k.real} nsum;")
            code.open(f"if ({cond})")
            code(f"nsum = {sum_terms(k, global_terms(), drop)};")
            code.reopen("else")
            if k.chance(0.5):
                loop_nsum(code, declare=False)
            else:
                k.feature("ldg-branch")
                terms = [k.to_real(f"__ldg(&in[{j}])") for j in ("i - n", "i + n", "i - 1", "i + 1")]
                code(f"nsum = {sum_terms(k, terms, drop)};")
            code.close()
            return
        terms = []
        if x_neighbours:
            terms += list(x_neighbours(code))
        else:
            terms += [k.to_real(k.load("i - 1")), k.to_real(k.load("i + 1"))]
        if y_neighbours:
            terms += list(y_neighbours(code))
        else:
            terms += [k.to_real(k.load("i - n")), k.to_real(k.load("i + n"))]
        code(f"{k.real} nsum = {sum_terms(k, terms, drop)};")

    emit_point(k, code, "i", border, centre, nsum_fn, ["i", "i - 1", "i + 1", "i - n", "i + n"], style)
    if exit_at == "guard":
        code.close()


def gen_3d(k):
    """stencil-3d: 32 x 16 x 1 blocks on a (.., .., 3) grid, each sweeping its share of z;
    out = 0.25 c + 0.125 (six neighbours)."""
    code = k.code
    mode = k.choose([("direct", 25), ("loop", 15), ("tile", 30), ("shuffle", 15), ("vector", 15)])
    k.feature(f"read-{mode}")
    regs = k.chance(0.4)
    if regs:
        k.feature("regs-z")
    idx_t = k.choose([("long", 50), ("long long", 25), ("unsigned long long", 25)])
    k.feature("idx-" + idx_t.replace(" ", "-"))
    k.wrong_kind = choose_wrong_kind(k, can_drop=True, can_depth=True) if k.wrong else None
    drop = k.wrong_kind == "drop"
    k.define("#define TILE_W 32")
    k.define("#define TILE_H 16")

    tile = Tile(k, halo_y=True) if mode == "tile" else None
    if tile:
        tile.fill_kind = k.choose([("edge", 60), ("strided", 40)])
        k.feature(f"tile-{tile.fill_kind}")
        tile.decl(code)

    code("int tx = threadIdx.x, ty = threadIdx.y;")
    code("int x = blockIdx.x * TILE_W + tx;", "int y = blockIdx.y * TILE_H + ty;")
    code("bool inside = x < n && y < n;")
    emit_printf(k, code)

    # Leaving at the top is fine unless the loop body holds warp shuffles (all 32 lanes) or
    # a strided tile fill (every thread covers cells of others).
    can_exit = mode not in ("shuffle",) and not (tile and tile.fill_kind == "strided")
    exit_at = "top" if can_exit and k.chance(0.4) else "guard"
    k.feature(f"exit-{exit_at}")
    if exit_at == "top":
        code.open("if (!inside)")
        code("return;")
        code.close()

    if k.wrong_kind == "depth":
        code("int depth = n / gridDim.z;  // wrong on purpose: rounds down, the last planes are lost")
    else:
        code("int depth = (n + gridDim.z - 1) / gridDim.z;")
    code("int z_begin = blockIdx.z * depth;", "int z_end = min(z_begin + depth, n);")
    code(f"{idx_t} plane = ({idx_t})n * n;", f"{idx_t} column = ({idx_t})y * n + x;")
    if k.probe_count:
        code("long long total = (long long)n * n * n;  // elements in `in`, for the probes")
    if tile and tile.fill_kind == "edge" and k.chance(0.5):
        tile.corners(code)

    guard = "inside && " if exit_at == "guard" else ""
    if regs:
        code("// behind, centre and ahead of this column, carried from one z step to the next")
        code("float behind = 0.0f, centre = 0.0f, ahead = 0.0f;")
        code.open(f"if ({guard}z_begin < z_end)")
        code(f"centre = {k.load('z_begin * plane + column')};")
        code.open("if (z_begin > 0)")
        code(f"behind = {k.load('(z_begin - 1) * plane + column')};")
        code.close()
        code.close()

    if k.chance(0.3):
        k.feature("zloop-unroll1")
        code("#pragma unroll 1")
    code.open("for (int z = z_begin; z < z_end; ++z)")
    code(f"{idx_t} i = z * plane + column;")
    if regs:
        code.open(f"if ({guard}z + 1 < n)")
        code(f"ahead = {k.load('i + plane')};")
        code.close()

    centre = "centre" if regs else None
    x_neighbours = None
    y_neighbours = None
    if tile:
        own = "centre" if regs and tile.fill_kind == "edge" else None
        tile.fill(k, code, "i", "z * plane + ", exit_at == "top", own, idx_t)
        code("__syncthreads();  // the plane is staged")
        row = tile.own_row()
        centre = centre or tile.ref(row, "tx + 1")
        x_neighbours = lambda code: (k.to_real(tile.ref(row, "tx")), k.to_real(tile.ref(row, "tx + 2")))
        y_neighbours = lambda code: (k.to_real(tile.ref("ty", "tx + 1")), k.to_real(tile.ref("ty + 2", "tx + 1")))
    elif mode == "shuffle":
        lane = k.choose([("tx", 50), ("(threadIdx.x & 31)", 50)])
        value = "centre" if regs else f"inside ? {k.load('i')} : 0.0f"
        fallback = emit_shuffle(k, code, value, lane)
        centre = centre or "v"
        x_neighbours = lambda code: fallback(code, "i")

    if exit_at == "guard":
        code.open("if (inside)")
    if mode == "vector":
        vcentre, x_neighbours = emit_vector_group(k, code, "i", idx_t, "plane * n")
        centre = centre or vcentre
    centre = centre or k.load("i")

    def depth_terms():
        if regs:
            return [k.to_real("behind"), k.to_real("ahead")]
        return [k.to_real(k.load("i - plane")), k.to_real(k.load("i + plane"))]

    def nsum_fn(code):
        if mode == "loop":
            count = 4 if regs else 6
            code(f"{k.real} nsum = 0;")
            unroll_pragma(k, code, "loop")
            code.open(f"for (int s = 0; s < {count - 1 if drop else count}; ++s)")
            code(f"{idx_t} step = (s < 2) ? ({idx_t})1 : (s < 4) ? ({idx_t})n : plane;")
            pick = f"(s & 1) ? {k.load('i + step')} : {k.load('i - step')}"
            code(f"nsum += {k.to_real(pick)};")
            code.close()
            if regs:
                code(f"nsum += {' + '.join(depth_terms())};")
            return
        terms = []
        if x_neighbours:
            terms += list(x_neighbours(code))
        else:
            terms += [k.to_real(k.load("i - 1")), k.to_real(k.load("i + 1"))]
        if y_neighbours:
            terms += list(y_neighbours(code))
        else:
            terms += [k.to_real(k.load("i - n")), k.to_real(k.load("i + n"))]
        terms += depth_terms()
        code(f"{k.real} nsum = {sum_terms(k, terms, drop)};")

    border = border_condition(k, ["x", "y", "z"])
    # No return inside the z loop: the barriers and the register rotation must be reached.
    emit_point(k, code, "i", border, centre, nsum_fn, ["i", "i - 1", "i + n", "i + plane"], "else")
    if exit_at == "guard":
        code.close()
    if tile:
        code("__syncthreads();  // all reads of the tile are done before the next plane")
    if regs:
        code("behind = centre;", "centre = ahead;")
    code.close()


ENTRIES = {"stencil-1d": ("stencil1d", gen_1d), "stencil-2d": ("stencil2d", gen_2d),
           "stencil-3d": ("stencil3d", gen_3d)}


def generate(seed, index):
    """Kernel `index` of corpus `seed`: (lesson, source text, features)."""
    k = Kernel(seed, index)
    choose_common(k)
    entry, body = ENTRIES[k.lesson]
    body(k)
    restrict_in = " __restrict__" if k.restrict_in else ""
    restrict_out = " __restrict__" if k.restrict_out else ""
    out = [f"// lesson: {k.lesson}",
           f"// corpus seed {seed} kernel {index}: {', '.join(k.features)}",
           "// Generated by scripts/corpus/generate.py; do not edit."]
    out += [""] + [f"#include <{h}>" for h in k.includes] if k.includes else []
    out += [""] + k.defines if k.defines else []
    for h in k.helpers:
        out += ["", h]
    out += ["", f"extern \"C\" __global__ void {entry}(const float*{restrict_in} in, float*{restrict_out} out, int n)",
            "{"]
    out += k.code.lines
    out += ["}", ""]
    return k.lesson, "\n".join(out), k.features


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=320)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    manifest = []
    for index in range(args.count):
        lesson, text, features = generate(args.seed, index)
        rel = f"{lesson}/k{index:04d}.cu"
        path = os.path.join(args.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="\n") as f:
            f.write(text)
        manifest.append({"file": rel, "lesson": lesson, "index": index, "features": features})
    with open(os.path.join(args.out, "manifest.json"), "w", newline="\n") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    counts = {}
    for m in manifest:
        counts[m["lesson"]] = counts.get(m["lesson"], 0) + 1
    print(f"{len(manifest)} kernels in {args.out}: "
          + ", ".join(f"{lesson} {counts[lesson]}" for lesson in sorted(counts)))


if __name__ == "__main__":
    main()
