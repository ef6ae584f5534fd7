// The result types of the standard library's common methods, for chains
// through std types (`opt.map(|m| m.start())`, `v.iter().filter(…).next()`,
// `s.trim().chars()`): std is not in the lake, so what rustc would read from
// its signatures is written here for the methods code calls most. An
// iterator is modelled as `std::slice::Iter<Item>` whatever adaptor made it;
// what `Item` is, is all later steps need.
//
// Invariant: a table with the few rules it needs; null = not known (the
// caller then says the receiver type is unknown). Pure.
import type { Res } from './names.ts';
import { stdKey } from './std.ts';
import { UNKNOWN, type Ty } from './types.ts';

export const ITER = 'std::slice::Iter';

/** What a method's closure argument gives, and the argument itself, computed on demand. */
export interface StdCallArgs {
  /** The type the closure passed as first argument returns (its body's type, with its parameters bound). */
  closureRet(): Ty;
  /** The first argument's type. */
  arg0(): Ty;
}

export function stdTy(path: string, args: Ty[] = []): Ty {
  const res: Res = { ext: path, krate: null, depName: null };
  return { k: 'adt', res, args };
}

const STR: Ty = { k: 'ref', mut: false, of: { k: 'prim', name: 'str' } };
const STRING = (): Ty => stdTy('std::string::String');
const USIZE: Ty = { k: 'prim', name: 'usize' };
const BOOL: Ty = { k: 'prim', name: 'bool' };
const opt = (t: Ty): Ty => stdTy('std::option::Option', [t]);
const res = (t: Ty, e: Ty = UNKNOWN('error type')): Ty => stdTy('std::result::Result', [t, e]);
const iter = (t: Ty): Ty => stdTy(ITER, [t]);

/** The std key of a path type (`Option`, `Vec`, …), or null. */
export function keyOf(t: Ty): string | null {
  if (t.k !== 'adt' || !('ext' in t.res) || t.res.krate !== null) return null;
  if (t.res.ext === ITER) return 'Iter';
  return stdKey(t.res.ext);
}

/** Iterator adaptors that keep the item. */
const SAME_ITEM = new Set([
  'filter', 'skip', 'take', 'rev', 'peekable', 'chain', 'step_by', 'fuse', 'skip_while', 'take_while', 'inspect', 'cycle',
  'by_ref', 'into_iter', 'iter',
]);
/** Iterator consumers that give one item. */
const ONE_ITEM = new Set(['next', 'last', 'nth', 'find', 'max', 'min', 'max_by_key', 'min_by_key', 'max_by', 'min_by', 'next_back', 'peek', 'reduce']);

/** The item type of iterating a std type, or null when it is not one. */
export function stdItem(t: Ty): Ty | null {
  if (t.k === 'slice') return t.of;
  if (t.k === 'prim' && t.name === 'str') return { k: 'prim', name: 'char' };
  const k = keyOf(t);
  if (!k || t.k !== 'adt') return null;
  switch (k) {
    // a Result iterates its Ok value (`flat_map(|a| parse(a))` over `Result<Vec<T>, E>`)
    case 'Vec': case 'VecDeque': case 'Option': case 'Result': case 'Iter': return t.args[0] ?? UNKNOWN('item');
    case 'HashMap': case 'BTreeMap': return { k: 'tuple', of: [t.args[0] ?? UNKNOWN('key'), t.args[1] ?? UNKNOWN('value')] };
    default: return null;
  }
}

/** The parameter type of a closure passed to a std method (`opt.map(|x| …)`: x is the payload), or null. */
export function stdClosureParam(recv: Ty, method: string, arg: number, param: number): Ty | null {
  const k = keyOf(recv);
  const a0 = recv.k === 'adt' ? recv.args[0] ?? UNKNOWN('payload') : UNKNOWN('payload');
  const ref = (t: Ty): Ty => ({ k: 'ref', mut: false, of: t });
  if (k === 'Option') {
    if (['map', 'and_then', 'filter', 'is_some_and', 'inspect', 'map_or', 'map_or_else', 'take_if', 'is_none_or'].includes(method)) {
      const lastArg = method === 'map_or' || method === 'map_or_else' ? 1 : 0;
      if (arg !== lastArg || param !== 0) return null;
      return method === 'filter' || method === 'inspect' ? ref(a0) : a0;
    }
    return null;
  }
  if (k === 'Result') {
    const e = recv.k === 'adt' ? recv.args[1] ?? UNKNOWN('error') : UNKNOWN('error');
    if (['map', 'and_then', 'inspect', 'is_ok_and'].includes(method) && param === 0) return a0;
    if (['map_err', 'or_else', 'unwrap_or_else', 'inspect_err', 'is_err_and'].includes(method) && param === 0) return e;
    return null;
  }
  const item = stdItem(recv);
  if (!item) return null;
  if (['map', 'for_each', 'filter_map', 'flat_map', 'any', 'all', 'position', 'map_while', 'partition', 'max_by_key', 'min_by_key', 'sum_by', 'try_for_each'].includes(method)) {
    return param === 0 ? (method === 'max_by_key' || method === 'min_by_key' ? ref(item) : item) : null;
  }
  if (['filter', 'find', 'take_while', 'skip_while', 'inspect', 'find_map'].includes(method)) return param === 0 ? ref(item) : null;
  if ((method === 'fold' || method === 'try_fold') && arg === 1) return param === 1 ? item : null;
  if ((method === 'sort_by' || method === 'max_by' || method === 'min_by')) return ref(item);
  if (method === 'sort_by_key' || method === 'retain') return ref(item);
  return null;
}

/** The result type of `recv.name(…)` for a std receiver (one autoderef step), or null when not known. */
export function stdMethod(recv: Ty, name: string, args: StdCallArgs): Ty | null {
  if (name === 'clone' || (name === 'to_owned' && !(recv.k === 'prim' && recv.name === 'str'))) return recv;
  if (name === 'to_string' || name === 'to_owned' || name === 'to_uppercase' || name === 'to_lowercase' || name === 'replace' || name === 'repeat') return STRING();
  if (name === 'len' || name === 'count' || name === 'capacity') return USIZE;
  if (name === 'is_empty' || name === 'is_some' || name === 'is_none' || name === 'is_ok' || name === 'is_err' || name === 'contains' || name === 'starts_with' || name === 'ends_with') return BOOL;
  const k = keyOf(recv);
  const a0 = recv.k === 'adt' ? recv.args[0] ?? UNKNOWN('type argument') : UNKNOWN('type argument');
  const a1 = recv.k === 'adt' ? recv.args[1] ?? UNKNOWN('type argument') : UNKNOWN('type argument');
  if (k === 'Option') {
    switch (name) {
      case 'unwrap': case 'expect': case 'unwrap_or': case 'unwrap_or_default': case 'unwrap_or_else': case 'unwrap_unchecked':
      case 'get_or_insert': case 'get_or_insert_with': case 'insert':
        return a0;
      case 'as_ref': case 'as_mut': case 'take': case 'cloned': case 'copied': case 'or': case 'or_else': case 'filter':
      case 'as_deref': case 'as_deref_mut': case 'replace': case 'xor': case 'inspect':
        return recv;
      case 'map': return opt(args.closureRet());
      case 'and_then': return args.closureRet();
      case 'ok_or': case 'ok_or_else': return res(a0);
      case 'iter': case 'iter_mut': case 'into_iter': return iter(a0);
      case 'map_or': case 'map_or_else': return UNKNOWN('map_or result');
      default: return null;
    }
  }
  if (k === 'Result') {
    switch (name) {
      case 'unwrap': case 'expect': case 'unwrap_or': case 'unwrap_or_default': case 'unwrap_or_else': return a0;
      case 'unwrap_err': case 'expect_err': return a1;
      case 'as_ref': case 'as_mut': case 'or_else': case 'inspect': case 'inspect_err': return recv;
      case 'ok': return opt(a0);
      case 'err': return opt(a1);
      case 'map': return res(args.closureRet(), a1);
      case 'map_err': return res(a0);
      case 'and_then': return args.closureRet();
      case 'iter': case 'into_iter': return iter(a0);
      default: return null;
    }
  }
  if (k === 'Vec' || k === 'VecDeque' || recv.k === 'slice') {
    const elem = recv.k === 'slice' ? recv.of : a0;
    switch (name) {
      case 'first': case 'last': case 'get': case 'get_mut': case 'pop': case 'first_mut': case 'last_mut': case 'front': case 'back':
      case 'pop_front': case 'pop_back': case 'front_mut': case 'back_mut': case 'binary_search':
        return name === 'binary_search' ? res(USIZE, USIZE) : opt(elem);
      case 'remove': case 'swap_remove': return k === 'VecDeque' ? opt(elem) : elem;
      case 'get_unchecked': case 'get_unchecked_mut': return { k: 'ref', mut: name.endsWith('_mut'), of: elem };
      case 'iter': case 'iter_mut': case 'into_iter': case 'drain': return iter(elem);
      case 'as_slice': case 'as_mut_slice': return { k: 'slice', of: elem };
      case 'to_vec': return stdTy('std::vec::Vec', [elem]);
      case 'split_at': case 'split_at_mut': return { k: 'tuple', of: [{ k: 'slice', of: elem }, { k: 'slice', of: elem }] };
      case 'split_first': case 'split_last': case 'split_first_mut': case 'split_last_mut':
        return opt({ k: 'tuple', of: [{ k: 'ref', mut: name.endsWith('_mut'), of: elem }, { k: 'ref', mut: name.endsWith('_mut'), of: { k: 'slice', of: elem } }] });
      case 'chunks': case 'windows': case 'chunks_exact': case 'split': return iter({ k: 'slice', of: elem });
      default: return null;
    }
  }
  if (k === 'RefCell') {
    // guards that deref to the cell's value
    if (name === 'borrow') return stdTy('std::cell::Ref', [a0]);
    if (name === 'borrow_mut') return stdTy('std::cell::RefMut', [a0]);
  }
  if (k === 'Mutex' || k === 'RwLock') {
    // locks: a Result (poisoning) of a guard that derefs to the value (`self.inner.lock().unwrap().notify()`)
    const guard = (g: string) => res(stdTy(`std::sync::${g}`, [a0]));
    switch (name) {
      case 'lock': case 'try_lock': return k === 'Mutex' ? guard('MutexGuard') : null;
      case 'read': case 'try_read': return k === 'RwLock' ? guard('RwLockReadGuard') : null;
      case 'write': case 'try_write': return k === 'RwLock' ? guard('RwLockWriteGuard') : null;
      case 'into_inner': return res(a0);
      case 'get_mut': return res({ k: 'ref', mut: true, of: a0 });
      default: return null;
    }
  }
  if (recv.k === 'ptr') {
    // raw pointers: `as_ref`/`as_mut` give an Option of a reference to the pointee; arithmetic keeps the pointer
    switch (name) {
      case 'as_ref': case 'as_mut': return opt({ k: 'ref', mut: name === 'as_mut', of: recv.of });
      case 'add': case 'sub': case 'offset': case 'wrapping_add': case 'wrapping_sub': case 'wrapping_offset': return recv;
      case 'read': case 'read_volatile': case 'read_unaligned': return recv.of;
      default: return null;
    }
  }
  if (k === 'HashMap' || k === 'BTreeMap') {
    switch (name) {
      case 'get': case 'get_mut': case 'insert': case 'remove': return opt(a1);
      case 'keys': case 'into_keys': return iter(a0);
      case 'values': case 'values_mut': case 'into_values': return iter(a1);
      case 'iter': case 'iter_mut': case 'into_iter': case 'drain': return iter({ k: 'tuple', of: [a0, a1] });
      default: return null;
    }
  }
  if (k === 'Iter') {
    if (SAME_ITEM.has(name)) return recv;
    if (ONE_ITEM.has(name)) return opt(a0);
    if (name === 'map' || name === 'filter_map' || name === 'flat_map' || name === 'map_while') {
      const r = args.closureRet();
      const payload = (name === 'filter_map' || name === 'map_while') && keyOf(r) === 'Option' && r.k === 'adt' ? r.args[0] ?? UNKNOWN('item') : r;
      return iter(name === 'flat_map' ? stdItem(r) ?? UNKNOWN('flattened item') : payload);
    }
    if (name === 'flatten') {
      // the items' items (a reference to a collection yields references)
      const inner = a0.k === 'ref' ? stdItem(a0.of) : stdItem(a0);
      return iter(inner === null ? UNKNOWN('flattened item') : a0.k === 'ref' ? { k: 'ref', mut: a0.mut, of: inner } : inner);
    }
    if (name === 'enumerate') return iter({ k: 'tuple', of: [USIZE, a0] });
    if (name === 'cloned' || name === 'copied') return iter(a0.k === 'ref' ? a0.of : a0);
    if (name === 'zip') return iter({ k: 'tuple', of: [a0, stdItem(args.arg0()) ?? UNKNOWN('zipped item')] });
    if (name === 'position' || name === 'rposition') return opt(USIZE);
    if (name === 'collect' || name === 'sum' || name === 'product' || name === 'fold') return null;
    return null;
  }
  const atomic = atomicValue(recv);
  if (atomic) {
    switch (name) {
      case 'load': case 'swap': case 'into_inner': case 'get_mut':
      case 'fetch_add': case 'fetch_sub': case 'fetch_and': case 'fetch_or': case 'fetch_xor': case 'fetch_nand': case 'fetch_max': case 'fetch_min':
        return name === 'get_mut' ? { k: 'ref', mut: true, of: atomic } : atomic;
      case 'compare_exchange': case 'compare_exchange_weak': case 'fetch_update': return res(atomic, atomic);
      default: return null;
    }
  }
  if (recv.k === 'adt' && 'ext' in recv.res && recv.res.krate === null) {
    // cells: `get` of an UnsafeCell is a raw pointer to its value; of a Cell, the value
    if (recv.res.ext === 'std::cell::UnsafeCell' && (name === 'get' || name === 'raw_get')) return { k: 'ptr', of: a0 };
    if (recv.res.ext === 'std::cell::UnsafeCell' && name === 'get_mut') return { k: 'ref', mut: true, of: a0 };
    if (recv.res.ext === 'std::cell::Cell' && (name === 'get' || name === 'replace' || name === 'take' || name === 'into_inner')) return a0;
  }
  const str = (recv.k === 'prim' && recv.name === 'str') || k === 'String';
  if (str) {
    switch (name) {
      case 'as_str': case 'trim': case 'trim_start': case 'trim_end': case 'trim_matches': case 'as_ref': return STR;
      case 'chars': return iter({ k: 'prim', name: 'char' });
      case 'bytes': return iter({ k: 'prim', name: 'u8' });
      case 'lines': case 'split': case 'split_whitespace': case 'rsplit': case 'splitn': case 'rsplitn': case 'split_terminator': return iter(STR);
      case 'as_bytes': return { k: 'ref', mut: false, of: { k: 'slice', of: { k: 'prim', name: 'u8' } } };
      case 'into_bytes': return stdTy('std::vec::Vec', [{ k: 'prim', name: 'u8' }]);
      case 'strip_prefix': case 'strip_suffix': case 'get': return opt(STR);
      case 'find': case 'rfind': return opt(USIZE);
      case 'split_once': case 'rsplit_once': return opt({ k: 'tuple', of: [STR, STR] });
      case 'char_indices': return iter({ k: 'tuple', of: [USIZE, { k: 'prim', name: 'char' }] });
      case 'parse': return res(UNKNOWN('parsed type'));
      default: return null;
    }
  }
  return null;
}

/** The value type of a std atomic (`AtomicUsize` -> usize, `AtomicPtr<T>` -> *T), or null. */
function atomicValue(t: Ty): Ty | null {
  if (t.k !== 'adt' || !('ext' in t.res) || t.res.krate !== null) return null;
  const p = t.res.ext;
  if (!p.startsWith('std::sync::atomic::Atomic')) return null;
  const rest = p.slice('std::sync::atomic::Atomic'.length);
  if (rest === 'Bool') return BOOL;
  if (rest === 'Ptr') return { k: 'ptr', of: t.args[0] ?? UNKNOWN('pointee') };
  if (/^(U|I)(8|16|32|64|128|size)$/.test(rest)) return { k: 'prim', name: rest.toLowerCase() };
  return null;
}
