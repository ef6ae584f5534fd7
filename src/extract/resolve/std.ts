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
