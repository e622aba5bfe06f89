#!/usr/bin/env python3
"""Seeded generator of the hazard corpus: stencil kernels for the four lessons, each either a
correct kernel or the same kernel with one hazard injected (issue 28).

    python3 scripts/hazards/generate.py --seed S --out DIR

writes DIR/<lesson>/h<index:04d>.cu and DIR/manifest.json, a list of
{"file", "lesson", "index", "base", "tile", "hazard", "sizes"}. `hazard` is "none" for a
correct kernel. `sizes` are the sizes the corpus is checked at, on the GPU under
compute-sanitizer and on the emulator: the lesson's verification sizes below the profile size.

A kernel is put together from a base shape (how the tile, if any, is filled and read), a tile
element kind (float, double, __half, or the float's bits spread over 2-byte or 1-byte arrays,
so that neighbouring threads write disjoint bytes of one word), small style choices drawn
from random.Random(f"{seed}:{lesson}:{base}:{tile}:{hazard}"), and at most one hazard:

  no-barrier          the barrier between filling the tile and reading it is left out
  misplaced-barrier   the barrier sits before the tile is written instead of after
  syncwarp            __syncwarp() where __syncthreads() is needed
  barrier-in-branch   __syncthreads() only inside `if (in range)`
  no-second-barrier   3D: no barrier before the next plane overwrites the tile
  off-left            a neighbour index one too far left at the grid's first element (in[-1])
  off-right           one too far right at the last element (in[n])
  tile-oob            a halo cell written one past the end of the tile
  uninit-cell         one halo side never written, but read
  early-exit          threads leave before the barrier, and their cells are read
  unguarded           the neighbours are read before the border check, without guards
  no-warp-sync        a per-warp tile read by other lanes with no __syncwarp()
  shfl-as-sync        a __shfl_sync in place of __syncwarp()
  partial-mask        __syncwarp(0x0000ffff) executed by all 32 lanes
  atomic-early-read   a shared counter read before the barrier that orders its atomics
  flag-before-data    a volatile flag raised before the data it guards is written

Asynchronous copies (base "async", 2D and 3D: the tile staged with cp.async through the
pipeline primitives, cuda::pipeline or PTX) and thread-block clusters (lesson
stencil-2d-cluster, bases "cluster-copy": the inner halo ring copied from the neighbours'
tiles, and "cluster-direct": the neighbours' cells read where the stencil needs them):

  no-async-wait       the copies are committed but never waited for before the barrier
  wait-after-barrier  the wait comes after the barrier that should publish the copies
  no-first-cluster-sync       a neighbour's tile read with no cluster barrier after it was filled
  syncthreads-for-cluster     __syncthreads() where the cluster barrier is needed
  exit-before-neighbours      the last cluster barrier replaced by __syncthreads(): a block may
                              leave while a neighbour still reads its tile

Only the standard library is used; the same seed gives the same bytes.
"""

import argparse
import json
import os
import random

SIZES = {
    "stencil-1d": [33, 1000],
    "stencil-2d": [33, 257],
    "stencil-3d": [33, 100],
    "stencil-3d-registers": [33, 100],
    "stencil-2d-cluster": [33, 257],
}
ENTRY = {"stencil-1d": "stencil1d", "stencil-2d": "stencil2d", "stencil-3d": "stencil3d",
         "stencil-3d-registers": "stencil3d", "stencil-2d-cluster": "stencil2d"}
WEIGHTS = {"stencil-1d": ("0.5f", "0.25f"), "stencil-2d": ("0.5f", "0.125f"),
           "stencil-3d": ("0.25f", "0.125f"), "stencil-3d-registers": ("0.25f", "0.125f"),
           "stencil-2d-cluster": ("0.5f", "0.125f")}

FULL = "0xffffffffu"


class Tile:
    """A shared tile of floats stored as `kind`: how it is declared, written and read.

    `float` and `double` are one array; `half` rounds to half precision (the GPU's results are
    then wrong: the verdict to expect); `u16` and `u8` keep a float's bits exactly in two or
    four arrays of 2-byte or 1-byte cells, so threads next to each other write different bytes
    of one 4-byte word."""

    def __init__(self, kind, name, shape):
        self.kind, self.name, self.shape = kind, name, shape

    def arrays(self):
        return {"u16": [f"{self.name}_lo", f"{self.name}_hi"],
                "u8": [f"{self.name}_b{k}" for k in range(4)]}.get(self.kind, [self.name])

    def element(self):
        return {"float": "float", "double": "double", "half": "__half", "u16": "unsigned short",
                "u8": "unsigned char"}[self.kind]

    def decl(self, prefix="__shared__ "):
        dims = "".join(f"[{d}]" for d in self.shape)
        return [f"{prefix}{self.element()} {a}{dims};" for a in self.arrays()]

    def store(self, idx, value):
        at = "".join(f"[{i}]" for i in idx)
        a = self.arrays()
        if self.kind == "float":
            return [f"{a[0]}{at} = {value};"]
        if self.kind == "double":
            return [f"{a[0]}{at} = (double)({value});"]
        if self.kind == "half":
            return [f"{a[0]}{at} = __float2half({value});"]
        if self.kind == "u16":
            return ["{", f"    unsigned bits = __float_as_uint({value});",
                    f"    {a[0]}{at} = (unsigned short)(bits & 0xffffu);",
                    f"    {a[1]}{at} = (unsigned short)(bits >> 16);", "}"]
        lines = ["{", f"    unsigned bits = __float_as_uint({value});"]
        lines += [f"    {a[k]}{at} = (unsigned char)(bits >> {8 * k});" for k in range(4)]
        return lines + ["}"]

    def load(self, idx):
        at = "".join(f"[{i}]" for i in idx)
        a = self.arrays()
        if self.kind == "float":
            return f"{a[0]}{at}"
        if self.kind == "double":
            return f"(float){a[0]}{at}"
        if self.kind == "half":
            return f"__half2float({a[0]}{at})"
        if self.kind == "u16":
            return f"__uint_as_float((unsigned){a[0]}{at} | ((unsigned){a[1]}{at} << 16))"
        parts = " | ".join(f"((unsigned){a[k]}{at} << {8 * k})" for k in range(4))
        return f"__uint_as_float({parts})"


class Code:
    def __init__(self):
        self.lines, self.depth = [], 1

    def __call__(self, *lines):
        for line in lines:
            self.lines.append("    " * self.depth + line if line else "")

    def block(self, head, body):
        self(head + " {")
        self.depth += 1
        self(*body)
        self.depth -= 1
        self("}")


def guarded(cond, lines):
    """`if (cond) stmt;` for one plain statement, a braced block otherwise."""
    if len(lines) == 1:
        return [f"if ({cond}) {lines[0]}"]
    return [f"if ({cond}) {{"] + ["    " + ln for ln in lines] + ["}"]


class Kernel:
    def __init__(self, seed, lesson, base, tile, hazard):
        self.rng = random.Random(f"{seed}:{lesson}:{base}:{tile}:{hazard}")
        self.lesson, self.base, self.tile_kind, self.hazard = lesson, base, tile, hazard
        self.includes = set()
        if tile == "half":
            self.includes.add("cuda_fp16.h")
        self.code = Code()
        self.helpers = []
        self.restrict = " __restrict__" if self.rng.random() < 0.4 else ""
        self.centre, self.nb = WEIGHTS[lesson]

    def pick(self, *options):
        return self.rng.choice(options)

    def barrier(self, needed="__syncthreads();"):
        """The tile's barrier as the hazard leaves it."""
        h = self.hazard
        if h == "no-barrier":
            return ["// (no barrier here)"]
        if h == "syncwarp":
            return ["__syncwarp();"]
        return [needed]

    def source(self):
        head = [f"// hazard corpus: lesson {self.lesson}, base {self.base}, tile {self.tile_kind}, "
                f"hazard {self.hazard}"]
        for inc in sorted(self.includes):
            head.append(f"#include <{inc}>")
        head += [""] + self.helpers if self.helpers else []
        params = (f"const float*{self.restrict} in, float*{self.restrict} out, int n")
        return "\n".join(head + ["", f'extern "C" __global__ void {ENTRY[self.lesson]}({params})', "{"]
                         + self.code.lines + ["}", ""])


# ------------------------------------------------------------------------------------------
# 1D: block 256, tile of 258 (one halo cell each side).
# ------------------------------------------------------------------------------------------


def build_1d(k):
    c, h = k.code, k.hazard
    B = k.pick("256", "blockDim.x")
    t = Tile(k.tile_kind, k.pick("tile", "sh", "cells"), ["258"] if k.base != "warp" else ["8", "34"])
    c("int t = threadIdx.x;")
    c(f"int i = blockIdx.x * {B} + t;")
    if k.base == "direct":
        c("if (i >= n) return;")
        if h == "unguarded":
            c("float l = in[i - 1];", "float r = in[i + 1];")
        else:
            c("float l = i > 0 ? in[i - 1] : 0.0f;", "float r = i + 1 < n ? in[i + 1] : 0.0f;")
        c("float m = in[i];")
        form = k.pick("if", "select", "overwrite")
        expr = f"{k.centre} * m + {k.nb} * (l + r)"
        if form == "if":
            c("if (i == 0 || i == n - 1) {", "    out[i] = m;", "    return;", "}", f"out[i] = {expr};")
        elif form == "select":
            c(f"out[i] = (i == 0 || i == n - 1) ? m : {expr};")
        else:
            c(f"float v = {expr};", "if (i == 0 || i == n - 1) v = m;", "out[i] = v;")
        return
    if k.base == "shfl":
        c("int lane = t & 31;", "float m = i < n ? in[i] : 0.0f;",
          f"float l = __shfl_up_sync({FULL}, m, 1);", f"float r = __shfl_down_sync({FULL}, m, 1);")
        if h == "off-left":
            c("if (lane == 0) l = in[i - 1];")
        else:
            c("if (lane == 0) l = (i > 0 && i - 1 < n) ? in[i - 1] : 0.0f;")
        if h == "off-right":
            c("if (lane == 31 || i == n - 1) r = in[i + 1];")
        else:
            c("if (lane == 31) r = i + 1 < n ? in[i + 1] : 0.0f;")
        c("if (i >= n) return;", "if (i == 0 || i == n - 1) {", "    out[i] = m;", "    return;", "}",
          f"out[i] = {k.centre} * m + {k.nb} * (l + r);")
        return
    if k.base == "warp":
        # Each warp stages its own 32 cells and one halo cell each side in its row of the tile.
        c(*t.decl())
        c("int w = t / 32, lane = t % 32;")
        if k.tile_kind == "float" and k.rng.random() < 0.5:
            k.includes.add("cooperative_groups.h")
            c("namespace cg = cooperative_groups;")
            c("cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());")
            sync = "warp.sync();"
        else:
            sync = "__syncwarp();"
        c(*t.store(["w", "lane + 1"], "i < n ? in[i] : 0.0f"))
        c(*guarded("lane == 0", t.store(["w", "0"], "(i > 0 && i - 1 < n) ? in[i - 1] : 0.0f")))
        c(*guarded("lane == 31", t.store(["w", "33"], "i + 1 < n ? in[i + 1] : 0.0f")))
        if h == "no-warp-sync":
            c("// (no __syncwarp here)")
        elif h == "shfl-as-sync":
            c(f"float dummy = __shfl_sync({FULL}, 0.0f, 0);", "if (dummy != 0.0f) return;")
        elif h == "partial-mask":
            c("__syncwarp(0x0000ffffu);")
        else:
            c(sync)
        c("if (i >= n) return;")
        c(f"float m = {t.load(['w', 'lane + 1'])};")
        c("if (i == 0 || i == n - 1) {", "    out[i] = m;", "    return;", "}")
        c(f"out[i] = {k.centre} * m + {k.nb} * ({t.load(['w', 'lane'])} + {t.load(['w', 'lane + 2'])});")
        return

    # Tile bases: "tile" (edge threads load the halo), "loop" (a strided fill), "atomic" (a
    # shared counter beside the tile), "flag" (the right halo handed over with a flag).
    c(*t.decl())
    if k.base == "atomic":
        c("__shared__ int live;", "if (t == 0) live = 0;", "__syncthreads();", "if (i < n) atomicAdd(&live, 1);")
        if h == "atomic-early-read":
            c("int seen = live;  // before the barrier that orders the atomics")
    if k.base == "flag":
        c("__shared__ volatile int ready;", "if (t == 0) ready = 0;")
    if h == "early-exit":
        c("if (i >= n - 1) return;")
    elif k.base != "loop" and k.rng.random() < 0.3 and h not in ("barrier-in-branch",):
        # (Not in a strided fill: the leaving threads' share of the tile would go unwritten.)
        c("if (i >= n) return;  // threads past the end leave before the barrier (fine on sm_70+)")
    own = t.store(["t + 1"], "i < n ? in[i] : 0.0f")
    if k.base == "loop":
        bound = {"uninit-cell": "257", "tile-oob": "259"}.get(h, "258")
        cond = {"off-left": "g < n", "off-right": "g <= n"}.get(h, "g >= 0 && g < n")
        c(f"for (int k = t; k < {bound}; k += {B}) {{")
        c("    int g = blockIdx.x * 256 - 1 + k;")
        for line in t.store(["k"], f"({cond}) ? in[g] : 0.0f"):
            c("    " + line)
        c("}")
    else:
        if h == "misplaced-barrier":
            c("__syncthreads();  // too early: the tile is not written yet")
        c(*own)
        if h != "uninit-cell" or k.rng.random() < 0.5:
            if h == "off-left":
                c(*guarded("t == 0", t.store(["0"], "in[i - 1]")))
            else:
                c(*guarded("t == 0", t.store(["0"], "(i > 0 && i - 1 < n) ? in[i - 1] : 0.0f")))
            right_ok = h != "uninit-cell"
        else:
            right_ok = True
            c("// (the left halo cell is never written)")
        if k.base == "flag":
            pass  # the right halo is handed over after the barrier, below
        elif right_ok:
            if h == "off-right":
                c(*guarded("t == 255 || i == n - 1", t.store(["t + 2"], "in[i + 1]")))
            elif h == "tile-oob":
                c(*guarded("t == 255", t.store(["258"], "i + 1 < n ? in[i + 1] : 0.0f")))
            else:
                c(*guarded("t == 255", t.store(["257"], "i + 1 < n ? in[i + 1] : 0.0f")))
        else:
            c("// (the right halo cell is never written)")
    if h == "barrier-in-branch":
        c("if (i < n) __syncthreads();")
    elif h != "misplaced-barrier":
        c(*k.barrier())
    if k.base == "flag":
        # After the barrier thread 0 writes the right halo and raises the flag; thread 255,
        # the only reader of that cell, waits for it.
        store = t.store(["257"], "(blockIdx.x * 256 + 256 < n) ? in[blockIdx.x * 256 + 256] : 0.0f")
        if h == "flag-before-data":
            c("if (t == 0) {", "    ready = 1;  // raised before the data is written")
            c(*["    " + ln for ln in store])
            c("}")
        else:
            c("if (t == 0) {")
            c(*["    " + ln for ln in store])
            c("    __threadfence_block();", "    ready = 1;", "}")
        c("if (t == 255) {", "    while (ready == 0) __nanosleep(32);", "    __threadfence_block();", "}")
    if k.base == "atomic":
        c("if (live == 0) return;" if h != "atomic-early-read" else "if (seen < 0) return;")
    c("if (i >= n) return;")
    c(f"float m = {t.load(['t + 1'])};")
    c("if (i == 0 || i == n - 1) {", "    out[i] = m;", "    return;", "}")
    c(f"out[i] = {k.centre} * m + {k.nb} * ({t.load(['t'])} + {t.load(['t + 2'])});")


# ------------------------------------------------------------------------------------------
# 2D: block 32 x 8, tile 10 x 34.
# ------------------------------------------------------------------------------------------


def async_copy(k, dst, src):
    """One lane's 4-byte asynchronous copy of `src` (a float's address) into `dst`, in the
    API the kernel picked."""
    api = k.api
    if api == "primitives":
        return f"__pipeline_memcpy_async({dst}, {src}, sizeof(float));"
    if api == "pipeline":
        return f"cuda::memcpy_async({dst}, {src}, sizeof(float), pipe);"
    return (f'asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: '
            f'"r"((unsigned)__cvta_generic_to_shared({dst})), "l"({src}) : "memory");')


def async_setup(k):
    """Includes and declarations for the kernel's async API; returns (commit, wait) lines."""
    k.api = k.pick("primitives", "pipeline", "ptx")
    if k.api == "primitives":
        k.includes.add("cuda_pipeline.h")
        return ["__pipeline_commit();"], ["__pipeline_wait_prior(0);"]
    if k.api == "pipeline":
        k.includes.add("cuda/pipeline")
        k.code("cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();")
        return ["pipe.producer_commit();"], ["pipe.consumer_wait();", "pipe.consumer_release();"]
    return ['asm volatile("cp.async.commit_group;" ::: "memory");'], \
        ['asm volatile("cp.async.wait_group 0;" ::: "memory");']


def stage_async(k, t, cells):
    """Stages `cells` (tile index, global index, guard) with asynchronous copies where the
    guard holds and a zero where not, then commits, waits and syncs as the hazard leaves it."""
    c, h = k.code, k.hazard
    commit, wait = async_setup(k) if not hasattr(k, "api") else k.async_lines
    k.async_lines = (commit, wait)
    for idx, g, guard, when in cells:
        at = "&" + t.name + "".join(f"[{i}]" for i in idx)
        body = [f"if ({guard}) {async_copy(k, at, '&in[' + g + ']')}",
                f"else {t.name}{''.join(f'[{i}]' for i in idx)} = 0.0f;"]
        c(*(body if when == "true" else guarded(when, body)))
    c(*commit)
    if h not in ("no-async-wait", "wait-after-barrier"):
        c(*wait)
    if h == "no-async-wait":
        c("// (the copies are never waited for)")
    c(*k.barrier())
    if h == "wait-after-barrier":
        c(*wait)


def build_2d_async(k):
    """2D, base "async": the 10 x 34 tile staged with cp.async."""
    c = k.code
    t = Tile("float", k.pick("tile", "sh", "patch"), ["10", "34"])
    c("int tx = threadIdx.x, ty = threadIdx.y;",
      "int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;",
      "bool inside = x < n && y < n;", "int i = y * n + x;")
    c(*t.decl())
    cells = [(["ty + 1", "tx + 1"], "i", "inside", "true"),
             (["0", "tx + 1"], "i - n", "y > 0 && x < n", "ty == 0"),
             (["9", "tx + 1"], "i + n", "y + 1 < n && x < n", "ty == 7"),
             (["ty + 1", "0"], "i - 1", "x > 0 && y < n", "tx == 0"),
             (["ty + 1", "33"], "i + 1", "x + 1 < n && y < n", "tx == 31")]
    stage_async(k, t, cells)
    c("if (!inside) return;", f"float m = {t.load(['ty + 1', 'tx + 1'])};",
      "if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {", "    out[i] = m;", "    return;", "}")
    s = " + ".join(t.load(ix) for ix in (["ty + 1", "tx"], ["ty + 1", "tx + 2"], ["ty", "tx + 1"], ["ty + 2", "tx + 1"]))
    c(f"out[i] = {k.centre} * m + {k.nb} * ({s});")


def build_2d_cluster(k):
    """Lesson stencil-2d-cluster (block 32 x 8, cluster 4 x 2): the block loads its own cells
    and the cluster's outer ring; the inner ring comes from the neighbours' tiles, copied into
    its own ring ("cluster-copy") or read where the stencil needs it ("cluster-direct")."""
    c, h = k.code, k.hazard
    style = k.pick("cg", "ptx")
    split = k.rng.random() < 0.3
    t = Tile("float", k.pick("tile", "sh", "patch"), ["10", "34"])
    c(*t.decl())
    if style == "cg":
        k.includes.add("cooperative_groups.h")
        c("cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();",
          "unsigned rank = cluster.block_rank();",
          "unsigned cx = cluster.block_index().x, cy = cluster.block_index().y;")
        first_sync = (["cluster.barrier_arrive();", "cluster.barrier_wait();"] if split else ["cluster.sync();"])
        last_sync = ["cluster.sync();"]
        remote = lambda rank, r, col: f"cluster.map_shared_rank(&{t.name}[0][0], {rank})[({r}) * 34 + ({col})]"
    else:
        c("unsigned rank, cx, cy;",
          'asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));',
          'asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(cx));',
          'asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(cy));')
        sync = 'asm volatile("barrier.cluster.arrive;\\n\\tbarrier.cluster.wait;" ::: "memory");'
        first_sync = [sync]
        last_sync = [sync]

        def remote(rank, r, col):
            return (f"remote_cell((unsigned)__cvta_generic_to_shared(&{t.name}[{r}][{col}]), {rank})")
        k.helpers.append("__device__ __forceinline__ float remote_cell(unsigned local, unsigned rank)\n{\n"
                         "    unsigned at;\n    float v;\n"
                         '    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(at) : "r"(local), "r"(rank));\n'
                         '    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(at) : "memory");\n'
                         "    return v;\n}")
    if h == "no-first-cluster-sync":
        first_sync = ["// (no cluster barrier: the neighbours' tiles may not be written yet)"]
    elif h == "syncthreads-for-cluster":
        first_sync = ["__syncthreads();  // orders this block only"]
    if h == "exit-before-neighbours":
        last_sync = ["__syncthreads();  // a neighbour may still read this tile"]
    c("int tx = threadIdx.x, ty = threadIdx.y;",
      "int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;",
      "bool inside = x < n && y < n;", "int i = y * n + x;",
      "bool left_edge = cx == 0, right_edge = cx == 3, top_edge = cy == 0, bottom_edge = cy == 1;")
    c(*t.store(["ty + 1", "tx + 1"], "inside ? in[i] : 0.0f"))
    c(*guarded("ty == 0 && top_edge", t.store(["0", "tx + 1"], "(y > 0 && y - 1 < n && x < n) ? in[i - n] : 0.0f")))
    c(*guarded("ty == 7 && bottom_edge", t.store(["9", "tx + 1"], "(y + 1 < n && x < n) ? in[i + n] : 0.0f")))
    c(*guarded("tx == 0 && left_edge", t.store(["ty + 1", "0"], "(x > 0 && x - 1 < n && y < n) ? in[i - 1] : 0.0f")))
    c(*guarded("tx == 31 && right_edge", t.store(["ty + 1", "33"], "(x + 1 < n && y < n) ? in[i + 1] : 0.0f")))
    c(*guarded("ty == 0 && tx < 4", t.store(["(tx & 1) ? 9 : 0", "(tx & 2) ? 33 : 0"], "0.0f")))
    c(*first_sync)
    if k.base == "cluster-copy":
        c(*guarded("ty == 0 && !top_edge", t.store(["0", "tx + 1"], remote("rank - 4", "8", "tx + 1"))))
        c(*guarded("ty == 7 && !bottom_edge", t.store(["9", "tx + 1"], remote("rank + 4", "1", "tx + 1"))))
        c(*guarded("tx == 0 && !left_edge", t.store(["ty + 1", "0"], remote("rank - 1", "ty + 1", "32"))))
        c(*guarded("tx == 31 && !right_edge", t.store(["ty + 1", "33"], remote("rank + 1", "ty + 1", "1"))))
        c(*last_sync)
        c("if (!inside) return;", f"float m = {t.load(['ty + 1', 'tx + 1'])};",
          "if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {", "    out[i] = m;", "    return;", "}")
        s = " + ".join(t.load(ix) for ix in (["ty + 1", "tx"], ["ty + 1", "tx + 2"], ["ty", "tx + 1"], ["ty + 2", "tx + 1"]))
        c(f"out[i] = {k.centre} * m + {k.nb} * ({s});")
        return
    # cluster-direct: the neighbours' cells are read where the stencil needs them; every
    # thread computes before the last cluster barrier and stores after it.
    own = lambda r, col: t.load([r, col])
    c(f"float m = {own('ty + 1', 'tx + 1')};",
      f"float l = (tx > 0 || left_edge) ? {own('ty + 1', 'tx')} : {remote('rank - 1', 'ty + 1', '32')};",
      f"float r = (tx < 31 || right_edge) ? {own('ty + 1', 'tx + 2')} : {remote('rank + 1', 'ty + 1', '1')};",
      f"float u = (ty > 0 || top_edge) ? {own('ty', 'tx + 1')} : {remote('rank - 4', '8', 'tx + 1')};",
      f"float d = (ty < 7 || bottom_edge) ? {own('ty + 2', 'tx + 1')} : {remote('rank + 4', '1', 'tx + 1')};")
    c(*last_sync)
    c("if (!inside) return;",
      f"out[i] = (x == 0 || y == 0 || x == n - 1 || y == n - 1) ? m : {k.centre} * m + {k.nb} * (l + r + u + d);")


def build_2d(k):
    c, h = k.code, k.hazard
    if k.base == "async":
        return build_2d_async(k)
    t = Tile(k.tile_kind, k.pick("tile", "sh", "patch"), ["10", "34"] if k.base != "warp" else ["8", "34"])
    c("int tx = threadIdx.x, ty = threadIdx.y;",
      "int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;",
      "bool inside = x < n && y < n;", "int i = y * n + x;")
    tail = [
        "if (!inside) return;",
        "if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {", "    out[i] = m;", "    return;", "}",
    ]
    if k.base == "direct":
        c("if (!inside) return;")
        if h == "unguarded":
            c("float s = in[i - 1] + in[i + 1] + in[i - n] + in[i + n];")
        else:
            c("float s = (x > 0 ? in[i - 1] : 0.0f) + (x + 1 < n ? in[i + 1] : 0.0f)",
              "        + (y > 0 ? in[i - n] : 0.0f) + (y + 1 < n ? in[i + n] : 0.0f);")
        c("float m = in[i];")
        c(f"out[i] = (x == 0 || y == 0 || x == n - 1 || y == n - 1) ? m : {k.centre} * m + {k.nb} * s;")
        return
    if k.base == "shfl":
        c("float m = inside ? in[i] : 0.0f;",
          f"float l = __shfl_up_sync({FULL}, m, 1);", f"float r = __shfl_down_sync({FULL}, m, 1);")
        c("if (tx == 0) l = (x > 0 && y < n) ? in[i - 1] : 0.0f;" if h != "off-left" else "if (tx == 0) l = in[i - 1];")
        if h == "off-right":
            c("if (tx == 31 || x == n - 1) r = in[i + 1];")
        else:
            c("if (tx == 31) r = (x + 1 < n && y < n) ? in[i + 1] : 0.0f;")
        c(*tail)
        c(f"out[i] = {k.centre} * m + {k.nb} * (l + r + in[i - n] + in[i + n]);")
        return
    if k.base == "warp":
        # Each warp (one tile row) stages its row and its two side cells; up and down are global.
        c(*t.decl())
        c(*t.store(["ty", "tx + 1"], "inside ? in[i] : 0.0f"))
        c(*guarded("tx == 0", t.store(["ty", "0"], "(x > 0 && y < n) ? in[i - 1] : 0.0f")))
        c(*guarded("tx == 31", t.store(["ty", "33"], "(x + 1 < n && y < n) ? in[i + 1] : 0.0f")))
        if h == "no-warp-sync":
            c("// (no __syncwarp here)")
        elif h == "shfl-as-sync":
            c(f"float dummy = __shfl_sync({FULL}, 0.0f, 0);", "if (dummy != 0.0f) return;")
        elif h == "partial-mask":
            c("__syncwarp(0x0000ffffu);")
        else:
            c("__syncwarp();")
        c(f"float m = {t.load(['ty', 'tx + 1'])};")
        c(*tail)
        c(f"out[i] = {k.centre} * m + {k.nb} * ({t.load(['ty', 'tx'])} + {t.load(['ty', 'tx + 2'])}"
          " + in[i - n] + in[i + n]);")
        return

    c(*t.decl())
    if k.base == "atomic":
        c("__shared__ int live;", "if (tx == 0 && ty == 0) live = 0;", "__syncthreads();",
          "if (inside) atomicAdd(&live, 1);")
        if h == "atomic-early-read":
            c("int seen = live;  // before the barrier that orders the atomics")
    if k.base == "flag":
        c("__shared__ volatile int ready;", "if (tx == 0 && ty == 0) ready = 0;")
    if h == "early-exit":
        c("if (x >= n - 1 || y >= n - 1) return;")
    elif k.base != "loop" and k.rng.random() < 0.3 and h != "barrier-in-branch":
        c("if (!inside) return;  // threads outside leave before the barrier (fine on sm_70+)")
    if k.base == "loop":
        bound = {"uninit-cell": "306", "tile-oob": "341"}.get(h, "340")
        xcond = {"off-left": "gx < n", "off-right": "gx <= n"}.get(h, "gx >= 0 && gx < n")
        c("for (int k = ty * 32 + tx; k < %s; k += 256) {" % bound,
          "    int r = k / 34, col = k % 34;",
          "    int gy = blockIdx.y * 8 - 1 + r, gx = blockIdx.x * 32 - 1 + col;")
        for line in t.store(["r", "col"], f"({xcond} && gy >= 0 && gy < n) ? in[gy * n + gx] : 0.0f"):
            c("    " + line)
        c("}")
    else:
        if h == "misplaced-barrier":
            c("__syncthreads();  // too early: the tile is not written yet")
        c(*t.store(["ty + 1", "tx + 1"], "inside ? in[i] : 0.0f"))
        up = "in[i - n]" if h == "off-left" else "(y > 0 && x < n) ? in[i - n] : 0.0f"
        c(*guarded("ty == 0", t.store(["0", "tx + 1"], up)))
        if h == "off-right":
            c(*guarded("ty == 7 || y == n - 1", t.store(["ty + 2", "tx + 1"], "x < n ? in[i + n] : 0.0f")))
        elif h == "uninit-cell":
            c("// (the halo row below is never written)")
        else:
            c(*guarded("ty == 7", t.store(["9", "tx + 1"], "(y + 1 < n && x < n) ? in[i + n] : 0.0f")))
        c(*guarded("tx == 0", t.store(["ty + 1", "0"], "(x > 0 && y < n) ? in[i - 1] : 0.0f")))
        if k.base == "flag":
            pass  # the right halo column is handed over after the barrier, below
        else:
            if h == "tile-oob":
                c(*guarded("tx == 31 && ty == 7", t.store(["9", "34"], "0.0f")))
            c(*guarded("tx == 31", t.store(["ty + 1", "33"], "(x + 1 < n && y < n) ? in[i + 1] : 0.0f")))
    if h == "barrier-in-branch":
        c("if (inside) __syncthreads();")
    elif h != "misplaced-barrier":
        c(*k.barrier())
    if k.base == "flag":
        # After the barrier thread (0,0) writes the right halo column and raises the flag;
        # the column's only readers, the tx == 31 threads, wait for it.
        body = ["for (int r = 0; r < 8; ++r) {", "    int gy = blockIdx.y * 8 + r, gx = blockIdx.x * 32 + 32;"]
        body += ["    " + ln for ln in t.store(["r + 1", "33"], "(gx < n && gy < n) ? in[gy * n + gx] : 0.0f")]
        body += ["}"]
        if h == "flag-before-data":
            c("if (tx == 0 && ty == 0) {", "    ready = 1;  // raised before the data is written")
            c(*["    " + ln for ln in body])
            c("}")
        else:
            c("if (tx == 0 && ty == 0) {")
            c(*["    " + ln for ln in body])
            c("    __threadfence_block();", "    ready = 1;", "}")
        c("if (tx == 31) {", "    while (ready == 0) __nanosleep(32);", "    __threadfence_block();", "}")
    if k.base == "atomic":
        c("if (live == 0) return;" if h != "atomic-early-read" else "if (seen < 0) return;")
    c(f"float m = {t.load(['ty + 1', 'tx + 1'])};")
    c(*tail)
    c(f"float s = {t.load(['ty + 1', 'tx'])} + {t.load(['ty + 1', 'tx + 2'])}"
      f" + {t.load(['ty', 'tx + 1'])} + {t.load(['ty + 2', 'tx + 1'])};")
    c(f"out[i] = {k.centre} * m + {k.nb} * s;")


# ------------------------------------------------------------------------------------------
# 3D: block 32 x 16, gridDim.z = 3 chunks of planes, plane tile 18 x 34.
# ------------------------------------------------------------------------------------------


def build_3d(k):
    c, h = k.code, k.hazard
    regs = k.lesson == "stencil-3d-registers"
    t = Tile(k.tile_kind, k.pick("tile", "slab", "sh"), ["18", "34"])
    c("int tx = threadIdx.x, ty = threadIdx.y;",
      "int x = blockIdx.x * 32 + tx, y = blockIdx.y * 16 + ty;",
      "bool inside = x < n && y < n;",
      "int depth = (n + gridDim.z - 1) / gridDim.z;",
      "int z0 = blockIdx.z * depth, z1 = min(z0 + depth, n);",
      "long plane = (long)n * n;", "long column = (long)y * n + x;")
    if k.base == "direct":
        c("if (!inside) return;", "for (int z = z0; z < z1; ++z) {", "    long i = z * plane + column;")
        if h == "unguarded":
            c("    float s = in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - plane] + in[i + plane];")
        else:
            c("    float s = (x > 0 ? in[i - 1] : 0.0f) + (x + 1 < n ? in[i + 1] : 0.0f)",
              "            + (y > 0 ? in[i - n] : 0.0f) + (y + 1 < n ? in[i + n] : 0.0f)",
              "            + (z > 0 ? in[i - plane] : 0.0f) + (z + 1 < n ? in[i + plane] : 0.0f);")
        c("    float m = in[i];",
          "    bool border = x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1;",
          f"    out[i] = border ? m : {k.centre} * m + {k.nb} * s;", "}")
        return
    c(*t.decl())
    if k.base == "atomic":
        c("__shared__ int live;", "if (tx == 0 && ty == 0) live = 0;", "__syncthreads();",
          "if (inside) atomicAdd(&live, 1);")
        if h == "atomic-early-read":
            c("int seen = live;  // before the barrier that orders the atomics")
        c("__syncthreads();" if h != "atomic-early-read" else "")
        c("if (live == 0) return;" if h != "atomic-early-read" else "if (seen < 0) return;")
    if h == "early-exit":
        c("if (x >= n - 1 || y >= n - 1) return;")
    elif k.base != "loop" and k.rng.random() < 0.3 and h != "barrier-in-branch":
        c("if (!inside) return;  // threads outside leave before the loop's barriers (fine on sm_70+)")
    if regs:
        c("float behind = 0.0f, centre = 0.0f, ahead = 0.0f;",
          "if (inside && z0 < z1) {", "    centre = in[z0 * plane + column];",
          "    if (z0 > 0) behind = in[(z0 - 1) * plane + column];", "}")
    c("for (int z = z0; z < z1; ++z) {")
    c.depth += 1
    c("long i = z * plane + column;")
    if regs:
        if h == "off-right":
            c("if (inside) ahead = in[i + plane];")
        else:
            c("if (inside && z + 1 < n) ahead = in[i + plane];")
        own = "centre"
    else:
        own = "inside ? in[i] : 0.0f"
    if k.base == "loop":
        bound = {"uninit-cell": "578", "tile-oob": "613"}.get(h, "612")
        xcond = {"off-left": "gx < n", "off-right": "gx <= n"}.get(h, "gx >= 0 && gx < n")
        c("for (int k = ty * 32 + tx; k < %s; k += 512) {" % bound,
          "    int r = k / 34, col = k % 34;",
          "    int gy = blockIdx.y * 16 - 1 + r, gx = blockIdx.x * 32 - 1 + col;")
        for line in t.store(["r", "col"], f"({xcond} && gy >= 0 && gy < n) ? in[z * plane + (long)gy * n + gx] : 0.0f"):
            c("    " + line)
        c("}")
    else:
        if h == "misplaced-barrier":
            c("__syncthreads();  // too early: the tile is not written yet")
        c(*t.store(["ty + 1", "tx + 1"], own))
        left = "in[i - 1]" if h == "off-left" else "(x > 0 && y < n) ? in[i - 1] : 0.0f"
        c(*guarded("tx == 0", t.store(["ty + 1", "0"], left)))
        if h == "tile-oob":
            c(*guarded("tx == 31 && ty == 15", t.store(["17", "34"], "0.0f")))
        c(*guarded("tx == 31", t.store(["ty + 1", "33"], "(x + 1 < n && y < n) ? in[i + 1] : 0.0f")))
        c(*guarded("ty == 0", t.store(["0", "tx + 1"], "(y > 0 && x < n) ? in[i - n] : 0.0f")))
        if h == "uninit-cell":
            c("// (the halo row below is never written)")
        elif h == "off-right" and not regs:
            c(*guarded("ty == 15 || y == n - 1", t.store(["ty + 2", "tx + 1"], "x < n ? in[i + n] : 0.0f")))
        else:
            c(*guarded("ty == 15", t.store(["17", "tx + 1"], "(y + 1 < n && x < n) ? in[i + n] : 0.0f")))
    if h == "barrier-in-branch":
        c("if (inside) __syncthreads();")
    elif h != "misplaced-barrier":
        c(*k.barrier())
    c("if (inside) {")
    c.depth += 1
    c(f"float m = {t.load(['ty + 1', 'tx + 1'])};", "float result = m;",
      "if (!(x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1)) {")
    c(f"    float s = {t.load(['ty + 1', 'tx'])} + {t.load(['ty + 1', 'tx + 2'])}"
      f" + {t.load(['ty', 'tx + 1'])} + {t.load(['ty + 2', 'tx + 1'])};")
    if regs:
        c(f"    result = {k.centre} * m + {k.nb} * (s + behind + ahead);")
    else:
        c(f"    result = {k.centre} * m + {k.nb} * (s + in[i - plane] + in[i + plane]);")
    c("}", "out[i] = result;")
    c.depth -= 1
    c("}")
    if h == "no-second-barrier":
        c("// (no barrier before the next plane overwrites the tile)")
    elif h == "syncwarp":
        c("__syncwarp();")
    else:
        c("__syncthreads();")
    if regs:
        c("behind = centre;", "centre = ahead;")
    c.depth -= 1
    c("}")


BUILDERS = {"stencil-1d": build_1d, "stencil-2d": build_2d, "stencil-2d-cluster": build_2d_cluster,
            "stencil-3d": build_3d,
            "stencil-3d-registers": build_3d}

# Which hazards each base can carry ("none" is the correct kernel).
TILE_HAZARDS = ["no-barrier", "misplaced-barrier", "syncwarp", "barrier-in-branch", "off-left",
                "off-right", "tile-oob", "uninit-cell", "early-exit"]
BASES = {
    "tile": TILE_HAZARDS,
    "loop": ["no-barrier", "syncwarp", "off-left", "off-right", "tile-oob", "uninit-cell"],
    "atomic": ["atomic-early-read", "no-barrier"],
    "flag": ["flag-before-data"],
    "direct": ["unguarded"],
    "shfl": ["off-left", "off-right"],
    "warp": ["no-warp-sync", "shfl-as-sync", "partial-mask"],
    "async": ["no-async-wait", "wait-after-barrier", "no-barrier"],
    "cluster-copy": ["no-first-cluster-sync", "syncthreads-for-cluster", "exit-before-neighbours"],
    "cluster-direct": ["no-first-cluster-sync", "exit-before-neighbours"],
}
LESSON_BASES = {
    "stencil-1d": ["tile", "loop", "atomic", "flag", "direct", "shfl", "warp"],
    "stencil-2d": ["tile", "loop", "atomic", "flag", "direct", "shfl", "warp"],
    "stencil-3d": ["tile", "loop", "atomic", "direct"],
    "stencil-3d-registers": ["tile", "loop"],
}
TILE_KINDS = ["float", "double", "half", "u16", "u8"]
# Bases added after the first corpora were measured: planned after all the others, so that a
# seed's earlier kernels keep their numbers (docs/archive/measurements-log.md names them).
LATER_BASES = [("stencil-2d", "async"), ("stencil-2d-cluster", "cluster-copy"),
               ("stencil-2d-cluster", "cluster-direct")]


def hazards_of(lesson, base):
    hs = list(BASES[base])
    if lesson.startswith("stencil-3d") and base in ("tile", "loop"):
        hs.append("no-second-barrier")
    if lesson == "stencil-3d-registers" and base == "tile":
        hs.remove("off-left")  # kept for the plane lesson; the registers lesson varies off-right
    return hs


def plan(seed):
    """Every (lesson, base, tile, hazard) of the corpus, in a fixed order."""
    rng = random.Random(f"{seed}:plan")
    items = []
    pairs = [(lesson, base) for lesson in LESSON_BASES for base in LESSON_BASES[lesson]] + LATER_BASES
    for lesson, base in pairs:
        kinds = TILE_KINDS if base in ("tile", "loop", "warp") else ["float"]
        if base in ("atomic", "flag"):
            kinds = ["float", rng.choice(["u16", "u8", "double"])]
        if (lesson, base) in LATER_BASES:
            # Float tiles only; the tags give each kernel its own style draws (API, barrier form).
            kinds = ["float", "float-2", "float-3"]
        # Every tile kind correct, and (for the tile shapes) hazards on two kinds each.
        for kind in kinds:
            items.append((lesson, base, kind, "none"))
        for hazard in hazards_of(lesson, base):
            chosen = {kinds[0], rng.choice(kinds)} if len(kinds) > 1 else {kinds[0]}
            for kind in sorted(chosen):
                if hazard == "tile-oob" and kind in ("u16", "u8"):
                    kind = "float"  # one past a lo/hi array lands in its sibling array
                if (lesson, base, kind, hazard) not in items:
                    items.append((lesson, base, kind, hazard))
    return items


def written_for_tests(out, first_index):
    """The kernels of tests/hazards/ as corpus entries (base "test"), so that the device run
    puts them under compute-sanitizer too. Their lesson is on their first line."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "hazards")
    entries = []
    for name in sorted(os.listdir(root)):
        if not name.endswith(".cu"):
            continue
        source = open(os.path.join(root, name)).read()
        lesson = source.splitlines()[0].removeprefix("// lesson: ").strip()
        rel = os.path.join("tests", name)
        os.makedirs(os.path.join(out, "tests"), exist_ok=True)
        with open(os.path.join(out, rel), "w") as f:
            f.write(source)
        entries.append({"file": rel, "lesson": lesson, "index": first_index + len(entries), "base": "test",
                        "tile": "-", "hazard": name[:-3], "sizes": SIZES[lesson]})
    return entries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", default="1")
    ap.add_argument("--out", required=True)
    ap.add_argument("--with-tests", action="store_true",
                    help="also copy tests/hazards/*.cu (the kernels written for tests/hazards.rs) into OUT/tests/")
    args = ap.parse_args()
    manifest = []
    for index, (lesson, base, kind, hazard) in enumerate(plan(args.seed)):
        k = Kernel(args.seed, lesson, base, kind, hazard)
        BUILDERS[lesson](k)
        rel = os.path.join(lesson, f"h{index:04d}.cu")
        path = os.path.join(args.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(k.source())
        manifest.append({"file": rel, "lesson": lesson, "index": index, "base": base, "tile": kind,
                         "hazard": hazard, "sizes": SIZES[lesson]})
    if args.with_tests:
        manifest += written_for_tests(args.out, len(manifest))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} kernels in {args.out}")


if __name__ == "__main__":
    main()
