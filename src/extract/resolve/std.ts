// The few facts about the standard library resolution needs, since std is
// not a crate of the lake: the prelude's names, the canonical spelling of std
// paths, and which std types wrap another (for `?`, derefs and common methods).
//
// Invariant: a table, no logic beyond lookups. std paths are spelled through
// `std::` (as rustc prints them for a crate that links std): `core::` and
// `alloc::` prefixes are rewritten to `std::`.

/** Prelude (2015–2021) names -> canonical std path, by namespace. */
export const PRELUDE_TYPES: ReadonlyMap<string, string> = new Map([
  ['Option', 'std::option::Option'], ['Result', 'std::result::Result'], ['Vec', 'std::vec::Vec'],
  ['String', 'std::string::String'], ['Box', 'std::boxed::Box'], ['ToString', 'std::string::ToString'],
  ['ToOwned', 'std::borrow::ToOwned'], ['Clone', 'std::clone::Clone'], ['Copy', 'std::marker::Copy'],
  ['Send', 'std::marker::Send'], ['Sync', 'std::marker::Sync'], ['Sized', 'std::marker::Sized'],
  ['Unpin', 'std::marker::Unpin'], ['Drop', 'std::ops::Drop'], ['Fn', 'std::ops::Fn'], ['FnMut', 'std::ops::FnMut'],
  ['FnOnce', 'std::ops::FnOnce'], ['Iterator', 'std::iter::Iterator'], ['IntoIterator', 'std::iter::IntoIterator'],
  ['DoubleEndedIterator', 'std::iter::DoubleEndedIterator'], ['ExactSizeIterator', 'std::iter::ExactSizeIterator'],
  ['Extend', 'std::iter::Extend'], ['FromIterator', 'std::iter::FromIterator'], ['Default', 'std::default::Default'],
  ['Eq', 'std::cmp::Eq'], ['PartialEq', 'std::cmp::PartialEq'], ['Ord', 'std::cmp::Ord'], ['PartialOrd', 'std::cmp::PartialOrd'],
  ['AsRef', 'std::convert::AsRef'], ['AsMut', 'std::convert::AsMut'], ['Into', 'std::convert::Into'],
  ['From', 'std::convert::From'], ['TryFrom', 'std::convert::TryFrom'], ['TryInto', 'std::convert::TryInto'],
]);

export const PRELUDE_VALUES: ReadonlyMap<string, string> = new Map([
  ['Some', 'std::option::Option::Some'], ['None', 'std::option::Option::None'],
  ['Ok', 'std::result::Result::Ok'], ['Err', 'std::result::Result::Err'], ['drop', 'std::mem::drop'],
]);

/** Crate names that are the standard library. */
export const STD_CRATES: ReadonlySet<string> = new Set(['std', 'core', 'alloc', 'proc_macro', 'test']);

/** `core::fmt::Display` / `alloc::vec::Vec` -> `std::…` (proc_macro and test left alone). */
export function stdPath(p: string): string {
  if (p.startsWith('core::')) return `std::${p.slice(6)}`;
  if (p.startsWith('alloc::')) return `std::${p.slice(7)}`;
  if (p.startsWith('::std::') || p.startsWith('::core::') || p.startsWith('::alloc::')) return stdPath(p.slice(2));
  return p;
}

/** Std types by canonical path -> a short key inference reasons with. */
const KEYS: ReadonlyMap<string, string> = new Map([
  ['std::option::Option', 'Option'], ['std::result::Result', 'Result'], ['std::vec::Vec', 'Vec'],
  ['std::boxed::Box', 'Box'], ['std::rc::Rc', 'Rc'], ['std::sync::Arc', 'Arc'], ['std::string::String', 'String'],
  ['std::cell::RefCell', 'RefCell'], ['std::cell::Ref', 'Ref'], ['std::cell::RefMut', 'RefMut'], ['std::cell::Cell', 'Cell'],
  ['std::sync::Mutex', 'Mutex'], ['std::sync::MutexGuard', 'MutexGuard'], ['std::sync::RwLock', 'RwLock'],
  ['std::sync::RwLockReadGuard', 'RwLockReadGuard'], ['std::sync::RwLockWriteGuard', 'RwLockWriteGuard'],
  ['std::borrow::Cow', 'Cow'], ['std::pin::Pin', 'Pin'], ['std::mem::ManuallyDrop', 'ManuallyDrop'],
  ['std::collections::HashMap', 'HashMap'], ['std::collections::hash_map::HashMap', 'HashMap'],
  ['std::collections::BTreeMap', 'BTreeMap'], ['std::collections::btree_map::BTreeMap', 'BTreeMap'],
  ['std::collections::VecDeque', 'VecDeque'],
]);

export function stdKey(canonical: string): string | null {
  return KEYS.get(canonical) ?? null;
}

/** Std smart pointers and guards: a method call on them autoderefs to their first type argument. */
export const DEREF_TO_ARG: ReadonlySet<string> = new Set([
  'Box', 'Rc', 'Arc', 'Ref', 'RefMut', 'MutexGuard', 'RwLockReadGuard', 'RwLockWriteGuard', 'Cow', 'Pin', 'ManuallyDrop',
]);

/**
 * Methods of std types whose result type follows from the receiver's type
 * arguments: key -> method -> how (`arg0` = first type argument, `self` =
 * the receiver's type, `opt0` = Option of the first argument, `guard` = a
 * guard that derefs to the first argument, `guardres` = a Result of such a
 * guard, `res0` = Result<arg0, …>, `str`/`string` = &str / String).
 */
export type StdResult = 'arg0' | 'self' | 'opt0' | 'guard' | 'guardres' | 'res0' | 'str' | 'string';

const table = (entries: [string, StdResult][]): ReadonlyMap<string, StdResult> => new Map(entries);

export const STD_METHODS: ReadonlyMap<string, ReadonlyMap<string, StdResult>> = new Map([
  ['Option', table([
    ['unwrap', 'arg0'], ['expect', 'arg0'], ['unwrap_or', 'arg0'], ['unwrap_or_default', 'arg0'], ['unwrap_or_else', 'arg0'],
    ['unwrap_unchecked', 'arg0'], ['as_ref', 'self'], ['as_mut', 'self'], ['take', 'self'], ['clone', 'self'], ['cloned', 'self'],
    ['copied', 'self'], ['or', 'self'], ['or_else', 'self'], ['filter', 'self'], ['as_deref', 'self'], ['as_deref_mut', 'self'],
    ['get_or_insert', 'arg0'], ['get_or_insert_with', 'arg0'], ['insert', 'arg0'], ['replace', 'self'],
  ])],
  ['Result', table([
    ['unwrap', 'arg0'], ['expect', 'arg0'], ['unwrap_or', 'arg0'], ['unwrap_or_default', 'arg0'], ['unwrap_or_else', 'arg0'],
    ['as_ref', 'self'], ['as_mut', 'self'], ['ok', 'opt0'], ['clone', 'self'], ['map_err', 'res0'], ['or_else', 'res0'],
  ])],
  ['Vec', table([
    ['first', 'opt0'], ['last', 'opt0'], ['get', 'opt0'], ['get_mut', 'opt0'], ['pop', 'opt0'], ['first_mut', 'opt0'],
    ['last_mut', 'opt0'], ['clone', 'self'], ['remove', 'arg0'], ['swap_remove', 'arg0'], ['as_slice', 'self'], ['as_mut_slice', 'self'],
  ])],
  ['VecDeque', table([
    ['front', 'opt0'], ['back', 'opt0'], ['get', 'opt0'], ['pop_front', 'opt0'], ['pop_back', 'opt0'], ['front_mut', 'opt0'],
    ['back_mut', 'opt0'], ['get_mut', 'opt0'], ['clone', 'self'],
  ])],
  ['RefCell', table([['borrow', 'guard'], ['borrow_mut', 'guard'], ['into_inner', 'arg0'], ['get_mut', 'arg0']])],
  ['Cell', table([['get', 'arg0'], ['take', 'arg0'], ['replace', 'arg0'], ['into_inner', 'arg0']])],
  ['Mutex', table([['lock', 'guardres'], ['into_inner', 'arg0'], ['get_mut', 'arg0']])],
  ['RwLock', table([['read', 'guardres'], ['write', 'guardres'], ['into_inner', 'arg0'], ['get_mut', 'arg0']])],
  ['Rc', table([['clone', 'self']])],
  ['Arc', table([['clone', 'self']])],
  ['Box', table([['clone', 'self']])],
  ['String', table([['as_str', 'str'], ['clone', 'self'], ['to_string', 'string'], ['to_owned', 'string']])],
]);
