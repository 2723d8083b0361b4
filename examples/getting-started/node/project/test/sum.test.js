const test = require('node:test');
const assert = require('node:assert');
const { total } = require('../sum.js');

test('total adds every number', () => {
  assert.strictEqual(total([1, 2, 3]), 6);
});
