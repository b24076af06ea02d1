"""Machine operations numba does not emit on its own, for the histogram and partition loops.

* `_add_pair` ``(flat, b, x, y)``: ``flat[b] += x`` and ``flat[b + 1] += y`` as ONE two-lane vector
  load, add and store (``vaddpd`` on x86) instead of two scalar ones. Each lane is the same IEEE
  addition as the scalar code (no reassociation, no fused multiply), so the results are bit-identical;
  numba leaves LLVM's SLP vectoriser off (``NUMBA_SLP_VECTORIZE=0``), which is why the two adds of a
  (gradient, hessian) histogram bin otherwise stay two loads, two adds and two stores.
* `_add_quad` ``(flat, b, x, y, z, w)``: the same for four lanes (``flat[b:b + 4] += (x, y, z, w)``, one
  ``vaddpd ymm``): a (gradient, hessian, count, fourth channel) bin of the column histograms at scale.
* `_prefetch` ``(arr, i)``: a hint to bring the cache line holding ``arr[i]`` into the cache
  (``llvm.prefetch``, read, high locality); it changes no value. The histogram of a child node reads
  rows scattered over the matrix (LightGBM prefetches them the same way, ``USE_PREFETCH`` in
  ``multi_val_dense_bin.hpp``).
* `_float_bits` ``(x)``: the IEEE-754 bits of the float64 ``x`` as an int64 (one ``bitcast``; numba's
  ``.view`` would compile an implementation of its own), for the radix sort's keys.

All take a 1-d array (C-contiguous for the adds) and an integer index (the caller keeps it in
bounds). Under ``NUMBA_DISABLE_JIT=1`` they are plain Python functions with the same effect.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_I32 = ir.IntType(32)
_V2 = ir.VectorType(ir.DoubleType(), 2)
_V4 = ir.VectorType(ir.DoubleType(), 4)


def _element_pointer(context, builder, aryty, ary, idxty, idx):
    """LLVM pointer to ``ary[idx]`` (1-d array, no wrap-around, no bounds check)."""
    arr = context.make_array(aryty)(context, builder, ary)
    i = context.cast(builder, idx, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, aryty, arr, [i], wraparound=False, boundscheck=False)


def _check_1d(arr, idx, dtype=None, contiguous=True):
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and (arr.layout == "C" or not contiguous)
            and isinstance(idx, types.Integer)):
        raise numba.core.errors.TypingError("expects a (C-contiguous) 1-d array and an integer index")
    if dtype is not None and arr.dtype != dtype:
        raise numba.core.errors.TypingError(f"expects a {dtype} array")


if numba.config.DISABLE_JIT:  # plain Python twins (the kernel tests' NUMBA_DISABLE_JIT run)

    def _add_pair(flat, b, x, y):
        """``flat[b] += x; flat[b + 1] += y``."""
        flat[b] += x
        flat[b + 1] += y

    def _add_quad(flat, b, x, y, z, w):
        """``flat[b] += x; flat[b + 1] += y; flat[b + 2] += z; flat[b + 3] += w``."""
        flat[b] += x
        flat[b + 1] += y
        flat[b + 2] += z
        flat[b + 3] += w

    def _prefetch(arr, i):
        """A cache hint: nothing to do without the JIT."""

    def _float_bits(x):
        """The IEEE-754 bits of the float64 ``x`` as an int64."""
        return np.float64(x).view(np.int64)

else:

    @intrinsic
    def _add_pair(typingctx, flat, b, x, y):
        """``flat[b] += x; flat[b + 1] += y`` as one two-lane float64 vector add (same bits)."""
        _check_1d(flat, b, types.float64)
        sig = types.void(flat, b, types.float64, types.float64)

        def codegen(context, builder, signature, args):
            aryty, bty = signature.args[0], signature.args[1]
            ptr = _element_pointer(context, builder, aryty, args[0], bty, args[1])
            vptr = builder.bitcast(ptr, _V2.as_pointer())
            v = builder.insert_element(ir.Constant(_V2, ir.Undefined), args[2], ir.Constant(_I32, 0))
            v = builder.insert_element(v, args[3], ir.Constant(_I32, 1))
            old = builder.load(vptr, align=8)
            builder.store(builder.fadd(old, v), vptr, align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _add_quad(typingctx, flat, b, x, y, z, w):
        """``flat[b:b + 4] += (x, y, z, w)`` as one four-lane float64 vector add (same bits)."""
        _check_1d(flat, b, types.float64)
        sig = types.void(flat, b, types.float64, types.float64, types.float64, types.float64)

        def codegen(context, builder, signature, args):
            aryty, bty = signature.args[0], signature.args[1]
            ptr = _element_pointer(context, builder, aryty, args[0], bty, args[1])
            vptr = builder.bitcast(ptr, _V4.as_pointer())
            v = ir.Constant(_V4, ir.Undefined)
            for lane in range(4):
                v = builder.insert_element(v, args[2 + lane], ir.Constant(_I32, lane))
            old = builder.load(vptr, align=8)
            builder.store(builder.fadd(old, v), vptr, align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _prefetch(typingctx, arr, i):
        """Prefetch the cache line of ``arr[i]`` for reading (``llvm.prefetch``: read, locality 3)."""
        _check_1d(arr, i, contiguous=False)
        sig = types.void(arr, i)

        def codegen(context, builder, signature, args):
            ptr = _element_pointer(context, builder, signature.args[0], args[0], signature.args[1], args[1])
            i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            fnty = ir.FunctionType(ir.VoidType(), [i8p.type, _I32, _I32, _I32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            builder.call(fn, [i8p, ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _float_bits(typingctx, x):
        """The IEEE-754 bits of the float64 ``x`` as an int64 (``bitcast``)."""
        if x != types.float64:
            raise numba.core.errors.TypingError("expects a float64")
        sig = types.int64(types.float64)

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(64))

        return sig, codegen
