// quiver_range.cpp - LLVM 19 pass plugin: the load/store instrumentation of `trace cc`.
//
// Why: one callback per load/store (-fsanitize-coverage=trace-loads,trace-stores) costs
// 30-50 ns per access, 20-100x on stencil-like kernels. This pass instruments like
// SanitizerCoverage (`__sanitizer_cov_load{1,2,4,8,16}(p)` / `__sanitizer_cov_store*` before
// the access, same accesses, same debug locations), except that an access the compiler can
// describe as a byte range over a whole loop is reported ONCE, in the loop preheader:
// `__quiver_range_load_w(lo, bytes, width)` / `__quiver_range_store_w(...)` (width: the bytes of one
// access, so a report names the element).
//
// What is hoisted (docs/cc.md "How accesses are instrumented"):
//  - a simple (non-volatile, non-atomic) load/store whose address is an affine SCEV AddRec
//    in the innermost loop, and up to 3 enclosing loops, each loop with a preheader, a single
//    exiting block that is its latch, a loop-invariant backedge-taken count, no call that may
//    touch memory (MPI, OpenMP runtime, memcpy ...), no atomics/fences/volatile;
//  - executed on every iteration: its block dominates the latch (and each inner loop's
//    preheader dominates the enclosing latch, or sits behind a guard invariant in it);
//  - exact: the bytes form one interval, or one strided record of equal rows. In the innermost
//    loop a stride of at most the access size is an interval, a larger or loop-invariant one
//    (a[2*i], a[i*n + j] over i) one strided record of single elements; out of an enclosing loop
//    successive inner intervals that touch (|outer step| <= inner bytes, checked at run time) are
//    one interval, else one strided record when every address extreme of the inner loops moves by
//    the same step (stridedLevel: equal rows; a triangular nest's rows grow, never one record):
//    `__quiver_range_load_strided(lo, row bytes, stride, rows, width)` / `_store_strided`, which
//    the tracer takes as one call per row (rows that touch: one range). A dense 2D sweep is one
//    call per nest, a 2D stencil with halo cells one strided record per nest, a 3D one one per
//    plane; strided innermost records of one loop and one source line whose rows touch are merged
//    (stridedBlocks: an unrolled `in[r*W + k]`, k = 0..W-1, is one record of W-element rows; the
//    fields of an array of structs written on separate lines stay one record each, so a finding
//    names the field's line); a column (an innermost strided record of single elements, the store
//    of a transpose `b[j*n + i]` over j) whose enclosing loop moves it by at most an element (i + 1:
//    the next column, |step| <= element bytes, checked at run time unless constant; the column's
//    stride and rows invariant there) is one strided record over that loop too (Access::Columns):
//    rows of |step| * btc + element bytes (a thread's chunk of columns side by side), same stride
//    and rows, in the enclosing loop's preheader; the per-column records run when the check fails;
//  - order-safe: a hoisted load may not alias any non-hoisted store of the loop (alias
//    analysis), a hoisted store may not alias any non-hoisted load; a hoisted load and a hoisted
//    store that AA cannot separate are checked at run time (their byte ranges must be
//    disjoint, or two strided records of one stride have rows at residues apart:
//    residuesApart) unless they have the same address with the load first in the iteration
//    (`a[i] += x`: loads-then-stores is exact), or the load reads what the store wrote d >= 1
//    iterations before (`a[i] = a[i-1] + 1`, `x[i] -= c[i] * x[i+1]` counting down: recurrence(),
//    innermost loop only; the load's bytes the loop did not write are reported with the loads, its
//    others after the stores). When the run-time check fails the ranges are
//    not reported and the accesses call their per-access callbacks (a loop-invariant branch).
// Ranges are emitted loads first, then stores, with the debug location of the access, so the
// call's return address symbolises to the access's line. Everything else: per access, made
// cheaper (optimised builds; -O0 keeps plain callbacks):
//  - block calls: same-kind accesses that follow each other in a block over adjacent bytes of one
//    base (a fully unrolled loop), nothing between them touching those bytes the other way:
//    `__quiver_block_load/store(lo, bytes, width)` before the first;
//  - call-site caches: a call inside a loop has a thread-local `{next, lim, step}` (qv_site); bytes
//    that start at next and end by lim are recorded by the program itself (next = end + step), else
//    `__quiver_range_load_c/store_c(p, bytes, desc, cache)` (desc: width, bit 8 indexed: the
//    address depends on a value the loop loaded, `p[col[k]]`, so the tracer does not take a
//    gather's windows for one strided walk), after which the tracer refills the cache;
//  - inline skip: each call is made only when the bytes are outside the interval the tracer
//    publishes per thread and kind (`__quiver_skip`, initial-exec TLS in libquiver_rt: bytes of a
//    pending run that drops such an access); volatile loads (any call may move it); the call is
//    on the unlikely, out-of-line path, so a loop body's calls stay near each other.
// -O0 (optnone functions, pass at the pipeline's end): the same ranges, found on an analysis-only
// promoted copy of the function and emitted into the unchanged original (PromotedCopy,
// hoistThroughCopy; `__quiver_range_load_w/store_w` keep the access width; collapsed loops' nest
// records too); QUIVER_NO_O0_RANGES=1: none at -O0.
// QUIVER_NO_RANGE_PASS=1 at compile time: per-access only (the escape hatch);
// QUIVER_NO_INLINE_SKIP=1: neither inline check nor cache.

#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/BasicAliasAnalysis.h"
#include "llvm/Analysis/Loads.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/MemoryLocation.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ValueMapper.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/IR/ValueMap.h"

#include "../qv_entry.h" // the `desc` bits of the entry points

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace llvm;

namespace {

constexpr unsigned kMaxDepth = 3;   // loops a range may span
constexpr unsigned kMaxCorners = 8; // address extremes tracked per access
constexpr unsigned kMaxBoxDepth = 6; // loops a box (boxLevels) may span
constexpr unsigned kMaxPairs = 64;
constexpr unsigned kMaxFan = 8;     // rows of a collapsed loop's fan (a window's rows): one nest record each  // run-time load/store checks per loop before hulls per base

struct Access {
  Instruction *I;
  Value *Ptr;
  unsigned Bytes;
  bool Store;
  int Idx;                          // callback index: 1,2,4,8,16 bytes -> 0..4
  SmallVector<Loop *, kMaxDepth> Loops; // Loops[k]: the loop a level-k range covers
  SmallVector<const SCEV *, kMaxDepth> Lo, Hi; // byte range over Loops[k] (intptr)
  SmallVector<SmallVector<std::pair<Value *, bool>, 2>, kMaxDepth> Conds; // Loops[k] range holds if all
  // Loops[k] (k >= 1) covers one interval only when successive Loops[k-1] intervals touch:
  // |step of Loops[k]| <= bytes over Loops[k-1] (checked at run time; else the inner call runs)
  SmallVector<std::pair<const SCEV *, const SCEV *>, kMaxDepth> Tile;
  int Level = -1;                   // chosen level, -1 = per access
  Value *Guard = nullptr;           // hoisted with a run-time check: per-access call when false
  bool Maybe = false;               // skipped on some iterations of its innermost loop (a conditional
                                    // store): its runs may have gaps (QV_DESC_MAYBE, masked runs)
  // Strided[k] (row bytes, stride, rows): Loops[k] may also be reported as one strided record of
  // its rows (each the interval over Loops[k-1], or one access at k = 0) whether or not they touch;
  // all null when the rows do not move by one step (stridedLevel)
  SmallVector<std::array<const SCEV *, 3>, kMaxDepth> Strided;
  // Columns: the level (1; 0 = none) whose strided record is the innermost loop's strided record
  // (single elements a stride apart, a column) widened over the enclosing loop: its step moves the
  // column by at most the element (Tile[k] = (|step|, element bytes), checked at run time unless
  // constant), so row r over the whole loop is one interval, Strided[k] = (|step| * btc + element,
  // stride, rows). Exact when the tile check holds (else the per-column records run; issue 16)
  unsigned Columns = 0;
  // Nest: the last level is a collapsed loop (collapse(2)/(3): the nest's indices are recovered
  // from one induction variable by `iv / m`, `iv % m`); its rows (the interval over the level
  // below, or one access) form planes: row (q, r) at P00 + (q - qlo) * QStride + r * RStride,
  // reported by one `__quiver_range_*_nest` call that is exact when the run-time checks hold
  // With lines (collapse(3): r = j * M2 + k): row (q, j, k) at P00 + (q - qlo) * QStride + j * JStride
  // + k * RStride, M2 rows per line, reported by one `__quiver_range_*_nest3` call
  struct NestLevel {
    const SCEV *P00, *RStride, *QStride, *M, *RLo, *Count, *RowBytes;
    const SCEV *JStride = nullptr, *M2 = nullptr; // lines (collapse(3)); null: rows of planes
    // Fan: each point's row is a strided record of FanRows rows FanStride apart (a 3x3 window's dy
    // loop): one record per fan row, the planes' origin moved by i * FanStride; 0 rows: no fan
    const SCEV *FanStride = nullptr;
    unsigned FanRows = 0;
    SmallVector<std::pair<const SCEV *, const SCEV *>, 8> Eq;  // must be equal
    SmallVector<std::pair<const SCEV *, const SCEV *>, 4> SGe; // first >=s second
  };
  std::optional<NestLevel> Nest;
  // Box[k]: Loops[k] is a level past the ones above (boxLevels): the bytes over Loops[0..k] are a box,
  // one row of RowBytes at P per point of up to 3 dimensions (stride, count), innermost first; it
  // is always exact (the union of the rows is what the loops touch, whether or not rows overlap)
  struct BoxLevel {
    const SCEV *P, *RowBytes;
    SmallVector<std::pair<const SCEV *, const SCEV *>, 3> Dims;
    unsigned Width; // the element bytes when a row is one access, else 0
    const SCEV *Ran = nullptr; // -O0 (top-tested loops): 0 when a loop's body never ran (no rows), else 1
  };
  std::map<unsigned, BoxLevel> Box;
  // Hole: level 0 runs on every iteration of its loop but the one where the counter X meets V (`if (j !=
  // i)`, holeGuard): the interval over the loop without that iteration's element (|Step| = Bytes), or
  // the one element of an invariant address (Step 0) when another iteration runs; X from X0 to XEnd
  struct HoleLevel {
    const SCEV *X0, *XEnd, *V;
    int64_t Step;
  };
  std::optional<HoleLevel> Hole;
  // InRange[k]: values (i128, exact) that must lie in [lo, hi] for the byte ranges over Loops[0..k]
  // to hold: a 32-bit index widened over the loops (ExtWiden) equals its sign/zero extension only
  // where it does not wrap (checked at run time with the load/store checks; else per access)
  SmallVector<SmallVector<std::array<const SCEV *, 3>, 4>, kMaxDepth> InRange;
};

int sizeIndex(const DataLayout &DL, Type *T) {
  if (T->isScalableTy()) return -1;
  uint64_t B = DL.getTypeStoreSizeInBits(T);
  return B == 8 ? 0 : B == 16 ? 1 : B == 32 ? 2 : B == 64 ? 3 : B == 128 ? 4 : -1;
}

bool skipFunction(const Function &F) {
  if (F.isDeclaration() || F.empty()) return true;
  if (F.getLinkage() == GlobalValue::AvailableExternallyLinkage) return true;
  if (F.hasFnAttribute(Attribute::NoSanitizeCoverage)) return true;
  StringRef N = F.getName();
  if (N.starts_with("__sanitizer_") || N.starts_with("__quiver_") || N.contains(".module_ctor")) return true;
  if (isa<UnreachableInst>(F.getEntryBlock().getTerminator())) return true;
  return false;
}

/// A loop whose body may be summarised: no memory-touching calls, no atomics, nothing volatile.
bool loopIsPlain(Loop *L) {
  for (BasicBlock *BB : L->blocks())
    for (Instruction &I : *BB) {
      if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (isa<DbgInfoIntrinsic>(CB)) continue;
        if (auto *II = dyn_cast<IntrinsicInst>(CB))
          if (II->isLifetimeStartOrEnd() || II->getIntrinsicID() == Intrinsic::assume) continue;
        if (!CB->mayReadOrWriteMemory()) continue;
        return false;
      }
      if (I.isAtomic() || isa<FenceInst>(I) || isa<VAArgInst>(I)) return false;
      if (auto *LI = dyn_cast<LoadInst>(&I); LI && LI->isVolatile()) return false;
      if (auto *SI = dyn_cast<StoreInst>(&I); SI && SI->isVolatile()) return false;
    }
  return true;
}

/// A tracer entry point: it reads no program memory through its pointer (it only records the
/// address) and keeps no copy of it, so the callbacks do not hinder the passes that follow.
FunctionCallee callback(Module &M, StringRef Name, FunctionType *T) {
  FunctionCallee C = M.getOrInsertFunction(Name, T);
  if (auto *Fn = dyn_cast<Function>(C.getCallee())) {
    Fn->addParamAttr(0, Attribute::NoCapture);
    Fn->setMemoryEffects(MemoryEffects::inaccessibleMemOnly());
    Fn->setDoesNotThrow();
    Fn->addFnAttr(Attribute::WillReturn);
  }
  return C;
}

/// The tracer entry points (../qv_entry_points.inc, shared with both tracers): each name's C
/// signature becomes its LLVM function type (pointers: ptr; size_t: the target's intptr).
struct qv_site;
namespace entry_sig {
#define QV_ENTRY(name, write, shape, params) using name = void params;
#include "../qv_entry_points.inc"
} // namespace entry_sig

enum class Entry {
#define QV_ENTRY(name, write, shape, params) name,
#include "../qv_entry_points.inc"
};

template <typename T> Type *entryArg(LLVMContext &C, const DataLayout &DL) {
  static_assert(std::is_pointer_v<T> || std::is_same_v<T, size_t>, "entry parameters: pointers and size_t");
  if constexpr (std::is_pointer_v<T>) return PointerType::getUnqual(C);
  else return DL.getIntPtrType(C);
}

template <typename... A> FunctionType *entryType(Module &M, void (*)(A...)) {
  return FunctionType::get(Type::getVoidTy(M.getContext()), {entryArg<A>(M.getContext(), M.getDataLayout())...},
                           false);
}

/// The declaration of entry point E in M (name and type from the list).
FunctionCallee entryDecl(Module &M, Entry E) {
  switch (E) {
#define QV_ENTRY(name, write, shape, params)                                                                        \
  case Entry::name:                                                                                                 \
    return M.getOrInsertFunction("__quiver_" #name, entryType(M, static_cast<entry_sig::name *>(nullptr)));
#include "../qv_entry_points.inc"
  }
  llvm_unreachable("an entry point of qv_entry_points.inc");
}

/// A tracer entry point with callback()'s attributes.
FunctionCallee callback(Module &M, Entry E) {
  FunctionCallee D = entryDecl(M, E);
  return callback(M, D.getCallee()->getName(), D.getFunctionType());
}

struct Copy { // one copy of an access's instruction (loop versioning duplicates some)
  Instruction *I;
  bool Call;     // needs its per-access callback
  Value *Guard;  // ... only when this is false
};

struct Site { // a per-access callback to emit
  Instruction *I;
  Access *A;
  Value *Guard;
  bool InLoop = false; // (before any block is split)
  bool Done = false;   // reported by a block call
};


/// The divisions of a collapsed loop's induction variable iv (nestLevel): `iv / m` (Divs) and
/// `iv % m` (Rems); for collapse(3) also the second index `(iv % m) / m2` (Divs2) and the third
/// `(iv % m) % m2` (Rems2), m2 the length of a line of the plane.
struct NestDivs {
  std::set<Value *> Divs, Rems, Divs2, Rems2;
};

/// A collapsed loop's address at one point (q, r) of its planes: the loop's `iv / m` (an sdiv/udiv
/// instruction or SCEV udiv) becomes Q, its `iv % m` (srem/urem) R, and every affine recurrence of
/// the loop its value at the iteration where iv = Q * m + R; with lines (collapse(3): R = J * m2 + K)
/// `(iv % m) / m2` becomes J and `(iv % m) % m2` K. Exact for the points the loop runs.
struct NestPoint : SCEVRewriteVisitor<NestPoint> {
  const Loop *L;
  const SCEV *IV, *M, *Q, *R, *J, *K, *It;
  const NestDivs &D;
  const std::map<Value *, const SCEV *> &Models; // `ashr (shl x, c), c` and the like as SCEVs
  bool Bad = false;
  NestPoint(ScalarEvolution &SE, const Loop *L, const SCEV *IV, const SCEV *M, const SCEV *Q, const SCEV *R,
            const SCEV *J, const SCEV *K, const NestDivs &D, const std::map<Value *, const SCEV *> &Models)
      : SCEVRewriteVisitor(SE), L(L), IV(IV), M(M), Q(Q), R(R), J(J), K(K), D(D), Models(Models) {
    auto *AR = cast<SCEVAddRecExpr>(IV);
    It = SE.getMinusSCEV(SE.getAddExpr(SE.getMulExpr(Q, M), R), AR->getStart());
  }
  const SCEV *visitUnknown(const SCEVUnknown *U) {
    if (D.Divs.count(U->getValue())) return SE.getTruncateOrZeroExtend(Q, U->getType());
    if (D.Rems.count(U->getValue())) return SE.getTruncateOrZeroExtend(R, U->getType());
    if (D.Divs2.count(U->getValue())) return J ? SE.getTruncateOrZeroExtend(J, U->getType()) : (Bad = true, U);
    if (D.Rems2.count(U->getValue())) return K ? SE.getTruncateOrZeroExtend(K, U->getType()) : (Bad = true, U);
    if (auto It = Models.find(U->getValue()); It != Models.end()) return visit(It->second);
    return U;
  }
  const SCEV *visitUDivExpr(const SCEVUDivExpr *D) {
    if (D->getLHS() == IV && D->getRHS() == M) return SE.getTruncateOrZeroExtend(Q, D->getType());
    return SCEVRewriteVisitor::visitUDivExpr(D);
  }
  const SCEV *visitAddRecExpr(const SCEVAddRecExpr *AR) {
    if (AR->getLoop() != L) return SCEVRewriteVisitor::visitAddRecExpr(AR);
    if (!AR->isAffine()) {
      Bad = true;
      return AR;
    }
    return AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(It, AR->getType()), SE);
  }
};

/// An address with its sign/zero extensions of affine recurrences over the loops Cover pushed
/// inside ({a,+,b} extended: {ext a,+,ext b}), so that it is affine over them (a 32-bit `int` index
/// `p[(y + dy) * w + x + dx]`). Exact where the narrow value does not wrap: Checks gets, per
/// extension, the same value built in i128 (no wrap for any trip count) and its narrow type's bounds.
/// The values of an N-bit integer (signed or unsigned) as i128 constants [lo, hi]: what a widened
/// value must lie in where the narrow one does not wrap (ExtWiden, countWithoutWrap).
std::pair<const SCEV *, const SCEV *> rangeOf(ScalarEvolution &SE, unsigned N, bool Signed) {
  APInt Lo = Signed ? APInt::getSignedMinValue(N).sext(128) : APInt::getZero(128);
  APInt Hi = Signed ? APInt::getSignedMaxValue(N).sext(128) : APInt::getMaxValue(N).zext(128);
  return {SE.getConstant(Lo), SE.getConstant(Hi)};
}

struct ExtWiden : SCEVRewriteVisitor<ExtWiden> {
  const SmallPtrSetImpl<const Loop *> &Cover;
  SmallVectorImpl<std::array<const SCEV *, 3>> &Checks;
  ExtWiden(ScalarEvolution &SE, const SmallPtrSetImpl<const Loop *> &Cover,
           SmallVectorImpl<std::array<const SCEV *, 3>> &Checks)
      : SCEVRewriteVisitor(SE), Cover(Cover), Checks(Checks) {}
  /// X (narrow) extended to T with the recurrences of Cover widened one by one.
  const SCEV *widen(const SCEV *X, Type *T, bool Signed) {
    auto *AR = dyn_cast<SCEVAddRecExpr>(X);
    if (!AR || !AR->isAffine() || !Cover.count(AR->getLoop()))
      return Signed ? SE.getSignExtendExpr(X, T) : SE.getZeroExtendExpr(X, T);
    const SCEV *St = AR->getStepRecurrence(SE);
    return SE.getAddRecExpr(widen(AR->getStart(), T, Signed),
                            Signed ? SE.getSignExtendExpr(St, T) : SE.getZeroExtendExpr(St, T), AR->getLoop(),
                            SCEV::FlagAnyWrap);
  }
  const SCEV *ext(const SCEVIntegralCastExpr *E, bool Signed) {
    auto *AR = dyn_cast<SCEVAddRecExpr>(E->getOperand());
    if (!AR || !AR->isAffine() || !Cover.count(AR->getLoop())) return E;
    unsigned N = AR->getType()->getIntegerBitWidth();
    if (N >= 64) return E;
    Type *T128 = IntegerType::get(AR->getType()->getContext(), 128);
    auto [Lo, Hi] = rangeOf(SE, N, Signed);
    Checks.push_back({widen(AR, T128, Signed), Lo, Hi});
    return widen(AR, E->getType(), Signed);
  }
  const SCEV *visitSignExtendExpr(const SCEVSignExtendExpr *E) { return ext(E, true); }
  const SCEV *visitZeroExtendExpr(const SCEVZeroExtendExpr *E) { return ext(E, false); }
};

class Instrumenter {
  Function &F;
  const DataLayout &DL;
  LoopInfo &LI;
  DominatorTree &DT;
  ScalarEvolution &SE;
  AAResults &AA;
  Type *IntPtr;
  std::map<Loop *, bool> Plain;
  SCEVExpander Exp;

  std::vector<std::pair<CallInst *, bool>> LoopRanges; // range calls inside a loop (store?)

public:
  bool InlineSkip = true;
  bool SiteCache = true;
  bool ColdToEnd = false;                // -O0: move the call blocks to the function's end (moveColdCalls)
  bool TopTested = false;                // -O0 copy (PromotedCopy): hoist out of loops tested at the top
  // -O0 (PromotedCopy): this Instrumenter analyses a promoted copy of the function and emits its
  // range calls into the original: Place maps a copy's insertion point to the original's, Rebuild
  // rebuilds a SCEV / a value of the copy there. Unset: the function itself.
  std::function<Instruction *(Instruction *)> Place;
  std::function<Value *(const SCEV *, Instruction *)> Rebuild;
  std::function<Value *(Value *, Instruction *)> RebuildValue;
  std::vector<BasicBlock *> ColdCalls;   // the out-of-line blocks checkedCall made
  Instrumenter(Function &F, LoopInfo &LI, DominatorTree &DT, ScalarEvolution &SE, AAResults &AA)
      : F(F), DL(F.getParent()->getDataLayout()), LI(LI), DT(DT), SE(SE), AA(AA),
        IntPtr(DL.getIntPtrType(F.getContext())), Exp(SE, DL, "qv") {}

  bool plain(Loop *L) {
    auto It = Plain.find(L);
    if (It != Plain.end()) return It->second;
    return Plain[L] = loopIsPlain(L);
  }

  /// A strided record of L's rows: every address extreme of the inner loops (C) moves by the same
  /// Step per iteration of L, so row i is row 0 moved by i * Step, Bytes long. Returns (row bytes,
  /// |Step|, rows), all expandable in L's preheader PH; nulls when not.
  std::array<const SCEV *, 3> stridedLevel(Loop *L, ArrayRef<const SCEV *> C, const SCEV *Step, const SCEV *Bytes,
                                           const SCEV *Abs, const SCEV *BTC, BasicBlock *PH) {
    std::array<const SCEV *, 3> None{nullptr, nullptr, nullptr};
    if (!Bytes || Step->isZero()) return None;
    for (const SCEV *E : C) {
      auto *AR = dyn_cast<SCEVAddRecExpr>(E);
      if (!AR || AR->getLoop() != L || AR->getStepRecurrence(SE) != Step) return None;
    }
    const SCEV *Rows = SE.getAddExpr(SE.getTruncateOrZeroExtend(BTC, IntPtr), SE.getOne(IntPtr));
    for (const SCEV *X : {Bytes, Abs, Rows})
      if (X->getType() != IntPtr || !SE.isLoopInvariant(X, L) || !Exp.isSafeToExpandAt(X, PH->getTerminator()))
        return None;
    return {Bytes, Abs, Rows};
  }

  /// L's backedge-taken count where its counters do not wrap: `for (unsigned x = 1; x < w - 1; x++)`
  /// with a 64-bit w has none (the 32-bit x could wrap before it reaches the bound: an endless loop),
  /// but when x's values over the loop fit its type, the count is w - 2. Each such assumption joins
  /// the widened indices' checks (Checks: the recurrence in 128 bits, which must lie in its type's
  /// range at its first and last iteration, checked at run time; else per access).
  const SCEV *countWithoutWrap(Loop *L, SmallVectorImpl<std::array<const SCEV *, 3>> &Checks) {
    SmallVector<const SCEVPredicate *, 4> Preds;
    const SCEV *BTC = SE.getPredicatedBackedgeTakenCount(L, Preds);
    const SCEV *None = SE.getCouldNotCompute();
    if (isa<SCEVCouldNotCompute>(BTC) || Preds.empty()) return None;
    SmallVector<std::array<const SCEV *, 3>, 4> Add;
    for (const SCEVPredicate *P : Preds) {
      auto *WP = dyn_cast<SCEVWrapPredicate>(P);
      if (!WP) return None;
      const SCEVAddRecExpr *AR = WP->getExpr();
      if (AR->getLoop() != L || !AR->isAffine() || !AR->getType()->isIntegerTy()) return None;
      unsigned N = AR->getType()->getIntegerBitWidth();
      if (N >= 64) return None;
      Type *T128 = IntegerType::get(AR->getType()->getContext(), 128);
      const SCEV *Step = SE.getSignExtendExpr(AR->getStepRecurrence(SE), T128); // a signed increment
      for (bool Signed : {false, true}) {
        if (!(WP->getFlags() & (Signed ? SCEVWrapPredicate::IncrementNSSW : SCEVWrapPredicate::IncrementNUSW)))
          continue;
        const SCEV *Start = Signed ? SE.getSignExtendExpr(AR->getStart(), T128) : SE.getZeroExtendExpr(AR->getStart(), T128);
        auto [Lo, Hi] = rangeOf(SE, N, Signed);
        Add.push_back({SE.getAddRecExpr(Start, Step, L, SCEV::FlagAnyWrap), Lo, Hi});
      }
    }
    if (Add.empty()) return None;
    if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: count " << *BTC << " where " << Add.size() << " counters do not wrap\n";
    Checks.append(Add.begin(), Add.end());
    return BTC;
  }

  /// -O0 loops are not rotated: the header tests the condition (the only exit: a `&&` chain is one test
  /// in the copy, PromotedCopy::foldShortCircuits) and an unconditional latch jumps back. The body then
  /// runs backedge-taken-count times, iterations 0 .. BTC-1.
  bool topTested(Loop *L) {
    BasicBlock *H = L->getHeader(), *Latch = L->getLoopLatch();
    return TopTested && Latch && Latch != H && L->getExitingBlock() == H && Latch->getSingleSuccessor() == H;
  }

  /// The last iteration a top-tested loop's body runs (BTC - 1), and in Ran the product of
  /// umin(BTC, 1) over such loops: the range's bytes are multiplied by it (none when BTC is 0).
  const SCEV *lastBodyIteration(const SCEV *BTC, const SCEV *&Ran) {
    const SCEV *One = SE.getOne(BTC->getType());
    const SCEV *R = SE.getTruncateOrZeroExtend(SE.getUMinExpr(BTC, One), IntPtr);
    Ran = Ran ? SE.getMulExpr(Ran, R) : R;
    if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: top-tested btc " << *BTC << " ran " << *R << "\n";
    return SE.getMinusSCEV(BTC, One);
  }


  /// The collapsed-loop level (Access::NestLevel) of L for rows that start at RowLo (an address
  /// over L) and are RowBytes long: L's induction variable iv = {lb,+,1} and one divisor m
  /// (loop invariant) such that every part of RowLo that varies in L is iv, `iv / m`, `iv % m` or an
  /// affine recurrence of L, combined by additions, multiplications by invariants, truncations and
  /// extensions. An extension is linear over the planes' box only where its operand does not wrap:
  /// it is checked at run time at the box's corners (an affine value that fits at the corners fits
  /// everywhere in between), as are lb >= 0 and lb <= ub (sdiv and udiv agree, iv does not wrap).
  /// Widened 32-bit indices (ExtWiden) reaching L: CK's values (i128) must lie in their bounds over the
  /// loops below; those that vary in L become their values at the box's corners in InBox (they are
  /// affine over the box where the extensions inside them are linear, which is checked as above).
  std::optional<Access::NestLevel> nestLevel(Loop *L, const SCEV *RowLo, const SCEV *RowBytes, const SCEV *BTC,
                                             BasicBlock *PH, ArrayRef<std::array<const SCEV *, 3>> CK = {},
                                             SmallVectorImpl<std::array<const SCEV *, 3>> *InBox = nullptr) {
    if (!RowLo || RowLo->getType() != IntPtr || !L->getHeader()) return std::nullopt;
    // the varying leaves: divisions/remainders of one recurrence by one invariant, and (collapse(3))
    // of that remainder by a second one
    NestDivs D;
    std::map<Value *, const SCEV *> Models;
    const SCEV *IV = nullptr, *M = nullptr, *M2 = nullptr;
    // `iv % m` (srem/urem of L's step-1 recurrence by an invariant): records iv and m
    // (or `iv - (iv / m) * m`, as clang writes it before instcombine)
    auto ivRem = [&](Value *V) {
      auto *BO = dyn_cast<BinaryOperator>(V);
      if (!BO || !L->contains(BO)) return false;
      if (BO->getOpcode() == Instruction::Sub) {
        auto *Mul = dyn_cast<BinaryOperator>(BO->getOperand(1));
        if (!Mul || Mul->getOpcode() != Instruction::Mul) return false;
        for (unsigned I = 0; I < 2; ++I) {
          auto *Dv = dyn_cast<BinaryOperator>(Mul->getOperand(I));
          // (the same values: -O0 computes m once per use, `iv - (iv / m) * m` with three copies of m)
          if (Dv && (Dv->getOpcode() == Instruction::SDiv || Dv->getOpcode() == Instruction::UDiv) &&
              SE.getSCEV(Dv->getOperand(0)) == SE.getSCEV(BO->getOperand(0)) &&
              SE.getSCEV(Dv->getOperand(1)) == SE.getSCEV(Mul->getOperand(1 - I))) {
            BO = Dv; // the same iv and m as the division
            break;
          }
        }
        if (BO->getOpcode() == Instruction::Sub) return false;
      } else if (BO->getOpcode() != Instruction::SRem && BO->getOpcode() != Instruction::URem) {
        return false;
      }
      const SCEV *X = SE.getSCEV(BO->getOperand(0)), *Y = SE.getSCEV(BO->getOperand(1));
      auto *AR = dyn_cast<SCEVAddRecExpr>(X);
      if (!AR || AR->getLoop() != L || !AR->isAffine() || !AR->getStepRecurrence(SE)->isOne() ||
          !SE.isLoopInvariant(Y, L) || (IV && (IV != X || M != Y)))
        return false;
      IV = X, M = Y;
      return true;
    };
    std::function<bool(const SCEV *)> affine = [&](const SCEV *E) -> bool {
      if (SE.isLoopInvariant(E, L)) return true;
      switch (E->getSCEVType()) {
      case scUnknown: { // the program's own `iv / m` or `iv % m`
        auto *BO = dyn_cast<BinaryOperator>(cast<SCEVUnknown>(E)->getValue());
        if (!BO || !L->contains(BO)) return false;
        auto Op = BO->getOpcode();
        if (Op == Instruction::AShr) { // a sign extension in disguise (clang's int casts of i64 indices)
          const SCEV *X = ashrModel(BO);
          if (!X || !affine(X)) return false;
          Models[BO] = X;
          return true;
        }
        if (Op != Instruction::SDiv && Op != Instruction::UDiv && Op != Instruction::SRem && Op != Instruction::URem)
          return false;
        bool Div = Op == Instruction::SDiv || Op == Instruction::UDiv;
        const SCEV *X = SE.getSCEV(BO->getOperand(0)), *Y = SE.getSCEV(BO->getOperand(1));
        if (ivRem(BO->getOperand(0))) { // collapse(3): `(iv % m) / m2` or `(iv % m) % m2`
          if (!SE.isLoopInvariant(Y, L) || (M2 && M2 != Y)) return false;
          M2 = Y;
          (Div ? D.Divs2 : D.Rems2).insert(BO);
          return true;
        }
        auto *AR = dyn_cast<SCEVAddRecExpr>(X);
        if (!AR || AR->getLoop() != L || !AR->isAffine() || !AR->getStepRecurrence(SE)->isOne() ||
            !SE.isLoopInvariant(Y, L) || (IV && (IV != X || M != Y)))
          return false;
        IV = X, M = Y;
        (Div ? D.Divs : D.Rems).insert(BO);
        return true;
      }
      case scUDivExpr: {
        auto *D = cast<SCEVUDivExpr>(E);
        auto *AR = dyn_cast<SCEVAddRecExpr>(D->getLHS());
        if (!AR || AR->getLoop() != L || !AR->isAffine() || !AR->getStepRecurrence(SE)->isOne() ||
            !SE.isLoopInvariant(D->getRHS(), L) || (IV && (IV != AR || M != D->getRHS())))
          return false;
        IV = AR, M = D->getRHS();
        return true;
      }
      case scAddRecExpr: {
        auto *AR = cast<SCEVAddRecExpr>(E);
        return AR->getLoop() == L && AR->isAffine();
      }
      case scAddExpr:
        for (const SCEV *O : cast<SCEVNAryExpr>(E)->operands())
          if (!affine(O)) return false;
        return true;
      case scMulExpr: {
        int Varying = 0;
        for (const SCEV *O : cast<SCEVNAryExpr>(E)->operands())
          if (!SE.isLoopInvariant(O, L)) {
            if (++Varying > 1 || !affine(O)) return false;
          }
        return true;
      }
      case scTruncate: case scSignExtend: case scZeroExtend: case scPtrToInt:
        return affine(cast<SCEVCastExpr>(E)->getOperand());
      case scUMinExpr: case scUMaxExpr: { // row extremes: operands a fixed distance apart
        auto Ops = cast<SCEVNAryExpr>(E)->operands();
        for (const SCEV *O : Ops)
          if (!affine(O) || !SE.isLoopInvariant(SE.getMinusSCEV(O, Ops[0]), L)) return false;
        return E->getType() == IntPtr;
      }
      default:
        return false;
      }
    };
    bool Affine = affine(RowLo);
    if (std::getenv("QUIVER_RANGE_DEBUG") && (!Affine || !IV))
      errs() << "quiver-range: not a collapsed loop's rows: " << *RowLo << "\n";
    if (!Affine || !IV || !M ||
        (D.Divs.empty() && D.Divs2.empty() && D.Rems2.empty() && !SCEVExprContains(RowLo, [&](const SCEV *X) {
          auto *U = dyn_cast<SCEVUDivExpr>(X);
          return U && U->getLHS() == IV;
        })))
      return std::nullopt;
    if (M2 && M2->getType() != IV->getType()) return std::nullopt;
    // the extensions to check (of the widened indices' i128 values: the same operand extended to IntPtr)
    SmallVector<const SCEV *, 8> Exts;
    bool Fail = false;
    auto addExts = [&](const SCEV *E) {
      SCEVExprContains(E, [&](const SCEV *X) {
        if ((isa<SCEVSignExtendExpr>(X) || isa<SCEVZeroExtendExpr>(X)) && !SE.isLoopInvariant(X, L)) {
          const SCEV *Op = cast<SCEVCastExpr>(X)->getOperand();
          if (X->getType()->getIntegerBitWidth() > IntPtr->getIntegerBitWidth()) {
            if (Op->getType()->getIntegerBitWidth() >= IntPtr->getIntegerBitWidth()) return Fail = true;
            X = isa<SCEVSignExtendExpr>(X) ? SE.getSignExtendExpr(Op, IntPtr) : SE.getZeroExtendExpr(Op, IntPtr);
          }
          if (std::find(Exts.begin(), Exts.end(), X) == Exts.end()) Exts.push_back(X);
        }
        return false;
      });
    };
    addExts(RowLo);
    for (auto &Ck : CK)
      if (!SE.isLoopInvariant(Ck[0], L)) addExts(Ck[0]);
    if (Fail || (!CK.empty() && !InBox)) return std::nullopt;
    Type *T = IV->getType();
    auto *AR = cast<SCEVAddRecExpr>(IV);
    const SCEV *Lb = AR->getStart();
    const SCEV *Ub = AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(BTC, T), SE);
    const SCEV *One = SE.getOne(T), *Zero = SE.getZero(T);
    const SCEV *M1 = SE.getUMaxExpr(M, One); // never a division by zero (m > 0 is checked)
    const SCEV *QLo = SE.getUDivExpr(Lb, M1), *QHi = SE.getUDivExpr(Ub, M1);
    const SCEV *RLo = SE.getMinusSCEV(Lb, SE.getMulExpr(QLo, M1)), *RMax = SE.getMinusSCEV(M1, One);
    // lines (collapse(3)): r = j * m2 + k, j <= JMax, k <= KMax (the box of a plane's lines)
    const SCEV *M2u = M2 ? SE.getUMaxExpr(M2, One) : nullptr;
    const SCEV *KMax = M2 ? SE.getMinusSCEV(M2u, One) : RMax;
    const SCEV *JMax = M2 ? SE.getUDivExpr(RMax, M2u) : Zero;
    // E at plane Q, line J, row K of the line (without lines: row K of the plane)
    auto at = [&](const SCEV *E, const SCEV *Q, const SCEV *J, const SCEV *K) {
      const SCEV *R = M2 ? SE.getAddExpr(SE.getMulExpr(J, M2u), K) : K;
      NestPoint P(SE, L, IV, M, Q, R, M2 ? J : nullptr, M2 ? K : nullptr, D, Models);
      const SCEV *X = P.visit(E);
      if (P.Bad || isa<SCEVCouldNotCompute>(X) || !SE.isLoopInvariant(X, L) ||
          !isSafeHere(X, PH))
        Fail = true;
      return X;
    };
    // the checks are expanded as IntPtr values: an i32 induction variable (constant bounds) or
    // extension is widened, sign- or zero-extended as its comparison needs
    auto wide = [&](const SCEV *X, bool Signed) {
      return Signed ? SE.getNoopOrSignExtend(X, IntPtr) : SE.getNoopOrZeroExtend(X, IntPtr);
    };
    Access::NestLevel N;
    const SCEV *QLo1 = SE.getAddExpr(QLo, One);
    N.P00 = at(RowLo, QLo, Zero, Zero);
    // the strides of one operand of a umin/umax row start (they move together): canonical SCEVs
    const SCEV *Lead = isa<SCEVMinMaxExpr>(RowLo) ? cast<SCEVMinMaxExpr>(RowLo)->getOperand(0) : RowLo;
    const SCEV *L00 = at(Lead, QLo, Zero, Zero);
    N.RStride = SE.getMinusSCEV(at(Lead, QLo, Zero, One), L00);
    N.QStride = SE.getMinusSCEV(at(Lead, QLo1, Zero, Zero), L00);
    if (M2) {
      N.JStride = SE.getMinusSCEV(at(Lead, QLo, One, Zero), L00);
      N.M2 = SE.getTruncateOrZeroExtend(M2u, IntPtr);
    }
    N.M = SE.getTruncateOrZeroExtend(M1, IntPtr);
    N.RLo = SE.getTruncateOrZeroExtend(RLo, IntPtr);
    N.Count = SE.getAddExpr(SE.getTruncateOrZeroExtend(BTC, IntPtr), SE.getOne(IntPtr));
    N.RowBytes = RowBytes;
    const SCEV *DQ = SE.getMinusSCEV(QHi, QLo);
    for (const SCEV *X : Exts) {
      // linear over the box: the value at each corner is the extrapolation from the origin's neighbours
      const SCEV *B = at(X, QLo, Zero, Zero);
      Type *XT = X->getType();
      const SCEV *DK = SE.getMinusSCEV(at(X, QLo, Zero, One), B), *DQX = SE.getMinusSCEV(at(X, QLo1, Zero, Zero), B);
      const SCEV *DJ = M2 ? SE.getMinusSCEV(at(X, QLo, One, Zero), B) : SE.getZero(XT);
      auto lin = [&](const SCEV *Dq, const SCEV *J, const SCEV *K) {
        SmallVector<const SCEV *, 4> Ops{B, SE.getMulExpr(SE.getTruncateOrZeroExtend(Dq, XT), DQX),
                                         SE.getMulExpr(SE.getTruncateOrZeroExtend(J, XT), DJ),
                                         SE.getMulExpr(SE.getTruncateOrZeroExtend(K, XT), DK)};
        return SE.getAddExpr(Ops);
      };
      std::set<std::pair<const SCEV *, const SCEV *>> Seen; // (equal corners once)
      for (const SCEV *Dq : {Zero, DQ})
        for (const SCEV *J : {Zero, JMax})
          for (const SCEV *K : {Zero, KMax})
            if (!(Dq == Zero && J == Zero && K == Zero)) {
              std::pair<const SCEV *, const SCEV *> C{wide(at(X, SE.getAddExpr(QLo, Dq), J, K), false),
                                                      wide(lin(Dq, J, K), false)};
              if (Seen.insert(C).second) N.Eq.push_back(C);
            }
    }
    // the widened indices at the box's corners (every corner of the loops below was a value of CK)
    for (auto &[W, WLo, WHi] : CK) {
      if (SE.isLoopInvariant(W, L)) {
        InBox->push_back({W, WLo, WHi});
        continue;
      }
      for (const SCEV *Dq : {Zero, DQ})
        for (const SCEV *J : {Zero, JMax})
          for (const SCEV *K : {Zero, KMax}) {
            std::array<const SCEV *, 3> C{at(W, SE.getAddExpr(QLo, Dq), J, K), WLo, WHi};
            if (std::find(InBox->begin(), InBox->end(), C) == InBox->end()) InBox->push_back(C);
          }
    }
    N.SGe.push_back({wide(Lb, true), wide(Zero, true)});
    N.SGe.push_back({wide(Ub, true), wide(Lb, true)});
    N.SGe.push_back({wide(M, true), wide(One, true)});
    if (M2) N.SGe.push_back({wide(M2, true), wide(One, true)});
    for (const SCEV *X : {N.P00, N.RStride, N.QStride, N.M, N.RLo, N.Count, N.RowBytes})
      if (isa<SCEVCouldNotCompute>(X) || X->getType() != IntPtr || !isSafeHere(X, PH)) Fail = true;
    if (M2)
      for (const SCEV *X : {N.JStride, N.M2})
        if (isa<SCEVCouldNotCompute>(X) || X->getType() != IntPtr || !isSafeHere(X, PH)) Fail = true;
    for (auto &[X, Y] : N.Eq)
      if (!isSafeHere(X, PH) || !isSafeHere(Y, PH)) Fail = true;
    for (auto &[X, Y] : N.SGe)
      if (!isSafeHere(X, PH) || !isSafeHere(Y, PH)) Fail = true;
    if (Fail) return std::nullopt;
    if (std::getenv("QUIVER_RANGE_DEBUG"))
      errs() << "quiver-range: collapsed loop, divisor " << *M << " p00 " << *N.P00 << " rstride " << *N.RStride
             << " qstride " << *N.QStride;
    if (std::getenv("QUIVER_RANGE_DEBUG") && M2)
      errs() << " line " << *M2 << " jstride " << *N.JStride;
    if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << " (" << Exts.size() << " extensions checked)\n";
    return N;
  }

  /// `ashr (shl x, c), c` or `ashr (mul x, k << c), c` (i64): sext(trunc(x * k) to i(64-c)), which
  /// ScalarEvolution leaves opaque in the second form.
  const SCEV *ashrModel(BinaryOperator *BO) {
    auto *C = dyn_cast<ConstantInt>(BO->getOperand(1));
    auto *In = dyn_cast<BinaryOperator>(BO->getOperand(0));
    unsigned W = BO->getType()->getIntegerBitWidth();
    if (!C || !In || C->getZExtValue() == 0 || C->getZExtValue() >= W) return nullptr;
    unsigned Sh = (unsigned)C->getZExtValue();
    const SCEV *X = nullptr;
    // `ashr (add (shl x, c), k << c), c`: sext(trunc(x + k)) (clang's `(int)(i + 2)` of an i64 index)
    if (In->getOpcode() == Instruction::Add)
      if (auto *K = dyn_cast<ConstantInt>(In->getOperand(1)); K && K->getValue().countr_zero() >= Sh)
        if (auto *Sl = dyn_cast<BinaryOperator>(In->getOperand(0));
            Sl && Sl->getOpcode() == Instruction::Shl && Sl->getOperand(1) == C) {
          X = SE.getAddExpr(SE.getSCEV(Sl->getOperand(0)), SE.getConstant(K->getValue().ashr(Sh)));
          Type *Narrow = IntegerType::get(BO->getContext(), W - Sh);
          return SE.getSignExtendExpr(SE.getTruncateExpr(X, Narrow), BO->getType());
        }
    if (In->getOpcode() == Instruction::Shl && In->getOperand(1) == C) {
      X = SE.getSCEV(In->getOperand(0));
    } else if (In->getOpcode() == Instruction::Mul) {
      auto *K = dyn_cast<ConstantInt>(In->getOperand(1));
      if (!K || K->getValue().countr_zero() < Sh) return nullptr;
      X = SE.getMulExpr(SE.getSCEV(In->getOperand(0)), SE.getConstant(K->getValue().ashr(Sh)));
    } else {
      return nullptr;
    }
    Type *Narrow = IntegerType::get(BO->getContext(), W - Sh);
    return SE.getSignExtendExpr(SE.getTruncateExpr(X, Narrow), BO->getType());
  }

  /// Expandable in PH: no division by what may be zero except by umax(m, 1) (our own divisor).
  bool isSafeHere(const SCEV *X, BasicBlock *PH) {
    if (Exp.isSafeToExpandAt(X, PH->getTerminator())) return true;
    // SCEVExpander refuses a udiv by a value it cannot prove non-zero: ours divide by umax(m, 1)
    bool Unsafe = SCEVExprContains(X, [&](const SCEV *Y) {
      if (auto *D = dyn_cast<SCEVUDivExpr>(Y)) {
        auto *Mx = dyn_cast<SCEVUMaxExpr>(D->getRHS());
        bool Ours = Mx && llvm::any_of(Mx->operands(), [](const SCEV *O) { return O->isOne(); });
        return !Ours && !SE.isKnownNonZero(D->getRHS());
      }
      if (auto *U = dyn_cast<SCEVUnknown>(Y))
        if (auto *I = dyn_cast<Instruction>(U->getValue())) return !DT.dominates(I, PH->getTerminator());
      return isa<SCEVAddRecExpr>(Y) && !cast<SCEVAddRecExpr>(Y)->getLoop()->contains(PH);
    });
    return !Unsafe;
  }

  /// Need (the access's block, or the preheader of the loop below) runs on every iteration of L
  /// (K: L's depth over the access) or, behind a guard invariant in L, on every iteration or on none
  /// (the guard joins Conds); every condition so far is invariant in L.
  bool everyIteration(Loop *L, BasicBlock *Need, unsigned K, SmallVectorImpl<std::pair<Value *, bool>> &Conds) {
    BasicBlock *Latch = L->getLoopLatch();
    if (!DT.dominates(Need, Latch)) {
      // an inner loop behind a guard that is invariant here (`if (n > 2)` of a rotated loop)
      BasicBlock *G = K ? Need->getSinglePredecessor() : nullptr;
      auto *Br = G ? dyn_cast<BranchInst>(G->getTerminator()) : nullptr;
      if (!Br || !Br->isConditional() || !L->isLoopInvariant(Br->getCondition()) || !DT.dominates(G, Latch) ||
          Br->getSuccessor(0) == Br->getSuccessor(1))
        return false;
      Conds.push_back({Br->getCondition(), Br->getSuccessor(0) == Need});
    }
    for (auto &[V, Pol] : Conds)
      if (!L->isLoopInvariant(V)) return false;
    return true;
  }

  /// A block its loop runs on the iterations of one residue class (`if ((i + j) % 2 == colour)`, `if (i % 3 ==
  /// c)`): the only way into B is the branch of Guard (run on every iteration of L) on `X % K == C` (srem,
  /// urem, or `X & (K - 1)`; or `!=` for K = 2), X an affine counter of L that steps by 1, C invariant.
  struct Residue {
    BasicBlock *Guard;
    const SCEVAddRecExpr *X;
    const SCEV *C;
    unsigned K;
  };
  /// The equality test whose branch is the only way into B (B's single predecessor G, in L, branches on
  /// `a == b` or `a != b` to B and elsewhere): (G, the test, whether B is on the `==` side).
  std::optional<std::tuple<BasicBlock *, ICmpInst *, bool>> equalityGuard(Loop *L, BasicBlock *B) {
    BasicBlock *G = B->getSinglePredecessor();
    auto *Br = G ? dyn_cast<BranchInst>(G->getTerminator()) : nullptr;
    auto *Cmp = Br && Br->isConditional() ? dyn_cast<ICmpInst>(Br->getCondition()) : nullptr;
    if (!Cmp || !Cmp->isEquality() || !L->contains(G) || Br->getSuccessor(0) == Br->getSuccessor(1) ||
        (Br->getSuccessor(0) != B && Br->getSuccessor(1) != B))
      return std::nullopt;
    return std::make_tuple(G, Cmp, Br->getSuccessor(Cmp->getPredicate() == ICmpInst::ICMP_EQ ? 0 : 1) == B);
  }

  std::optional<Residue> residueGuard(Loop *L, BasicBlock *B) {
    auto Eq = equalityGuard(L, B);
    if (!Eq) return std::nullopt;
    auto [G, Cmp, OnEq] = *Eq;
    bool Other = !OnEq; // B on the `!=` side: the other classes, one class only mod 2 (`if ((i + j) & 1)`: 1 - C)
    for (unsigned Side = 0; Side < 2; ++Side) {
      auto *Rem = dyn_cast<BinaryOperator>(Cmp->getOperand(Side));
      Value *CV = Cmp->getOperand(1 - Side);
      auto *KC = Rem ? dyn_cast<ConstantInt>(Rem->getOperand(1)) : nullptr;
      if (!KC || !L->isLoopInvariant(CV) || KC->getValue().ugt(64)) continue;
      unsigned K = (unsigned)KC->getZExtValue();
      if (Rem->getOpcode() == Instruction::And) { // (the mask K - 1: `x & 1` is the class mod 2)
        if (!isPowerOf2_32(K + 1)) continue;
        K += 1;
      } else if (Rem->getOpcode() != Instruction::SRem && Rem->getOpcode() != Instruction::URem) {
        continue;
      }
      if (K < 2 || K > 64 || (Other && K != 2)) continue;
      auto *X = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(Rem->getOperand(0)));
      auto *One = X ? dyn_cast<SCEVConstant>(X->getStepRecurrence(SE)) : nullptr;
      if (!X || X->getLoop() != L || !X->isAffine() || !One || !One->isOne()) continue;
      const SCEV *C = SE.getSCEV(CV);
      return Residue{G, X, Other ? SE.getMinusSCEV(SE.getOne(C->getType()), C) : C, K};
    }
    return std::nullopt;
  }

  /// A block its loop runs on every iteration but one (`if (j != i)`, all-pairs interactions): the only way
  /// into B is the branch of Guard (run on every iteration of L) on `X != V` (or the false side of `X ==
  /// V`), X an affine counter of L that steps by 1, V invariant.
  struct HoleAt {
    BasicBlock *Guard;
    const SCEVAddRecExpr *X;
    const SCEV *V;
  };
  std::optional<HoleAt> holeGuard(Loop *L, BasicBlock *B) {
    auto Eq = equalityGuard(L, B);
    if (!Eq || std::get<2>(*Eq)) return std::nullopt;
    auto [G, Cmp, OnEq] = *Eq;
    for (unsigned Side = 0; Side < 2; ++Side) {
      auto *X = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(Cmp->getOperand(Side)));
      Value *VV = Cmp->getOperand(1 - Side);
      auto *One = X ? dyn_cast<SCEVConstant>(X->getStepRecurrence(SE)) : nullptr;
      if (!X || X->getLoop() != L || !X->isAffine() || !One || !One->isOne() || !L->isLoopInvariant(VV) ||
          !X->getType()->isIntegerTy() || X->getType()->getIntegerBitWidth() > 64)
        continue;
      return HoleAt{G, X, SE.getSCEV(VV)};
    }
    return std::nullopt;
  }

  /// E over L's iterations as a monotone function of L's counter: its values at the first and the last
  /// iteration and the most it moves per iteration (Slope). Built of L's affine recurrences, L-invariant terms,
  /// additions, constant factors and min/max with invariants (a clamp), one varying operand each; a narrow
  /// such expression sign-extended is taken exactly (`exactly`), MK getting the run-time checks that it is
  /// in its type's range at both ends (so nowhere wraps).
  struct Mono {
    const SCEV *First, *Last;
    uint64_t Slope;
  };
  /// The exact value of the narrow expression X (no wrap) in type T: its L-invariant terms sign-extended,
  /// L's recurrences, sums, constant factors and signed min/max computed in T; nullptr for anything else.
  const SCEV *exactly(const SCEV *X, Type *T, Loop *L, unsigned Depth = 0) {
    if (Depth > 8) return nullptr;
    if (SE.isLoopInvariant(X, L)) return SE.getSignExtendExpr(X, T);
    if (auto *AR = dyn_cast<SCEVAddRecExpr>(X); AR && AR->getLoop() == L && AR->isAffine())
      return SE.getAddRecExpr(SE.getSignExtendExpr(AR->getStart(), T), SE.getSignExtendExpr(AR->getStepRecurrence(SE), T), L,
                              SCEV::FlagAnyWrap);
    if (auto *S = dyn_cast<SCEVSignExtendExpr>(X)) return exactly(S->getOperand(), T, L, Depth + 1);
    auto *N = dyn_cast<SCEVNAryExpr>(X);
    if (!N || !(isa<SCEVAddExpr>(X) || isa<SCEVSMinExpr>(X) || isa<SCEVSMaxExpr>(X) ||
                (isa<SCEVMulExpr>(X) && N->getNumOperands() == 2 && isa<SCEVConstant>(N->getOperand(0)))))
      return nullptr;
    SmallVector<const SCEV *, 4> Ops;
    for (const SCEV *Op : N->operands()) {
      Ops.push_back(exactly(Op, T, L, Depth + 1));
      if (!Ops.back()) return nullptr;
    }
    if (isa<SCEVAddExpr>(X)) return SE.getAddExpr(Ops);
    if (isa<SCEVMulExpr>(X)) return SE.getMulExpr(Ops);
    return SE.getMinMaxExpr(X->getSCEVType(), Ops);
  }

  std::optional<Mono> monotone(const SCEV *E, Loop *L, const SCEV *BTC, SmallVectorImpl<std::array<const SCEV *, 3>> &MK,
                               unsigned Depth = 0) {
    if (Depth > 8) return std::nullopt;
    if (SE.isLoopInvariant(E, L)) return Mono{E, E, 0};
    // the one operand of E that varies over L (nullptr: several)
    auto varying = [&](const SCEVNAryExpr *X) -> std::optional<unsigned> {
      std::optional<unsigned> V;
      for (unsigned I = 0; I < X->getNumOperands(); ++I)
        if (!SE.isLoopInvariant(X->getOperand(I), L)) {
          if (V) return std::nullopt;
          V = I;
        }
      return V;
    };
    auto with = [&](const SCEVNAryExpr *X, unsigned I, const SCEV *Op) {
      SmallVector<const SCEV *, 4> Ops(X->operands().begin(), X->operands().end());
      Ops[I] = Op;
      return Ops;
    };
    if (auto *AR = dyn_cast<SCEVAddRecExpr>(E)) {
      auto *St = AR->getLoop() == L && AR->isAffine() ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE)) : nullptr;
      if (!St || St->getAPInt().getSignificantBits() > 32) return std::nullopt;
      int64_t Step = St->getAPInt().getSExtValue();
      return Mono{AR->getStart(), AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(BTC, AR->getType()), SE),
                  (uint64_t)(Step < 0 ? -Step : Step)};
    }
    if (auto *X = dyn_cast<SCEVSignExtendExpr>(E)) { // of a narrow expression that must not wrap
      const SCEV *W = exactly(X->getOperand(), E->getType(), L);
      auto M = W ? monotone(W, L, BTC, MK, Depth + 1) : std::nullopt;
      if (!M) return std::nullopt;
      unsigned Bits = X->getOperand()->getType()->getIntegerBitWidth();
      const SCEV *Lo = SE.getConstant(E->getType(), APInt::getSignedMinValue(Bits).getSExtValue(), true);
      const SCEV *Hi = SE.getConstant(E->getType(), APInt::getSignedMaxValue(Bits).getSExtValue(), true);
      // exact at both ends, in the narrow range there: in range at every iteration between (monotone)
      MK.push_back({M->First, Lo, Hi});
      MK.push_back({M->Last, Lo, Hi});
      return M;
    }
    if (auto *X = dyn_cast<SCEVMinMaxExpr>(E)) {
      auto V = varying(X);
      auto M = V ? monotone(X->getOperand(*V), L, BTC, MK, Depth + 1) : std::nullopt;
      if (!M) return std::nullopt;
      auto F = with(X, *V, M->First), La = with(X, *V, M->Last);
      return Mono{SE.getMinMaxExpr(X->getSCEVType(), F), SE.getMinMaxExpr(X->getSCEVType(), La), M->Slope};
    }
    if (auto *X = dyn_cast<SCEVAddExpr>(E)) {
      auto V = varying(X);
      auto M = V ? monotone(X->getOperand(*V), L, BTC, MK, Depth + 1) : std::nullopt;
      if (!M) return std::nullopt;
      auto F = with(X, *V, M->First), La = with(X, *V, M->Last);
      return Mono{SE.getAddExpr(F), SE.getAddExpr(La), M->Slope};
    }
    if (auto *X = dyn_cast<SCEVMulExpr>(E); X && X->getNumOperands() == 2) {
      auto *C = dyn_cast<SCEVConstant>(X->getOperand(0));
      auto M = C && C->getAPInt().getSignificantBits() <= 32 ? monotone(X->getOperand(1), L, BTC, MK, Depth + 1) : std::nullopt;
      if (!M) return std::nullopt;
      int64_t F = C->getAPInt().getSExtValue();
      return Mono{SE.getMulExpr(C, M->First), SE.getMulExpr(C, M->Last), M->Slope * (uint64_t)(F < 0 ? -F : F)};
    }
    return std::nullopt;
  }

  /// Byte ranges of A over its innermost loop and the enclosing ones, while they are exact; past
  /// kMaxDepth levels, boxes (boxLevels).
  void levels(Access &A) {
    Access Fresh = A;
    innerLevels(A, false);
    // again with 32-bit indices widened (ExtWiden) where that reaches further out (else a collapsed
    // loop's own extension checks, nestLevel, stay as they were)
    {
      Access W = Fresh;
      if (innerLevels(W, true) && W.Loops.size() > A.Loops.size()) A = W;
    }
    // (a box is not made of a widened index: its extensions are checked over Loops[0..] only)
    // (-O0, top-tested loops: the inner level only)
    if (A.Loops.size() == kMaxDepth && !A.Nest && A.InRange.back().empty()) boxLevels(A);
  }

  /// The levels of A past kMaxDepth (a 27-point box filter at -O1: the dx, dy, dz loops of 3 iterations
  /// inside the x, y, z loops): A's address is an affine recurrence of every loop up to Loops[k], so
  /// the bytes over them are the sum of one segment per loop (step, trip count). Segments of one step
  /// are one (dx and x: n + 2 positions), constant steps up to the access's bytes make the row one
  /// interval, and at most 3 others are its dimensions: one nest/nest3 record per entry of Loops[k].
  void boxLevels(Access &A) {
    const SCEV *S = SE.getSCEV(A.Ptr);
    if (!S->getType()->isPointerTy()) return;
    S = SE.getPtrToIntExpr(S, IntPtr);
    if (isa<SCEVCouldNotCompute>(S)) return;
    SmallVector<std::pair<Value *, bool>, 2> Conds(A.Conds.back().begin(), A.Conds.back().end());
    SmallVector<std::pair<const SCEV *, const SCEV *>, kMaxBoxDepth> Seg; // (step, trip count) per loop
    BasicBlock *Need = A.Loops.back()->getLoopPreheader();
    const SCEV *Base = S;
    const SCEV *Ran = nullptr; // -O0: the product of umin(BTC, 1) of the top-tested loops so far
    unsigned K = 0;
    for (Loop *L = A.Loops[0]; L && K < kMaxBoxDepth; ++K, L = L->getParentLoop()) {
      if (TopTested && K >= kMaxDepth) return;
      BasicBlock *PH = L->getLoopPreheader(), *Latch = L->getLoopLatch();
      if (K >= kMaxDepth && (!PH || !Latch || L->getExitingBlock() != Latch || !plain(L) ||
                             !everyIteration(L, Need, K, Conds)))
        return;
      const SCEV *BTC = SE.getBackedgeTakenCount(L);
      if (isa<SCEVCouldNotCompute>(BTC)) return;
      if (topTested(L)) BTC = lastBodyIteration(BTC, Ran); // the body runs BTC times (innerLevels)
      auto *AR = dyn_cast<SCEVAddRecExpr>(Base);
      if (AR && AR->getLoop() == L) {
        if (!AR->isAffine()) return;
        Seg.push_back({AR->getStepRecurrence(SE), SE.getAddExpr(SE.getTruncateOrZeroExtend(BTC, IntPtr), SE.getOne(IntPtr))});
        Base = AR->getStart();
      } else if (SE.isLoopInvariant(Base, L)) {
        Seg.push_back({SE.getZero(IntPtr), SE.getOne(IntPtr)});
      } else {
        return;
      }
      if (K + 1 < kMaxDepth) continue;
      // K == kMaxDepth - 1: the last of the inner levels, a box too when it is one (a 9-point window
      // summed in two loops of 3 inside the row loop, -O1): that level's range holds only when its rows
      // touch (a run-time check), else each point of the row loop made a strided record of 3 rows
      bool Inner = K + 1 == kMaxDepth;
      Need = PH;
      bool Inv = SE.isLoopInvariant(Base, L) && isSafeHere(Base, PH);
      for (auto &[St, N] : Seg)
        Inv = Inv && St->getType() == IntPtr && SE.isLoopInvariant(St, L) && SE.isLoopInvariant(N, L) &&
              isSafeHere(St, PH) && isSafeHere(N, PH);
      if (Ran) Inv = Inv && SE.isLoopInvariant(Ran, L) && isSafeHere(Ran, PH);
      if (!Inv) {
        if (Inner) continue;
        return;
      }
      bool Merged = false;
      std::optional<Access::BoxLevel> Bx = box(Base, Seg, A.Bytes, &Merged);
      if (!Bx) {
        if (Inner) continue;
        return;
      }
      if (Inner) {
        // only a window over the loop (two loops of one step): a plain 3-deep nest keeps its strided
        // records per plane, which the tracer merges and drops between neighbouring loads far better
        // than one record of the whole chunk per load (box27 at -O2: 2x the rows)
        if (!Merged) continue;
        if (Bx->Dims.empty()) continue; // one interval: the level's own range is exact whenever it holds
        if (std::getenv("QUIVER_RANGE_DEBUG"))
          errs() << "quiver-range: " << *A.I << " box level " << K << " (inner) row " << *Bx->RowBytes << " at "
                 << *Bx->P << ", " << Bx->Dims.size() << " dimensions\n";
        Bx->Ran = Ran;
        A.Box[K] = *Bx;
        continue;
      }
      // the hull (the check of loads against stores): each dimension adds min(0, (n-1) s) .. max(0, (n-1) s)
      const SCEV *Lo = Bx->P, *Hi = SE.getAddExpr(Bx->P, Bx->RowBytes);
      for (auto &[St, N] : Bx->Dims) {
        const SCEV *Far = SE.getMulExpr(SE.getMinusSCEV(N, SE.getOne(IntPtr)), St);
        Lo = SE.getAddExpr(Lo, SE.getSMinExpr(Far, SE.getZero(IntPtr)));
        Hi = SE.getAddExpr(Hi, SE.getSMaxExpr(Far, SE.getZero(IntPtr)));
      }
      if (!isSafeHere(Lo, PH) || !isSafeHere(Hi, PH)) return;
      if (std::getenv("QUIVER_RANGE_DEBUG"))
        errs() << "quiver-range: " << *A.I << " box level " << K << " row " << *Bx->RowBytes << " at " << *Bx->P
               << ", " << Bx->Dims.size() << " dimensions\n";
      A.Box[A.Loops.size()] = *Bx;
      A.Loops.push_back(L);
      A.Lo.push_back(Lo);
      A.Hi.push_back(Hi);
      A.Conds.push_back(Conds);
      A.InRange.emplace_back();
      A.Tile.push_back({nullptr, nullptr});
      A.Strided.push_back({nullptr, nullptr, nullptr});
    }
  }

  /// The box of the segments (step, count) from Base (boxLevels): constant negative steps turned
  /// around, equal steps summed, zero steps dropped; constant steps up to Bytes (in increasing order)
  /// grow the row, which stays one interval; at most 3 dimensions remain.
  std::optional<Access::BoxLevel> box(const SCEV *Base, ArrayRef<std::pair<const SCEV *, const SCEV *>> Seg,
                                      unsigned Bytes, bool *Merged = nullptr) {
    const SCEV *One = SE.getOne(IntPtr);
    SmallVector<std::pair<const SCEV *, const SCEV *>, kMaxBoxDepth> G; // (step, positions), innermost first
    for (auto [St, N] : Seg) {
      if (St->isZero()) continue;
      if (auto *C = dyn_cast<SCEVConstant>(St); C && C->getAPInt().isNegative()) {
        Base = SE.getAddExpr(Base, SE.getMulExpr(SE.getMinusSCEV(N, One), St));
        St = SE.getNegativeSCEV(St);
      }
      auto It = llvm::find_if(G, [&](auto &P) { return P.first == St; });
      if (It != G.end()) {
        It->second = SE.getMinusSCEV(SE.getAddExpr(It->second, N), One);
        if (Merged) *Merged = true;
      } else {
        G.push_back({St, N});
      }
    }
    const SCEV *Row = SE.getConstant(IntPtr, Bytes);
    unsigned Width = Bytes;
    for (bool Grew = true; Grew;) {
      Grew = false;
      auto Best = G.end();
      for (auto It = G.begin(); It != G.end(); ++It)
        if (auto *C = dyn_cast<SCEVConstant>(It->first); C && C->getAPInt().ule(Bytes) &&
            (Best == G.end() || C->getAPInt().ult(cast<SCEVConstant>(Best->first)->getAPInt())))
          Best = It;
      if (Best != G.end()) {
        Row = SE.getAddExpr(Row, SE.getMulExpr(SE.getMinusSCEV(Best->second, One), Best->first));
        Width = 0;
        G.erase(Best);
        Grew = true;
      }
    }
    if (G.size() > 3) return std::nullopt;
    Access::BoxLevel B{Base, Row, {}, Width};
    B.Dims.append(G.begin(), G.end());
    return B;
  }

  /// Widen: only with 32-bit indices widened (ExtWiden); false when there are none.
  bool innerLevels(Access &A, bool Widen) {
    Loop *L = LI.getLoopFor(A.I->getParent());
    if (!L) return false;
    if (BasicBlock *Latch = L->getLoopLatch(); Latch && !DT.dominates(A.I->getParent(), Latch))
      A.Maybe = true; // (whatever else keeps it per access: a call in the loop, a non-affine address)
    const SCEV *S = SE.getSCEV(A.Ptr);
    if (!S->getType()->isPointerTy()) return true;
    S = SE.getPtrToIntExpr(S, IntPtr);
    if (isa<SCEVCouldNotCompute>(S)) return true;
    // 32-bit indices: affine over the loops below kMaxDepth where they do not wrap
    SmallVector<std::array<const SCEV *, 3>, 4> CK; // (value, lo, hi): the checks' corners so far
    if (Widen) {
      SmallPtrSet<const Loop *, kMaxDepth> Cover;
      for (Loop *X = L; X && Cover.size() < kMaxDepth; X = X->getParentLoop()) Cover.insert(X);
      S = ExtWiden(SE, Cover, CK).visit(S);
      if (CK.empty()) return false;
    }
    SmallVector<const SCEV *, kMaxCorners> C{S};
    BasicBlock *Need = A.I->getParent(); // must run on every iteration of L
    SmallVector<std::pair<Value *, bool>, 2> Conds;
    SmallVector<std::pair<const SCEV *, const SCEV *>, kMaxDepth> Tile;
    const SCEV *Len = nullptr; // bytes over the loops so far, when they tile
    const SCEV *Ran = nullptr; // top-tested loops (-O0): 1 when each one's body ran at least once, else 0
    bool Cols = false;            // Loops[0] is a column (a strided record of single elements): try Columns
    const SCEV *ColRows = nullptr; // its rows (without the -O0 factor Ran)
    for (unsigned K = 0; L && K < kMaxDepth; ++K, L = L->getParentLoop()) {
      BasicBlock *PH = L->getLoopPreheader(), *Latch = L->getLoopLatch();
      bool Top = topTested(L);
      auto refused = [&](const char *Why) { // QUIVER_RANGE_DEBUG: why the access stops below this loop
        if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: " << *A.I << " level " << K << " refused: " << Why << "\n";
        return true;
      };
      if (!PH || !Latch || (L->getExitingBlock() != Latch && !Top)) return refused("not one exit at the latch");
      if (!plain(L)) return refused("a call or atomic in the loop");
      if (Top && Need == L->getHeader()) return refused("in the loop's test"); // runs once more than the body
      std::optional<Residue> Res;
      std::optional<HoleAt> Hl;
      if (K == 0 && !Top && CK.empty() && !DT.dominates(Need, Latch)) {
        if ((Res = residueGuard(L, Need))) Need = Res->Guard;
        else if ((Hl = holeGuard(L, Need))) Need = Hl->Guard;
      }
      if (!everyIteration(L, Need, K, Conds)) return refused("not on every iteration");
      const SCEV *BTC = SE.getBackedgeTakenCount(L);
      size_t Wrapped = CK.size(); // CK[Wrapped..]: counters of L that must not wrap (countWithoutWrap)
      if (isa<SCEVCouldNotCompute>(BTC)) BTC = countWithoutWrap(L, CK);
      if (isa<SCEVCouldNotCompute>(BTC) || !SE.isLoopInvariant(BTC, L)) return refused("no invariant trip count");
      if (Res) { // L's iterations q0, q0 + K, ... <= BTC: an access every K iterations, from the first one of
                 // the class (X from X0 >= 0 up without a wrap and 0 <= C < K, checked at run time: else per access)
        auto *AR = dyn_cast<SCEVAddRecExpr>(C[0]);
        Type *XT = Res->X->getType(), *CT = Res->C->getType();
        if (!CK.empty() || C.size() != 1 || !AR || AR->getLoop() != L || !AR->isAffine() || !XT->isIntegerTy() ||
            !CT->isIntegerTy() || XT->getIntegerBitWidth() > 64 || CT->getIntegerBitWidth() > 64)
          return refused("a residue class over a counter it cannot follow");
        const SCEV *KS = SE.getConstant(IntPtr, Res->K), *Last = SE.getTruncateOrZeroExtend(BTC, IntPtr);
        const SCEV *X0 = SE.getZeroExtendExpr(Res->X->getStart(), IntPtr), *CV = SE.getZeroExtendExpr(Res->C, IntPtr);
        const SCEV *Q0 = SE.getURemExpr(SE.getMinusSCEV(SE.getAddExpr(CV, KS), SE.getURemExpr(X0, KS)), KS);
        const SCEV *Step0 = AR->getStepRecurrence(SE);
        C[0] = SE.getAddRecExpr(SE.getAddExpr(AR->getStart(), SE.getMulExpr(Q0, Step0)), SE.getMulExpr(KS, Step0), L,
                                SCEV::FlagAnyWrap);
        const SCEV *XMax = SE.getConstant(APInt::getSignedMaxValue(XT->getIntegerBitWidth()));
        CK.push_back({Res->X->getStart(), SE.getZero(XT), XMax}); // X from 0 up without a wrap: X % K is X urem K
        CK.push_back({Res->X->evaluateAtIteration(SE.getTruncateOrZeroExtend(BTC, XT), SE), Res->X->getStart(), XMax});
        CK.push_back({Last, SE.getZero(IntPtr), SE.getZeroExtendExpr(XMax, IntPtr)});
        CK.push_back({Res->C, SE.getZero(CT), SE.getConstant(CT, Res->K - 1)});
        CK.push_back({Q0, SE.getZero(IntPtr), Last});
        BTC = SE.getUDivExpr(SE.getMinusSCEV(Last, Q0), KS);
        if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: " << *A.I << " residue class mod " << Res->K << "\n";
      }
      if (Hl) { // every iteration but X == V's: one element a step (or an invariant one), X without a wrap
        auto *AR = dyn_cast<SCEVAddRecExpr>(C[0]);
        auto *St = AR && AR->getLoop() == L && AR->isAffine() ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE)) : nullptr;
        int64_t Step = St && St->getAPInt().getSignificantBits() <= 32 ? St->getAPInt().getSExtValue() : 0;
        if (!CK.empty() || C.size() != 1 || (!SE.isLoopInvariant(C[0], L) && Step != (int64_t)A.Bytes && Step != -(int64_t)A.Bytes))
          return refused("every iteration but one, of an access it cannot split");
        Type *XT = Hl->X->getType();
        const SCEV *XEnd = Hl->X->evaluateAtIteration(SE.getTruncateOrZeroExtend(BTC, XT), SE);
        CK.push_back({XEnd, Hl->X->getStart(), SE.getConstant(APInt::getSignedMaxValue(XT->getIntegerBitWidth()))});
        A.Hole = Access::HoleLevel{Hl->X->getStart(), XEnd, Hl->V, SE.isLoopInvariant(C[0], L) ? 0 : Step};
        if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: " << *A.I << " every iteration but one\n";
      }
      // a clamped index (`in[min(max(x - 1, 0), w - 1)]`): a monotone function of the counter that moves by at
      // most the element per iteration touches every element between its values at the first and the last
      // iteration: the loop's range is the interval between them (monotone; its own loop only)
      bool Clamped = false;
      if (K == 0 && !Top && !Res && !Hl && C.size() == 1 && !isa<SCEVAddRecExpr>(C[0]) && !SE.isLoopInvariant(C[0], L)) {
        SmallVector<std::array<const SCEV *, 3>, 2> MK;
        auto M = monotone(C[0], L, BTC, MK);
        if (M && M->Slope && M->Slope <= A.Bytes && M->First->getType() == IntPtr) {
          C = {M->First, M->Last};
          CK.append(MK.begin(), MK.end());
          Clamped = true;
          if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: " << *A.I << " monotone in its loop\n";
        }
      }
      const SCEV *RanIn = Ran; // (-O0) the loops below ran: a collapsed loop's rows exist
      // a top-tested loop's test sees its counters once more than the body: they must not wrap there either
      SmallVector<std::array<const SCEV *, 3>, 2> LastTest;
      if (Top)
        for (size_t I = Wrapped; I < CK.size(); ++I)
          LastTest.push_back({cast<SCEVAddRecExpr>(CK[I][0])->evaluateAtIteration(
                                  SE.getTruncateOrZeroExtend(BTC, CK[I][0]->getType()), SE), CK[I][1], CK[I][2]});
      if (Top) BTC = lastBodyIteration(BTC, Ran);
      if (K <= 2 && llvm::any_of(C, [&](const SCEV *E) {
            auto *AR = dyn_cast<SCEVAddRecExpr>(E);
            return !SE.isLoopInvariant(E, L) && (!AR || AR->getLoop() != L || !AR->isAffine());
          })) {
        if (Cols) return true; // (a column's record stays the inner loop's)
        if (!LastTest.empty()) return refused("a collapsed loop counted where its counter does not wrap");
        // not affine in L: maybe a collapsed loop, whose rows (one access, the interval over the
        // loops below, or a few rows of a strided record over them: a fan) are planes of `iv / m`
        // (nestLevel); a widened index's checks move to the planes' corners
        const SCEV *RowLo = K == 0 ? C[0] : A.Lo[K - 1];
        const SCEV *RowBytes = K == 0 ? SE.getConstant(IntPtr, A.Bytes) : Len;
        const SCEV *FanStride = nullptr;
        unsigned FanRows = 0;
        if (K && A.Strided[K - 1][0]) {
          auto *R = dyn_cast<SCEVConstant>(A.Strided[K - 1][2]);
          if (!R || R->getAPInt().ugt(kMaxFan) || R->isZero()) return true;
          RowBytes = A.Strided[K - 1][0], FanStride = A.Strided[K - 1][1], FanRows = (unsigned)R->getAPInt().getZExtValue();
        }
        if (!RowLo || !RowBytes || (K == 0 && C.size() != 1)) return true;
        SmallVector<std::array<const SCEV *, 3>, 4> InBox;
        std::optional<Access::NestLevel> NL = nestLevel(L, RowLo, RowBytes, BTC, PH, CK, &InBox);
        if (!NL || InBox.size() > 4 * kMaxCorners) return true;
        if (FanRows && (!SE.isLoopInvariant(FanStride, L) || !isSafeHere(FanStride, PH))) return true;
        NL->FanStride = FanStride, NL->FanRows = FanRows;
        if (RanIn) { // -O0: no rows when the loop below never runs (a top-tested loop's own BTC - 1 is -1 when
                     // it never runs: no rows either)
          if (!SE.isLoopInvariant(RanIn, L) || !isSafeHere(RanIn, PH)) return true;
          NL->Count = SE.getMulExpr(NL->Count, RanIn);
        }
        SmallVector<const SCEV *, 8> Cs{NL->P00}; // the hull of the planes' box (the check of loads against stores)
        const SCEV *One = SE.getOne(IntPtr);
        const SCEV *DQ = SE.getUDivExpr(SE.getAddExpr(NL->RLo, SE.getMinusSCEV(NL->Count, One)), NL->M);
        // the box's far corners along each axis: rows (of a plane, or of a line), lines, planes
        SmallVector<const SCEV *, 4> Axes{SE.getMulExpr(SE.getMinusSCEV(NL->M2 ? NL->M2 : NL->M, One), NL->RStride),
                                         SE.getMulExpr(DQ, NL->QStride)};
        if (FanRows) Axes.push_back(SE.getMulExpr(SE.getConstant(IntPtr, FanRows - 1), FanStride));
        if (NL->M2)
          Axes.push_back(SE.getMulExpr(SE.getUDivExpr(SE.getMinusSCEV(NL->M, One), NL->M2), NL->JStride));
        for (const SCEV *Ax : Axes)
          for (size_t I = 0, E = Cs.size(); I < E; ++I) Cs.push_back(SE.getAddExpr(Cs[I], Ax));
        SmallVector<const SCEV *, 4> MinOps(Cs.begin(), Cs.end()), MaxOps(Cs.begin(), Cs.end());
        const SCEV *Lo = SE.getUMinExpr(MinOps);
        const SCEV *Hi = SE.getAddExpr(SE.getUMaxExpr(MaxOps), NL->RowBytes);
        if (!isSafeHere(Lo, PH) || !isSafeHere(Hi, PH)) return true;
        if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: " << *A.I << " collapsed level " << K << "\n";
        A.Loops.push_back(L);
        A.Lo.push_back(Lo);
        A.Hi.push_back(Hi);
        A.Conds.push_back(Conds);
        A.InRange.push_back(InBox);
        Tile.push_back({nullptr, nullptr});
        A.Tile = Tile;
        A.Strided.push_back({nullptr, nullptr, nullptr});
        A.Nest = NL;
        return true;
      }
      SmallVector<const SCEV *, kMaxCorners> N;
      for (const SCEV *E : C) {
        if (SE.isLoopInvariant(E, L)) {
          N.push_back(E);
          continue;
        }
        auto *AR = dyn_cast<SCEVAddRecExpr>(E);
        if (!AR || AR->getLoop() != L || !AR->isAffine()) return true;
        N.push_back(AR->getStart());
        N.push_back(AR->evaluateAtIteration(BTC, SE));
      }
      std::sort(N.begin(), N.end());
      N.erase(std::unique(N.begin(), N.end()), N.end());
      if (N.size() > kMaxCorners) return true;
      // the widened indices at the corners of the loops so far (affine: in range there, in range
      // everywhere in between)
      SmallVector<std::array<const SCEV *, 3>, 4> NK;
      for (auto &[W, WLo, WHi] : CK) {
        auto *AR = dyn_cast<SCEVAddRecExpr>(W);
        if (SE.isLoopInvariant(W, L)) {
          NK.push_back({W, WLo, WHi});
        } else if (AR && AR->getLoop() == L && AR->isAffine()) {
          NK.push_back({AR->getStart(), WLo, WHi});
          NK.push_back({AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(BTC, W->getType()), SE), WLo, WHi});
        } else {
          return true;
        }
      }
      std::sort(NK.begin(), NK.end());
      NK.erase(std::unique(NK.begin(), NK.end()), NK.end());
      if (NK.size() > 2 * kMaxCorners) return true;
      for (auto &Ck : NK)
        if (isa<SCEVCouldNotCompute>(Ck[0]) || !SE.isLoopInvariant(Ck[0], L) || !isSafeHere(Ck[0], PH)) return true;
      for (const SCEV *E : N)
        if (isa<SCEVCouldNotCompute>(E) || E->getType() != IntPtr || !SE.isLoopInvariant(E, L) ||
            !Exp.isSafeToExpandAt(E, PH->getTerminator()))
          return true;
      // the accessed bytes over L are one interval: no gap between iterations
      const SCEV *Step = SE.getZero(IntPtr);
      for (const SCEV *E : C)
        if (auto *AR = dyn_cast<SCEVAddRecExpr>(E); AR && AR->getLoop() == L) {
          Step = AR->getStepRecurrence(SE);
          break;
        }
      if (Step->getType() != IntPtr) return true;
      const SCEV *Abs = SE.getAbsExpr(Step, /*IsNSW=*/false);
      const SCEV *Span = SE.getMulExpr(Abs, SE.getTruncateOrZeroExtend(BTC, IntPtr));
      std::array<const SCEV *, 3> Rows{nullptr, nullptr, nullptr};
      bool Last = false; // a strided innermost loop: its records are not rows of an outer one
      if (Cols) { // columns (Access::Columns): the inner record's rows widened over L
        const SCEV *W = A.Strided[0][0], *Stride = A.Strided[0][1], *Count = ColRows;
        auto *SC = dyn_cast<SCEVConstant>(Abs);
        if (Step->isZero() || (SC && SC->getAPInt().ugt(A.Bytes))) return true; // never touching
        for (const SCEV *E : C) {
          auto *AR = dyn_cast<SCEVAddRecExpr>(E);
          if (!AR || AR->getLoop() != L || AR->getStepRecurrence(SE) != Step) return true;
        }
        const SCEV *RowBytes = SE.getAddExpr(Span, W);
        for (const SCEV *X : {W, Stride, Count, RowBytes, Abs})
          if (X->getType() != IntPtr || !SE.isLoopInvariant(X, L) || !isSafeHere(X, PH)) return true;
        Rows = {RowBytes, Stride, Count};
        Tile.push_back({Abs, W});
        Last = true;
      } else if (K == 0) {
        auto *SC = dyn_cast<SCEVConstant>(Abs);
        if (!SC || SC->getAPInt().ugt(A.Bytes)) { // strided (a[2*i], a[i*n + j] over i): one record
          Rows = stridedLevel(L, C, Step, SE.getConstant(IntPtr, A.Bytes), Abs, BTC, PH);
          if (!Rows[0]) return true;
          Last = true;
        }
        Tile.push_back({nullptr, nullptr});
        Len = SE.getAddExpr(Span, SE.getConstant(IntPtr, A.Bytes));
      } else {
        Rows = stridedLevel(L, C, Step, Len, Abs, BTC, PH);
        Tile.push_back({Abs, Len});
        Len = SE.getAddExpr(Span, Len);
      }
      if (Rows[0] && Ran) Rows[2] = SE.getMulExpr(Rows[2], Ran); // -O0: no rows when an inner body never ran
      for (auto &[S1, S2] : Tile)
        if (S1 && (!SE.isLoopInvariant(S1, L) || !SE.isLoopInvariant(S2, L) ||
                   !Exp.isSafeToExpandAt(S1, PH->getTerminator()) || !Exp.isSafeToExpandAt(S2, PH->getTerminator())))
          return true;
      C = N;
      SmallVector<const SCEV *, kMaxCorners> MinOps(C.begin(), C.end()), MaxOps(C.begin(), C.end());
      const SCEV *Lo = SE.getUMinExpr(MinOps); // (both fold their operand list in place)
      const SCEV *Hi = SE.getAddExpr(SE.getUMaxExpr(MaxOps), SE.getConstant(IntPtr, A.Bytes));
      if (Ran && !SE.isLoopInvariant(Ran, L)) return true;
      if (Ran) Hi = SE.getAddExpr(Lo, SE.getMulExpr(SE.getMinusSCEV(Hi, Lo), Ran)); // no bytes when a body never ran
      if (std::getenv("QUIVER_RANGE_DEBUG"))
        errs() << "quiver-range: " << *A.I << " level " << K << " btc " << *BTC << " lo " << *Lo << " hi " << *Hi << "\n";
      A.Loops.push_back(L);
      A.Lo.push_back(Lo);
      A.Hi.push_back(Hi);
      A.Conds.push_back(Conds);
      NK.append(LastTest.begin(), LastTest.end());
      A.InRange.push_back(NK);
      CK = NK;
      A.Tile = Tile;
      A.Strided.push_back(Rows);
      if (Cols) A.Columns = K;
      if (Last && K == 0 && !Cols && L->getParentLoop()) {
        // a column (strided single elements) of the loop around: maybe the columns level next
        Cols = true;
        ColRows = SE.getAddExpr(SE.getTruncateOrZeroExtend(BTC, IntPtr), SE.getOne(IntPtr));
        Need = PH;
        continue;
      }
      if (Last || A.Hole || Clamped) return true; // (a hole, a clamp: their loop's range only)
      Need = PH;
    }
    return true;
  }

  static MemoryLocation loc(const Access &A) { return MemoryLocation::getBeforeOrAfter(A.Ptr); }

  /// A load that reads what a store of the same innermost loop wrote d >= 1 iterations before: both
  /// contiguous (|step| = element bytes, equal steps), the load's address the store's moved back by d
  /// steps (`x[i] -= c[i] * x[i + 1]` over decreasing i, `a[i] = a[i - 1] + b[i]`). Their ranges
  /// overlap, so the run-time check fails; but per byte the store comes first, except in the load's
  /// first d iterations (bytes the loop does not write). So the range calls are exact as: the load's
  /// bytes outside the store's range with the loads, the stores, then the load's other bytes
  /// (emitGroup). Only over that loop: over an enclosing one the loads of a row may come before
  /// another row's stores. The sign of the step, 0 when not such a pair.
  int recurrence(const Access &L, const Access &S) {
    if (L.Store || !S.Store || L.Loops.empty() || S.Loops.empty() || L.Loops[0] != S.Loops[0] || L.Bytes != S.Bytes ||
        L.Hole || S.Hole)
      return 0;
    auto *RL = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(L.Ptr)), *RS = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(S.Ptr));
    if (!RL || !RS || RL->getLoop() != L.Loops[0] || RS->getLoop() != L.Loops[0] || !RL->isAffine() || !RS->isAffine())
      return 0;
    auto *St = dyn_cast<SCEVConstant>(RS->getStepRecurrence(SE));
    if (!St || RL->getStepRecurrence(SE) != RS->getStepRecurrence(SE) || St->getAPInt().getSignificantBits() > 32)
      return 0;
    int64_t Step = St->getAPInt().getSExtValue();
    if (Step != (int64_t)S.Bytes && Step != -(int64_t)S.Bytes) return 0;
    const SCEV *Diff = SE.getMinusSCEV(RL->getStart(), RS->getStart());
    auto *D = dyn_cast_or_null<SCEVConstant>(isa<SCEVCouldNotCompute>(Diff) ? nullptr : Diff);
    if (!D || D->getAPInt().getSignificantBits() > 32) return 0;
    int64_t Off = D->getAPInt().getSExtValue(); // = -d * Step
    if (Off % Step != 0 || Off / Step > -1) return 0;
    return Step > 0 ? 1 : -1;
  }

  /// A load of the address a store of the same innermost loop wrote earlier in the same iteration (`if
  /// (odd) u[k] = ...; if (k % 4 == 0) probe[k] = u[k];`): the address moves by at least its bytes each
  /// iteration (each address belongs to one iteration), and no path of the body leads from the load to
  /// the store. Their ranges overlap, so the run-time check fails; but per byte the store, when it
  /// runs, comes first: the range calls are exact with the load after the stores (emitGroup's After).
  /// Only over that loop, as recurrence().
  bool storeFirst(const Access &L, const Access &S) {
    if (L.Store || !S.Store || L.Loops.empty() || S.Loops.empty() || L.Loops[0] != S.Loops[0] || L.Bytes != S.Bytes ||
        L.Hole || S.Hole)
      return false;
    const SCEV *P = SE.getSCEV(L.Ptr);
    auto *R = dyn_cast<SCEVAddRecExpr>(P);
    auto *St = R ? dyn_cast<SCEVConstant>(R->getStepRecurrence(SE)) : nullptr;
    if (P != SE.getSCEV(S.Ptr) || !R || R->getLoop() != L.Loops[0] || !R->isAffine() || !St ||
        St->getAPInt().getSignificantBits() > 32 || std::abs(St->getAPInt().getSExtValue()) < (int64_t)L.Bytes)
      return false;
    BasicBlock *From = L.I->getParent(), *To = S.I->getParent();
    if (From == To) return S.I->comesBefore(L.I);
    // the blocks reachable from the load's within one iteration (the header only through the back edge)
    SmallVector<BasicBlock *, 16> Work{From};
    SmallPtrSet<BasicBlock *, 16> Seen{From};
    while (!Work.empty())
      for (BasicBlock *N : successors(Work.pop_back_val())) {
        if (N == To) return false;
        if (N != L.Loops[0]->getHeader() && L.Loops[0]->contains(N) && Seen.insert(N).second) Work.push_back(N);
      }
    return true;
  }

  /// Lower the level of accesses that a non-hoisted access of their loop may alias, to a fixpoint.
  /// An access of the loop hoisted further out (its record is made before an enclosing loop) is
  /// not lowered against here: that one is lowered down to this loop when its own group is
  /// settled, and the two then share a group and its run-time disjointness check (a transpose's
  /// row-wise load over the nest and column-wise strided store per row).
  /// Per hoisted access: loops where it stays hoisted beside a per-access X that alias analysis
  /// cannot separate from it, X's address hull over that loop (boundedHull), checked at run time.
  std::map<Access *, std::vector<std::tuple<Loop *, const SCEV *, const SCEV *>>> BoundedBy;

  /// The bytes a load or store X directly in loop L can touch over all of L's iterations when its
  /// address is affine in L (a conditional store `if (c) out[i] = ...`), plus remainders by an
  /// L-invariant divisor (`v[r*nx + r % nx]`: a remainder lies strictly between -|m| and |m|): [lo, hi)
  /// as SCEVs at L's preheader; nullopt for another shape. X itself stays per access (which of those
  /// bytes it touches is not known), but a hoisted record of L that alias analysis cannot separate from
  /// it no longer goes per access with it: a run-time check that the two do not meet keeps it hoisted
  /// (settle, emitGroup), as for two hoisted records.
  std::optional<std::pair<const SCEV *, const SCEV *>> boundedHull(Instruction *X, Loop *L) {
    if (TopTested || Place || LI.getLoopFor(X->getParent()) != L) return std::nullopt;
    BasicBlock *PH = L->getLoopPreheader();
    const SCEV *BTC = SE.getBackedgeTakenCount(L);
    const SCEV *S = SE.getSCEV(getLoadStorePointerOperand(X));
    if (!PH || isa<SCEVCouldNotCompute>(BTC) || !S->getType()->isPointerTy()) return std::nullopt;
    S = SE.getPtrToIntExpr(S, IntPtr);
    if (isa<SCEVCouldNotCompute>(S)) return std::nullopt;
    SmallVector<const SCEV *, 4> Ops;
    if (auto *Add = dyn_cast<SCEVAddExpr>(S)) Ops.append(Add->operands().begin(), Add->operands().end());
    else Ops.push_back(S);
    const SCEV *Aff = SE.getZero(IntPtr), *Below = SE.getZero(IntPtr), *Above = SE.getZero(IntPtr);
    for (const SCEV *Op : Ops) {
      auto *AR = dyn_cast<SCEVAddRecExpr>(Op);
      if (SE.isLoopInvariant(Op, L) || (AR && AR->getLoop() == L && AR->isAffine())) {
        Aff = SE.getAddExpr(Aff, Op);
        continue;
      }
      // c * ext(rem): sext of a signed remainder, zext of an unsigned one, or none
      const SCEV *T = Op;
      int64_t C = 1;
      if (auto *Mul = dyn_cast<SCEVMulExpr>(T); Mul && Mul->getNumOperands() == 2)
        if (auto *K = dyn_cast<SCEVConstant>(Mul->getOperand(0)); K && K->getAPInt().getSignificantBits() <= 32)
          C = K->getAPInt().getSExtValue(), T = Mul->getOperand(1);
      int Ext = 0; // 1 sext, 2 zext
      if (auto *E = dyn_cast<SCEVSignExtendExpr>(T)) Ext = 1, T = E->getOperand();
      else if (auto *E = dyn_cast<SCEVZeroExtendExpr>(T)) Ext = 2, T = E->getOperand();
      auto *U = dyn_cast<SCEVUnknown>(T);
      auto *Rem = U ? dyn_cast<BinaryOperator>(U->getValue()) : nullptr;
      if (!Rem || C == 0) return std::nullopt;
      bool Signed = Rem->getOpcode() == Instruction::SRem;
      if ((!Signed && Rem->getOpcode() != Instruction::URem) || (Signed && Ext == 2) || (!Signed && Ext == 1))
        return std::nullopt;
      const SCEV *M = SE.getSCEV(Rem->getOperand(1));
      if (!SE.isLoopInvariant(M, L)) return std::nullopt;
      if (Signed) M = SE.getAbsExpr(M, /*IsNSW=*/false); // (|INT_MIN| as unsigned: its magnitude)
      M = SE.getTruncateOrZeroExtend(M, IntPtr);
      const SCEV *Reach = SE.getMulExpr(SE.getConstant(IntPtr, (uint64_t)(C < 0 ? -C : C)),
                                        SE.getMinusSCEV(SE.getUMaxExpr(M, SE.getOne(IntPtr)), SE.getOne(IntPtr)));
      if (Signed || C < 0) Below = SE.getAddExpr(Below, Reach);
      if (Signed || C > 0) Above = SE.getAddExpr(Above, Reach);
    }
    const SCEV *First = Aff, *Last = Aff;
    if (auto *AR = dyn_cast<SCEVAddRecExpr>(Aff)) {
      First = AR->getStart();
      Last = AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(BTC, IntPtr), SE);
    }
    unsigned Bytes = (unsigned)DL.getTypeStoreSize(getLoadStoreType(X));
    const SCEV *Lo = SE.getMinusSCEV(SE.getUMinExpr(First, Last), Below);
    const SCEV *Hi = SE.getAddExpr(SE.getUMaxExpr(First, Last), SE.getAddExpr(Above, SE.getConstant(IntPtr, Bytes)));
    if (!SE.isLoopInvariant(Lo, L) || !SE.isLoopInvariant(Hi, L) || !isSafeHere(Lo, PH) || !isSafeHere(Hi, PH))
      return std::nullopt;
    return std::make_pair(Lo, Hi);
  }

  void settle(std::vector<Access> &As) {
    std::map<Instruction *, Access *> Of;
    for (Access &A : As) Of[A.I] = &A;
    // a recurrence or store-first pair is exact over its innermost loop only (recurrence(), storeFirst());
    // further out its ranges
    // overlap and the check would send the whole nest per access
    for (Access &L : As)
      for (Access &S : As)
        if (L.Level >= 0 && S.Level >= 0 && (L.Level > 0 || S.Level > 0) && (recurrence(L, S) || storeFirst(L, S)))
          L.Level = S.Level = 0;
    for (bool Changed = true; Changed;) {
      Changed = false;
      std::map<Loop *, std::vector<Access *>> Groups;
      for (Access &A : As)
        if (A.Level >= 0) Groups[A.Loops[A.Level]].push_back(&A);
      for (auto &[L, H] : Groups) {
        std::set<Instruction *> In;
        for (Access *A : H) In.insert(A->I);
        auto outer = [&](Instruction &I) {
          auto It = Of.find(&I);
          if (It == Of.end() || It->second->Level < 0) return false;
          Loop *XL = It->second->Loops[It->second->Level];
          return XL != L && XL->contains(L);
        };
        SmallVector<Instruction *, 32> Others;
        for (BasicBlock *BB : L->blocks())
          for (Instruction &I : *BB)
            if ((isa<LoadInst>(I) || isa<StoreInst>(I)) && !In.count(&I) && !outer(I)) Others.push_back(&I);
        for (Access *A : H) {
          for (Instruction *X : Others) {
            bool XStore = isa<StoreInst>(X);
            if (XStore == A->Store) continue; // write/write and read/read order does not matter
            if (AA.isNoAlias(loc(*A), MemoryLocation::getBeforeOrAfter(getLoadStorePointerOperand(X)))) continue;
            if (auto Hull = boundedHull(X, L)) { // a run-time check instead (emitGroup)
              BoundedBy[A].emplace_back(L, Hull->first, Hull->second);
              continue;
            }
            if (std::getenv("QUIVER_RANGE_DEBUG"))
              errs() << "quiver-range: " << *A->I << " level " << A->Level << " lowered by " << *X << "\n";
            A->Level--;
            Changed = true;
            break;
          }
        }
        if (Changed) break; // groups changed: regroup
      }
    }
  }

  /// `lo1 < hi2 && lo2 < hi1` -> false; ANDed into Ok. Rows (row bytes, stride) of two strided
  /// records (both or neither): also true when their residues are apart (residuesApart).
  Value *disjoint(IRBuilder<> &B, Value *Ok, Value *Lo1, Value *Hi1, Value *Lo2, Value *Hi2, Value *W1 = nullptr,
                  Value *S1 = nullptr, Value *W2 = nullptr, Value *S2 = nullptr) {
    Value *Ov = B.CreateAnd(B.CreateICmpULT(Lo1, Hi2), B.CreateICmpULT(Lo2, Hi1));
    Value *D = B.CreateNot(Ov);
    if (W1 && W2) D = B.CreateOr(D, residuesApart(B, Lo1, W1, S1, Lo2, W2, S2));
    return Ok ? B.CreateAnd(Ok, D) : D;
  }

  /// Rows of W1 bytes at Lo1 + k * S and of W2 bytes at Lo2 + m * S share no byte whatever the row
  /// counts when the second's rows start D = (Lo2 - Lo1) mod S bytes into the first's period with
  /// W1 <= D and W2 <= S - D (a red-black sweep's store u[i*n+j] and loads u[i*n+j+-1], j += 2: hulls
  /// overlap, residues 0 and 8 of 16 do not). False when the strides differ (or are 0).
  Value *residuesApart(IRBuilder<> &B, Value *Lo1, Value *W1, Value *S1, Value *Lo2, Value *W2, Value *S2) {
    Value *One = ConstantInt::get(IntPtr, 1);
    Value *SafeS = B.CreateBinaryIntrinsic(Intrinsic::umax, S1, One);
    // the residue of the signed difference: `(Lo2 - Lo1) urem S` of a negative difference is off by
    // 2^64 mod S for a stride that is not a power of two (structs of 48 bytes)
    Value *Up = B.CreateURem(B.CreateSub(Lo2, Lo1), SafeS);
    Value *Down = B.CreateSub(SafeS, B.CreateURem(B.CreateSub(Lo1, Lo2), SafeS));
    Value *D = B.CreateSelect(B.CreateICmpULT(Lo2, Lo1), Down, Up);
    Value *Apart = B.CreateAnd(B.CreateICmpUGE(D, W1), B.CreateICmpUGE(B.CreateSub(S1, D), W2));
    return B.CreateAnd(B.CreateICmpEQ(S1, S2), Apart);
  }

  /// Strided innermost records of one loop that are one record together: same kind, line, stride,
  /// rows and guards, rows at constant offsets whose bytes touch (`in[r*W + k]` over r with k = 0..W-1
  /// unrolled: W records of one element become one of W elements). Per member: the bytes of the
  /// merged row for the member at the lowest offset, 0 for the others (no call of their own);
  /// Width: the leader's element bytes (0: mixed).
  /// An access's source line (scope, line): records merge only within one line, so a finding names
  /// the field or element the user wrote.
  static std::pair<DIScope *, unsigned> line(const Access *A) {
    const DebugLoc &D = A->I->getDebugLoc();
    return D ? std::make_pair(D->getScope(), D.getLine()) : std::make_pair((DIScope *)nullptr, 0u);
  }

  /// More: rows a record gains from members whose rows are the leader's shifted by whole strides (a
  /// constant stride S: `u[i*n+j-1]` and `u[i*n+j+1]` of a `j += 2` loop are one record of one more
  /// row; members at S, 2S, ... each add one: the union has no gap when the leader has a row).
  /// (Late: loads reported after the stores, storeFirst: they merge with no access reported before.)
  std::map<Access *, int64_t> stridedBlocks(std::vector<Access *> &H, std::map<Access *, unsigned> &Width,
                                            std::map<Access *, int64_t> &More, const std::set<Access *> &Late) {
    std::map<Access *, int64_t> Out;
    std::vector<Access *> S;
    for (Access *A : H)
      if (A->Level == 0 && A->Strided[0][0]) S.push_back(A);
    std::set<Access *> Used;
    for (Access *A : S) {
      if (Used.count(A)) continue;
      std::vector<std::pair<int64_t, Access *>> M{{0, A}};
      for (Access *X : S) {
        if (X == A || Used.count(X) || X->Store != A->Store || line(X) != line(A) || X->Strided[0][1] != A->Strided[0][1] ||
            X->Strided[0][2] != A->Strided[0][2] || X->Conds[0] != A->Conds[0] || Late.count(X) != Late.count(A))
          continue;
        auto *C = dyn_cast<SCEVConstant>(SE.getMinusSCEV(SE.getSCEV(X->Ptr), SE.getSCEV(A->Ptr)));
        if (C && C->getAPInt().getSignificantBits() <= 32) M.push_back({C->getAPInt().getSExtValue(), X});
      }
      if (M.size() < 2) continue;
      std::sort(M.begin(), M.end(), [](auto &P, auto &Q) { return P.first < Q.first; });
      struct Row { int64_t Lo, Bytes; unsigned W; Access *Leader; };
      std::vector<Row> Rows; // the merged rows, by offset
      auto *Elem = dyn_cast<SCEVConstant>(A->Strided[0][0]);
      for (size_t K = 0; K < M.size();) {
        int64_t Lo = M[K].first, Hi = Lo + M[K].second->Bytes;
        unsigned W = M[K].second->Bytes;
        size_t J = K;
        while (J + 1 < M.size() && M[J + 1].first <= Hi) {
          ++J;
          Hi = std::max(Hi, M[J].first + (int64_t)M[J].second->Bytes);
          if (M[J].second->Bytes != W) W = 0;
          Out[M[J].second] = 0;
        }
        if (J > K) Out[M[K].second] = Hi - Lo, Width[M[K].second] = W;
        if (J > K || (Elem && Elem->getAPInt().getSExtValue() == (int64_t)M[K].second->Bytes))
          Rows.push_back({Lo, Hi - Lo, W, M[K].second});
        K = J + 1;
      }
      auto *Str = dyn_cast<SCEVConstant>(A->Strided[0][1]);
      int64_t S = Str && Str->getAPInt().getSignificantBits() <= 32 ? Str->getAPInt().getSExtValue() : 0;
      for (size_t K = 0; S > 0 && K < Rows.size(); ++K) {
        if (!Rows[K].Leader) continue;
        int64_t N = 0;
        for (size_t J = K + 1; J < Rows.size(); ++J)
          if (Rows[J].Leader && Rows[J].Lo == Rows[K].Lo + (N + 1) * S && Rows[J].Bytes == Rows[K].Bytes &&
              Rows[J].W == Rows[K].W) {
            ++N;
            Out[Rows[J].Leader] = 0;
            Rows[J].Leader = nullptr;
          }
        if (!N) continue;
        Out[Rows[K].Leader] = Rows[K].Bytes, Width[Rows[K].Leader] = Rows[K].W;
        More[Rows[K].Leader] = N;
      }
      for (auto &P : M) Used.insert(P.second);
    }
    return Out;
  }

  /// X - Y when it is a constant, also for umin/umax of operands that differ by one constant each
  /// (a row's lowest address over the inner loop, `umin(start, end)`, of two accesses of one row).
  std::optional<int64_t> constOffset(const SCEV *X, const SCEV *Y) {
    auto small = [](const SCEV *D) -> std::optional<int64_t> {
      auto *C = dyn_cast<SCEVConstant>(D);
      if (C && C->getAPInt().getSignificantBits() <= 32) return C->getAPInt().getSExtValue();
      return std::nullopt;
    };
    if (auto D = small(SE.getMinusSCEV(X, Y))) return D;
    auto *NX = dyn_cast<SCEVMinMaxExpr>(X), *NY = dyn_cast<SCEVMinMaxExpr>(Y);
    if (!NX || !NY || NX->getSCEVType() != NY->getSCEVType() || NX->getNumOperands() != NY->getNumOperands())
      return std::nullopt;
    for (const SCEV *Y0 : NY->operands()) {
      auto D = small(SE.getMinusSCEV(NX->getOperand(0), Y0));
      if (!D) continue;
      bool All = llvm::all_of(NX->operands(), [&](const SCEV *XO) {
        return llvm::any_of(NY->operands(), [&](const SCEV *YO) { return small(SE.getMinusSCEV(XO, YO)) == D; });
      });
      if (All) return D;
    }
    return std::nullopt;
  }

  /// Nest records (collapsed loops) of one loop that are one record together: same kind, line,
  /// strides, planes, row bytes and guards, rows at constant offsets at most one element apart (a
  /// row is at least one element, so they touch: `a[c-1]`, `a[c]`, `a[c+1]` of a stencil row are one
  /// record of rows 2 elements longer). Per member: the merged row bytes for the member at the lowest
  /// offset, nullptr for the others (no call of their own); Width: the element bytes when every
  /// member's row is one access of that size, else 0.
  std::map<Access *, const SCEV *> nestBlocks(std::vector<Access *> &H, std::map<Access *, unsigned> &Width) {
    std::map<Access *, const SCEV *> Out;
    std::vector<Access *> S;
    for (Access *A : H)
      if (A->Nest && A->Level == (int)A->Loops.size() - 1) S.push_back(A);
    std::set<Access *> Used;
    for (Access *A : S) {
      if (Used.count(A)) continue;
      const Access::NestLevel &N = *A->Nest;
      std::vector<std::pair<int64_t, Access *>> M{{0, A}};
      for (Access *X : S) {
        const Access::NestLevel &Y = *X->Nest;
        if (X == A || Used.count(X) || X->Store != A->Store || line(X) != line(A) || Y.RStride != N.RStride ||
            Y.QStride != N.QStride || Y.M != N.M || Y.RLo != N.RLo || Y.Count != N.Count ||
            Y.RowBytes != N.RowBytes || Y.JStride != N.JStride || Y.M2 != N.M2 || Y.FanStride != N.FanStride ||
            Y.FanRows != N.FanRows || X->Level != A->Level ||
            X->Conds[X->Level] != A->Conds[A->Level])
          continue;
        if (std::optional<int64_t> D = constOffset(Y.P00, N.P00)) M.push_back({*D, X});
      }
      if (M.size() < 2) continue;
      std::sort(M.begin(), M.end(), [](auto &P, auto &Q) { return P.first < Q.first; });
      for (size_t K = 0; K < M.size();) {
        unsigned W = M[K].second->Bytes;
        size_t J = K;
        while (J + 1 < M.size() && M[J + 1].first <= M[J].first + (int64_t)std::min(M[J].second->Bytes, M[J + 1].second->Bytes)) {
          ++J;
          if (M[J].second->Bytes != W) W = 0;
          Out[M[J].second] = nullptr;
        }
        if (J > K) {
          Out[M[K].second] = SE.getAddExpr(N.RowBytes, SE.getConstant(IntPtr, M[J].first - M[K].first +
                                                                      (int64_t)M[J].second->Bytes - (int64_t)M[K].second->Bytes));
          Width[M[K].second] = M[K].second->Level == 0 ? W : 0;
        }
        K = J + 1;
      }
      for (auto &P : M) Used.insert(P.second);
    }
    return Out;
  }

  /// Where code for the copy's point At goes (-O0: the original function's same point).
  Instruction *out(Instruction *At) { return Place ? Place(At) : At; }
  Value *expandHere(const SCEV *S, Instruction *At) {
    return Rebuild ? Rebuild(S, At) : Exp.expandCodeFor(S, IntPtr, At);
  }

  /// Emit the range calls of one loop's hoisted accesses in its preheader.
  void emitGroup(Loop *L, std::vector<Access *> &H, FunctionCallee RLoad, FunctionCallee RStore) {
    Module &M = *F.getParent();
    FunctionCallee SLoad = callback(M, Entry::range_load_strided);
    FunctionCallee SStore = callback(M, Entry::range_store_strided);
    FunctionCallee NLoad = callback(M, Entry::range_load_nest);
    FunctionCallee NStore = callback(M, Entry::range_store_nest);
    FunctionCallee N3Load = callback(M, Entry::range_load_nest3);
    FunctionCallee N3Store = callback(M, Entry::range_store_nest3);
    Instruction *At = L->getLoopPreheader()->getTerminator();
    std::map<const SCEV *, Value *> Expanded;
    auto expand = [&](const SCEV *S) {
      auto It = Expanded.find(S);
      if (It != Expanded.end()) return It->second;
      return Expanded[S] = expandHere(S, At);
    };
    std::vector<std::tuple<Value *, Value *, Access *>> R; // lo, hi
    for (Access *A : H) R.emplace_back(expand(A->Lo[A->Level]), expand(A->Hi[A->Level]), A);
    IRBuilder<> B(out(At));
    Value *Ok = nullptr;
    // load/store pairs whose order the range calls would lose; a strided record's (row bytes, stride)
    auto rows = [&](Access *A) -> std::pair<Value *, Value *> {
      const std::array<const SCEV *, 3> &S = A->Strided[A->Level];
      if (!S[0]) return {nullptr, nullptr};
      return {expand(S[0]), expand(S[1])};
    };
    std::set<std::array<Value *, 8>> Pairs;
    // recurrence loads (recurrence()): load -> (the store's lo, hi, the step's sign); split around the stores
    std::map<Access *, std::tuple<Value *, Value *, int>> Split;
    auto plain0 = [](Access *A) { return A->Level == 0 && !A->Strided[0][0] && !A->Nest && !A->Box.count(0); };
    auto loadFirst = [&](Access *AL, Access *AS) {
      return SE.getSCEV(AL->Ptr) == SE.getSCEV(AS->Ptr) && AL->Bytes == AS->Bytes && DT.dominates(AL->I, AS->I);
    };
    // loads that read what a store wrote earlier in the iteration (storeFirst): reported after the stores,
    // unless another store's pair wants them before it (load first, recurrence)
    std::set<Access *> After;
    for (auto &[LoL, HiL, AL] : R)
      for (auto &[LoS, HiS, AS] : R)
        if (AL->Level == 0 && AS->Level == 0 && !AL->Nest && !AL->Box.count(0) && storeFirst(*AL, *AS)) After.insert(AL);
    for (auto &[LoL, HiL, AL] : R)
      for (auto &[LoS, HiS, AS] : R)
        if (After.count(AL) && AS->Store && (loadFirst(AL, AS) || recurrence(*AL, *AS))) After.erase(AL);
    for (auto &[LoL, HiL, AL] : R) {
      if (AL->Store) continue;
      for (auto &[LoS, HiS, AS] : R) {
        if (!AS->Store) continue;
        if (AA.isNoAlias(loc(*AL), loc(*AS))) continue;
        if (loadFirst(AL, AS)) continue; // same address, load first in each iteration: loads-then-stores is exact
        if (After.count(AL) && storeFirst(*AL, *AS)) continue; // the load after the stores is exact
        if (!Split.count(AL) && !After.count(AL) && plain0(AL) && plain0(AS))
          if (int Sign = recurrence(*AL, *AS)) {
            Split[AL] = {LoS, HiS, Sign};
            continue; // the load's bytes the store wrote are reported after the stores
          }
        auto [WL, SL] = rows(AL);
        auto [WS, SS] = rows(AS);
        if (!WL || !WS) WL = SL = WS = SS = nullptr;
        Pairs.insert({LoL, HiL, LoS, HiS, WL, SL, WS, SS});
      }
    }
    if (Pairs.size() <= kMaxPairs) {
      for (auto &[A, Bv, C, D, WA, SA, WC, SC] : Pairs) Ok = disjoint(B, Ok, A, Bv, C, D, WA, SA, WC, SC);
    } else { // hulls per pointer base and kind
      std::map<std::pair<const SCEV *, bool>, std::pair<Value *, Value *>> Hull;
      for (auto &[Lo, Hi, A] : R) {
        auto Key = std::make_pair(SE.getPointerBase(SE.getSCEV(A->Ptr)), A->Store);
        auto It = Hull.find(Key);
        if (It == Hull.end()) {
          Hull[Key] = {Lo, Hi};
        } else {
          It->second.first = B.CreateBinaryIntrinsic(Intrinsic::umin, It->second.first, Lo);
          It->second.second = B.CreateBinaryIntrinsic(Intrinsic::umax, It->second.second, Hi);
        }
      }
      for (auto &[KL, VL] : Hull)
        if (!KL.second)
          for (auto &[KS, VS] : Hull)
            if (KS.second) Ok = disjoint(B, Ok, VL.first, VL.second, VS.first, VS.second);
    }
    // per-access accesses of bounded addresses the records stay hoisted beside (settle): no byte shared
    for (auto &[LoA, HiA, Hoisted] : R)
      if (auto It = BoundedBy.find(Hoisted); It != BoundedBy.end())
        for (auto &[BL, HLo, HHi] : It->second)
          if (BL == L) Ok = disjoint(B, Ok, LoA, HiA, expand(HLo), expand(HHi));
    // collapsed loops: their planes are exact only when the run-time checks hold (else the loop's
    // per-access version runs, as for a failed load/store check)
    for (auto &[LoN, HiN, AN] : R) {
      if (!AN->Nest) continue;
      for (auto &[X, Y] : AN->Nest->Eq) {
        Value *C = B.CreateICmpEQ(expand(X), expand(Y));
        Ok = Ok ? B.CreateAnd(Ok, C) : C;
      }
      for (auto &[X, Y] : AN->Nest->SGe) {
        Value *C = B.CreateICmpSGE(expand(X), expand(Y));
        Ok = Ok ? B.CreateAnd(Ok, C) : C;
      }
    }
    // widened 32-bit indices (ExtWiden): exact only where they do not wrap over the hoisted loops
    for (auto &[LoW, HiW, AW] : R) {
      if (AW->Level >= (int)AW->InRange.size()) continue;
      for (auto &[W, WLo, WHi] : AW->InRange[AW->Level]) {
        auto wide = [&](const SCEV *S) { return Rebuild ? Rebuild(S, At) : Exp.expandCodeFor(S, W->getType(), At); };
        Value *X = wide(W);
        Value *C = B.CreateAnd(B.CreateICmpSGE(X, wide(WLo)), B.CreateICmpSLE(X, wide(WHi)));
        Ok = Ok ? B.CreateAnd(Ok, C) : C;
      }
    }
    // per access: the call of the outermost loop whose bytes still form one interval
    std::map<std::pair<const SCEV *, Instruction *>, Value *> Here;
    auto expandAt = [&](const SCEV *S, Instruction *T) {
      auto Key = std::make_pair(S, T);
      auto It = Here.find(Key);
      return It != Here.end() ? It->second : (Here[Key] = expandHere(S, T));
    };
    std::map<Access *, unsigned> BlockWidth;
    std::map<Access *, int64_t> MoreRows;
    std::map<Access *, int64_t> Block = stridedBlocks(H, BlockWidth, MoreRows, After);
    std::map<Access *, unsigned> NestWidth;
    std::map<Access *, const SCEV *> NestBlock = nestBlocks(H, NestWidth);
    for (int Stores = 0; Stores < 3; ++Stores) // loads, stores, then the recurrence loads' tails and After
      for (auto &[LoK, HiK, A] : R) {
        bool Late = After.count(A);
        if (Stores == 2 ? !(Split.count(A) || Late) : A->Store != (bool)Stores || (Late && !Stores)) continue;
        int K = A->Level;
        SmallVector<Value *, kMaxDepth + 1> E(K + 2, nullptr); // E[j]: the bytes over Loops[j] tile
        for (int J = 1; J <= K; ++J) {
          if (!A->Tile[J].first) { // a collapsed loop: its record needs no tiling (a fan: rows of the strided
                                   // records below, which are exact when their own rows are)
            E[J] = A->Nest && J == (int)A->Loops.size() - 1 && A->Nest->FanRows && J >= 2 ? E[J - 2] : E[J - 1];
            continue;
          }
          B.SetInsertPoint(out(At));
          Value *T = B.CreateICmpULE(expandAt(A->Tile[J].first, At), expandAt(A->Tile[J].second, At));
          E[J] = E[J - 1] ? B.CreateAnd(E[J - 1], T) : T;
        }
        // Exact(J): one record over Loops[J] is exact: its rows are intervals (E[J-1]) and either touch
        // (E[J]) or form a strided record; nullptr = always
        Access *Acc = A;
        auto Exact = [&](int J) -> Value * {
          if (Acc->Box.count(J)) return nullptr; // a box is exact
          if (J && (int)Acc->Columns == J) return E[J]; // columns: the inner column moves by at most an element
          return J && Acc->Strided[J][0] ? E[J - 1] : E[J];
        };
        for (int J = 0; J <= K; ++J) {
          if (J < K && !Exact(J + 1)) continue; // the outer record always holds
          if (J < K)
            if (auto *C = dyn_cast<ConstantInt>(Exact(J + 1)); C && C->isOne()) continue; // (a constant tile)
          Instruction *T = A->Loops[J]->getLoopPreheader()->getTerminator();
          bool Str = A->Strided[J][0] != nullptr;
          Value *Lo = J == K ? LoK : expandAt(A->Lo[J], T);
          Value *Hi = Str ? nullptr : J == K ? HiK : expandAt(A->Hi[J], T);
          B.SetInsertPoint(out(T));
          B.SetCurrentDebugLocation(A->I->getDebugLoc());
          Value *Run = Ok; // the check held, inner loops' guards held, and this is the right level
          for (auto &[V, Pol] : A->Conds[J]) {
            Value *Here = RebuildValue ? RebuildValue(V, T) : V;
            Value *C = Pol ? Here : B.CreateNot(Here);
            Run = Run ? B.CreateAnd(Run, C) : C;
          }
          if (Value *Here = Exact(J)) Run = Run ? B.CreateAnd(Run, Here) : Here;
          if (J < K) {
            Value *NotOuter = B.CreateNot(Exact(J + 1));
            Run = Run ? B.CreateAnd(Run, NotOuter) : NotOuter;
          }
          if (auto Bx = A->Box.find(J); Bx != A->Box.end()) { // a box: one nest/nest3 record
            Access::BoxLevel &X = Bx->second;
            SmallVector<Value *, 3> St, N;
            for (auto &[S, C] : X.Dims) St.push_back(expandAt(S, T)), N.push_back(expandAt(C, T));
            Value *P = B.CreateIntToPtr(expandAt(X.P, T), B.getPtrTy()), *Row = expandAt(X.RowBytes, T);
            Value *Zero = ConstantInt::get(IntPtr, 0);
            Value *W = ConstantInt::get(IntPtr, X.Width);
            if (X.Dims.empty()) { // one row
              if (Run) Row = B.CreateSelect(Run, Row, Zero);
              B.CreateCall(A->Store ? RStore : RLoad, RStore.getFunctionType()->getNumParams() == 3
                                                          ? SmallVector<Value *, 3>{P, Row, W}
                                                          : SmallVector<Value *, 3>{P, Row});
            } else if (X.Dims.size() < 3) { // rows of planes
              Value *QS = X.Dims.size() == 2 ? St[1] : Zero, *Count = X.Dims.size() == 2 ? B.CreateMul(N[0], N[1]) : N[0];
              if (X.Ran) Count = B.CreateMul(Count, expandAt(X.Ran, T));
              if (Run) Count = B.CreateSelect(Run, Count, Zero);
              B.CreateCall(A->Store ? NStore : NLoad, {P, Row, St[0], QS, N[0], Zero, Count, W});
            } else { // rows of lines of planes
              Value *M = B.CreateMul(N[0], N[1]), *Count = B.CreateMul(M, N[2]);
              if (X.Ran) Count = B.CreateMul(Count, expandAt(X.Ran, T));
              if (Run) Count = B.CreateSelect(Run, Count, Zero);
              B.CreateCall(A->Store ? N3Store : N3Load, {P, Row, St[0], St[1], St[2], N[0], M, Zero, Count, W});
            }
            continue;
          }
          if (J == K && A->Nest) { // the planes of a collapsed loop: one call per chunk
            Access::NestLevel &N = *A->Nest;
            auto It = NestBlock.find(A);
            if (It != NestBlock.end() && !It->second) continue; // in another access's record
            Value *Count = expandAt(N.Count, T);
            if (Run) Count = B.CreateSelect(Run, Count, ConstantInt::get(IntPtr, 0));
            unsigned Width = It != NestBlock.end() ? NestWidth[A] : J == 0 ? A->Bytes : 0;
            Value *RowBytes = expandAt(It != NestBlock.end() ? It->second : N.RowBytes, T);
            Value *P00 = expandAt(N.P00, T), *Fan = N.FanRows ? expandAt(N.FanStride, T) : nullptr;
            for (unsigned I = 0; I < std::max(N.FanRows, 1u); ++I) { // (a fan: one record per row of it)
              Value *P = I ? B.CreateAdd(P00, B.CreateMul(Fan, ConstantInt::get(IntPtr, I))) : P00;
              if (N.M2) // lines of planes (collapse(3))
                B.CreateCall(A->Store ? N3Store : N3Load,
                             {B.CreateIntToPtr(P, B.getPtrTy()), RowBytes, expandAt(N.RStride, T),
                              expandAt(N.JStride, T), expandAt(N.QStride, T), expandAt(N.M2, T), expandAt(N.M, T),
                              expandAt(N.RLo, T), Count, ConstantInt::get(IntPtr, Width)});
              else
                B.CreateCall(A->Store ? NStore : NLoad,
                             {B.CreateIntToPtr(P, B.getPtrTy()), RowBytes, expandAt(N.RStride, T),
                              expandAt(N.QStride, T), expandAt(N.M, T), expandAt(N.RLo, T), Count,
                              ConstantInt::get(IntPtr, Width)});
            }
            continue;
          }
          if (Str) { // rows of RowBytes at Lo + i * Stride (rows that touch: the runtime's one range)
            auto It = Block.find(A);
            if (It != Block.end() && !It->second) continue; // in another access's record
            Value *Rows = expandAt(A->Strided[J][2], T);
            if (auto Mr = MoreRows.find(A); J == 0 && Mr != MoreRows.end()) // (none when the leader has none)
              Rows = B.CreateSelect(B.CreateIsNotNull(Rows), B.CreateAdd(Rows, ConstantInt::get(IntPtr, Mr->second)), Rows);
            if (Run) Rows = B.CreateSelect(Run, Rows, ConstantInt::get(IntPtr, 0));
            if (auto *C = dyn_cast<ConstantInt>(Rows); C && C->isZero()) continue; // never this level
            Value *RowBytes = It != Block.end() ? ConstantInt::get(IntPtr, It->second) : expandAt(A->Strided[J][0], T);
            // width: a row of one access (or of an unrolled group of equal ones) keeps its element size
            // (columns: rows of single elements side by side, the element size too)
            unsigned Width = J == 0 ? (It != Block.end() ? BlockWidth[A] : A->Bytes) : (int)A->Columns == J ? A->Bytes : 0;
            B.CreateCall(A->Store ? SStore : SLoad, {B.CreateIntToPtr(Lo, B.getPtrTy()), RowBytes,
                                                    expandAt(A->Strided[J][1], T), Rows, ConstantInt::get(IntPtr, Width)});
            continue;
          }
          if (auto Sp = Split.find(A); Sp != Split.end()) { // a recurrence load: the bytes the loop
            auto [LoS, HiS, Sign] = Sp->second;           // did not write first, the others after the stores
            auto umin = [&](Value *X, Value *Y) { return B.CreateBinaryIntrinsic(Intrinsic::umin, X, Y); };
            auto umax = [&](Value *X, Value *Y) { return B.CreateBinaryIntrinsic(Intrinsic::umax, X, Y); };
            // forward: [Lo, Cut) before, [Cut, Hi) after; backward: [Cut, Hi) before, [Lo, Cut) after
            Value *Cut = Sign > 0 ? umax(Lo, umin(Hi, LoS)) : umin(Hi, umax(Lo, HiS));
            if ((Sign > 0) == (Stores != 2)) Hi = Cut;
            else Lo = Cut;
          }
          // the range call of [PLo, PLo + PN) (none when Run does not hold)
          auto rangeCall = [&](Value *PLo, Value *PN) {
            FunctionCallee RC = A->Store ? RStore : RLoad;
            if (Run) PN = B.CreateSelect(Run, PN, ConstantInt::get(IntPtr, 0));
            SmallVector<Value *, 3> Args{B.CreateIntToPtr(PLo, B.getPtrTy()), PN};
            if (RC.getFunctionType()->getNumParams() == 3) Args.push_back(ConstantInt::get(IntPtr, A->Bytes)); // _w
            CallInst *CI = B.CreateCall(RC, Args);
            if (SiteCache && LI.getLoopFor(T->getParent())) LoopRanges.push_back({CI, A->Store});
          };
          if (A->Hole && J == 0) { // the interval without the element of iteration X == V, when X meets V
            Value *Zero = ConstantInt::get(IntPtr, 0), *W = ConstantInt::get(IntPtr, A->Bytes);
            Value *X0 = expandAt(A->Hole->X0, T), *XEnd = expandAt(A->Hole->XEnd, T), *V = expandAt(A->Hole->V, T);
            Value *In = B.CreateAnd(B.CreateICmpSLE(X0, V), B.CreateICmpSLE(V, XEnd));
            if (!A->Hole->Step) { // one element: unless X meets V on the only iteration
              rangeCall(Lo, B.CreateSelect(B.CreateAnd(In, B.CreateICmpEQ(X0, XEnd)), Zero, B.CreateSub(Hi, Lo)));
              continue;
            }
            Value *QB = B.CreateMul(B.CreateZExtOrTrunc(B.CreateSub(V, X0), IntPtr), W);
            Value *P = A->Hole->Step > 0 ? B.CreateAdd(Lo, QB) : B.CreateSub(B.CreateSub(Hi, W), QB); // X == V's
            rangeCall(Lo, B.CreateSelect(In, B.CreateSub(P, Lo), B.CreateSub(Hi, Lo)));
            rangeCall(B.CreateAdd(P, W), B.CreateSelect(In, B.CreateSub(Hi, B.CreateAdd(P, W)), Zero));
            continue;
          }
          rangeCall(Lo, B.CreateSub(Hi, Lo));
        }
        A->Guard = Ok;
      }
  }

  /// Two versions of L: the original when Ok holds, a copy (VMap) otherwise (as LoopVersioning).
  bool version(Loop *L, Value *Ok, ValueToValueMapTy &VMap) {
    BasicBlock *Exit = L->getExitBlock(), *Check = L->getLoopPreheader();
    if (!Exit || !Check || !L->getExitingBlock()) return false;
    formLCSSARecursively(*L, DT, &LI, &SE);
    BasicBlock *PH = SplitBlock(Check, Check->getTerminator(), &DT, &LI, nullptr, L->getHeader()->getName() + ".qv.ph");
    SmallVector<BasicBlock *, 16> Blocks;
    Loop *NL = cloneLoopWithPreheader(PH, Check, L, VMap, ".qv", &LI, &DT, Blocks);
    remapInstructionsInBlocks(Blocks, VMap);
    Instruction *Term = Check->getTerminator();
    // the check holds in a correct program: code generation favours the loop as compiled (its
    // registers; without the weights the per-access copy's many values took them, and the
    // program's own inner loop reloaded its pointers from the stack every iteration)
    BranchInst *Br = BranchInst::Create(PH, NL->getLoopPreheader(), Ok, Term->getIterator());
    Br->setMetadata(LLVMContext::MD_prof, MDBuilder(F.getContext()).createLikelyBranchWeights());
    Term->eraseFromParent();
    DT.changeImmediateDominator(Exit, Check);
    for (PHINode &PN : Exit->phis()) { // LCSSA: every value used after the loop passes here
      Value *V = PN.getIncomingValueForBlock(L->getExitingBlock());
      auto It = VMap.find(V);
      PN.addIncoming(It != VMap.end() ? static_cast<Value *>(It->second) : V, NL->getExitingBlock());
    }
    return true;
  }

  /// The interval the tracer publishes per thread and kind (tracer/native/qv_buffer.c
  /// `__quiver_skip`: read lo, read hi, write lo, write hi): an access inside it would be dropped.
  GlobalVariable *skipInterval() {
    Module &M = *F.getParent();
    Type *T = ArrayType::get(IntPtr, 4);
    auto *GV = dyn_cast<GlobalVariable>(M.getOrInsertGlobal("__quiver_skip", T));
    if (GV) GV->setThreadLocalMode(GlobalValue::InitialExecTLSModel);
    return GV;
  }

  /// Before At: call CB(Args) unless Guard holds or [P, P+N) is inside the published interval.
  void checkedCall(Instruction *At, Value *Guard, FunctionCallee CB, ArrayRef<Value *> Args, Value *P, Value *N,
                   bool Store, const DebugLoc &Loc) {
    IRBuilder<> B(At);
    Value *Call = Guard ? B.CreateNot(Guard) : nullptr;
    if (GlobalVariable *Skip = InlineSkip ? skipInterval() : nullptr) {
      Value *Base = B.CreateThreadLocalAddress(Skip);
      Type *T = ArrayType::get(IntPtr, 4);
      // volatile: every callback may change the interval (their declared effects hide it)
      Value *Lo = B.CreateLoad(IntPtr, B.CreateConstInBoundsGEP2_32(T, Base, 0, Store ? 2 : 0), /*isVolatile=*/true);
      Value *Hi = B.CreateLoad(IntPtr, B.CreateConstInBoundsGEP2_32(T, Base, 0, Store ? 3 : 1), /*isVolatile=*/true);
      Value *A = B.CreatePtrToInt(P, IntPtr);
      Value *Out = B.CreateOr(B.CreateICmpULT(A, Lo), B.CreateICmpUGT(B.CreateAdd(A, N), Hi));
      Call = Call ? B.CreateAnd(Call, Out) : Out;
    }
    // the call is the rare case: out of line, so the calls of a block sit together (the tracer
    // coalesces accesses whose calls are near each other as one loop body's)
    Instruction *T = Call ? SplitBlockAndInsertIfThen(Call, At, false, MDBuilder(F.getContext()).createUnlikelyBranchWeights())
                          : At;
    if (Call && ColdToEnd) ColdCalls.push_back(T->getParent());
    IRBuilder<> C(T);
    C.SetCurrentDebugLocation(Loc);
    C.CreateCall(CB, Args);
  }

  /// The bytes from one iteration's access at P to the next's in its innermost loop, when a constant more
  /// than its width (a field of an array of structs): its masked runs' pitch (QV_DESC_PITCH); else 0.
  unsigned pitchOf(Instruction *I, Value *P, unsigned Bytes) {
    Loop *L = LI.getLoopFor(I->getParent());
    auto *AR = L ? dyn_cast<SCEVAddRecExpr>(SE.getSCEV(P)) : nullptr;
    auto *St = AR && AR->getLoop() == L && AR->isAffine() ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE)) : nullptr;
    if (!St || St->getAPInt().isNegative() || St->getAPInt().ule(Bytes) || St->getAPInt().ugt(0xffff)) return 0;
    return (unsigned)St->getAPInt().getZExtValue();
  }

  /// Before At, for [P, P+N) of kind Store from a call site in a loop: when the bytes start where
  /// the site's cache (`qv_site` {next, lim, step}, thread-local, tracer/native/qv_omp_int.h) says
  /// and end by its limit, the program records them itself (next = end + step); otherwise checkedCall of
  /// `__quiver_range_load_c/store_c(p, bytes, desc, cache)`, after which the tracer hands the site
  /// the run that took the access (desc: width | indexed << 8).
  void cachedCall(Instruction *At, Value *Guard, Value *P, Value *N, bool Store, unsigned Desc, const DebugLoc &Loc) {
    Module &M = *F.getParent();
    StructType *SiteTy = StructType::get(IntPtr, IntPtr, IntPtr, IntPtr, ArrayType::get(IntPtr, QV_MASK_WORDS)); // qv_site
    auto *GV = new GlobalVariable(M, SiteTy, false, GlobalValue::InternalLinkage, Constant::getNullValue(SiteTy),
                                  "__quiver_site", nullptr, GlobalValue::GeneralDynamicTLSModel);
    if (Guard) {
      IRBuilder<> G(At);
      At = SplitBlockAndInsertIfThen(G.CreateNot(Guard), At, false);
    }
    IRBuilder<> B(At);
    Value *C = B.CreateThreadLocalAddress(GV);
    Value *NextP = B.CreateStructGEP(SiteTy, C, 0), *LimP = B.CreateStructGEP(SiteTy, C, 1);
    // volatile: the tracer moves and revokes the cache in any call
    Value *Next = B.CreateLoad(IntPtr, NextP, /*isVolatile=*/true);
    Value *Lim = B.CreateLoad(IntPtr, LimP, /*isVolatile=*/true);
    Value *A = B.CreatePtrToInt(P, IntPtr), *E = B.CreateAdd(A, N);
    Value *StepP = B.CreateStructGEP(SiteTy, C, 2);
    bool Maybe = Desc & QV_DESC_MAYBE;
    uint64_t Bytes = Maybe ? cast<ConstantInt>(N)->getZExtValue() : 0; // (a single access: its width)
    uint64_t Pitch = QV_DESC_PITCH(Desc);                                  // (slots that far apart, else Bytes)
    Value *Hit, *Off = nullptr, *BitsP = nullptr;
    if (!Maybe) {
      Hit = B.CreateAnd(B.CreateICmpEQ(A, Next), B.CreateICmpULE(E, Lim));
    } else { // a conditional access: at most `step` bytes past next, a whole number of accesses from base
      Value *Gap = B.CreateLoad(IntPtr, StepP, /*isVolatile=*/true);
      Value *Base = B.CreateLoad(IntPtr, B.CreateStructGEP(SiteTy, C, 3), /*isVolatile=*/true);
      Off = B.CreateSub(A, Base);
      Value *Whole = B.CreateICmpEQ(Pitch ? B.CreateURem(Off, ConstantInt::get(IntPtr, Pitch))
                                          : B.CreateAnd(Off, ConstantInt::get(IntPtr, Bytes - 1)),
                                    ConstantInt::get(IntPtr, 0));
      Hit = B.CreateAnd(B.CreateAnd(B.CreateICmpULE(B.CreateSub(A, Next), Gap), B.CreateICmpULE(E, Lim)), Whole);
    }
    Instruction *ThenT, *ElseT;
    SplitBlockAndInsertIfThenElse(Hit, At, &ThenT, &ElseT);
    IRBuilder<> Then(ThenT);
    if (!Maybe) {
      Value *Step = Then.CreateLoad(IntPtr, StepP, /*isVolatile=*/true);
      Then.CreateStore(Then.CreateAdd(E, Step), NextP, /*isVolatile=*/true);
    } else { // slot k = offset / width: bits[k / 64] |= 1 << k % 64 (mod QV_MASK_WORDS words: a contiguous
             // run's bits are not read), next = end
      Value *K = Pitch ? Then.CreateUDiv(Off, ConstantInt::get(IntPtr, Pitch))
                       : Then.CreateLShr(Off, ConstantInt::get(IntPtr, llvm::countr_zero(Bytes)));
      Value *Slot = Then.CreateAnd(K, ConstantInt::get(IntPtr, 63));
      Value *Word = Then.CreateAnd(Then.CreateLShr(K, ConstantInt::get(IntPtr, 6)), ConstantInt::get(IntPtr, QV_MASK_WORDS - 1));
      BitsP = Then.CreateGEP(SiteTy, C, {ConstantInt::get(Then.getInt32Ty(), 0), ConstantInt::get(Then.getInt32Ty(), 4), Word});
      Value *Bits = Then.CreateLoad(IntPtr, BitsP, /*isVolatile=*/true);
      Then.CreateStore(Then.CreateOr(Bits, Then.CreateShl(ConstantInt::get(IntPtr, 1), Slot)), BitsP, /*isVolatile=*/true);
      Then.CreateStore(E, NextP, /*isVolatile=*/true);
    }
    FunctionCallee CB = callback(M, Store ? Entry::range_store_c : Entry::range_load_c);
    checkedCall(ElseT, nullptr, CB, {P, N, ConstantInt::get(IntPtr, Desc), C}, P, N, Store, Loc);
  }

  /// -O0 lays blocks out in IR order (no block placement), so each call block would sit between
  /// the checks of its loop body and a body's calls would be further apart than the tracer's
  /// "one loop body" distance (QV_NEAR_PC): move them after the function's last block, where an
  /// optimised build's block placement puts them. Only instrumentation blocks move; the program's
  /// own blocks keep their order and code.
  void moveColdCalls() {
    for (BasicBlock *BB : ColdCalls) BB->moveAfter(&F.back());
    ColdCalls.clear();
  }

  /// A call that touches no memory the program sees (debug info, lifetime markers, assumptions, a
  /// call that neither reads nor writes memory): nothing between two accesses around it can change.
  static bool inertCall(const CallBase *CB) {
    if (isa<DbgInfoIntrinsic>(CB)) return true;
    if (auto *II = dyn_cast<IntrinsicInst>(CB))
      if (II->isLifetimeStartOrEnd() || II->getIntrinsicID() == Intrinsic::assume) return true;
    return !CB->mayReadOrWriteMemory();
  }

  /// Accesses of one kind that follow each other in a block, over adjacent bytes of one base (a
  /// fully unrolled loop: `s += a[0]; s += a[1]; ...`), with nothing between them that could
  /// touch those bytes the other way (for stores: nothing that touches memory at all): one block
  /// call `__quiver_block_load/store(p, bytes, width)` before the first reports them all.
  void blocks(std::vector<Site> &Sites) {
    std::map<Instruction *, Site *> SiteOf;
    std::set<BasicBlock *> BBs;
    for (Site &S : Sites)
      if (!S.Guard && S.I == S.A->I && S.A->Level < 0) {
        SiteOf[S.I] = &S;
        BBs.insert(S.I->getParent());
      }
    std::vector<std::vector<Site *>> Groups; // emitted after the scan (emitting splits blocks)
    for (BasicBlock *BB : BBs) {
      std::vector<Site *> G;
      auto close = [&] {
        if (G.size() > 1) Groups.push_back(G);
        G.clear();
      };
      for (Instruction &I : *BB) {
        auto It = SiteOf.find(&I);
        if (It != SiteOf.end()) {
          Site *S = It->second;
          if (!G.empty() && (S->A->Store != G[0]->A->Store || !offsetFrom(G[0], S))) close();
          G.push_back(S);
          continue;
        }
        if (G.empty()) continue;
        if (auto *CB = dyn_cast<CallBase>(&I)) {
          if (!inertCall(CB)) close();
          continue;
        }
        if (!I.mayReadOrWriteMemory()) continue;
        if (auto *LI = dyn_cast<LoadInst>(&I); LI && LI->isSimple() && !G[0]->A->Store) continue;
        close();
      }
      close();
    }
    for (auto &G : Groups) emitBlocks(G);
  }

  /// Accesses an earlier one of the same block already reports: the same address (pointer value)
  /// and bytes, nothing between them that could order another thread's accesses (a call that may
  /// touch memory, a fence, an atomic or volatile access), the earlier a store or both loads
  /// (`x[i]` read again after a store AA cannot separate from it: `v[i] = ...x[i]...; x[i] += v[i]`).
  /// The thread's earlier access covers the bytes in every analysis (same vector clock; a store
  /// makes them valid and is the stronger access), so the later one gets no callback, as TSan
  /// skips repeated accesses within a block. Both calls would run under the same guard or none.
  void dropRepeats(std::vector<Site> &Sites) {
    std::map<Instruction *, Site *> SiteOf;
    for (Site &S : Sites) SiteOf[S.I] = &S;
    std::set<Instruction *> Drop;
    std::set<BasicBlock *> BBs;
    for (Site &S : Sites) BBs.insert(S.I->getParent());
    for (BasicBlock *BB : BBs) {
      std::vector<Site *> Live;
      for (Instruction &I : *BB) {
        if (auto It = SiteOf.find(&I); It != SiteOf.end()) {
          Site *S = It->second;
          Value *P = getLoadStorePointerOperand(S->I);
          bool Covered = false;
          for (Site *E : Live)
            Covered |= getLoadStorePointerOperand(E->I) == P && E->A->Bytes == S->A->Bytes && E->Guard == S->Guard &&
                       (E->A->Store || !S->A->Store);
          if (Covered) Drop.insert(S->I);
          else Live.push_back(S);
          continue;
        }
        if (auto *CB = dyn_cast<CallBase>(&I)) {
          if (!inertCall(CB)) Live.clear();
          continue;
        }
        auto *LdI = dyn_cast<LoadInst>(&I);
        auto *StI = dyn_cast<StoreInst>(&I);
        if (isa<FenceInst>(I) || I.isAtomic() || (LdI && !LdI->isSimple()) || (StI && !StI->isSimple()))
          Live.clear();
      }
    }
    Sites.erase(std::remove_if(Sites.begin(), Sites.end(), [&](const Site &S) { return Drop.count(S.I) > 0; }),
                Sites.end());
  }

  /// Whether A's address depends on a value loaded in its loop (`p[col[k]]`, a gather or scatter
  /// through an index array): the tracer then looks for no affine-walk run shapes.
  bool indexed(const Access &A) {
    Loop *L = LI.getLoopFor(A.I->getParent());
    if (!L) return false;
    return SCEVExprContains(SE.getSCEV(A.Ptr), [&](const SCEV *X) {
      auto *U = dyn_cast<SCEVUnknown>(X);
      auto *Ld = U ? dyn_cast<LoadInst>(U->getValue()) : nullptr;
      // a load of a local variable (an -O0 induction variable or pointer in its stack slot) is
      // not an index the loop read from memory
      return Ld && L->contains(Ld) && !isa<AllocaInst>(Ld->getPointerOperand()->stripPointerCasts());
    });
  }

  /// A load/store of a local variable whose address is never taken: its stack slot is used only
  /// as the address of loads and stores, so no map clause can name it and no other code can
  /// reach it. -O0 keeps every local in such a slot (i, j, n, the pointers themselves); the
  /// tracer would drop every one of those accesses anyway (they are in no mapped range), so they
  /// get no callback. Optimised builds have promoted them to registers before the pass runs.
  static bool privateSlot(Value *P) {
    auto *AI = dyn_cast<AllocaInst>(P);
    if (!AI || !AI->isStaticAlloca()) return false;
    for (const Use &U : AI->uses()) {
      const User *Us = U.getUser();
      if (auto *SI = dyn_cast<StoreInst>(Us)) {
        if (SI->getPointerOperand() != AI || SI->isVolatile()) return false;
      } else if (auto *LI = dyn_cast<LoadInst>(Us)) {
        if (LI->isVolatile()) return false;
      } else if (auto *II = dyn_cast<IntrinsicInst>(Us)) {
        if (!II->isLifetimeStartOrEnd() && !isa<DbgInfoIntrinsic>(II)) return false;
      } else {
        return false;
      }
    }
    return true;
  }

  /// Byte offset of S's address from G's, when it is a constant.
  std::optional<int64_t> offsetFrom(Site *G, Site *S) {
    const SCEV *D = SE.getMinusSCEV(SE.getSCEV(S->A->Ptr), SE.getSCEV(G->A->Ptr));
    if (auto *C = dyn_cast<SCEVConstant>(D))
      if (C->getAPInt().getSignificantBits() <= 48) return C->getAPInt().getSExtValue();
    return std::nullopt;
  }

  /// One block call per chain of members whose bytes touch (at the chain's first member).
  void emitBlocks(std::vector<Site *> &G) {
    std::vector<std::pair<int64_t, size_t>> Off; // (offset, index in program order)
    for (size_t K = 0; K < G.size(); ++K) Off.push_back({*offsetFrom(G[0], G[K]), K});
    std::sort(Off.begin(), Off.end());
    Module &M = *F.getParent();
    bool Store = G[0]->A->Store;
    FunctionCallee CB = callback(M, Store ? Entry::block_store : Entry::block_load);
    for (size_t K = 0; K < Off.size();) {
      size_t J = K;
      int64_t Lo = Off[K].first, Hi = Lo + G[Off[K].second]->A->Bytes;
      unsigned Width = G[Off[K].second]->A->Bytes;
      size_t First = Off[K].second;
      while (J + 1 < Off.size() && Off[J + 1].first <= Hi) {
        ++J;
        Site *S = G[Off[J].second];
        Hi = std::max(Hi, Off[J].first + (int64_t)S->A->Bytes);
        if (S->A->Bytes != Width) Width = 0;
        First = std::min(First, Off[J].second);
      }
      if (J > K) {
        Instruction *At = G[First]->I;
        IRBuilder<> B(At);
        Value *P = B.CreateConstGEP1_64(B.getInt8Ty(), G[0]->A->Ptr, Lo);
        Value *N = ConstantInt::get(IntPtr, Hi - Lo);
        if (G[First]->InLoop && SiteCache)
          cachedCall(At, nullptr, P, N, Store, Width, At->getDebugLoc());
        else
          checkedCall(At, nullptr, CB, {P, N, ConstantInt::get(IntPtr, Width)}, P, N, Store, At->getDebugLoc());
        for (size_t X = K; X <= J; ++X) G[Off[X].second]->Done = true;
      }
      K = J + 1;
    }
  }

  /// The loads and stores that get a callback (not the instrumentation's own, `!nosanitize`).
  std::vector<Access> collect() {
    std::vector<Access> As;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        Value *P = getLoadStorePointerOperand(&I);
        if (!P || P->getType()->getPointerAddressSpace() != 0 || I.hasMetadata(LLVMContext::MD_nosanitize)) continue;
        Type *T = isa<LoadInst>(I) ? I.getType() : cast<StoreInst>(I).getValueOperand()->getType();
        int Idx = sizeIndex(DL, T);
        if (Idx < 0 || privateSlot(P)) continue;
        As.push_back(Access{&I, P, 1u << Idx, isa<StoreInst>(I), Idx, {}, {}, {}, {}, {}});
      }
    return As;
  }

  /// -O0: accesses whose range calls PromotedCopy emitted (guard: per access when it is false).
  std::map<Instruction *, Value *> Planned;
  // -O0: the accesses the copy found skipped on some iterations (Access::Maybe), by original
  std::set<Instruction *> Maybes;
  void adoptLoopRanges(Instrumenter &Other) {
    LoopRanges.insert(LoopRanges.end(), Other.LoopRanges.begin(), Other.LoopRanges.end());
    Other.LoopRanges.clear();
  }

  bool run(bool Hoist) {
    std::vector<Access> As = collect();
    if (As.empty()) return false;
    if (Hoist) {
      for (Access &A : As) {
        auto *LdI = dyn_cast<LoadInst>(A.I);
        auto *StI = dyn_cast<StoreInst>(A.I);
        if ((LdI && !LdI->isSimple()) || (StI && !StI->isSimple())) continue;
        levels(A);
        A.Level = (int)A.Loops.size() - 1;
      }
      settle(As);
    }
    LLVMContext &Ctx = F.getContext();
    Module &M = *F.getParent();
    Type *Void = Type::getVoidTy(Ctx), *Ptr = PointerType::getUnqual(Ctx);
    // ranges of single accesses of known width (the loop is not vectorised yet): a finding names the element
    FunctionCallee RLoad = callback(M, Entry::range_load_w);
    FunctionCallee RStore = callback(M, Entry::range_store_w);
    // 1. range calls (all SCEV expansion before the CFG changes below)
    std::map<Loop *, std::vector<Access *>> Groups;
    for (Access &A : As)
      if (A.Level >= 0) Groups[A.Loops[A.Level]].push_back(&A);
    for (auto &[L, H] : Groups) emitGroup(L, H, RLoad, RStore);
    // 2. a loop whose ranges depend on a run-time check runs in two versions: as compiled when
    //    the check holds (no callbacks: the vectoriser still sees a plain loop), and a copy with
    //    per-access callbacks when it does not. Inner such loops keep one version, guarded calls.
    std::vector<std::vector<Copy>> Copies(As.size());
    for (size_t K = 0; K < As.size(); ++K) {
      Access &A = As[K];
      if (auto It = Planned.find(A.I); It != Planned.end()) {
        Copies[K].push_back({A.I, It->second != nullptr, It->second});
        continue;
      }
      Copies[K].push_back({A.I, A.Level < 0 || A.Guard, A.Level >= 0 ? A.Guard : nullptr});
    }
    for (auto &[L, H] : Groups) {
      if (!H.front()->Guard || !L->getExitBlock()) continue;
      bool Inner = false;
      for (auto &[L2, H2] : Groups)
        Inner |= L2 != L && H2.front()->Guard && L2->contains(L);
      if (Inner) continue;
      ValueToValueMapTy VMap;
      if (!version(L, H.front()->Guard, VMap)) continue;
      for (size_t K = 0; K < As.size(); ++K) {
        Access &A = As[K];
        if (!L->contains(A.I->getParent())) continue;
        bool Mine = A.Level >= 0 && A.Loops[A.Level] == L;
        Copy C = Copies[K].front();
        auto *Clone = cast<Instruction>(VMap[A.I]);
        if (Mine) {
          Copies[K].front() = {A.I, false, nullptr};
          Copies[K].push_back({Clone, true, nullptr});
        } else {
          Value *G = C.Guard ? VMap.lookup(C.Guard) : nullptr;
          Copies[K].push_back({Clone, C.Call, G ? G : C.Guard});
        }
      }
    }
    // 3. per-access calls: always for the rest, when the run-time check failed for the guarded
    std::vector<Site> Sites;
    for (size_t K = 0; K < As.size(); ++K)
      for (Copy &C : Copies[K])
        if (C.Call) Sites.push_back({C.I, &As[K], C.Guard, LI.getLoopFor(C.I->getParent()) != nullptr});
    if (Hoist) {
      dropRepeats(Sites);
      blocks(Sites);
    }
    static const char *Sizes[] = {"1", "2", "4", "8", "16"};
    // a conditional access's desc bits: QV_DESC_MAYBE and its pitch (before any block is split: LoopInfo
    // knows the sites' blocks then)
    std::map<Instruction *, unsigned> MaybeDesc;
    // an access of one address over its loop that no call or atomic of the loop can order (`if (a[k] > t)
    // b[k] += s[i]`: s[i] read under the test): reported the first time in each run of the loop only (a
    // flag per thread and loop run); its other accesses are the same bytes again, by the same thread,
    // nothing between. Before, the call-site cache never took the same bytes twice: a call per access.
    std::map<Instruction *, Instruction *> Once; // -> the loop's preheader terminator
    for (Site &S : Sites)
      if (Loop *L = S.InLoop && !S.Done ? LI.getLoopFor(S.I->getParent()) : nullptr;
          L && L->getHeader()->getParent() == &F && L->getLoopPreheader() &&
          L->isLoopInvariant(getLoadStorePointerOperand(S.I)) && plain(L))
        Once[S.I] = L->getLoopPreheader()->getTerminator();
    for (Site &S : Sites)
      if (!S.Done && (S.A->Maybe || Maybes.count(S.A->I)))
        MaybeDesc[S.I] = QV_DESC_MAYBE | pitchOf(S.I, getLoadStorePointerOperand(S.I), S.A->Bytes) << QV_DESC_PITCH_SHIFT;
    for (Site &S : Sites) {
      if (S.Done) continue;
      Access &A = *S.A;
      Value *P = getLoadStorePointerOperand(S.I);
      Value *N = ConstantInt::get(IntPtr, A.Bytes);
      Instruction *At = S.I;
      if (auto O = Once.find(S.I); O != Once.end()) {
        IRBuilder<> E(&*F.getEntryBlock().getFirstInsertionPt());
        AllocaInst *Seen = E.CreateAlloca(E.getInt8Ty(), nullptr, "qv.once");
        new StoreInst(E.getInt8(0), Seen, O->second->getIterator());
        IRBuilder<> B(S.I);
        B.SetCurrentDebugLocation(S.I->getDebugLoc());
        At = SplitBlockAndInsertIfThen(B.CreateICmpEQ(B.CreateLoad(B.getInt8Ty(), Seen), B.getInt8(0)), S.I, false);
        IRBuilder<> T(At);
        T.CreateStore(T.getInt8(1), Seen);
      }
      if (S.InLoop && SiteCache) {
        auto It = MaybeDesc.find(S.I);
        cachedCall(At, S.Guard, P, N, A.Store,
                   A.Bytes | (indexed(A) ? QV_DESC_INDEXED : 0) | (It != MaybeDesc.end() ? It->second : 0),
                   S.I->getDebugLoc());
        continue;
      }
      std::string Name = std::string("__sanitizer_cov_") + (A.Store ? "store" : "load") + Sizes[A.Idx];
      FunctionCallee CB = callback(M, Name, FunctionType::get(Void, {Ptr}, false));
      checkedCall(At, S.Guard, CB, {P}, P, N, A.Store, S.I->getDebugLoc());
    }
    // 4. range calls inside an outer loop (once per inner loop) get a cache too
    for (auto &[CI, Store] : LoopRanges) {
      unsigned Desc = 0; // a range; `_w` ranges keep their access width (QV_RANGE_OF)
      if (CI->arg_size() == 3) Desc = (unsigned)cast<ConstantInt>(CI->getArgOperand(2))->getZExtValue() | QV_RANGE_OF;
      cachedCall(CI, nullptr, CI->getArgOperand(0), CI->getArgOperand(1), Store, Desc, CI->getDebugLoc());
      CI->eraseFromParent();
    }
    return true;
  }
};

/// -O0 ranges. At -O0 every local lives in a stack slot, so ScalarEvolution sees no induction
/// variable; promoting the slots (mem2reg) would change the program's code and line table. So the
/// analyses run on a copy of the function instead (same CFG): its slots promoted, the loads of
/// memory no loop iteration writes (`n` of a by-value capture, a bound in a type-punned slot)
/// moved to the preheaders, loops tested at the top. Its hoistable accesses are mapped back to
/// the original's instructions, and every value of a range call is rebuilt in the original at the
/// loop's preheader from what holds the same value there: an instruction of the original that
/// dominates it, a fresh load of a slot (the value mem2reg found reaching the preheader: probes,
/// below), or a fresh load of memory the loop does not write. An induction variable of an
/// enclosing loop (a recurrence `{s,+,t}` of it) is rebuilt from the slot whose value at the
/// preheader is a recurrence of that loop with step 1, -1 or t. The copy is deleted afterwards;
/// the original gains only the range code in preheaders and guards on the per-access calls.
struct NoFollowRAUW : ValueMapConfig<const Value *> {
  enum { FollowRAUW = false };
};

class PromotedCopy {
  Function &F;
  DominatorTree &DTF;
  const DataLayout &DL;
  Type *IntPtr;
  Function *C = nullptr;
  ValueToValueMapTy VMap;                                  // original -> copy
  ValueMap<const Value *, Value *, NoFollowRAUW> Back;     // copy -> original (only what survives)
  std::map<BasicBlock *, std::vector<std::pair<Value *, AllocaInst *>>> Slots; // copy preheader -> (value, slot)
  std::set<Instruction *> Moved;                           // loads moved to a preheader in the copy
  std::map<std::pair<const void *, Instruction *>, Value *> Made;
  std::unique_ptr<DominatorTree> DTC;
  std::unique_ptr<AssumptionCache> AC;
  std::unique_ptr<LoopInfo> LIC;
  std::unique_ptr<BasicAAResult> BAA;
  std::unique_ptr<AAResults> AA;
  std::unique_ptr<ScalarEvolution> SE;

public:
  PromotedCopy(Function &F, DominatorTree &DTF)
      : F(F), DTF(DTF), DL(F.getParent()->getDataLayout()), IntPtr(DL.getIntPtrType(F.getContext())) {}
  ~PromotedCopy() {
    Made.clear();
    SE.reset(); AA.reset(); BAA.reset(); LIC.reset(); AC.reset(); DTC.reset();
    Back.clear();
    if (C) C->eraseFromParent();
  }

  /// Copy, probe, promote, move invariant loads; false when there is nothing to analyse.
  bool build(LoopInfo &LIF, TargetLibraryInfo &TLI) {
    if (LIF.empty()) return false;
    C = CloneFunction(&F, VMap);
    C->setName(F.getName() + ".qv.copy");
    C->setLinkage(GlobalValue::InternalLinkage);
    for (auto KV : VMap) {
      const Value *O = KV.first;
      Value *V = KV.second;
      if (V && (isa<Instruction>(O) || isa<Argument>(O))) Back[V] = const_cast<Value *>(O);
      // the copy's own subprogram (with -g) must not reach the original: the range calls carry
      // the locations of the original's accesses
      if (auto *X = dyn_cast_or_null<Instruction>(V); X && isa<Instruction>(O))
        X->setDebugLoc(cast<Instruction>(O)->getDebugLoc());
    }
    DTC = std::make_unique<DominatorTree>(*C);
    AC = std::make_unique<AssumptionCache>(*C);
    std::vector<AllocaInst *> Allocas;
    for (Instruction &I : C->getEntryBlock())
      if (auto *AI = dyn_cast<AllocaInst>(&I); AI && isAllocaPromotable(AI)) Allocas.push_back(AI);
    // probes: the value of every promotable slot at the end of each preheader, kept alive by a call
    // that touches nothing, read after promotion
    Module &M = *F.getParent();
    FunctionCallee Probe = M.getOrInsertFunction("__quiver_probe", FunctionType::get(Type::getVoidTy(F.getContext()), true));
    if (auto *Fn = dyn_cast<Function>(Probe.getCallee())) Fn->setMemoryEffects(MemoryEffects::none());
    std::vector<std::tuple<BasicBlock *, CallInst *, std::vector<AllocaInst *>>> Probes;
    for (Loop *L : LIF.getLoopsInPreorder()) {
      BasicBlock *PH = L->getLoopPreheader();
      if (!PH || Allocas.empty()) continue;
      auto *PHC = cast<BasicBlock>(VMap[PH]);
      IRBuilder<> B(PHC->getTerminator());
      std::vector<Value *> Args;
      std::vector<AllocaInst *> Orig;
      for (AllocaInst *AI : Allocas) {
        Args.push_back(B.CreateLoad(AI->getAllocatedType(), AI));
        Orig.push_back(cast<AllocaInst>(Back.lookup(AI)));
      }
      Probes.emplace_back(PHC, B.CreateCall(Probe, Args), Orig);
    }
    PromoteMemToReg(Allocas, *DTC, AC.get());
    for (auto &[PHC, Call, Orig] : Probes) {
      for (unsigned K = 0; K < Orig.size(); ++K) {
        Value *V = Call->getArgOperand(K);
        if (!isa<UndefValue>(V)) Slots[PHC].push_back({V, Orig[K]});
      }
      Call->eraseFromParent();
    }
    if (auto *Fn = dyn_cast<Function>(Probe.getCallee()); Fn && Fn->use_empty()) Fn->eraseFromParent();
    foldShortCircuits();
    LIC = std::make_unique<LoopInfo>(*DTC);
    BAA = std::make_unique<BasicAAResult>(DL, *C, TLI, *AC, DTC.get());
    AA = std::make_unique<AAResults>(TLI);
    AA->addAAResult(*BAA);
    foldUnitDivisions();
    moveInvariantLoads();
    widenIndices();
    if (std::getenv("QUIVER_RANGE_DEBUG") && std::strcmp(std::getenv("QUIVER_RANGE_DEBUG"), "copy") == 0) errs() << *C;
    SE = std::make_unique<ScalarEvolution>(*C, TLI, *AC, *DTC, *LIC);
    return true;
  }

  /// `for (...; a && b; ...)` at -O0 (a tile loop's `i < ii + T && i < n`): the header branches on a
  /// to a block that computes b, and both reach a block E that branches on phi(false from the header,
  /// b from there), so the loop has no exit ScalarEvolution can count. In the copy (never run) the
  /// header computes `select a, b, false` (`a || b`: `select a, true, b`; `a && b && c`: the chain of
  /// term blocks, each branching to E on false) and branches on it: one exit at the top, counted as the
  /// umin of the terms'. The term blocks' instructions move into the header (they have no side
  /// effects; a load of program memory there is then no access of the copy, so it stays per access in
  /// the original).
  void foldShortCircuits() {
    LoopInfo LI0(*DTC);
    std::set<BasicBlock *> Probed;
    for (auto &[PHC, Vs] : Slots) Probed.insert(PHC);
    bool Changed = false;
    for (Loop *L : LI0.getLoopsInPreorder()) {
      BasicBlock *H = L->getHeader();
      auto *Br = dyn_cast<BranchInst>(H->getTerminator());
      if (!Br || !Br->isConditional() || Br->getSuccessor(0) == Br->getSuccessor(1)) continue;
      // K: the successor a term that passes goes on by (`&&`: 0, on true; `||`: 1, on false)
      unsigned K = L->contains(Br->getSuccessor(0)) && Br->getSuccessor(0)->getSinglePredecessor() == H ? 0 : 1;
      BasicBlock *E = Br->getSuccessor(1 - K), *X = H, *R = Br->getSuccessor(K);
      SmallVector<BasicBlock *, 4> Rs; // the blocks of the terms after the header's, in order
      SmallVector<Value *, 4> Terms{Br->getCondition()};
      bool Chain = false;
      while (Rs.size() < 8 && R != H && L->contains(R) && R->getSinglePredecessor() == X && !Probed.count(R)) {
        Rs.push_back(R);
        if (R->getSingleSuccessor() == E) {
          Chain = true;
          break;
        }
        auto *RB = dyn_cast<BranchInst>(R->getTerminator());
        if (!RB || !RB->isConditional() || RB->getSuccessor(1 - K) != E) break;
        Terms.push_back(RB->getCondition());
        X = R, R = RB->getSuccessor(K);
      }
      if (!Chain || E == H || !L->contains(E) || Probed.count(E) || pred_size(E) != Rs.size() + 1) continue;
      auto *EBr = dyn_cast<BranchInst>(E->getTerminator());
      auto *P = EBr && EBr->isConditional() ? dyn_cast<PHINode>(EBr->getCondition()) : nullptr;
      if (!P || P->getParent() != E || !P->hasOneUse() || &E->front() != P || P->getNextNode() != EBr ||
          EBr->getSuccessor(0) == EBr->getSuccessor(1))
        continue;
      bool Ok = true; // every edge into E but the last term's carries the outcome that ends the chain
      for (unsigned J = 0; J < Rs.size() && Ok; ++J) {
        auto *A0 = dyn_cast<ConstantInt>(P->getIncomingValueForBlock(J ? Rs[J - 1] : H));
        Ok = A0 && A0->getZExtValue() == K;
      }
      for (BasicBlock *Y : Rs)
        for (Instruction &I : *Y)
          Ok &= I.isTerminator() || isa<DbgInfoIntrinsic>(I) || (!I.mayHaveSideEffects() && !isa<PHINode>(I));
      if (!Ok) continue;
      Terms.push_back(P->getIncomingValueForBlock(Rs.back()));
      for (BasicBlock *Y : Rs)
        for (Instruction &I : make_early_inc_range(*Y))
          if (!I.isTerminator()) I.moveBefore(Br);
      IRBuilder<> Bld(Br);
      Value *S = Terms.back();
      for (size_t J = Terms.size() - 1; J-- > 0;)
        S = K == 0 ? Bld.CreateSelect(Terms[J], S, Bld.getFalse(), "qv.and") : Bld.CreateSelect(Terms[J], Bld.getTrue(), S, "qv.or");
      BasicBlock *T = EBr->getSuccessor(0), *F = EBr->getSuccessor(1);
      for (BasicBlock *Y : {T, F})
        for (PHINode &Q : Y->phis()) Q.setIncomingBlock(Q.getBasicBlockIndex(E), H);
      BranchInst::Create(T, F, S, Br->getIterator());
      Br->eraseFromParent();
      Rs.push_back(E);
      DeleteDeadBlocks(Rs);
      Changed = true;
      if (std::getenv("QUIVER_RANGE_DEBUG"))
        errs() << "quiver-range: folded a loop condition of " << Terms.size() << " terms (" << (K ? "||" : "&&") << ")\n";
    }
    if (Changed) DTC->recalculate(*C);
  }

  /// Loads of memory nothing in the loop may write, whose address is fixed in the loop, executed
  /// on entry (in the header) or safe to execute early: into the preheader, innermost loops first.
  void moveInvariantLoads() {
    auto Loops = LIC->getLoopsInPreorder();
    for (auto It = Loops.rbegin(); It != Loops.rend(); ++It) {
      Loop *L = *It;
      BasicBlock *PH = L->getLoopPreheader();
      if (!PH) continue;
      for (bool Again = true; Again;) {
        Again = false;
        for (BasicBlock *BB : L->blocks())
          for (Instruction &I : make_early_inc_range(*BB)) {
            if (!isa<LoadInst>(I) && !isa<PHINode>(I) && !I.isTerminator() && !I.mayReadOrWriteMemory() &&
                L->hasLoopInvariantOperands(&I) && isSafeToSpeculativelyExecute(&I)) { // `n / 4` of a bound
              I.moveBefore(PH->getTerminator());
              Moved.insert(&I);
              Again = true;
              continue;
            }
            auto *Ld = dyn_cast<LoadInst>(&I);
            if (!Ld || !Ld->isSimple() || !L->isLoopInvariant(Ld->getPointerOperand())) continue;
            if (BB != L->getHeader() &&
                !isSafeToLoadUnconditionally(Ld->getPointerOperand(), Ld->getType(), Ld->getAlign(), DL,
                                             PH->getTerminator(), AC.get(), DTC.get()))
              continue;
            MemoryLocation Loc = MemoryLocation::get(Ld);
            bool Written = false;
            for (BasicBlock *BB2 : L->blocks())
              for (Instruction &W : *BB2)
                Written |= W.mayWriteToMemory() && isModSet(AA->getModRefInfo(&W, Loc));
            if (Written) continue;
            Ld->moveBefore(PH->getTerminator());
            Moved.insert(Ld);
            Again = true;
          }
      }
    }
  }

  /// `x / 1` at -O0 (a collapsed loop's trip counts, `(n - 1 - 1) / 1`, one division per use) is x:
  /// ScalarEvolution keeps each sdiv opaque, so the uses of one divisor would be different values.
  void foldUnitDivisions() {
    std::vector<BinaryOperator *> Work;
    for (BasicBlock &BB : *C)
      for (Instruction &I : BB)
        if (auto *BO = dyn_cast<BinaryOperator>(&I))
          if ((BO->getOpcode() == Instruction::SDiv || BO->getOpcode() == Instruction::UDiv) &&
              isa<ConstantInt>(BO->getOperand(1)) && cast<ConstantInt>(BO->getOperand(1))->isOne())
            Work.push_back(BO);
    for (BinaryOperator *BO : Work) {
      Value *X = BO->getOperand(0);
      BO->replaceAllUsesWith(X);
      for (auto &[PHC, Vs] : Slots)
        for (auto &[V, Slot] : Vs)
          if (V == BO) V = X;
      BO->eraseFromParent();
    }
  }

  /// `(long)(i * n + j)` at -O0: the sign extension of int arithmetic marked nsw is that arithmetic
  /// on the extended operands (as InstCombine would rewrite it; an overflow would have made the
  /// index poison). ScalarEvolution cannot prove it in a loop tested at the top, so without this an
  /// int-indexed address is no recurrence.
  void widenIndices() {
    std::vector<SExtInst *> Work;
    for (BasicBlock &BB : *C)
      for (Instruction &I : BB)
        if (auto *S = dyn_cast<SExtInst>(&I)) Work.push_back(S);
    while (!Work.empty()) {
      SExtInst *S = Work.back();
      Work.pop_back();
      auto *Op = dyn_cast<BinaryOperator>(S->getOperand(0));
      if (!Op || !Op->hasNoSignedWrap() ||
          (Op->getOpcode() != Instruction::Add && Op->getOpcode() != Instruction::Sub && Op->getOpcode() != Instruction::Mul))
        continue;
      IRBuilder<> B(S);
      Value *X = B.CreateSExt(Op->getOperand(0), S->getType()), *Y = B.CreateSExt(Op->getOperand(1), S->getType());
      Value *W = B.CreateBinOp(Op->getOpcode(), X, Y);
      if (auto *WB = dyn_cast<BinaryOperator>(W)) WB->setHasNoSignedWrap(true); // (constants fold: `64 * 15` in a promoted copy)
      S->replaceAllUsesWith(W);
      for (auto &[PHC, Vs] : Slots) // a slot's value may be the extension itself
        for (auto &[V, Slot] : Vs)
          if (V == S) V = W;
      if (Moved.erase(S)) // in a preheader already: rebuilt from its operands, as S would have been
        for (Value *N : {W, X, Y})
          if (auto *NI = dyn_cast<Instruction>(N)) Moved.insert(NI);
      S->eraseFromParent();
      for (Value *E : {X, Y})
        if (auto *SE2 = dyn_cast<SExtInst>(E)) Work.push_back(SE2);
    }
  }

  LoopInfo &loops() { return *LIC; }
  DominatorTree &dom() { return *DTC; }
  ScalarEvolution &scev() { return *SE; }
  AAResults &aa() { return *AA; }

  /// The copy of an original access, when it is still the same load/store in the same block.
  Instruction *copyOf(Instruction *I) {
    auto *X = dyn_cast_or_null<Instruction>(VMap.lookup(I));
    if (!X || Back.lookup(X) != I || X->getParent() != VMap.lookup(I->getParent()) || Moved.count(X)) return nullptr;
    return X;
  }
  Instruction *original(Instruction *X) { return dyn_cast_or_null<Instruction>(Back.lookup(X)); }

  /// V (a value of the copy, available at the copy's point At) rebuilt in the original before
  /// original(At). Emit false: only whether it can be (non-null when it can).
  Value *value(Value *V, Instruction *At, bool Emit) {
    if (isa<UndefValue>(V)) return nullptr;
    if (isa<Constant>(V)) return V;
    Instruction *Out = original(At);
    if (!Out) return nullptr;
    if (isa<Argument>(V)) return Back.lookup(V);
    auto *I = dyn_cast<Instruction>(V);
    if (!I) return nullptr;
    auto Key = std::make_pair((const void *)V, At);
    if (auto It = Made.find(Key); Emit && It != Made.end()) return It->second;
    Value *R = nullptr;
    if (Moved.count(I) && !isa<LoadInst>(I)) { // computed again from its operands
      if (!DTC->dominates(I, At)) return nullptr;
      SmallVector<Value *, 4> Ops;
      for (Value *Op : I->operands()) {
        Ops.push_back(value(Op, At, Emit));
        if (!Ops.back()) return nullptr;
      }
      if (!Emit) return I;
      Instruction *X = I->clone();
      for (unsigned K = 0; K < Ops.size(); ++K) X->setOperand(K, Ops[K]);
      X->insertBefore(Out);
      R = fresh(X);
    } else if (Moved.count(I)) {
      auto *Ld = cast<LoadInst>(I);
      Value *P = DTC->dominates(I, At) ? value(Ld->getPointerOperand(), At, Emit) : nullptr;
      if (P && !Emit) return P;
      if (P) R = fresh(new LoadInst(Ld->getType(), P, "qv.reload", false, Ld->getAlign(), Out->getIterator()));
    } else if (auto *O = dyn_cast_or_null<Instruction>(Back.lookup(I)); O && DTF.dominates(O, Out)) {
      R = O;
    } else {
      for (auto &[SV, Slot] : Slots[At->getParent()])
        if (SV == V) {
          if (!Emit) return V;
          R = fresh(new LoadInst(Slot->getAllocatedType(), Slot, "qv.slot", false, Slot->getAlign(), Out->getIterator()));
          break;
        }
    }
    if (R && Emit) Made[Key] = R;
    return R;
  }

  /// S (a SCEV of the copy) computed in the original before original(At).
  Value *expr(const SCEV *S, Instruction *At, bool Emit) {
    auto Key = std::make_pair((const void *)S, At);
    if (auto It = Made.find(Key); Emit && It != Made.end()) return It->second;
    Instruction *Out = original(At);
    if (!Out) return nullptr;
    IRBuilder<> B(Out);
    Value *R = nullptr;
    auto ops = [&](const SCEVNAryExpr *N, auto Combine) -> Value * {
      Value *Acc = nullptr;
      for (const SCEV *Op : N->operands()) {
        Value *V = Op->getType() == S->getType() ? expr(Op, At, Emit) : nullptr;
        if (!V) return nullptr;
        if (Emit) Acc = Acc ? Combine(Acc, V) : V;
      }
      return Emit ? Acc : (Value *)At;
    };
    switch (S->getSCEVType()) {
    case scConstant:
      R = cast<SCEVConstant>(S)->getValue();
      break;
    case scUnknown:
      return value(cast<SCEVUnknown>(S)->getValue(), At, Emit);
    case scPtrToInt: case scTruncate: case scZeroExtend: case scSignExtend: {
      auto *Cast = cast<SCEVCastExpr>(S);
      Value *V = expr(Cast->getOperand(), At, Emit);
      if (!V || !Emit) return V;
      Type *T = S->getType();
      R = isa<SCEVPtrToIntExpr>(S) ? B.CreatePtrToInt(V, T)
          : isa<SCEVTruncateExpr>(S) ? B.CreateTrunc(V, T)
          : isa<SCEVZeroExtendExpr>(S) ? B.CreateZExt(V, T) : B.CreateSExt(V, T);
      break;
    }
    case scAddExpr:
      if (S->getType()->isPointerTy()) return nullptr;
      R = ops(cast<SCEVNAryExpr>(S), [&](Value *X, Value *Y) { return B.CreateAdd(X, Y); });
      break;
    case scMulExpr:
      R = ops(cast<SCEVNAryExpr>(S), [&](Value *X, Value *Y) { return B.CreateMul(X, Y); });
      break;
    case scUMaxExpr: case scUMinExpr: case scSMaxExpr: case scSMinExpr: case scSequentialUMinExpr: {
      if (S->getType()->isPointerTy()) return nullptr;
      Intrinsic::ID ID = isa<SCEVUMaxExpr>(S) ? Intrinsic::umax
                         : isa<SCEVSMaxExpr>(S) ? Intrinsic::smax
                         : isa<SCEVSMinExpr>(S) ? Intrinsic::smin : Intrinsic::umin;
      R = ops(cast<SCEVNAryExpr>(S), [&](Value *X, Value *Y) { return B.CreateBinaryIntrinsic(ID, X, Y); });
      break;
    }
    case scUDivExpr: { // never a division by zero the program did not do: by a constant, or by umax(m, 1)
      auto *D = cast<SCEVUDivExpr>(S);
      auto *K = dyn_cast<SCEVConstant>(D->getRHS());
      auto *Mx = dyn_cast<SCEVUMaxExpr>(D->getRHS()); // (a collapsed loop's divisor, nestLevel)
      bool NonZero = K ? !K->isZero() : Mx && llvm::any_of(Mx->operands(), [](const SCEV *O) {
        auto *C = dyn_cast<SCEVConstant>(O);
        return C && !C->isZero();
      });
      Value *X = NonZero ? expr(D->getLHS(), At, Emit) : nullptr;
      Value *Y = X ? expr(D->getRHS(), At, Emit) : nullptr;
      if (!Y || !Emit) return Y;
      R = B.CreateUDiv(X, Y);
      break;
    }
    case scAddRecExpr:
      return recurrence(cast<SCEVAddRecExpr>(S), At, Emit);
    default:
      return nullptr;
    }
    if (R && Emit) Made[Key] = R;
    return R;
  }

private:
  Instruction *fresh(Instruction *I) { // the instrumentation's own: no callback (Instrumenter::collect)
    I->setMetadata(LLVMContext::MD_nosanitize, MDNode::get(I->getContext(), {}));
    I->setDebugLoc(I->getNextNode()->getDebugLoc());
    return I;
  }

  /// {s,+,t} of a loop around At: D + Q * (a slot's value at At), where the slot's value is a
  /// recurrence of the same loop with step t (Q = 1) or +-1 (Q = +-t) and D = S - Q * it.
  /// A loop At is not in (the bound `q < k` of a later loop, k counted by a `while` loop before it)
  /// works the same: a value the copy carries out of a loop is its value at the iteration that left it,
  /// the same iteration for every such value (at -O0 every value leaves through a stack slot: a
  /// header's phi when the header tests, the last body's value when the latch does), so `D + Q *
  /// slot` holds there too.
  Value *recurrence(const SCEVAddRecExpr *S, Instruction *At, bool Emit) {
    const Loop *L = S->getLoop();
    if (!S->isAffine() || S->getType()->isPointerTy()) return nullptr;
    Type *T = S->getType();
    const SCEV *Step = S->getStepRecurrence(*SE);
    for (auto &[V, Slot] : Slots[At->getParent()]) {
      Type *VT = V->getType();
      if (!SE->isSCEVable(VT)) continue;
      const SCEV *Base = SE->getSCEV(V);
      for (int Kind = 0; Kind < 3; ++Kind) { // as is / ptrtoint / truncated, sext, zext
        const SCEV *E = nullptr;
        if (VT->isPointerTy()) {
          if (Kind || DL.getIntPtrType(VT) != T) continue;
          E = SE->getPtrToIntExpr(Base, T);
        } else if (!VT->isIntegerTy()) {
          continue;
        } else if (VT->getIntegerBitWidth() > T->getIntegerBitWidth()) { // `(int)` of a collapsed loop's i64 iv
          if (Kind) continue;
          E = SE->getTruncateExpr(Base, T);
        } else if (VT == T) {
          if (Kind) continue;
          E = Base;
        } else {
          if (!Kind) continue;
          E = Kind == 1 ? SE->getSignExtendExpr(Base, T) : SE->getZeroExtendExpr(Base, T);
        }
        auto *ER = dyn_cast<SCEVAddRecExpr>(E);
        if (!ER || ER->getLoop() != L || !ER->isAffine()) continue;
        const SCEV *ES = ER->getStepRecurrence(*SE), *Q = nullptr;
        if (ES == Step) Q = SE->getOne(T);
        else if (ES->isOne()) Q = Step;
        else if (ES->isAllOnesValue()) Q = SE->getNegativeSCEV(Step);
        else if (auto *M = dyn_cast<SCEVMulExpr>(Step)) { // a loop whose counter steps by a run-time stride
          SmallVector<const SCEV *, 4> Rest;           // (schedule(static, 1): i += the team's threads)
          bool Found = false;
          for (const SCEV *Op : M->operands()) {
            if (!Found && Op == ES) Found = true;
            else Rest.push_back(Op);
          }
          if (Found && !Rest.empty()) Q = Rest.size() == 1 ? Rest.front() : SE->getMulExpr(Rest);
        }
        if (!Q) continue;
        const SCEV *D = SE->getMinusSCEV(S, SE->getMulExpr(Q, ER));
        if (!SE->isLoopInvariant(D, L)) continue;
        Value *DV = expr(D, At, Emit), *QV = DV ? expr(Q, At, Emit) : nullptr;
        Value *SV = QV ? value(V, At, Emit) : nullptr;
        if (!SV) continue;
        if (!Emit) return SV;
        IRBuilder<> B(original(At));
        Value *X = VT->isPointerTy() ? B.CreatePtrToInt(SV, T)
                   : VT == T ? SV
                   : VT->getIntegerBitWidth() > T->getIntegerBitWidth() ? B.CreateTrunc(SV, T)
                   : Kind == 1 ? B.CreateSExt(SV, T) : B.CreateZExt(SV, T);
        Value *R = B.CreateAdd(DV, B.CreateMul(QV, X));
        Made[{S, At}] = R;
        return R;
      }
    }
    return nullptr;
  }
};

/// -O0: range calls through a PromotedCopy of F, emitted into F; IF then gives the covered
/// accesses no callback (or one guarded by the run-time check) and the rest their usual one.
void hoistThroughCopy(Function &F, LoopInfo &LIF, DominatorTree &DTF, TargetLibraryInfo &TLI, Instrumenter &IF) {
  std::vector<Access> Orig = IF.collect();
  bool InLoop = false; // (a function without an access in a loop needs no copy)
  for (Access &O : Orig) InLoop |= LIF.getLoopFor(O.I->getParent()) != nullptr;
  PromotedCopy P(F, DTF);
  if (!InLoop || !P.build(LIF, TLI)) return;
  std::vector<Access> As;
  for (Access &O : Orig) {
    auto *LdI = dyn_cast<LoadInst>(O.I);
    auto *StI = dyn_cast<StoreInst>(O.I);
    if ((LdI && !LdI->isSimple()) || (StI && !StI->isSimple())) continue;
    Instruction *X = P.copyOf(O.I);
    if (!X) continue;
    As.push_back(Access{X, getLoadStorePointerOperand(X), O.Bytes, O.Store, O.Idx, {}, {}, {}, {}, {}});
  }
  if (As.empty()) return;
  Function &Copy = *As.front().I->getFunction();
  Instrumenter IC(Copy, P.loops(), P.dom(), P.scev(), P.aa());
  IC.TopTested = true;
  IC.SiteCache = IF.SiteCache;
  for (Access &A : As) {
    IC.levels(A);
    A.Level = (int)A.Loops.size() - 1;
    // only as far out as every value of the call can be rebuilt in F
    for (int J = 0; J <= A.Level; ++J) {
      Instruction *T = A.Loops[J]->getLoopPreheader()->getTerminator();
      bool Ok = P.expr(A.Lo[J], T, false) && P.expr(A.Hi[J], T, false);
      for (auto &[V, Pol] : A.Conds[J]) Ok = Ok && P.value(V, T, false);
      for (int K = 1; K <= J; ++K)
        Ok = Ok && (!A.Tile[K].first || (P.expr(A.Tile[K].first, T, false) && P.expr(A.Tile[K].second, T, false)));
      for (const SCEV *X : A.Strided[J]) Ok = Ok && (!X || P.expr(X, T, false));
      for (auto &[W, WLo, WHi] : A.InRange[J]) Ok = Ok && P.expr(W, T, false) && P.expr(WLo, T, false) && P.expr(WHi, T, false);
      if (A.Nest && J == (int)A.Loops.size() - 1) { // a collapsed loop's planes and their checks
        const Access::NestLevel &N = *A.Nest;
        for (const SCEV *X : {N.P00, N.RStride, N.QStride, N.M, N.RLo, N.Count, N.RowBytes, N.JStride, N.M2, N.FanStride})
          Ok = Ok && (!X || P.expr(X, T, false));
        for (auto &[X, Y] : N.Eq) Ok = Ok && P.expr(X, T, false) && P.expr(Y, T, false);
        for (auto &[X, Y] : N.SGe) Ok = Ok && P.expr(X, T, false) && P.expr(Y, T, false);
      }
      if (auto Bx = A.Box.find(J); Ok && Bx != A.Box.end()) { // a box (the inner level): else the level's range
        const Access::BoxLevel &X = Bx->second;
        bool BoxOk = P.expr(X.P, T, false) && P.expr(X.RowBytes, T, false) && (!X.Ran || P.expr(X.Ran, T, false));
        for (auto &[St, N] : X.Dims) BoxOk = BoxOk && P.expr(St, T, false) && P.expr(N, T, false);
        if (!BoxOk) A.Box.erase(Bx);
      }
      if (!Ok) {
        if (std::getenv("QUIVER_RANGE_DEBUG")) errs() << "quiver-range: " << *A.I << " level " << J << " not rebuilt\n";
        A.Level = J - 1;
        break;
      }
    }
  }
  IC.settle(As);
  IC.Place = [&](Instruction *At) { return P.original(At); };
  IC.Rebuild = [&](const SCEV *S, Instruction *At) { return P.expr(S, At, true); };
  IC.RebuildValue = [&](Value *V, Instruction *At) { return P.value(V, At, true); };
  Module &M = *F.getParent();
  // ranges of single accesses of known width: a finding still names the element, as per access
  FunctionCallee RLoad = callback(M, Entry::range_load_w);
  FunctionCallee RStore = callback(M, Entry::range_store_w);
  std::map<Loop *, std::vector<Access *>> Groups;
  for (Access &A : As)
    if (A.Level >= 0) Groups[A.Loops[A.Level]].push_back(&A);
  for (auto &[L, H] : Groups) IC.emitGroup(L, H, RLoad, RStore);
  for (Access &A : As)
    if (A.Level >= 0) IF.Planned[P.original(A.I)] = A.Guard;
  for (Access &A : As)
    if (A.Maybe) IF.Maybes.insert(P.original(A.I));
  IF.adoptLoopRanges(IC);
}

/// The accesses the Instrumenter above does not see, one range call each (same debug location):
/// memset/memcpy/memmove intrinsics the backend expands into plain moves (constant length up to
/// kInlineMemBytes, or an `.inline` variant; longer ones become libc calls the tracer interposes),
/// loads and stores whose size is not 1, 2, 4, 8 or 16 bytes (long double, 32/64-byte vectors,
/// odd-sized aggregates), and masked or gathered vector accesses (one call per lane, 0 bytes when
/// the lane is off). Run after the Instrumenter, so its loop analysis is unchanged.
constexpr uint64_t kInlineMemBytes = 512;

bool instrumentOutliers(Function &F) {
  const DataLayout &DL = F.getParent()->getDataLayout();
  LLVMContext &Ctx = F.getContext();
  Type *IntPtr = DL.getIntPtrType(Ctx), *Ptr = PointerType::getUnqual(Ctx);
  Module &M = *F.getParent();
  FunctionCallee Load = callback(M, Entry::range_load);
  FunctionCallee Store = callback(M, Entry::range_store);
  std::vector<Instruction *> Work;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB) {
      if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
        auto *Len = dyn_cast<ConstantInt>(MI->getLength());
        bool Inline = isa<MemCpyInlineInst>(MI) || isa<MemSetInlineInst>(MI);
        if (MI->isVolatile() || (!Inline && (!Len || Len->getZExtValue() > kInlineMemBytes))) continue;
        Work.push_back(&I);
      } else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
        switch (II->getIntrinsicID()) {
        case Intrinsic::masked_load: case Intrinsic::masked_store:
        case Intrinsic::masked_gather: case Intrinsic::masked_scatter:
          Work.push_back(&I);
          break;
        default:
          break;
        }
      } else if (Value *P = getLoadStorePointerOperand(&I)) {
        Type *T = isa<LoadInst>(I) ? I.getType() : cast<StoreInst>(I).getValueOperand()->getType();
        if (P->getType()->getPointerAddressSpace() == 0 && !T->isScalableTy() && sizeIndex(DL, T) < 0 &&
            DL.getTypeStoreSize(T).getFixedValue() > 0)
          Work.push_back(&I);
      }
    }
  for (Instruction *I : Work) {
    IRBuilder<> B(I);
    B.SetCurrentDebugLocation(I->getDebugLoc());
    auto Call = [&](bool W, Value *P, Value *N) {
      B.CreateCall(W ? Store : Load, {B.CreatePointerCast(P, Ptr), B.CreateZExtOrTrunc(N, IntPtr)});
    };
    if (auto *MI = dyn_cast<MemIntrinsic>(I)) {
      if (auto *MT = dyn_cast<MemTransferInst>(MI)) Call(false, MT->getSource(), MI->getLength());
      Call(true, MI->getDest(), MI->getLength());
      continue;
    }
    if (auto *II = dyn_cast<IntrinsicInst>(I)) {
      Intrinsic::ID ID = II->getIntrinsicID();
      bool W = ID == Intrinsic::masked_store || ID == Intrinsic::masked_scatter;
      bool Gather = ID == Intrinsic::masked_gather || ID == Intrinsic::masked_scatter;
      auto *VT = dyn_cast<FixedVectorType>(W ? II->getArgOperand(0)->getType() : II->getType());
      if (!VT) continue;
      Value *Base = II->getArgOperand(W ? 1 : 0);
      Value *Mask = II->getArgOperand(W ? 3 : 2);
      uint64_t Elem = DL.getTypeStoreSize(VT->getElementType()).getFixedValue();
      for (unsigned L = 0; L < VT->getNumElements(); ++L) {
        Value *P = Gather ? B.CreateExtractElement(Base, L) : B.CreateConstGEP1_64(VT->getElementType(), Base, L);
        Value *On = B.CreateExtractElement(Mask, L);
        Call(W, P, B.CreateSelect(On, ConstantInt::get(IntPtr, Elem), ConstantInt::get(IntPtr, 0)));
      }
      continue;
    }
    Type *T = isa<LoadInst>(I) ? I->getType() : cast<StoreInst>(I)->getValueOperand()->getType();
    Call(isa<StoreInst>(I), getLoadStorePointerOperand(I), ConstantInt::get(IntPtr, DL.getTypeStoreSize(T)));
  }
  return !Work.empty();
}

/// Atomic accesses are also synchronisation (OpenMP 5.2 flush-sync: release/acquire through one
/// flag): `__quiver_atomic(p, bytes, desc)` before each atomic write (store, atomicrmw, cmpxchg) and
/// after each atomic read (load, atomicrmw, cmpxchg), desc = 1 read | 2 write | LLVM AtomicOrdering
/// << 4. Its own plain function (no memory attributes): the call stays on its side of the atomic.
bool instrumentAtomics(Function &F) {
  Module &M = *F.getParent();
  const DataLayout &DL = M.getDataLayout();
  LLVMContext &C = M.getContext();
  Type *IntPtr = DL.getIntPtrType(C), *Ptr = PointerType::get(C, 0);
  SmallVector<Instruction *, 8> Work;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB)
      if (I.isAtomic() && !isa<FenceInst>(I)) Work.push_back(&I);
  if (Work.empty()) return false;
  FunctionCallee Atomic = entryDecl(M, Entry::atomic);
  for (Instruction *I : Work) {
    Value *P = nullptr;
    Type *T = nullptr;
    AtomicOrdering O = AtomicOrdering::NotAtomic;
    bool Rd = false, Wr = false;
    if (auto *L = dyn_cast<LoadInst>(I)) P = L->getPointerOperand(), T = L->getType(), O = L->getOrdering(), Rd = true;
    else if (auto *S = dyn_cast<StoreInst>(I))
      P = S->getPointerOperand(), T = S->getValueOperand()->getType(), O = S->getOrdering(), Wr = true;
    else if (auto *R = dyn_cast<AtomicRMWInst>(I))
      P = R->getPointerOperand(), T = R->getValOperand()->getType(), O = R->getOrdering(), Rd = Wr = true;
    else if (auto *X = dyn_cast<AtomicCmpXchgInst>(I))
      P = X->getPointerOperand(), T = X->getNewValOperand()->getType(), O = X->getSuccessOrdering(), Rd = Wr = true;
    if (!P || P->getType()->getPointerAddressSpace() != 0 || T->isScalableTy()) continue;
    uint64_t Bytes = DL.getTypeStoreSize(T).getFixedValue();
    auto Emit = [&](IRBuilder<> &B, unsigned Kind) {
      B.SetCurrentDebugLocation(I->getDebugLoc());
      B.CreateCall(Atomic, {B.CreatePointerCast(P, Ptr), ConstantInt::get(IntPtr, Bytes),
                            ConstantInt::get(IntPtr, Kind | (unsigned(O) << 4))});
    };
    if (Wr) {
      IRBuilder<> B(I);
      Emit(B, 2);
    }
    if (Rd) {
      IRBuilder<> B(I->getNextNode());
      Emit(B, 1);
    }
  }
  return true;
}

struct QuiverRangePass : PassInfoMixin<QuiverRangePass> {
  bool Hoist;
  explicit QuiverRangePass(bool Hoist) : Hoist(Hoist) {}
  static bool isRequired() { return true; } // runs on optnone (-O0) functions too

  PreservedAnalyses run(Function &F, FunctionAnalysisManager &FAM) {
    if (skipFunction(F)) return PreservedAnalyses::all();
    const char *Off = std::getenv("QUIVER_NO_RANGE_PASS");
    bool Plain = Off && *Off && std::strcmp(Off, "0") != 0;
    bool H = Hoist && !F.hasOptNone() && !Plain;
    auto &LI = FAM.getResult<LoopAnalysis>(F);
    auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
    auto &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
    auto &AA = FAM.getResult<AAManager>(F);
    Instrumenter I(F, LI, DT, SE, AA);
    const char *NoSkip = std::getenv("QUIVER_NO_INLINE_SKIP");
    // -O0 too: the inline skip and call-site caches are instrumentation code only (the program's
    // own code and line table are left as they are); QUIVER_NO_RANGE_PASS: plain callbacks
    I.InlineSkip = !Plain && !(NoSkip && *NoSkip && std::strcmp(NoSkip, "0") != 0);
    I.SiteCache = I.InlineSkip;
    I.ColdToEnd = F.hasOptNone();
    // -O0: ranges through an analysis-only promoted copy (QUIVER_NO_O0_RANGES=1: none)
    const char *NoO0 = std::getenv("QUIVER_NO_O0_RANGES");
    if (F.hasOptNone() && !Plain && !(NoO0 && *NoO0 && std::strcmp(NoO0, "0") != 0))
      hoistThroughCopy(F, LI, DT, FAM.getResult<TargetLibraryAnalysis>(F), I);
    bool Changed = I.run(H);
    I.moveColdCalls();
    Changed |= instrumentOutliers(F);
    Changed |= instrumentAtomics(F);
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

} // namespace

// Optimised builds: at the vectoriser's start, so loops are rotated and simplified but not yet
// split into vector body and remainder (a nest is still a nest); the loop the program normally
// runs has no callback left, so the vectoriser still vectorises it. -O0: at the end, ranges through
// a promoted copy (hoistThroughCopy), per access for the rest.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "quiver-range", "1", [](PassBuilder &PB) {
            // (the -O0 pipeline invokes every extension point too: instrument there only once)
            PB.registerVectorizerStartEPCallback([](FunctionPassManager &FPM, OptimizationLevel Level) {
              if (Level == OptimizationLevel::O0) return;
              FPM.addPass(LoopSimplifyPass());
              FPM.addPass(QuiverRangePass(true));
            });
            PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel Level) {
              if (Level == OptimizationLevel::O0)
                MPM.addPass(createModuleToFunctionPassAdaptor(QuiverRangePass(false)));
            });
          }};
}
