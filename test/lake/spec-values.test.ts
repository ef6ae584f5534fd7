// Single values: binary bounds, JSON encoding, ordering and coercion of user input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  civilFromDays,
  coerceValue,
  compareValues,
  daysFromCivil,
  decimalToUnscaled,
  displayValue,
  fromBinary,
  toBinary,
  toHex,
  unscaledToDecimal,
  valueFromJson,
  valueToJson,
} from '../../src/lake/spec/values.ts';
import type { IcebergType, PrimitiveType, Value } from '../../src/lake/spec/types.ts';

const T = {
  boolean: { type: 'boolean' },
  int: { type: 'int' },
  long: { type: 'long' },
  float: { type: 'float' },
  double: { type: 'double' },
  dec: { type: 'decimal', precision: 10, scale: 2 },
  dec0: { type: 'decimal', precision: 38, scale: 0 },
  date: { type: 'date' },
  time: { type: 'time' },
  ts: { type: 'timestamp' },
  tstz: { type: 'timestamptz' },
  tsns: { type: 'timestamp_ns' },
  tstzns: { type: 'timestamptz_ns' },
  string: { type: 'string' },
  uuid: { type: 'uuid' },
  fixed: { type: 'fixed', length: 3 },
  binary: { type: 'binary' },
} satisfies Record<string, PrimitiveType>;

const SAMPLES: Array<[PrimitiveType, Value[]]> = [
  [T.boolean, [true, false]],
  [T.int, [0, 1, -1, 2147483647, -2147483648]],
  [T.long, [0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 7505300640432048841n]],
  [T.float, [0, -0, 1.5, -3.25, Math.fround(0.1), Infinity, NaN]],
  [T.double, [0, -0, 0.1, -1e300, 5e-324, -Infinity, NaN]],
  [T.dec, ['9.99', '-5.00', '0.00', '99999999.99', '-99999999.99', '0.01', '-0.01', '1.28', '-1.28', '1.27']],
  [T.dec0, ['99999999999999999999999999999999999999', '-99999999999999999999999999999999999999', '127', '-128', '128']],
  [T.date, [0, -1, 18993, -719162, 2932896]],
  [T.time, [0n, 81068123456n, 86399999999n]],
  [T.ts, [0n, -1n, 1510871468123456n, -62135596800000000n]],
  [T.tstz, [0n, 1510871468123456n, -1n]],
  [T.tsns, [0n, 1510871468123456789n, -1n]],
  [T.tstzns, [1510871468123456789n]],
  [T.string, ['', 'iceberg', 'Flopsy 🐇', 'Mopsy–Naïve']],
  [T.uuid, ['f79c3e09-677c-4bbd-a479-3f349cb785e7', '00000000-0000-0000-0000-000000000000']],
  [T.fixed, [Uint8Array.of(1, 2, 255)]],
  [T.binary, [new Uint8Array(0), Uint8Array.of(0, 1, 2, 3)]],
];

test('values: binary serialization round trips every primitive type', () => {
  for (const [t, vs] of SAMPLES) {
    for (const v of vs) assert.deepStrictEqual(fromBinary(t, toBinary(t, v)), v, `${t.type} ${String(v)}`);
  }
});

test('values: binary serialization matches the spec and the fixtures byte for byte', () => {
  const hex = (t: PrimitiveType, v: Value): string => toHex(toBinary(t, v));
  // decimals: minimal big-endian two's complement of the unscaled value (rename_column fixture)
  assert.equal(hex(T.dec, '9.99'), '03e7');
  assert.equal(hex(T.dec, '-5.00'), 'fe0c');
  assert.equal(hex(T.dec, '0.00'), '00');
  assert.equal(hex(T.dec, '99999999.99'), '02540be3ff');
  assert.equal(hex(T.dec, '1.28'), '0080');
  assert.equal(hex(T.dec, '-1.28'), '80');
  assert.equal(fromBinary(T.dec, Uint8Array.of(0x03, 0xe7)), '9.99');
  assert.equal(fromBinary(T.dec, Uint8Array.of(0x00, 0x00, 0xfe, 0x0c)), '650.36', 'leading zero bytes are tolerated');
  // little-endian ints, dates (the fixture's date partition summary 0x314a0000 = 18993)
  assert.equal(hex(T.int, 1), '01000000');
  assert.equal(fromBinary(T.date, Uint8Array.of(0x31, 0x4a, 0, 0)), 18993);
  assert.equal(hex(T.long, -2n), 'feffffffffffffff');
  assert.equal(hex(T.boolean, true), '01');
  assert.equal(fromBinary(T.boolean, Uint8Array.of(7)), true);
  assert.equal(hex(T.double, 1), '000000000000f03f');
  assert.equal(hex(T.float, 1), '0000803f');
  assert.equal(hex(T.uuid, 'F79C3E09-677C-4BBD-A479-3F349CB785E7'), 'f79c3e09677c4bbda4793f349cb785e7');
  assert.equal(hex(T.string, 'é'), 'c3a9');
});

test('values: fromBinary reads bounds written before a type promotion', () => {
  assert.equal(fromBinary(T.long, Uint8Array.of(0xff, 0xff, 0xff, 0xff)), -1n, 'int bound under a long column');
  assert.equal(fromBinary(T.double, toBinary(T.float, 1.5)), 1.5, 'float bound under a double column');
  assert.equal(fromBinary(T.ts, toBinary(T.date, 1)), 86_400_000_000n, 'date bound under a timestamp column');
  assert.throws(() => fromBinary(T.int, Uint8Array.of(1, 2)), /expected 4 bytes, found 2/);
});

test('values: compareValues orders as Iceberg does', () => {
  // strings by code point (UTF-8 byte order), not UTF-16 code units
  assert.equal(compareValues(T.string, '\uFFFD', '😀'), -1);
  assert.equal(compareValues(T.string, 'a', 'ab'), -1);
  assert.equal(compareValues(T.string, 'b', 'ab'), 1);
  assert.equal(compareValues(T.string, 'x', 'x'), 0);
  // binary unsigned
  assert.equal(compareValues(T.binary, Uint8Array.of(0x7f), Uint8Array.of(0x80)), -1);
  assert.equal(compareValues(T.binary, Uint8Array.of(1), Uint8Array.of(1, 0)), -1);
  // decimals numerically
  assert.equal(compareValues(T.dec, '10.00', '9.99'), 1);
  assert.equal(compareValues(T.dec, '-5.00', '-0.01'), -1);
  // floats: -0 < +0, NaN above everything
  assert.equal(compareValues(T.double, -0, 0), -1);
  assert.equal(compareValues(T.double, 0, -0), 1);
  assert.equal(compareValues(T.double, NaN, Infinity), 1);
  assert.equal(compareValues(T.double, NaN, NaN), 0);
  assert.equal(compareValues(T.float, -Infinity, -1), -1);
  // integers and timestamps
  assert.equal(compareValues(T.long, 2n ** 62n, 2n ** 62n + 1n), -1);
  assert.equal(compareValues(T.long, 3n, 3), 0, 'a promoted int compares with a long');
  assert.equal(compareValues(T.date, -1, 0), -1);
  assert.equal(compareValues(T.uuid, '80000000-0000-0000-0000-000000000000', '7fffffff-ffff-ffff-ffff-ffffffffffff'), 1, 'uuid unsigned');
  assert.equal(compareValues(T.boolean, false, true), -1);
});

test('values: JSON single-value encoding follows the spec examples', () => {
  const cases: Array<[IcebergType, Value, unknown]> = [
    [T.boolean, true, true],
    [T.int, 34, 34],
    [T.long, 34n, 34n],
    [T.double, 1.5, 1.5],
    [T.dec, '14.20', '14.20'],
    [T.date, daysFromCivil(2017, 11, 16), '2017-11-16'],
    [T.time, 81068123456n, '22:31:08.123456'],
    [T.ts, 1510871468123456n, '2017-11-16T22:31:08.123456'],
    [T.tstz, 1510871468123456n, '2017-11-16T22:31:08.123456+00:00'],
    [T.tsns, 1510871468123456789n, '2017-11-16T22:31:08.123456789'],
    [T.ts, -1n, '1969-12-31T23:59:59.999999'],
    [T.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'],
    [T.fixed, Uint8Array.of(0, 0x0a, 0xff), '000aff'],
    [T.binary, Uint8Array.of(1, 2), '0102'],
    [{ type: 'list', elementId: 2, elementRequired: false, element: T.int }, [1, null, 3], [1, null, 3]],
    [
      { type: 'map', keyId: 2, key: T.string, valueId: 3, valueRequired: false, value: T.long },
      new Map<Value, Value>([['a', 1n], ['b', null]]),
      { keys: ['a', 'b'], values: [1n, null] },
    ],
    [
      { type: 'struct', fields: [{ id: 7, name: 'x', required: false, type: T.int }, { id: 8, name: 'y', required: false, type: T.string }] },
      { x: 1, y: 'q' },
      { '7': 1, '8': 'q' },
    ],
  ];
  for (const [t, v, j] of cases) {
    assert.deepStrictEqual(valueToJson(t, v), j, `toJson ${JSON.stringify(j, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x))}`);
    assert.deepStrictEqual(valueFromJson(t, j as never), v, `fromJson ${String(j)}`);
  }
  // readers accept shorter fractions, "Z" and other offsets
  assert.equal(valueFromJson(T.tstz, '2017-11-16T14:31:08-08:00'), 1510871468000000n);
  assert.equal(valueFromJson(T.tstz, '2017-11-16T22:31:08Z'), 1510871468000000n);
  assert.equal(valueFromJson(T.time, '22:31:08.1'), 81068100000n);
  assert.equal(valueFromJson(T.long, -9223372036854775808n), -(2n ** 63n));
  assert.throws(() => valueFromJson(T.int, 'x', 'default'), /default: expected a JSON int value, found "x"/);
  assert.throws(() => valueFromJson(T.date, '2017-02-30', 'd'), /no such date/);
  assert.throws(() => valueFromJson(T.fixed, '00', 'f'), /expected 3 bytes/);
});

test('values: dates convert for any year (proleptic Gregorian)', () => {
  for (let d = -800000; d <= 800000; d += 997) {
    const { y, m, d: day } = civilFromDays(d);
    assert.equal(daysFromCivil(y, m, day), d);
    if (y >= 1 && y <= 9999) {
      const jsDate = new Date(0);
      jsDate.setUTCFullYear(y, m - 1, day);
      assert.equal(Math.floor(jsDate.getTime() / 86_400_000), d);
    }
  }
  assert.equal(valueToJson(T.date, daysFromCivil(11, 1, 1)), '0011-01-01');
  assert.equal(valueFromJson(T.date, '0011-01-01'), -715510);
});

test('values: decimal text and unscaled integers convert exactly', () => {
  assert.equal(decimalToUnscaled('9.99', 2), 999n);
  assert.equal(decimalToUnscaled('-0.5', 2), -50n);
  assert.equal(decimalToUnscaled('12', 2), 1200n);
  assert.equal(decimalToUnscaled('1.2300', 2), 123n);
  assert.equal(decimalToUnscaled('1e-2', 2), 1n);
  assert.throws(() => decimalToUnscaled('1.234', 2), /more than 2 fraction digits/);
  assert.throws(() => decimalToUnscaled('abc', 2), /expected a decimal number/);
  assert.equal(unscaledToDecimal(5n, 2), '0.05');
  assert.equal(unscaledToDecimal(-5n, 2), '-0.05');
  assert.equal(unscaledToDecimal(0n, 2), '0.00');
  assert.equal(unscaledToDecimal(-123n, 0), '-123');
});

test('values: coerceValue turns loose input into canonical values or says why not', () => {
  assert.equal(coerceValue(T.long, 5, 'x'), 5n);
  assert.equal(coerceValue(T.long, '9223372036854775807', 'x'), 2n ** 63n - 1n);
  assert.throws(() => coerceValue(T.long, 2 ** 60, 'row 3 column id'), /row 3 column id: expected a long value.*beyond 2\^53/);
  assert.throws(() => coerceValue(T.long, '9223372036854775808', 'x'), /out of range/);
  assert.equal(coerceValue(T.int, '42', 'x'), 42);
  assert.throws(() => coerceValue(T.int, 1.5, 'x'), /not an integer/);
  assert.equal(coerceValue(T.dec, 9.99, 'x'), '9.99');
  assert.equal(coerceValue(T.dec, '7', 'x'), '7.00');
  assert.equal(coerceValue(T.dec, 1e-2, 'x'), '0.01');
  assert.throws(() => coerceValue(T.dec, '123456789.00', 'price'), /price: expected a decimal\(10, 2\) value.*more than 10 digits/);
  assert.throws(() => coerceValue(T.dec, '1.001', 'x'), /more than 2 fraction digits/);
  assert.equal(coerceValue(T.date, '2022-01-01', 'x'), 18993);
  assert.equal(coerceValue(T.date, new Date('2022-01-01T12:00:00Z'), 'x'), 18993);
  assert.equal(coerceValue(T.ts, '2017-11-16T22:31:08.123456', 'x'), 1510871468123456n);
  assert.equal(coerceValue(T.ts, '2017-11-16 22:31:08', 'x'), 1510871468000000n);
  assert.equal(coerceValue(T.tstz, '2017-11-16', 'x'), 1510790400000000n);
  assert.equal(coerceValue(T.tstz, new Date(1000), 'x'), 1000000n);
  assert.equal(coerceValue(T.tsns, new Date(1), 'x'), 1000000n);
  assert.equal(coerceValue(T.ts, 12, 'x'), 12n);
  assert.equal(coerceValue(T.time, '00:00:01', 'x'), 1000000n);
  assert.equal(coerceValue(T.uuid, 'F79C3E09-677C-4BBD-A479-3F349CB785E7', 'x'), 'f79c3e09-677c-4bbd-a479-3f349cb785e7');
  assert.deepEqual(coerceValue(T.binary, 'c0ffee', 'x'), Uint8Array.of(0xc0, 0xff, 0xee));
  assert.throws(() => coerceValue(T.fixed, 'c0ff', 'x'), /expected 3 bytes, found 2/);
  assert.equal(coerceValue(T.float, 0.1, 'x'), Math.fround(0.1));
  assert.ok(Number.isNaN(coerceValue(T.double, 'NaN', 'x')));
  assert.equal(coerceValue(T.boolean, 'true', 'x'), true);
  assert.throws(() => coerceValue(T.string, 5, 'name'), /name: expected a string value, found 5/);
  assert.equal(coerceValue(T.string, undefined, 'x'), null);
});

test('values: displayValue renders JSON-friendly values', () => {
  assert.equal(displayValue(T.long, 2n ** 63n - 1n), 2n ** 63n - 1n);
  assert.equal(displayValue(T.binary, Uint8Array.of(1, 255)), '01ff');
  assert.equal(displayValue(T.date, 18993), '2022-01-01');
  assert.equal(displayValue(T.tstz, 0n), '1970-01-01T00:00:00.000000+00:00');
  assert.equal(displayValue(T.double, NaN), 'NaN');
  assert.equal(displayValue(T.dec, '9.99'), '9.99');
  assert.deepEqual(
    displayValue({ type: 'map', keyId: 2, key: T.string, valueId: 3, valueRequired: false, value: T.date }, new Map<Value, Value>([['a', 0]])),
    [{ key: 'a', value: '1970-01-01' }],
  );
  assert.deepEqual(
    displayValue({ type: 'struct', fields: [{ id: 1, name: 'b', required: false, type: T.binary }] }, { b: Uint8Array.of(0) }),
    { b: '00' },
  );
});
